/*
 * otel_json.c — a latency histogram from OpenTelemetry's JSON export (the
 * OTLP/JSON encoding the collector's file exporter and the SDKs' OTLP
 * exporters write): resourceMetrics[].scopeMetrics[].metrics[] with a
 * "histogram" (explicitBounds and bucketCounts) or an
 * "exponentialHistogram" (scale, zeroCount, positive offset and
 * bucketCounts), parsed with jansson.
 *
 * A series is one data point: its metric's name and the labels of its
 * data point and resource attributes (service.name, http.route, ...), as
 * service_histogram_series selects them. Explicit bucket i holds
 * (bounds[i-1], bounds[i]], the last one everything above the last bound;
 * exponential bucket index k holds (base^k, base^(k+1)] with base =
 * 2^(2^-scale), and the zero bucket is a point mass at 0. The unit is the
 * metric's "unit" (s, ms or us). A parsed JSON value keeps no line, so
 * messages name the place by its path in the document, and the line is
 * found by scanning the text for that path (tel_json_line).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tel_util.h"

#define MAX_ATTRS 64

typedef struct attrs {
  size_t n;
  const char *name[MAX_ATTRS];
  char value[MAX_ATTRS][256];
} attrs;

typedef struct found {
  json_t *point, *metric;
  int exponential;
  char path[256];
  attrs a;
} found;

/* int64 fields are strings in OTLP/JSON ("42"); numbers are accepted too. */
static int get_count(json_t *v, double *out) {
  if (json_is_integer(v)) {
    *out = (double)json_integer_value(v);
    return 0;
  }
  if (json_is_real(v)) {
    *out = json_real_value(v);
    return 0;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    return tel_parse_number(s, strlen(s), out);
  }
  return -1;
}

static int get_real(json_t *v, double *out) {
  if (json_is_number(v)) {
    *out = json_number_value(v);
    return 0;
  }
  if (json_is_string(v)) { /* "NaN", "Infinity" as protobuf's JSON mapping writes them */
    const char *s = json_string_value(v);
    return tel_parse_number(s, strlen(s), out);
  }
  return -1;
}

/* Adds the attributes of list (an OTLP KeyValue array) to a. */
static int add_attrs(attrs *a, json_t *list, const char *name, const char *path, char *err,
                     size_t errlen) {
  if (!list) return 0;
  if (!json_is_array(list)) {
    tel_err(err, errlen, name, 0, "at %s.attributes: expected an array", path);
    return -1;
  }
  size_t i;
  json_t *kv;
  json_array_foreach(list, i, kv) {
    const char *key = json_string_value(json_object_get(kv, "key"));
    json_t *v = json_object_get(kv, "value");
    if (!key || !json_is_object(v)) {
      tel_err(err, errlen, name, 0,
              "at %s.attributes[%zu]: expected {\"key\": ..., \"value\": {...}}", path, i);
      return -1;
    }
    if (a->n == MAX_ATTRS) {
      tel_err(err, errlen, name, 0, "at %s.attributes: more than %d attributes", path, MAX_ATTRS);
      return -1;
    }
    json_t *sv;
    char *val = a->value[a->n];
    if ((sv = json_object_get(v, "stringValue")) && json_is_string(sv))
      snprintf(val, 256, "%s", json_string_value(sv));
    else if ((sv = json_object_get(v, "intValue")) && json_is_string(sv))
      snprintf(val, 256, "%s", json_string_value(sv));
    else if (sv && json_is_integer(sv))
      snprintf(val, 256, "%lld", (long long)json_integer_value(sv));
    else if ((sv = json_object_get(v, "boolValue")) && json_is_boolean(sv))
      snprintf(val, 256, "%s", json_is_true(sv) ? "true" : "false");
    else if ((sv = json_object_get(v, "doubleValue")) && json_is_number(sv))
      snprintf(val, 256, "%.17g", json_number_value(sv));
    else
      continue; /* arrays, maps, bytes: not selectable */
    a->name[a->n++] = key;
  }
  return 0;
}

static int counts_array(json_t *arr, size_t max, const char *name, const char *path, double *out,
                        char *err, size_t errlen) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    if (i >= max) break;
    double c;
    if (get_count(v, &c) || isnan(c)) {
      tel_err(err, errlen, name, 0, "at %s[%zu]: a bucket count must be a number", path, i);
      return -1;
    }
    if (c < 0 || !isfinite(c)) {
      tel_err(err, errlen, name, 0, "at %s[%zu]: a bucket count must be finite and >= 0", path, i);
      return -1;
    }
    out[i] = c;
  }
  return 0;
}

