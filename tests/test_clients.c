/*
 * test_clients.c — the retry limiters of production client
 * libraries on scripted event sequences (each library's documented
 * behaviour, gRPC's own test sequence step by step), the backoff
 * multiplier, and the closed-loop client model against queueing theory
 * (the interactive response-time law and the machine-repairman throughput).
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
#include "eng.h"
#include "limiter.h"
#include "rng.h"

static void set(eng_config *c, const char *k, const char *v) {
  char err[256];
  if (eng_config_set(c, k, v, err, sizeof err)) {
    print_error("setting %s=%s: %s\n", k, v, err);
    fail();
  }
}

/* A limiter of the given kind with settings "k=v" pairs, tick = 1 ms. */
static void limiter_make(eng_limiter *l, eng_limiter_params *p, const char *kind,
                         const char *const *kv) {
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "retry_limiter", kind);
  for (; kv && kv[0]; kv += 2) set(&c, kv[0], kv[1]);
  eng_limiter_params_init(p, c.retry_limiter, &c.lim, c.tick_ms);
  eng_limiter_reset(l, p);
}

/* ---- gRPC (gRFC A6) ---- */

/* gRPC C-core's own retry_throttle test, step by step: max 4 tokens, ratio
 * 1.6; "RecordFailure() returns true" is a failure then a retry allowed. */
static void test_grpc_sequence(void **state) {
  (void)state;
  eng_limiter l;
  eng_limiter_params p;
  const char *kv[] = {"grpc_max_tokens", "4", "grpc_token_ratio", "1.6", NULL};
  limiter_make(&l, &p, "grpc", kv);
  assert_int_equal(l.tokens, 4000); /* starts full */
  struct {
    char ev;      /* f = failure, s = success */
    int64_t milli; /* tokens after it */
    int retry;    /* failure: retries allowed after it */
  } steps[] = {
      {'f', 3000, 1}, {'s', 4000, 0}, /* not above max */
      {'f', 3000, 1}, {'f', 2000, 0}, /* at the threshold: no */
      {'f', 1000, 0}, {'f', 0, 0},    {'f', 0, 0}, /* not below 0 */
      {'s', 1600, 0}, {'s', 3200, 0}, {'f', 2200, 1}, {'f', 1200, 0},
      {'s', 2800, 0}, {'f', 1800, 0}, {'s', 3400, 0}, {'f', 2400, 1},
  };
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    if (steps[i].ev == 'f') {
      eng_limiter_on_failure(&l, &p, 0, 0, 1);
      int ok = eng_limiter_may_retry(&l, &p, 0, 0);
      if (ok != steps[i].retry) {
        print_error("grpc step %zu: retry %d, want %d (tokens %lld)\n", i, ok, steps[i].retry,
                    (long long)l.tokens);
        fail();
      }
    } else {
      eng_limiter_on_success(&l, &p, 0, 0, 0);
    }
    if (l.tokens != steps[i].milli) {
      print_error("grpc step %zu: %lld milli-tokens, want %lld\n", i, (long long)l.tokens,
                  (long long)steps[i].milli);
      fail();
    }
  }
  /* may_retry itself takes nothing: asking twice gives the same answer */
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 1);
  assert_int_equal(l.tokens, 2400);
}

/* tokenRatio: C-core keeps three decimals and drops the rest (gRFC A6:
 * "0.5466 is treated as 0.546"), and a local refusal — an open breaker's,
 * which C-core sees as a load-balancer drop — costs no token. */
static void test_grpc_ratio_and_lb_drop(void **state) {
  (void)state;
  const struct {
    const char *ratio;
    int64_t milli;
  } cases[] = {{"0.5466", 546}, {"0.29", 290}, {"1.6", 1600}, {"0.0019", 1}, {"0.1", 100},
               {"2.9999", 2999}, {"7", 7000}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    eng_limiter l;
    eng_limiter_params p;
    const char *kv[] = {"grpc_token_ratio", cases[k].ratio, NULL};
    limiter_make(&l, &p, "grpc", kv);
    if (p.grpc_ratio != cases[k].milli) {
      print_error("tokenRatio %s: %lld milli-tokens, want %lld\n", cases[k].ratio,
                  (long long)p.grpc_ratio, (long long)cases[k].milli);
      fail();
    }
  }
  eng_limiter l;
  eng_limiter_params p;
  limiter_make(&l, &p, "grpc", NULL);
  eng_limiter_on_failure(&l, &p, 0, 0, 0); /* an LB drop */
  eng_limiter_on_failure(&l, &p, 0, 1, 0);
  assert_int_equal(l.tokens, 10000);
  eng_limiter_on_failure(&l, &p, 0, 0, 1);
  assert_int_equal(l.tokens, 9000);
}

