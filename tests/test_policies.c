/*
 * test_policies.c — client and server policies (backoff, retry
 * budgets, circuit breakers, load shedding, failover, hot keys): each
 * mechanism alone through its module, then its effect in whole runs.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backoff.h"
#include "breaker.h"
#include "codel.h"
#include "eng.h"
#include "rng.h"
#include "router.h"

static void set(eng_config *c, const char *k, const char *v) {
  char err[256];
  if (eng_config_set(c, k, v, err, sizeof err)) {
    print_error("setting %s=%s: %s\n", k, v, err);
    fail();
  }
}

static int64_t metric_sum(const eng_run *r, eng_metric m) {
  const int32_t *x = eng_run_metric(r, m);
  int64_t s = 0;
  for (int32_t t = 0; t < eng_run_ticks(r); t++) s += x[t];
  return s;
}

static void simulate(eng_run *r, const eng_config *c, uint64_t seed, eng_summary *s) {
  char err[256];
  if (eng_run_simulate(r, c, seed, s, err, sizeof err)) {
    print_error("simulate: %s\n", err);
    fail();
  }
}

/* ---- backoff ---- */

static void test_backoff_bounds_and_means(void **state) {
  (void)state;
  eng_rng g;
  eng_rng_seed(&g, 1, 1);
  const double base = 10, cap = 1000;
  const int n = 200000;
  for (int retries = 0; retries < 12; retries++) {
    double v = fmin(cap, base * pow(2, retries));
    double sf = 0, se = 0;
    for (int i = 0; i < n; i++) {
      double f = eng_backoff_ms(ENG_BACKOFF_FULL, base, cap, 2, retries, 0, eng_rng_uniform(&g));
      double e = eng_backoff_ms(ENG_BACKOFF_EQUAL, base, cap, 2, retries, 0, eng_rng_uniform(&g));
      assert_true(f >= 0 && f <= v);
      assert_true(e >= v / 2 && e <= v);
      sf += f;
      se += e;
    }
    /* full jitter: U(0, v), mean v/2 (v = cap once base 2^n passes it) */
    double tol = 5 * v / sqrt(12.0 * n);
    if (fabs(sf / n - v / 2) > tol) {
      print_error("full jitter, %d retries: mean %.3f, want %.3f\n", retries, sf / n, v / 2);
      fail();
    }
    if (fabs(se / n - 0.75 * v) > tol) {
      print_error("equal jitter, %d retries: mean %.3f, want %.3f\n", retries, se / n, 0.75 * v);
      fail();
    }
  }
  /* decorrelated: within [base, min(cap, 3 prev)] */
  double prev = 0;
  for (int i = 0; i < 100000; i++) {
    double d = eng_backoff_ms(ENG_BACKOFF_DECORRELATED, base, cap, 2, i % 5, prev, eng_rng_uniform(&g));
    double hi = fmin(cap, 3 * (prev > 0 ? prev : base));
    assert_true(d >= fmin(base, cap) && d <= hi + 1e-9);
    prev = i % 5 == 4 ? 0 : d;
  }
  assert_true(eng_backoff_ms(ENG_BACKOFF_NONE, base, cap, 2, 3, 0, 0.9) == 0);
  assert_true(eng_backoff_ms(ENG_BACKOFF_FULL, base, 0, 2, 3, 0, 0.9) == 0); /* cap 0: immediate */
}

/* ---- circuit breaker, scripted ---- */

