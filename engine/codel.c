/*
 * codel.c — the controlled-delay decisions (codel.h).
 */
#include <math.h>

#include "codel.h"

int eng_codel_fas_shed(eng_codel *s, int32_t now, int32_t delay, int32_t target,
                       int32_t interval) {
  if (delay < target) {
    eng_codel_idle(s);
    return 0;
  }
  if (s->dropping) return 1;
  if (s->first_above < 0) {
    s->first_above = now + interval;
    return 0;
  }
  if (now >= s->first_above) {
    s->dropping = 1;
    return 1;
  }
  return 0;
}

int eng_codel_rfc8289_shed(eng_codel *s, int32_t now, int32_t delay, int32_t qlen,
                           int32_t target, int32_t interval) {
  int ok = 0;
  if (delay < target || qlen < 1) {
    s->first_above = -1;
  } else if (s->first_above < 0) {
    s->first_above = now + interval;
  } else if (now >= s->first_above) {
    ok = 1;
  }
  double iv = (double)interval;
  if (s->dropping) {
    if (!ok) {
      s->dropping = 0;
      return 0;
    }
    if (now < s->drop_next) return 0;
    s->count++;
    s->drop_next += iv / sqrt((double)s->count);
    return 1;
  }
  if (!ok) return 0;
  s->dropping = 1;
  int32_t delta = s->count - s->lastcount;
  s->count = 1;
  if (delta > 1 && now - s->drop_next < 16 * iv) s->count = delta;
  s->drop_next = now + iv / sqrt((double)s->count);
  s->lastcount = s->count;
  return 1;
}

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
