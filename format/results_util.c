/*
 * results_util.c — the results reader's checked HDF5 reads: attributes as
 * text or numbers (through h5util.c), compound columns matched by name, a
 * 1-D table opened with its shape checked, the memory bound of a table read
 * whole, and an attribute that must agree with what the tables hold.
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
/* Small HDF5 helpers                                                        */
/* ------------------------------------------------------------------------ */

void fmt__rr_quiet_hdf5(void) {
  /* HDF5 prints its error stack by default; our messages say it in one line. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* The description of the innermost HDF5 error on the stack (where it was
 * detected, e.g. "truncated file: eof = 5000, ..."), for the end of a
 * message; "" when there is none. */
static herr_t first_error(unsigned n, const H5E_error2_t *e, void *data) {
  char *out = data;
  if (n == 0 && e->desc) snprintf(out, 200, "%s", e->desc);
  return 0;
}

void fmt__rr_hdf5_reason(char *buf, size_t len) {
  char desc[200] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, desc);
  if (desc[0])
    snprintf(buf, len, " (HDF5: %s)", desc);
  else
    buf[0] = 0;
}

/* Physical memory in bytes (0 when unknown: no limit is applied). */
static double physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}

/* Refuses a table of rows x row_bytes that would not fit in a quarter of
 * memory, or more rows than any sweep has. */
int fmt__rr_rows_fit(const char *path, const char *table, hsize_t rows, double row_bytes,
                    char *err, size_t errlen) {
  if (rows > (hsize_t)SWP_MAX_RUNS) {
    snprintf(err, errlen, "%s: %s has %llu rows, more than any sweep has (%lld); the file is "
             "damaged", path, table, (unsigned long long)rows, (long long)SWP_MAX_RUNS);
    return -1;
  }
  double need = (double)rows * row_bytes, phys = physical_memory();
  if (phys > 0 && need > phys / 4) {
    snprintf(err, errlen,
             "%s: %s has %llu rows; reading them needs about %.1f GB, more than a quarter of "
             "this machine's %.1f GB", path, table, (unsigned long long)rows,
             need / (1024.0 * 1024.0 * 1024.0), phys / (1024.0 * 1024.0 * 1024.0));
    return -1;
  }
  return 0;
}

int fmt__rr_cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* Reads a string attribute (fixed or variable length) of obj; malloc'd or
 * NULL when absent / not a string / not printable UTF-8 of at most max
 * bytes (newlines and tabs allowed when multiline); *bad (when given) says
 * which of the last. */
static char *attr_string_raw(hid_t obj, const char *name);

char *fmt__rr_attr_string(hid_t obj, const char *name, size_t max, int multiline,
                         const char **bad) {
  if (bad) *bad = NULL;
  char *s = attr_string_raw(obj, name);
  const char *problem = s ? swp_text_problem(s, max, multiline) : NULL;
  if (problem) {
    if (bad) *bad = problem;
    free(s);
    return NULL;
  }
  return s;
}

static char *attr_string_raw(hid_t obj, const char *name) {
  char *out = NULL;
  return fmt_attr_get_str(obj, name, MAX_ATTR_STRING, &out) == 0 ? out : NULL;
}

/* Reads a numeric scalar attribute as double; 0 ok, -1 absent or not a
 * number. */
int fmt__rr_attr_double(hid_t obj, const char *name, double *v) {
  return fmt_attr_get_num(obj, name, H5T_NATIVE_DOUBLE, v) == 0 ? 0 : -1;
}

int fmt__rr_attr_u64(hid_t obj, const char *name, uint64_t *v) {
  return fmt_attr_get_num(obj, name, H5T_NATIVE_ULLONG, v) == 0 ? 0 : -1;
}

/* Builds a memory enum over native long long with the names and values of
 * the file enum ft, so an enum column converts to our integer by name. */
