/*
 * backoff.h — how long a client sleeps before a retry.
 *
 * With v = min(cap, base * m^n), n = retries already made for the request
 * and m the multiplier (2 by default; gRPC's backoffMultiplier):
 *   full jitter   U(0, v)                  (mean v/2)
 *   equal jitter  v/2 + U(0, v/2)
 *   decorrelated  min(cap, U(base, 3 * previous sleep)), previous = base at first
 *                 (its factor 3 is part of the scheme; the multiplier does not apply)
 *   grpc          v * U(0.8, 1.2)          (gRFC A6 as amended in 2024; gRPC
 *                 C-core's BackoffJitter 0.2 and grpc-go; may exceed cap by 20 %)
 *   envoy         Envoy's JitteredExponentialBackOffStrategy in whole
 *                 milliseconds: the interval starts at base and doubles while
 *                 it is below max / 2 (integer division), else becomes max;
 *                 the wait is a 64-bit random number modulo the interval, so
 *                 U{0, ..., interval - 1} ms. The multiplier does not apply.
 * A cap of 0 or backoff "none" retries at once. Pure: the uniform u in [0, 1)
 * (or Envoy's 64-bit random) comes from the caller's stream.
 */
#ifndef STORMSWEEP_BACKOFF_H
#define STORMSWEEP_BACKOFF_H

#include <stdint.h>

#include "eng_config.h"
#include "rng.h"

/* Every kind but envoy (which gives 0 here: see eng_backoff_envoy_ms). */
double eng_backoff_ms(int kind, double base_ms, double cap_ms, double multiplier,
                      int retries_made, double prev_sleep_ms, double u);

/* Envoy's interval before retry retries_made + 1, in whole ms: base, then
 * doubled while below max / 2, else max (never above max once reached).
 * At most 64 doublings reach any max, so this is O(1). */
uint64_t eng_backoff_envoy_interval(uint64_t base_ms, uint64_t max_ms, int retries_made);

/* Envoy's wait: random % interval (base_ms and cap_ms are truncated to whole
 * milliseconds, as Envoy reads its durations; base must be at least 1). */
double eng_backoff_envoy_ms(double base_ms, double cap_ms, int retries_made, uint64_t random);

/* A client's sleep before its retry retries_made + 1 under backoff kind,
 * drawing from rng: one 64-bit draw for envoy, one uniform for the others;
 * none (0) without backoff or with a cap of 0. Every client (the front's,
 * sim.c, and each call edge's, graph.c) draws through it. */
static inline double eng_backoff_sleep(int kind, double base_ms, double cap_ms, double multiplier,
                                       int retries_made, double prev_sleep_ms, eng_rng *rng) {
  if (kind == ENG_BACKOFF_NONE || !(cap_ms > 0)) return 0;
  if (__builtin_expect(kind == ENG_BACKOFF_ENVOY, 0))
    return eng_backoff_envoy_ms(base_ms, cap_ms, retries_made, eng_rng_next(rng));
  return eng_backoff_ms(kind, base_ms, cap_ms, multiplier, retries_made, prev_sleep_ms,
                        eng_rng_uniform(rng));
}

#endif