/* ---- Finagle / tower RetryBudget ---- */

static void test_finagle_deposits_expire(void **state) {
  (void)state;
  eng_limiter l;
  eng_limiter_params p;
  /* no reserve; percentCanRetry 0.5: two requests pay for one retry */
  const char *kv[] = {"finagle_ttl_ms", "1000", "finagle_min_retries_per_s", "0",
                      "finagle_percent_can_retry", "0.5", NULL};
  limiter_make(&l, &p, "finagle", kv);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 0); /* nothing deposited */
  for (int i = 0; i < 4; i++) eng_limiter_on_request(&l, &p, 10);
  assert_int_equal(eng_limiter_level(&l, &p, 10), 2);
  /* withdrawals at 250 ms, new deposits at 500 ms (windows of 10 x 100 ms) */
  assert_int_equal(eng_limiter_may_retry(&l, &p, 250, 0), 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 250, 0), 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 250, 0), 0); /* spent */
  for (int i = 0; i < 2; i++) eng_limiter_on_request(&l, &p, 500);
  assert_int_equal(eng_limiter_level(&l, &p, 900), 1);  /* 4 - 4 + 2 deposits' worth */
  /* the ttl passes for the 10 ms deposits: the debits still count */
  assert_int_equal(eng_limiter_level(&l, &p, 1050), 0);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 1050, 0), 0);
  /* ... until they expire in turn */
  assert_int_equal(eng_limiter_level(&l, &p, 1250), 1);
  /* and then the 500 ms deposits */
  assert_int_equal(eng_limiter_level(&l, &p, 1550), 0);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 1550, 0), 0);
}

static void test_finagle_reserve(void **state) {
  (void)state;
  eng_limiter l;
  eng_limiter_params p;
  /* Finagle's example budget: ttl 10 s, 5 retries/s, 10 percent */
  const char *kv[] = {"finagle_ttl_ms", "10000", "finagle_min_retries_per_s", "5",
                      "finagle_percent_can_retry", "0.1", NULL};
  limiter_make(&l, &p, "finagle", kv);
  /* a client that has sent nothing may still retry minRetriesPerSec x ttl times */
  int n = 0;
  while (eng_limiter_may_retry(&l, &p, 100, 0)) n++;
  assert_int_equal(n, 50);
  /* ten requests pay for one more retry */
  for (int i = 0; i < 10; i++) eng_limiter_on_request(&l, &p, 200);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 200, 0), 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 200, 0), 0);
  /* after the ttl every withdrawal has expired: the reserve is whole again */
  n = 0;
  while (eng_limiter_may_retry(&l, &p, 12000, 0)) n++;
  assert_int_equal(n, 50);
}

/* ---- Envoy concurrent retry budget ---- */

static void test_envoy_concurrency(void **state) {
  (void)state;
  eng_limiter l;
  eng_limiter_params p;
  limiter_make(&l, &p, "envoy", NULL); /* Envoy's defaults: 20 %, at least 3 */
  /* a request counts while an attempt of it is upstream, not per request */
  for (int i = 0; i < 10; i++) eng_limiter_on_request(&l, &p, 0);
  assert_int_equal(l.active_requests, 0);
  eng_limiter_on_upstream(&l, &p, 10);
  /* 20 % of 10 = 2 < 3: min_retry_concurrency rules */
  for (int i = 0; i < 3; i++) assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 0);
  /* a retry that ends (failed here) frees its slot */
  eng_limiter_on_failure(&l, &p, 0, 1, 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 0);
  /* a first attempt's failure holds no slot */
  eng_limiter_on_failure(&l, &p, 0, 0, 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 0);
  /* 50 active requests: 20 % = 10 concurrent retries */
  for (int i = 0; i < 40; i++) eng_limiter_on_upstream(&l, &p, 1);
  int n = 0;
  while (eng_limiter_may_retry(&l, &p, 0, 0)) n++;
  assert_int_equal(n, 10 - 3);
  assert_int_equal(l.active_retries, 10);
  eng_limiter_on_success(&l, &p, 0, 1, 0); /* a successful retry frees its slot too */
  assert_int_equal(eng_limiter_level(&l, &p, 0), 1);
  for (int i = 0; i < 45; i++) eng_limiter_on_upstream(&l, &p, -1);
  assert_int_equal(l.active_requests, 5); /* back to the floor of 3, with 9 active */
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 0);
}

