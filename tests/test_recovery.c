/*
 * test_recovery.c — the outcome rule (engine/recovery.c, SPEC §2) on
 * synthetic traces whose answers are known by construction.
 *
 * eng_recovery_assess is a pure function of a queue-depth trace, a goodput
 * trace and the window parameters, so each test builds the two traces by
 * hand: a flat baseline, a disturbance of a chosen shape after the fault,
 * and the tick at which the rule must say "back". Every expected value is
 * derived in the comment next to it from the documented rule:
 *   threshold = (1 + tolerance) * p99(baseline queue) + 1;
 *   recovered at the first t >= clear with queue <= threshold for `hold`
 *   ticks in a row, recovery_ms = (t - clear) * tick_ms;
 *   otherwise slow when the last `trend` window's mean queue is below
 *   (1 - shrink_min) x the previous one's, or when late goodput is at least
 *   metastable_goodput x baseline; metastable otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "eng.h"
#include "recovery.h"

#define T_TICKS 2000

#define CHECK_EQ_DOUBLE(actual, expected, what)                                          \
  do {                                                                                   \
    double a_ = (actual), e_ = (expected);                                               \
    if (!(a_ == e_)) fail_msg("%s: got %.17g, expected %.17g", (what), a_, e_);          \
  } while (0)

#define CHECK_NEAR(actual, expected, tol, what)                                          \
  do {                                                                                   \
    double a_ = (actual), e_ = (expected), t_ = (tol);                                   \
    if (!(fabs(a_ - e_) <= t_))                                                          \
      fail_msg("%s: got %.10g, expected %.10g (tolerance %.3g)", (what), a_, e_, t_);    \
  } while (0)

#define CHECK_OUTCOME(actual, expected)                                                  \
  do {                                                                                   \
    int a_ = (actual), e_ = (expected);                                                  \
    if (a_ != e_)                                                                        \
      fail_msg("outcome: got %s, expected %s", eng_outcome_name((eng_outcome)a_),        \
               eng_outcome_name((eng_outcome)e_));                                       \
  } while (0)

/* Two traces and the parameters of one synthetic run. Baseline queue 10 and
 * goodput 20 per tick over [100, 500); fault [500, 600); horizon 2000. */
typedef struct trace {
  int32_t queue[T_TICKS];
  int32_t good[T_TICKS];
  eng_recovery_params p;
} trace;

/* Setup: a fresh trace per test, freed by the teardown even when a check
 * fails. */
static int trace_setup(void **state) {
  trace *t = calloc(1, sizeof *t);
  if (!t) return -1;
  for (int32_t i = 0; i < T_TICKS; i++) {
    t->queue[i] = 10;
    t->good[i] = 20;
  }
  t->p = (eng_recovery_params){
      .ticks = T_TICKS,
      .base_begin = 100,
      .base_end = 500,
      .fault_start = 500,
      .clear = 600,
      .hold = 50,
      .trend = 200,
      .tolerance = 0.5,
      .shrink_min = 0.1,
      .metastable_goodput = 0.5,
      .tick_ms = 2.0,
      .slo_ms = 1500,
      .has_fault = 1,
  };
  *state = t;
  return 0;
}

static int trace_teardown(void **state) {
  free(*state);
  return 0;
}

static void assess(const trace *t, eng_summary *s) {
  memset(s, 0, sizeof *s);
  eng_recovery_assess(t->queue, t->good, &t->p, s);
}

/* A flat baseline of 10 has p99 = 10, so the threshold is 1.5 * 10 + 1 = 16. */
static void test_threshold_and_baseline_stats(void **state) {
  trace *t = *state;
  /* during the fault: queue 100, goodput 5; after it: goodput 15 */
  for (int32_t i = 500; i < 600; i++) t->queue[i] = 100, t->good[i] = 5;
  for (int32_t i = 600; i < T_TICKS; i++) t->good[i] = 15;
  t->queue[50] = 777; /* before the baseline window: counts for the peak only */
  eng_summary s;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.baseline_queue, 10.0, "baseline_queue");
  CHECK_EQ_DOUBLE(s.recovery_threshold, 16.0, "recovery_threshold");
  CHECK_EQ_DOUBLE(s.peak_queue, 777.0, "peak_queue");
  CHECK_EQ_DOUBLE(s.goodput_baseline, 20.0, "goodput_baseline");
  CHECK_EQ_DOUBLE(s.goodput_during, 0.25, "goodput_during (5 / 20)");
  CHECK_EQ_DOUBLE(s.goodput_after, 0.75, "goodput_after (15 / 20)");
  /* back at the clearance tick itself: recovery time 0 */
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 0.0, "recovery_ms");
  assert_int_equal(s.passed_slo, 1);
}

