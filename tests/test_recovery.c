/*
 * test_recovery.c — the outcome rule (engine/recovery.c, docs/model.md
 * "The outcome rule") on synthetic traces whose answers are known by
 * construction.
 *
 * eng_recovery_assess is a pure function of five traces (queue depth,
 * successes, new requests, attempts, wasted completions) and the window
 * parameters, so each test builds the traces by hand: a healthy baseline, a
 * disturbance of a chosen shape, and the tick at which the rule must say
 * "back" or "collapsed". Every expected value is derived in the comment next
 * to it from the documented rule:
 *   healthy before the first fault: successes >= health_goodput x new and
 *   attempts <= health_amplification x new over [warmup, fault);
 *   collapsed window: successes < metastable_goodput x new and attempts >
 *   health_amplification x new; collapse_ms = midpoint of the first such
 *   window ending by the first fault;
 *   sustaining effect after clearance: attempts > health_amplification x new,
 *   or wasted > wasted_share x (wasted + successes);
 *   threshold = min((1 + tolerance) * p99(baseline queue) + 1, queue_cap);
 *   recovered at the first t >= clear with queue <= threshold for `hold`
 *   ticks in a row and successes over those ticks >= recovery_goodput x
 *   baseline goodput x hold, recovery_ms = (t - clear) * tick_ms;
 *   otherwise metastable when late goodput < metastable_goodput x baseline,
 *   a sustaining effect holds over the late window and the backlog is not
 *   draining: late attempts per tick >= capacity, or the least-squares drain
 *   projection exceeds drain_bound_ms; slow otherwise.
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
#include "testutil.h"

#define T_TICKS 2000

#define CHECK_EQ_DOUBLE(actual, expected, what)                                          \
  do {                                                                                   \
    double a_ = (actual), e_ = (expected);                                               \
    if (!(a_ == e_)) fail_msg("%s: got %.17g, expected %.17g", (what), a_, e_);          \
  } while (0)

#define CHECK_OUTCOME(actual, expected)                                                  \
  do {                                                                                   \
    int a_ = (actual), e_ = (expected);                                                  \
    if (a_ != e_)                                                                        \
      fail_msg("outcome: got %s, expected %s", eng_outcome_name((eng_outcome)a_),        \
               eng_outcome_name((eng_outcome)e_));                                       \
  } while (0)

/* The traces and the parameters of one synthetic run. Baseline queue 10,
 * 20 new requests, 20 attempts and 20 successes per tick over [100, 500);
 * fault [500, 600); horizon 2000; ticks of 2 ms. */
typedef struct trace {
  int32_t queue[T_TICKS];
  int32_t good[T_TICKS];
  int32_t newr[T_TICKS];
  int32_t att[T_TICKS];
  int32_t waste[T_TICKS];
  eng_recovery_params p;
} trace;

/* From tick a on: the storm state, where every attempt is retried until
 * four were sent (amplification 4), none succeeds and every completion is
 * wasted. */
static void storm_from(trace *t, int32_t a, int32_t b) {
  for (int32_t i = a; i < b; i++) t->queue[i] = 5000, t->good[i] = 0, t->att[i] = 80, t->waste[i] = 20;
}

/* Setup: a fresh trace per test, freed by the teardown even when a check
 * fails. */
