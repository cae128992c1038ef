/*
 * refine_eval.h — the decision of a refined file, recomputed: its screening
 * and fresh runs through refine_plan.h under a design. refine evaluates
 * with it before every round; recommend, analyze and report take every
 * verdict of a refined file from it, never from what /refine stores.
 *
 * What /refine stores (fmt_store.h) is only a record of refine's last
 * evaluation: the design is used (it is the question asked), every claim —
 * status, decided and closest point, candidates with their tests' states,
 * counts and LLRs, runs appended — is checked against the same evaluation
 * of the rows the file held then, and a disagreement is damage. A refine
 * that was stopped leaves rows newer than its record: they are evaluated for
 * the verdict, and the record is checked against the rows before them.
 */
#ifndef STORMSWEEP_REFINE_EVAL_H
#define STORMSWEEP_REFINE_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "eng.h"
#include "fmt_results.h"
#include "fmt_store.h"
#include "refine_plan.h"

/* Runs of one point by what became of them, for what is printed: the
 * tests count bad runs (decision.h), a user reads each class by its name. */
typedef struct ana_rf_tally {
  int64_t n, pass;                /* runs; those that passed */
  int64_t by[ENG_OUTCOME_COUNT];  /* by outcome */
} ana_rf_tally;

/* "3 not passing, 1 metastable, 2 undetermined" ("0 not passing, 0
 * metastable" for a clean tally). */
void ana_rf_tally_describe(const ana_rf_tally *t, char *buf, size_t len);

/* One evaluation. Arrays per point are indexed like r->points. */
typedef struct ana_rf_eval {
  ana_seq_design d;    /* the design it was made under (checked) */
  int64_t r0;          /* screening replicates (stage 1 under sequential screening) */
  int64_t r_fresh;     /* the first fresh replicate: r0, or the sweep's screen_up_to */
  int64_t *screen_next; /* sequential screening: per point, the next stage-2 replicate
                           (r_fresh: it has them all), -1 when stage 1 closed the point;
                           NULL when screening is fixed */
  size_t screen_open;  /* points stage 1 left open (given stage 2) */
  int64_t screen_missing; /* stage-2 runs still to append: while > 0 there are no
                             candidates yet and the decision is open */
  int64_t screen_added;   /* stage-2 runs in the file (counted in appended) */
  ana_rp rp;           /* the candidates in rank order, each test fed its fresh runs */
  ana_rp_point *pts;   /* screening summary */
  ana_rf_tally *screen; /* screening runs */
  ana_rf_tally *fresh;  /* fresh runs fed to the point's test */
  int64_t *next_rep;   /* the next replicate to append */
  long *cand_of;       /* candidate index, or -1 */
  int64_t *batch;      /* per candidate: new replicates for the next round */
  ana_rp_step st;      /* the decision */
  int64_t appended;    /* rows evaluated beyond the sweep's own (run or not) */
} ana_rf_eval;

/* Evaluates r's rows below row_limit (all rows when row_limit < 0) under d
 * with k candidates per round. Returns 0; -2 with a message naming the file
 * when a point lacks some of its r0 screening runs (the sweep is not
 * complete); -1 with a message for a bad design or no memory. */
int ana_rf_evaluate(ana_rf_eval *e, const fmt_results *r, const ana_seq_design *d, int k,
                    int64_t r0, int64_t row_limit, char *err, size_t errlen);
void ana_rf_eval_free(ana_rf_eval *e);

/* A refined file's verdict: the stored design and the evaluation of every
 * finished run under it. */
typedef struct ana_refined {
  fmt_refine_design design; /* as stored, checked to be a valid design */
  eng_slo user_slo;         /* its user_slo terms, parsed (none: the queue check) */
  ana_rf_eval now;          /* every finished run: what is printed */
  int interrupted;          /* refine stopped before evaluating rows it appended */
  int64_t pending;          /* rows appended and not run yet */
} ana_refined;

/* Loads r's /refine and recomputes its verdict, with the runs judged by
 * the design's SLO terms (from a second reading of the file when r was
 * judged by others). Returns 1 when r has no
 * refine evaluation (nothing allocated), 0 when v holds the verdict, -1
 * with a message naming the file and what disagrees when /refine is
 * damaged: unreadable, an invalid design, or a claim the runs do not give. */
int ana_refined_load(ana_refined *v, const fmt_results *r, char *err, size_t errlen);
/* The SLO terms on what users see that a refined file's proofs judged its
 * runs by (none: the queue-recovery check): 0, 1 when the file has no
 * refine evaluation, -1 with a message when /refine is damaged. Read before
 * the runs are judged, so a command asked no --slo judges them alike. */
int ana_refined_user_slo(const char *path, eng_slo *slo, char *err, size_t errlen);
void ana_refined_free(ana_refined *v);

#endif
