/*
 * test_requests.c — what a client does across the attempts of one
 * request (engine/request.h): the request deadline, retry_on, hedging, the
 * client's concurrency limit and Envoy's budget, in whole runs.
 *
 * Request mode with none of its features binding must give the default
 * engine's numbers bit for bit (it takes every decision the same way), so
 * the pinned runs of test_golden are replayed through it first. The other
 * tests read requests off single-user runs: one closed-loop user has one
 * request open at a time, so the per-tick starts and ends pair up, and
 * every attempt of a tick belongs to the open request.
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
#include <xxhash.h>

#include "eng.h"
#include "testutil.h"

static void simulate(eng_run *r, const eng_config *c, uint64_t seed, eng_summary *s) {
  char err[256];
  if (eng_run_simulate(r, c, seed, s, err, sizeof err)) fail_msg("simulate: %s", err);
}

static int64_t metric_sum(const eng_run *r, eng_metric m) {
  const int32_t *x = eng_run_metric(r, m);
  int64_t s = 0;
  for (int32_t t = 0; t < eng_run_ticks(r); t++) s += x[t];
  return s;
}

/* Every metric trace and the summary's counts, as test_golden hashes them. */
static uint64_t digest(eng_run *r, const char *sets, uint64_t seed) {
  eng_config c;
  eng_config_defaults(&c);
  tu_config_apply(&c, sets);
  eng_summary s;
  simulate(r, &c, seed, &s);
  XXH3_state_t *st = XXH3_createState();
  assert_non_null(st);
  XXH3_64bits_reset(st);
  for (int m = 0; m < ENG_M_COUNT; m++)
    XXH3_64bits_update(st, eng_run_metric(r, (eng_metric)m),
                       (size_t)eng_run_ticks(r) * sizeof(int32_t));
  int64_t counts[] = {s.new_requests, s.attempts, s.successes, s.failed_requests, s.events,
                      (int64_t)s.outcome};
  XXH3_64bits_update(st, counts, sizeof counts);
  double reals[] = {s.amplification, s.max_mean_shard_load, s.mean_hops, s.little_L,
                    s.little_lambda_w, s.keys_remapped};
  XXH3_64bits_update(st, reals, sizeof reals);
  uint64_t d = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return d;
}

/* ---- request mode changes nothing by itself ---- */

/* test_golden's runs, each also with a deadline past the horizon, a
 * concurrency limit no client reaches, and retry_on = all (overflow, the
 * one name the default lacks, cannot happen without a limit): each of them
 * turns request mode on and none may move a number, engine events included. */
static void test_request_mode_is_the_default_engine(void **state) {
  (void)state;
  static const struct {
    const char *sets;
    uint64_t seed;
  } cases[] = {
      {"policy=guarded", 1},
      {"policy=naive", 7},
      {"policy=guarded;crash=3000+1000;horizon_ms=6000", 2},
      {"crash=2500+800;router_load=admitted;horizon_ms=5000", 3},
      {"policy=guarded;outage=2500+300;surge=none;horizon_ms=5000", 4},
      {"codel_target_ms=5;codel_variant=rfc8289;surge_factor=3;horizon_ms=5000", 5},
      {"queue_discipline=adaptive_lifo;adaptive_lifo_threshold=8;horizon_ms=5000", 6},
      {"breaker=fail_fast;horizon_ms=5000", 7},
      {"breaker=next_shard;breaker_reject=retry;backoff=equal;horizon_ms=5000", 8},
      {"backoff=decorrelated;backoff_cap_ms=200;budget_ratio=0.2;horizon_ms=5000", 9},
      {"shed_reply=silent;deadline_drop=on;horizon_ms=5000", 10},
      {"codel_target_ms=5;shed_reply=error;deadline_drop=on;horizon_ms=5000", 10},
      {"service=lognormal;brownout_factor=0.3;timeout_ms=20;horizon_ms=5000", 12},
      {"timeout_ms=3;max_retries=5;workers=2;horizon_ms=3000", 14},
      {"client_model=closed;think_ms=20;policy=guarded;horizon_ms=5000", 15},
      {"retry_limiter=grpc;backoff=grpc;horizon_ms=5000", 16},
      {"retry_limiter=aws;backoff=full;horizon_ms=5000", 17},
  };
  const char *forcing[] = {"deadline_ms=1e12", "max_requests_per_client=1e9", "retry_on=all"};
  eng_run *r = eng_run_create();
  assert_non_null(r);
  int bad = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    uint64_t want = digest(r, cases[k].sets, cases[k].seed);
    for (size_t f = 0; f < sizeof forcing / sizeof forcing[0]; f++) {
      char sets[512];
      snprintf(sets, sizeof sets, "%s;%s", cases[k].sets, forcing[f]);
      uint64_t got = digest(r, sets, cases[k].seed);
      if (got != want) {
        print_error("%s: digest 0x%016llx, the default engine 0x%016llx\n", sets,
                    (unsigned long long)got, (unsigned long long)want);
        bad++;
      }
    }
  }
  eng_run_destroy(r);
  if (bad) fail_msg("%d runs differ in request mode", bad);
}

