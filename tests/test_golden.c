/*
 * test_golden.c — the engine's results are pinned: every per-tick metric and
 * the summary of runs covering each mechanism (policies, crash with
 * failover, outage, brownout, CoDel variants, LIFO, breakers, every backoff,
 * silent shedding, Zipf and hot keys, router_load = admitted) hash to
 * values computed once with the engine as it was before the performance
 * engine performance work (main at a750cc5).
 *
 * Speed work on the hot loop (data layout, skipped bookkeeping, cached
 * router caps) must not change a single number; determinism tests only
 * compare the engine with itself, so this is what catches a change of
 * results. A deliberate change of the model updates the table: run
 * `test_golden --print` and paste its output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "eng.h"
#include "testutil.h"

typedef struct golden {
  const char *name;
  const char *sets; /* "key=value;key=value" */
  uint64_t seed;
  uint64_t digest; /* XXH3 of every metric trace and the summary's counts */
} golden;

static const golden cases[] = {
    {"guarded", "policy=guarded", 1, 0x939e97bf51ed11d8ULL},
    {"naive", "policy=naive", 1, 0x48f883fd01e8d2eeULL},
    {"naive seed 7", "policy=naive", 7, 0xecef255e813233b9ULL},
    {"crash failover", "policy=guarded;crash=3000+1000;horizon_ms=6000", 2, 0x0a2c258984d8653cULL},
    {"crash admitted", "crash=2500+800;router_load=admitted;horizon_ms=5000", 3, 0xe34a97e091f47475ULL},
    {"outage", "policy=guarded;outage=2500+300;surge=none;horizon_ms=5000", 4, 0xb1bd1b310b6f090aULL},
    {"codel", "codel_target_ms=5;surge_factor=3;horizon_ms=5000", 5, 0x50b0329b06ebc44eULL},
    {"codel rfc", "codel_target_ms=5;codel_variant=rfc8289;surge_factor=3;horizon_ms=5000", 5,
     0x9b3367d23276a680ULL},
    {"lifo", "queue_discipline=adaptive_lifo;adaptive_lifo_threshold=8;horizon_ms=5000", 6,
     0xc8011842af3ac8c6ULL},
    {"breaker", "breaker=fail_fast;horizon_ms=5000", 7, 0xa6df6589e2bb9179ULL},
    {"breaker next", "breaker=next_shard;breaker_reject=retry;backoff=equal;horizon_ms=5000", 8,
     0x40e76e322892dc7eULL},
    {"decorrelated", "backoff=decorrelated;backoff_cap_ms=200;budget_ratio=0.2;horizon_ms=5000", 9,
     0x5736c552ca07cdc3ULL},
    {"silent", "shed_reply=silent;deadline_drop=on;horizon_ms=5000", 10, 0xb718a3e73f0b45f2ULL},
    {"zipf hot", "key_dist=zipf;hot_key=2500+500;surge=none;horizon_ms=5000", 11, 0x8ea0c2e3384e3df1ULL},
    {"lognormal slow", "service=lognormal;brownout_factor=0.3;timeout_ms=20;horizon_ms=5000", 12,
     0xc8a0ec19676b96c0ULL},
    {"deterministic", "service=deterministic;capacity_factor=inf;load=0.95;horizon_ms=4000", 13,
     0x663b24714fad2cc5ULL},
    {"plain timeout", "timeout_ms=3;max_retries=5;workers=2;horizon_ms=3000", 14, 0x16ad67a22bc75767ULL},
};

static uint64_t run_digest(eng_run *r, const golden *g) {
  eng_config c;
  eng_config_defaults(&c);
  tu_config_apply(&c, g->sets);
  eng_summary s;
  char err[256];
  if (eng_run_simulate(r, &c, g->seed, &s, err, sizeof err)) fail_msg("%s: %s", g->name, err);
  XXH3_state_t *st = XXH3_createState();
  assert_non_null(st);
  XXH3_64bits_reset(st);
  int32_t ticks = eng_run_ticks(r);
  /* The metrics the engine had before the user-view ones (test_latency
   * checks those against queueing theory). */
  for (int m = 0; m < ENG_M_USER_FIRST; m++)
    XXH3_64bits_update(st, eng_run_metric(r, (eng_metric)m), (size_t)ticks * sizeof(int32_t));
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

static void test_golden_runs(void **state) {
  (void)state;
  eng_run *r = eng_run_create();
  assert_non_null(r);
  int bad = 0;
  /* Twice over one context: a reused context must give the same numbers. */
  for (int pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
      uint64_t d = run_digest(r, &cases[k]);
      if (d != cases[k].digest) {
        print_error("%s (pass %d): digest 0x%016llx, pinned 0x%016llx\n", cases[k].name, pass,
                    (unsigned long long)d, (unsigned long long)cases[k].digest);
        bad++;
      }
    }
  eng_run_destroy(r);
  if (bad) fail_msg("%d runs differ from their pinned results", bad);
}

/* A run that keeps no per-tick rows feeds the outcome rule and the totals
 * tick by tick: its summary must be the same to the bit. */
static void test_without_rows_same_summary(void **state) {
  (void)state;
  eng_run *full = eng_run_create(), *lean = eng_run_create();
  assert_non_null(full);
  assert_non_null(lean);
  eng_run_set_row_ticks(lean, 0);
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    eng_config c;
    eng_config_defaults(&c);
    tu_config_apply(&c, cases[k].sets);
    eng_summary a, b;
    char err[256];
    if (eng_run_simulate(full, &c, cases[k].seed, &a, err, sizeof err) ||
        eng_run_simulate(lean, &c, cases[k].seed, &b, err, sizeof err))
      fail_msg("%s: %s", cases[k].name, err);
    if (memcmp(&a, &b, sizeof a)) fail_msg("%s: the summary differs without rows", cases[k].name);
    assert_null(eng_run_metric(lean, ENG_M_QUEUE_DEPTH));
  }
  eng_run_destroy(full);
  eng_run_destroy(lean);
}