/* ---- SRE book adaptive throttling ---- */

static void test_sre_adaptive(void **state) {
  (void)state;
  eng_limiter l;
  eng_limiter_params p;
  const char *kv[] = {"sre_window_ms", "1000", NULL}; /* K = 2, the book's */
  limiter_make(&l, &p, "sre_adaptive", kv);
  /* no history: p = 0, everything goes out */
  assert_int_equal(eng_limiter_admit(&l, &p, 0, 0.0), 1);
  for (int i = 1; i < 10; i++) assert_int_equal(eng_limiter_admit(&l, &p, 0, 0.999), 1);
  /* 10 requests, 0 accepts: reject with p = 10 / 11 */
  assert_int_equal(eng_limiter_admit(&l, &p, 1, 10.0 / 11 - 1e-9), 0);
  /* now 11 requests, 0 accepts: p = 11 / 12 */
  assert_int_equal(eng_limiter_admit(&l, &p, 1, 11.0 / 12 + 1e-9), 1);
  /* 12 requests and 6 accepts: requests = K accepts, p = 0 */
  for (int i = 0; i < 6; i++) eng_limiter_on_success(&l, &p, 2, 0, 0);
  assert_int_equal(eng_limiter_admit(&l, &p, 2, 0.0), 1);
  /* 13 requests, 6 accepts: p = 1 / 14 */
  assert_int_equal(eng_limiter_admit(&l, &p, 2, 1.0 / 14 - 1e-9), 0);
  assert_int_equal(eng_limiter_admit(&l, &p, 2, 2.0 / 15 + 1e-9), 1); /* now 2 / 15 */
  /* the window forgets: a second later nothing is counted */
  assert_int_equal(eng_limiter_admit(&l, &p, 1200, 0.0), 1);
  assert_int_equal(l.sum, 1);
  assert_int_equal(l.sum2, 0);
  /* it never limits retries by itself */
  assert_int_equal(eng_limiter_may_retry(&l, &p, 1200, 1), 1);
}

/* ---- AWS SDK standard retry quota ---- */

static void test_aws_quota(void **state) {
  (void)state;
  eng_limiter l;
  eng_limiter_params p;
  limiter_make(&l, &p, "aws", NULL); /* 500, 5, 10, 1 */
  assert_int_equal(l.tokens, 500);
  for (int i = 0; i < 50; i++) assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 1), 1);
  assert_int_equal(l.tokens, 0); /* 50 retries after timeouts, 10 each */
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 0);
  eng_limiter_on_success(&l, &p, 0, 0, 0); /* success without retry: +1 */
  assert_int_equal(l.tokens, 1);
  eng_limiter_on_success(&l, &p, 0, 1, 1); /* a retry after a timeout succeeded: +10 */
  assert_int_equal(l.tokens, 11);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 1), 1);
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 1), 0); /* 1 left < 10 */
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 0); /* 1 left < 5 */
  eng_limiter_on_success(&l, &p, 0, 1, 0);                  /* +5 */
  assert_int_equal(eng_limiter_may_retry(&l, &p, 0, 0), 1);
  assert_int_equal(l.tokens, 1);
  /* failures cost nothing by themselves; refunds stop at the quota */
  eng_limiter_on_failure(&l, &p, 0, 1, 1);
  assert_int_equal(l.tokens, 1);
  for (int i = 0; i < 1000; i++) eng_limiter_on_success(&l, &p, 0, 1, 1);
  assert_int_equal(l.tokens, 500);
}

/* ---- the budget_ratio token bucket ---- */

static void test_token_bucket(void **state) {
  (void)state;
  double t = 1, total = 1;
  eng_limiter_tb_deposit(&t, &total, 0.5, 2);
  eng_limiter_tb_deposit(&t, &total, 0.5, 2);
  eng_limiter_tb_deposit(&t, &total, 0.5, 2); /* capped at 2 */
  assert_true(t == 2 && total == 2);
  assert_int_equal(eng_limiter_tb_spend(&t, &total), 1);
  assert_int_equal(eng_limiter_tb_spend(&t, &total), 1);
  assert_int_equal(eng_limiter_tb_spend(&t, &total), 0);
  assert_true(t == 0 && total == 0);
}