/* The threshold uses the 99th percentile, not the mean: a baseline holding
 * each of 0..399 once (400 ticks) has p99 = the ceil(0.99 * 400) = 396th
 * smallest value = 395, so threshold = 1.5 * 395 + 1 = 593.5; its mean is
 * 199.5. */
static void test_threshold_uses_p99(void **state) {
  trace *t = *state;
  for (int32_t i = 100; i < 500; i++) t->queue[i] = (i * 7919) % 400; /* a permutation of 0..399 */
  eng_summary s;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.baseline_queue, 199.5, "baseline_queue");
  CHECK_EQ_DOUBLE(s.recovery_threshold, 593.5, "recovery_threshold");
}

/* Spike to 200 at clearance, then down by one per tick: queue(t) = 200 -
 * (t - 600) until it reaches 10. It is <= 16 from t = 784 on (200 - 184),
 * and stays there, so recovery starts at 784: (784 - 600) * 2 ms = 368 ms. */
static void test_linear_decay_exact_recovery(void **state) {
  trace *t = *state;
  for (int32_t i = 500; i < 600; i++) t->queue[i] = 200;
  for (int32_t i = 600; i < T_TICKS; i++) {
    int32_t q = 200 - (i - 600);
    t->queue[i] = q > 10 ? q : 10;
  }
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 368.0, "recovery_ms");
  assert_int_equal(s.passed_slo, 1);
  CHECK_EQ_DOUBLE(s.peak_queue, 200.0, "peak_queue");
  assert_true(isnan(s.late_queue_trend));
}

/* Same decay, but the queue pops to 17 (> 16) at 810, inside the hold
 * window that began at 784: the run of good ticks restarts, so recovery
 * starts at 811: (811 - 600) * 2 = 422 ms. A value equal to the threshold
 * (16, at 830) does not break the run. */
static void test_excursion_inside_hold_restarts(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++) {
    int32_t q = 200 - (i - 600);
    t->queue[i] = q > 10 ? q : 10;
  }
  t->queue[810] = 17;
  t->queue[830] = 16;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 422.0, "recovery_ms");

  /* Two excursions: the later one (at 850) wins: start 851 -> 502 ms. */
  t->queue[850] = 40;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.recovery_ms, 502.0, "recovery_ms after a second excursion");

  /* An excursion after a full hold window no longer matters: the window
   * 851..900 is complete, so one at 901 leaves the answer at 502 ms. */
  t->queue[901] = 5000;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.recovery_ms, 502.0, "recovery_ms with an excursion after the hold");
}

/* The hold must fit before the horizon: good only over the last hold - 1
 * ticks is not recovered; exactly hold ticks is. */
static void test_hold_must_fit_before_horizon(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 1000;
  for (int32_t i = T_TICKS - 49; i < T_TICKS; i++) t->queue[i] = 10;
  eng_summary s;
  assess(t, &s);
  if (s.outcome == ENG_OUTCOME_RECOVERED)
    fail_msg("49 good ticks < hold 50 counted as recovered (recovery_ms %g)", s.recovery_ms);
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);

  t->queue[T_TICKS - 50] = 10;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, (double)(T_TICKS - 50 - 600) * 2.0, "recovery_ms");
}

/* A backlog of 5000 that never moves, with no goodput after clearance:
 * not shrinking (trend 1.0) and goodput 0 < 0.5 x baseline -> metastable. */
static void test_stuck_backlog_zero_goodput_is_metastable(void **state) {
  trace *t = *state;
  for (int32_t i = 500; i < T_TICKS; i++) t->queue[i] = 5000, t->good[i] = 0;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);
  CHECK_EQ_DOUBLE(s.late_queue_trend, 1.0, "late_queue_trend");
  CHECK_EQ_DOUBLE(s.goodput_after, 0.0, "goodput_after");
}