static void test_breaker_scripted(void **state) {
  (void)state;
  eng_breaker_params p = {.window = 10, .min_calls = 5, .probes = 2, .cooldown = 100,
                          .threshold = 0.5};
  eng_breaker b = {0};
  /* four failures: below min_calls, stays closed */
  for (int i = 0; i < 4; i++) assert_int_equal(eng_breaker_record(&b, &p, 10, 5, 1), 0);
  assert_int_equal(b.state, ENG_BRK_CLOSED);
  assert_true(eng_breaker_allow(&b, &p, 10));
  /* the fifth opens it (5/5 >= 0.5) */
  assert_int_equal(eng_breaker_record(&b, &p, 10, 5, 1), 1);
  assert_int_equal(b.state, ENG_BRK_OPEN);
  assert_false(eng_breaker_allow(&b, &p, 50));
  assert_true(eng_breaker_refuses(&b, &p, 109));
  /* late answers to calls made before it opened change nothing */
  assert_int_equal(eng_breaker_record(&b, &p, 60, 9, 0), 0);
  assert_int_equal(b.state, ENG_BRK_OPEN);
  /* cool-down over: half-open lets exactly `probes` calls through */
  assert_false(eng_breaker_refuses(&b, &p, 110));
  assert_true(eng_breaker_allow(&b, &p, 110));
  assert_int_equal(b.state, ENG_BRK_HALF_OPEN);
  assert_true(eng_breaker_allow(&b, &p, 110));
  assert_false(eng_breaker_allow(&b, &p, 111));
  assert_true(eng_breaker_refuses(&b, &p, 111));
  /* a failed probe opens it again for a new cool-down */
  assert_int_equal(eng_breaker_record(&b, &p, 120, 110, 1), 0);
  assert_int_equal(b.state, ENG_BRK_OPEN);
  assert_false(eng_breaker_allow(&b, &p, 219));
  assert_true(eng_breaker_allow(&b, &p, 220));
  assert_true(eng_breaker_allow(&b, &p, 220));
  /* two successful probes close it with an empty window */
  assert_int_equal(eng_breaker_record(&b, &p, 225, 220, 0), 0);
  assert_int_equal(b.state, ENG_BRK_HALF_OPEN);
  assert_int_equal(eng_breaker_record(&b, &p, 226, 220, 0), -1);
  assert_int_equal(b.state, ENG_BRK_CLOSED);
  assert_int_equal(b.n, 0);
  /* one failure in five (20% < 50%): stays closed however long it runs */
  for (int i = 0; i < 100; i++)
    assert_int_equal(eng_breaker_record(&b, &p, 300 + i, 300 + i, (i % 5) == 0), 0);
  assert_int_equal(b.state, ENG_BRK_CLOSED);
  /* exactly the threshold opens it: S F S F S F S F S F = 5/10 */
  eng_breaker t = {0};
  int opened = 0;
  for (int i = 0; i < 10; i++) opened += eng_breaker_record(&t, &p, 500, 490, i % 2);
  assert_int_equal(opened, 1);
  assert_int_equal(t.state, ENG_BRK_OPEN);
  /* old failures slide out of the window: with min_calls 10, 4 failures then
   * 10 successes, then 4 failures are 4/10 again, not 8/18 */
  eng_breaker_params p10 = p;
  p10.min_calls = 10;
  eng_breaker c = {0};
  for (int i = 0; i < 4; i++) assert_int_equal(eng_breaker_record(&c, &p10, 0, 0, 1), 0);
  for (int i = 0; i < 10; i++) assert_int_equal(eng_breaker_record(&c, &p10, 0, 0, 0), 0);
  for (int i = 0; i < 4; i++) assert_int_equal(eng_breaker_record(&c, &p10, 0, 0, 1), 0);
  assert_int_equal(c.state, ENG_BRK_CLOSED);
  assert_int_equal(eng_breaker_record(&c, &p10, 0, 0, 1), 1); /* the fifth: 5/10 */
}

/* Answers to calls sent before the breaker opened are
 * stale in half-open too. Three of them used to close a breaker that had
 * let one probe through; only the probes' answers count. */
