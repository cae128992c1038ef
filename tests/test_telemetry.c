/*
 * test_telemetry.c — latency histograms and rate series from telemetry
 * files, and the empirical service time built from them:
 *  - the readers (Prometheus text, OpenTelemetry JSON explicit and
 *    exponential, CSV of latencies and of buckets, rate CSV and Prometheus
 *    range query) give the numbers the good files of tests/telemetry/good
 *    hold, and one series is chosen by its labels;
 *  - the sampling rule within a bucket (log-linear, linear from 0, the
 *    +Inf bucket as an exponential tail whose mean comes from _sum) and the
 *    distribution's mean;
 *  - the round trip: a lognormal's CDF written as Prometheus buckets and
 *    read back as service = empirical gives p50 / p90 / p99 within one
 *    bucket width of the lognormal's, and a run of the engine at low load
 *    gives its mean sojourn as the lognormal's mean.
 * (The M/M/1 from an exponential histogram is in test_queueing.c; broken
 * files in tests/cli_telemetry.sh.)
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
#include "telemetry_tables.h"
#include "testutil.h"
#include "variates.h"

#define GOOD STORMSWEEP_SOURCE_DIR "/tests/telemetry/good/"

static void near(double got, double want, double tol, const char *what) {
  if (!(fabs(got - want) <= tol))
    fail_msg("%s: %.17g, expected %.17g (+- %g)", what, got, want, tol);
}

static void load_hist(const char *file, const char *series, tel_hist *h) {
  char err[512] = "";
  if (tel_hist_load(file, series, h, err, sizeof err)) fail_msg("%s: %s", file, err);
}

/* The /get histogram of scrape.prom, the same in otel-histogram.json and
 * buckets.csv: bounds 1, 2, 5, 10 ms; 10, 30, 50, 9 and 1 above. */
static void expect_get(const tel_hist *h, int with_sum) {
  static const double le[] = {1, 2, 5, 10}, count[] = {10, 30, 50, 9, 1};
  assert_int_equal(h->n, 4);
  near(h->lower, 0, 0, "lower");
  for (int i = 0; i < 4; i++) near(h->le[i], le[i], 1e-12, "le");
  for (int i = 0; i < 5; i++) near(h->count[i], count[i], 0, "count");
  near(h->total, 100, 0, "total");
  if (with_sum) near(h->sum, 300, 1e-9, "sum");
  else assert_true(isnan(h->sum));
}