static int trace_setup(void **state) {
  trace *t = calloc(1, sizeof *t);
  if (!t) return -1;
  for (int32_t i = 0; i < T_TICKS; i++) {
    t->queue[i] = 10;
    t->good[i] = 20;
    t->newr[i] = 20;
    t->att[i] = 20;
  }
  t->p = (eng_recovery_params){
      .ticks = T_TICKS,
      .base_begin = 100,
      .base_end = 500,
      .warmup = 100,
      .fault_start = 500,
      .clear = 600,
      .hold = 50,
      .trend = 200,
      .collapse_window = 100,
      .tolerance = 0.5,
      .queue_cap = INFINITY,
      .recovery_goodput = 0.9,
      .metastable_goodput = 0.5,
      .health_goodput = 0.9,
      .health_amplification = 1.2,
      .wasted_share = 0.5,
      .drain_bound_ms = 60000,
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
  eng_recovery_traces tr = {t->queue, t->good, t->newr, t->att, t->waste};
  eng_recovery_assess(&tr, &t->p, s);
}

/* A flat baseline of 10 has p99 = 10, so the threshold is 1.5 * 10 + 1 = 16. */
static void test_threshold_and_baseline_stats(void **state) {
  trace *t = *state;
  /* during the fault: queue 100, goodput 5; after it: goodput 19 (>= 0.9 x 20) */
  for (int32_t i = 500; i < 600; i++) t->queue[i] = 100, t->good[i] = 5;
  for (int32_t i = 600; i < T_TICKS; i++) t->good[i] = 19;
  t->queue[50] = 777; /* before the baseline window: counts for the peak only */
  eng_summary s;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.baseline_queue, 10.0, "baseline_queue");
  CHECK_EQ_DOUBLE(s.recovery_threshold, 16.0, "recovery_threshold");
  CHECK_EQ_DOUBLE(s.peak_queue, 777.0, "peak_queue");
  CHECK_EQ_DOUBLE(s.goodput_baseline, 20.0, "goodput_baseline");
  CHECK_EQ_DOUBLE(s.goodput_during, 0.25, "goodput_during (5 / 20)");
  CHECK_EQ_DOUBLE(s.goodput_after, 0.95, "goodput_after (19 / 20)");
  CHECK_EQ_DOUBLE(s.baseline_goodput_ratio, 1.0, "baseline_goodput_ratio");
  CHECK_EQ_DOUBLE(s.baseline_amplification, 1.0, "baseline_amplification");
  CHECK_EQ_DOUBLE(s.collapse_watch_ms, 1000.0, "collapse_watch_ms (500 ticks of 2 ms)");
  assert_true(isnan(s.collapse_ms));
  assert_true(isnan(s.drain_ms));
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

/* The threshold never exceeds what the queues can hold (151 above
 * a queue of 100): queue_cap 12 < 16 caps it. With the queue at 14 after
 * clearance the run is then not back; at 12 it is. */
static void test_threshold_capped_by_queue(void **state) {
  trace *t = *state;
  t->p.queue_cap = 12;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 14;
  eng_summary s;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.recovery_threshold, 12.0, "recovery_threshold");
  if (s.outcome == ENG_OUTCOME_RECOVERED) fail_msg("queue 14 > capped threshold 12 counted as back");
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 12;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
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

/* Every breaker open, so the queue is empty at once but
 * nothing succeeds until tick 1200. An empty queue is not a working service:
 * recovered only when goodput over the hold window is back to 0.9 x 20 x 50
 * = 900, first over [1195, 1245) (45 ticks of 20): (1195 - 600) x 2 = 1190 ms. */
static void test_zero_goodput_is_not_recovered(void **state) {
  trace *t = *state;
  for (int32_t i = 500; i < 1200; i++) t->queue[i] = 0, t->good[i] = 0, t->att[i] = 0;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 1190.0, "recovery_ms");
  assert_int_equal(s.passed_slo, 1);

  /* Hold-window goodput exactly 0.9 x baseline (18 per tick) is back, from
   * the first window with no zero tick, 1200... */
  for (int32_t i = 1200; i < T_TICKS; i++) t->good[i] = 18;
  assess(t, &s);
  CHECK_EQ_DOUBLE(s.recovery_ms, 1200.0, "recovery_ms with goodput 18");
  /* ... 17 is not: then nothing in the run is back. No retries and no wasted
   * work keep goodput down (the breakers do), so the run is slow. */
  for (int32_t i = 1200; i < T_TICKS; i++) t->good[i] = 17;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);

  /* Breakers open to the horizon: zero goodput, empty queue, slow. */
  for (int32_t i = 1200; i < T_TICKS; i++) t->good[i] = 0, t->att[i] = 0;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  CHECK_EQ_DOUBLE(s.late_goodput, 0.0, "late_goodput");
  CHECK_EQ_DOUBLE(s.drain_ms, 0.0, "drain_ms (the queue is already under the threshold)");
}

/* A backlog of 5000 that never moves, no goodput, amplification 4, every
 * completion wasted: the storm sustains itself -> metastable. */