/* Rows of k ticks as the file's `record = every=` defines them, made here
 * from the per-tick rows without the engine's help: counters summed
 * (saturating), levels and the user view at the row's last tick. */
static int32_t oracle_row(const int32_t *tick, int32_t ticks, int32_t k, int32_t i, int sums) {
  int64_t t0 = (int64_t)i * k, t1 = t0 + k < ticks ? t0 + k : ticks;
  if (!sums) return tick[t1 - 1];
  int64_t v = 0;
  for (int64_t t = t0; t < t1; t++) v += tick[t];
  return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* A run keeping a row per k ticks (eng_run_set_row_ticks) holds exactly the
 * rows the per-tick run's ticks make, for every metric and the per-shard
 * queues, and the same summary. */
static void test_rows_of_k_ticks(void **state) {
  (void)state;
  eng_run *full = eng_run_create(), *strided = eng_run_create();
  assert_non_null(full);
  assert_non_null(strided);
  static const int32_t ks[] = {3, 37, 1000, 1 << 20};
  int checked = 0;
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    eng_config c;
    eng_config_defaults(&c);
    tu_config_apply(&c, cases[k].sets);
    c.record_shard_queues = 1;
    eng_summary a, b;
    char err[256];
    if (eng_run_simulate(full, &c, cases[k].seed, &a, err, sizeof err))
      fail_msg("%s: %s", cases[k].name, err);
    int32_t T = eng_run_ticks(full), S = c.shards;
    const int32_t *sq = eng_run_shard_queues(full);
    assert_non_null(sq);
    for (size_t x = 0; x < sizeof ks / sizeof *ks; x++) {
      int32_t kk = ks[x];
      eng_run_set_row_ticks(strided, kk);
      if (eng_run_simulate(strided, &c, cases[k].seed, &b, err, sizeof err))
        fail_msg("%s: %s", cases[k].name, err);
      if (memcmp(&a, &b, sizeof a))
        fail_msg("%s, rows of %d ticks: the summary differs", cases[k].name, kk);
      int32_t R = eng_run_rows(strided);
      assert_int_equal(R, (T + kk - 1) / kk);
      for (int m = 0; m < ENG_M_COUNT; m++) {
        const int32_t *tick = eng_run_metric(full, (eng_metric)m);
        const int32_t *row = eng_run_metric(strided, (eng_metric)m);
        int sums = eng_metric_get_info((eng_metric)m)->sums;
        for (int32_t i = 0; i < R; i++)
          if (row[i] != oracle_row(tick, T, kk, i, sums))
            fail_msg("%s, rows of %d ticks: %s row %d is %d, its ticks make %d", cases[k].name,
                     kk, eng_metric_get_info((eng_metric)m)->name, i, row[i],
                     oracle_row(tick, T, kk, i, sums));
        checked++;
      }
      const int32_t *rq = eng_run_shard_queues(strided);
      assert_non_null(rq);
      for (int32_t i = 0; i < R; i++) {
        int64_t last = (int64_t)i * kk + kk - 1 < T ? (int64_t)i * kk + kk - 1 : T - 1;
        for (int32_t s = 0; s < S; s++)
          if (rq[(size_t)i * S + s] != sq[(size_t)last * S + s])
            fail_msg("%s, rows of %d ticks: shard %d's queue in row %d", cases[k].name, kk, s, i);
      }
    }
  }
  assert_true(checked > 0);
  eng_run_destroy(full);
  eng_run_destroy(strided);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--print")) {
    eng_run *r = eng_run_create();
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
      printf("%-16s 0x%016llxULL\n", cases[k].name,
             (unsigned long long)run_digest(r, &cases[k]));
    eng_run_destroy(r);
    return 0;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden_runs),
                                     cmocka_unit_test(test_without_rows_same_summary),
                                     cmocka_unit_test(test_rows_of_k_ticks)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
