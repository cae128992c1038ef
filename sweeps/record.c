/*
 * record.c — what each run of a sweep stores in /ticks: the [sweep] settings
 * `record` (full | every=MS | summary) and `record_metrics` (a list of
 * metric names; default all), and the ticks each stored row spans
 * (swp_record_row_ticks), which the engine's runs keep their rows at. The
 * writer (format/), the driver's workers and the readers all ask here, so
 * the decision has one owner.
 *
 * every=MS keeps one row per window of MS / tick_ms ticks (MS must be a
 * whole multiple of tick_ms). How a row of several ticks is made is the
 * engine's (eng_run_set_row_ticks, eng_metric_info.sums): counters
 * (requests, attempts, successes, ... per tick) store the window's sum, so
 * totals stay exact; levels (queue depth, in flight, open breakers, budget
 * tokens) and the user-view window series (latency quantiles, error rate)
 * store the value at the window's last tick, which is what a level "at the
 * end of the tick" means for a longer tick. A run's last window may be
 * shorter (its own horizon): it holds the ticks the run has.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swp_internal.h"

static int metric_find(const char *name, size_t len) {
  for (int m = 0; m < ENG_M_COUNT; m++) {
    const char *n = eng_metric_get_info((eng_metric)m)->name;
    if (strlen(n) == len && !strncmp(n, name, len)) return m;
  }
  return -1;
}

/* "every=10ms", "every=10", "every=2.5ms": the window in ms, > 0. */
static int parse_every(const char *v, double *ms) {
  if (strncmp(v, "every", 5)) return -1;
  v += 5;
  while (*v == ' ') v++;
  if (*v++ != '=') return -1;
  while (*v == ' ') v++;
  char *end = NULL;
  double x = strtod(v, &end);
  if (end == v) return -1;
  if (!strcmp(end, "ms") || !*end) {
    if (!(x > 0) || !isfinite(x) || x > 1e12) return -1;
    *ms = x;
    return 0;
  }
  return -1;
}

static int apply_metrics(swp_sweep *sw, const char *value, char *msg, size_t len) {
  uint32_t mask = 0;
  const char *p = value;
  if (!strcmp(value, "all")) {
    sw->record_metrics = 0;
    return 0;
  }
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *e = p;
    while (*e && *e != ',' && *e != ' ') e++;
    int m = metric_find(p, (size_t)(e - p));
    if (m < 0) {
      char names[1024];
      size_t used = 0;
      for (int k = 0; k < ENG_M_COUNT && used < sizeof names; k++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                                 eng_metric_get_info((eng_metric)k)->name);
      snprintf(msg, len, "record_metrics: unknown metric '%.*s' (the /ticks metrics: %s)",
                 (int)(e - p) > 64 ? 64 : (int)(e - p), p, names);
      return -1;
    }
    mask |= 1u << m;
    p = e;
  }
  if (!mask) {
    snprintf(msg, len, "record_metrics: expected all or a list of metric names, got '%s'",
               value);
    return -1;
  }
  sw->record_metrics = mask;
  return 0;
}

int swp_record_apply(swp_sweep *sw, const char *key, const char *value, char *msg,
                     size_t len) {
  if (!strcmp(key, "record_metrics")) return apply_metrics(sw, value, msg, len);
  double ms = 0;
  if (!strcmp(value, "full")) {
    sw->record = SWP_RECORD_FULL;
  } else if (!strcmp(value, "summary")) {
    sw->record = SWP_RECORD_SUMMARY;
  } else if (!parse_every(value, &ms)) {
    sw->record = SWP_RECORD_EVERY;
    sw->record_every_ms = ms;
  } else {
    snprintf(msg, len, "record: expected full, every=MS (a window of MS > 0 milliseconds, "
               "a whole number of ticks, e.g. every=10ms) or summary, got '%s'", value);
    return -1;
  }
  return 0;
}

int32_t swp_record_row_ticks(const swp_sweep *sw, double tick_ms) {
  if (sw->record == SWP_RECORD_SUMMARY) return 0;
  if (sw->record != SWP_RECORD_EVERY) return 1;
  double k = sw->record_every_ms / tick_ms;
  double kr = floor(k + 0.5);
  if (!(kr >= 1) || fabs(k - kr) > 1e-9 * kr || kr > 1e9) return -1;
  return (int32_t)kr;
}

int swp_record_check(swp_sweep *sw, char *msg, size_t len) {
  int32_t k = swp_record_row_ticks(sw, sw->tick_ms);
  if (k < 0) {
    snprintf(msg, len, "record: every=%gms is not a whole number of ticks of %g ms",
             sw->record_every_ms, sw->tick_ms);
    return -1;
  }
  sw->record_stride = k;
  sw->rows = k ? (int32_t)(((int64_t)sw->ticks + k - 1) / k) : 0;
  return 0;
}

int swp_record_stored(const swp_sweep *sw, int m) {
  if (sw->record == SWP_RECORD_SUMMARY || m < 0 || m >= ENG_M_COUNT) return 0;
  return !sw->record_metrics || (sw->record_metrics >> m & 1u);
}

uint32_t swp_record_mask(const swp_sweep *sw) {
  uint32_t mask = 0;
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (swp_record_stored(sw, m)) mask |= 1u << m;
  return mask;
}

int swp_record_is_default(const swp_sweep *sw) {
  return sw->record == SWP_RECORD_FULL && !sw->record_metrics;
}

double swp_record_row_ms(const swp_sweep *sw) {
  return sw->record_stride > 0 ? sw->tick_ms * sw->record_stride : NAN;
}

void swp_record_text(const swp_sweep *sw, char *buf, size_t len) {
  if (sw->record == SWP_RECORD_SUMMARY) snprintf(buf, len, "summary");
  else if (sw->record == SWP_RECORD_EVERY) {
    /* The shortest text that parses back to the same window. */
    char num[40];
    for (int p = 1; p <= 17; p++) {
      snprintf(num, sizeof num, "%.*g", p, sw->record_every_ms);
      if (strtod(num, NULL) == sw->record_every_ms && !strchr(num, 'e')) break;
    }
    snprintf(buf, len, "every=%sms", num);
  } else snprintf(buf, len, "full");
}

void swp_record_metrics_text(const swp_sweep *sw, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int m = 0; m < ENG_M_COUNT && used < len; m++)
    if (sw->record_metrics >> m & 1u)
      used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                               eng_metric_get_info((eng_metric)m)->name);
}