static void test_stuck_backlog_zero_goodput_is_metastable(void **state) {
  trace *t = *state;
  storm_from(t, 500, T_TICKS);
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);
  CHECK_EQ_DOUBLE(s.late_queue_trend, 1.0, "late_queue_trend");
  CHECK_EQ_DOUBLE(s.goodput_after, 0.0, "goodput_after");
  CHECK_EQ_DOUBLE(s.late_amplification, 4.0, "late_amplification");
  CHECK_EQ_DOUBLE(s.late_wasted_share, 1.0, "late_wasted_share");
  assert_true(isinf(s.drain_ms));
  /* The storm began with the fault: no collapse before it. */
  assert_true(isnan(s.collapse_ms));

  /* Either sustaining effect alone is enough: amplification 1 with all work
   * wasted, or amplification 4 with nothing wasted. */
  for (int32_t i = 500; i < T_TICKS; i++) t->att[i] = 20;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  for (int32_t i = 500; i < T_TICKS; i++) t->att[i] = 80, t->waste[i] = 0;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  /* Neither (every attempt rejected at once, nothing in service wasted):
   * nothing self-sustaining holds goodput down -> slow. */
  for (int32_t i = 500; i < T_TICKS; i++) t->att[i] = 20;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
}

/* A growing backlog with poor goodput and retries is metastable. */
static void test_growing_backlog_low_goodput_is_metastable(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 1000 + (i - 600), t->good[i] = 9, t->att[i] = 40;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  /* late window [1800, 2000) mean 2299.5, previous [1600, 1800) mean 2099.5 */
  assert_near_msg(s.late_queue_trend, 2299.5 / 2099.5, 1e-12, "late_queue_trend");
  assert_true(isinf(s.drain_ms));
}

/* No retries, every completion wasted, almost no goodput,
 * but the backlog drains: queue 5000 - 2 (t - 600). The line through the
 * second half after clearance, [1300, 2000), ends at 5000 - 2 x 1399 = 2202
 * and reaches 16 after (2202 - 16) / 2 = 1093 ticks = 2186 ms <= 60 s: slow. */
static void test_draining_backlog_is_slow(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++)
    t->queue[i] = 5000 - 2 * (i - 600), t->good[i] = 1, t->waste[i] = 19;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);
  assert_near_msg(s.drain_ms, 2186.0, 1e-6, "drain_ms");
  assert_near_msg(s.late_wasted_share, 0.95, 1e-12, "late_wasted_share");
  assert_near_msg(s.late_goodput, 0.05, 1e-12, "late_goodput");

  /* The bound decides: a drain projected beyond drain_bound_ms is not
   * draining, and the wasted work sustains the state -> metastable. */
  t->p.drain_bound_ms = 2185;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  t->p.drain_bound_ms = 2186;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);

  /* A crawl of 0.1 per tick projects (4860 - 16) / 0.1 ticks ~ 97 s: metastable. */
  t->p.drain_bound_ms = 60000;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 5000 - (i - 600) / 10;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  assert_near_msg(s.drain_ms, 96882.0, 100.0, "drain_ms of the crawl");
}

/* The settling after clearance fools a slope: a backlog falling from 5000
 * to 4000 over the time after clearance (~0.71 per tick) projects a drain
 * within seconds, but retries offer 30 attempts per tick to a cluster that
 * serves 25 (late_load 1.2): the backlog cannot drain, metastable. With a
 * capacity of 35 it can (late_load 0.86): slow. Capacity 0 (unknown) leaves
 * the slope alone to decide. */
static void test_settling_backlog_with_retries_is_metastable(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++)
    t->queue[i] = 5000 - (i - 600) * 1000 / 1400, t->good[i] = 2, t->att[i] = 30, t->waste[i] = 18;
  eng_summary s;
  t->p.capacity = 25;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  assert_near_msg(s.late_load, 1.2, 1e-12, "late_load");
  assert_true(s.drain_ms < 60000);
  t->p.capacity = 35;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  t->p.capacity = 0;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_SLOW);
  assert_true(isnan(s.late_load));
}