/* ---- one user's requests, read off the metrics ---- */

typedef struct span {
  int32_t start, end; /* ticks; end -1 while open at the horizon */
  int failed;
  int shared; /* another request was alive in its first or last tick */
  int32_t attempts, last_attempt; /* attempts sent while it was open, the tick of the last */
} span;

/* The single user's requests in order (at most cap). Starts and ends
 * alternate, also within a tick (a request may start and end in one, and a
 * user woken by its think timer may send a second after that). A tick's
 * attempts go to the last request alive in it. When a tick ends one request
 * by failure and another by success, the one open since its start plus
 * deadline d is the failure (the runs here fail only at their deadline). */
static size_t user_spans(const eng_run *r, span *sp, size_t cap, int32_t d) {
  const int32_t *nr = eng_run_metric(r, ENG_M_NEW_REQUESTS), *ok = eng_run_metric(r, ENG_M_SUCCESSES),
                *fl = eng_run_metric(r, ENG_M_FAILED), *at = eng_run_metric(r, ENG_M_ATTEMPTS);
  size_t n = 0;
  int open = 0;
  for (int32_t t = 0; t < eng_run_ticks(r); t++) {
    int starts = nr[t], oks = ok[t], fails = fl[t];
    while (starts || oks || fails) {
      if (open) {
        assert_true(oks + fails > 0 || starts == 0); /* no second request while one is open */
        if (!(oks + fails)) break;
        sp[n - 1].end = t;
        sp[n - 1].failed = fails > 0 && (oks == 0 || t == sp[n - 1].start + d);
        if (starts) sp[n - 1].shared = 1;
        if (sp[n - 1].failed) fails--;
        else oks--;
        open = 0;
      } else {
        assert_true(starts > 0); /* an end needs a request */
        assert_true(n < cap);
        sp[n++] = (span){.start = t, .end = -1, .last_attempt = -1};
        if (n > 1 && sp[n - 2].end == t) sp[n - 1].shared = 1;
        starts--;
        open = 1;
      }
    }
    if (at[t]) {
      assert_true(n > 0); /* nothing is sent before the first request */
      sp[n - 1].attempts += at[t];
      sp[n - 1].last_attempt = t;
    }
  }
  return n;
}

/* One user on one worker: its abandoned work keeps the worker busy, so
 * later requests wait, time out and retry. */
static void one_user(eng_config *c, const char *extra) {
  eng_config_defaults(c);
  tu_config_apply(c, "client_model=closed;clients=1;concurrency=1;think_ms=3;shards=1;workers=1;"
           "vnodes=1;service_mean_ms=12;queue_capacity=inf;surge=none;brownout=none;"
           "horizon_ms=60000;max_retries=6");
  tu_config_apply(c, extra);
}

/* A deadline is never exceeded: every request ends within deadline_ms of its
 * start, no attempt of it goes out at or after its deadline, and a request
 * that fails at its deadline is not retried. With no per-attempt timeout
 * (timeout_ms = none) an attempt waits for the whole deadline, so every
 * failure is a deadline exceeded exactly deadline_ms after the start, and a
 * request makes one attempt. */
