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

static int64_t wsum(const int32_t *x, int32_t a, int32_t b) {
  int64_t s = 0;
  for (int32_t t = a; t < b; t++) s += x[t];
  return s;
}

static double window_mean(const int32_t *x, int32_t a, int32_t b) {
  if (b <= a) return NAN;
  return (double)wsum(x, a, b) / (b - a);
}

/* 99th percentile by counting: queue depths are small integers in a
 * baseline, and a histogram avoids sorting a copy. */
static double window_p99(const int32_t *x, int32_t a, int32_t b) {
  int32_t n = b - a;
  if (n <= 0) return 0;
  int32_t maxv = 0;
  for (int32_t t = a; t < b; t++) maxv = x[t] > maxv ? x[t] : maxv;
  if (maxv > 1 << 20) maxv = 1 << 20;
  int32_t *hist = calloc((size_t)maxv + 1, sizeof *hist);
  if (!hist) return maxv;
  for (int32_t t = a; t < b; t++) hist[x[t] < maxv ? x[t] : maxv]++;
  int32_t need = (int32_t)ceil(0.99 * n), seen = 0, v = 0;
  for (v = 0; v <= maxv; v++) {
    seen += hist[v];
    if (seen >= need) break;
  }
  free(hist);
  return v;
}

/* Sums of the four rate traces over one window. */
typedef struct wsums {
  int64_t nw, good, att, waste;
} wsums;

static wsums sums_over(const eng_recovery_traces *tr, int32_t a, int32_t b) {
  return (wsums){wsum(tr->new_requests, a, b), wsum(tr->successes, a, b),
                 wsum(tr->attempts, a, b), wsum(tr->wasted, a, b)};
}

static void sums_slide(wsums *s, const eng_recovery_traces *tr, int32_t out, int32_t in) {
  s->nw += tr->new_requests[in] - tr->new_requests[out];
  s->good += tr->successes[in] - tr->successes[out];
  s->att += tr->attempts[in] - tr->attempts[out];
  s->waste += tr->wasted[in] - tr->wasted[out];
}

/* Retries or abandoned work keep the load up by themselves. */
static int sustaining(const wsums *s, const eng_recovery_params *p) {
  if ((double)s->att > p->health_amplification * (double)s->nw) return 1;
  int64_t done = s->waste + s->good;
  return done > 0 && (double)s->waste > p->wasted_share * (double)done;
}

/* Collapse needs retries feeding the load: wasted work alone cannot sustain
 * itself when the offered load fits (and when it does not, the baseline is
 * unhealthy anyway). Without this, one long queue excursion of a healthy
 * M/M/1 at rho = 0.8 with no retries read as a collapse (README). */
static int collapsed_window(const wsums *s, const eng_recovery_params *p) {
  return s->nw > 0 && (double)s->good < p->metastable_goodput * (double)s->nw &&
         (double)s->att > p->health_amplification * (double)s->nw;
}

static int healthy_window(const wsums *s, const eng_recovery_params *p) {
  return s->nw > 0 && (double)s->good >= p->health_goodput * (double)s->nw &&
         (double)s->att <= p->health_amplification * (double)s->nw;
}

/* First collapsed window in [0, watch_end) and the first healthy one after
 * it (anywhere before the horizon). */
static void find_collapse(const eng_recovery_traces *tr, const eng_recovery_params *p,
                          int32_t watch_end, eng_summary *out) {
  int32_t W = p->collapse_window > 0 ? p->collapse_window : 1, T = p->ticks;
  out->collapse_ms = out->return_ms = NAN;
  if (W > watch_end) return;
  wsums s = sums_over(tr, 0, W);
  int32_t at = -1;
  for (int32_t a = 0;; a++) {
    if (collapsed_window(&s, p)) {
      at = a;
      break;
    }
    if (a + W >= watch_end) break;
    sums_slide(&s, tr, a, a + W);
  }
  if (at < 0) return;
  out->collapse_ms = (at + W / 2.0) * p->tick_ms;
  int32_t b0 = at + W;
  if (b0 + W > T) return;
  s = sums_over(tr, b0, b0 + W);
  for (int32_t a = b0;; a++) {
    if (healthy_window(&s, p)) {
      out->return_ms = (a + W / 2.0) * p->tick_ms - out->collapse_ms;
      return;
    }
    if (a + W >= T) return;
    sums_slide(&s, tr, a, a + W);
  }
}

/* Projected ticks from the end of [a, b) until a least-squares line through
 * the queue reaches thr: 0 when already there, inf when not shrinking. */
static double drain_ticks(const int32_t *q, int32_t a, int32_t b, double thr) {
  int32_t n = b - a;
  if (n < 2) return INFINITY;
  double tm = (a + b - 1) / 2.0, qm = window_mean(q, a, b), sxy = 0, sxx = 0;
  for (int32_t t = a; t < b; t++) {
    sxy += (t - tm) * (q[t] - qm);
    sxx += (t - tm) * (t - tm);
  }
  double slope = sxy / sxx;
  double q_end = qm + slope * (b - 1 - tm);
  if (q_end <= thr) return 0;
  return slope < 0 ? (q_end - thr) / -slope : INFINITY;
}

