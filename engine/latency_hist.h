/*
 * latency_hist.h — a fixed-memory log-linear latency histogram
 * (HdrHistogram-style) for the engine's per-request latencies.
 *
 * Values are whole units: the engine adds latencies in ticks, which is all
 * the precision a tick-based simulation has, and converts quantiles to ms
 * (so 1 us .. 1 h is covered down to tick_ms = 0.001). 0..255 each have
 * their own bucket (exact); above that, every power of two [2^k, 2^(k+1))
 * is cut into 128 equal buckets, so a bucket is at most 1/128 of its lower
 * bound wide (0.78%), and a quantile reported at its bucket's midpoint is
 * within 1/256 (0.39%) of the true value. Buckets go up to 2^32; larger
 * values count in the last bucket. 3328 buckets of uint32: 13 KB per
 * histogram, no allocation per value, every add O(1) and a handful of
 * instructions (the engine adds once per request); the range of buckets
 * touched is kept, so a reset, merge or quantile scan costs only what was
 * used.
 */
#ifndef STORMSWEEP_LATENCY_HIST_H
#define STORMSWEEP_LATENCY_HIST_H

#include <stdint.h>

#define ENG_LH_SUB_BITS 7 /* 128 buckets per power of two above 255 */
#define ENG_LH_LINEAR (2u << ENG_LH_SUB_BITS) /* 256 one-microsecond buckets */
#define ENG_LH_TOP_BIT 31 /* the last power of two covered: [2^31, 2^32) */
#define ENG_LH_BUCKETS \
  (ENG_LH_LINEAR + (ENG_LH_TOP_BIT - ENG_LH_SUB_BITS) * (1u << ENG_LH_SUB_BITS))
#define ENG_LH_MAX_US UINT32_MAX

typedef struct eng_lat_hist {
  uint64_t n;     /* values added */
  int32_t lo, hi; /* buckets touched: [lo, hi]; lo > hi when empty */
  uint32_t count[ENG_LH_BUCKETS];
} eng_lat_hist;

/* Bucket of value v. */
static inline uint32_t eng_lh_index(uint64_t v) {
  if (v > ENG_LH_MAX_US) v = ENG_LH_MAX_US;
  if (v < ENG_LH_LINEAR) return (uint32_t)v;
  uint32_t k = 63u - (uint32_t)__builtin_clzll(v); /* k >= 8 */
  uint32_t sub = (uint32_t)(v >> (k - ENG_LH_SUB_BITS)) - (1u << ENG_LH_SUB_BITS);
  return ENG_LH_LINEAR + ((k - ENG_LH_SUB_BITS - 1) << ENG_LH_SUB_BITS) + sub;
}

static inline void eng_lh_add(eng_lat_hist *h, uint64_t v) {
  uint32_t b = eng_lh_index(v);
  h->count[b]++;
  h->n++;
  if ((int32_t)b < h->lo) h->lo = (int32_t)b;
  if ((int32_t)b > h->hi) h->hi = (int32_t)b;
}

/* Empties h: the whole table (first use), or only the buckets touched. */
void eng_lh_init(eng_lat_hist *h);
void eng_lh_reset(eng_lat_hist *h);
/* Adds every value of src to dst. */
void eng_lh_merge(eng_lat_hist *dst, const eng_lat_hist *src);
/* The lowest value of bucket b and its width. */
uint64_t eng_lh_bucket_low(uint32_t b);
uint64_t eng_lh_bucket_width(uint32_t b);
/* The q-quantile (0 < q <= 1): the value of rank ceil(q n) among the n
 * added, as its bucket's midpoint (exact below 256). -1 when h is empty. */
double eng_lh_quantile(const eng_lat_hist *h, double q);
/* The same for nq quantiles in one scan (q ascending is fastest). */
void eng_lh_quantiles(const eng_lat_hist *h, const double *q, int nq, double *out);
/* The highest value added, as its bucket's top (exact below 256); -1 when
 * h is empty. */
double eng_lh_max(const eng_lat_hist *h);

/* Phase phase's histogram of the last simulation of run (sim.c; NULL
 * before the first): what eng_run_latency_export reads. */
struct eng_run;
const eng_lat_hist *eng_run_phase_hist(const struct eng_run *run, int phase);

#endif
