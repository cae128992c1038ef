/*
 * test_graph.c — call graphs (engine/graph.c, engine/graph_config.c)
 * against closed forms: retries multiply across tiers ((1 + r)^k attempts
 * at the leaf when it fails every attempt), retries at one tier only give
 * 1 + r, a 10% budget per client process holds every tier near 1.1, a
 * propagated deadline with deadline drop bounds the leaf's work per request,
 * and a chain at low load takes the sum of its tiers' M/M/c times in system.
 * Each edge's retry limiters and breakers follow their libraries' rules
 * (the retries gRPC's and AWS's token counts allow, exactly). A service's
 * series combine into rows of several ticks as the metrics
 * do. Also the settings: "NAME.key", "A->B.key", calls and their checks.
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

#include "eng.h"
#include "testutil.h"

/* No fault, no timeout that can fire, work of (nearly) zero ticks: a
 * request's whole tree of attempts ends in the tick it starts. */
#define QUIET                                                                              \
  "surge=none;brownout=none;rate_rps=300;horizon_ms=4000;timeout_ms=1e6;service=deterministic;" \
  "service_mean_ms=1e-6;"

static void run(const char *sets, eng_service_summary *out, int n, eng_summary *sum) {
  eng_config c;
  eng_config_defaults(&c);
  tu_config_apply(&c, sets);
  eng_run *r = eng_run_create();
  assert_non_null(r);
  char err[256];
  if (eng_run_simulate(r, &c, 7, sum, err, sizeof err)) fail_msg("simulate: %s", err);
  assert_int_equal(eng_run_services(r), n);
  for (int k = 0; k < n; k++) assert_int_equal(eng_run_service(r, k, &out[k]), 0);
  eng_run_destroy(r);
}

/* k tiers of r retries each (the clients' edge counts as the first), the
 * leaf failing every attempt: exactly (1 + r)^k attempts at the leaf. */
static void chain(int tiers, int retries, const int *retry_at) {
  char sets[2048];
  int n = snprintf(sets, sizeof sets, QUIET "max_retries=%d;", retry_at[0] ? retries : 0);
  for (int k = 1; k < tiers; k++) {
    n += snprintf(sets + n, sizeof sets - (size_t)n, "s%d.calls=s%d;", k - 1, k);
    n += snprintf(sets + n, sizeof sets - (size_t)n,
                  "s%d.service=deterministic;s%d.service_mean_ms=1e-6;s%d->s%d.max_retries=%d;"
                  "s%d->s%d.timeout_ms=1e6;",
                  k, k, k - 1, k, retry_at[k] ? retries : 0, k - 1, k);
  }
  snprintf(sets + n, sizeof sets - (size_t)n, "s%d.error_rate=1", tiers - 1);
  eng_service_summary v[ENG_MAX_SERVICES + 1];
  eng_summary s;
  run(sets, v, tiers, &s);
  assert_true(s.new_requests > 500);
  double expect = 1;
  for (int k = 0; k < tiers; k++) {
    expect *= retry_at[k] ? 1 + retries : 1;
    assert_int_equal(v[k].attempts, (int64_t)expect * s.new_requests);
    assert_int_equal(v[k].successes, 0);
  }
  assert_int_equal(s.failed_requests, s.new_requests);
}

static void amplification_multiplies(void **state) {
  (void)state;
  const int all[5] = {1, 1, 1, 1, 1};
  chain(3, 3, all); /* the SRE book's 4 x 4 x 4 = 64 */
  chain(5, 2, all); /* 3^5 = 243 */
}

static void retries_at_one_tier(void **state) {
  (void)state;
  const int middle[3] = {0, 1, 0}, leaf[3] = {0, 0, 1};
  chain(3, 3, middle); /* 1 + r at the middle, passed on unchanged */
  chain(3, 3, leaf);
}

/* A 10% token bucket per client process on every edge: each tier sends
 * about 1.1 attempts per call it gets, whatever fails below. */