static void test_breaker_ignores_stale_answers_in_half_open(void **state) {
  (void)state;
  eng_breaker_params p = {.window = 10, .min_calls = 5, .probes = 3, .cooldown = 100,
                          .threshold = 0.5};
  eng_breaker b = {0};
  for (int i = 0; i < 5; i++) eng_breaker_record(&b, &p, 10, 8, 1);
  assert_int_equal(b.state, ENG_BRK_OPEN);
  assert_true(eng_breaker_allow(&b, &p, 110)); /* one probe */
  assert_int_equal(b.state, ENG_BRK_HALF_OPEN);
  /* three late successes of calls sent at tick 9, before it opened */
  for (int i = 0; i < 3; i++) assert_int_equal(eng_breaker_record(&b, &p, 111, 9, 0), 0);
  assert_int_equal(b.state, ENG_BRK_HALF_OPEN);
  /* nor does a stale failure reopen it */
  assert_int_equal(eng_breaker_record(&b, &p, 111, 10, 1), 0);
  assert_int_equal(b.state, ENG_BRK_HALF_OPEN);
  /* the probes' own answers do */
  assert_true(eng_breaker_allow(&b, &p, 112));
  assert_true(eng_breaker_allow(&b, &p, 112));
  assert_int_equal(eng_breaker_record(&b, &p, 115, 110, 0), 0);
  assert_int_equal(eng_breaker_record(&b, &p, 116, 112, 0), 0);
  assert_int_equal(eng_breaker_record(&b, &p, 117, 112, 0), -1);
  assert_int_equal(b.state, ENG_BRK_CLOSED);
  /* after closing, a pre-open straggler is still stale: the window stays empty */
  assert_int_equal(eng_breaker_record(&b, &p, 118, 9, 1), 0);
  assert_int_equal(b.n, 0);
  /* a zero cool-down still keeps the breaker open for one tick, so a call
   * sent in the tick it opened cannot pass for a probe */
  eng_breaker_params p0 = p;
  p0.cooldown = 0;
  eng_breaker z = {0};
  for (int i = 0; i < 5; i++) eng_breaker_record(&z, &p0, 20, 20, 1);
  assert_int_equal(z.state, ENG_BRK_OPEN);
  assert_false(eng_breaker_allow(&z, &p0, 20));
  assert_true(eng_breaker_allow(&z, &p0, 21));
  assert_int_equal(eng_breaker_record(&z, &p0, 21, 20, 0), 0);
  assert_int_equal(z.probes_ok, 0);
}

/* resilience4j's half-open rule (breaker_halfopen = failure_rate): the
 * permitted probes all answer before anything is decided, then the failure
 * rate over them decides. The three orders of one failure in three probes,
 * against today's any_failure rule, at thresholds on either side of 1/3. */
static int probe_sequence(int halfopen, double threshold, const char *seq, int *decided_at) {
  eng_breaker_params p = {.window = 10, .min_calls = 5, .probes = 3, .cooldown = 100,
                          .halfopen = halfopen, .threshold = threshold};
  eng_breaker b = {0};
  for (int i = 0; i < 5; i++) eng_breaker_record(&b, &p, 10, 10, 1);
  assert_int_equal(b.state, ENG_BRK_OPEN);
  for (int i = 0; i < 3; i++) assert_true(eng_breaker_allow(&b, &p, 110));
  assert_false(eng_breaker_allow(&b, &p, 110)); /* three permits, no more */
  *decided_at = -1;
  for (int i = 0; seq[i]; i++) {
    int d = eng_breaker_record(&b, &p, 120 + i, 110, seq[i] == 'f');
    if (*decided_at < 0 && b.state != ENG_BRK_HALF_OPEN) *decided_at = i;
    if (d == -1) assert_int_equal(b.state, ENG_BRK_CLOSED);
  }
  return b.state;
}

