/*
 * recovery.c — recovery time and outcome of a run (docs/model.md "The
 * outcome rule", which states the same rule in prose; keep the two in step).
 *
 * Four questions, in this order:
 *  1. Was the run ever healthy? Over [warmup, first fault) — the whole run
 *     when there is no fault — goodput must be at least health_goodput x new
 *     requests and attempts at most health_amplification x new requests.
 *  2. Did it collapse by itself? A window of collapse_window ticks slides
 *     from tick 0 (an empty cluster) up to the first fault; the first window
 *     whose goodput is below metastable_goodput x its new requests while
 *     retries feed the load (amplification above health_amplification)
 *     marks the collapse, timed at the window's midpoint: for a sharp switch that is the
 *     switch itself. No to 1 or yes to 2 is `collapsed`: a fault cannot be
 *     blamed for a state the system was already in.
 *  3. Did it recover? The first tick after clearance from which, for `hold`
 *     ticks, the queue stays <= threshold = min((1 + tolerance) x baseline q99
 *     + 1, queue_cap) *and* goodput over those ticks is at least
 *     recovery_goodput x baseline goodput. A queue that empties because
 *     nothing gets through (open breakers) is not a service that works.
 *  4. If not: metastable only when, over the late window, goodput stays
 *     below metastable_goodput x baseline, a sustaining effect holds, and
 *     the backlog is not draining. Draining means both: the attempts offered
 *     over the late window are fewer than the cluster serves (late_load < 1;
 *     skipped when the capacity is unknown), and a least-squares line
 *     through the queue over the second half of the time after clearance
 *     (at least trend ticks) reaches the threshold within drain_bound_ms.
 *     The slope alone is fooled by the settling after clearance: a backlog
 *     falling from its peak to a plateau that retries then hold for good
 *     (seed study, budget_ratio 0.5) projects a drain of 20-100 s; the flow
 *     count is not. Otherwise slow.
 *     With less than hold + trend ticks after clearance there is no late
 *     window to judge: `undetermined`, never a guess. So is a run whose
 *     first fault starts at tick 0: it has no baseline.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recovery.h"

static double mean_of(int64_t sum, int32_t a, int32_t b) {
  if (b <= a) return NAN;
  return (double)sum / (b - a);
}

/* Sums of the four rate traces over one window. */
typedef struct wsums {
  int64_t nw, good, att, waste;
} wsums;

/* Retries or abandoned work keep the load up by themselves. */
static int sustaining(const wsums *s, const eng_recovery_params *p) {
  if ((double)s->att > p->health_amplification * (double)s->nw) return 1;
  int64_t done = s->waste + s->good;
  return done > 0 && (double)s->waste > p->wasted_share * (double)done;
}

/* Projected ticks from the end of [a, b) until a least-squares line through
 * the queue (q[0] is tick a) reaches thr: 0 when already there, inf when not
 * shrinking. */
static double drain_ticks(const int32_t *q, int32_t a, int32_t b, double thr) {
  int32_t n = b - a;
  if (n < 2) return INFINITY;
  int64_t sum = 0;
  for (int32_t t = a; t < b; t++) sum += q[t - a];
  double tm = (a + b - 1) / 2.0, qm = mean_of(sum, a, b), sxy = 0, sxx = 0;
  for (int32_t t = a; t < b; t++) {
    sxy += (t - tm) * (q[t - a] - qm);
    sxx += (t - tm) * (t - tm);
  }
  double slope = sxy / sxx;
  double q_end = qm + slope * (b - 1 - tm);
  if (q_end <= thr) return 0;
  return slope < 0 ? (q_end - thr) / -slope : INFINITY;
}

static int grow(int32_t **buf, size_t *cap, size_t n) {
  if (n <= *cap) return 0;
  int32_t *b = realloc(*buf, n * sizeof *b);
  if (!b) return -1;
  *buf = b;
  *cap = n;
  return 0;
}