static void budgets_hold_each_tier(void **state) {
  (void)state;
  eng_service_summary v[3];
  eng_summary s;
  run(QUIET "horizon_ms=20000;rate_rps=5000;max_retries=3;budget_ratio=0.1;"
            "api.calls=mid;mid.calls=db;mid.service=deterministic;mid.service_mean_ms=1e-6;"
            "db.service=deterministic;db.service_mean_ms=1e-6;db.error_rate=1;"
            "api->mid.max_retries=3;api->mid.budget_ratio=0.1;api->mid.timeout_ms=1e6;"
            "mid->db.max_retries=3;mid->db.budget_ratio=0.1;mid->db.timeout_ms=1e6",
      v, 3, &s);
  double per_tier[3] = {(double)v[0].attempts / (double)v[0].calls,
                        (double)v[1].attempts / (double)v[1].calls,
                        (double)v[2].attempts / (double)v[2].calls};
  for (int k = 0; k < 3; k++) {
    if (per_tier[k] < 1.09 || per_tier[k] > 1.12)
      fail_msg("tier %d: %.4f attempts per call (1.1 expected)", k, per_tier[k]);
    assert_true(v[k].budget_refused > 0 || k == 0);
  }
  /* and the chain is their product: about 1.1^3 at the leaf */
  assert_true(fabs(v[2].amplification - per_tier[0] * per_tier[1] * per_tier[2]) < 0.01);
}

/* The leaf fails every attempt after 5 ms of work and everyone retries at
 * once; the clients give a request 60 ms. Propagated with deadline_drop, the
 * deadline bounds the leaf's work per request (its last attempt may finish
 * past it); without propagation the tiers below keep retrying after the
 * clients gave up. */
static void deadline_bounds_leaf_work(void **state) {
  (void)state;
  const char *base =
      "surge=none;brownout=none;rate_rps=20;horizon_ms=20000;timeout_ms=1e6;deadline_ms=60;"
      "max_retries=1000;service_mean_ms=1;api.calls=mid;mid.calls=db;mid.service_mean_ms=1;"
      "db.service=deterministic;db.service_mean_ms=5;db.error_rate=1;db.deadline_drop=on;"
      "mid.deadline_drop=on;api->mid.max_retries=20;mid->db.max_retries=20;"
      "api->mid.timeout_ms=1e6;mid->db.timeout_ms=1e6;";
  char sets[1024];
  eng_service_summary v[3], w[3];
  eng_summary s;
  snprintf(sets, sizeof sets, "%sapi->mid.deadline_propagation=on;mid->db.deadline_propagation=on",
           base);
  run(sets, v, 3, &s);
  if (!(v[2].work_ms <= 60 + 5)) fail_msg("propagated: %.1f ms of leaf work per request", v[2].work_ms);
  assert_true(v[2].work_ms > 30); /* it does keep the leaf busy until then */
  snprintf(sets, sizeof sets, "%sapi->mid.deadline_propagation=off;mid->db.deadline_propagation=off",
           base);
  run(sets, w, 3, &s);
  if (!(w[2].work_ms > 3 * 65)) fail_msg("not propagated: %.1f ms of leaf work", w[2].work_ms);
}

/* Erlang C: the mean wait in queue of an M/M/c queue with offered load a
 * = lambda S (erlangs), and the mean time in system W = Wq + S. */
static double mmc_w(int c, double a, double S) {
  double sum = 0, term = 1;
  for (int k = 0; k < c; k++) {
    sum += term;
    term *= a / (k + 1);
  }
  double pc = term * c / (c - a);
  double p_wait = pc / (sum + pc);
  return S + p_wait * S / (c - a);
}

