/*
 * test_latency.c — what users see: the log-linear latency histogram against
 * exact quantiles of synthetic inputs, and the engine's per-request latency
 * and final status against queueing theory and simple faults:
 *   - M/M/1 and M/M/c response time (sojourn, FIFO) has the closed form
 *     P(T > t) = (1 - C) e^{-mu t} + C P(S + Y > t), S ~ Exp(mu),
 *     Y ~ Exp(c mu - lambda), C the Erlang C probability of waiting (for
 *     c = 1: exponential with rate mu - lambda); the measured p50 / p90 /
 *     p99, averaged over replications, are within 2% of it;
 *   - deterministic service without queueing: every latency is exactly the
 *     service time;
 *   - a fault that rejects every request for 500 ms: 100% errors in the
 *     windows it covers, none before; retries' backoff waits count in the
 *     latency; a request deadline caps it and names the status.
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

#include "decision.h"
#include "eng.h"
#include "latency_hist.h"

static void cfg_set(eng_config *c, const char *key, const char *value) {
  char err[512] = "";
  if (eng_config_set(c, key, value, err, sizeof err)) fail_msg("set %s=%s: %s", key, value, err);
}

static void cfg_setf(eng_config *c, const char *key, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", v);
  cfg_set(c, key, buf);
}

static void simulate(eng_run *run, const eng_config *c, uint64_t seed, eng_summary *s) {
  char err[512] = "";
  if (eng_run_simulate(run, c, seed, s, err, sizeof err)) fail_msg("simulate: %s", err);
}

/* ---- the histogram ---- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* Every bucket is its own lower bound's at most 1/128 wide, the buckets tile
 * the range without gaps, and 1 h falls inside it. */
static void test_hist_buckets(void **state) {
  (void)state;
  for (uint32_t b = 0; b + 1 < ENG_LH_BUCKETS; b++) {
    uint64_t lo = eng_lh_bucket_low(b), w = eng_lh_bucket_width(b);
    assert_int_equal(eng_lh_bucket_low(b + 1), lo + w);
    assert_int_equal(eng_lh_index(lo), b);
    assert_int_equal(eng_lh_index(lo + w - 1), b);
    if (lo >= ENG_LH_LINEAR) assert_true((double)w / (double)lo <= 1.0 / 128 + 1e-12);
  }
  assert_true(eng_lh_index(3600000000ULL) < ENG_LH_BUCKETS - 1);
  assert_int_equal(eng_lh_index(UINT64_MAX), ENG_LH_BUCKETS - 1);
}

/* Quantiles of log-uniform values over 1 us .. 1 h, of values below 256 us
 * (exact) and of a constant, against the sorted input: the error is within
 * the bucket bound (half a bucket: 1/256 of the value) and below 1%. */
static void test_hist_quantiles(void **state) {
  (void)state;
  enum { N = 200000 };
  uint64_t *v = malloc(N * sizeof *v), seed = 12345;
  eng_lat_hist *h = malloc(sizeof *h);
  assert_non_null(v);
  assert_non_null(h);
  const double qs[] = {0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0};
  for (int kind = 0; kind < 3; kind++) {
    eng_lh_init(h);
    for (int i = 0; i < N; i++) {
      double u = (double)lcg(&seed) / 9007199254740992.0;
      v[i] = kind == 0   ? (uint64_t)exp(u * log(3.6e9))
             : kind == 1 ? lcg(&seed) % 256
                         : 10000;
      eng_lh_add(h, v[i]);
    }
    qsort(v, N, sizeof *v, cmp_u64);
    double worst = 0;
    for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
      size_t rank = (size_t)ceil(qs[k] * N);
      double exact = (double)v[rank - 1], est = eng_lh_quantile(h, qs[k]);
      double err = fabs(est - exact);
      if (!(err <= exact / 256 + 1e-9))
        fail_msg("input %d q %.3f: %.1f vs exact %.0f, beyond half a bucket", kind, qs[k], est,
                 exact);
      if (exact > 0 && err / exact > worst) worst = err / exact;
      if (kind == 1) assert_true(est == exact); /* one value per bucket below 256 */
    }
    print_message("  input %d: worst relative quantile error %.5f%%\n", kind, 100 * worst);
    assert_true(worst < 0.01);
  }
  /* merge and reset */
  eng_lat_hist *g = malloc(sizeof *g);
  assert_non_null(g);
  eng_lh_init(g);
  eng_lh_merge(g, h);
  assert_int_equal(g->n, N);
  assert_true(fabs(eng_lh_quantile(g, 0.5) - 10000) <= 10000.0 / 256);
  assert_true(eng_lh_max(g) >= 10000 && eng_lh_max(g) - 10000 <= 10000.0 / 128);
  eng_lh_reset(h);
  assert_int_equal(h->n, 0);
  assert_true(eng_lh_quantile(h, 0.5) == -1);
  for (uint32_t b = 0; b < ENG_LH_BUCKETS; b++) assert_int_equal(h->count[b], 0);
  free(g);
  free(h);
  free(v);
}