static hid_t enum_as_llong(hid_t ft) {
  hid_t super = H5Tget_super(ft);
  /* Member values are read into a 16-byte buffer: refuse wider bases. */
  if (super < 0 || H5Tget_size(super) == 0 || H5Tget_size(super) > 16) {
    if (super >= 0) H5Tclose(super);
    return -1;
  }
  hid_t mt = H5Tenum_create(H5T_NATIVE_LLONG);
  int n = H5Tget_nmembers(ft);
  for (int i = 0; i < n && mt >= 0; i++) {
    unsigned char raw[16] = {0};
    long long value = 0;
    char *name = H5Tget_member_name(ft, (unsigned)i);
    if (!name || H5Tget_member_value(ft, (unsigned)i, raw) < 0) {
      H5free_memory(name);
      H5Tclose(mt);
      mt = -1;
      break;
    }
    /* The value is stored in the enum's base type: convert it in place. */
    unsigned char conv[64] = {0};
    memcpy(conv, raw, sizeof raw);
    if (H5Tconvert(super, H5T_NATIVE_LLONG, 1, conv, NULL, H5P_DEFAULT) >= 0)
      memcpy(&value, conv, sizeof value);
    herr_t ins = H5Tenum_insert(mt, name, &value);
    H5free_memory(name);
    if (ins < 0) { /* two names with one value (after conversion): not an outcome enum */
      H5Tclose(mt);
      mt = -1;
      break;
    }
  }
  H5Tclose(super);
  return mt;
}

/* Column of a compound file type: its member type class, or H5T_NO_CLASS
 * when absent. */
H5T_class_t fmt__rr_column_class(hid_t ft, const char *name, hid_t *member_type) {
  int i = H5Tget_member_index(ft, name);
  if (i < 0) return H5T_NO_CLASS;
  hid_t mt = H5Tget_member_type(ft, (unsigned)i);
  if (mt < 0) return H5T_NO_CLASS;
  H5T_class_t c = H5Tget_class(mt);
  if (member_type)
    *member_type = mt;
  else
    H5Tclose(mt);
  return c;
}

/* Adds column name to the memory compound mt at offset as (0) a long long
 * (integer and enum columns), (1) an unsigned long long (integers only) or
 * (2) a double (integer or float columns). Returns 1 if added,
 * 0 if the file lacks it, -2 if it is there but not a number, -1 on error. */
int fmt__rr_column_add(hid_t mt, hid_t ft, const char *name, size_t offset, int as) {
  hid_t member = -1;
  H5T_class_t c = fmt__rr_column_class(ft, name, &member);
  if (c == H5T_NO_CLASS) return 0;
  hid_t use = -1;
  int owned = 0;
  if (c == H5T_ENUM && as == 0) {
    use = enum_as_llong(member);
    owned = 1;
  } else if (c == H5T_INTEGER || c == H5T_FLOAT) {
    use = as == 0 ? H5T_NATIVE_LLONG : as == 1 ? H5T_NATIVE_ULLONG : H5T_NATIVE_DOUBLE;
  }
  H5Tclose(member);
  if (use < 0) return -2;
  herr_t rc = H5Tinsert(mt, name, offset, use);
  if (owned) H5Tclose(use);
  return rc < 0 ? -1 : 1;
}


/* Opens a 1-D compound table; -1 with a message naming it otherwise. */
hid_t fmt__rr_table_open(const fmt_results *r, hid_t fid, const char *name, hid_t *ft, hid_t *sp,
                        hsize_t *rows, char *err, size_t errlen) {
  *ft = *sp = -1;
  if (H5Lexists(fid, name, H5P_DEFAULT) <= 0) {
    snprintf(err, errlen, "%s: not a stormsweep result file (no %s table)", r->path, name);
    return -1;
  }
  hid_t ds = H5Dopen2(fid, name, H5P_DEFAULT);
  *ft = ds >= 0 ? H5Dget_type(ds) : -1;
  *sp = ds >= 0 ? H5Dget_space(ds) : -1;
  if (ds < 0 || *ft < 0 || *sp < 0 || H5Tget_class(*ft) != H5T_COMPOUND ||
      H5Sget_simple_extent_ndims(*sp) != 1 || H5Sget_simple_extent_dims(*sp, rows, NULL) != 1) {
    snprintf(err, errlen, "%s: not a stormsweep result file (%s is not a 1-D table of rows)",
             r->path, name);
    if (*sp >= 0) H5Sclose(*sp);
    if (*ft >= 0) H5Tclose(*ft);
    if (ds >= 0) H5Dclose(ds);
    *ft = *sp = -1;
    return -1;
  }
  return ds;
}


/* Checks an optional integer root attribute against what the tables say
 * (n_points, n_runs, ticks): a mismatch means a damaged or hand-made file. */
int fmt__rr_attr_agrees(const fmt_results *r, hid_t root, const char *name, double actual,
                       const char *what, char *err, size_t errlen) {
  double v;
  if (fmt__rr_attr_double(root, name, &v) != 0 || v == actual) return 0;
  snprintf(err, errlen, "%s: the '%s' attribute says %.15g but %s has %.15g; the file is damaged",
           r->path, name, v, what, actual);
  return -1;
}