static void test_breaker_halfopen_failure_rate(void **state) {
  (void)state;
  const char *seqs[] = {"fss", "sfs", "ssf"};
  for (int k = 0; k < 3; k++) {
    int at;
    /* resilience4j, threshold 50 %: 1 of 3 is below it, so all close, after the third */
    int st = probe_sequence(ENG_BREAKER_HALFOPEN_FAILURE_RATE, 0.5, seqs[k], &at);
    if (st != ENG_BRK_CLOSED || at != 2) {
      print_error("failure_rate 0.5, %s: state %d decided at probe %d, want closed at 2\n",
                  seqs[k], st, at);
      fail();
    }
    /* threshold 30 %: 1 of 3 reaches it: all open again, still after the third */
    st = probe_sequence(ENG_BREAKER_HALFOPEN_FAILURE_RATE, 0.3, seqs[k], &at);
    if (st != ENG_BRK_OPEN || at != 2) {
      print_error("failure_rate 0.3, %s: state %d decided at probe %d, want open at 2\n",
                  seqs[k], st, at);
      fail();
    }
    /* any_failure: open at the failed probe itself */
    st = probe_sequence(ENG_BREAKER_HALFOPEN_ANY_FAILURE, 0.5, seqs[k], &at);
    if (st != ENG_BRK_OPEN || at != k) {
      print_error("any_failure, %s: state %d decided at probe %d, want open at %d\n", seqs[k],
                  st, at, k);
      fail();
    }
  }
  /* all three fine closes under both rules; two failures of three open both */
  int at;
  assert_int_equal(probe_sequence(ENG_BREAKER_HALFOPEN_FAILURE_RATE, 0.5, "sss", &at),
                   ENG_BRK_CLOSED);
  assert_int_equal(probe_sequence(ENG_BREAKER_HALFOPEN_ANY_FAILURE, 0.5, "sss", &at),
                   ENG_BRK_CLOSED);
  assert_int_equal(probe_sequence(ENG_BREAKER_HALFOPEN_FAILURE_RATE, 0.5, "fsf", &at),
                   ENG_BRK_OPEN);
  /* a released permit (a cancelled probe) lets another call probe */
  eng_breaker_params p = {.window = 10, .min_calls = 5, .probes = 2, .cooldown = 100,
                          .halfopen = ENG_BREAKER_HALFOPEN_FAILURE_RATE, .threshold = 0.5};
  eng_breaker b = {0};
  for (int i = 0; i < 5; i++) eng_breaker_record(&b, &p, 10, 10, 1);
  assert_true(eng_breaker_allow(&b, &p, 110));
  assert_true(eng_breaker_allow(&b, &p, 110));
  assert_false(eng_breaker_allow(&b, &p, 111));
  eng_breaker_release(&b, 110);
  eng_breaker_release(&b, 9); /* a call from before it opened holds no permit */
  assert_true(eng_breaker_allow(&b, &p, 112));
  assert_false(eng_breaker_allow(&b, &p, 112));
  assert_int_equal(eng_breaker_record(&b, &p, 113, 110, 0), 0);
  assert_int_equal(eng_breaker_record(&b, &p, 114, 112, 0), -1);
  assert_int_equal(b.state, ENG_BRK_CLOSED);
}

/* Probe counters were 8 bits, so with breaker_probes >=
 * 256 a half-open breaker never closed and probes stopped being limited. */
static void test_breaker_many_probes(void **state) {
  (void)state;
  eng_breaker_params p = {.window = 10, .min_calls = 5, .probes = 1000, .cooldown = 10,
                          .threshold = 0.5};
  eng_breaker b = {0};
  for (int i = 0; i < 5; i++) eng_breaker_record(&b, &p, 0, 0, 1);
  for (int i = 0; i < 1000; i++) assert_true(eng_breaker_allow(&b, &p, 10));
  assert_false(eng_breaker_allow(&b, &p, 10)); /* the 1001st is refused */
  for (int i = 0; i < 999; i++) assert_int_equal(eng_breaker_record(&b, &p, 11, 10, 0), 0);
  assert_int_equal(b.state, ENG_BRK_HALF_OPEN);
  assert_int_equal(eng_breaker_record(&b, &p, 11, 10, 0), -1);
  assert_int_equal(b.state, ENG_BRK_CLOSED);

  /* the failing run: one client, breaker_probes 256 — every breaker closes
   * again after the storm, as with 255 */
  eng_run *r = eng_run_create();
  for (int probes = 255; probes <= 256; probes++) {
    eng_config c;
    eng_config_defaults(&c);
    set(&c, "clients", "1");
    set(&c, "breaker", "fail_fast");
    set(&c, "breaker_cooldown_ms", "200");
    char v[16];
    snprintf(v, sizeof v, "%d", probes);
    set(&c, "breaker_probes", v);
    eng_summary s;
    simulate(r, &c, 1, &s);
    const int32_t *open = eng_run_metric(r, ENG_M_OPEN_BREAKERS);
    int32_t peak = 0;
    for (int32_t t = 0; t < eng_run_ticks(r); t++) peak = open[t] > peak ? open[t] : peak;
    assert_true(peak > 0);
    if (open[eng_run_ticks(r) - 1] != 0) {
      print_error("breaker_probes %d: %d breakers open at the last tick\n", probes,
                  open[eng_run_ticks(r) - 1]);
      fail();
    }
  }
  eng_run_destroy(r);
}

/* ---- folly's Codel ---- */