static void test_deadline_is_never_exceeded(void **state) {
  (void)state;
  static const struct {
    const char *extra;
    int no_timeout;
  } cases[] = {
      {"deadline_ms=40;timeout_ms=none", 1},
      {"deadline_ms=40;timeout_ms=9", 0},
      {"deadline_ms=40;timeout_ms=9;backoff=equal;backoff_base_ms=30;backoff_cap_ms=30", 0},
      {"deadline_ms=40;timeout_ms=9;backoff=grpc;backoff_base_ms=4;backoff_multiplier=2", 0},
      {"deadline_ms=40;timeout_ms=9;deadline_drop=on;deadline_propagation=on", 0},
  };
  static span sp[20000];
  eng_run *r = eng_run_create();
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int64_t failed = 0, at_deadline = 0, retried = 0, requests = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
      eng_config c;
      one_user(&c, cases[k].extra);
      int32_t d = (int32_t)c.deadline_ms;
      eng_summary s;
      simulate(r, &c, seed, &s);
      size_t n = user_spans(r, sp, sizeof sp / sizeof sp[0], d);
      for (size_t i = 0; i < n; i++) {
        if (sp[i].end < 0) continue; /* open at the horizon */
        requests++;
        if (sp[i].end - sp[i].start > d || sp[i].last_attempt >= sp[i].start + d) {
          print_error("%s seed %llu: request %zu from tick %d ended at %d, last attempt at %d "
                      "(deadline %d ms)\n",
                      cases[k].extra, (unsigned long long)seed, i, sp[i].start, sp[i].end,
                      sp[i].last_attempt, d);
          fail();
        }
        failed += sp[i].failed;
        at_deadline += sp[i].failed && sp[i].end == sp[i].start + d;
        retried += sp[i].attempts > 1;
        if (cases[k].no_timeout) {
          if (!sp[i].shared) assert_int_equal(sp[i].attempts, 1);
          if (sp[i].failed) assert_int_equal(sp[i].end, sp[i].start + d);
        }
      }
      if (cases[k].no_timeout) assert_true(s.attempts == s.new_requests);
    }
    print_message("%s: %lld requests, %lld failed (%lld at the deadline), %lld retried\n",
                  cases[k].extra, (long long)requests, (long long)failed,
                  (long long)at_deadline, (long long)retried);
    assert_true(requests > 3000);
    assert_true(failed > 30); /* the deadline did bite, often */
    assert_true(at_deadline > 30);
    if (!cases[k].no_timeout) assert_true(retried > 30);
  }
  eng_run_destroy(r);
}

/* A retry whose backoff would end after the deadline is not sent: with a
 * 40 ms deadline, 9 ms attempt timeouts and equal jitter of 80 ms (40 to 80
 * ms) nothing retries; the request then fails at its deadline, not at once. */
static void test_backoff_past_the_deadline_is_not_sent(void **state) {
  (void)state;
  static span sp[20000];
  eng_run *r = eng_run_create();
  eng_config c;
  one_user(&c, "deadline_ms=40;timeout_ms=9;backoff=equal;backoff_base_ms=80;backoff_cap_ms=80");
  eng_summary s;
  simulate(r, &c, 4, &s);
  size_t n = user_spans(r, sp, sizeof sp / sizeof sp[0], 40);
  int64_t failed = 0;
  assert_true(s.attempts == s.new_requests);
  for (size_t i = 0; i < n; i++) {
    if (sp[i].end < 0) continue;
    if (!sp[i].shared) assert_int_equal(sp[i].attempts, 1);
    if (sp[i].failed) {
      failed++;
      assert_int_equal(sp[i].end, sp[i].start + 40); /* waits for its deadline */
    }
  }
  assert_true(failed > 30);
  assert_int_equal(metric_sum(r, ENG_M_RETRIES), 0);
  /* the same with a deadline long enough for the backoff: retries go out */
  one_user(&c, "deadline_ms=400;timeout_ms=9;backoff=equal;backoff_base_ms=80;backoff_cap_ms=80");
  simulate(r, &c, 4, &s);
  assert_true(metric_sum(r, ENG_M_RETRIES) > 30);
  eng_run_destroy(r);
}

/* The seed storm with unbounded queues fails only by timeouts: retry_on =
 * rejected retries none of them (amplification exactly 1), the default
 * retries them all. And a storm of rejections only (short queues, long
 * timeouts) is retry-free under retry_on = timeout. */