/* ---- backoff multiplier ---- */

static void test_backoff_multiplier(void **state) {
  (void)state;
  eng_rng g;
  eng_rng_seed(&g, 7, 1);
  /* gRPC: retry n sleeps U(0, min(max, initial x multiplier^(n-1))) */
  const double base = 10, cap = 500;
  for (int made = 0; made < 10; made++) {
    double v = fmin(cap, base * pow(1.6, made)), sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
      double f = eng_backoff_ms(ENG_BACKOFF_FULL, base, cap, 1.6, made, 0, eng_rng_uniform(&g));
      assert_true(f >= 0 && f <= v);
      sum += f;
    }
    if (fabs(sum / n - v / 2) > 5 * v / sqrt(12.0 * n)) {
      print_error("multiplier 1.6, %d retries made: mean %.3f, want %.3f\n", made, sum / n,
                  v / 2);
      fail();
    }
  }
  /* multiplier 1: a constant window; 2: the doubling, bit for bit */
  assert_true(eng_backoff_ms(ENG_BACKOFF_FULL, base, cap, 1, 5, 0, 0.5) == 5);
  for (int made = 0; made < 8; made++)
    assert_true(eng_backoff_ms(ENG_BACKOFF_EQUAL, base, cap, 2, made, 0, 0.3) ==
                eng_backoff_ms(ENG_BACKOFF_EQUAL, base, cap, 2.0, made, 0, 0.3));
}

/* ---- gRPC's and Envoy's own backoff ---- */

/* gRPC C-core's BackOff tests (test/core/util/backoff_test.cc) with the
 * retry filter's jitter of 0.2: NoJitterBackOff's sequence 2, 4, 8, 16, 32,
 * 32, 32 ms at the middle of the jitter (u = 0.5 multiplies by exactly 1),
 * InitialBackoffCappedByMaxBackoff, and JitterBackOff's bounds: every wait
 * within [0.8, 1.2] x min(max, initial x multiplier^(n-1)), over the whole
 * range of u, and a mean of the window itself. */
static void test_backoff_grpc(void **state) {
  (void)state;
  const double seq[] = {2, 4, 8, 16, 32, 32, 32};
  for (int n = 0; n < 7; n++) {
    double w = eng_backoff_ms(ENG_BACKOFF_GRPC, 2, 32, 2, n, 0, 0.5);
    if (w != seq[n]) {
      print_error("grpc retry %d: %.17g ms at the middle of the jitter, want %g\n", n + 1, w,
                  seq[n]);
      fail();
    }
    assert_true(eng_backoff_ms(ENG_BACKOFF_GRPC, 2, 32, 2, n, 0, 0.0) == 0.8 * seq[n]);
  }
  for (int n = 0; n < 5; n++) /* initial 2 s above max 1 s: the max, every time */
    assert_true(eng_backoff_ms(ENG_BACKOFF_GRPC, 2000, 1000, 1, n, 0, 0.5) == 1000);
  eng_rng g;
  eng_rng_seed(&g, 11, 1);
  const double base = 10, cap = 300, mult = 1.6;
  const int draws = 100000;
  for (int n = 0; n < 12; n++) {
    double v = fmin(cap, base * pow(mult, n)), sum = 0, lo = INFINITY, hi = 0;
    for (int i = 0; i < draws; i++) {
      double w = eng_backoff_ms(ENG_BACKOFF_GRPC, base, cap, mult, n, 0, eng_rng_uniform(&g));
      if (!(w >= 0.8 * v && w <= 1.2 * v)) {
        print_error("grpc retry %d: %.6f ms outside [%.6f, %.6f]\n", n + 1, w, 0.8 * v, 1.2 * v);
        fail();
      }
      sum += w;
      lo = fmin(lo, w);
      hi = fmax(hi, w);
    }
    /* U(0.8 v, 1.2 v): mean v, sd 0.4 v / sqrt(12); five standard errors */
    if (fabs(sum / draws - v) > 5 * 0.4 * v / sqrt(12.0 * draws)) {
      print_error("grpc retry %d: mean %.4f ms, want %.4f\n", n + 1, sum / draws, v);
      fail();
    }
    assert_true(lo < 0.801 * v && hi > 1.199 * v); /* the whole range is used */
  }
  /* the multiplier applies; the cap bounds the window, not the jittered wait */
  assert_true(eng_backoff_ms(ENG_BACKOFF_GRPC, 10, 1000, 3, 2, 0, 0.5) == 90);
  assert_true(eng_backoff_ms(ENG_BACKOFF_GRPC, 10, 50, 3, 2, 0, 0.999999) > 50);
  assert_true(eng_backoff_ms(ENG_BACKOFF_GRPC, 10, 0, 2, 1, 0, 0.5) == 0); /* cap 0: at once */
}

