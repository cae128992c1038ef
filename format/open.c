/*
 * open.c — opening an existing result file (open.h): a regular file (never
 * a FIFO or a device, which would block), HDF5, format
 * "stormsweep-results", a format_version this build reads; a file another
 * process is writing, or a damaged one with a journal, gets a message that
 * says so.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

hid_t fmt_open(const char *path, unsigned flags, int *format_version, char *err,
                  size_t errlen) {
  fmt__rr_quiet_hdf5();
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s: is a directory, not a stormsweep result file", path);
    return -1;
  }
  /* A FIFO or a device would block or stream forever. */
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: not a regular file (expected a stormsweep result file)", path);
    return -1;
  }
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  fclose(probe);
  htri_t is = H5Fis_hdf5(path);
  if (is <= 0) {
    snprintf(err, errlen, "%s: not an HDF5 file (expected a stormsweep result file)", path);
    return -1;
  }
  H5Eclear2(H5E_DEFAULT);
  hid_t fid = H5Fopen(path, flags, H5P_DEFAULT);
  if (fid < 0) {
    char why[256];
    fmt__rr_hdf5_reason(why, sizeof why);
    if (fmt_lock_held_elsewhere(path) || strstr(why, "unable to lock file"))
      snprintf(err, errlen, "%s: another process is writing it (a sweep, resume, refine or "
               "merge); try again once it has finished", path);
    else if (fmt_journal_exists(path))
      snprintf(err, errlen, "%s: cannot open HDF5 file: damaged, but its journal %s.journal "
               "holds every committed run: 'stormsweep run ... --resume' (the command that wrote "
               "it) rebuilds it%s", path, path, why);
    else
      snprintf(err, errlen, "%s: cannot open HDF5 file%s: truncated or damaged?%s", path,
               flags == H5F_ACC_RDWR ? " for writing" : "", why);
    return -1;
  }
  hid_t root = H5Gopen2(fid, "/", H5P_DEFAULT);
  if (root < 0) {
    snprintf(err, errlen, "%s: cannot read the root group: the file is damaged", path);
    H5Fclose(fid);
    return -1;
  }
  const char *format_bad = NULL;
  char *format = fmt__rr_attr_string(root, ATTR_FORMAT, MAX_NAME_BYTES, 0, &format_bad);
  int format_exists = H5Aexists(root, ATTR_FORMAT) > 0;
  double version = NAN;
  int has_version = fmt__rr_attr_double(root, ATTR_FORMAT_VERSION, &version) == 0;
  H5Gclose(root);
  if (!format || strcmp(format, FMT_FORMAT_NAME) != 0) {
    if (format)
      snprintf(err, errlen, "%s: not a stormsweep result file (format is '%.100s', expected '%s')",
               path, format, FMT_FORMAT_NAME);
    else if (format_bad)
      snprintf(err, errlen, "%s: not a stormsweep result file (its '%s' attribute %s)", path,
               ATTR_FORMAT, format_bad);
    else if (format_exists)
      snprintf(err, errlen, "%s: not a stormsweep result file (its '%s' attribute is not a string)",
               path, ATTR_FORMAT);
    else
      snprintf(err, errlen, "%s: not a stormsweep result file (no '%s' attribute)", path,
               ATTR_FORMAT);
    free(format);
    H5Fclose(fid);
    return -1;
  }
  free(format);
  if (!has_version || version != floor(version) || version < 1) {
    snprintf(err, errlen, "%s: not a stormsweep result file (missing or invalid '%s')", path,
             ATTR_FORMAT_VERSION);
    H5Fclose(fid);
    return -1;
  }
  if (version > FMT_FORMAT_VERSION) {
    snprintf(err, errlen,
             "%s: format_version %.15g is newer than this stormsweep understands (%d); use a "
             "newer stormsweep",
             path, version, FMT_FORMAT_VERSION);
    H5Fclose(fid);
    return -1;
  }
  if (format_version) *format_version = (int)version;
  return fid;
}

