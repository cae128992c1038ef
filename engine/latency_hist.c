/*
 * latency_hist.c — the log-linear latency histogram (latency_hist.h).
 */
#include <math.h>
#include <string.h>

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