/* folly's own CodelTest (folly/executors/test/CodelTest.cpp) in ticks of
 * 1 ms, with its defaults (target 5 ms, interval 100 ms): each sleep_for
 * becomes a jump of the clock (a real sleep overshoots, so a jump that
 * lands exactly on an interval's end is one tick later). */
static void test_codel_folly_sequences(void **state) {
  (void)state;
  eng_codel_folly c;
  /* Basic */
  eng_codel_folly_init(&c);
  assert_int_equal(eng_codel_folly_shed(&c, 110, 100, 5, 100), 0); /* this interval is overloaded */
  assert_int_equal(eng_codel_folly_shed(&c, 200, 50, 5, 100), 0); /* two requests before a drop */
  assert_int_equal(eng_codel_folly_shed(&c, 200, 50, 5, 100), 1);
  assert_int_equal(eng_codel_folly_shed(&c, 310, 2, 5, 100), 0);  /* 2 ms is not enough */
  assert_int_equal(eng_codel_folly_shed(&c, 400, 20, 5, 100), 1); /* 20 > 2 x target */
  /* mediumLoad, reducingLoad, oneRequestNoDrop */
  eng_codel_folly_init(&c);
  eng_codel_folly_shed(&c, 0, 20, 5, 100);
  assert_int_equal(eng_codel_folly_shed(&c, 90, 8, 5, 100), 0);
  eng_codel_folly_init(&c);
  eng_codel_folly_shed(&c, 0, 20, 5, 100);
  assert_int_equal(eng_codel_folly_shed(&c, 90, 4, 5, 100), 0);
  eng_codel_folly_init(&c);
  assert_int_equal(eng_codel_folly_shed(&c, 0, 20, 5, 100), 0);
  /* updateTargetDelay: 40 ms under a 40 ms target, then under 5 ms */
  eng_codel_folly_init(&c);
  eng_codel_folly_shed(&c, 0, 40, 5, 100);
  assert_int_equal(eng_codel_folly_shed(&c, 0, 40, 40, 100), 0);
  assert_int_equal(eng_codel_folly_shed(&c, 110, 40, 5, 100), 0);
  assert_int_equal(eng_codel_folly_shed(&c, 110, 40, 5, 100), 1);
  /* updateInterval: overloaded, then the interval becomes 200 ms */
  eng_codel_folly_init(&c);
  eng_codel_folly_shed(&c, 0, 50, 5, 100);
  assert_int_equal(eng_codel_folly_shed(&c, 110, 50, 5, 100), 0);
  assert_int_equal(eng_codel_folly_shed(&c, 110, 50, 5, 100), 1);
  assert_int_equal(eng_codel_folly_shed(&c, 211, 20, 5, 200), 0);
  assert_int_equal(eng_codel_folly_shed(&c, 211, 20, 5, 200), 1);
  /* strictly more than twice the target, and than the target for overload */
  eng_codel_folly_init(&c);
  eng_codel_folly_shed(&c, 0, 6, 5, 100);
  assert_int_equal(eng_codel_folly_shed(&c, 101, 50, 5, 100), 0); /* min 6 > 5: overloaded */
  assert_int_equal(eng_codel_folly_shed(&c, 102, 10, 5, 100), 0); /* 10 is not > 10 */
  assert_int_equal(eng_codel_folly_shed(&c, 103, 11, 5, 100), 1);
  eng_codel_folly_init(&c);
  eng_codel_folly_shed(&c, 0, 5, 5, 100);
  assert_int_equal(eng_codel_folly_shed(&c, 101, 50, 5, 100), 0); /* min 5 is not > 5 */
  assert_int_equal(eng_codel_folly_shed(&c, 102, 50, 5, 100), 0);
  /* a target above the interval counts as the interval */
  eng_codel_folly_init(&c);
  eng_codel_folly_shed(&c, 0, 30, 50, 20);
  eng_codel_folly_shed(&c, 21, 30, 50, 20);
  assert_int_equal(eng_codel_folly_shed(&c, 22, 41, 50, 20), 1);
}

/* In a run: no shedding while the cluster is healthy (queueing delays stay
 * far below the target before the fault), shedding in the storm, and the
 * variants differ (folly keeps shedding for a whole interval, Fail at
 * Scale's stops at the first attempt that waited less than the target). */
