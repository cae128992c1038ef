/*
 * band.c — a per-tick metric of one grid point as a band across its
 * replicates: the file gives each replicate's mean over bins of ticks
 * (fmt_bins_read), and the 5/50/95% quantiles and the mean are taken across
 * replicates bin by bin, so a storm in one replicate widens the band without
 * moving the median.
 */
#include <stdlib.h>
#include <string.h>

#include "ana.h"

void ana_band_free(ana_band *b) {
  free(b->t_ms);
  free(b->p05);
  free(b->p50);
  free(b->p95);
  free(b->mean);
  memset(b, 0, sizeof *b);
}

int ana_band_read(ana_band *b, const fmt_results *r, const char *metric, size_t point_index,
                  size_t max_bins, char *err, size_t errlen) {
  memset(b, 0, sizeof *b);
  fmt_bins bins;
  if (fmt_bins_read(&bins, r, metric, point_index, max_bins, err, errlen)) return -1;
  size_t nrows = bins.n_runs, nbins = bins.nbins;
  double *col = malloc((nrows ? nrows : 1) * sizeof *col);
  b->p05 = malloc(nbins * sizeof *b->p05);
  b->p50 = malloc(nbins * sizeof *b->p50);
  b->p95 = malloc(nbins * sizeof *b->p95);
  b->mean = malloc(nbins * sizeof *b->mean);
  if (!col || !b->p05 || !b->p50 || !b->p95 || !b->mean) {
    snprintf(err, errlen, "%s: out of memory reading /ticks/%s", r->path, metric);
    free(col);
    fmt_bins_free(&bins);
    ana_band_free(b);
    return -1;
  }
  for (size_t k = 0; k < nbins; k++) {
    double sum = 0.0;
    for (size_t i = 0; i < nrows; i++) {
      col[i] = bins.cell[i * nbins + k];
      sum += col[i];
    }
    ana_sort_doubles(col, nrows);
    b->p05[k] = ana_quantile_sorted(col, nrows, 0.05);
    b->p50[k] = ana_quantile_sorted(col, nrows, 0.50);
    b->p95[k] = ana_quantile_sorted(col, nrows, 0.95);
    b->mean[k] = sum / (double)nrows;
  }
  b->nbins = nbins;
  b->n_runs = nrows;
  b->ticks_per_bin = bins.ticks_per_bin;
  b->t_ms = bins.t_ms;
  bins.t_ms = NULL;
  free(col);
  fmt_bins_free(&bins);
  return 0;
}
