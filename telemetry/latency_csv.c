/*
 * latency_csv.c — a latency histogram from a CSV, in one of two shapes
 * told apart by the header:
 *   latency_ms            one observed latency per row (or latency_s, _us);
 *   le_ms,count           a bucket's upper bound and the values in it (not
 *                         cumulative); le_ms,cumulative for cumulative
 *                         counts as Prometheus keeps them. The first bucket
 *                         starts at 0; a last row with le +Inf holds what
 *                         lies above the last bound.
 * Raw latencies become a histogram with a bucket between each pair of
 * neighbouring order statistics (each holding 1/(n-1) of the mass), so the
 * engine's one sampler draws from their interpolated empirical CDF.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_lines.h"
#include "tel_util.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int word_is(const char *f, size_t n, const char *w) {
  return strlen(w) == n && !memcmp(f, w, n);
}

static int samples(csv_reader *r, double unit, tel_hist *h, char *err, size_t errlen) {
  size_t cap = 1024, n = 0;
  double *x = malloc(cap * sizeof *x);
  csv_row row;
  int st;
  if (!x) goto oom;
  while ((st = csv_next(r, &row, err, errlen)) == 0) {
    if (row.n != 1) {
      tel_err(err, errlen, r->name, row.line, "expected one latency per row, got %zu fields",
              row.n);
      goto fail;
    }
    double v;
    if (tel_parse_number(row.f[0], row.len[0], &v) || !isfinite(v)) {
      tel_err(err, errlen, r->name, row.line, "'%.*s' is not a finite number",
              (int)(row.len[0] > 40 ? 40 : row.len[0]), row.f[0]);
      goto fail;
    }
    if (v < 0) {
      tel_err(err, errlen, r->name, row.line, "latency %g is negative", v);
      goto fail;
    }
    if (n == TEL_MAX_SAMPLES) {
      tel_err(err, errlen, r->name, row.line, "more than %d latencies", TEL_MAX_SAMPLES);
      goto fail;
    }
    if (n == cap) {
      double *nx = realloc(x, 2 * cap * sizeof *nx);
      if (!nx) goto oom;
      x = nx, cap *= 2;
    }
    x[n++] = v * unit;
  }
  if (st < 0) goto fail;
  if (n < 2) {
    tel_err(err, errlen, r->name, r->line ? r->line : 1,
            "%s latencies: at least 2 are needed to form a distribution", n ? "only one of" : "no");
    goto fail;
  }
  qsort(x, n, sizeof *x, cmp_double);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += x[i];
  h->n = n - 1;
  h->lower = x[0];
  h->le = malloc((n - 1) * sizeof *h->le);
  h->count = malloc(n * sizeof *h->count);
  if (!h->le || !h->count) goto oom;
  for (size_t i = 1; i < n; i++) h->le[i - 1] = x[i], h->count[i - 1] = 1;
  h->count[n - 1] = 0;
  h->sum = sum;
  free(x);
  return 0;
oom:
  tel_err(err, errlen, r->name, r->line, "out of memory");
fail:
  free(x);
  return -1;
}

static int buckets(csv_reader *r, double unit, int cumulative, tel_hist *h, char *err,
                   size_t errlen) {
  size_t n = 0;
  double prev_le = -1, prev_cum = 0;
  int inf = 0;
  h->le = malloc(TEL_MAX_BUCKETS * sizeof *h->le);
  h->count = calloc(TEL_MAX_BUCKETS + 1, sizeof *h->count);
  if (!h->le || !h->count) {
    tel_err(err, errlen, r->name, r->line, "out of memory");
    return -1;
  }
  csv_row row;
  int st;
  size_t first = 0;
  while ((st = csv_next(r, &row, err, errlen)) == 0) {
    if (!first) first = row.line;
    if (row.n != 2) {
      tel_err(err, errlen, r->name, row.line, "expected an upper bound and a count, got %zu fields",
              row.n);
      return -1;
    }
    double le, c;
    if (tel_parse_number(row.f[0], row.len[0], &le) || isnan(le)) {
      tel_err(err, errlen, r->name, row.line, "the bound '%.*s' is not a number",
              (int)(row.len[0] > 40 ? 40 : row.len[0]), row.f[0]);
      return -1;
    }
    if (tel_parse_number(row.f[1], row.len[1], &c) || isnan(c) || !isfinite(c)) {
      tel_err(err, errlen, r->name, row.line, "the count '%.*s' is not a finite number",
              (int)(row.len[1] > 40 ? 40 : row.len[1]), row.f[1]);
      return -1;
    }
    if (c < 0) {
      tel_err(err, errlen, r->name, row.line, "the count %g is negative", c);
      return -1;
    }
    if (inf) {
      tel_err(err, errlen, r->name, row.line, "a bucket after the +Inf one");
      return -1;
    }
    if (le < 0) {
      tel_err(err, errlen, r->name, row.line, "the bound %g is negative: latencies are >= 0", le);
      return -1;
    }
    if (!(le > prev_le)) {
      tel_err(err, errlen, r->name, row.line,
              "the bound %g is not above the one before (%g): bounds must increase", le, prev_le);
      return -1;
    }
    if (cumulative && c < prev_cum) {
      tel_err(err, errlen, r->name, row.line,
              "the cumulative count %g is below the one before (%g): it never decreases", c,
              prev_cum);
      return -1;
    }
    double in = cumulative ? c - prev_cum : c;
    prev_cum = c, prev_le = le;
    if (isinf(le)) {
      inf = 1;
      h->count[n] = in;
      continue;
    }
    if (n == TEL_MAX_BUCKETS) {
      tel_err(err, errlen, r->name, row.line, "more than %d buckets", TEL_MAX_BUCKETS);
      return -1;
    }
    h->le[n] = le * unit;
    h->count[n++] = in;
  }
  if (st < 0) return -1;
  if (!n && !inf) {
    tel_err(err, errlen, r->name, r->line ? r->line : 1, "no buckets after the header");
    return -1;
  }
  if (!n) {
    tel_err(err, errlen, r->name, first, "only a +Inf bucket: no bound to draw from");
    return -1;
  }
  h->n = n;
  h->lower = 0;
  h->sum = NAN;
  return 0;
}

int tel_latency_csv_parse(const char *name, const char *text, size_t len, tel_hist *out,
                          char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (tel_check_text(name, text, len, err, errlen)) return -1;
  csv_reader r = {text, text + len, name, 0};
  csv_row head;
  int st = csv_next(&r, &head, err, errlen);
  if (st < 0) return -1;
  if (st > 0) {
    tel_err(err, errlen, name, 1, "empty: expected a header (latency_ms, or le_ms,count)");
    return -1;
  }
  double unit = tel_unit_ms(head.f[0], head.len[0]);
  int rc;
  if (head.n == 1 && head.len[0] > 7 && !memcmp(head.f[0], "latency", 7) && unit > 0) {
    rc = samples(&r, unit, out, err, errlen);
  } else if (head.n == 2 && head.len[0] > 2 && !memcmp(head.f[0], "le", 2) && unit > 0 &&
             (word_is(head.f[1], head.len[1], "count") ||
              word_is(head.f[1], head.len[1], "cumulative"))) {
    rc = buckets(&r, unit, word_is(head.f[1], head.len[1], "cumulative"), out, err, errlen);
  } else {
    tel_err(err, errlen, name, head.line,
            "expected a header latency_ms (one latency per row) or le_ms,count (bucket bounds "
            "and counts; le_ms,cumulative for cumulative counts); _s and _us name other units");
    return -1;
  }
  if (rc == 0) rc = tel_hist_finish(out, name, head.line, err, errlen);
  if (rc) tel_hist_free(out);
  return rc;
}