/* ---- queueing theory ---- */

static double erlang_c(int c, double a) {
  double term = 1, sum = 1;
  for (int k = 1; k < c; k++) {
    term *= a / k;
    sum += term;
  }
  double last = term * a / c / (1 - a / c);
  return last / (sum + last);
}

/* P(T > t) of the M/M/c sojourn with mu = 1 per ms, lambda = rho c. */
static double mmc_survival(int c, double rho, double t) {
  double lam = rho * c, C = erlang_c(c, lam), a = 1, b = c - lam;
  double conv = fabs(b - a) < 1e-12 ? exp(-a * t) * (1 + a * t)
                                     : (b * exp(-a * t) - a * exp(-b * t)) / (b - a);
  return (1 - C) * exp(-a * t) + C * conv;
}

static double mmc_quantile(int c, double rho, double q) {
  double lo = 0, hi = 1;
  while (mmc_survival(c, rho, hi) > 1 - q) hi *= 2;
  for (int k = 0; k < 200; k++) {
    double mid = 0.5 * (lo + hi);
    if (mmc_survival(c, rho, mid) > 1 - q) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/* Shards of c workers each, exponential service of 1 ms, Poisson arrivals at
 * load rho, unbounded FIFO queues, nothing fails: the baseline phase (warmup
 * to 0.9 of the horizon) holds the requests measured. Keys are uniform and
 * the ring plain consistent hashing, so each shard sees its own Poisson
 * stream (a random split of one): independent M/M/c queues, at rates as
 * equal as 4096 points per shard make them (a share off by e moves a
 * shard's quantiles by about e, and the mix of all shards by about e^2).
 * Latencies are whole ticks: a quantile can sit up to a tick above the
 * continuous one, which at 0.01 ms is 0.7% of the smallest quantile here. */
static void mmc_case(int shards, int c, double rho, double tick_ms, double horizon_ms, int reps,
                     uint64_t id) {
  eng_run *run = eng_run_create();
  assert_non_null(run);
  eng_config cfg;
  eng_config_defaults(&cfg);
  cfg_setf(&cfg, "shards", shards);
  cfg_set(&cfg, "vnodes", "4096");
  cfg_set(&cfg, "capacity_factor", "inf");
  cfg_setf(&cfg, "workers", c);
  cfg_set(&cfg, "service", "exponential");
  cfg_set(&cfg, "service_mean_ms", "1");
  cfg_setf(&cfg, "tick_ms", tick_ms);
  cfg_set(&cfg, "queue_capacity", "inf");
  cfg_set(&cfg, "surge", "none");
  cfg_set(&cfg, "brownout", "none");
  cfg_set(&cfg, "timeout_ms", "1e6");
  cfg_set(&cfg, "max_retries", "0");
  cfg_setf(&cfg, "load", rho);
  cfg_setf(&cfg, "horizon_ms", horizon_ms);
  cfg_set(&cfg, "warmup_ms", "100");
  cfg_setf(&cfg, "baseline_ms", horizon_ms);
  double sum[3] = {0}, sum2[3] = {0};
  int64_t n = 0;
  for (int k = 0; k < reps; k++) {
    eng_summary s;
    simulate(run, &cfg, eng_seed_derive(20261202, id, (uint64_t)k), &s);
    const eng_latency_phase *p = eng_run_latency_phase(run, ENG_PHASE_BASELINE);
    assert_int_equal(p->failed, 0);
    double v[3] = {p->p50_ms, p->p90_ms, p->p99_ms};
    for (int j = 0; j < 3; j++) sum[j] += v[j], sum2[j] += v[j] * v[j];
    n += p->finished;
  }
  eng_run_destroy(run);
  const double qs[3] = {0.5, 0.9, 0.99};
  for (int j = 0; j < 3; j++) {
    double th = mmc_quantile(c, rho, qs[j]), m = sum[j] / reps;
    double se = sqrt(fmax(0, (sum2[j] - reps * m * m) / (reps - 1)) / reps);
    print_message("  M/M/%d rho=%.2f p%-4g measured %.4f ms (SE %.4f, %lld requests), "
                  "theory %.4f ms, diff %+.2f%%\n",
                  c, rho, 100 * qs[j], m, se, (long long)n, th, 100 * (m - th) / th);
    if (!(fabs(m - th) <= 0.02 * th))
      fail_msg("M/M/%d rho=%.2f p%g: %.4f ms, closed form %.4f ms: beyond 2%%", c, rho,
               100 * qs[j], m, th);
  }
}

static void test_mm1_quantiles(void **state) {
  (void)state;
  /* exponential with rate mu - lambda, as the closed form says for c = 1 */
  assert_true(fabs(mmc_quantile(1, 0.5, 0.99) - log(100) / 0.5) < 1e-9);
  mmc_case(64, 1, 0.3, 0.01, 3000, 8, 1);
}

static void test_mmc_quantiles(void **state) {
  (void)state;
  mmc_case(32, 4, 0.5, 0.01, 2000, 8, 2);
}

/* ---- exact cases and faults ---- */

static void base_cfg(eng_config *c) {
  eng_config_defaults(c);
  cfg_set(c, "shards", "1");
  cfg_set(c, "workers", "100");
  cfg_set(c, "service", "deterministic");
  cfg_set(c, "service_mean_ms", "10");
  cfg_set(c, "load", "0.1");
  cfg_set(c, "surge", "none");
  cfg_set(c, "brownout", "none");
  cfg_set(c, "timeout_ms", "1e6");
  cfg_set(c, "max_retries", "0");
  cfg_set(c, "horizon_ms", "3000");
}

/* 100 workers of 10 ms at 10% load never all busy: every request takes its
 * service time exactly, in every window and phase. */
static void test_deterministic_exact(void **state) {
  (void)state;
  eng_run *run = eng_run_create();
  eng_config c;
  base_cfg(&c);
  eng_summary s;
  simulate(run, &c, 3, &s);
  const eng_latency_phase *p = eng_run_latency_phase(run, ENG_PHASE_BASELINE);
  assert_true(p->finished > 1000);
  assert_true(p->p50_ms == 10 && p->p90_ms == 10 && p->p99_ms == 10 && p->p999_ms == 10 &&
              p->max_ms == 10);
  assert_true(p->error_rate == 0);
  assert_int_equal(p->status[ENG_ST_OK], p->finished);
  int32_t W = eng_run_latency_windows(run);
  assert_int_equal(W, 30);
  assert_true(eng_run_latency_window_ms(run) == 100);
  const double *p99 = eng_run_latency(run, ENG_L_P99), *fin = eng_run_latency(run, ENG_L_FINISHED);
  const double *er = eng_run_latency(run, ENG_L_ERROR_RATE);
  int64_t total = 0;
  for (int32_t w = 1; w < W; w++) {
    assert_true(fin[w] > 0);
    assert_true(p99[w] == 10);
    assert_true(er[w] == 0);
  }
  for (int32_t w = 0; w < W; w++) total += (int64_t)fin[w];
  /* every request ended but those still in service at the horizon */
  assert_true(total <= s.new_requests && total >= s.new_requests - 100);
  /* no faults: nothing during or after */
  assert_int_equal(eng_run_latency_phase(run, ENG_PHASE_DURING)->finished, 0);
  assert_true(isnan(eng_run_latency_phase(run, ENG_PHASE_AFTER)->p99_ms));
  eng_run_destroy(run);
}

/* The only shard stalls for 500 ms and holds no queue: every request sent
 * then is rejected at once. */
static void stall_cfg(eng_config *c) {
  base_cfg(c);
  cfg_set(c, "service_mean_ms", "1");
  cfg_set(c, "queue_capacity", "0");
  cfg_set(c, "brownout", "1000+500");
  cfg_set(c, "brownout_factor", "0");
}

static void test_reject_window_errors(void **state) {
  (void)state;
  eng_run *run = eng_run_create();
  eng_config c;
  stall_cfg(&c);
  eng_summary s;
  simulate(run, &c, 4, &s);
  const double *er = eng_run_latency(run, ENG_L_ERROR_RATE);
  const double *sr = eng_run_latency(run, ENG_L_SUCCESS_RATE);
  const double *fin = eng_run_latency(run, ENG_L_FINISHED);
  /* Window 10 starts with the stall: work that finished exactly then (sent
   * before it) is answered in it; the other four hold refusals only. */
  assert_true(er[10] > 0.99);
  for (int32_t w = 0; w < eng_run_latency_windows(run); w++) {
    int in = w >= 11 && w < 15;
    if (!(fin[w] > 0)) fail_msg("window %d: no request ended", w);
    if (in && er[w] != 1) fail_msg("window %d (stalled): error rate %g, want 1", w, er[w]);
    if (w < 10 && er[w] != 0) fail_msg("window %d (before): error rate %g, want 0", w, er[w]);
    assert_true(sr[w] == 1 - er[w]);
  }
  const eng_latency_phase *d = eng_run_latency_phase(run, ENG_PHASE_DURING);
  assert_true(d->begin_ms == 1000 && d->end_ms == 1500);
  assert_true(d->error_rate > 0.95);
  assert_int_equal(d->status[ENG_ST_REJECTED], d->failed);
  assert_true(d->p50_ms == 0); /* refused at once */
  assert_true(eng_run_latency_phase(run, ENG_PHASE_BASELINE)->error_rate == 0);
  eng_run_destroy(run);
}

/* Retries after a backoff: a request refused during the stall waits through
 * every sleep before it fails, and its latency says so. */
static void test_backoff_counts(void **state) {
  (void)state;
  eng_run *run = eng_run_create();
  eng_config c;
  stall_cfg(&c);
  cfg_set(&c, "max_retries", "3");
  cfg_set(&c, "backoff", "equal");
  cfg_set(&c, "backoff_base_ms", "20");
  cfg_set(&c, "backoff_cap_ms", "1000");
  eng_summary s;
  simulate(run, &c, 5, &s);
  const eng_latency_phase *d = eng_run_latency_phase(run, ENG_PHASE_DURING);
  /* equal jitter sleeps at least half of 20, 40, 80 ms: 70 ms in all */
  print_message("  stalled, 3 retries with backoff: p50 %.1f ms, %lld failed\n", d->p50_ms,
                (long long)d->failed);
  assert_true(d->failed > 100);
  assert_true(d->p50_ms >= 70);
  eng_run_destroy(run);
}

/* A request deadline (request mode) ends waiting requests at 50 ms: none
 * takes longer, and they are counted as deadline exceeded. */
static void test_deadline_caps(void **state) {
  (void)state;
  eng_run *run = eng_run_create();
  eng_config c;
  stall_cfg(&c);
  cfg_set(&c, "queue_capacity", "inf");
  cfg_set(&c, "deadline_ms", "50");
  eng_summary s;
  simulate(run, &c, 6, &s);
  const eng_latency_phase *d = eng_run_latency_phase(run, ENG_PHASE_DURING);
  assert_true(d->status[ENG_ST_DEADLINE] > 100);
  assert_true(d->max_ms == 50);
  assert_int_equal(d->failed, d->status[ENG_ST_DEADLINE]);
  eng_run_destroy(run);
}

/* ---- service level terms ---- */

static void test_slo_parse(void **state) {
  (void)state;
  eng_slo s;
  char err[256], back[256];
  assert_int_equal(ana_slo_parse("p99<=200ms, errors<=0.1%", &s, err, sizeof err), 0);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.t[0].kind, ENG_SLO_LATENCY);
  assert_true(fabs(s.t[0].quantile - 0.99) < 1e-12 && s.t[0].limit == 200);
  assert_int_equal(s.t[1].kind, ENG_SLO_ERRORS);
  assert_true(fabs(s.t[1].limit - 0.001) < 1e-12);
  ana_slo_format(&s, back, sizeof back);
  assert_string_equal(back, "p99<=200ms,errors<=0.1%");
  assert_int_equal(ana_slo_parse("p99.9<=1.5s,p50<=800us,errors<=0.02", &s, err, sizeof err), 0);
  assert_true(fabs(s.t[0].quantile - 0.999) < 1e-12 && s.t[0].limit == 1500);
  assert_true(fabs(s.t[1].limit - 0.8) < 1e-12 && fabs(s.t[2].limit - 0.02) < 1e-12);
  ana_slo_format(&s, back, sizeof back);
  assert_string_equal(back, "p99.9<=1500ms,p50<=0.8ms,errors<=2%");
  const char *bad[] = {"",          "p99",          "p99<=200",      "p100<=1ms",
                       "p0<=1ms",   "p999<=1ms",    "errors<=2",     "errors<=1%%",
                       "lat<=1ms",  "p99<=1ms,p99<=2ms", "p99>=1ms", "errors<=-1%",
                       "p99<=ms",   "p-5<=1ms"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    err[0] = 0;
    if (ana_slo_parse(bad[k], &s, err, sizeof err) == 0) fail_msg("accepted '%s'", bad[k]);
    assert_true(strncmp(err, "--slo: ", 7) == 0);
  }
}

/* User recovery: the stalled shard refuses everything for 500 ms from 1 s;
 * once it runs again every window is error-free, so an error term holds
 * again from the first window after clearance. A latency term no request
 * can meet never holds: no user recovery, and the run does not pass. */
static void test_user_recovery(void **state) {
  (void)state;
  eng_run *run = eng_run_create();
  eng_config c;
  stall_cfg(&c);
  char err[256];
  eng_summary s;
  simulate(run, &c, 7, &s);
  assert_true(isnan(eng_run_user_recovery_ms(run))); /* no terms */
  assert_int_equal(ana_slo_parse("errors<=0.1%,p99<=5ms", &c.user_slo, err, sizeof err), 0);
  simulate(run, &c, 7, &s);
  assert_true(eng_run_user_recovery_ms(run) == 0);
  assert_int_equal(s.passed_slo, 1);
  /* the queue check does not change: same outcome as without terms */
  eng_config plain;
  stall_cfg(&plain);
  eng_summary s0;
  simulate(run, &plain, 7, &s0);
  assert_int_equal(s.outcome, s0.outcome);
  assert_true(s.recovery_ms == s0.recovery_ms || (isnan(s.recovery_ms) && isnan(s0.recovery_ms)));
  assert_int_equal(ana_slo_parse("p50<=0.5ms", &c.user_slo, err, sizeof err), 0);
  simulate(run, &c, 7, &s);
  assert_true(isnan(eng_run_user_recovery_ms(run)));
  assert_int_equal(s.passed_slo, 0);
  /* a window that ends the stall late: clearance at 1450 ms is mid-window;
   * the first whole window after it starts at 1500 ms, 50 ms later */
  cfg_set(&c, "brownout", "1000+450");
  assert_int_equal(ana_slo_parse("errors<=0%", &c.user_slo, err, sizeof err), 0);
  simulate(run, &c, 7, &s);
  assert_true(eng_run_user_recovery_ms(run) == 50);
  eng_run_destroy(run);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hist_buckets),        cmocka_unit_test(test_hist_quantiles),
      cmocka_unit_test(test_mm1_quantiles),       cmocka_unit_test(test_mmc_quantiles),
      cmocka_unit_test(test_deterministic_exact), cmocka_unit_test(test_reject_window_errors),
      cmocka_unit_test(test_backoff_counts),      cmocka_unit_test(test_deadline_caps),
      cmocka_unit_test(test_slo_parse),           cmocka_unit_test(test_user_recovery),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