enum { HIST_CLAMP = 1 << 20, HIST_START = 4096 };

/* The stream's windows under p: the collapse window's ticks, the hold's
 * and the drain window's start (begin and the memory estimate agree). */
static void stream_spans(const eng_recovery_params *p, int32_t *W, int32_t *hold,
                         int32_t *drain_a) {
  int32_t T = p->ticks;
  *W = p->collapse_window > 0 ? p->collapse_window : 1;
  *hold = p->hold > 0 ? p->hold : 1;
  int32_t span = (T - p->clear) / 2 > p->trend ? (T - p->clear) / 2 : p->trend;
  *drain_a = T - span < p->clear ? p->clear : T - span;
}

/* The drain window's queue is kept only with a fault. */
static size_t drain_len(const eng_recovery_params *p, int32_t drain_a) {
  return p->has_fault && p->ticks > drain_a ? (size_t)(p->ticks - drain_a) : 0;
}

/* Bytes of the buffers eng_recovery_begin takes: the collapse window (4 W),
 * the hold ring, the drain window's queue and the baseline histogram's
 * start. */
double eng_recovery_bytes(const eng_recovery_params *p) {
  int32_t W, hold, drain_a;
  stream_spans(p, &W, &hold, &drain_a);
  return (4.0 * W + hold + (double)drain_len(p, drain_a) + HIST_START) * sizeof(int32_t);
}

int eng_recovery_begin(eng_recovery_stream *s, const eng_recovery_params *p) {
  s->p = *p;
  int32_t T = p->ticks;
  s->t = 0;
  stream_spans(p, &s->W, &s->hold, &s->drain_a);
  s->watch_end = p->has_fault ? p->fault_start : T;
  if (s->watch_end > T) s->watch_end = T;
  s->hb = p->warmup < s->watch_end ? p->warmup : 0;
  int32_t late_a = T - p->trend < p->clear ? p->clear : T - p->trend;
  if (late_a >= T) late_a = T - 1 > 0 ? T - 1 : 0;
  s->late_a = late_a;
  s->prev_a = late_a - (T - late_a) < p->clear ? p->clear : late_a - (T - late_a);
  s->base_q = s->base_good = s->base_n = 0;
  s->hist_len = 0;
  s->hist_max = 0;
  s->peak = 0;
  s->good_during = s->good_after = s->late_q = s->prev_q = 0;
  s->h_nw = s->h_good = s->h_att = s->h_waste = 0;
  s->l_nw = s->l_good = s->l_att = s->l_waste = 0;
  s->w_nw = s->w_good = s->w_att = 0;
  s->collapse_at = s->return_at = -1;
  s->ring_end = s->W <= s->watch_end ? s->watch_end : 0;
  s->threshold = s->need = s->gb = NAN;
  s->baseline_done = 0;
  s->r_good = 0;
  s->r_run = 0;
  s->recovered_start = -1;
  s->rhead = s->rlen = s->hpos = 0;
  s->w_fresh = 0;
  if (grow(&s->ring, &s->ring_cap, 4 * (size_t)s->W) ||
      grow(&s->hring, &s->hring_cap, (size_t)s->hold) ||
      grow(&s->dq, &s->dq_cap, drain_len(p, s->drain_a)))
    return -1;
  /* the baseline's queue histogram grows with the deepest queue seen; a
   * start of 4096 entries covers every healthy baseline without a resize */
  if (grow(&s->hist, &s->hist_cap, HIST_START)) return -1;
  return 0;
}

void eng_recovery_free(eng_recovery_stream *s) {
  free(s->ring);
  free(s->hring);
  free(s->dq);
  free(s->hist);
  memset(s, 0, sizeof *s);
}

/* The threshold and the goodput the recovery search needs, once the
 * baseline has ended (before clearance: the baseline ends at the first
 * fault). */
