/*
 * latency_hist.c — the log-linear latency histogram (latency_hist.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eng.h"
#include "latency_hist.h"

void eng_lh_init(eng_lat_hist *h) {
  memset(h->count, 0, sizeof h->count);
  h->n = 0;
  h->lo = (int32_t)ENG_LH_BUCKETS;
  h->hi = -1;
}

void eng_lh_reset(eng_lat_hist *h) {
  if (h->hi >= h->lo)
    memset(h->count + h->lo, 0, (size_t)(h->hi - h->lo + 1) * sizeof h->count[0]);
  h->n = 0;
  h->lo = (int32_t)ENG_LH_BUCKETS;
  h->hi = -1;
}

void eng_lh_merge(eng_lat_hist *dst, const eng_lat_hist *src) {
  for (int32_t b = src->lo; b <= src->hi; b++) dst->count[b] += src->count[b];
  if (!src->n) return;
  dst->n += src->n;
  if (src->lo < dst->lo) dst->lo = src->lo;
  if (src->hi > dst->hi) dst->hi = src->hi;
}

uint64_t eng_lh_bucket_low(uint32_t b) {
  if (b < ENG_LH_LINEAR) return b;
  uint32_t j = b - ENG_LH_LINEAR;
  uint32_t k = (j >> ENG_LH_SUB_BITS) + ENG_LH_SUB_BITS + 1;
  uint64_t sub = j & ((1u << ENG_LH_SUB_BITS) - 1);
  return ((uint64_t)1 << k) + (sub << (k - ENG_LH_SUB_BITS));
}

uint64_t eng_lh_bucket_width(uint32_t b) {
  if (b < ENG_LH_LINEAR) return 1;
  uint32_t k = ((b - ENG_LH_LINEAR) >> ENG_LH_SUB_BITS) + ENG_LH_SUB_BITS + 1;
  return (uint64_t)1 << (k - ENG_LH_SUB_BITS);
}

static double bucket_value(int32_t b) {
  return (double)eng_lh_bucket_low((uint32_t)b) +
         0.5 * (double)(eng_lh_bucket_width((uint32_t)b) - 1);
}

double eng_lh_max(const eng_lat_hist *h) {
  if (!h->n) return -1;
  return (double)(eng_lh_bucket_low((uint32_t)h->hi) + eng_lh_bucket_width((uint32_t)h->hi) - 1);
}

static uint64_t rank_of(const eng_lat_hist *h, double q) {
  double want = ceil(q * (double)h->n);
  return want < 1 ? 1 : want > (double)h->n ? h->n : (uint64_t)want;
}

double eng_lh_quantile(const eng_lat_hist *h, double q) {
  double v;
  eng_lh_quantiles(h, &q, 1, &v);
  return v;
}

void eng_lh_quantiles(const eng_lat_hist *h, const double *q, int nq, double *out) {
  if (!h->n) {
    for (int k = 0; k < nq; k++) out[k] = -1;
    return;
  }
  uint64_t seen = 0;
  int32_t b = h->lo;
  for (int k = 0; k < nq; k++) {
    uint64_t rank = rank_of(h, q[k]);
    if (k && q[k] < q[k - 1]) { /* not ascending: start over */
      seen = 0;
      b = h->lo;
    }
    for (; b < h->hi; b++) {
      if (seen + h->count[b] >= rank) break;
      seen += h->count[b];
    }
    out[k] = bucket_value(b);
  }
}

/* h's buckets into out in ms (eng.h says how they are drawn). */
static void export_hist(const eng_lat_hist *h, double tick_ms, eng_lat_export *out) {
  out->n = 0;
  out->sum_ms = 0;
  out->total = (double)h->n;
  int32_t prev = -2; /* the last full bucket written */
  for (int32_t b = h->lo; b <= h->hi && out->n + 2 <= ENG_LAT_EXPORT_MAX; b++) {
    if (!h->count[b]) continue;
    double lo = (double)eng_lh_bucket_low((uint32_t)b);
    double hi = lo + (double)eng_lh_bucket_width((uint32_t)b) - 1;
    /* the empty buckets before this one, as one (none before tick 0) */
    if (b != prev + 1 && lo > 0) {
      out->le_ms[out->n] = (lo - 0.5) * tick_ms;
      out->count[out->n++] = 0;
    }
    out->le_ms[out->n] = (hi + 0.5) * tick_ms;
    out->count[out->n++] = h->count[b];
    out->sum_ms += h->count[b] * 0.5 * (lo + hi) * tick_ms;
    prev = b;
  }
}

int eng_run_latency_export(const eng_run *run, int phase, eng_lat_export *out) {
  const eng_config *c = eng_run_config(run);
  if (!c || phase < 0 || phase > ENG_PHASE_COUNT) return -1;
  if (phase < ENG_PHASE_COUNT) {
    const eng_lat_hist *h = eng_run_phase_hist(run, phase);
    if (!h) return -1;
    export_hist(h, c->tick_ms, out);
    return 0;
  }
  /* every phase: their sum, once per export (13 KB) */
  eng_lat_hist *all = malloc(sizeof *all);
  if (!all) return -1;
  eng_lh_init(all);
  for (int k = 0; k < ENG_PHASE_COUNT; k++) {
    const eng_lat_hist *h = eng_run_phase_hist(run, k);
    if (h) eng_lh_merge(all, h);
  }
  export_hist(all, c->tick_ms, out);
  free(all);
  return 0;
}
