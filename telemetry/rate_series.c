/*
 * rate_series.c — a request rate over time: a CSV of time_s,rate rows
 * (time in seconds, or time_ms; rate in requests per second) or a
 * Prometheus range-query result (the JSON /api/v1/query_range returns for
 * e.g. sum(rate(http_requests_total[1m]))), parsed with jansson. Times are
 * made relative to the first point and must strictly increase; rates must
 * be finite and >= 0 (a gap in a Prometheus series is simply absent, so
 * interpolation bridges it).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_lines.h"
#include "tel_util.h"

static int series_alloc(tel_series *s, size_t n, const char *name, char *err, size_t errlen) {
  s->t_s = malloc((n ? n : 1) * sizeof *s->t_s);
  s->rate = malloc((n ? n : 1) * sizeof *s->rate);
  if (!s->t_s || !s->rate) {
    tel_series_free(s);
    tel_err(err, errlen, name, 0, "out of memory");
    return -1;
  }
  return 0;
}

/* Appends (t, v), checked; line 0 with where for JSON. */
static int series_add(tel_series *s, double t, double v, const char *name, size_t line,
                      const char *where, char *err, size_t errlen) {
  const char *w = where ? where : "";
  if (!isfinite(t)) {
    tel_err(err, errlen, name, line, "%sthe time is not a finite number", w);
    return -1;
  }
  if (isnan(v) || !isfinite(v)) {
    tel_err(err, errlen, name, line, "%sthe rate is %s", w, isnan(v) ? "NaN" : "infinite");
    return -1;
  }
  if (v < 0) {
    tel_err(err, errlen, name, line, "%sthe rate %g is negative", w, v);
    return -1;
  }
  if (s->n && !(t > s->t_s[s->n - 1])) {
    tel_err(err, errlen, name, line, "%sthe time %.17g is not after the one before (%.17g)", w, t,
            s->t_s[s->n - 1]);
    return -1;
  }
  s->t_s[s->n] = t;
  s->rate[s->n++] = v;
  return 0;
}

static void rebase(tel_series *s) {
  double t0 = s->t_s[0];
  for (size_t i = 0; i < s->n; i++) s->t_s[i] -= t0;
}

int tel_rate_csv_parse(const char *name, const char *text, size_t len, tel_series *out, char *err,
                       size_t errlen) {
  memset(out, 0, sizeof *out);
  if (tel_check_text(name, text, len, err, errlen)) return -1;
  csv_reader r = {text, text + len, name, 0};
  csv_row row;
  int st = csv_next(&r, &row, err, errlen);
  if (st < 0) return -1;
  if (st > 0) {
    tel_err(err, errlen, name, 1, "empty: expected a header time_s,rate");
    return -1;
  }
  double unit = row.n == 2 && row.len[0] >= 4 && !memcmp(row.f[0], "time", 4)
                    ? tel_unit_ms(row.f[0], row.len[0]) / 1000
                    : 0;
  int rate_ok = row.n == 2 && ((row.len[1] == 4 && !memcmp(row.f[1], "rate", 4)) ||
                               (row.len[1] == 8 && !memcmp(row.f[1], "rate_rps", 8)));
  if (unit == 0 || !rate_ok) {
    tel_err(err, errlen, name, row.line,
            "expected the header time_s,rate (time in seconds, or time_ms; rate in requests per "
            "second)");
    return -1;
  }
  size_t cap = 1024;
  if (series_alloc(out, cap, name, err, errlen)) return -1;
  while ((st = csv_next(&r, &row, err, errlen)) == 0) {
    if (row.n != 2) {
      tel_err(err, errlen, name, row.line, "expected time,rate, got %zu fields", row.n);
      goto fail;
    }
    double t, v;
    if (tel_parse_number(row.f[0], row.len[0], &t) || tel_parse_number(row.f[1], row.len[1], &v)) {
      tel_err(err, errlen, name, row.line, "expected two numbers, got '%.*s,%.*s'",
              (int)(row.len[0] > 30 ? 30 : row.len[0]), row.f[0],
              (int)(row.len[1] > 30 ? 30 : row.len[1]), row.f[1]);
      goto fail;
    }
    if (out->n == TEL_MAX_POINTS) {
      tel_err(err, errlen, name, row.line, "more than %d points", TEL_MAX_POINTS);
      goto fail;
    }
    if (out->n == cap) {
      double *a = realloc(out->t_s, 2 * cap * sizeof *a);
      if (a) out->t_s = a;
      double *b = a ? realloc(out->rate, 2 * cap * sizeof *b) : NULL;
      if (!b) {
        tel_err(err, errlen, name, row.line, "out of memory");
        goto fail;
      }
      out->rate = b, cap *= 2;
    }
    if (series_add(out, t * unit, v, name, row.line, NULL, err, errlen)) goto fail;
  }
  if (st < 0) goto fail;
  if (!out->n) {
    tel_err(err, errlen, name, r.line, "no rows after the header");
    goto fail;
  }
  rebase(out);
  return 0;
fail:
  tel_series_free(out);
  return -1;
}