void eng__recovery_baseline_end(eng_recovery_stream *s) {
  s->baseline_done = 1;
  int32_t n = s->p.base_end - s->p.base_begin;
  double q99 = 0;
  if (n > 0) {
    int32_t need = (int32_t)ceil(0.99 * n), seen = 0, v = 0;
    for (v = 0; v <= s->hist_max; v++) {
      seen += s->hist[v];
      if (seen >= need) break;
    }
    q99 = v;
  }
  double threshold = (1 + s->p.tolerance) * q99 + 1;
  if (threshold > s->p.queue_cap) threshold = s->p.queue_cap;
  s->threshold = threshold;
  double goodput_baseline = mean_of(s->base_good, s->p.base_begin, s->p.base_end);
  s->gb = goodput_baseline > 0 ? goodput_baseline : NAN;
  s->need = s->p.recovery_goodput * s->gb * s->hold;
}

void eng__recovery_hist_add(eng_recovery_stream *s, int32_t q, int32_t n) {
  int32_t v = q < HIST_CLAMP ? (q < 0 ? 0 : q) : HIST_CLAMP;
  if ((size_t)v >= s->hist_len) {
    size_t want = (size_t)v + 1;
    if (want > s->hist_cap) {
      size_t cap = s->hist_cap;
      while (cap < want) cap *= 2;
      if (grow(&s->hist, &s->hist_cap, cap)) v = (int32_t)s->hist_len - 1; /* keeps the max */
    }
    if ((size_t)v >= s->hist_len) {
      memset(s->hist + s->hist_len, 0, ((size_t)v + 1 - s->hist_len) * sizeof *s->hist);
      s->hist_len = (size_t)v + 1;
    }
  }
  s->hist[v] += n;
  if (v > s->hist_max) s->hist_max = v;
}

/* Drops the ticks before `from`: whether any went. */
static inline int win_drop(eng_recovery_stream *s, int32_t from) {
  int dropped = 0;
  while (s->rlen && s->ring[4 * (size_t)s->rhead] < from) {
    const int32_t *e = s->ring + 4 * (size_t)s->rhead;
    s->w_nw -= e[1];
    s->w_good -= e[2];
    s->w_att -= e[3];
    s->rhead = eng__win_slot(s, 1);
    s->rlen--;
    dropped = 1;
    s->w_fresh = 0;
  }
  return dropped;
}

/* Ticks of [a, b) inside [lo, hi). */
static int64_t overlap(int32_t a, int32_t b, int32_t lo, int32_t hi) {
  int32_t x = a > lo ? a : lo, y = b < hi ? b : hi;
  return y > x ? (int64_t)y - x : 0;
}

/* The collapse window over [t0, t1) of empty ticks, from one tick that
 * changes something to the next: a tick whose oldest counted tick leaves,
 * the first full window, the first window a return may start, the first
 * fault. Between them the sums, and so the answers, stay the same: a
 * window is checked again only when its sums changed since it last was
 * (w_fresh) or its place in the rule did. */
static void ring_idle(eng_recovery_stream *s, int32_t t0, int32_t t1) {
  int32_t t = t0;
  /* the common span: checked sums, nothing leaving, no place crossed */
  if (s->w_fresh && s->rlen && s->ring[4 * (size_t)s->rhead] + (int64_t)s->W >= t1 &&
      t0 - s->W + 1 > 0 &&
      (s->collapse_at < 0 ? s->watch_end >= t1
                          : (int64_t)s->collapse_at + 2 * (int64_t)s->W - 1 < t0))
    return;
  while (t < t1 && eng__ring_on(s, t)) {
    win_drop(s, t - s->W + 1);
    int32_t a = t - s->W + 1;
    if (a >= 0 && (!s->w_fresh || a == 0 || (s->collapse_at >= 0 && a == s->collapse_at + s->W)))
      eng__win_check(s, t);
    int64_t next = t1;
    if (s->rlen && (int64_t)s->ring[4 * (size_t)s->rhead] + s->W < next)
      next = (int64_t)s->ring[4 * (size_t)s->rhead] + s->W;
    if (a < 0 && s->W - 1 < next) next = s->W - 1;
    if (s->collapse_at >= 0) {
      int64_t r = (int64_t)s->collapse_at + 2 * (int64_t)s->W - 1;
      if (r > t && r < next) next = r;
    } else if (s->watch_end > t && s->watch_end < next) {
      next = s->watch_end;
    }
    t = next > t ? (int32_t)next : t + 1;
  }
}

