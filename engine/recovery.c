/*
 * recovery.c — recovery time and outcome of a run (SPEC §2; README "Outcome
 * rule").
 *
 * Baseline: the total queue depth over the pre-fault window gives its mean
 * and its 99th percentile q99. The run is back to baseline at the first tick
 * t >= clearance from which the queue stays <= (1 + tolerance) * q99 + 1 for
 * `hold` ticks in a row; recovery time = t - clearance. The +1 keeps a
 * near-empty baseline from demanding an exactly empty queue; q99 rather than
 * the mean keeps ordinary fluctuation from reading as "not recovered".
 *
 * A run not back by the horizon compares its last two `trend` windows: the
 * backlog is shrinking when the last window's mean queue is below
 * (1 - shrink_min) x the one before. Not shrinking while goodput over the
 * last window is below metastable_goodput x baseline goodput is metastable:
 * the trigger is gone but the overload sustains itself. Anything else that
 * has not recovered is slow.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recovery.h"

static double window_mean(const int32_t *x, int32_t a, int32_t b) {
  if (b <= a) return NAN;
  double s = 0;
  for (int32_t t = a; t < b; t++) s += x[t];
  return s / (b - a);
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

void eng_recovery_assess(const int32_t *queue, const int32_t *successes,
                         const eng_recovery_params *p, eng_summary *out) {
  int32_t T = p->ticks;
  out->baseline_queue = window_mean(queue, p->base_begin, p->base_end);
  double q99 = window_p99(queue, p->base_begin, p->base_end);
  double threshold = (1 + p->tolerance) * q99 + 1;
  out->recovery_threshold = threshold;
  out->goodput_baseline = window_mean(successes, p->base_begin, p->base_end);
  int32_t peak = 0;
  for (int32_t t = 0; t < T; t++) peak = queue[t] > peak ? queue[t] : peak;
  out->peak_queue = peak;

  double gb = out->goodput_baseline > 0 ? out->goodput_baseline : NAN;
  out->goodput_during =
      p->has_fault ? window_mean(successes, p->fault_start, p->clear) / gb : NAN;
  out->goodput_after = window_mean(successes, p->clear, T) / gb;
  out->late_queue_trend = NAN;

  if (!p->has_fault) {
    out->outcome = ENG_OUTCOME_RECOVERED;
    out->recovery_ms = 0;
    out->passed_slo = 1;
    return;
  }
  int32_t run = 0;
  for (int32_t t = p->clear; t < T; t++) {
    run = queue[t] <= threshold ? run + 1 : 0;
    if (run >= (p->hold > 0 ? p->hold : 1)) {
      int32_t start = t - run + 1;
      out->outcome = ENG_OUTCOME_RECOVERED;
      out->recovery_ms = (start - p->clear) * p->tick_ms;
      out->passed_slo = out->recovery_ms <= p->slo_ms;
      return;
    }
  }
  out->recovery_ms = NAN;
  out->passed_slo = 0;
  int32_t late_b = T, late_a = T - p->trend;
  if (late_a < p->clear) late_a = p->clear;
  int32_t prev_a = late_a - (late_b - late_a);
  if (prev_a < p->clear) prev_a = p->clear;
  double late_q = window_mean(queue, late_a, late_b);
  double prev_q = window_mean(queue, prev_a, late_a);
  out->late_queue_trend = late_q / prev_q;
  int shrinking = !(prev_q > 0) ? 0 : late_q < (1 - p->shrink_min) * prev_q;
  double late_goodput = window_mean(successes, late_a, late_b) / gb;
  if (!shrinking && !(late_goodput >= p->metastable_goodput))
    out->outcome = ENG_OUTCOME_METASTABLE;
  else
    out->outcome = ENG_OUTCOME_SLOW;
}