/* A growing backlog with poor goodput is metastable too (trend > 1). */
static void test_growing_backlog_low_goodput_is_metastable(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 1000 + (i - 600), t->good[i] = 9;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  /* late window [1800, 2000) mean 2299.5, previous [1600, 1800) mean 2099.5 */
  CHECK_NEAR(s.late_queue_trend, 2299.5 / 2099.5, 1e-12, "late_queue_trend");
}

/* A backlog still shrinking at the horizon is slow, even with no goodput:
 * queue 5000 - 2 (t - 600). Late window [1800, 2000): mean 5000 - 2 * 1299.5
 * = 2401; previous [1600, 1800): 2801; 2401 < 0.9 * 2801 = 2520.9. */
static void test_shrinking_backlog_is_slow(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 5000 - 2 * (i - 600), t->good[i] = 0;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);
  CHECK_NEAR(s.late_queue_trend, 2401.0 / 2801.0, 1e-12, "late_queue_trend");

  /* Shrinking by less than shrink_min (10%) is not shrinking: the slope
   * 0.1 per tick gives 4870.5 / 4890.5 = 0.996 -> metastable with no goodput. */
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 5000 - (i - 600) / 10;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
}

/* Stuck backlog but goodput at baseline: the cluster is serving, only the
 * queue did not drain -> slow, not metastable. The boundary: late goodput
 * exactly metastable_goodput x baseline (10 of 20) is not "below", so slow;
 * one less (9) is metastable. */
static void test_stuck_backlog_good_goodput_is_slow(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 5000;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  CHECK_EQ_DOUBLE(s.goodput_after, 1.0, "goodput_after");

  for (int32_t i = 600; i < T_TICKS; i++) t->good[i] = 10;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  for (int32_t i = 600; i < T_TICKS; i++) t->good[i] = 9;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
}

/* No fault: recovered with 0 ms and passes, whatever the traces look like. */
static void test_no_fault_is_recovered(void **state) {
  trace *t = *state;
  t->p.has_fault = 0;
  t->p.clear = 0;
  t->p.fault_start = T_TICKS;
  for (int32_t i = 1000; i < T_TICKS; i++) t->queue[i] = 9999, t->good[i] = 0;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 0.0, "recovery_ms");
  assert_int_equal(s.passed_slo, 1);
  assert_true(isnan(s.goodput_during));
}

/* SLO boundary: high until 899, back from 900 -> (900 - 600) * 2 = 600 ms.
 * slo_ms = 600 passes (<=); 599.999 fails; the outcome stays recovered. */
static void test_slo_boundary(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < 900; i++) t->queue[i] = 3000;
  eng_summary s;
  t->p.slo_ms = 600;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 600.0, "recovery_ms");
  if (s.passed_slo != 1) fail_msg("recovery_ms 600 == slo_ms 600 must pass, got passed_slo 0");
  t->p.slo_ms = 599.999;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  if (s.passed_slo != 0) fail_msg("recovery_ms 600 > slo_ms 599.999 must fail, got passed_slo 1");
}

/* tick_ms scales the answer: the same traces at 10 ms ticks. */
static void test_tick_ms_scales_recovery(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < 700; i++) t->queue[i] = 3000;
  t->p.tick_ms = 10;
  eng_summary s;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.recovery_ms, 1000.0, "recovery_ms (100 ticks of 10 ms)");
  assert_int_equal(s.passed_slo, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_threshold_and_baseline_stats, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_threshold_uses_p99, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_linear_decay_exact_recovery, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_excursion_inside_hold_restarts, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_hold_must_fit_before_horizon, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_stuck_backlog_zero_goodput_is_metastable, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_growing_backlog_low_goodput_is_metastable, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_shrinking_backlog_is_slow, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_stuck_backlog_good_goodput_is_slow, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_no_fault_is_recovered, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_slo_boundary, trace_setup, trace_teardown),
      cmocka_unit_test_setup_teardown(test_tick_ms_scales_recovery, trace_setup, trace_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
