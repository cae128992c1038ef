/*
 * backoff.c — retry delays: none, full, equal and decorrelated jitter (the
 * three schemes of the AWS architecture blog's "Exponential Backoff and
 * Jitter", which most client libraries follow), and the two that gRPC and
 * Envoy ship (backoff.h gives the formulas; docs/clients.md the sources).
 */
#include <math.h>

#include "backoff.h"
#include "eng_config.h"

double eng_backoff_ms(int kind, double base_ms, double cap_ms, double multiplier,
                      int retries_made, double prev_sleep_ms, double u) {
  if (kind == ENG_BACKOFF_NONE || kind == ENG_BACKOFF_ENVOY || cap_ms <= 0) return 0;
  if (kind == ENG_BACKOFF_DECORRELATED) {
    double prev = prev_sleep_ms > 0 ? prev_sleep_ms : base_ms;
    double hi = 3 * prev;
    double sleep = base_ms + u * (hi > base_ms ? hi - base_ms : 0);
    return sleep < cap_ms ? sleep : cap_ms;
  }
  /* ldexp for the default doubling keeps its results bit for bit. */
  double v = multiplier == 2 ? base_ms * ldexp(1.0, retries_made < 60 ? retries_made : 60)
                             : base_ms * pow(multiplier, retries_made);
  if (v > cap_ms) v = cap_ms;
  if (kind == ENG_BACKOFF_GRPC) return v * (0.8 + 0.4 * u);
  return kind == ENG_BACKOFF_EQUAL ? v / 2 + u * v / 2 : u * v;
}

uint64_t eng_backoff_envoy_interval(uint64_t base_ms, uint64_t max_ms, int retries_made) {
  uint64_t v = base_ms;
  for (int k = 0; k < retries_made && v != max_ms; k++) v = v < max_ms / 2 ? 2 * v : max_ms;
  return v;
}

double eng_backoff_envoy_ms(double base_ms, double cap_ms, int retries_made, uint64_t random) {
  if (cap_ms <= 0) return 0;
  uint64_t base = base_ms >= 1 ? (uint64_t)base_ms : 1;
  uint64_t max = cap_ms >= 1 ? (uint64_t)cap_ms : 1;
  uint64_t interval = eng_backoff_envoy_interval(base, max, retries_made);
  return (double)(random % interval);
}