/* Stuck backlog but goodput at baseline: the cluster is serving, only the
 * queue did not drain -> slow, not metastable, even with retries. The
 * boundary: late goodput exactly metastable_goodput x baseline (10 of 20) is
 * not "below", so slow; one less (9) is metastable. */
static void test_stuck_backlog_good_goodput_is_slow(void **state) {
  trace *t = *state;
  for (int32_t i = 600; i < T_TICKS; i++) t->queue[i] = 5000, t->att[i] = 40;
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

/* Collapse before the fault: the storm state from tick 200 on (400 ms).
 * Window [a, a + 100) holds 200 - a healthy ticks; goodput 20 (200 - a) <
 * 0.5 x 2000 from a = 151 on, so collapse_ms = (151 + 50) x 2 = 402 ms —
 * the switch at 400 ms, within one tick. A fault cannot be blamed. */
static void test_collapse_before_fault(void **state) {
  trace *t = *state;
  storm_from(t, 200, T_TICKS);
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_COLLAPSED);
  CHECK_EQ_DOUBLE(s.collapse_ms, 402.0, "collapse_ms");
  assert_true(isnan(s.return_ms));
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);

  /* A collapse window must end by the first fault: the same switch at tick
   * 420 needs a window [371, 471)... which fits (471 <= 500): collapsed at
   * (371 + 50) x 2 = 842 ms. At 460 the first window would be [411, 511),
   * past the fault: the storm is the fault's doing, and the baseline window
   * [100, 500) is unhealthy -> still collapsed, but never healthy reads as 0. */
  for (int32_t i = 0; i < T_TICKS; i++) t->queue[i] = 10, t->good[i] = 20, t->att[i] = 20, t->waste[i] = 0;
  storm_from(t, 420, T_TICKS);
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_COLLAPSED);
  CHECK_EQ_DOUBLE(s.collapse_ms, 842.0, "collapse_ms at 420");
  t->p.health_goodput = 0.5; /* 40 storm ticks of 400 leave 0.9 of goodput */
  for (int32_t i = 0; i < T_TICKS; i++) t->queue[i] = 10, t->good[i] = 20, t->att[i] = 20, t->waste[i] = 0;
  storm_from(t, 460, T_TICKS);
  for (int32_t i = 460; i < 500; i++) t->queue[i] = 10; /* keep the threshold at 16 */
  t->p.health_amplification = 2; /* and amplification (360 + 160) / 400 = 1.3 */
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  assert_true(isnan(s.collapse_ms));
}

/* Collapse in a run without faults, and the return: storm over ticks
 * [1000, 1500). First collapsed window a = 951 -> collapse_ms = 2002. The
 * first healthy window after [951, 1051) needs h healthy ticks with 20 h >=
 * 0.9 x 2000 and 80 (100 - h) + 20 h <= 1.2 x 2000, so h >= 94: a = 1494,
 * return at (1494 + 50) x 2 = 3088 ms, 1086 ms after the collapse. */
static void test_collapse_without_fault(void **state) {
  trace *t = *state;
  t->p.has_fault = 0;
  t->p.clear = 0;
  t->p.fault_start = T_TICKS;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 0.0, "recovery_ms of a healthy run without faults");
  assert_int_equal(s.passed_slo, 1);
  assert_true(isnan(s.goodput_during));
  assert_true(isnan(s.collapse_ms));
  CHECK_EQ_DOUBLE(s.collapse_watch_ms, 4000.0, "collapse_watch_ms (the whole run)");

  /* A long queue excursion without retries (every completion wasted for
   * 100 ticks, amplification 1) is not a collapse: nothing feeds it, and
   * the run is still healthy overall (goodput 1800 of 1900 ticks' worth). */
  for (int32_t i = 1000; i < 1100; i++) t->queue[i] = 500, t->good[i] = 0, t->waste[i] = 20;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  assert_true(isnan(s.collapse_ms));

  storm_from(t, 1000, 1500);
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_COLLAPSED);
  CHECK_EQ_DOUBLE(s.collapse_ms, 2002.0, "collapse_ms");
  CHECK_EQ_DOUBLE(s.return_ms, 1086.0, "return_ms");
  assert_int_equal(s.passed_slo, 0);
  assert_true(isnan(s.recovery_ms));
}

