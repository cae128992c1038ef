/*
 * refine.h — `stormsweep refine` (cmd_refine.c): spends runs only where the
 * decision is open, appending them to the result file, and records its
 * state in the file's /refine group, which `recommend` and `report` read.
 *
 * /refine (created by the first refine of a file):
 *   attributes  the design: min_pass, max_meta, alpha, beta, ratio (float64),
 *               k (int32: candidates per round), r0 (int64: screening
 *               replicates); the state after the last evaluation: status
 *               ("proven", "none" or "open"), decided_point, decided_rank,
 *               closest_point (int64, -1 when none), n_candidates,
 *               runs_appended, rounds (int64)
 *   round_start int64 [rounds]: first row of /runs each round appended
 *               (written by the writer in the same commit as the rows)
 *   candidates  compound [n_candidates], in rank order: rank (int32, 1 =
 *               cheapest), point (int64), alpha (float64, alpha / 2^rank),
 *               state (int8: 0 open, 1 proven, 2 refuted), runs (int64:
 *               fresh runs fed to its test), not_passing, metastable (int64,
 *               among those), llr_pass, llr_meta (float64), screen_runs,
 *               screen_pass, screen_meta (int64), amplification, goodput_lost
 *               (float64: its cost keys, from screening)
 */
#ifndef STORMSWEEP_REFINE_H
#define STORMSWEEP_REFINE_H

#include <stddef.h>
#include <stdint.h>

#include "seqtest.h"

typedef struct ana_refine_cand {
  int32_t rank;
  int64_t point;
  double alpha;
  int8_t state;
  int64_t runs, not_passing, metastable;
  double llr_pass, llr_meta;
  int64_t screen_runs, screen_pass, screen_meta;
  double amplification, goodput_lost;
} ana_refine_cand;

typedef struct ana_refine_info {
  ana_seq_design d;
  int32_t k;
  int64_t r0;
  char status[16];       /* "proven", "none", "open" */
  int64_t decided_point, decided_rank, closest_point;
  int64_t runs_appended, rounds;
  size_t n_cand;
  ana_refine_cand *cand;
} ana_refine_info;

/* Reads /refine. Returns 0, 1 when the file has none, -1 with err. */
int ana_refine_info_read(const char *path, ana_refine_info *ri, char *err, size_t errlen);
void ana_refine_info_free(ana_refine_info *ri);
/* The candidate of point id, or NULL. */
const ana_refine_cand *ana_refine_find(const ana_refine_info *ri, int64_t point);

#endif