static void test_codel_folly_in_a_run(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  int64_t shed[2];
  const char *variants[] = {"fail_at_scale", "folly"};
  for (int v = 0; v < 2; v++) {
    eng_config c;
    eng_config_defaults(&c);
    set(&c, "codel_target_ms", "5");
    set(&c, "codel_variant", variants[v]);
    set(&c, "surge_factor", "3");
    set(&c, "horizon_ms", "5000");
    eng_summary s;
    simulate(r, &c, 5, &s);
    const int32_t *m = eng_run_metric(r, ENG_M_SHED);
    int64_t before = 0;
    for (int32_t t = 0; t < 2000; t++) before += m[t];
    shed[v] = metric_sum(r, ENG_M_SHED);
    print_message("codel %s: %lld shed (%lld before the fault)\n", variants[v],
                  (long long)shed[v], (long long)before);
    assert_int_equal(before, 0);
    assert_true(shed[v] > 0);
  }
  assert_true(shed[1] != shed[0]);
  eng_run_destroy(r);
}

/* ---- retry budget in whole runs ---- */

/* Every attempt fails (a network outage for the whole run): each request
 * wants max_retries retries, and the budget lets through about ratio x first
 * attempts plus the buckets' initial fill. */
static void test_budget_caps_retries(void **state) {
  (void)state;
  const double ratios[] = {0.05, 0.1, 0.5};
  eng_run *r = eng_run_create();
  for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
    eng_config c;
    eng_config_defaults(&c);
    set(&c, "surge", "none");
    set(&c, "brownout", "none");
    set(&c, "outage", "0+10000");
    set(&c, "load", "0.3");
    char v[32];
    snprintf(v, sizeof v, "%g", ratios[i]);
    set(&c, "budget_ratio", v);
    eng_summary s;
    simulate(r, &c, 7, &s);
    int64_t first = metric_sum(r, ENG_M_NEW_REQUESTS);
    int64_t retries = metric_sum(r, ENG_M_RETRIES);
    double bound = ratios[i] * (double)first + c.clients * c.budget_max_tokens;
    if (!((double)retries <= bound + 1 && (double)retries >= 0.9 * ratios[i] * (double)first)) {
      print_error("ratio %g: %lld retries for %lld first attempts (bound %.0f)\n", ratios[i],
                  (long long)retries, (long long)first, bound);
      fail();
    }
    assert_true(metric_sum(r, ENG_M_REJ_BUDGET) > 0);
    assert_int_equal(metric_sum(r, ENG_M_SUCCESSES), 0);
  }
  /* no budget: every request makes all its retries */
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "surge", "none");
  set(&c, "brownout", "none");
  set(&c, "outage", "0+10000");
  set(&c, "load", "0.3");
  eng_summary s;
  simulate(r, &c, 7, &s);
  assert_int_equal(metric_sum(r, ENG_M_REJ_BUDGET), 0);
  assert_true(s.amplification > 3.9);
  eng_run_destroy(r);
}

/* ---- breakers in whole runs ---- */

static void test_breakers_open_and_close_in_a_run(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "breaker", "fail_fast");
  set(&c, "breaker_cooldown_ms", "200");
  eng_summary s;
  simulate(r, &c, 3, &s);
  const int32_t *open = eng_run_metric(r, ENG_M_OPEN_BREAKERS);
  int32_t peak = 0;
  for (int32_t t = 0; t < eng_run_ticks(r); t++) peak = open[t] > peak ? open[t] : peak;
  assert_int_equal(open[1999], 0);               /* none before the faults */
  assert_true(peak > 0);                          /* they open in the storm */
  assert_int_equal(open[eng_run_ticks(r) - 1], 0); /* and all close again */
  assert_true(metric_sum(r, ENG_M_REJ_BREAKER) > 0);
  assert_int_equal(s.outcome, ENG_OUTCOME_RECOVERED);
  eng_run_destroy(r);
}

/* ---- load shedding ---- */