/* After clearance over [t0, t1) of empty ticks: the hold window (queue
 * back, no goodput) and the drain window's queue. */
static void after_idle(eng_recovery_stream *s, int32_t queue, int32_t t0, int32_t t1) {
  const eng_recovery_params *p = &s->p;
  int32_t t = t0 > p->clear ? t0 : p->clear, pos = s->hpos;
  for (; t < t1; t++) {
    if (t == p->base_end && !s->baseline_done) eng__recovery_baseline_end(s);
    if (s->recovered_start < 0 && s->baseline_done) {
      int32_t *slot = s->hring + pos;
      if (t - s->hold >= p->clear) s->r_good -= *slot;
      *slot = 0;
      s->r_run = queue <= s->threshold ? s->r_run + 1 : 0;
      if (s->r_run >= s->hold && (double)s->r_good >= s->need) s->recovered_start = t - s->hold + 1;
    }
    if (++pos == s->hold) pos = 0;
    if (t >= s->drain_a) s->dq[t - s->drain_a] = queue;
  }
  s->hpos = pos;
}

/* The same as n calls of eng_recovery_tick(s, queue, 0, 0, 0, 0), without
 * one per tick: sums of nothing are skipped, sums of the queue added at
 * once, and only the windows that move are walked. */
void eng_recovery_idle(eng_recovery_stream *s, int32_t queue, int32_t n) {
  const eng_recovery_params *p = &s->p;
  if (n <= 0) return;
  const int32_t t0 = s->t, t1 = t0 + n;
  int64_t c = overlap(t0, t1, p->base_begin, p->base_end);
  if (c) {
    s->base_q += (int64_t)queue * c;
    eng__recovery_hist_add(s, queue, (int32_t)c);
  }
  if (queue > s->peak) s->peak = queue;
  s->late_q += (int64_t)queue * overlap(t0, t1, s->late_a, INT32_MAX);
  s->prev_q += (int64_t)queue * overlap(t0, t1, s->prev_a, s->late_a);
  ring_idle(s, t0, t1);
  if (p->has_fault && t1 > p->clear) after_idle(s, queue, t0, t1);
  /* the baseline ends at tick base_end whatever else happens there */
  if (p->base_end >= t0 && p->base_end < t1 && !s->baseline_done) eng__recovery_baseline_end(s);
  s->t = t1;
}