/* Envoy's own BackOffStrategy tests (test/common/common/backoff_strategy_test.cc),
 * replayed with their fixed random numbers: the strategy draws random() %
 * interval, whole milliseconds. */
static void test_backoff_envoy(void **state) {
  (void)state;
  /* JitteredBackOffBasicFlow: base 25, max 30, random() = 27 */
  assert_true(eng_backoff_envoy_ms(25, 30, 0, 27) == 2);
  assert_true(eng_backoff_envoy_ms(25, 30, 1, 27) == 27);
  /* JitteredBackOffWithMaxInterval (and ...Reset: a new request starts
   * again at retry 1): base 5, max 100, random() = 9999 */
  const double want[] = {4, 9, 19, 39, 79, 99, 99};
  for (int pass = 0; pass < 2; pass++)
    for (int n = 0; n < 7; n++) {
      double w = eng_backoff_envoy_ms(5, 100, n, 9999);
      if (w != want[n]) {
        print_error("envoy retry %d: %g ms, want %g\n", n + 1, w, want[n]);
        fail();
      }
    }
  /* JitteredBackOffDoesntOverflow: base 1, max UINT64_MAX, random() = max - 1 */
  for (int n = 0; n < 100; n++) {
    uint64_t iv = eng_backoff_envoy_interval(1, UINT64_MAX, n);
    assert_true(iv >= 1 && iv <= UINT64_MAX);
    if (n >= 65) assert_true(iv == UINT64_MAX);
  }
  assert_true((UINT64_MAX - 1) % eng_backoff_envoy_interval(1, UINT64_MAX, 100) == UINT64_MAX - 1);
  /* Doubling stops below max / 2, integer division: with max 25 the
   * interval 12 jumps to 25, where min(max, base 2^n) would give 24 */
  assert_int_equal(eng_backoff_envoy_interval(12, 25, 1), 25);
  assert_int_equal(eng_backoff_envoy_interval(12, 26, 1), 24);
  assert_int_equal(eng_backoff_envoy_interval(12, 26, 2), 26);
  /* durations in whole ms: 25.9 ms reads as 25 */
  assert_true(eng_backoff_envoy_ms(25.9, 30.9, 0, 27) == 2);
  /* the distribution: U{0, ..., v - 1}, mean (v - 1) / 2 */
  eng_rng g;
  eng_rng_seed(&g, 5, 2);
  const int draws = 200000;
  double sum = 0;
  int top = 0;
  for (int i = 0; i < draws; i++) {
    double w = eng_backoff_envoy_ms(25, 250, 2, eng_rng_next(&g)); /* interval 100 */
    assert_true(w >= 0 && w <= 99 && w == floor(w));
    sum += w;
    top += w == 99;
  }
  double sd = sqrt((100.0 * 100.0 - 1) / 12.0);
  assert_true(fabs(sum / draws - 49.5) < 5 * sd / sqrt((double)draws));
  assert_true(top > 0);
}

/* ---- closed-loop clients ---- */

static void simulate(eng_run *r, const eng_config *c, uint64_t seed, eng_summary *s) {
  char err[256];
  if (eng_run_simulate(r, c, seed, s, err, sizeof err)) {
    print_error("simulate: %s\n", err);
    fail();
  }
}

/* Requests started and not yet ended at the end of each tick. */
static int64_t outstanding(const eng_run *r, int32_t t, int64_t *acc) {
  *acc += eng_run_metric(r, ENG_M_NEW_REQUESTS)[t] - eng_run_metric(r, ENG_M_SUCCESSES)[t] -
          eng_run_metric(r, ENG_M_FAILED)[t];
  return *acc;
}

