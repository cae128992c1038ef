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

/* The rule fed tick by tick, so a run need not keep its traces: the same
 * answer, to the bit, as eng_recovery_assess on the whole traces (which is
 * this stream fed from them). Its buffers (the collapse window, the hold
 * window, the baseline queue histogram and the queue over the drain window
 * of a run with faults) are sized by the parameters and kept for the next
 * run (the histogram alone may grow, with the deepest baseline queue). */
typedef struct eng_recovery_stream {
  eng_recovery_params p;
  int32_t t;                      /* the next tick */
  int32_t W, hb, watch_end, late_a, prev_a, drain_a, hold;
  int64_t base_q, base_good, base_n;
  int32_t *hist;                  /* baseline queue depths, clamped at 2^20 */
  size_t hist_len, hist_cap;
  int32_t hist_max, peak;
  int64_t good_during, good_after, late_q, prev_q;
  int64_t h_nw, h_good, h_att, h_waste;          /* health window */
  int64_t l_nw, l_good, l_att, l_waste;          /* late window */
  int64_t w_nw, w_good, w_att;                   /* sliding collapse window */
  int32_t *ring;                  /* 4 x W: the collapse window's counted ticks */
  size_t ring_cap;
  int32_t collapse_at, return_at; /* window starts; -1 until found */
  int32_t ring_end;               /* the window moves at ticks below it (ring_on) */
  double threshold, need, gb;     /* known once the baseline ends */
  int baseline_done;
  int32_t *hring;                 /* the hold window's successes */
  size_t hring_cap;
  int64_t r_good;
  int32_t r_run, recovered_start; /* -1 until recovered */
  int32_t rhead, rlen;            /* the collapse window's FIFO of counted ticks */
  int w_fresh;                    /* its sums were checked, and answered no change */
  int32_t hpos;                   /* (t - clear) % hold from clear */
  int32_t *dq;                    /* queue over [drain_a, ticks) with faults */
  size_t dq_cap;
} eng_recovery_stream;

/* Starts a run under p: 0, or -1 when its buffers cannot be had. */
int eng_recovery_begin(eng_recovery_stream *s, const eng_recovery_params *p);
/* What eng_recovery_begin takes under p, in bytes (eng_run_memory). */
double eng_recovery_bytes(const eng_recovery_params *p);
/* Tick s->t's values. */
void eng_recovery_tick(eng_recovery_stream *s, int32_t queue, int32_t successes,
                       int32_t new_requests, int32_t attempts, int32_t wasted);
/* n ticks in a row with every counter 0 and the queue at queue. */
void eng_recovery_idle(eng_recovery_stream *s, int32_t queue, int32_t n);
/* After the last tick: the figures of eng_recovery_assess into out. */
void eng_recovery_end(eng_recovery_stream *s, eng_summary *out);
void eng_recovery_free(eng_recovery_stream *s);

/* User recovery judged on one value per latency window: rows[k][w] is
 * window w's value of user-view metric k (eng_user_recovery_ms reads the
 * same values off per-tick rows). */
double eng_user_recovery_windows(const eng_slo *slo, const int32_t *const *rows, int32_t ticks,
                                 int32_t window_ticks, int32_t clear, int32_t hold_ticks,
                                 double tick_ms);

/* Fills outcome, passed_slo, recovery_ms, baseline_queue, recovery_threshold,
 * peak_queue, goodput_baseline/during/after, late_queue_trend and the
 * figures the rule decides on (baseline health, collapse and return times,
 * late goodput, amplification and wasted share, drain projection) of out. */
void eng_recovery_assess(const eng_recovery_traces *tr, const eng_recovery_params *p,
                         eng_summary *out);

#endif