void eng_recovery_end(eng_recovery_stream *s, eng_summary *out) {
  const eng_recovery_params *p = &s->p;
  int32_t T = p->ticks;
  if (!s->baseline_done) eng__recovery_baseline_end(s);
  out->baseline_queue = mean_of(s->base_q, p->base_begin, p->base_end);
  out->recovery_threshold = s->threshold;
  out->goodput_baseline = mean_of(s->base_good, p->base_begin, p->base_end);
  out->peak_queue = s->peak;

  double gb = s->gb;
  out->goodput_during = p->has_fault ? mean_of(s->good_during, p->fault_start, p->clear) / gb : NAN;
  out->goodput_after = mean_of(s->good_after, p->clear, T) / gb;

  /* 1. health over [warmup, first fault), 2. collapse before the first fault */
  wsums h = {s->h_nw, s->h_good, s->h_att, s->h_waste};
  out->baseline_goodput_ratio = h.nw ? (double)h.good / (double)h.nw : NAN;
  out->baseline_amplification = h.nw ? (double)h.att / (double)h.nw : NAN;
  int healthy = eng__healthy_window(h.nw, h.good, h.att, p) && out->goodput_baseline > 0;
  out->collapse_watch_ms = s->watch_end * p->tick_ms;
  out->collapse_ms = out->return_ms = NAN;
  if (s->collapse_at >= 0) {
    out->collapse_ms = (s->collapse_at + s->W / 2.0) * p->tick_ms;
    if (s->return_at >= 0)
      out->return_ms = (s->return_at + s->W / 2.0) * p->tick_ms - out->collapse_ms;
  }
  if (!healthy && isnan(out->collapse_ms)) out->collapse_ms = 0;

  /* late figures, reported for every run so a reader can see the why */
  int32_t late_a = s->late_a, prev_a = s->prev_a;
  wsums late = {s->l_nw, s->l_good, s->l_att, s->l_waste};
  out->late_goodput = mean_of(s->l_good, late_a, T) / gb;
  out->late_amplification = late.nw ? (double)late.att / (double)late.nw : NAN;
  out->late_wasted_share =
      late.waste + late.good ? (double)late.waste / (double)(late.waste + late.good) : NAN;
  out->late_queue_trend = mean_of(s->late_q, late_a, T) / mean_of(s->prev_q, prev_a, late_a);
  out->late_load = p->capacity > 0 && T > late_a ? (double)late.att / (T - late_a) / p->capacity : NAN;
  out->drain_ms = NAN;
  out->recovery_ms = NAN;
  out->passed_slo = 0;

  if (p->has_fault && s->watch_end <= 0) {
    /* A fault from tick 0 leaves no baseline to judge health or recovery
     * against: say so rather than call the run collapsed. */
    out->collapse_ms = NAN;
    out->outcome = ENG_OUTCOME_UNDETERMINED;
    return;
  }
  if (!isnan(out->collapse_ms)) {
    out->outcome = ENG_OUTCOME_COLLAPSED;
    return;
  }
  if (!p->has_fault) {
    out->outcome = ENG_OUTCOME_RECOVERED;
    out->recovery_ms = 0;
    out->passed_slo = 1;
    return;
  }
  if (s->recovered_start >= 0) {
    out->outcome = ENG_OUTCOME_RECOVERED;
    out->recovery_ms = (s->recovered_start - p->clear) * p->tick_ms;
    out->passed_slo = out->recovery_ms <= p->slo_ms;
    return;
  }

  /* 4. metastable or slow — or, with less than hold + trend ticks after
   * clearance, no answer: the late window would still hold the fault's
   * aftermath, and a guess would be counted as a finding. */
  if (T - p->clear < s->hold + p->trend) {
    out->outcome = ENG_OUTCOME_UNDETERMINED;
    return;
  }
  out->drain_ms = drain_ticks(s->dq, s->drain_a, T, s->threshold) * p->tick_ms;
  int far_below = !(out->late_goodput >= p->metastable_goodput);
  int draining = out->drain_ms <= p->drain_bound_ms && !(out->late_load >= 1);
  out->outcome = far_below && sustaining(&late, p) && !draining ? ENG_OUTCOME_METASTABLE
                                                                 : ENG_OUTCOME_SLOW;
}

void eng_recovery_assess(const eng_recovery_traces *tr, const eng_recovery_params *p,
                         eng_summary *out) {
  eng_recovery_stream s;
  memset(&s, 0, sizeof s);
  if (eng_recovery_begin(&s, p)) {
    out->outcome = ENG_OUTCOME_UNDETERMINED;
    eng_recovery_free(&s);
    return;
  }
  for (int32_t t = 0; t < p->ticks; t++)
    eng_recovery_tick(&s, tr->queue[t], tr->successes[t], tr->new_requests[t], tr->attempts[t],
                      tr->wasted[t]);
  eng_recovery_end(&s, out);
  eng_recovery_free(&s);
}

