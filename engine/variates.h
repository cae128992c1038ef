/*
 * variates.h — the random variates a run draws: Poisson arrival counts,
 * Zipf key ranks, exponential service times and empirical service times
 * from a measured histogram. Each works on a caller's
 * eng_rng stream and keeps no hidden state, so tests can check their
 * distributions directly.
 */
#ifndef STORMSWEEP_VARIATES_H
#define STORMSWEEP_VARIATES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/* Poisson(lam); exp_neg_lam = exp(-lam), cached by the caller because the
 * rate changes only at fault edges. */
int64_t eng_poisson(eng_rng *g, double lam, double exp_neg_lam);

/* The same draws with everything that depends on lam alone computed once
 * (eng_poisson_prep), for a caller that draws many times at one rate: the
 * engine, once per tick. eng_poisson_draw(g, p) gives exactly
 * eng_poisson(g, lam, exp(-lam)). */
typedef struct eng_poisson_rate {
  double lam, exp_neg_lam;
  double loglam, a, b, invalpha, vr, log_invalpha; /* PTRS (lam >= 10) */
} eng_poisson_rate;

void eng_poisson_prep(eng_poisson_rate *p, double lam);
int64_t eng_poisson_draw(eng_rng *g, const eng_poisson_rate *p);

/* Below a mean of 10 (inversion by multiplication) a draw begins with one
 * uniform u, and the count is 0 exactly when u <= exp(-lam): a caller can
 * recognise a draw of 0 from that first uniform alone and, when it is not
 * one, finish the same draw from u (the engine's skip over empty ticks):
 * eng_poisson_draw(g, p) == eng_poisson_finish(g, p, eng_rng_uniform(g))
 * whenever eng_poisson_by_inversion(p). */
static inline int eng_poisson_by_inversion(const eng_poisson_rate *p) {
  return p->lam > 0 && p->lam < 10;
}
static inline int64_t eng_poisson_finish(eng_rng *g, const eng_poisson_rate *p, double u) {
  int64_t k = 0;
  while (u > p->exp_neg_lam) {
    u *= eng_rng_uniform(g);
    k++;
  }
  return k;
}

/* Zipf(s) over ranks 1..n by rejection-inversion: O(1) per draw for any n. */
typedef struct eng_zipf {
  double s, n, hx1, hn, sv;
} eng_zipf;

void eng_zipf_init(eng_zipf *z, double s, double n);
uint64_t eng_zipf_draw(const eng_zipf *z, eng_rng *g); /* rank in [1, n] */

/* Marsaglia–Tsang 256-layer ziggurat tables for Exp(1). */
typedef struct eng_zig {
  uint32_t k[256];
  double w[256], f[256];
} eng_zig;

void eng_zig_init(eng_zig *z);
double eng_zig_exp1_slow(const eng_zig *z, eng_rng *g, uint64_t x);

/* Exp(1) from one 64-bit draw in ~98.8% of calls: bits 0-7 pick the layer,
 * bits 32-63 the value, and bits 8-31 give *frac, a uniform [0, 1) the
 * caller may use (the engine rounds service times with it). */
static inline double eng_zig_exp1(const eng_zig *z, eng_rng *g, double *frac) {
  uint64_t x = eng_rng_next(g);
  uint32_t iz = (uint32_t)x & 255, jz = (uint32_t)(x >> 32);
  *frac = (double)((x >> 8) & 0xFFFFFF) * 0x1.0p-24;
  if (jz < z->k[iz]) return jz * z->w[iz];
  return eng_zig_exp1_slow(z, g, x);
}

/* An empirical distribution built once from histogram buckets (a latency
 * histogram's bounds and counts, eng_empirical_build) and then only read:
 * drawing is one uniform, a binary search over the buckets' cumulative
 * probabilities, and the place within the bucket by this rule:
 *   - a bucket (a, b] with a > 0 is log-linear: x = a (b/a)^v, v uniform
 *     (latency is closer to uniform in log than in linear scale, and the
 *     buckets a scrape has are usually exponential);
 *   - a bucket (0, b] is linear: x = v b; a zero-width bucket is a point;
 *   - values above the last finite bound L (Prometheus's +Inf bucket) are
 *     L + Exp(m) with m = (their mean from _sum) - L: the mean of the +Inf
 *     bucket is what _sum leaves after every finite bucket's mean under
 *     the rule above; with no sum, or one that leaves m <= 0, they are L.
 * mean_ms is the mean of this distribution. */
typedef struct eng_empirical {
  size_t n;        /* buckets with mass, the tail one included */
  double *cdf;     /* cumulative probability at the end of each bucket */
  double *lo, *w;  /* x = lo * exp(v w) | lo + v w | lo - w log(1 - v), by kind */
  uint8_t *kind;   /* ENG_EMP_LOG, ENG_EMP_LIN, ENG_EMP_EXP */
  double mean_ms, min_ms, max_finite_ms;
  double tail_share, tail_mean_ms; /* the +Inf bucket: its share and mean (0: none) */
} eng_empirical;

enum { ENG_EMP_LOG, ENG_EMP_LIN, ENG_EMP_EXP };

/* Buckets as tel.h gives them: bucket i of n holds count[i] values in
 * (lower or le[i-1], le[i]]; count[n] lie above le[n-1]; sum in ms or NaN.
 * Returns 0, or -1 when out of memory or nothing has mass. */
int eng_empirical_build(eng_empirical *e, size_t n, double lower, const double *le,
                        const double *count, double sum);
void eng_empirical_free(eng_empirical *e);
/* The value at cumulative probability u in [0, 1) (u from one uniform). */
double eng_empirical_at(const eng_empirical *e, double u);
/* The quantile function of the distribution (p in [0, 1]): eng_empirical_at. */
static inline double eng_empirical_draw(const eng_empirical *e, eng_rng *g) {
  return eng_empirical_at(e, eng_rng_uniform(g));
}

#endif
