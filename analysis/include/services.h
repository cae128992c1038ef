/*
 * services.h — a call graph's figures per service and grid point
 * (services.c): the amplification chain and each service's own P(bad),
 * from /ticks/service_summary, beside the front's summary.
 */
#ifndef STORMSWEEP_ANA_SERVICES_H
#define STORMSWEEP_ANA_SERVICES_H

#include <jansson.h>
#include <stdio.h>

#include "ana.h"
#include "fmt_results.h"

typedef struct ana_service_stats {
  int64_t n;            /* runs with the figures */
  ana_mean amp;         /* attempts here per user request (the front's calls) */
  int64_t n_bad;        /* runs this service ended bad by its own outcome */
  double p_bad;
  ana_interval bad_ci;  /* the summary's method */
} ana_service_stats;

typedef struct ana_services {
  int32_t n_services;      /* 0: a single tier, or a file that keeps none */
  size_t n_points;
  ana_service_stats *stats; /* [point index * n_services + service] */
} ana_services;

/* The fields ana_services_from reads, in this order (fmt_service_runs_read). */
#define ANA_SERVICE_FIELDS 3
extern const char *const ana_service_fields[ANA_SERVICE_FIELDS]; /* outcome attempts calls */

/* 0 (v empty for a file without per-service figures), or -1 with a message. */
int ana_services_compute(ana_services *v, const fmt_results *r, const ana_summary *s, char *err,
                         size_t errlen);
/* The same from figures already read with ana_service_fields (runs with
 * calls of the front <= 0 carry none). */
int ana_services_from(ana_services *v, const fmt_results *r, const ana_summary *s,
                      const fmt_service_runs *sr, char *err, size_t errlen);
void ana_services_free(ana_services *v);
/* In the summary's point order; nothing for an empty v. */
void ana_services_print_table(FILE *out, const fmt_results *r, const ana_summary *s,
                              const ana_services *v);
/* {"names": [...], "points": [{"point", "services": [...]}]}, or null. */
json_t *ana_services_json(const fmt_results *r, const ana_summary *s, const ana_services *v);

#endif