static void test_retry_on_selects_failures(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_summary s;
  eng_config_defaults(&c);
  tu_config_apply(&c, "queue_capacity=inf");
  simulate(r, &c, 3, &s);
  int64_t timeouts = metric_sum(r, ENG_M_TIMEOUTS), retries = metric_sum(r, ENG_M_RETRIES);
  assert_int_equal(metric_sum(r, ENG_M_REJ_QUEUE_FULL), 0);
  assert_true(timeouts > 1000 && retries > 1000);
  tu_config_apply(&c, "retry_on=rejected");
  simulate(r, &c, 3, &s);
  assert_int_equal(metric_sum(r, ENG_M_RETRIES), 0);
  assert_true(s.attempts == s.new_requests);
  assert_true(metric_sum(r, ENG_M_TIMEOUTS) > 1000);
  print_message("timeout storm: %lld retries by default, none with retry_on = rejected\n",
                (long long)retries);
  /* rejections only */
  eng_config_defaults(&c);
  tu_config_apply(&c, "queue_capacity=2;timeout_ms=100000;horizon_ms=5000");
  simulate(r, &c, 3, &s);
  int64_t rejected = metric_sum(r, ENG_M_REJ_QUEUE_FULL);
  assert_int_equal(metric_sum(r, ENG_M_TIMEOUTS), 0);
  assert_true(rejected > 1000 && metric_sum(r, ENG_M_RETRIES) > 1000);
  tu_config_apply(&c, "retry_on=timeout");
  simulate(r, &c, 3, &s);
  assert_int_equal(metric_sum(r, ENG_M_RETRIES), 0);
  /* a failure retry_on does not name ends the request at once: every
   * rejection is a failed request */
  assert_int_equal(metric_sum(r, ENG_M_FAILED), metric_sum(r, ENG_M_REJ_QUEUE_FULL));
  eng_run_destroy(r);
}

/* deadline_drop sheds queued work the server knows to be late: with no
 * per-attempt timeout it knows nothing unless the deadline is propagated. */
static void test_deadline_propagation(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_summary s;
  eng_config_defaults(&c);
  tu_config_apply(&c, "deadline_ms=150;timeout_ms=none;deadline_drop=on;deadline_propagation=off");
  simulate(r, &c, 2, &s);
  int64_t shed_off = metric_sum(r, ENG_M_SHED), wasted_off = metric_sum(r, ENG_M_WASTED);
  tu_config_apply(&c, "deadline_propagation=on");
  simulate(r, &c, 2, &s);
  int64_t shed_on = metric_sum(r, ENG_M_SHED), wasted_on = metric_sum(r, ENG_M_WASTED);
  print_message("deadline drop: %lld shed / %lld wasted without propagation, %lld / %lld with\n",
                (long long)shed_off, (long long)wasted_off, (long long)shed_on,
                (long long)wasted_on);
  assert_int_equal(shed_off, 0);
  assert_true(shed_on > 1000);
  assert_true(wasted_on < wasted_off);
  eng_run_destroy(r);
}

/* ---- hedging ---- */

/* One user, one worker, deterministic 10 ms service, a copy every 2 ms up
 * to 3 in flight: a request's first copy is served while the others queue
 * behind it; it wins at 10 ms. Copies in flight never exceed three (the
 * engine stops on a fourth), so every request makes exactly three attempts
 * — never a fourth, though retries are left — and is answered once. With
 * hedge_cancel the two losers are dropped unserved (nothing wasted); without,
 * both are served for nothing. */
static void test_hedges(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  for (int cancel = 0; cancel < 2; cancel++) {
    eng_config c;
    eng_config_defaults(&c);
    tu_config_apply(&c, "client_model=closed;clients=1;concurrency=1;think_ms=5;shards=1;workers=1;"
              "vnodes=1;service=deterministic;service_mean_ms=10;queue_capacity=inf;"
              "surge=none;brownout=none;horizon_ms=20000;timeout_ms=1e6;max_retries=10;"
              "hedge_attempts=3;hedge_delay_ms=2");
    tu_config_apply(&c, cancel ? "hedge_cancel=on" : "hedge_cancel=off");
    eng_summary s;
    simulate(r, &c, 9, &s);
    int64_t req = s.new_requests, ok = s.successes, wasted = metric_sum(r, ENG_M_WASTED);
    int64_t open = req - ok - s.failed_requests;
    print_message("hedge_cancel %s: %lld requests, %lld attempts, %lld successes, %lld wasted\n",
                  cancel ? "on" : "off", (long long)req, (long long)s.attempts, (long long)ok,
                  (long long)wasted);
    assert_true(req > 300);
    assert_int_equal(s.failed_requests, 0);
    assert_true(open >= 0 && open <= 1); /* the first success wins: one answer per request */
    assert_true(s.attempts <= 3 * req && s.attempts >= 3 * (req - 1));
    assert_int_equal(metric_sum(r, ENG_M_RETRIES), s.attempts - req);
    if (cancel) {
      assert_int_equal(wasted, 0);
      assert_int_equal(metric_sum(r, ENG_M_SHED), 0); /* a cancelled copy is not shed */
    } else {
      assert_true(wasted >= 2 * (req - 1) - 2);
    }
  }
  eng_run_destroy(r);
}