static void chain_sums_mmc_times(void **state) {
  (void)state;
  eng_service_summary v[3];
  eng_summary s;
  /* 8 shards x 4 workers each; front 2 ms, mid 5 ms, store 10 ms; 200
   * requests/s: the store's shards carry 0.25 erlangs of 4, the front's
   * (whose workers wait for the calls) 0.43 */
  run("surge=none;brownout=none;horizon_ms=100000;warmup_ms=1000;baseline_ms=90000;rate_rps=200;"
      "timeout_ms=1e6;shards=8;workers=4;service_mean_ms=2;api.calls=mid;mid.calls=store;"
      "mid.shards=8;mid.workers=4;mid.service_mean_ms=5;store.shards=8;store.workers=4;"
      "store.service_mean_ms=10;api->mid.timeout_ms=1e6;mid->store.timeout_ms=1e6",
      v, 3, &s);
  double lam = 200.0 / 1000 / 8; /* per shard, per ms */
  double w_store = mmc_w(4, lam * 10, 10), w_mid = mmc_w(4, lam * 5, 5);
  /* the front's worker waits for its calls: its occupancy is 2 + the rest */
  double w_front = mmc_w(4, lam * (2 + w_mid + w_store), 2 + w_mid + w_store) - w_mid - w_store;
  double expect = w_front + w_mid + w_store;
  double rel = fabs(s.little_w_ms - expect) / expect;
  if (rel > 0.02)
    fail_msg("time in system %.3f ms, M/M/c chain %.3f ms (%.1f%% off)", s.little_w_ms, expect,
             100 * rel);
  assert_int_equal(v[1].rejected + v[2].rejected + v[1].timeouts + v[2].timeouts, 0);
}

/* Stages and fan-out: "a | b, c" calls a and b at once, then c; a with
 * fanout 2 gets exactly two calls per attempt, b with fanout 0.5 one call
 * in half of them. When b fails (no retries), c is never called: a failed
 * stage ends the attempt. */
static void stages_and_fanout(void **state) {
  (void)state;
  const char *base = QUIET "max_retries=0;api.calls=a | b, c;a.service=deterministic;"
                           "a.service_mean_ms=1e-6;b.service=deterministic;b.service_mean_ms=1e-6;"
                           "c.service=deterministic;c.service_mean_ms=1e-6;api->a.fanout=2;"
                           "api->b.fanout=0.5;api->a.max_retries=0;api->b.max_retries=0;"
                           "api->c.max_retries=0;";
  eng_service_summary v[4];
  eng_summary s;
  char sets[1024];
  snprintf(sets, sizeof sets, "%s", base);
  run(sets, v, 4, &s);
  int64_t n = s.new_requests;
  assert_int_equal(v[1].attempts, 2 * n);
  assert_int_equal(v[3].attempts, n);
  double sd = sqrt(0.25 * (double)n);
  if (fabs((double)v[2].attempts - 0.5 * (double)n) > 4 * sd)
    fail_msg("b: %lld calls for %lld requests (half expected)", (long long)v[2].attempts,
             (long long)n);
  assert_int_equal(s.successes, n);
  snprintf(sets, sizeof sets, "%sb.error_rate=1", base);
  run(sets, v, 4, &s);
  assert_int_equal(v[3].attempts, n - v[2].attempts); /* c only after a stage without b */
  assert_int_equal(s.successes, n - v[2].attempts);
  assert_int_equal(v[1].attempts, 2 * n);             /* a is called beside b either way */
}

/* api calls db, which fails every attempt at once; api's 16 shards are
 * the edge's client processes, each with its own limiter or breakers. */
#define FAILING_DB                                                                         \
  QUIET "max_retries=0;api.calls=db;db.service=deterministic;db.service_mean_ms=1e-6;"     \
        "db.error_rate=1;db.shards=1;api->db.timeout_ms=1e6;api->db.max_retries=10;"

/* The libraries' own limiters on an edge, from their specifications: gRPC
 * (gRFC A6) throttles a client's retries once its tokens (10, one taken
 * per failure, none given back without a success) are at most half: 4
 * retries per client process, ever. The AWS SDK's quota of 500 at 5 per
 * retry allows 100 per client; SRE adaptive throttling, seeing no accepts,
 * refuses most calls locally. */
static void edge_limiters_follow_their_libraries(void **state) {
  (void)state;
  eng_service_summary v[2];
  eng_summary s;
  run(FAILING_DB "api->db.retry_limiter=grpc", v, 2, &s);
  assert_int_equal(v[1].retries, 4 * 16);
  assert_int_equal(v[1].attempts, v[1].calls + 4 * 16);
  assert_true(v[1].budget_refused > s.new_requests / 2);
  run(FAILING_DB "api->db.retry_limiter=aws", v, 2, &s);
  assert_int_equal(v[1].retries, 100 * 16);
  run(FAILING_DB "api->db.retry_limiter=sre_adaptive;api->db.sre_k=2", v, 2, &s);
  if ((double)v[1].budget_refused < 0.8 * (double)s.new_requests)
    fail_msg("sre_adaptive refused %lld of %lld calls to a service that accepts none",
             (long long)v[1].budget_refused, (long long)s.new_requests);
  /* the front's limiter stays the front's: no retries there */
  assert_int_equal(v[0].retries, 0);
}

