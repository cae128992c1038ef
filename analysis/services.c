/*
 * services.c — a call graph's figures per service and grid point, for
 * analyze: at each service, the attempts per user request (the
 * amplification chain: its attempts over the front's calls, run by run,
 * with a t interval over the point's runs) and how many runs that service
 * itself ended bad by the outcome rule on its own traces
 * (ana_outcome_is_bad; Wilson or exact interval as the summary's). Only
 * runs that store /ticks rows carry them (refine's confirmation runs do
 * not). The front's figures stay the summary's: these are beside them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "decision.h"
#include "services.h"
#include "textsafe.h"

enum { F_OUTCOME, F_ATTEMPTS, F_CALLS, F_COUNT };
const char *const ana_service_fields[ANA_SERVICE_FIELDS] = {"outcome", "attempts", "calls"};

void ana_services_free(ana_services *v) {
  free(v->stats);
  memset(v, 0, sizeof *v);
}

int ana_services_compute(ana_services *v, const fmt_results *r, const ana_summary *s, char *err,
                         size_t errlen) {
  memset(v, 0, sizeof *v);
  if (r->services <= 0) return 0;
  fmt_service_runs sr;
  int rc = fmt_service_runs_read(&sr, r, ana_service_fields, ANA_SERVICE_FIELDS, err, errlen);
  if (rc) return rc < 0 ? -1 : 0; /* 1: the file keeps none */
  rc = ana_services_from(v, r, s, &sr, err, errlen);
  fmt_service_runs_free(&sr);
  return rc;
}

int ana_services_from(ana_services *v, const fmt_results *r, const ana_summary *s,
                      const fmt_service_runs *srp, char *err, size_t errlen) {
  memset(v, 0, sizeof *v);
  const fmt_service_runs sr = *srp;
  int rc;
  size_t K = (size_t)sr.n_services, P = r->n_points;
  v->n_services = sr.n_services;
  v->n_points = P;
  v->stats = calloc((P ? P : 1) * K, sizeof *v->stats);
  double *amp = malloc((r->n_runs ? r->n_runs : 1) * sizeof *amp);
  size_t *at = calloc(P ? P : 1, sizeof *at), *start = calloc(P + 1, sizeof *start);
  size_t *runs = malloc((r->n_runs ? r->n_runs : 1) * sizeof *runs);
  if (!v->stats || !amp || !at || !start || !runs) {
    snprintf(err, errlen, "%s: out of memory for the per-service figures", r->path);
    rc = -1;
    goto done;
  }
  /* the runs of each point, with figures, together */
  for (size_t i = 0; i < r->n_runs; i++)
    if (sr.cell[(i * F_COUNT + F_CALLS) * K] > 0) start[r->point_of_run[i] + 1]++;
  for (size_t p = 0; p < P; p++) start[p + 1] += start[p];
  for (size_t i = 0; i < r->n_runs; i++)
    if (sr.cell[(i * F_COUNT + F_CALLS) * K] > 0) {
      size_t p = r->point_of_run[i];
      runs[start[p] + at[p]++] = i;
    }
  for (size_t p = 0; p < P; p++) {
    size_t n = start[p + 1] - start[p];
    for (size_t k = 0; k < K; k++) {
      ana_service_stats *st = &v->stats[p * K + k];
      int64_t bad = 0;
      for (size_t j = 0; j < n; j++) {
        const int32_t *c = sr.cell + runs[start[p] + j] * F_COUNT * K;
        amp[j] = (double)c[F_ATTEMPTS * K + k] / (double)c[F_CALLS * K];
        bad += ana_outcome_is_bad(c[F_OUTCOME * K + k]);
      }
      st->n = (int64_t)n;
      st->amp = ana_mean_compute(amp, n);
      st->n_bad = bad;
      st->p_bad = n ? (double)bad / (double)n : NAN;
      st->bad_ci = ana_proportion_interval(s->method, bad, (int64_t)n);
    }
  }
  rc = 0;
done:
  free(amp);
  free(at);
  free(start);
  free(runs);
  if (rc) ana_services_free(v);
  return rc;
}

void ana_services_print_table(FILE *out, const fmt_results *r, const ana_summary *s,
                              const ana_services *v) {
  if (!v->n_services) return;
  size_t K = (size_t)v->n_services;
  fprintf(out,
          "\nPer service (a call graph; the runs that store /ticks rows): attempts at each "
          "service per user request (mean [95%% t interval]), and P(bad) by that service's own "
          "outcome (the outcome rule on its traces):\n");
  fprintf(out, "%6s  %5s", "point", "runs");
  for (size_t k = 0; k < K; k++) {
    fputs("  ", out);
    char name[ENG_NAME_MAX + 8];
    snprintf(name, sizeof name, k + 1 < K ? "%-34.31s" : "%.31s", r->service_names[k]);
    ana_term_fputs(out, name, 0);
  }
  fputc('\n', out);
  for (size_t q = 0; q < s->n_points; q++) {
    size_t p = s->order[q];
    const ana_service_stats *row = &v->stats[p * K];
    fprintf(out, "%6lld  %5lld", (long long)s->points[p].point, (long long)row[0].n);
    for (size_t k = 0; k < K; k++) {
      char cell[96];
      if (!row[k].n)
        snprintf(cell, sizeof cell, "-");
      else
        snprintf(cell, sizeof cell, "%.3g [%.3g,%.3g] bad %.2f", row[k].amp.mean,
                 row[k].amp.ci.lo, row[k].amp.ci.hi, row[k].p_bad);
      fprintf(out, k + 1 < K ? "  %-34s" : "  %s", cell);
    }
    fputc('\n', out);
  }
}

static json_t *interval_json(ana_interval ci) {
  json_t *a = json_array();
  json_array_append_new(a, ana_json_number(ci.lo));
  json_array_append_new(a, ana_json_number(ci.hi));
  return a;
}

json_t *ana_services_json(const fmt_results *r, const ana_summary *s, const ana_services *v) {
  if (!v->n_services) return json_null();
  size_t K = (size_t)v->n_services;
  json_t *root = json_object(), *names = json_array(), *points = json_array();
  for (size_t k = 0; k < K; k++) json_array_append_new(names, ana_json_text(r->service_names[k]));
  for (size_t q = 0; q < s->n_points; q++) {
    size_t p = s->order[q];
    json_t *per = json_array();
    for (size_t k = 0; k < K; k++) {
      const ana_service_stats *st = &v->stats[p * K + k];
      json_array_append_new(
          per, json_pack("{s:o,s:I,s:o,s:o,s:I,s:o,s:o}", "service",
                         ana_json_text(r->service_names[k]), "runs", (json_int_t)st->n,
                         "amplification", ana_json_number(st->amp.mean), "amplification_ci",
                         interval_json(st->amp.ci), "bad", (json_int_t)st->n_bad, "p_bad",
                         ana_json_number(st->p_bad), "p_bad_ci", interval_json(st->bad_ci)));
    }
    json_array_append_new(points, json_pack("{s:I,s:o}", "point",
                                            (json_int_t)s->points[p].point, "services", per));
  }
  json_object_set_new(root, "names", names);
  json_object_set_new(root, "points", points);
  return root;
}
