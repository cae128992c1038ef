/*
 * refine_plan.h — the decisions of `refine` as pure functions:
 * which grid points are candidates, in which order, at which error level
 * each is confirmed, when the procedure stops and what the next round runs.
 * No I/O: cmd_refine.c feeds it a result file's data, the tests feed it
 * synthetic Bernoulli grids with known truth.
 *
 * Screening (replicates 0..R0-1 of every point) chooses and orders the
 * candidates; it is never fed to a candidate's test. A point is a candidate
 * when none of its screening runs collapsed and its screening data do not
 * refute the targets: exact (Clopper–Pearson, two-sided 95%) upper bound of
 * P(pass) >= min_pass and lower bound of P(bad) <= max_meta.
 * Candidates are ranked by cost (mean amplification rounded to 0.01, then
 * the most goodput during the fault rounded to 0.01, then vnodes, then the
 * point id) — fixed once screening is done.
 *
 * Confirmation: the candidate of rank i (1-based) gets the SPRT of
 * seqtest.h at alpha_i = alpha / 2^i, fed its fresh replicates R0, R0+1, ...
 * in order. A false "proven" needs some candidate's test to err, so the
 * family-wise error is <= sum_i alpha_i < alpha however many are tried.
 *
 * Scenario axes (ana_rp_init_grouped): a candidate is a tunable setting
 * with one point per scenario value; each point gets its own SPRT at the
 * candidate's alpha_i and the candidate is proven when all are, refuted
 * when one is (intersection-union: still <= alpha_i per candidate).
 *
 * Sequential screening (a sweep's screen_up_to = R > R0): screening is in
 * two stages. Stage 1 is the sweep's own R0 replicates of every point; a
 * point then gets replicates R0 .. R-1 too (stage 2) only when stage 1
 * leaves it open (ana_rp_screen_more): neither clearly refuted (the exact
 * bounds above already screen it out) nor clearly a candidate (its point
 * estimates, passing share and metastable share, already meet the
 * targets) — and the ANA_SCREEN_TOP cheapest of the clear candidates
 * (cost order below, on their stage-1 runs), so the head of the ranking,
 * which decides what refine proves first, rests on all R runs as with
 * fixed screening. Its screening is then all R runs, else its R0. Fresh
 * replicates start at R for every point, so which runs screen a point is
 * a function of its stage-1 runs alone, fixed before any fresh run is
 * seen: confirmation stays on runs that chose nothing, and the family-wise
 * bound below holds as for fixed screening.
 *
 * Stopping: decided when the cheapest candidate not refuted is proven;
 * none qualifies when every candidate is refuted; otherwise the K cheapest
 * open candidates each get a batch of
 *     max(ANA_REFINE_MIN_BATCH, max over open targets ceil((upper - llr) / step_good))
 * new replicates — what a perfect point needs from where its test stands.
 */
#ifndef STORMSWEEP_REFINE_PLAN_H
#define STORMSWEEP_REFINE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "seqtest.h"

#define ANA_REFINE_K 4          /* candidates confirmed in parallel per round */
#define ANA_REFINE_MIN_BATCH 8  /* fewest new replicates a candidate gets per round */
#define ANA_SCREEN_TOP 8        /* sequential screening: clear candidates given stage 2 */

/* One grid point's screening summary. */
typedef struct ana_rp_point {
  int64_t id;
  int64_t n, n_pass, n_meta; /* screening runs; passing; metastable or collapsed */
  int64_t n_collapsed;       /* outcome code >= 3 among them */
  double amp, lost, vnodes;  /* cost keys: mean amplification, 1 - mean goodput_during,
                                vnodes (0 when not an axis); NaN sorts last */
} ana_rp_point;

/* Candidates of a grid, in rank order (index 0 = rank 1). */
typedef struct ana_rp_cand {
  size_t point;  /* index into the points */
  int rank;      /* 1-based cost rank of its group; the points of a group are adjacent */
  double alpha;  /* alpha / 2^rank */
  ana_seq seq;   /* its confirmation test; the caller feeds it */
} ana_rp_cand;

typedef struct ana_rp {
  ana_seq_design d; /* the family's design (alpha = the family-wise level) */
  size_t n_cand;
  ana_rp_cand *cand;
  size_t n_groups; /* ranks: candidate groups (= n_cand without groups) */
} ana_rp;

/* Builds the candidates from screening (design checked: 0 or -1 with err).
 * Each candidate's seq is initialised at its alpha_i, ready to be fed. */
int ana_rp_init(ana_rp *rp, const ana_rp_point *pts, size_t n, const ana_seq_design *d,
                char *err, unsigned long errlen);
/* The same with points grouped: group[i] (< n) names point i's group, a
 * tunable setting whose points are its scenario values (docs/decisions.md).
 * A group is one candidate: screened out when any of its points is, ranked
 * by its worst cost, each of its points tested at the group's alpha_i, and
 * proven only when all its points are (refuted when one is). group NULL:
 * every point its own group (ana_rp_init). */
int ana_rp_init_grouped(ana_rp *rp, const ana_rp_point *pts, size_t n, const size_t *group,
                        const ana_seq_design *d, char *err, unsigned long errlen);
void ana_rp_free(ana_rp *rp);

/* Whether point p's screening keeps it a candidate (for messages). */
int ana_rp_screen_ok(const ana_rp_point *p, const ana_seq_design *d);
/* Sequential screening: whether stage-1 screening p leaves the point open
 * (see above). */
int ana_rp_screen_more(const ana_rp_point *p, const ana_seq_design *d);
/* Sequential screening: more[i] = 1 for each point of the stage-1
 * summaries pts that gets stage 2 (left open, or among the ANA_SCREEN_TOP
 * cheapest clear candidates), else 0. */
void ana_rp_stage2(const ana_rp_point *pts, size_t n, const ana_seq_design *d,
                   unsigned char *more);

typedef enum ana_rp_status {
  ANA_RP_OPEN = 0,    /* more runs needed: see the batch */
  ANA_RP_PROVEN = 1,  /* cand[decided] is proven and every cheaper one refuted */
  ANA_RP_NONE = 2     /* every candidate refuted (or there are none) */
} ana_rp_status;

/* "open", "proven", "none": the word /refine's status records. */
const char *ana_rp_status_name(ana_rp_status s);

typedef struct ana_rp_step {
  ana_rp_status status;
  long decided;       /* candidate index when PROVEN (the first of its group), else -1 */
  long closest;       /* when NONE: the candidate whose test got furthest (-1: no candidate) */
  size_t n_open, n_proven, n_refuted;
  int64_t batch_total;
} ana_rp_step;

/* The decision from the candidates' tests as they stand; batch[i] (n_cand
 * entries, may be NULL) gets the new replicates candidate i runs next (0 for
 * all but the K cheapest open ones). */
ana_rp_step ana_rp_decide(const ana_rp *rp, int k, int64_t *batch);

/* Replicates a perfect point needs from where seq stands (>= 0). */
int64_t ana_rp_runs_to_go(const ana_seq *s);

#endif
