/*
 * rng.h — the engine's random numbers: xoshiro256++ streams seeded through
 * splitmix64, plus the variates the model needs.
 *
 * A run derives one stream per purpose (arrivals, service, client policy, ...)
 * from its seed, so changing how often one mechanism draws does not shift the
 * numbers another one sees. State lives in the run context; nothing here is
 * global, so any thread may use its own streams.
 */
#ifndef STORMSWEEP_RNG_H
#define STORMSWEEP_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct eng_rng {
  uint64_t s[4];
} eng_rng;

static inline uint64_t eng_splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Stream `stream` of seed: distinct streams are statistically independent. */
static inline void eng_rng_seed(eng_rng *r, uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ (0xd1b54a32d192ed03ULL * (stream + 1));
  for (int i = 0; i < 4; i++) r->s[i] = eng_splitmix64(&x);
}

static inline uint64_t eng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256++: every output bit is good, so one draw can be split into
 * several variates (the hot loop does: a ziggurat layer, its value and a
 * rounding fraction from one number). */
static inline uint64_t eng_rng_next(eng_rng *r) {
  uint64_t *s = r->s;
  const uint64_t result = eng_rotl(s[0] + s[3], 23) + s[0];
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = eng_rotl(s[3], 45);
  return result;
}

/* Uniform in [0, 1). */
static inline double eng_rng_uniform(eng_rng *r) {
  return (double)(eng_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in (0, 1]: safe under log(). */
static inline double eng_rng_uniform_pos(eng_rng *r) {
  return (double)((eng_rng_next(r) >> 11) + 1) * 0x1.0p-53;
}

/* Uniform integer in [0, n) for n < 2^32 (Lemire's multiply-shift; the bias
 * is below 2^-32 * n, far under anything a run can observe). */
static inline uint32_t eng_rng_below(eng_rng *r, uint32_t n) {
  return (uint32_t)(((eng_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform integer in [0, n) for 64-bit n. */
static inline uint64_t eng_rng_below64(eng_rng *r, uint64_t n) {
  return (uint64_t)(eng_rng_uniform(r) * (double)n) % (n ? n : 1);
}

static inline double eng_rng_exp(eng_rng *r, double mean) {
  return -log(eng_rng_uniform_pos(r)) * mean;
}

static inline double eng_rng_normal(eng_rng *r) {
  /* Box–Muller, one value used: simple and exact; not on the hot path. */
  double u1 = eng_rng_uniform_pos(r), u2 = eng_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