static void test_codel_only_under_standing_queue(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "codel_target_ms", "5");
  set(&c, "codel_interval_ms", "100");
  set(&c, "surge", "none");
  set(&c, "brownout", "none");
  eng_summary s;
  simulate(r, &c, 5, &s);
  assert_int_equal(metric_sum(r, ENG_M_SHED), 0); /* 0.7 load: queues come and go */

  /* a stalled shard builds a standing queue when nothing routes around it */
  set(&c, "brownout", "2000+500");
  set(&c, "capacity_factor", "inf");
  set(&c, "record_shard_queues", "on");
  simulate(r, &c, 5, &s);
  int64_t shed = metric_sum(r, ENG_M_SHED);
  assert_true(shed > 0);
  /* every drop comes after at least an interval of non-empty queue */
  const int32_t *sh = eng_run_metric(r, ENG_M_SHED);
  const int32_t *mq = eng_run_metric(r, ENG_M_MAX_SHARD_QUEUE);
  for (int32_t t = 0; t < eng_run_ticks(r); t++) {
    if (!sh[t]) continue;
    assert_true(t >= 100);
    for (int32_t u = t - 100; u < t; u++) assert_true(mq[u] > 0);
  }
  eng_run_destroy(r);
}

static void test_deadline_drop_and_lifo(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "policy", "guarded");
  set(&c, "deadline_drop", "off"); /* the baseline: guarded's client side alone */
  eng_summary fifo, drop, lifo;
  simulate(r, &c, 2, &fifo);
  int64_t wasted_fifo = metric_sum(r, ENG_M_WASTED);
  set(&c, "deadline_drop", "on");
  simulate(r, &c, 2, &drop);
  assert_true(metric_sum(r, ENG_M_SHED) > 0);
  int64_t wasted_drop = metric_sum(r, ENG_M_WASTED);
  if (!(wasted_drop < wasted_fifo / 4)) {
    print_error("wasted completions: %lld with deadline drop, %lld without\n",
                (long long)wasted_drop, (long long)wasted_fifo);
    fail();
  }
  assert_true(drop.recovery_ms < fifo.recovery_ms);
  set(&c, "deadline_drop", "off");
  set(&c, "queue_discipline", "lifo");
  simulate(r, &c, 2, &lifo);
  /* newest first: fresh requests are answered during the backlog */
  if (!(lifo.goodput_after > fifo.goodput_after)) {
    print_error("goodput after: lifo %.3f, fifo %.3f\n", lifo.goodput_after, fifo.goodput_after);
    fail();
  }
  set(&c, "queue_discipline", "adaptive_lifo");
  eng_summary alifo;
  simulate(r, &c, 2, &alifo);
  assert_true(alifo.goodput_after > fifo.goodput_after);
  eng_run_destroy(r);
}

/* ---- failover: the ring ---- */

static void test_crash_moves_only_that_shards_keys(void **state) {
  (void)state;
  const int32_t shards = 8, vnodes = 50, dead = 3;
  const uint32_t seed = 77;
  eng_ring full = {0}, less = {0}, back = {0};
  uint8_t healthy[8];
  memset(healthy, 1, sizeof healthy);
  assert_int_equal(eng_ring_build(&full, shards, vnodes, healthy, seed), 0);
  healthy[dead] = 0;
  assert_int_equal(eng_ring_build(&less, shards, vnodes, healthy, seed), 0);
  healthy[dead] = 1;
  assert_int_equal(eng_ring_build(&back, shards, vnodes, healthy, seed), 0);
  eng_rng g;
  eng_rng_seed(&g, 1, 1);
  int moved = 0;
  const int keys = 100000;
  for (int k = 0; k < keys; k++) {
    uint32_t h = eng_key_hash(eng_rng_next(&g), seed);
    int32_t i = eng_ring_find(&full, h);
    uint32_t owner = full.points[i].shard;
    uint32_t now = less.points[eng_ring_find(&less, h)].shard;
    if (owner != (uint32_t)dead) {
      assert_int_equal(now, owner); /* only the dead shard's keys move */
    } else {
      /* to the first live point clockwise on the full ring */
      int32_t j = i;
      while (full.points[j].shard == (uint32_t)dead) j = (j + 1) % full.count;
      assert_int_equal(now, full.points[j].shard);
      moved++;
    }
    assert_int_equal(back.points[eng_ring_find(&back, h)].shard, owner); /* rejoin */
  }
  /* about 1/shards of the keys moved */
  double share = (double)moved / keys;
  assert_true(share > 0.5 / shards && share < 2.0 / shards);
  eng_ring_free(&full);
  eng_ring_free(&less);
  eng_ring_free(&back);
}