/* An unhealthy baseline is collapsed even with no collapse window:
 * overloaded from the start (goodput 16 of 20 new: 0.8 < 0.9), retrying
 * from the start (attempts 30 of 20: 1.5 > 1.2), or no goodput at all —
 * a run with zero baseline goodput is never recovered. collapse_ms 0:
 * never healthy. */
static void test_unhealthy_baseline_is_collapsed(void **state) {
  trace *t = *state;
  for (int32_t i = 0; i < T_TICKS; i++) t->good[i] = 16;
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_COLLAPSED);
  CHECK_EQ_DOUBLE(s.collapse_ms, 0.0, "collapse_ms");
  CHECK_EQ_DOUBLE(s.baseline_goodput_ratio, 0.8, "baseline_goodput_ratio");

  for (int32_t i = 0; i < T_TICKS; i++) t->good[i] = 20, t->att[i] = 30;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_COLLAPSED);
  CHECK_EQ_DOUBLE(s.baseline_amplification, 1.5, "baseline_amplification");

  for (int32_t i = 0; i < T_TICKS; i++) t->good[i] = 0, t->att[i] = 20, t->queue[i] = 0;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_COLLAPSED);
  assert_int_equal(s.passed_slo, 0);
  t->p.has_fault = 0;
  t->p.clear = 0;
  t->p.fault_start = T_TICKS;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_COLLAPSED);
}

/* Too little time after clearance. With the fault until
 * 1800, 200 ticks remain, fewer than hold + trend = 250: a storm there has
 * no late window to judge, so the outcome is undetermined, not a guess; a
 * run back within those ticks is still recovered. 250 ticks suffice. */
static void test_short_tail_is_undetermined(void **state) {
  trace *t = *state;
  t->p.clear = 1800;
  storm_from(t, 500, T_TICKS);
  eng_summary s;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_UNDETERMINED);
  assert_true(isnan(s.recovery_ms));
  assert_int_equal(s.passed_slo, 0);
  t->p.clear = 1750;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_METASTABLE);
  t->p.clear = 1800;
  for (int32_t i = 1800; i < T_TICKS; i++) t->queue[i] = 10, t->good[i] = 20, t->att[i] = 20, t->waste[i] = 0;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_RECOVERED);
  CHECK_EQ_DOUBLE(s.recovery_ms, 0.0, "recovery_ms");

  /* A fault from tick 0 leaves no baseline at all: undetermined too. */
  t->p.clear = 600;
  t->p.fault_start = 0;
  assess(t, &s);
  CHECK_OUTCOME(s.outcome, ENG_OUTCOME_UNDETERMINED);
  assert_true(isnan(s.collapse_ms));
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