/* Breakers per client process and callee shard on an edge: refusing and
 * retrying (breaker_reject = retry), every try of a call is either an
 * attempt or a refusal, (1 + r) of them per call; failing fast, each of
 * the 16 breakers lets min_calls = 10 attempts through, then one probe per
 * 1 s cool-down (it fails, and opens it again). */
static void edge_breakers_open_and_probe(void **state) {
  (void)state;
  eng_service_summary v[2];
  eng_summary s;
  run(FAILING_DB "api->db.breaker=fail_fast;api->db.breaker_reject=retry", v, 2, &s);
  assert_true(v[1].breaker_refused > 0);
  assert_int_equal(v[1].attempts + v[1].breaker_refused, 11 * s.new_requests);
  run(FAILING_DB "api->db.breaker=fail_fast", v, 2, &s);
  if (v[1].attempts < 16 * 10 || v[1].attempts > 16 * (10 + 4))
    fail_msg("%lld attempts through 16 failing-fast breakers over 4 s (160 to 224 expected)",
             (long long)v[1].attempts);
  /* a client's first call makes the 10 attempts that open its breaker,
   * then a refusal fails it; every later call is refused or a probe */
  assert_int_equal(v[1].retries, 16 * 9);
  assert_true(v[1].breaker_refused > s.new_requests / 2);
}

/* An edge's concurrency limit (Envoy's max_requests) per client process:
 * db takes 200 ms per attempt, so 2 in flight per process let at most
 * 2 x (4000 / 200 + 1) attempts through each of api's 16; the rest fail at
 * once, unretried (retry_on leaves overflow out). */
static void edge_concurrency_limit_holds(void **state) {
  (void)state;
  eng_service_summary v[2];
  eng_summary s;
  run(QUIET "max_retries=0;api.calls=db;db.service=deterministic;db.service_mean_ms=200;"
            "db.shards=1;db.workers=1000;api->db.timeout_ms=1e6;api->db.max_retries=3;"
            "api->db.max_requests_per_client=2",
      v, 2, &s);
  assert_int_equal(v[1].attempts + v[1].breaker_refused, s.new_requests);
  if (v[1].attempts > 16 * 2 * 21 || v[1].attempts < 16 * 2 * 16)
    fail_msg("%lld attempts through a limit of 2 in flight per client (512 to 672 expected)",
             (long long)v[1].attempts);
}

/* gRFC A6 hedging on an edge: db has one worker and takes 10 ms; a copy
 * every 2 ms up to three in flight. Every call makes exactly three
 * attempts (never a fourth, with ten retries left) and is answered once;
 * with hedge_cancel = on the two copies still queued are dropped unserved
 * (nothing wasted), with off both are served for nothing. */
