/*
 * breaker.h — a client's circuit breaker towards one shard: closed, open,
 * half-open, driven by the outcomes of that client's attempts.
 *
 * Closed: the last `window` calls are a bit window (1 = failure); once it
 * holds at least `min_calls` calls and failures / calls >= threshold, the
 * breaker opens for `cooldown` ticks (at least one). Open: calls are
 * refused. After the cool-down the next call finds it half-open: up to
 * `probes` calls go through. How their answers decide (`halfopen`):
 *   any_failure   `probes` successes close it (with an empty window), any
 *                 failure opens it again at once (the default);
 *   failure_rate  resilience4j's rule: nothing is decided until every
 *                 permitted probe has answered; then failures / probes >=
 *                 threshold opens it again, anything less closes it.
 *
 * Every state starts at a tick (`since`); an answer counts only if its call
 * was sent at or after the start of the current state. So answers to calls
 * made before the breaker opened are ignored while it is open, in half-open
 * (only the probes count) and after it closed again. A call sent in the tick
 * the breaker opened was sent before it opened (the minimum cool-down of one
 * tick keeps such a call from passing for a probe).
 */
#ifndef STORMSWEEP_BREAKER_H
#define STORMSWEEP_BREAKER_H

#include <stddef.h>
#include <stdint.h>

#include "eng_config.h"

enum { ENG_BRK_CLOSED = 0, ENG_BRK_OPEN = 1, ENG_BRK_HALF_OPEN = 2 };

typedef struct eng_breaker_params {
  int32_t window, min_calls, probes, cooldown;
  int32_t halfopen; /* eng_breaker_halfopen */
  double threshold;
} eng_breaker_params;

typedef struct eng_breaker {
  uint64_t calls; /* 1 bits = failures, newest in bit 0 */
  int32_t open_until;
  int32_t since;  /* tick the current state began */
  uint16_t probes_out, probes_ok; /* probes may number up to 1000 */
  uint16_t probes_bad;            /* failure_rate: failed probes */
  uint8_t n, state;
} eng_breaker;

/* The parameters of settings s, cooldown already in ticks. */
void eng_breaker_params_init(eng_breaker_params *p, const eng_breaker_settings *s,
                             int32_t cooldown_ticks);
/* 0, or -1 with a message (its keys prefixed by prefix, "" or "A->B."):
 * breaker_min_calls beyond breaker_window could never open it. */
int eng_breaker_settings_check(const eng_breaker_settings *s, const char *prefix, char *err,
                               size_t errlen);

/* Whether a call may go through at tick now; counts a half-open probe. */
int eng_breaker_allow(eng_breaker *b, const eng_breaker_params *p, int32_t now);

/* Whether the breaker would refuse a call now, without counting a probe
 * (the router's next_shard mode steps over such shards). */
int eng_breaker_refuses(const eng_breaker *b, const eng_breaker_params *p, int32_t now);

/* Records the outcome, known at tick now, of a call sent at tick sent.
 * Returns +1 when the breaker left the closed state, -1 when it returned to
 * it, 0 otherwise (the caller counts open breakers). */
int eng_breaker_record(eng_breaker *b, const eng_breaker_params *p, int32_t now, int32_t sent,
                       int failed);

/* A call sent at tick sent will never be recorded (the client cancelled it:
 * a hedged copy that lost): a half-open probe gives its permit back, as
 * resilience4j's releasePermission does, so that another call may probe. */
void eng_breaker_release(eng_breaker *b, int32_t sent);

#endif