/* ---- user recovery (eng.h) ---- */

int eng_slo_check(const eng_slo *slo, char *err, size_t errlen) {
  for (int k = 0; k < slo->n; k++) {
    const eng_slo_term *t = &slo->t[k];
    if (t->kind == ENG_SLO_ERRORS) {
      if (!(t->limit >= 0 && t->limit <= 1)) {
        snprintf(err, errlen, "an error-rate limit is a fraction between 0 and 1");
        return -1;
      }
      continue;
    }
    int known = 0;
    for (int q = 0; q < ENG_USER_QUANTILES; q++)
      known |= fabs(t->quantile - eng_user_quantiles[q]) < 1e-9;
    if (!known) {
      snprintf(err, errlen,
               "p%.10g: the latency series hold p50, p90, p99 and p99.9; an SLO term uses one "
               "of them",
               100 * t->quantile);
      return -1;
    }
    if (!(t->limit >= 0)) {
      snprintf(err, errlen, "a latency limit is at least 0 ms");
      return -1;
    }
  }
  return 0;
}

int eng_slo_window_holds(const eng_slo *slo, const int32_t *v) {
  for (int k = 0; k < slo->n; k++) {
    const eng_slo_term *t = &slo->t[k];
    int32_t x;
    double limit;
    if (t->kind == ENG_SLO_ERRORS) {
      x = v[ENG_USER_QUANTILES];
      limit = t->limit * 1e6; /* ppm, as stored */
    } else {
      int q = 0;
      while (q + 1 < ENG_USER_QUANTILES && !(fabs(eng_user_quantiles[q] - t->quantile) < 1e-9)) q++;
      x = v[q];
      limit = t->limit * 1e3; /* us, as stored */
    }
    if (x < 0 || (double)x > limit) return 0;
  }
  return 1;
}

/* rows[k][w * stride] is window w's value of user-view metric k. */
static double user_recovery(const eng_slo *slo, const int32_t *const *rows, size_t stride,
                            int32_t ticks, int32_t window_ticks, int32_t clear,
                            int32_t hold_ticks, double tick_ms) {
  if (!slo->n || window_ticks < 1 || ticks < 1) return NAN;
  if (clear > ticks) clear = ticks;
  if (clear < 0) clear = 0;
  int32_t windows = (int32_t)(((int64_t)ticks + window_ticks - 1) / window_ticks);
  int32_t w0 = (int32_t)(((int64_t)clear + window_ticks - 1) / window_ticks);
  int32_t hold = (int32_t)(((int64_t)hold_ticks + window_ticks - 1) / window_ticks);
  if (hold < 1) hold = 1;
  int32_t run = 0;
  for (int32_t w = w0; w < windows; w++) {
    int32_t v[ENG_M_USER_COUNT];
    for (int k = 0; k < ENG_M_USER_COUNT; k++) v[k] = rows[k][(size_t)w * stride];
    run = eng_slo_window_holds(slo, v) ? run + 1 : 0;
    if (run == hold) return ((double)(w - hold + 1) * window_ticks - clear) * tick_ms;
  }
  return NAN;
}

double eng_user_recovery_ms(const eng_slo *slo, const int32_t *const *rows, int32_t ticks,
                            int32_t window_ticks, int32_t clear, int32_t hold_ticks,
                            double tick_ms) {
  return user_recovery(slo, rows, window_ticks > 0 ? (size_t)window_ticks : 1, ticks,
                       window_ticks, clear, hold_ticks, tick_ms);
}

double eng_user_recovery_windows(const eng_slo *slo, const int32_t *const *rows, int32_t ticks,
                                 int32_t window_ticks, int32_t clear, int32_t hold_ticks,
                                 double tick_ms) {
  return user_recovery(slo, rows, 1, ticks, window_ticks, clear, hold_ticks, tick_ms);
}