static void edge_hedging_follows_grpc(void **state) {
  (void)state;
  const char *base = "surge=none;brownout=none;rate_rps=20;horizon_ms=4000;timeout_ms=1e6;"
                     "max_retries=0;api.calls=db;db.shards=1;db.workers=1;"
                     "db.service=deterministic;db.service_mean_ms=10;api->db.timeout_ms=1e6;"
                     "api->db.max_retries=10;api->db.hedge_attempts=3;api->db.hedge_delay_ms=2;";
  char sets[1024];
  eng_service_summary v[2];
  eng_summary s;
  for (int cancel = 0; cancel < 2; cancel++) {
    snprintf(sets, sizeof sets, "%sapi->db.hedge_cancel=%s", base, cancel ? "on" : "off");
    run(sets, v, 2, &s);
    assert_true(v[1].calls > 40);
    assert_int_equal(v[1].attempts, 3 * v[1].calls);
    assert_int_equal(v[1].retries, 2 * v[1].calls);
    assert_int_equal(v[1].successes, v[1].calls);
    assert_int_equal(v[1].failed_calls, 0);
    assert_int_equal(v[1].wasted, cancel ? 0 : 2 * v[1].calls);
    assert_int_equal(v[1].dropped, 0);
  }
  /* db failing every attempt: each call spends its 1 + 10 attempts, unless
   * gRPC's throttling, which applies to hedges too, stops them once a
   * client's tokens are at half */
  snprintf(sets, sizeof sets, "%sdb.error_rate=1;db.workers=100", base);
  run(sets, v, 2, &s);
  /* (but the calls the horizon cuts short) */
  assert_true(v[1].attempts <= 11 * v[1].calls && v[1].attempts >= 10 * v[1].calls);
  int64_t unthrottled = v[1].retries;
  snprintf(sets, sizeof sets, "%sapi->db.retry_limiter=grpc;db.error_rate=1;db.workers=100",
           base);
  run(sets, v, 2, &s);
  assert_true(v[1].budget_refused > 0);
  if (v[1].retries * 2 > unthrottled)
    fail_msg("gRPC throttling let %lld retries and hedges through, %lld without it",
             (long long)v[1].retries, (long long)unthrottled);
}

/* A downstream service serves its queue as the front does. db (one shard,
 * one worker, 10 ms a call) gets 150 calls/s, each given up after 30 ms:
 * served oldest first, nearly every attempt waits past its caller's
 * timeout; newest first (lifo, or adaptive_lifo past a queue of 2), most
 * are answered in time. Controlled delay sheds the standing queue instead;
 * with shed_reply = silent the caller hears of each shed attempt only at
 * its timeout. */
static void downstream_queue_disciplines(void **state) {
  (void)state;
  const char *base = "surge=none;brownout=none;rate_rps=150;horizon_ms=4000;timeout_ms=1e6;"
                     "max_retries=0;api.calls=db;db.shards=1;db.workers=1;"
                     "db.service=deterministic;db.service_mean_ms=10;api->db.timeout_ms=30;"
                     "api->db.max_retries=0;";
  char sets[1024];
  eng_service_summary v[2];
  eng_summary s;
  snprintf(sets, sizeof sets, "%s", base);
  run(sets, v, 2, &s);
  int64_t fifo = v[1].successes;
  snprintf(sets, sizeof sets, "%sdb.queue_discipline=lifo", base);
  run(sets, v, 2, &s);
  int64_t lifo = v[1].successes;
  snprintf(sets, sizeof sets, "%sdb.queue_discipline=adaptive_lifo;db.adaptive_lifo_threshold=2",
           base);
  run(sets, v, 2, &s);
  int64_t adaptive = v[1].successes;
  if (fifo * 4 > v[1].calls || lifo < 2 * fifo || adaptive < 2 * fifo)
    fail_msg("answered in time of %lld calls: fifo %lld, lifo %lld, adaptive_lifo %lld",
             (long long)v[1].calls, (long long)fifo, (long long)lifo, (long long)adaptive);
  snprintf(sets, sizeof sets, "%sdb.codel_target_ms=5;db.codel_interval_ms=50", base);
  run(sets, v, 2, &s);
  assert_true(v[1].shed > v[1].calls / 4);
  if (v[1].successes < 2 * fifo)
    fail_msg("controlled delay answered %lld in time, fifo alone %lld", (long long)v[1].successes,
             (long long)fifo);
  int64_t timeouts_error = v[1].timeouts;
  snprintf(sets, sizeof sets, "%sdb.codel_target_ms=5;db.codel_interval_ms=50;db.shed_reply=silent",
           base);
  run(sets, v, 2, &s);
  /* each attempt shed silently times out at its caller (but those the
   * horizon cuts short); shed with an error, it fails at once instead */
  if (v[1].timeouts < v[1].shed - 5 || timeouts_error >= v[1].timeouts)
    fail_msg("shed silently: %lld timeouts for %lld shed (%lld with errors)",
             (long long)v[1].timeouts, (long long)v[1].shed, (long long)timeouts_error);
}