/* Finite-source M/M/c (machine repairman): N users thinking Exp(Z), one
 * station of c servers with Exp(S) service. Throughput per ms. */
static double repairman_throughput(int n_users, int c, double s_ms, double z_ms) {
  if (z_ms <= 0) return (n_users < c ? n_users : c) / s_ms; /* every user at the station */
  double p[256], norm = 0, x = 0;
  p[0] = 1;
  for (int n = 0; n < n_users; n++)
    p[n + 1] = p[n] * ((n_users - n) / z_ms) / ((n + 1 < c ? n + 1 : c) / s_ms);
  for (int n = 0; n <= n_users; n++) norm += p[n];
  for (int n = 0; n <= n_users; n++) x += p[n] / norm * (n < c ? n : c) / s_ms;
  return x;
}

static void closed_mmc(eng_config *c, int clients, int conc, const char *think) {
  eng_config_defaults(c);
  set(c, "client_model", "closed");
  char buf[32];
  snprintf(buf, sizeof buf, "%d", clients);
  set(c, "clients", buf);
  snprintf(buf, sizeof buf, "%d", conc);
  set(c, "concurrency", buf);
  set(c, "think_ms", think);
  set(c, "tick_ms", "0.1");
  set(c, "horizon_ms", "150000");
  set(c, "shards", "1");
  set(c, "workers", "2");
  set(c, "service_mean_ms", "10");
  set(c, "queue_capacity", "inf");
  set(c, "timeout_ms", "1e7");
  set(c, "max_retries", "0");
  set(c, "surge", "none");
  set(c, "brownout", "none");
}

static void test_closed_response_time_law(void **state) {
  eng_run *r = *state;
  const struct {
    int clients, conc;
    const char *think;
  } cases[] = {{3, 2, "20"}, {2, 5, "40"}, {4, 1, "0"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    eng_config c;
    closed_mmc(&c, cases[k].clients, cases[k].conc, cases[k].think);
    eng_summary s;
    simulate(r, &c, 11 + k, &s);
    int32_t T = eng_run_ticks(r), warm = T / 10;
    int n_users = cases[k].clients * cases[k].conc;
    double z = atof(cases[k].think) / c.tick_ms;
    int64_t acc = 0, ended = 0;
    double area = 0;
    for (int32_t t = 0; t < T; t++) {
      int64_t o = outstanding(r, t, &acc);
      if (o > n_users) { /* offered load never exceeds the users */
        print_error("case %zu: %lld requests in flight at tick %d, %d users\n", k, (long long)o,
                    t, n_users);
        fail();
      }
      if (t >= warm) {
        area += (double)o;
        ended += eng_run_metric(r, ENG_M_SUCCESSES)[t] + eng_run_metric(r, ENG_M_FAILED)[t];
      }
    }
    double span = T - warm, x = ended / span; /* requests per tick */
    double resp = area / span / x;            /* Little: mean response time, ticks */
    double law = n_users / x - z;             /* R = N / X - Z */
    double x_theory = repairman_throughput(n_users, 2, 10, atof(cases[k].think)) * c.tick_ms;
    print_message("closed case %zu: N %d, X %.5f/tick (theory %.5f), R %.1f, N/X-Z %.1f ticks\n",
                  k, n_users, x, x_theory, resp, law);
    if (fabs(resp - law) > 0.03 * law) {
      print_error("case %zu: response time %.2f ticks, law gives %.2f\n", k, resp, law);
      fail();
    }
    if (fabs(x - x_theory) > 0.03 * x_theory) {
      print_error("case %zu: throughput %.5f per tick, machine repairman gives %.5f\n", k, x,
                  x_theory);
      fail();
    }
  }
}

/* With concurrency 0 the users offer load x capacity when nothing queues. */
static void test_closed_users_from_load(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "client_model", "closed");
  /* 0.7 x 25,600 requests/s x (5 + 0) ms = 89.6 users */
  assert_int_equal(eng_config_users(&c), 90);
  set(&c, "think_ms", "45");
  assert_int_equal(eng_config_users(&c), 896);
  set(&c, "concurrency", "3");
  assert_int_equal(eng_config_users(&c), 192);
  assert_true(fabs(eng_config_arrival_rps(&c) - 192 * 1000.0 / 50) < 1e-9);
  /* more users than a run can hold: refused up front, naming the setting */
  char err[256];
  assert_int_equal(eng_config_validate(&c, err, sizeof err), 0);
  set(&c, "concurrency", "100000");
  assert_int_equal(eng_config_validate(&c, err, sizeof err), -1);
  assert_non_null(strstr(err, "concurrency"));
}