/* A small deterministic generator for the randomised check below. */
static uint64_t mix(uint64_t *x) {
  *x += 0x9e3779b97f4a7c15ull;
  uint64_t z = *x;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int32_t below(uint64_t *x, int32_t n) { return (int32_t)(mix(x) % (uint64_t)n); }

/* Feeds t to a stream: tick by tick, or (idle) each run of empty ticks at
 * a constant queue in one eng_recovery_idle call. */
static void stream_feed(const trace *t, int idle, eng_summary *out) {
  eng_recovery_stream s;
  memset(&s, 0, sizeof s);
  assert_int_equal(eng_recovery_begin(&s, &t->p), 0);
  for (int32_t i = 0; i < t->p.ticks;) {
    int empty = !t->good[i] && !t->newr[i] && !t->att[i] && !t->waste[i];
    int32_t j = i + 1;
    if (idle && empty)
      while (j < t->p.ticks && !t->good[j] && !t->newr[j] && !t->att[j] && !t->waste[j] &&
             t->queue[j] == t->queue[i])
        j++;
    if (idle && empty)
      eng_recovery_idle(&s, t->queue[i], j - i);
    else
      eng_recovery_tick(&s, t->queue[i], t->good[i], t->newr[i], t->att[i], t->waste[i]);
    i = j;
  }
  memset(out, 0, sizeof *out);
  eng_recovery_end(&s, out);
  eng_recovery_free(&s);
}

/* eng_recovery_idle is n empty ticks, to the bit: sparse random traces
 * (runs of empty ticks between bursts, storms that collapse and return,
 * queues that drain or stick) under random windows, with and without a
 * fault, give the same summary fed either way; and each outcome is met. */
static void test_idle_is_empty_ticks(void **state) {
  trace *t = *state;
  uint64_t x = 12345;
  int seen[ENG_OUTCOME_UNDETERMINED + 1] = {0};
  for (int k = 0; k < 3000; k++) {
    int32_t T = 20 + below(&x, T_TICKS - 20);
    int32_t fs = below(&x, T), clear = fs + below(&x, T - fs + 1);
    int32_t be = 1 + below(&x, fs > 1 ? fs : 1), bb = below(&x, be);
    t->p.ticks = T;
    t->p.has_fault = below(&x, 4) != 0;
    t->p.fault_start = fs;
    t->p.clear = clear;
    t->p.base_begin = bb;
    t->p.base_end = t->p.has_fault ? be : T - below(&x, T / 4 + 1);
    if (t->p.base_end <= t->p.base_begin) t->p.base_end = t->p.base_begin + 1;
    t->p.warmup = below(&x, 50);
    t->p.hold = 1 + below(&x, 60);
    t->p.trend = 1 + below(&x, 200);
    t->p.collapse_window = 1 + below(&x, 80);
    t->p.queue_cap = below(&x, 3) ? INFINITY : 40;
    double density = (1 + below(&x, 9)) / 10.0;
    int32_t q = below(&x, 20);
    for (int32_t i = 0; i < T; i++) {
      int mode = below(&x, 100);
      int busy = below(&x, 1000) < (int)(density * 1000);
      t->good[i] = t->newr[i] = t->att[i] = t->waste[i] = 0;
      if (busy) {
        int32_t nw = 1 + below(&x, 5);
        t->newr[i] = nw;
        if (mode < 10) { /* a storm tick: retries, nothing good */
          t->att[i] = 4 * nw, t->waste[i] = nw, q += below(&x, 20);
        } else {
          t->good[i] = nw - (below(&x, 8) == 0), t->att[i] = nw, q -= below(&x, 4);
        }
      } else if (mode < 3) {
        q += below(&x, 3) - 1; /* a queue that moves with nothing counted */
      }
      if (q < 0) q = 0;
      t->queue[i] = q;
    }
    eng_summary a, b;
    stream_feed(t, 0, &a);
    stream_feed(t, 1, &b);
    if (memcmp(&a, &b, sizeof a))
      fail_msg("case %d (T %d, fault %d..%d): idle feeding changes the summary (outcome %d vs %d, "
               "recovery %g vs %g, collapse %g vs %g)",
               k, T, fs, clear, a.outcome, b.outcome, a.recovery_ms, b.recovery_ms, a.collapse_ms,
               b.collapse_ms);
    if (a.outcome >= 0 && a.outcome <= ENG_OUTCOME_UNDETERMINED) seen[a.outcome]++;
  }
  for (int o = 0; o <= ENG_OUTCOME_UNDETERMINED; o++)
    if (!seen[o]) fail_msg("no case ended %s: the check does not reach it", eng_outcome_name(o));
}

#define T(f) cmocka_unit_test_setup_teardown(f, trace_setup, trace_teardown)
int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_threshold_and_baseline_stats),
      T(test_threshold_uses_p99),
      T(test_threshold_capped_by_queue),
      T(test_linear_decay_exact_recovery),
      T(test_excursion_inside_hold_restarts),
      T(test_hold_must_fit_before_horizon),
      T(test_zero_goodput_is_not_recovered),
      T(test_stuck_backlog_zero_goodput_is_metastable),
      T(test_growing_backlog_low_goodput_is_metastable),
      T(test_draining_backlog_is_slow),
      T(test_settling_backlog_with_retries_is_metastable),
      T(test_stuck_backlog_good_goodput_is_slow),
      T(test_collapse_before_fault),
      T(test_collapse_without_fault),
      T(test_unhealthy_baseline_is_collapsed),
      T(test_short_tail_is_undetermined),
      T(test_slo_boundary),
      T(test_tick_ms_scales_recovery),
      T(test_idle_is_empty_ticks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