/* Hedges in the seed storm: they add load, the limiter bounds them (gRPC's
 * throttling applies to hedges), and at most hedge_attempts copies of a
 * request are out at any time (checked by the engine on every send). */
static void test_hedges_in_a_storm(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_summary plain, hedged, throttled;
  eng_config_defaults(&c);
  tu_config_apply(&c, "horizon_ms=5000;deadline_ms=300");
  simulate(r, &c, 6, &plain);
  tu_config_apply(&c, "hedge_attempts=3;hedge_delay_ms=10");
  simulate(r, &c, 6, &hedged);
  int64_t hedged_rej = metric_sum(r, ENG_M_REJ_BUDGET);
  tu_config_apply(&c, "retry_limiter=grpc");
  simulate(r, &c, 6, &throttled);
  int64_t throttled_rej = metric_sum(r, ENG_M_REJ_BUDGET);
  print_message("storm: %lld attempts plain, %lld hedged, %lld hedged with gRPC throttling "
                "(%lld refused)\n",
                (long long)plain.attempts, (long long)hedged.attempts,
                (long long)throttled.attempts, (long long)throttled_rej);
  assert_int_equal(hedged_rej, 0);
  assert_true(hedged.attempts > plain.attempts);
  assert_true(throttled_rej > 0 && throttled.attempts < hedged.attempts);
  /* zero delay: every copy at once, up to hedge_attempts and max_retries */
  eng_config_defaults(&c);
  tu_config_apply(&c, "horizon_ms=3000;surge=none;brownout=none;hedge_attempts=4;hedge_delay_ms=0;"
            "max_retries=2;service=deterministic;load=0.3");
  simulate(r, &c, 6, &hedged);
  assert_true(hedged.attempts == 3 * hedged.new_requests);
  eng_run_destroy(r);
}

/* ---- the client's concurrency limit ---- */

/* With at most 3 attempts in flight per client and timeouts long enough that
 * nothing is abandoned, what the shards hold never exceeds 3 per client,
 * and a stalled shard (plain consistent hashing: its keys stay on it) makes
 * every client reach it; the overflow fails at
 * once (rejected_breaker) and is retried (after its backoff) only when
 * retry_on names it. */
static void test_concurrency_limit(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  eng_config c;
  eng_summary s;
  eng_config_defaults(&c);
  tu_config_apply(&c, "clients=4;max_requests_per_client=3;timeout_ms=1e6;horizon_ms=3000;"
            "surge=none;brownout=1000+500;load=0.05;capacity_factor=inf;backoff=full;"
            "backoff_base_ms=20");
  for (int pass = 0; pass < 2; pass++) {
    simulate(r, &c, 8, &s);
    const int32_t *in = eng_run_metric(r, ENG_M_IN_FLIGHT);
    int32_t peak = 0;
    for (int32_t t = 0; t < eng_run_ticks(r); t++) peak = in[t] > peak ? in[t] : peak;
    int64_t over = metric_sum(r, ENG_M_REJ_BREAKER), retries = metric_sum(r, ENG_M_RETRIES);
    print_message("limit 3 x 4 clients, retry_on %s: peak %d in flight, %lld overflows, %lld "
                  "retries\n",
                  pass ? "all" : "default", peak, (long long)over, (long long)retries);
    assert_true(peak == 12);
    assert_true(over > 100);
    if (!pass) {
      assert_int_equal(retries, 0); /* overflow is not retried by default */
      assert_int_equal(s.failed_requests, over);
    } else {
      assert_true(retries > 100);
    }
    tu_config_apply(&c, "retry_on=all");
  }
  eng_run_destroy(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_request_mode_is_the_default_engine),
      cmocka_unit_test(test_deadline_is_never_exceeded),
      cmocka_unit_test(test_backoff_past_the_deadline_is_not_sent),
      cmocka_unit_test(test_retry_on_selects_failures),
      cmocka_unit_test(test_deadline_propagation),
      cmocka_unit_test(test_hedges),
      cmocka_unit_test(test_hedges_in_a_storm),
      cmocka_unit_test(test_concurrency_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
