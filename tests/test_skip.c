/*
 * test_skip.c — the engine's skip over empty ticks (engine/sim.c skip_empty)
 * changes nothing: every scenario runs twice, on a context that may skip and
 * on one that runs every tick (eng_run_set_skipping(run, 0)), and the two
 * runs must agree byte for byte in every per-tick metric, the shard-queue
 * matrix, the latency series and phases, the user recovery time and the
 * whole summary.
 *
 * The scenarios are sparse (0.05-0.5 arrivals per tick, where most ticks are
 * empty and skipped) with each mechanism a skip must stop for or carry
 * across: timeouts with retries and backoff, a brownout, a crash with
 * failover, an outage, a surge (whose rate crosses the Poisson draw's
 * inversion limit), the token bucket, breakers, CoDel, short latency
 * windows and the shard-queue matrix; then a dense run and configurations
 * that rule skipping out, which must not change either. Both contexts run
 * all scenarios in turn, so each run also starts from buffers another
 * configuration dirtied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eng.h"

typedef struct setting {
  const char *key, *value;
} setting;

#define MAX_SETTINGS 16
typedef struct scenario {
  const char *name;
  setting set[MAX_SETTINGS];
} scenario;

/* The common base of the sparse scenarios: a small cluster at a few
 * arrivals per ten ticks. */
static const setting sparse_base[] = {
    {"surge", "none"},       {"brownout", "none"},      {"shards", "4"},
    {"workers", "1"},        {"service_mean_ms", "20"}, {"load", "0.5"},
    {"horizon_ms", "12000"}, {"clients", "8"},          {NULL, NULL},
};

static const scenario scenarios[] = {
    {"mm1 sparse (0.09 per tick)",
     {{"shards", "1"}, {"load", "0.9"}, {"service_mean_ms", "10"}, {"timeout_ms", "1e9"},
      {"max_retries", "0"}, {"horizon_ms", "30000"}}},
    {"mm1 very sparse (0.05 per tick)",
     {{"shards", "1"}, {"load", "0.5"}, {"service_mean_ms", "10"}, {"timeout_ms", "1e9"},
      {"max_retries", "0"}}},
    {"timeouts, retries, backoff (0.2 per tick)",
     {{"timeout_ms", "30"}, {"max_retries", "3"}, {"backoff", "full"},
      {"backoff_base_ms", "5"}, {"backoff_cap_ms", "200"}}},
    {"decorrelated backoff, 0.5 per tick",
     {{"service_mean_ms", "8"}, {"workers", "1"}, {"load", "0.95"}, {"timeout_ms", "25"},
      {"max_retries", "5"}, {"backoff", "decorrelated"}}},
    {"brownout",
     {{"brownout", "3000+3000"}, {"brownout_factor", "0.2"}, {"timeout_ms", "60"},
      {"max_retries", "2"}}},
    {"brownout stall",
     {{"brownout", "3000+1000 7000+500"}, {"brownout_factor", "0"}, {"timeout_ms", "80"}}},
    {"crash with failover",
     {{"crash", "3000+2000"}, {"crash_detect_ms", "300"}, {"timeout_ms", "50"},
      {"max_retries", "3"}, {"backoff", "equal"}}},
    {"outage",
     {{"outage", "4000+700"}, {"timeout_ms", "40"}, {"max_retries", "3"}}},
    {"surge across the inversion limit",
     {{"surge", "3000+1500"}, {"surge_factor", "60"}, {"load", "0.3"}, {"shards", "16"},
      {"workers", "4"}, {"timeout_ms", "50"}}},
    {"token bucket budget",
     {{"brownout", "2000+4000"}, {"brownout_factor", "0.1"}, {"timeout_ms", "30"},
      {"max_retries", "3"}, {"budget_ratio", "0.1"}, {"budget_max_tokens", "5"}}},
    {"breakers next_shard",
     {{"brownout", "2000+4000"}, {"brownout_factor", "0.05"}, {"timeout_ms", "30"},
      {"breaker", "next_shard"}, {"breaker_cooldown_ms", "400"}, {"max_retries", "2"}}},
    {"breakers fail_fast, failure rate",
     {{"crash", "3000+2000"}, {"breaker", "fail_fast"}, {"breaker_halfopen", "failure_rate"},
      {"breaker_cooldown_ms", "150"}, {"timeout_ms", "40"}}},
    {"codel and deadline drop",
     {{"load", "0.9"}, {"codel_target_ms", "10"}, {"codel_interval_ms", "50"},
      {"deadline_drop", "on"}, {"timeout_ms", "60"}, {"brownout", "3000+2000"},
      {"brownout_factor", "0.3"}}},
    {"codel rfc8289",
     {{"load", "0.9"}, {"codel_target_ms", "5"}, {"codel_variant", "rfc8289"},
      {"brownout", "3000+2000"}, {"brownout_factor", "0.3"}}},
    {"shard queues, short latency windows",
     {{"record_shard_queues", "on"}, {"latency_window_ms", "7"}, {"crash", "4000+1000"},
      {"outage", "8000+300"}, {"hot_key", "6000+500"}, {"timeout_ms", "35"}}},
    {"no arrivals", {{"load", "0"}, {"horizon_ms", "3000"}}},
    {"coarse ticks, lifo",
     {{"tick_ms", "5"}, {"queue_discipline", "lifo"}, {"timeout_ms", "100"},
      {"queue_capacity", "3"}}},
};