static void test_crash_in_a_run(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "surge", "none");
  set(&c, "brownout", "none");
  set(&c, "crash", "2000+1000");
  set(&c, "crash_detect_ms", "50");
  set(&c, "policy", "guarded");
  eng_summary s;
  simulate(r, &c, 4, &s);
  const int32_t *lost = eng_run_metric(r, ENG_M_LOST);
  int64_t before_detect = 0, after_detect = 0;
  for (int32_t t = 2000; t < 2050; t++) before_detect += lost[t];
  for (int32_t t = 2060; t < 3000; t++) after_detect += lost[t];
  assert_true(before_detect > 0);   /* sent to the dead shard until detected */
  assert_int_equal(after_detect, 0); /* then its keys walk on */
  assert_true(s.keys_remapped > 0.2 / c.shards && s.keys_remapped < 3.0 / c.shards);
  assert_true(s.successor_peak_load > 1);
  assert_int_equal(s.outcome, ENG_OUTCOME_RECOVERED);
  eng_run_destroy(r);
}

/* ---- hot keys and bounded load ---- */

static void test_hot_key_bounded_load(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "surge", "none");
  set(&c, "brownout", "none");
  set(&c, "hot_key", "2000+2000");
  set(&c, "hot_key_share", "0.3");
  set(&c, "policy", "guarded");
  set(&c, "capacity_factor", "inf");
  eng_summary plain, bounded;
  simulate(r, &c, 6, &plain);
  set(&c, "capacity_factor", "1.25");
  simulate(r, &c, 6, &bounded);
  /* a 30% hot key overloads its shard under plain consistent hashing (its
   * queue fills); bounded load spreads the key over the ring instead */
  if (!(bounded.max_mean_shard_load < plain.max_mean_shard_load)) {
    print_error("max/mean shard load: bounded %.3f, plain %.3f\n", bounded.max_mean_shard_load,
                plain.max_mean_shard_load);
    fail();
  }
  assert_true(bounded.mean_hops > plain.mean_hops);
  assert_true(plain.peak_queue > 500);
  assert_true(bounded.peak_queue < 100);
  assert_int_equal(bounded.outcome, ENG_OUTCOME_RECOVERED);
  eng_run_destroy(r);
}

/* ---- the seed study's two policies over 20 seeds ---- */

static void test_seed_policies_over_20_seeds(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  int naive_meta = 0, guarded_recovered = 0, guarded_passed = 0;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    eng_config c;
    eng_config_defaults(&c);
    eng_summary s;
    set(&c, "policy", "naive");
    simulate(r, &c, seed, &s);
    naive_meta += s.outcome == ENG_OUTCOME_METASTABLE;
    set(&c, "policy", "guarded");
    simulate(r, &c, seed, &s);
    guarded_recovered += s.outcome == ENG_OUTCOME_RECOVERED;
    guarded_passed += s.passed_slo != 0;
  }
  assert_true(naive_meta >= 19);
  assert_true(guarded_recovered >= 19);
  /* guarded (with deadline_drop) passes the 1.5 s SLO in nearly
   * every replicate. */
  if (guarded_passed < 19) fail_msg("guarded passed the SLO in %d of 20 seeds", guarded_passed);
  eng_run_destroy(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backoff_bounds_and_means),
      cmocka_unit_test(test_breaker_scripted),
      cmocka_unit_test(test_breaker_halfopen_failure_rate),
      cmocka_unit_test(test_codel_folly_sequences),
      cmocka_unit_test(test_codel_folly_in_a_run),
      cmocka_unit_test(test_breaker_ignores_stale_answers_in_half_open),
      cmocka_unit_test(test_breaker_many_probes),
      cmocka_unit_test(test_budget_caps_retries),
      cmocka_unit_test(test_breakers_open_and_close_in_a_run),
      cmocka_unit_test(test_codel_only_under_standing_queue),
      cmocka_unit_test(test_deadline_drop_and_lifo),
      cmocka_unit_test(test_crash_moves_only_that_shards_keys),
      cmocka_unit_test(test_crash_in_a_run),
      cmocka_unit_test(test_hot_key_bounded_load),
      cmocka_unit_test(test_seed_policies_over_20_seeds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
