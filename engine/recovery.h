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
/* ---- the per-tick step, inline: the engine's loop calls it on every tick
 * that has events, and a call's prologue cost as much as a third of it ---- */

/* The once-per-run and baseline-only parts it calls (recovery.c). */
void eng__recovery_baseline_end(eng_recovery_stream *s);
void eng__recovery_hist_add(eng_recovery_stream *s, int32_t q, int32_t n);

/* Collapse needs retries feeding the load: wasted work alone cannot sustain
 * itself when the offered load fits (and when it does not, the baseline is
 * unhealthy anyway). Without this, one long queue excursion of a healthy
 * M/M/1 at rho = 0.8 with no retries read as a collapse (README). */
static inline int eng__collapsed_window(int64_t nw, int64_t good, int64_t att,
                                        const eng_recovery_params *p) {
  return nw > 0 && (double)good < p->metastable_goodput * (double)nw &&
         (double)att > p->health_amplification * (double)nw;
}

static inline int eng__healthy_window(int64_t nw, int64_t good, int64_t att,
                                      const eng_recovery_params *p) {
  return nw > 0 && (double)good >= p->health_goodput * (double)nw &&
         (double)att <= p->health_amplification * (double)nw;
}

/* Whether tick t still moves the collapse window; once not, never again
 * (no collapse by the first fault: no window after it matters). */
static inline int eng__ring_on(const eng_recovery_stream *s, int32_t t) {
  /* = return_at < 0 && W <= watch_end && (collapse_at >= 0 || t < watch_end),
   * kept as a bound that win_check moves */
  return t < s->ring_end;
}

/* The collapse window keeps only its ticks with something counted, oldest
 * first, (tick, new, successes, attempts) each: a FIFO of at most W, so a
 * run of empty ticks moves it without a step per tick. Entry i's slot: */
static inline int32_t eng__win_slot(const eng_recovery_stream *s, int32_t i) {
  int32_t k = s->rhead + i;
  return k >= s->W ? k - s->W : k;
}

/* The window [t - W + 1, t]: the first collapsed one by the first fault,
 * then the first healthy one that starts a window's length after it. */
static inline __attribute__((always_inline)) void eng__win_check(eng_recovery_stream *s,
                                                                 int32_t t) {
  const eng_recovery_params *p = &s->p;
  int32_t a = t - s->W + 1;
  if (a < 0) return;
  s->w_fresh = 1;
  if (s->collapse_at < 0) {
    if (t < s->watch_end && eng__collapsed_window(s->w_nw, s->w_good, s->w_att, p))
      s->collapse_at = a, s->w_fresh = 0, s->ring_end = INT32_MAX;
  } else if (a >= s->collapse_at + s->W && eng__healthy_window(s->w_nw, s->w_good, s->w_att, p)) {
    s->return_at = a;
    s->ring_end = 0;
  }
}

/* Tick s->t's values. */
static inline void eng_recovery_tick(eng_recovery_stream *s, int32_t q, int32_t good, int32_t nw,
                                     int32_t att, int32_t waste) {
  const eng_recovery_params *p = &s->p;
  const int32_t t = s->t++;
  if (t == p->base_end) eng__recovery_baseline_end(s);
  if (t >= p->base_begin && t < p->base_end) {
    s->base_q += q;
    s->base_good += good;
    eng__recovery_hist_add(s, q, 1);
  }
  if (q > s->peak) s->peak = q;
  if (t >= p->fault_start && t < p->clear) s->good_during += good;
  if (t >= p->clear) s->good_after += good;
  if (t >= s->hb && t < s->watch_end) {
    s->h_nw += nw;
    s->h_good += good;
    s->h_att += att;
    s->h_waste += waste;
  }
  if (t >= s->late_a) {
    s->l_nw += nw;
    s->l_good += good;
    s->l_att += att;
    s->l_waste += waste;
    s->late_q += q;
  } else if (t >= s->prev_a) {
    s->prev_q += q;
  }

  /* 2. the sliding collapse window [t - W + 1, t] and, after a collapse,
   * the first healthy window that starts a window's length later */
  /* (no collapse by the first fault: no window after it matters) */
  if (eng__ring_on(s, t)) {
    /* Only tick t - W can leave now (every tick before it has), and
     * whether it does is a coin toss in a sparse run: no branch on it. */
    if (s->rlen) {
      const int32_t *e = s->ring + 4 * (size_t)s->rhead;
      int32_t go = e[0] == t - s->W, m = -go;
      s->w_nw -= e[1] & m;
      s->w_good -= e[2] & m;
      s->w_att -= e[3] & m;
      s->rhead = go ? eng__win_slot(s, 1) : s->rhead;
      s->rlen -= go;
      s->w_fresh &= !go;
    }
    if (nw | good | att) {
      int32_t *e = s->ring + 4 * (size_t)eng__win_slot(s, s->rlen++);
      e[0] = t, e[1] = nw, e[2] = good, e[3] = att;
      s->w_fresh = 0;
      s->w_nw += nw;
      s->w_good += good;
      s->w_att += att;
    }
    eng__win_check(s, t);
  }

  if (!p->has_fault || t < p->clear) return;
  /* (t - clear) % hold, kept as a counter: a division per tick would cost
   * more than the rest of the tick */
  const int32_t hpos = s->hpos;
  if (++s->hpos == s->hold) s->hpos = 0;
  /* 3. queue back and goodput back, both for `hold` ticks */
  if (s->recovered_start < 0 && s->baseline_done) {
    int32_t *slot = s->hring + hpos;
    s->r_good += good;
    if (t - s->hold >= p->clear) s->r_good -= *slot;
    *slot = good;
    s->r_run = q <= s->threshold ? s->r_run + 1 : 0;
    if (s->r_run >= s->hold && (double)s->r_good >= s->need) s->recovered_start = t - s->hold + 1;
  }
  if (t >= s->drain_a) s->dq[t - s->drain_a] = q;
}

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
