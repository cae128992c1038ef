/*
 * refine.h — the refine procedure (refine.c): spends runs only where the
 * decision is open, appending them to the result file, and records its state
 * in the file's /refine group (fmt_store.h): a record, which every reader
 * checks against the runs (refine_eval.h). The decisions themselves are
 * refine_plan.h's.
 */
#ifndef STORMSWEEP_REFINE_H
#define STORMSWEEP_REFINE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "eng.h"
#include "fmt_store.h"
#include "seqtest.h"

#define ANA_REFINE_MAX_RUNS 50000 /* default budget of new runs, over all sessions */

typedef struct ana_refine_opts ana_refine_opts;
struct ana_refine_opts {
  const char *path;
  ana_seq_design d;  /* the targets and error levels */
  int given_pass, given_meta, given_alpha, given_k; /* set by the user: checked against the
                                                       file's design, not taken from it */
  eng_slo user_slo;  /* SLO terms on what users see the runs are judged by (none: the
                        queue-recovery check); a refined file keeps its design's */
  int given_user_slo;
  int keep_ticks;    /* 1: confirmation runs store the file's /ticks rows too (refine
                        --ticks); 0: their summary row alone, unless SLO terms judge them
                        (user_slo.c reads their user-view rows) */
  int64_t max_runs;
  int k;             /* candidates confirmed per round */
  int threads, quiet;
  const volatile sig_atomic_t *stop; /* raised: finish the runs in flight, then stop */
  void (*say)(void *user, const char *line); /* messages and progress, one line each */
  void *user;
  FILE *out;         /* the decision */
};

/* The defaults: targets 0.99 / 0.01, alpha 0.05, K candidates per round. */
void ana_refine_opts_init(ana_refine_opts *o);
/* Refines o->path to a decision (or the budget). Returns 0 decided or
 * budget spent, 1 a failure while working, 2 a file that cannot be refined
 * (o->say says why); *stopped is 1 when the stop flag ended it. */
int ana_refine_file(ana_refine_opts *o, int *stopped);

#endif