/* An outage of db for 1 s: every attempt sent to it then is lost and
 * times out at its caller (20 ms, 2 retries), so the calls made during it
 * (300/s) fail and the rest succeed; clearance counts db's window. */
static void downstream_outage_loses_attempts(void **state) {
  (void)state;
  eng_service_summary v[2];
  eng_summary s;
  run(QUIET "max_retries=0;api.calls=db;db.service=deterministic;db.service_mean_ms=1e-6;"
            "db.outage=1000+1000;api->db.timeout_ms=20;api->db.max_retries=2",
      v, 2, &s);
  assert_true(v[1].lost > 0);
  assert_int_equal(v[1].timeouts, v[1].lost);
  assert_int_equal(v[1].successes + v[1].failed_calls, v[1].calls);
  if (v[1].failed_calls < 240 || v[1].failed_calls > 360)
    fail_msg("%lld calls failed in a 1 s outage at 300 calls/s", (long long)v[1].failed_calls);
  assert_true(s.clear_ms == 2000);
}

/* A service's series in rows of several ticks (what a result file at
 * record = every=MS stores): counts sum the row's ticks, the queue holds
 * its last tick's depth, and the front's rows are its own metrics. */
static void service_rows_combine_ticks(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  tu_config_apply(&c, "surge=none;brownout=none;rate_rps=3000;horizon_ms=2003;timeout_ms=50;"
                      "api.calls=db;db.workers=2;db.shards=2;db.service_mean_ms=2;"
                      "db.brownout=500+300;db.brownout_factor=0.2;db.brownout_shard=-1;"
                      "api->db.timeout_ms=20;api->db.max_retries=2");
  eng_run *every = eng_run_create(), *one = eng_run_create();
  assert_non_null(every);
  assert_non_null(one);
  eng_summary s;
  char err[256];
  eng_run_set_row_ticks(every, 10);
  if (eng_run_simulate(every, &c, 3, &s, err, sizeof err)) fail_msg("simulate: %s", err);
  if (eng_run_simulate(one, &c, 3, &s, err, sizeof err)) fail_msg("simulate: %s", err);
  int32_t T = eng_run_ticks(one), R = eng_run_rows(every);
  assert_int_equal(R, (T + 9) / 10);
  int32_t *rows = malloc((size_t)T * sizeof *rows), *ticks = malloc((size_t)T * sizeof *ticks);
  assert_non_null(rows);
  assert_non_null(ticks);
  for (int k = 0; k < 2; k++)
    for (int q = 0; q < ENG_SV_COUNT; q++) {
      eng_metric m = eng_service_trace_metric((eng_service_trace)q);
      assert_int_equal(eng_run_service_rows(every, k, (eng_service_trace)q, rows), 0);
      assert_int_equal(eng_run_service_rows(one, k, (eng_service_trace)q, ticks), 0);
      for (int32_t i = 0; i < R; i++) {
        int32_t t1 = (i + 1) * 10 < T ? (i + 1) * 10 : T;
        int64_t want = 0;
        for (int32_t t = i * 10; t < t1; t++)
          want = eng_metric_get_info(m)->sums ? want + ticks[t] : ticks[t];
        if (rows[i] != want)
          fail_msg("service %d %s row %d: %d, its ticks give %lld", k,
                   eng_metric_get_info(m)->name, i, rows[i], (long long)want);
      }
      if (k == 0)
        assert_memory_equal(ticks, eng_run_metric(one, m), (size_t)T * sizeof *ticks);
    }
  /* The brownout queues work at db: its series are not all zero. */
  assert_int_equal(eng_run_service_rows(one, 1, ENG_SV_QUEUE, ticks), 0);
  int32_t most = 0;
  for (int32_t t = 0; t < T; t++) most = ticks[t] > most ? ticks[t] : most;
  assert_true(most > 0);
  assert_int_equal(eng_run_service_rows(one, 2, ENG_SV_QUEUE, ticks), -1);
  free(rows);
  free(ticks);
  eng_run_destroy(every);
  eng_run_destroy(one);
}

