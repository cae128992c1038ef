/*
 * decision.h — the vocabulary every decision of stormsweep is made in, owned
 * here once: which runs count as bad and which pass, the default targets,
 * the cost order among settings that meet them, and the split of a grid
 * into the settings a user chooses (tunable axes) and the world they must
 * hold in (scenario axes). analyze, recommend, refine, verify, boundary
 * and report all take these from here, so a word means the same in each.
 */
#ifndef STORMSWEEP_DECISION_H
#define STORMSWEEP_DECISION_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eng.h"
#include "fmt_results.h"

/* ---- targets ---- */

#define ANA_DEFAULT_MIN_PASS 0.99 /* P(pass the recovery SLO) at least this */
#define ANA_DEFAULT_MAX_META 0.01 /* P(bad) (ana_outcome_is_bad) at most this */
#define ANA_DEFAULT_SLO_MS 1500.0 /* when the file does not say (the seed study's) */

/* Service level terms on what users see (eng_slo), from text: terms joined
 * by commas, each "pNN<=LIMIT" (a latency quantile: p50, p99, p99.9, ...,
 * the limit with a unit us, ms or s) or "errors<=LIMIT" (the error rate: a
 * percentage "0.1%" or a fraction "0.001"); spaces are ignored, each term
 * once. Returns 0, or -1 with a message naming the term. */
int ana_slo_parse(const char *text, eng_slo *out, char *err, size_t errlen);
/* The terms as ana_slo_parse reads them back, e.g. "p99<=200ms,errors<=0.1%". */
void ana_slo_format(const eng_slo *slo, char *buf, size_t len);
/* Whether two sets of terms say the same (as text: the same terms in the
 * same order; none and none are the same). */
int ana_slo_same(const eng_slo *a, const eng_slo *b);
/* Under --slo terms, one line saying what "pass" means (nothing without). */
void ana_user_slo_note(FILE *f, const fmt_results *r, double slo_ms);

/* ---- runs ---- */

/* A bad run: it ended metastable, collapsed or undetermined — whatever it
 * is, it is not a run that recovered or drains by itself. The one set
 * behind P(bad) wherever it is shown (analyze's table, effects, CSV and
 * JSON, the report's heat maps and effect plots) and behind the
 * P(bad) target (--max-metastable) of recommend, refine and verify: a point whose runs
 * all collapse has P(bad) = 1, never 0. An undetermined run (too little
 * time after the faults to tell) never passes and counts as bad. */
static inline int ana_outcome_is_bad(int outcome) { return outcome >= ENG_OUTCOME_METASTABLE; }
/* What "bad" means, for the notes under tables and the captions of plots. */
#define ANA_BAD_MEANING "bad = metastable, collapsed or undetermined"
/* A run that passed: it recovered within slo_ms after the last fault; under
 * SLO terms on what users see (slo->n > 0), every term held again within
 * slo_ms (its user recovery time; the engine's rule, eng_user_slo_passes). */
static inline int ana_run_passes(const eng_slo *slo, int outcome, double recovery_ms,
                                 double user_recovery_ms, double slo_ms) {
  if (slo && slo->n) return eng_user_slo_passes(outcome, user_recovery_ms, slo_ms);
  return outcome == ENG_OUTCOME_RECOVERED && recovery_ms == recovery_ms && recovery_ms <= slo_ms;
}
/* The bad runs of a tally by outcome (by[ENG_OUTCOME_*]), each named by
 * its own class: "2 metastable, 1
 * undetermined". They count alike, but an undetermined or collapsed run is
 * never called metastable in what a user reads. "0 metastable" when there
 * is none. */
void ana_outcome_bad_describe(const int64_t by[ENG_OUTCOME_COUNT], char *buf, size_t len);

/* ---- counts ---- */

/* The finished runs of one grid point by stage (fmt_run.stage): the one
 * count of a point's runs that analyze, report, refine and recommend print.
 * screening = the sweep's own replicates (and sequential screening's second
 * stage), fresh = appended by refine. */
static inline int ana_run_is_screening(const fmt_results *r, const fmt_run *run) {
  int64_t screening = fmt_screening_replicates(r->replicates, r->screen_up_to);
  return run->stage == FMT_STAGE_SCREENING && (r->replicates <= 0 || run->replicate < screening);
}
typedef struct ana_point_runs {
  int64_t total, screening, fresh;
} ana_point_runs;
ana_point_runs ana_point_runs_of(const fmt_results *r, size_t point_index);

/* "162 fresh runs", or "162 of its 485 fresh runs" when the point's test
 * stopped (proven or refuted) before using every fresh run of the file. */
void ana_tested_runs_text(const fmt_results *r, size_t point_index, int64_t tested, char *buf,
                          size_t len);

/* The counts of a refined file's evaluation, the one source of "rank i of
 * N candidates" and "N candidates of M points" in refine, recommend,
 * analyze and report. A candidate is a tunable setting; with scenario axes
 * it is tested at each of its scenario values, so it covers several points. */
struct ana_rf_eval;
typedef struct ana_refine_counts {
  size_t candidates;       /* ranked candidate settings: rank i of candidates */
  size_t candidate_points; /* grid points under test (= candidates without scenario axes) */
  size_t points;           /* grid points screened */
  int64_t screening;       /* screening replicates per point */
  int64_t fresh;           /* fresh runs refine appended */
  size_t rounds;           /* refine rounds the file records */
} ana_refine_counts;
ana_refine_counts ana_refine_counts_of(const struct ana_rf_eval *x, const fmt_results *r);
/* "6 candidates of 24 points" or "6 candidates (12 points: each at its
 * scenario values) of 24 points". */
void ana_refine_counts_text(const ana_refine_counts *c, char *buf, size_t len);

/* ---- cost ---- */

/* The cost order of a recommendation, shared by recommend and refine (its
 * candidates' ranks): mean retry amplification, then the most goodput during
 * the fault (both rounded to 0.01, so noise does not reorder near-ties),
 * then vnodes (ring memory), then the point id; NaN sorts last. */
typedef struct ana_cost_key {
  double amp, lost, vnodes;
  int64_t id;
  size_t index; /* the caller's: not compared */
} ana_cost_key;
ana_cost_key ana_cost_key_make(double amp, double lost, double vnodes, int64_t id, size_t index);
int ana_cost_compare(const void *x, const void *y); /* qsort comparator on ana_cost_key */

/* The grid split into tunable combinations (the values of the tunable
 * axes) and scenario combinations (the values of the scenario axes), each in
 * order of first appearance among the points. */
typedef struct ana_split {
  size_t n_tun, n_scen;
  long *cell;        /* n_tun x n_scen: point index, -1 when the grid lacks it */
  size_t *tun_of;    /* per point index */
  size_t *scen_of;   /* per point index */
} ana_split;

/* Fills sp; n_tun = n_scen = 0 (and no allocation) when r has no scenario
 * axis. Returns 0, or -1 when out of memory. */
int ana_split_compute(ana_split *sp, const fmt_results *r);
void ana_split_free(ana_split *sp);

#endif
