/*
 * test_export.c — the round trip of `stormsweep export --prometheus`: a run
 * simulated, its latency histogram written as Prometheus buckets (by the
 * functions the command uses: eng_run_latency_export, tel_ladder_log,
 * tel_hist_rebucket, tel_prom_write) and read back as service = empirical.
 *  - lognormal: a low-load run (latency = service time), exported on the
 *    default ladder (8 bounds per doubling); a run from the export has
 *    p50 / p90 / p99 within one bucket width of the lognormal's;
 *  - M/M/1: its server (1 worker, exponential 1 ms) measured at low load
 *    (docs/telemetry.md: waiting adds nothing), exported with the engine's
 *    own buckets and used as the M/M/1's service time at rho = 0.8: W must
 *    be 1 / (mu - lambda) = 5 ms within 2%.
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
#include "tel.h"
#include "testutil.h"

static void cfg_set(eng_config *c, const char *key, const char *value) {
  char err[512] = "";
  if (eng_config_set(c, key, value, err, sizeof err)) fail_msg("set %s=%s: %s", key, value, err);
}

/* One shard, no faults, no retries, no timeouts: a plain queue. */
static void cfg_queue(eng_config *c, int shards, int workers, const char *load, const char *horizon) {
  eng_config_defaults(c);
  char s[16], w[16];
  snprintf(s, sizeof s, "%d", shards);
  snprintf(w, sizeof w, "%d", workers);
  static const char *const set[][2] = {
      {"tick_ms", "0.02"}, {"surge", "none"}, {"brownout", "none"}, {"max_retries", "0"},
      {"timeout_ms", "1e6"}, {"queue_capacity", "inf"}, {"warmup_ms", "1000"},
  };
  for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) cfg_set(c, set[i][0], set[i][1]);
  cfg_set(c, "shards", s);
  cfg_set(c, "workers", w);
  cfg_set(c, "load", load);
  cfg_set(c, "horizon_ms", horizon);
  cfg_set(c, "baseline_ms", horizon);
}

/* Simulates c (seed), exports every phase's latencies to path on
 * per_doubling bounds (0: the engine's buckets); *ladder gets the bounds. */
static void export_run(const eng_config *c, uint64_t seed, int per_doubling, const char *path,
                       tel_hist *ladder) {
  eng_run *run = eng_run_create();
  eng_summary s;
  char err[512] = "";
  if (eng_run_simulate(run, c, seed, &s, err, sizeof err)) fail_msg("%s", err);
  eng_lat_export *lat = malloc(sizeof *lat);
  assert_non_null(lat);
  assert_int_equal(eng_run_latency_export(run, ENG_PHASE_COUNT, lat), 0);
  assert_true(lat->n > 0);
  double *counts = calloc(lat->n + 1, sizeof *counts);
  assert_non_null(counts);
  memcpy(counts, lat->count, lat->n * sizeof *counts);
  tel_hist fine = {.n = lat->n, .le = lat->le_ms, .count = counts, .sum = lat->sum_ms,
                   .total = lat->total};
  if (fine.total != (double)(s.successes + s.failed_requests) && fine.total <= 0)
    fail_msg("export holds %g requests", fine.total);
  double *b = NULL;
  size_t nb = 0;
  if (per_doubling)
    assert_int_equal(tel_ladder_log(fine.le[1], fine.le[fine.n - 1], per_doubling, &b, &nb), 0);
  assert_int_equal(tel_hist_rebucket(&fine, per_doubling ? b : fine.le,
                                     per_doubling ? nb : fine.n, ladder), 0);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  const char *names[] = {"phase"}, *values[] = {"all"};
  tel_prom_write(f, "svc_seconds", "round trip", names, values, 1, ladder);
  fclose(f);
  print_message("  exported %zu buckets, %g requests, mean %.4f ms\n", ladder->n, ladder->total,
                ladder->sum / ladder->total);
  free(b);
  free(counts);
  free(lat);
  eng_run_destroy(run);
}

