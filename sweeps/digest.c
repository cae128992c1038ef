/*
 * digest.c — the telemetry files a sweep reads, by content. A scenario may
 * name a latency histogram (service_histogram) and a rate series
 * (rate_profile) by path; the sweep text alone does not say what they held.
 * swp_sweep_check hashes each one (XXH3-64 of its bytes) into
 * telemetry_digests, which the effective sweep text carries: the result
 * file stores it, so a --resume, refine or merge after a file changed sees
 * another sweep and refuses, as it refuses any other change.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "swp_internal.h"

/* Bigger than any telemetry file a reader accepts (tel.h bounds them). */
#define DIGEST_MAX_BYTES (1024LL * 1024 * 1024)

static int file_digest(const char *path, uint64_t *out, char *err, size_t errlen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    swp_seterr(err, errlen, "%s: cannot open to hash it: %s", path, strerror(errno));
    return -1;
  }
  XXH3_state_t *st = XXH3_createState();
  char buf[65536];
  long long total = 0;
  int rc = st && XXH3_64bits_reset(st) != XXH_ERROR ? 0 : -1;
  if (rc) swp_seterr(err, errlen, "%s: out of memory", path);
  while (!rc) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      swp_seterr(err, errlen, "%s: cannot read to hash it: %s", path, strerror(errno));
      rc = -1;
    } else if (n == 0) {
      break;
    } else if ((total += n) > DIGEST_MAX_BYTES) {
      swp_seterr(err, errlen, "%s: larger than %lld bytes", path, DIGEST_MAX_BYTES);
      rc = -1;
    } else {
      XXH3_64bits_update(st, buf, (size_t)n);
    }
  }
  if (!rc) *out = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  close(fd);
  return rc;
}

/* Appends "PATH xxh3:HEX" for path unless the list has it already. */
static int add(char **list, const char *path, char *err, size_t errlen) {
  if (!path[0] || !strcmp(path, "none")) return 0;
  size_t plen = strlen(path);
  for (const char *p = *list; p && *p;) {
    const char *end = strstr(p, "; ");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > plen + 6 && !strncmp(p, path, plen) && !strncmp(p + plen, " xxh3:", 6)) return 0;
    p = end ? end + 2 : p + len;
  }
  uint64_t h;
  if (file_digest(path, &h, err, errlen)) return -1;
  size_t old = *list ? strlen(*list) : 0;
  char *grown = realloc(*list, old + plen + 32);
  if (!grown) {
    swp_seterr(err, errlen, "out of memory");
    return -1;
  }
  snprintf(grown + old, plen + 32, "%s%s xxh3:%016" PRIx64, old ? "; " : "", path, h);
  *list = grown;
  return 0;
}

int swp__telemetry_digests(swp_sweep *sw, char *err, size_t errlen) {
  char *list = NULL;
  int rc = 0;
  for (size_t i = 0; !rc && i < sw->n_settings; i++)
    if (eng_setting_names_file(sw->settings[i].key))
      rc = add(&list, sw->settings[i].value, err, errlen);
  for (size_t a = 0; !rc && a < sw->n_axes; a++)
    if (eng_setting_names_file(sw->axes[a].key))
      for (size_t v = 0; !rc && v < sw->axes[a].count; v++)
        rc = add(&list, sw->axes[a].values[v], err, errlen);
  if (rc) {
    free(list);
    return -1;
  }
  free(sw->telemetry_digests);
  sw->telemetry_digests = list; /* NULL: the sweep reads no file */
  return 0;
}
