/*
 * decision.c — see decision.h: the cost order of settings that meet the
 * targets, and the split of a grid into tunable and scenario combinations
 * (the robust answer is taken over the scenario values of each tunable
 * combination: an intersection-union test, docs/decisions.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "refine_eval.h"

void ana_outcome_bad_describe(const int64_t by[ENG_OUTCOME_COUNT], char *buf, size_t len) {
  size_t used = 0;
  snprintf(buf, len, "0 %s", eng_outcome_name(ENG_OUTCOME_METASTABLE));
  for (int o = 0; o < ENG_OUTCOME_COUNT && used < len; o++) {
    if (!ana_outcome_is_bad(o) || by[o] == 0) continue;
    int w = snprintf(buf + used, len - used, "%s%lld %s", used ? ", " : "", (long long)by[o],
                     eng_outcome_name((eng_outcome)o));
    if (w < 0) break;
    used += (size_t)w;
  }
}

/* ---- counts ---- */

ana_point_runs ana_point_runs_of(const fmt_results *r, size_t point_index) {
  ana_point_runs n = {0, 0, 0};
  for (size_t i = 0; i < r->n_runs; i++) {
    const fmt_run *run = &r->runs[i];
    if (r->point_of_run[i] != point_index || run->outcome < ENG_OUTCOME_RECOVERED ||
        run->outcome >= ENG_OUTCOME_COUNT)
      continue;
    n.total++;
    if (ana_run_is_screening(r, run)) n.screening++;
    else n.fresh++;
  }
  return n;
}

void ana_tested_runs_text(const fmt_results *r, size_t point_index, int64_t tested, char *buf,
                          size_t len) {
  ana_point_runs n = ana_point_runs_of(r, point_index);
  if (n.fresh > tested)
    snprintf(buf, len, "%lld of its %lld fresh runs", (long long)tested, (long long)n.fresh);
  else
    snprintf(buf, len, "%lld fresh runs", (long long)tested);
}

ana_refine_counts ana_refine_counts_of(const ana_rf_eval *x, const fmt_results *r) {
  return (ana_refine_counts){x->rp.n_groups, x->rp.n_cand, r->n_points, x->r0,
                             x->appended - x->screen_added, r->n_rounds};
}

void ana_refine_counts_text(const ana_refine_counts *c, char *buf, size_t len) {
  if (c->candidate_points != c->candidates)
    snprintf(buf, len, "%zu candidate%s (%zu points: each at its scenario values) of %zu points",
             c->candidates, c->candidates == 1 ? "" : "s", c->candidate_points, c->points);
  else
    snprintf(buf, len, "%zu candidate%s of %zu points", c->candidates,
             c->candidates == 1 ? "" : "s", c->points);
}

static double round2(double v) { return isnan(v) ? INFINITY : round(v * 100.0) / 100.0; }

static int cmp_double_asc(double a, double b) { return (a > b) - (a < b); }

ana_cost_key ana_cost_key_make(double amp, double lost, double vnodes, int64_t id, size_t index) {
  return (ana_cost_key){round2(amp), round2(lost), isnan(vnodes) ? INFINITY : vnodes, id, index};
}

int ana_cost_compare(const void *x, const void *y) {
  const ana_cost_key *a = x, *b = y;
  int c = cmp_double_asc(a->amp, b->amp);
  if (!c) c = cmp_double_asc(a->lost, b->lost);
  if (!c) c = cmp_double_asc(a->vnodes, b->vnodes);
  if (!c) c = (a->id > b->id) - (a->id < b->id);
  return c;
}


/* ------------------------------------------------------------------------ */
/* Tunable vs scenario axes                                                  */
/* ------------------------------------------------------------------------ */

static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Whether points i and j agree on every axis of the role. */
static int same_part(const fmt_results *r, size_t i, size_t j, int scenario) {
  for (size_t a = 0; a < r->n_axes; a++)
    if (fmt_axis_is_scenario(r, a) == scenario &&
        !same_value(r->values[i * r->n_axes + a], r->values[j * r->n_axes + a]))
      return 0;
  return 1;
}

void ana_split_free(ana_split *sp) {
  free(sp->cell);
  free(sp->tun_of);
  free(sp->scen_of);
  memset(sp, 0, sizeof *sp);
}

int ana_split_compute(ana_split *sp, const fmt_results *r) {
  memset(sp, 0, sizeof *sp);
  int any = 0;
  for (size_t a = 0; a < r->n_axes; a++) any |= fmt_axis_is_scenario(r, a);
  if (!any || r->n_points == 0) return 0;
  size_t n = r->n_points;
  size_t *tun_first = malloc(n * sizeof *tun_first), *scen_first = malloc(n * sizeof *scen_first);
  sp->tun_of = malloc(n * sizeof *sp->tun_of);
  sp->scen_of = malloc(n * sizeof *sp->scen_of);
  if (!tun_first || !scen_first || !sp->tun_of || !sp->scen_of) goto oom;
  /* Quadratic in the points, which are a grid of at most thousands. */
  for (size_t p = 0; p < n; p++) {
    size_t t = 0, c = 0;
    while (t < sp->n_tun && !same_part(r, p, tun_first[t], 0)) t++;
    if (t == sp->n_tun) tun_first[sp->n_tun++] = p;
    while (c < sp->n_scen && !same_part(r, p, scen_first[c], 1)) c++;
    if (c == sp->n_scen) scen_first[sp->n_scen++] = p;
    sp->tun_of[p] = t;
    sp->scen_of[p] = c;
  }
  sp->cell = malloc(sp->n_tun * sp->n_scen * sizeof *sp->cell);
  if (!sp->cell) goto oom;
  for (size_t i = 0; i < sp->n_tun * sp->n_scen; i++) sp->cell[i] = -1;
  for (size_t p = 0; p < n; p++) sp->cell[sp->tun_of[p] * sp->n_scen + sp->scen_of[p]] = (long)p;
  free(tun_first);
  free(scen_first);
  return 0;
oom:
  free(tun_first);
  free(scen_first);
  ana_split_free(sp);
  return -1;
}


