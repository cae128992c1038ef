/*
 * codel.h — folly's Codel (folly/executors/Codel.cpp), the controlled-delay
 * rule of codel_variant = folly, as a pure state machine so its own test
 * sequence can be replayed (tests/test_policies.c). The other two variants
 * live with the shard queue in sim.c.
 *
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