static void test_readers(void **state) {
  (void)state;
  tel_hist h;
  load_hist(GOOD "scrape.prom", "handler=\"/get\"", &h);
  expect_get(&h, 1);
  tel_hist_free(&h);
  load_hist(GOOD "scrape.prom", "http_request_duration_seconds{handler=\"/get\"}", &h);
  expect_get(&h, 1);
  tel_hist_free(&h);
  load_hist(GOOD "scrape.prom", "handler=\"/put\"", &h);
  assert_int_equal(h.n, 1);
  near(h.le[0], 10, 1e-12, "/put le");
  near(h.sum, 20, 1e-9, "/put sum");
  tel_hist_free(&h);
  load_hist(GOOD "otel-histogram.json", "http.route=\"/get\",service.name=\"api\"", &h);
  expect_get(&h, 1);
  tel_hist_free(&h);
  load_hist(GOOD "buckets.csv", NULL, &h);
  expect_get(&h, 0);
  tel_hist_free(&h);
  /* exponential: scale 2, base 2^(1/4); zero bucket, (0, 1] empty, then
   * (base^k, base^(k+1)] for k = 0..7 */
  load_hist(GOOD "otel-exponential.json", NULL, &h);
  assert_int_equal(h.n, 10);
  near(h.le[0], 0, 0, "zero bucket");
  near(h.le[1], 1, 1e-12, "first bound");
  for (int k = 0; k < 8; k++) near(h.le[k + 2], pow(2, (k + 1) / 4.0), 1e-12, "exp bound");
  near(h.count[2], 10, 0, "first count");
  near(h.count[9], 2, 0, "last count");
  near(h.total, 100, 0, "exp total");
  tel_hist_free(&h);
  /* raw latencies: a bucket between neighbouring order statistics */
  load_hist(GOOD "latencies.csv", NULL, &h);
  assert_int_equal(h.n, 7);
  near(h.lower, 0.8, 0, "min");
  near(h.le[6], 5.0, 0, "max");
  near(h.sum, 18.4, 1e-9, "sum");
  tel_hist_free(&h);
  /* rate series, relative to the first point */
  const char *rates[] = {GOOD "rate.csv", GOOD "rate-range.json"};
  for (int f = 0; f < 2; f++) {
    tel_series s;
    char err[512] = "";
    if (tel_series_load(rates[f], NULL, &s, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(s.n, 6);
    near(s.t_s[0], 0, 0, "t0");
    near(s.t_s[2], 90, 1e-9, "t2");
    near(s.rate[2], 3000, 0, "rate2");
    tel_series_free(&s);
  }
}

/* Several series, none chosen: -2, so a later series setting can choose. */
static void test_selection(void **state) {
  (void)state;
  tel_hist h;
  char err[512] = "";
  assert_int_equal(tel_hist_load(GOOD "scrape.prom", NULL, &h, err, sizeof err), -2);
  tu_assert_contains(err, "2 histogram series match", __FILE__, __LINE__);
  assert_int_equal(tel_hist_load(GOOD "scrape.prom", "handler=\"/x\"", &h, err, sizeof err), -1);
  tu_assert_contains(err, "scrape.prom:3: no histogram series matches", __FILE__, __LINE__);
  assert_int_equal(tel_hist_load(GOOD "scrape.prom", "handler=/get", &h, err, sizeof err), -1);
  tu_assert_contains(err,
                     "scrape.prom: the series selector 'handler=/get': a label value must be in "
                     "double quotes",
                     __FILE__, __LINE__);
}

/* The rule within a bucket, at chosen cumulative probabilities. */
static void test_sampling_rule(void **state) {
  (void)state;
  eng_empirical e;
  /* (0, 2]: 1, (2, 8]: 2, above 8: 1 with sum 4 x ... */
  double le[] = {2, 8}, count[] = {1, 2, 1};
  /* means: 1 (linear), 6 / ln 4 (log-linear); the +Inf bucket's mean is
   * what the sum leaves: 30 - 1 - 2 x 6 / ln 4 */
  double tail_mean = 30 - 1 - 12 / log(4);
  assert_int_equal(eng_empirical_build(&e, 2, 0, le, count, 30), 0);
  near(e.mean_ms, 30.0 / 4, 1e-12, "mean is sum / count");
  near(e.tail_share, 0.25, 0, "tail share");
  near(e.tail_mean_ms, tail_mean, 1e-12, "tail mean");
  near(eng_empirical_at(&e, 0.125), 1, 1e-12, "linear bucket midpoint");
  near(eng_empirical_at(&e, 0.5), 4, 1e-12, "log-linear midpoint = geometric mean");
  near(eng_empirical_at(&e, 0.25 + 0.5 * 0.25), 2 * pow(4, 0.25), 1e-12, "log-linear quarter");
  /* tail: 8 + (tail_mean - 8) Exp(1) at the tail's median */
  near(eng_empirical_at(&e, 0.875), 8 + (tail_mean - 8) * log(2), 1e-9, "tail median");
  /* a draw's mean converges to the mean */
  eng_rng g;
  eng_rng_seed(&g, 42, 0);
  double s = 0;
  const int N = 2000000;
  for (int i = 0; i < N; i++) s += eng_empirical_draw(&e, &g);
  near(s / N, e.mean_ms, 0.05, "sample mean");
  eng_empirical_free(&e);
  /* no sum: the +Inf bucket sits at the last bound */
  assert_int_equal(eng_empirical_build(&e, 2, 0, le, count, NAN), 0);
  near(eng_empirical_at(&e, 0.9), 8, 0, "tail without sum");
  eng_empirical_free(&e);
  /* empty buckets are skipped; a zero-width bucket is a point */
  double le2[] = {0, 1, 3}, count2[] = {5, 0, 5, 0};
  assert_int_equal(eng_empirical_build(&e, 3, 0, le2, count2, NAN), 0);
  assert_int_equal(e.n, 2);
  near(eng_empirical_at(&e, 0.3), 0, 0, "point mass at 0");
  near(eng_empirical_at(&e, 0.75), sqrt(3), 1e-12, "(1, 3] midpoint");
  eng_empirical_free(&e);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double lognormal_cdf(double x, double mu, double sigma) {
  return 0.5 * erfc(-(log(x) - mu) / (sigma * sqrt(2)));
}

/* The bucket of bounds b (n of them, from 0) that holds x: its width. */
static double width_at(const double *b, int n, double x) {
  for (int i = 0; i < n; i++)
    if (x <= b[i]) return b[i] - (i ? b[i - 1] : 0);
  return INFINITY;
}

static void test_lognormal_round_trip(void **state) {
  (void)state;
  /* lognormal, median 5 ms, sigma 0.6: mean 5 e^0.18 = 5.986 ms */
  const double mu = log(5), sigma = 0.6, N = 1e6;
  /* Buckets as a client library would make them: 0.5 ms x 1.2^k, in seconds */
  enum { NB = 34 };
  double b[NB];
  for (int i = 0; i < NB; i++) b[i] = 0.5 * pow(1.2, i);
  char dir[256], path[512];
  if (tu_tmpdir_make(dir, sizeof dir, "telemetry")) fail_msg("no temporary directory");
  tu_path(path, sizeof path, dir, "lognormal.prom");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# TYPE svc_seconds histogram\n");
  for (int i = 0; i < NB; i++)
    fprintf(f, "svc_seconds_bucket{le=\"%.17g\"} %.17g\n", b[i] / 1000,
            N * lognormal_cdf(b[i], mu, sigma));
  double mean = exp(mu + sigma * sigma / 2);
  fprintf(f, "svc_seconds_bucket{le=\"+Inf\"} %.17g\n", N);
  fprintf(f, "svc_seconds_sum %.17g\nsvc_seconds_count %.17g\n", N * mean / 1000, N);
  fclose(f);

  eng_config c;
  eng_config_defaults(&c);
  char err[512] = "";
  if (eng_config_set(&c, "service", "empirical", err, sizeof err) ||
      eng_config_set(&c, "service_histogram", path, err, sizeof err))
    fail_msg("%s", err);
  assert_non_null(c.svc_table);
  print_message("  table mean %.4f ms (lognormal %.4f), service_mean_ms %.4f\n",
                c.svc_table->mean_ms, mean, c.service_mean_ms);
  near(c.service_mean_ms, mean, 0.01 * mean, "service_mean_ms from the histogram");

  /* quantiles of 2 million draws, as the engine draws them */
  const int M = 2000000;
  double *x = malloc(M * sizeof *x);
  assert_non_null(x);
  eng_rng g;
  eng_rng_seed(&g, 7, 0);
  for (int i = 0; i < M; i++) x[i] = eng_empirical_draw(c.svc_table, &g);
  qsort(x, M, sizeof *x, cmp_double);
  const double ps[] = {0.5, 0.9, 0.99}, z[] = {0, 1.2815515655446004, 2.3263478740408408};
  for (int k = 0; k < 3; k++) {
    double want = exp(mu + sigma * z[k]), got = x[(int)(ps[k] * M)];
    double w = width_at(b, NB, want);
    print_message("  p%-4g simulated %.4f ms, lognormal %.4f ms, bucket width %.4f ms\n",
                  100 * ps[k], got, want, w);
    if (!(fabs(got - want) <= w))
      fail_msg("p%g: %.4f ms, lognormal %.4f ms: more than one bucket width (%.4f) apart",
               100 * ps[k], got, want, w);
  }
  free(x);

  /* the engine: 1 shard of 64 workers at 5% load queues nothing, so the
   * mean sojourn is the mean service time */
  static const char *const set[][2] = {
      {"shards", "1"},       {"workers", "64"},        {"load", "0.05"},  {"tick_ms", "0.05"},
      {"surge", "none"},     {"brownout", "none"},     {"max_retries", "0"},
      {"timeout_ms", "1e4"}, {"queue_capacity", "inf"}, {"horizon_ms", "20000"},
      {"warmup_ms", "500"},  {"baseline_ms", "20000"},
  };
  for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
    if (eng_config_set(&c, set[i][0], set[i][1], err, sizeof err)) fail_msg("%s", err);
  if (eng_config_validate(&c, err, sizeof err)) fail_msg("%s", err);
  eng_run *run = eng_run_create();
  eng_summary s;
  if (eng_run_simulate(run, &c, 11, &s, err, sizeof err)) fail_msg("%s", err);
  eng_run_destroy(run);
  print_message("  engine at 5%% load: W %.4f ms over %lld requests (lognormal mean %.4f)\n",
                s.little_w_ms, (long long)s.new_requests, mean);
  near(s.little_w_ms, mean, 0.02 * mean, "mean sojourn at low load");
  tu_tmpdir_remove(dir);
}

/* A rate profile: interpolation, held ends, the per-tick cursor. */
static void test_rate_profile(void **state) {
  (void)state;
  const eng_rate_profile *p;
  char err[512] = "";
  if (eng_tables_rate(GOOD "rate.csv", "", &p, err, sizeof err)) fail_msg("%s", err);
  near(p->peak_rps, 3000, 0, "peak");
  near(p->end_ms, 300000, 0, "end");
  size_t cur = 0;
  near(eng_rate_profile_at(p, 0, &cur), 1000, 0, "t=0");
  near(eng_rate_profile_at(p, 75000, &cur), 2000, 1e-9, "t=75 s: halfway up");
  near(eng_rate_profile_at(p, 120000, &cur), 3000, 0, "t=120 s");
  near(eng_rate_profile_at(p, 1e9, &cur), 1000, 0, "after the end: held");
  /* the same (file, series) is one table */
  const eng_rate_profile *q;
  if (eng_tables_rate(GOOD "rate.csv", "", &q, err, sizeof err)) fail_msg("%s", err);
  assert_ptr_equal(p, q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_readers),
      cmocka_unit_test(test_selection),
      cmocka_unit_test(test_sampling_rule),
      cmocka_unit_test(test_lognormal_round_trip),
      cmocka_unit_test(test_rate_profile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
