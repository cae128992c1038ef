/*
 * backoff.h — how long a client sleeps before a retry (SPEC §1).
 *
 * With v = min(cap, base * m^n), n = retries already made for the request
 * and m the multiplier (2 by default; gRPC's backoffMultiplier):
 *   full jitter   U(0, v)                  (mean v/2)
 *   equal jitter  v/2 + U(0, v/2)
 *   decorrelated  min(cap, U(base, 3 * previous sleep)), previous = base at first
 *                 (its factor 3 is part of the scheme; the multiplier does not apply)
 * A cap of 0 or backoff "none" retries at once. Pure: the uniform u in [0, 1)
 * comes from the caller's stream.
 */
#ifndef STORMSWEEP_BACKOFF_H
#define STORMSWEEP_BACKOFF_H

double eng_backoff_ms(int kind, double base_ms, double cap_ms, double multiplier,
                      int retries_made, double prev_sleep_ms, double u);

#endif
