/*
 * prom_write.c — the writing side of the Prometheus text exposition format
 * (prom_text.c reads it): a histogram as a classic histogram's HELP and
 * TYPE lines, cumulative NAME_bucket{...,le="..."} samples, NAME_sum and
 * NAME_count, in seconds; and the bucket ladders `stormsweep export` offers
 * (a log ladder, a list of bounds), onto which a finer histogram is summed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tel.h"

int tel_hist_rebucket(const tel_hist *fine, const double *bounds_ms, size_t nb, tel_hist *out) {
  memset(out, 0, sizeof *out);
  out->le = malloc((nb ? nb : 1) * sizeof *out->le);
  out->count = calloc(nb + 1, sizeof *out->count);
  if (!out->le || !out->count) {
    tel_hist_free(out);
    return -1;
  }
  out->n = nb;
  memcpy(out->le, bounds_ms, nb * sizeof *bounds_ms);
  /* A fine bucket (a, b] counts in the first bound >= b: exact when the
   * bounds are the fine ones', else one fine bucket's width high at most. */
  size_t j = 0;
  for (size_t i = 0; i <= fine->n; i++) {
    if (i == fine->n) {
      out->count[nb] += fine->count[i];
      break;
    }
    while (j < nb && bounds_ms[j] < fine->le[i]) j++;
    out->count[j] += fine->count[i];
  }
  out->sum = fine->sum;
  out->total = fine->total;
  return 0;
}

int tel_ladder_log(double lo_ms, double hi_ms, int per_doubling, double **bounds, size_t *n) {
  *bounds = NULL;
  *n = 0;
  if (!(lo_ms > 0) || !(hi_ms >= lo_ms) || per_doubling < 1) return -1;
  /* 2^(k / per_doubling) ms: the same bounds for every run, so exported
   * runs add up bucket by bucket on a dashboard */
  double k0 = floor(log2(lo_ms) * per_doubling), k1 = ceil(log2(hi_ms) * per_doubling);
  if (k1 - k0 + 1 > TEL_MAX_BUCKETS) return -1;
  size_t m = (size_t)(k1 - k0) + 1;
  double *b = malloc(m * sizeof *b);
  if (!b) return -1;
  for (size_t i = 0; i < m; i++) b[i] = exp2((k0 + (double)i) / per_doubling);
  *bounds = b;
  *n = m;
  return 0;
}

/* A label value as the format quotes it: \\, \" and \n escaped. */
static void put_label_value(FILE *f, const char *v) {
  fputc('"', f);
  for (; *v; v++) {
    if (*v == '\\') fputs("\\\\", f);
    else if (*v == '"') fputs("\\\"", f);
    else if (*v == '\n') fputs("\\n", f);
    else fputc(*v, f);
  }
  fputc('"', f);
}

static void put_labels(FILE *f, const char *const *names, const char *const *values, size_t n,
                       const char *le) {
  fputc('{', f);
  for (size_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    fprintf(f, "%s=", names[i]);
    put_label_value(f, values[i]);
  }
  if (le) fprintf(f, "%sle=\"%s\"", n ? "," : "", le);
  fputc('}', f);
}

void tel_prom_write(FILE *f, const char *metric, const char *help, const char *const *names,
                    const char *const *values, size_t nlabels, const tel_hist *h) {
  fprintf(f, "# HELP %s ", metric);
  for (const char *c = help; *c; c++) { /* HELP escapes \\ and newlines only */
    if (*c == '\\') fputs("\\\\", f);
    else if (*c == '\n') fputs("\\n", f);
    else fputc(*c, f);
  }
  fprintf(f, "\n# TYPE %s histogram\n", metric);
  double cum = 0;
  char le[64];
  for (size_t i = 0; i <= h->n; i++) {
    cum += h->count[i];
    if (i < h->n) snprintf(le, sizeof le, "%.10g", h->le[i] / 1000);
    else snprintf(le, sizeof le, "+Inf");
    fprintf(f, "%s_bucket", metric);
    put_labels(f, names, values, nlabels, le);
    fprintf(f, " %.17g\n", cum);
  }
  fprintf(f, "%s_sum", metric);
  put_labels(f, names, values, nlabels, NULL);
  fprintf(f, " %.17g\n%s_count", isnan(h->sum) ? 0.0 : h->sum / 1000, metric);
  put_labels(f, names, values, nlabels, NULL);
  fprintf(f, " %.17g\n", cum);
}
