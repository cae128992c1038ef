/*
 * backoff.c — retry delays: none, full, equal and decorrelated jitter (the
 * three schemes of the AWS architecture blog's "Exponential Backoff and
 * Jitter", which most client libraries follow).
 */
#include <math.h>

#include "backoff.h"
#include "eng_config.h"

double eng_backoff_ms(int kind, double base_ms, double cap_ms, double multiplier,
                      int retries_made, double prev_sleep_ms, double u) {
  if (kind == ENG_BACKOFF_NONE || cap_ms <= 0) return 0;
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
  return kind == ENG_BACKOFF_EQUAL ? v / 2 + u * v / 2 : u * v;
}
