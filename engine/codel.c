/*
 * codel.c — folly's Codel decision (codel.h).
 */
#include "codel.h"

int eng_codel_folly_shed(eng_codel_folly *s, int32_t now, int32_t delay, int32_t target,
                         int32_t interval) {
  if (target > interval) target = interval;
  if (now > s->interval_end && !s->reset) {
    s->reset = 1;
    s->interval_end = now + interval;
    s->overloaded = s->min_delay > target;
  }
  if (s->reset) {
    /* more than one request must come in an interval before any is shed */
    s->reset = 0;
    s->min_delay = delay;
    return 0;
  }
  if (delay < s->min_delay) s->min_delay = delay;
  return s->overloaded && delay > 2 * target;
}