/* The seed scenario with closed-loop users: a surge multiplies the users,
 * and requests in flight never exceed the users alive. */
static void test_closed_surge(void **state) {
  eng_run *r = *state;
  eng_config c;
  eng_config_defaults(&c);
  set(&c, "client_model", "closed");
  set(&c, "think_ms", "20");
  int64_t n = eng_config_users(&c);
  eng_summary s;
  simulate(r, &c, 3, &s);
  int32_t T = eng_run_ticks(r);
  int64_t acc = 0, peak_before = 0, peak_during = 0;
  for (int32_t t = 0; t < T; t++) {
    int64_t o = outstanding(r, t, &acc);
    assert_true(o >= 0);
    if (t < 2000) peak_before = o > peak_before ? o : peak_before;
    else if (t < 2500) peak_during = o > peak_during ? o : peak_during;
    assert_true(o <= (int64_t)floor(n * c.surge_factor + 0.5));
    if (t >= T - 100) assert_true(o <= n); /* surge users have left */
  }
  print_message("closed seed: %lld users, in flight peak %lld before, %lld in the surge\n",
                (long long)n, (long long)peak_before, (long long)peak_during);
  assert_true(peak_before <= n);
  assert_true(peak_during > n); /* the surge's users did arrive */
  /* the same seed gives the same run */
  eng_summary s2;
  simulate(r, &c, 3, &s2);
  assert_true(s.attempts == s2.attempts && s.successes == s2.successes);
}

/* ---- limiters in whole runs ---- */

static void test_limiters_in_runs(void **state) {
  eng_run *r = *state;
  const char *kinds[] = {"token_bucket", "grpc", "finagle", "envoy", "sre_adaptive", "aws"};
  int64_t naive_att = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    eng_config c;
    eng_config_defaults(&c);
    set(&c, "retry_limiter", kinds[k]);
    eng_summary s, s2;
    simulate(r, &c, 5, &s);
    int64_t rej = 0, retries = 0;
    for (int32_t t = 0; t < eng_run_ticks(r); t++) {
      rej += eng_run_metric(r, ENG_M_REJ_BUDGET)[t];
      retries += eng_run_metric(r, ENG_M_RETRIES)[t];
    }
    print_message("%-13s attempts %lld, retries %lld, budget refusals %lld, outcome %s\n",
                  kinds[k], (long long)s.attempts, (long long)retries, (long long)rej,
                  eng_outcome_name((eng_outcome)s.outcome));
    if (k == 0) {
      naive_att = s.attempts; /* budget_ratio = inf: nothing limits */
      assert_int_equal(rej, 0);
    } else {
      assert_true(rej > 0);               /* the storm meets the limiter */
      assert_true(s.attempts < naive_att); /* and it sends less */
    }
    if (!strcmp(kinds[k], "sre_adaptive")) /* it refuses first attempts too */
      assert_true(s.new_requests > s.attempts - retries);
    simulate(r, &c, 5, &s2);
    assert_true(s.attempts == s2.attempts);
    assert_true(s.successes == s2.successes);
  }
}

static int run_setup(void **state) {
  *state = eng_run_create();
  return *state ? 0 : -1;
}

static int run_teardown(void **state) {
  eng_run_destroy(*state);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grpc_sequence),
      cmocka_unit_test(test_grpc_ratio_and_lb_drop),
      cmocka_unit_test(test_finagle_deposits_expire),
      cmocka_unit_test(test_finagle_reserve),
      cmocka_unit_test(test_envoy_concurrency),
      cmocka_unit_test(test_sre_adaptive),
      cmocka_unit_test(test_aws_quota),
      cmocka_unit_test(test_token_bucket),
      cmocka_unit_test(test_backoff_multiplier),
      cmocka_unit_test(test_backoff_grpc),
      cmocka_unit_test(test_backoff_envoy),
      cmocka_unit_test(test_closed_users_from_load),
      cmocka_unit_test_setup_teardown(test_closed_response_time_law, run_setup, run_teardown),
      cmocka_unit_test_setup_teardown(test_closed_surge, run_setup, run_teardown),
      cmocka_unit_test_setup_teardown(test_limiters_in_runs, run_setup, run_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
