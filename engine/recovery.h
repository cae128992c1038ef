/*
 * recovery.h — the outcome rule (SPEC §2): when a run counts as recovered,
 * slow or metastable, computed from its per-tick queue depth and goodput.
 * Internal to the engine; a pure function so it can be tested on synthetic
 * traces.
 */
#ifndef STORMSWEEP_RECOVERY_H
#define STORMSWEEP_RECOVERY_H

#include <stdint.h>

#include "eng.h"

typedef struct eng_recovery_params {
  int32_t ticks;                 /* length of the traces */
  int32_t base_begin, base_end;  /* baseline window [begin, end) */
  int32_t fault_start, clear;    /* first fault tick and fault clearance tick */
  int32_t hold;                  /* ticks the queue must stay within tolerance */
  int32_t trend;                 /* length of each late window */
  double tolerance;              /* threshold = (1 + tolerance) * baseline p99 + 1 */
  double shrink_min;             /* late < (1 - shrink_min) * previous: shrinking */
  double metastable_goodput;     /* late goodput / baseline below this: metastable */
  double tick_ms, slo_ms;
  int has_fault;
} eng_recovery_params;

/* Fills outcome, passed_slo, recovery_ms, baseline_queue, recovery_threshold,
 * peak_queue, goodput_baseline/during/after and late_queue_trend of out. */
void eng_recovery_assess(const int32_t *queue, const int32_t *successes,
                         const eng_recovery_params *p, eng_summary *out);

#endif