/* Dense or not skippable: must not change either. */
static const scenario others[] = {
    {"seed study", {{NULL, NULL}}},
    {"seed study guarded", {{"policy", "guarded"}}},
    {"closed users", {{"client_model", "closed"}, {"think_ms", "50"}}},
    {"grpc limiter", {{"retry_limiter", "grpc"}, {"timeout_ms", "30"}}},
    {"request mode, hedges", {{"hedge_attempts", "2"}, {"hedge_delay_ms", "5"}}},
};

static void cfg_set(eng_config *c, const char *key, const char *value, const char *what) {
  char err[512] = "";
  if (eng_config_set(c, key, value, err, sizeof err))
    fail_msg("%s: set %s=%s: %s", what, key, value, err);
}

static void cfg_build(eng_config *c, const scenario *s, int sparse) {
  eng_config_defaults(c);
  if (sparse)
    for (const setting *b = sparse_base; b->key; b++) cfg_set(c, b->key, b->value, s->name);
  for (int k = 0; k < MAX_SETTINGS && s->set[k].key; k++)
    cfg_set(c, s->set[k].key, s->set[k].value, s->name);
}

static int same_bytes(const void *a, const void *b, size_t n) {
  return !a == !b && (!a || !memcmp(a, b, n));
}

/* The first summary field that differs, by name, for the failure message. */
static void summary_diff(const eng_summary *a, const eng_summary *b, const char *what) {
#define DIFF(f)                                                                            \
  if (memcmp(&a->f, &b->f, sizeof a->f)) fail_msg("%s: summary." #f " differs", what)
  DIFF(outcome);
  DIFF(passed_slo);
  DIFF(recovery_ms);
  DIFF(baseline_queue);
  DIFF(peak_queue);
  DIFF(amplification);
  DIFF(amplification_after);
  DIFF(goodput_baseline);
  DIFF(goodput_during);
  DIFF(goodput_after);
  DIFF(late_queue_trend);
  DIFF(max_mean_shard_load);
  DIFF(mean_hops);
  DIFF(little_L);
  DIFF(little_lambda_w);
  DIFF(little_w_ms);
  DIFF(successor_peak_load);
  DIFF(new_requests);
  DIFF(attempts);
  DIFF(successes);
  DIFF(failed_requests);
  DIFF(events);
  DIFF(collapse_ms);
  DIFF(late_goodput);
  DIFF(drain_ms);
  DIFF(user);
  DIFF(user_recovery_ms);
#undef DIFF
  fail_msg("%s: summaries differ (in a field not listed here)", what);
}

/* Runs c on both contexts and fails at the first byte where they differ. */
static void expect_identical(eng_run *skip, eng_run *every, const eng_config *c, uint64_t seed,
                             const char *what) {
  char err[512] = "";
  eng_summary s1, s2;
  if (eng_run_simulate(skip, c, seed, &s1, err, sizeof err))
    fail_msg("%s: %s", what, err);
  if (eng_run_simulate(every, c, seed, &s2, err, sizeof err))
    fail_msg("%s: %s", what, err);
  const size_t T = (size_t)eng_run_ticks(skip);
  assert_int_equal(T, (size_t)eng_run_ticks(every));
  for (int m = 0; m < ENG_M_COUNT; m++) {
    const int32_t *x = eng_run_metric(skip, (eng_metric)m);
    const int32_t *y = eng_run_metric(every, (eng_metric)m);
    assert_non_null(x);
    assert_non_null(y);
    if (!memcmp(x, y, T * sizeof *x)) continue;
    size_t t = 0;
    while (x[t] == y[t]) t++;
    fail_msg("%s (seed %llu): metric %s differs at tick %zu: %d skipping, %d every tick", what,
             (unsigned long long)seed, eng_metric_get_info((eng_metric)m)->name, t, x[t], y[t]);
  }
  if (!same_bytes(eng_run_shard_queues(skip), eng_run_shard_queues(every),
                  T * (size_t)c->shards * sizeof(int32_t)))
    fail_msg("%s: shard queues differ", what);
  const int32_t W = eng_run_latency_windows(skip);
  assert_int_equal(W, eng_run_latency_windows(every));
  for (int k = 0; k < ENG_L_COUNT; k++)
    if (!same_bytes(eng_run_latency(skip, (eng_lat_series)k),
                    eng_run_latency(every, (eng_lat_series)k), (size_t)W * sizeof(double)))
      fail_msg("%s: latency series %d differs", what, k);
  for (int p = 0; p <= ENG_PHASE_COUNT; p++)
    if (!same_bytes(eng_run_latency_phase(skip, p), eng_run_latency_phase(every, p),
                    sizeof(eng_latency_phase)))
      fail_msg("%s: latency phase %d differs", what, p);
  double r1 = eng_run_user_recovery_ms(skip), r2 = eng_run_user_recovery_ms(every);
  if (memcmp(&r1, &r2, sizeof r1)) fail_msg("%s: user recovery differs", what);
  /* eng_run_simulate clears the summary first, so its padding compares too */
  if (memcmp(&s1, &s2, sizeof s1)) summary_diff(&s1, &s2, what);
}

typedef struct contexts {
  eng_run *skip, *every;
} contexts;

static int ctx_setup(void **state) {
  contexts *x = calloc(1, sizeof *x);
  if (!x) return -1;
  x->skip = eng_run_create();
  x->every = eng_run_create();
  *state = x;
  if (!x->skip || !x->every) return -1;
  eng_run_set_skipping(x->every, 0);
  return 0;
}

static int ctx_teardown(void **state) {
  contexts *x = *state;
  if (!x) return 0;
  eng_run_destroy(x->skip);
  eng_run_destroy(x->every);
  free(x);
  return 0;
}

static void run_all(contexts *x, const scenario *list, size_t n, int sparse, int seeds) {
  for (size_t i = 0; i < n; i++) {
    eng_config c;
    cfg_build(&c, &list[i], sparse);
    for (int s = 0; s < seeds; s++)
      expect_identical(x->skip, x->every, &c, eng_seed_derive(31, i, (uint64_t)s), list[i].name);
  }
}

static void test_sparse_scenarios_identical(void **state) {
  run_all(*state, scenarios, sizeof scenarios / sizeof *scenarios, 1, 3);
}

static void test_other_scenarios_identical(void **state) {
  run_all(*state, others, sizeof others / sizeof *others, 0, 1);
}

/* The switch belongs to its context and lasts across runs: turning it back
 * on gives the same results again. */
static void test_switch_back_on(void **state) {
  contexts *x = *state;
  eng_config c;
  cfg_build(&c, &scenarios[2], 1);
  eng_run_set_skipping(x->skip, 0);
  expect_identical(x->skip, x->every, &c, 7, "both off");
  eng_run_set_skipping(x->skip, 1);
  expect_identical(x->skip, x->every, &c, 7, "back on");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_sparse_scenarios_identical, ctx_setup, ctx_teardown),
      cmocka_unit_test_setup_teardown(test_other_scenarios_identical, ctx_setup, ctx_teardown),
      cmocka_unit_test_setup_teardown(test_switch_back_on, ctx_setup, ctx_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