static int explicit_hist(const found *f, double unit, const char *name, tel_hist *h, char *err,
                         size_t errlen) {
  json_t *b = json_object_get(f->point, "explicitBounds"),
         *c = json_object_get(f->point, "bucketCounts");
  char path[320];
  if (!b) b = json_array(); /* no bounds: one bucket, everything */
  else json_incref(b);
  int rc = -1;
  if (!json_is_array(b) || !json_is_array(c)) {
    tel_err(err, errlen, name, 0, "at %s: explicitBounds and bucketCounts must be arrays", f->path);
    goto out;
  }
  size_t n = json_array_size(b);
  if (n > TEL_MAX_BUCKETS) {
    tel_err(err, errlen, name, 0, "at %s.explicitBounds: more than %d buckets", f->path,
            TEL_MAX_BUCKETS);
    goto out;
  }
  if (json_array_size(c) != n + 1) {
    tel_err(err, errlen, name, 0,
            "at %s.bucketCounts: %zu counts for %zu bounds (there must be one more count than "
            "bounds)",
            f->path, json_array_size(c), n);
    goto out;
  }
  h->n = n;
  h->le = malloc((n ? n : 1) * sizeof *h->le);
  h->count = malloc((n + 1) * sizeof *h->count);
  if (!h->le || !h->count) {
    tel_err(err, errlen, name, 0, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    double x;
    if (get_real(json_array_get(b, i), &x) || !isfinite(x)) {
      tel_err(err, errlen, name, 0, "at %s.explicitBounds[%zu]: a bound must be a finite number",
              f->path, i);
      goto out;
    }
    if (x < 0) {
      tel_err(err, errlen, name, 0, "at %s.explicitBounds[%zu]: %g is negative: latencies are >= 0",
              f->path, i, x);
      goto out;
    }
    if (i && !(x * unit > h->le[i - 1])) {
      tel_err(err, errlen, name, 0,
              "at %s.explicitBounds[%zu]: %g is not above the bound before it: bounds must "
              "increase",
              f->path, i, x);
      goto out;
    }
    h->le[i] = x * unit;
  }
  snprintf(path, sizeof path, "%s.bucketCounts", f->path);
  if (counts_array(c, n + 1, name, path, h->count, err, errlen)) goto out;
  rc = 0;
out:
  json_decref(b);
  return rc;
}

static int exponential_hist(const found *f, double unit, const char *name, tel_hist *h,
                            char *err, size_t errlen) {
  json_t *pt = f->point, *pos = json_object_get(pt, "positive"),
         *neg = json_object_get(pt, "negative");
  double scale = 0, zero = 0, offset = 0;
  json_t *sv = json_object_get(pt, "scale");
  if (sv && (get_count(sv, &scale) || scale != floor(scale) || scale < -10 || scale > 20)) {
    tel_err(err, errlen, name, 0, "at %s.scale: must be a whole number from -10 to 20", f->path);
    return -1;
  }
  json_t *zv = json_object_get(pt, "zeroCount");
  if (zv && (get_count(zv, &zero) || !isfinite(zero) || zero < 0)) {
    tel_err(err, errlen, name, 0, "at %s.zeroCount: must be a count >= 0", f->path);
    return -1;
  }
  if (neg) {
    json_t *nc = json_object_get(neg, "bucketCounts");
    size_t i;
    json_t *v;
    json_array_foreach(nc, i, v) {
      double c;
      if (!get_count(v, &c) && c != 0) {
        tel_err(err, errlen, name, 0,
                "at %s.negative.bucketCounts[%zu]: negative latencies (a count of %g)", f->path,
                i, c);
        return -1;
      }
    }
  }
  json_t *counts = pos ? json_object_get(pos, "bucketCounts") : NULL;
  if (pos && (!counts || !json_is_array(counts))) {
    tel_err(err, errlen, name, 0, "at %s.positive.bucketCounts: expected an array", f->path);
    return -1;
  }
  size_t m = counts ? json_array_size(counts) : 0;
  if (m > TEL_MAX_BUCKETS) {
    tel_err(err, errlen, name, 0, "at %s.positive.bucketCounts: more than %d buckets", f->path,
            TEL_MAX_BUCKETS);
    return -1;
  }
  json_t *ov = pos ? json_object_get(pos, "offset") : NULL;
  if (ov && (get_count(ov, &offset) || offset != floor(offset) || fabs(offset) > 1e7)) {
    tel_err(err, errlen, name, 0, "at %s.positive.offset: must be a whole number", f->path);
    return -1;
  }
  double base_log2 = ldexp(1.0, -(int)scale); /* log2(base) */
  double lo = exp2(offset * base_log2) * unit, hi_last = exp2((offset + (double)m) * base_log2);
  if (m && (!isfinite(hi_last * unit) || !(lo > 0))) {
    tel_err(err, errlen, name, 0,
            "at %s.positive: bucket bounds out of range (offset %g, scale %g)", f->path, offset,
            scale);
    return -1;
  }
  char path[320];
  snprintf(path, sizeof path, "%s.positive.bucketCounts", f->path);
  double *tmp = calloc(m ? m : 1, sizeof *tmp);
  if (!tmp) {
    tel_err(err, errlen, name, 0, "out of memory");
    return -1;
  }
  if (counts && counts_array(counts, m, name, path, tmp, err, errlen)) {
    free(tmp);
    return -1;
  }
  /* le[k + 2] = base^(offset + k + 1): bucket 0 is the zero bucket, a
   * point mass at 0; bucket 1, (0, base^offset], is empty. */
  h->n = m + 2;
  h->le = malloc(h->n * sizeof *h->le);
  h->count = calloc(h->n + 1, sizeof *h->count);
  if (!h->le || !h->count) {
    free(tmp);
    tel_err(err, errlen, name, 0, "out of memory");
    return -1;
  }
  h->le[0] = 0, h->count[0] = zero; /* the zero bucket: a point mass at 0 */
  h->le[1] = lo, h->count[1] = 0;   /* nothing between 0 and the first bucket */
  for (size_t k = 0; k < m; k++) {
    h->le[k + 2] = exp2((offset + (double)k + 1) * base_log2) * unit;
    h->count[k + 2] = tmp[k];
  }
  h->count[h->n] = 0;
  free(tmp);
  return 0;
}

static int parse(const char *name, const char *text, size_t len, const char *selector,
                 tel_hist *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  tel_selector sel;
  json_t *root = tel_json_open(name, text, len, selector, &sel, err, errlen);
  if (!root) return -1;
  int rc = -1;
  found *f = calloc(2, sizeof *f);
  if (!f) {
    tel_err(err, errlen, name, 0, "out of memory");
    goto out;
  }
  size_t matches = 0, hists = 0;
  json_t *rms = json_object_get(root, "resourceMetrics");
  if (!json_is_array(rms)) {
    tel_err(err, errlen, name, 1,
            "not an OpenTelemetry metrics export (no \"resourceMetrics\" array at the top)");
    goto out;
  }
  size_t ri, si, mi, pi;
  json_t *rm, *sm, *m, *pt;
  json_array_foreach(rms, ri, rm) {
    json_t *sms = json_object_get(rm, "scopeMetrics");
    if (!sms) sms = json_object_get(rm, "instrumentationLibraryMetrics");
    json_array_foreach(sms, si, sm) {
      json_array_foreach(json_object_get(sm, "metrics"), mi, m) {
        json_t *h = json_object_get(m, "histogram");
        int expo = 0;
        if (!h) h = json_object_get(m, "exponentialHistogram"), expo = 1;
        if (!json_is_object(h)) continue;
        const char *mname = json_string_value(json_object_get(m, "name"));
        json_t *dps = json_object_get(h, "dataPoints");
        if (!json_is_array(dps)) {
          tel_err(err, errlen, name, 0,
                  "at resourceMetrics[%zu].scopeMetrics[%zu].metrics[%zu]: dataPoints must be an "
                  "array",
                  ri, si, mi);
          goto out;
        }
        json_array_foreach(dps, pi, pt) {
          found cand;
          memset(&cand, 0, sizeof cand);
          cand.point = pt, cand.metric = m, cand.exponential = expo;
          snprintf(cand.path, sizeof cand.path,
                   "resourceMetrics[%zu].scopeMetrics[%zu].metrics[%zu].%s.dataPoints[%zu]", ri,
                   si, mi, expo ? "exponentialHistogram" : "histogram", pi);
          if (!json_is_object(pt)) {
            tel_err(err, errlen, name, 0, "at %s: expected an object", cand.path);
            goto out;
          }
          hists++;
          json_t *res = json_object_get(rm, "resource");
          if (add_attrs(&cand.a, json_object_get(pt, "attributes"), name, cand.path, err, errlen) ||
              add_attrs(&cand.a, res ? json_object_get(res, "attributes") : NULL, name, cand.path,
                        err, errlen))
            goto out;
          char *vals[MAX_ATTRS];
          for (size_t k = 0; k < cand.a.n; k++) vals[k] = cand.a.value[k];
          if (!tel_selector_match(&sel, mname, cand.a.n, cand.a.name, (const char *const *)vals))
            continue;
          if (matches < 2) f[matches] = cand;
          matches++;
          if (matches == 2) {
            int same = f[0].a.n == f[1].a.n && f[0].metric == f[1].metric;
            for (size_t k = 0; same && k < f[0].a.n; k++)
              same = !strcmp(f[0].a.name[k], f[1].a.name[k]) &&
                     !strcmp(f[0].a.value[k], f[1].a.value[k]);
            if (same) {
              tel_err(err, errlen, name, 0,
                      "at %s: the same series as %s (same metric and attributes): a duplicate "
                      "series (give one export)",
                      f[1].path, f[0].path);
              goto out;
            }
          }
        }
      }
    }
  }
  if (!hists) {
    tel_err(err, errlen, name, 1, "no histogram or exponentialHistogram metric in the export");
    goto out;
  }
  if (!matches) {
    tel_err(err, errlen, name, 0,
            "no histogram data point matches service_histogram_series '%.200s'",
            selector ? selector : "");
    goto out;
  }
  if (matches > 1) {
    tel_err(err, errlen, name, 0,
            "%zu histogram data points match (%s and %s, ...); choose one with "
            "service_histogram_series",
            matches, f[0].path, f[1].path);
    rc = -2;
    goto out;
  }
  const char *unit = json_string_value(json_object_get(f[0].metric, "unit"));
  double ums = tel_unit_word_ms(unit);
  if (ums == 0) {
    const char *mname = json_string_value(json_object_get(f[0].metric, "name"));
    ums = mname ? tel_unit_ms(mname, strlen(mname)) : 0;
  }
  if (ums == 0) {
    tel_err(err, errlen, name, 0, "at %s: unit '%.40s' is not s, ms or us", f[0].path,
            unit ? unit : "");
    goto out;
  }
  if ((f[0].exponential ? exponential_hist(&f[0], ums, name, out, err, errlen)
                        : explicit_hist(&f[0], ums, name, out, err, errlen)))
    goto out;
  out->sum = NAN;
  json_t *sum = json_object_get(f[0].point, "sum");
  if (sum) {
    double s;
    if (get_real(sum, &s) || isnan(s) || !isfinite(s) || s < 0) {
      tel_err(err, errlen, name, 0, "at %s.sum: must be a finite number >= 0", f[0].path);
      goto out;
    }
    out->sum = s * ums;
  }
  json_t *cnt = json_object_get(f[0].point, "count");
  if (tel_hist_finish(out, name, 0, err, errlen)) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s", err + strlen(name) + 2);
    tel_err(err, errlen, name, 0, "at %s: %s", f[0].path, msg);
    goto out;
  }
  if (cnt) {
    double c;
    if (get_count(cnt, &c) || fabs(c - out->total) > 1e-9 * (c > 1 ? c : 1)) {
      tel_err(err, errlen, name, 0, "at %s.count: %s, but the buckets hold %g", f[0].path,
              json_is_string(cnt) ? json_string_value(cnt) : "not a count", out->total);
      goto out;
    }
  }
  rc = 0;
out:
  if (rc) tel_hist_free(out);
  free(f);
  json_decref(root);
  return rc;
}

int tel_otel_json_parse(const char *name, const char *text, size_t len, const char *selector,
                        tel_hist *out, char *err, size_t errlen) {
  int rc = parse(name, text, len, selector, out, err, errlen);
  if (rc) tel_json_err_line(name, text, len, err, errlen);
  return rc;
}