static void settings_by_name(void **state) {
  (void)state;
  eng_config c;
  char err[256], buf[256];
  eng_config_defaults(&c);
  assert_int_equal(eng_config_set(&c, "api.workers", "6", err, sizeof err), 0);
  assert_int_equal(c.workers, 6); /* the first service named is the front */
  assert_int_equal(eng_config_set(&c, "api.calls", "auth, store | cache", err, sizeof err), 0);
  assert_int_equal(c.graph.n_services, 3);
  assert_int_equal(eng_config_get(&c, "api.calls", buf, sizeof buf), 0);
  assert_string_equal(buf, "auth, store | cache");
  assert_int_equal(eng_config_set(&c, "store.workers", "3", err, sizeof err), 0);
  assert_int_equal(eng_config_set(&c, "api->store.max_retries", "2", err, sizeof err), 0);
  assert_int_equal(eng_config_get(&c, "api->store.max_retries", buf, sizeof buf), 0);
  assert_string_equal(buf, "2");
  assert_true(eng_config_get_number(&c, "store.workers") == 3);
  assert_true(eng_settings_find("store.service_mean_ms") != NULL);
  assert_true(eng_settings_find("store.codel_target_ms") != NULL);
  assert_true(eng_settings_find("store.capacity_factor") != NULL);
  assert_true(eng_settings_find("api->store.fanout") != NULL);
  assert_true(eng_settings_find("api->store.hedge_attempts") != NULL);
  assert_null(eng_settings_find("api->store.crash"));      /* a fault is no edge's */
  assert_null(eng_settings_find("api->store.clients"));
  /* a list that keeps an edge keeps its policy */
  assert_int_equal(eng_config_set(&c, "api.calls", "store", err, sizeof err), 0);
  assert_int_equal(eng_config_get(&c, "api->store.max_retries", buf, sizeof buf), 0);
  assert_string_equal(buf, "2");
  assert_int_not_equal(eng_config_get(&c, "api->auth.max_retries", buf, sizeof buf), 0);
  /* refusals, each saying what is wrong; a refused set changes nothing */
  eng_config before = c;
  assert_int_not_equal(eng_config_set(&c, "store->api.max_retries", "1", err, sizeof err), 0);
  assert_non_null(strstr(err, "does not call"));
  assert_int_not_equal(eng_config_set(&c, "store.crash", "100+100", err, sizeof err), 0);
  assert_int_not_equal(eng_config_set(&c, "newsvc.workers", "0", err, sizeof err), 0);
  assert_int_not_equal(eng_config_set(&c, "1bad.workers", "2", err, sizeof err), 0);
  assert_int_not_equal(eng_config_set(&c, "api.calls", "store, store", err, sizeof err), 0);
  assert_memory_equal(&before.graph, &c.graph, sizeof c.graph);
  /* auth and cache are no longer called: the whole check says so */
  assert_int_not_equal(eng_config_validate(&c, err, sizeof err), 0);
  assert_non_null(strstr(err, "never called"));
  assert_int_equal(eng_config_set(&c, "api.calls", "store | auth, cache", err, sizeof err), 0);
  assert_int_equal(eng_config_validate(&c, err, sizeof err), 0);
  assert_int_equal(eng_config_set(&c, "cache.calls", "api", err, sizeof err), 0);
  assert_int_not_equal(eng_config_validate(&c, err, sizeof err), 0);
  assert_non_null(strstr(err, "cycle"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(settings_by_name),
      cmocka_unit_test(amplification_multiplies),
      cmocka_unit_test(retries_at_one_tier),
      cmocka_unit_test(stages_and_fanout),
      cmocka_unit_test(budgets_hold_each_tier),
      cmocka_unit_test(deadline_bounds_leaf_work),
      cmocka_unit_test(chain_sums_mmc_times),
      cmocka_unit_test(service_rows_combine_ticks),
      cmocka_unit_test(edge_limiters_follow_their_libraries),
      cmocka_unit_test(edge_breakers_open_and_probe),
      cmocka_unit_test(edge_concurrency_limit_holds),
      cmocka_unit_test(edge_hedging_follows_grpc),
      cmocka_unit_test(downstream_queue_disciplines),
      cmocka_unit_test(downstream_outage_loses_attempts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