/* ---- service level terms ---- */

int ana_slo_parse(const char *text, eng_slo *out, char *err, size_t errlen) {
  char buf[512];
  size_t n = 0;
  memset(out, 0, sizeof *out);
  for (const char *p = text; *p; p++) {
    if (*p == ' ' || *p == '\t') continue;
    if (n + 1 >= sizeof buf) {
      snprintf(err, errlen, "--slo: too long");
      return -1;
    }
    buf[n++] = *p;
  }
  buf[n] = 0;
  if (!n) {
    snprintf(err, errlen, "--slo: empty; expected terms such as \"p99<=200ms,errors<=0.1%%\"");
    return -1;
  }
  char *save = NULL;
  for (char *term = strtok_r(buf, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
    if (out->n == ENG_MAX_SLO_TERMS) {
      snprintf(err, errlen, "--slo: more than %d terms", ENG_MAX_SLO_TERMS);
      return -1;
    }
    char *op = strstr(term, "<=");
    if (!op) {
      snprintf(err, errlen,
               "--slo: term '%.40s': expected NAME<=LIMIT, e.g. p99<=200ms or errors<=0.1%%",
               term);
      return -1;
    }
    *op = 0;
    const char *name = term, *val = op + 2;
    eng_slo_term t = {0};
    char *end = NULL;
    if (!strcmp(name, "errors")) {
      t.kind = ENG_SLO_ERRORS;
      t.limit = strtod(val, &end);
      int pct = end && *end == '%';
      if (end == val || !isfinite(t.limit) || t.limit < 0 || (pct ? end[1] : *end) ||
          (pct ? t.limit > 100 : t.limit > 1)) {
        snprintf(err, errlen,
                 "--slo: errors<=%.40s: expected a percentage (0.1%%) or a fraction (0.001)", val);
        return -1;
      }
      if (pct) t.limit /= 100;
    } else if (name[0] == 'p' && name[1]) {
      t.kind = ENG_SLO_LATENCY;
      double q = strtod(name + 1, &end);
      if (end == name + 1 || *end || !(q > 0 && q < 100) || name[1] == '+' || name[1] == '-') {
        snprintf(err, errlen,
                 "--slo: '%.40s': a latency quantile is p50, p90, p99 or p99.9",
                 name);
        return -1;
      }
      t.quantile = q / 100;
      for (int k = 0; k < ENG_USER_QUANTILES; k++) /* the stored ones, exactly */
        if (fabs(t.quantile - eng_user_quantiles[k]) < 1e-9) t.quantile = eng_user_quantiles[k];
      t.limit = strtod(val, &end);
      double scale = !end || end == val ? 0
                     : !strcmp(end, "ms")  ? 1
                     : !strcmp(end, "us")  ? 1e-3
                     : !strcmp(end, "s")   ? 1e3
                                           : 0;
      if (!scale || !isfinite(t.limit) || t.limit < 0) {
        snprintf(err, errlen, "--slo: %s<=%.40s: expected a time with a unit: 200ms, 1.5s, 800us",
                 name, val);
        return -1;
      }
      t.limit *= scale;
    } else {
      snprintf(err, errlen, "--slo: unknown term '%.40s': terms are p50, p90, p99, p99.9 (latency "
               "quantiles) and errors", name);
      return -1;
    }
    for (int k = 0; k < out->n; k++)
      if (out->t[k].kind == t.kind && out->t[k].quantile == t.quantile) {
        snprintf(err, errlen, "--slo: '%s' given twice", name);
        return -1;
      }
    out->t[out->n++] = t;
  }
  char why[256];
  if (eng_slo_check(out, why, sizeof why)) {
    snprintf(err, errlen, "--slo: %s", why);
    return -1;
  }
  return 0;
}

void ana_slo_format(const eng_slo *slo, char *buf, size_t len) {
  size_t used = 0;
  if (len) buf[0] = 0;
  for (int k = 0; k < slo->n; k++) {
    const eng_slo_term *t = &slo->t[k];
    size_t room = used < len ? len - used : 0;
    if (t->kind == ENG_SLO_ERRORS)
      used += (size_t)snprintf(buf + used, room, "%serrors<=%.10g%%", k ? "," : "",
                               100 * t->limit);
    else
      used += (size_t)snprintf(buf + used, room, "%sp%.10g<=%.10gms", k ? "," : "",
                               100 * t->quantile, t->limit);
  }
}

int ana_slo_same(const eng_slo *a, const eng_slo *b) {
  char x[512], y[512];
  ana_slo_format(a, x, sizeof x);
  ana_slo_format(b, y, sizeof y);
  return !strcmp(x, y);
}

void ana_user_slo_note(FILE *f, const fmt_results *r, double slo_ms) {
  if (!r->user_slo.n) return;
  char terms[256];
  ana_slo_format(&r->user_slo, terms, sizeof terms);
  fprintf(f,
          "SLO on what users see: a run passes when %s holds again, in every latency window "
          "for the hold window, within %.0f ms of clearance (judged from the stored series).\n",
          terms, slo_ms);
  if (r->n_unjudged)
    fprintf(f, "%zu of refine's confirmation runs store no /ticks rows (their summary row "
               "alone), so these terms cannot judge them: they are left out.\n",
            r->n_unjudged);
}
