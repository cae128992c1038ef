/*
 * telemetry_tables.h — the tables a run reads from telemetry files: the
 * empirical service-time distribution of service_histogram and the rate
 * profile of rate_profile. Each (file, series) is read and checked once per
 * process and kept, immutable, for every configuration that names it, so
 * copying a configuration copies a pointer and a run allocates nothing for
 * them.
 */
#ifndef STORMSWEEP_TELEMETRY_TABLES_H
#define STORMSWEEP_TELEMETRY_TABLES_H

#include <stddef.h>

#include "variates.h"

/* Requests per second over time: n points (t_ms[i], rps[i]), t_ms[0] = 0,
 * linear in between, the end values held before the first and after the
 * last point. */
typedef struct eng_rate_profile {
  size_t n;
  double *t_ms, *rps;
  double peak_rps, mean_rps, end_ms;
} eng_rate_profile;

/* The rate at t_ms; *cursor (start at 0) makes a run of increasing times
 * O(1) per call. */
static inline double eng_rate_profile_at(const eng_rate_profile *p, double t_ms, size_t *cursor) {
  size_t k = *cursor;
  while (k + 1 < p->n && t_ms >= p->t_ms[k + 1]) k++;
  *cursor = k;
  if (k + 1 >= p->n || t_ms <= p->t_ms[k]) return p->rps[k];
  double f = (t_ms - p->t_ms[k]) / (p->t_ms[k + 1] - p->t_ms[k]);
  return p->rps[k] + f * (p->rps[k + 1] - p->rps[k]);
}

/* The table of (path, series): 0 and *out, -1 with "FILE:LINE: ..." in err,
 * or -2 when several series match and series is empty (the caller may be
 * told the series later). */
int eng_tables_service(const char *path, const char *series, const eng_empirical **out, char *err,
                       size_t errlen);
int eng_tables_rate(const char *path, const char *series, const eng_rate_profile **out, char *err,
                    size_t errlen);

#endif