void eng_recovery_assess(const eng_recovery_traces *tr, const eng_recovery_params *p,
                         eng_summary *out) {
  int32_t T = p->ticks;
  const int32_t *queue = tr->queue, *successes = tr->successes;
  out->baseline_queue = window_mean(queue, p->base_begin, p->base_end);
  double q99 = window_p99(queue, p->base_begin, p->base_end);
  double threshold = (1 + p->tolerance) * q99 + 1;
  if (threshold > p->queue_cap) threshold = p->queue_cap;
  out->recovery_threshold = threshold;
  out->goodput_baseline = window_mean(successes, p->base_begin, p->base_end);
  int32_t peak = 0;
  for (int32_t t = 0; t < T; t++) peak = queue[t] > peak ? queue[t] : peak;
  out->peak_queue = peak;

  double gb = out->goodput_baseline > 0 ? out->goodput_baseline : NAN;
  out->goodput_during =
      p->has_fault ? window_mean(successes, p->fault_start, p->clear) / gb : NAN;
  out->goodput_after = window_mean(successes, p->clear, T) / gb;

  /* 1. health over [warmup, first fault), 2. collapse before the first fault */
  int32_t watch_end = p->has_fault ? p->fault_start : T;
  if (watch_end > T) watch_end = T;
  int32_t hb = p->warmup < watch_end ? p->warmup : 0;
  wsums h = sums_over(tr, hb, watch_end);
  out->baseline_goodput_ratio = h.nw ? (double)h.good / (double)h.nw : NAN;
  out->baseline_amplification = h.nw ? (double)h.att / (double)h.nw : NAN;
  int healthy = healthy_window(&h, p) && out->goodput_baseline > 0;
  out->collapse_watch_ms = watch_end * p->tick_ms;
  find_collapse(tr, p, watch_end, out);
  if (!healthy && isnan(out->collapse_ms)) out->collapse_ms = 0;

  /* late figures, reported for every run so a reader can see the why */
  int32_t late_a = T - p->trend < p->clear ? p->clear : T - p->trend;
  if (late_a >= T) late_a = T - 1 > 0 ? T - 1 : 0;
  wsums late = sums_over(tr, late_a, T);
  out->late_goodput = window_mean(successes, late_a, T) / gb;
  out->late_amplification = late.nw ? (double)late.att / (double)late.nw : NAN;
  out->late_wasted_share =
      late.waste + late.good ? (double)late.waste / (double)(late.waste + late.good) : NAN;
  int32_t prev_a = late_a - (T - late_a);
  if (prev_a < p->clear) prev_a = p->clear;
  out->late_queue_trend = window_mean(queue, late_a, T) / window_mean(queue, prev_a, late_a);
  out->late_load = p->capacity > 0 && T > late_a ? (double)late.att / (T - late_a) / p->capacity : NAN;
  out->drain_ms = NAN;
  out->recovery_ms = NAN;
  out->passed_slo = 0;

  if (p->has_fault && watch_end <= 0) {
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

  /* 3. queue back and goodput back, both for `hold` ticks */
  int32_t hold = p->hold > 0 ? p->hold : 1;
  double need = p->recovery_goodput * gb * hold;
  int32_t run = 0;
  int64_t good = 0;
  for (int32_t t = p->clear; t < T; t++) {
    good += successes[t];
    if (t - hold >= p->clear) good -= successes[t - hold];
    run = queue[t] <= threshold ? run + 1 : 0;
    if (run >= hold && (double)good >= need) {
      int32_t start = t - hold + 1;
      out->outcome = ENG_OUTCOME_RECOVERED;
      out->recovery_ms = (start - p->clear) * p->tick_ms;
      out->passed_slo = out->recovery_ms <= p->slo_ms;
      return;
    }
  }

  /* 4. metastable or slow — or, with less than hold + trend ticks after
   * clearance, no answer: the late window would still hold the fault's
   * aftermath, and a guess would be counted as a finding. */
  if (T - p->clear < hold + p->trend) {
    out->outcome = ENG_OUTCOME_UNDETERMINED;
    return;
  }
  int32_t span = (T - p->clear) / 2 > p->trend ? (T - p->clear) / 2 : p->trend;
  int32_t drain_a = T - span < p->clear ? p->clear : T - span;
  out->drain_ms = drain_ticks(queue, drain_a, T, threshold) * p->tick_ms;
  int far_below = !(out->late_goodput >= p->metastable_goodput);
  int draining = out->drain_ms <= p->drain_bound_ms && !(out->late_load >= 1);
  out->outcome = far_below && sustaining(&late, p) && !draining ? ENG_OUTCOME_METASTABLE
                                                                 : ENG_OUTCOME_SLOW;
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

double eng_user_recovery_ms(const eng_slo *slo, const int32_t *const *rows, int32_t ticks,
                            int32_t window_ticks, int32_t clear, int32_t hold_ticks,
                            double tick_ms) {
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
    size_t t = (size_t)w * (size_t)window_ticks;
    for (int k = 0; k < ENG_M_USER_COUNT; k++) v[k] = rows[k][t];
    run = eng_slo_window_holds(slo, v) ? run + 1 : 0;
    if (run == hold) return ((double)(w - hold + 1) * window_ticks - clear) * tick_ms;
  }
  return NAN;
}
