/*
 * breaker.c — the circuit breaker state machine (see breaker.h). A count-
 * based window in one 64-bit word keeps a record O(1): shift, mask, popcount.
 */
#include <stdio.h>

#include "breaker.h"
#include "eng_config.h"

void eng_breaker_params_init(eng_breaker_params *p, const eng_breaker_settings *s,
                             int32_t cooldown_ticks) {
  *p = (eng_breaker_params){
      .window = s->breaker_window,
      .min_calls = s->breaker_min_calls,
      .probes = s->breaker_probes,
      .halfopen = s->breaker_halfopen,
      .cooldown = cooldown_ticks,
      .threshold = s->breaker_threshold,
  };
}

int eng_breaker_settings_check(const eng_breaker_settings *s, const char *prefix, char *err,
                               size_t errlen) {
  if (s->breaker_min_calls <= s->breaker_window) return 0;
  snprintf(err, errlen, "%sbreaker_min_calls (%d) must not exceed %sbreaker_window (%d)", prefix,
           s->breaker_min_calls, prefix, s->breaker_window);
  return -1;
}

static int open_now(eng_breaker *b, const eng_breaker_params *p, int32_t now) {
  int was_closed = b->state == ENG_BRK_CLOSED;
  b->state = ENG_BRK_OPEN;
  b->since = now;
  b->open_until = now + (p->cooldown > 1 ? p->cooldown : 1);
  return was_closed;
}

int eng_breaker_allow(eng_breaker *b, const eng_breaker_params *p, int32_t now) {
  if (b->state == ENG_BRK_CLOSED) return 1;
  if (b->state == ENG_BRK_OPEN) {
    if (now < b->open_until) return 0;
    b->state = ENG_BRK_HALF_OPEN;
    b->since = now;
    b->probes_out = b->probes_ok = b->probes_bad = 0;
  }
  if (b->probes_out >= p->probes) return 0;
  b->probes_out++;
  return 1;
}

int eng_breaker_refuses(const eng_breaker *b, const eng_breaker_params *p, int32_t now) {
  if (b->state == ENG_BRK_OPEN) return now < b->open_until;
  if (b->state == ENG_BRK_HALF_OPEN) return b->probes_out >= p->probes;
  return 0;
}

int eng_breaker_record(eng_breaker *b, const eng_breaker_params *p, int32_t now, int32_t sent,
                       int failed) {
  if (b->state == ENG_BRK_OPEN || sent < b->since) return 0; /* stale */
  if (b->state == ENG_BRK_HALF_OPEN) {
    if (p->halfopen == ENG_BREAKER_HALFOPEN_FAILURE_RATE) {
      if (failed) b->probes_bad++;
      else b->probes_ok++;
      if (b->probes_ok + b->probes_bad < p->probes) return 0; /* not all answered yet */
      if (b->probes_bad >= p->threshold * p->probes) {
        open_now(b, p, now);
        return 0;
      }
    } else {
      if (failed) {
        open_now(b, p, now);
        return 0;
      }
      if (++b->probes_ok < p->probes) return 0;
    }
    b->state = ENG_BRK_CLOSED;
    b->since = now;
    b->calls = 0;
    b->n = 0;
    return -1;
  }
  uint64_t mask = p->window >= 64 ? ~0ULL : ((1ULL << p->window) - 1);
  b->calls = ((b->calls << 1) | (uint64_t)(failed != 0)) & mask;
  if (b->n < p->window) b->n++;
  if (b->n >= p->min_calls && __builtin_popcountll(b->calls) >= p->threshold * b->n)
    return open_now(b, p, now);
  return 0;
}

void eng_breaker_release(eng_breaker *b, int32_t sent) {
  if (b->state == ENG_BRK_HALF_OPEN && sent >= b->since && b->probes_out > 0) b->probes_out--;
}
