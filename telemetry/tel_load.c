/*
 * tel_load.c — which reader a file goes to (tel_hist_load,
 * tel_series_load): by its name's ending, then by its first character.
 */
#include <stdlib.h>
#include <string.h>

#include "tel_util.h"

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static int looks_json(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') continue;
    return text[i] == '{' || text[i] == '[';
  }
  return 0;
}

int tel_hist_load(const char *path, const char *series, tel_hist *out, char *err, size_t errlen) {
  char *buf;
  size_t len;
  memset(out, 0, sizeof *out);
  if (tel_read_file(path, &buf, &len, err, errlen)) return -1;
  int rc;
  if (ends_with(path, ".json") || looks_json(buf, len))
    rc = tel_otel_json_parse(path, buf, len, series, out, err, errlen);
  else if (ends_with(path, ".csv"))
    rc = series && *series ? (tel_err(err, errlen, path, 0,
                                      "a CSV holds one series: service_histogram_series does "
                                      "not apply"),
                              -1)
                           : tel_latency_csv_parse(path, buf, len, out, err, errlen);
  else
    rc = tel_prom_text_parse(path, buf, len, series, out, err, errlen);
  free(buf);
  return rc;
}

int tel_series_load(const char *path, const char *series, tel_series *out, char *err,
                    size_t errlen) {
  char *buf;
  size_t len;
  memset(out, 0, sizeof *out);
  if (tel_read_file(path, &buf, &len, err, errlen)) return -1;
  int rc = ends_with(path, ".json") || looks_json(buf, len)
               ? tel_prom_range_parse(path, buf, len, series, out, err, errlen)
               : tel_rate_csv_parse(path, buf, len, out, err, errlen);
  free(buf);
  return rc;
}
