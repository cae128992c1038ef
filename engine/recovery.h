/*
 * recovery.h — the outcome rule: when a run counts as recovered,
 * slow, metastable or collapsed, computed from its per-tick traces.
 * Internal to the engine; a pure function so it can be tested on synthetic
 * traces.
 */
#ifndef STORMSWEEP_RECOVERY_H
#define STORMSWEEP_RECOVERY_H

#include <stdint.h>

#include "eng.h"

/* The per-tick traces the rule reads, each of length ticks. */
typedef struct eng_recovery_traces {
  const int32_t *queue;        /* total queue depth */
  const int32_t *successes;    /* goodput */
  const int32_t *new_requests; /* offered load */
  const int32_t *attempts;     /* first tries + retries */
  const int32_t *wasted;       /* completions of abandoned attempts */
} eng_recovery_traces;

typedef struct eng_recovery_params {
  int32_t ticks;                 /* length of the traces */
  int32_t base_begin, base_end;  /* baseline window [begin, end) */
  int32_t warmup;                /* health is checked over [warmup, first fault or horizon) */
  int32_t fault_start, clear;    /* first fault tick and fault clearance tick */
  int32_t hold;                  /* ticks the queue and goodput must stay back */
  int32_t trend;                 /* length of the late window */
  int32_t collapse_window;       /* length of the sliding collapse-detection window */
  double tolerance;              /* threshold = (1 + tolerance) * baseline p99 + 1 ... */
  double queue_cap;              /* ... but at most this (half what the queues hold; inf) */
  double recovery_goodput;       /* hold-window goodput >= this x baseline goodput */
  double metastable_goodput;     /* goodput below this share counts as "far below" */
  double health_goodput;         /* healthy: successes >= this x new requests */
  double health_amplification;   /* healthy: attempts <= this x new requests */
  double wasted_share;           /* wasted / (wasted + successes) above this sustains */
  double drain_bound_ms;         /* projected drain longer than this: not draining */
  double capacity;               /* attempts per tick the cluster serves; 0 = unknown */
  double tick_ms, slo_ms;
  int has_fault;
} eng_recovery_params;

/* Fills outcome, passed_slo, recovery_ms, baseline_queue, recovery_threshold,
 * peak_queue, goodput_baseline/during/after, late_queue_trend and the
 * figures the rule decides on (baseline health, collapse and return times,
 * late goodput, amplification and wasted share, drain projection) of out. */
void eng_recovery_assess(const eng_recovery_traces *tr, const eng_recovery_params *p,
                         eng_summary *out);

#endif