static int range_parse(const char *name, const char *text, size_t len, const char *selector,
                       tel_series *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  tel_selector sel;
  json_t *root = tel_json_open(name, text, len, selector, &sel, err, errlen);
  if (!root) return -1;
  int rc = -1;
  const char *status = json_string_value(json_object_get(root, "status"));
  json_t *data = json_object_get(root, "data");
  const char *type = json_string_value(json_object_get(data, "resultType"));
  json_t *result = json_object_get(data, "result");
  if (!status || strcmp(status, "success")) {
    const char *e = json_string_value(json_object_get(root, "error"));
    tel_err(err, errlen, name, 1, "not a successful Prometheus query result (status %.40s%s%.200s)",
            status ? status : "missing", e ? ": " : "", e ? e : "");
    goto out;
  }
  if (!type || strcmp(type, "matrix") || !json_is_array(result)) {
    tel_err(err, errlen, name, 1,
            "expected data.resultType \"matrix\" and a data.result array (a range query)");
    goto out;
  }
  size_t i, pick = 0, matches = 0;
  json_t *s;
  json_array_foreach(result, i, s) {
    json_t *metric = json_object_get(s, "metric");
    const char *names[64], *values[64], *mname = NULL;
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(metric, k, v) {
      if (!json_is_string(v)) continue;
      if (!strcmp(k, "__name__")) mname = json_string_value(v);
      else if (n < 64) names[n] = k, values[n++] = json_string_value(v);
    }
    if (tel_selector_match(&sel, mname, n, names, values)) {
      if (!matches++) pick = i;
    }
  }
  if (!json_array_size(result)) {
    tel_err(err, errlen, name, 1, "data.result is empty: the query returned no series");
    goto out;
  }
  if (matches != 1) {
    tel_err(err, errlen, name, 1,
            matches ? "%zu series in data.result match; choose one with rate_profile_series"
                    : "no series in data.result matches rate_profile_series (%zu series)",
            matches ? matches : json_array_size(result));
    if (matches > 1) rc = -2;
    goto out;
  }
  json_t *vals = json_object_get(json_array_get(result, pick), "values");
  if (!json_is_array(vals) || !json_array_size(vals)) {
    tel_err(err, errlen, name, 1, "at data.result[%zu].values: expected a non-empty array", pick);
    goto out;
  }
  size_t n = json_array_size(vals);
  if (n > TEL_MAX_POINTS) {
    tel_err(err, errlen, name, 1, "at data.result[%zu].values: more than %d points", pick,
            TEL_MAX_POINTS);
    goto out;
  }
  if (series_alloc(out, n, name, err, errlen)) goto out;
  json_t *pt;
  json_array_foreach(vals, i, pt) {
    char where[96];
    snprintf(where, sizeof where, "at data.result[%zu].values[%zu]: ", pick, i);
    json_t *t = json_array_get(pt, 0), *v = json_array_get(pt, 1);
    const char *vs = json_string_value(v);
    double val;
    if (!json_is_array(pt) || json_array_size(pt) != 2 || !json_is_number(t) || !vs ||
        tel_parse_number(vs, strlen(vs), &val)) {
      tel_err(err, errlen, name, 0, "%sexpected [UNIX_TIME, \"VALUE\"]", where);
      goto fail;
    }
    if (series_add(out, json_number_value(t), val, name, 0, where, err, errlen)) goto fail;
  }
  rebase(out);
  rc = 0;
  goto out;
fail:
  tel_series_free(out);
out:
  json_decref(root);
  return rc;
}

int tel_prom_range_parse(const char *name, const char *text, size_t len, const char *selector,
                         tel_series *out, char *err, size_t errlen) {
  int rc = range_parse(name, text, len, selector, out, err, errlen);
  if (rc) tel_json_err_line(name, text, len, err, errlen);
  return rc;
}
