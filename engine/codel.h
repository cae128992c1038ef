/*
 * codel.h — the controlled-delay rules of codel_variant, each a pure state
 * machine per shard queue, asked for the attempt at the head of the queue
 * with the ticks it waited (sim.c's shards and graph.c's services alike):
 * Facebook's Fail at Scale variant, RFC 8289's control law, and folly's
 * Codel (folly/executors/Codel.cpp), whose own test sequence is replayed
 * in tests/test_policies.c.
 *
 * Fail at Scale: once the delay has stayed at or above the target for an
 * interval, shed every attempt that waited the target or more, until one
 * has not. RFC 8289: the same trigger (with more than one attempt waiting),
 * then one drop, the next interval / sqrt(count) after the last, so drops
 * speed up for as long as the standing queue lasts. An emptied queue
 * resets both (eng_codel_idle).
 *
 * folly:
 * A server asks it for every request it is about to run, with the time the
 * request waited. Time is cut into intervals that start at the first
 * request after the previous one ended: that request opens the next
 * interval (interval ticks from now), is never shed, and starts the
 * interval's minimum delay; the server is overloaded for the whole new
 * interval when the minimum delay of the one that ended exceeded the
 * target. While overloaded it sheds requests that waited more than twice
 * the target (folly's "slough timeout") — not CoDel's control law. The
 * target never exceeds the interval (folly's getOptions). O(1), no
 * allocation; ticks only move forward.
 */
#ifndef STORMSWEEP_CODEL_H
#define STORMSWEEP_CODEL_H

#include <stdint.h>

typedef struct eng_codel {
  int32_t first_above;      /* tick the delay must stay above target until; -1: none */
  int32_t count, lastcount; /* RFC 8289: drops in this dropping state, and the last */
  double drop_next;         /* RFC 8289: tick of the next drop while dropping */
  uint8_t dropping;
} eng_codel;

static inline void eng_codel_init(eng_codel *s) { *s = (eng_codel){.first_above = -1}; }
/* The queue emptied. */
static inline void eng_codel_idle(eng_codel *s) {
  s->first_above = -1;
  s->dropping = 0;
}
/* 1 = shed the head attempt, which waited delay ticks (qlen: attempts still
 * queued behind it). */
int eng_codel_fas_shed(eng_codel *s, int32_t now, int32_t delay, int32_t target,
                       int32_t interval);
int eng_codel_rfc8289_shed(eng_codel *s, int32_t now, int32_t delay, int32_t qlen,
                           int32_t target, int32_t interval);

typedef struct eng_codel_folly {
  int32_t interval_end; /* the current interval ends after this tick */
  int32_t min_delay;    /* least delay seen in the current interval */
  uint8_t reset;        /* the next request opens an interval */
  uint8_t overloaded;
} eng_codel_folly;

/* A fresh state, as folly's constructor leaves it at tick 0. */
static inline void eng_codel_folly_init(eng_codel_folly *s) {
  *s = (eng_codel_folly){.interval_end = 0, .min_delay = 0, .reset = 1, .overloaded = 0};
}

/* A request that waited `delay` ticks starts at tick now: 1 = shed it. */
int eng_codel_folly_shed(eng_codel_folly *s, int32_t now, int32_t delay, int32_t target,
                         int32_t interval);

#endif
