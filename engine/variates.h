/*
 * variates.h — the random variates a run draws: Poisson arrival counts,
 * Zipf key ranks and exponential service times. Each works on a caller's
 * eng_rng stream and keeps no hidden state, so tests can check their
 * distributions directly.
 */
#ifndef STORMSWEEP_VARIATES_H
#define STORMSWEEP_VARIATES_H

#include <math.h>
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

#endif