static double width_at(const tel_hist *h, double x) {
  for (size_t i = 0; i < h->n; i++)
    if (x <= h->le[i]) return h->le[i] - (i ? h->le[i - 1] : 0);
  return INFINITY;
}

static void test_lognormal_export_round_trip(void **state) {
  (void)state;
  const double mu = log(5), sigma = 0.6, mean = exp(mu + sigma * sigma / 2);
  char dir[256], path[512], m[32];
  if (tu_tmpdir_make(dir, sizeof dir, "export")) fail_msg("no temporary directory");
  tu_path(path, sizeof path, dir, "run.prom");
  eng_config a;
  cfg_queue(&a, 1, 64, "0.05", "100000"); /* 64 workers at 5%: nothing waits */
  cfg_set(&a, "service", "lognormal");
  snprintf(m, sizeof m, "%.17g", mean);
  cfg_set(&a, "service_mean_ms", m);
  cfg_set(&a, "service_sigma", "0.6");
  tel_hist ladder;
  export_run(&a, 3, 8, path, &ladder);

  eng_config b;
  cfg_queue(&b, 1, 64, "0.05", "100000");
  cfg_set(&b, "service", "empirical");
  cfg_set(&b, "service_histogram", path);
  cfg_set(&b, "service_histogram_series", "phase=\"all\"");
  eng_run *run = eng_run_create();
  eng_summary s;
  char err[512] = "";
  if (eng_run_simulate(run, &b, 5, &s, err, sizeof err)) fail_msg("%s", err);
  eng_run_destroy(run);
  const double got[] = {s.user[0].p50_ms, s.user[0].p90_ms, s.user[0].p99_ms};
  const double z[] = {0, 1.2815515655446004, 2.3263478740408408}, ps[] = {50, 90, 99};
  for (int k = 0; k < 3; k++) {
    double want = exp(mu + sigma * z[k]), w = width_at(&ladder, want);
    print_message("  p%-3g from the export %.4f ms, lognormal %.4f ms, bucket width %.4f ms\n",
                  ps[k], got[k], want, w);
    if (!(fabs(got[k] - want) <= w))
      fail_msg("p%g: %.4f ms, lognormal %.4f ms: more than one bucket width (%.4f) apart", ps[k],
               got[k], want, w);
  }
  tel_hist_free(&ladder);
  tu_tmpdir_remove(dir);
}

static void test_mm1_from_own_export(void **state) {
  (void)state;
  char dir[256], path[512];
  if (tu_tmpdir_make(dir, sizeof dir, "export")) fail_msg("no temporary directory");
  tu_path(path, sizeof path, dir, "mm1.prom");
  /* the M/M/1's server at low load: 64 of them at 5%, bounded-load routing
   * sends each request to an idle one, so the latency is the service time */
  eng_config a;
  cfg_queue(&a, 64, 1, "0.05", "60000");
  cfg_set(&a, "service", "exponential");
  cfg_set(&a, "service_mean_ms", "1");
  tel_hist h;
  export_run(&a, 9, 0, path, &h);
  tel_hist_free(&h);

  eng_config c;
  cfg_queue(&c, 1, 1, "0.8", "30000");
  cfg_set(&c, "service", "empirical");
  cfg_set(&c, "service_histogram", path);
  eng_run *run = eng_run_create();
  double w = 0;
  const int R = 16;
  for (int k = 0; k < R; k++) {
    eng_summary s;
    char err[512] = "";
    if (eng_run_simulate(run, &c, eng_seed_derive(77, 0, (uint64_t)k), &s, err, sizeof err))
      fail_msg("%s", err);
    w += s.little_w_ms / R;
  }
  eng_run_destroy(run);
  print_message("  M/M/1 rho 0.8 from its exported histogram: W %.4f ms, theory 5 ms (%+.2f%%)\n",
                w, 100 * (w - 5) / 5);
  if (!(fabs(w - 5) <= 0.02 * 5)) fail_msg("W %.4f ms, more than 2%% from 5 ms", w);
  tu_tmpdir_remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lognormal_export_round_trip),
      cmocka_unit_test(test_mm1_from_own_export),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
