/*
 * test_collapse.c — collapse without a fault, end to end through the engine
 * (docs/model.md "Collapse without a fault").
 *
 * The standard example of metastability papers (Metafor's): one server with
 * service rate 10/s, clients at 9.5/s, a 3 s timeout, 4 immediate retries
 * and 100 queue slots. Its good state is only quasi-stable: a queue
 * excursion past ~30 makes waits exceed the timeout, retries multiply the
 * load to ~4.7x, the queue fills and stays full, and goodput drops to zero.
 * The run must end `collapsed` with a time to collapse, never `recovered`.
 *
 * The control: the same server at 8/s with no retries is a plain M/M/1/K
 * queue (K = 100 waiting + 1 in service) at rho = 0.8. It must end healthy,
 * and its time-average number in system must match theory,
 *     L = rho / (1 - rho) - (K + 1) rho^(K+1) / (1 - rho^(K+1)) = 4.000,
 * within 4 standard errors of the mean over R seeds plus the tick-grid bias
 * bound of test_queueing.c, delta_L = lambda x (tick + Wq tick^2 / (4 E[S^2]))
 * = 8/s x 2.02 ms = 0.016 at 2 ms ticks. A time average of an M/M/1 at
 * rho = 0.8 over T seconds has a variance of about 2 rho (1 + rho) /
 * (mu (1 - rho)^4 T) = 180 / T (Whitt), so 16 runs of 1000 s give a
 * standard error near 0.1.
 *
 * Ticks are coarser than service (10 ms against 100 ms) in the collapse
 * test to keep 16 x 1000 s fast; service draws are rounded without bias
 * (floor(x + U)), and the collapse is a property of the load and retry
 * structure, not of the grid.
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

#include "ana.h"
#include "eng.h"

#define SEEDS 16

static void cfg_set(eng_config *c, const char *key, const char *value) {
  char err[512] = "";
  if (eng_config_set(c, key, value, err, sizeof err)) fail_msg("set %s=%s: %s", key, value, err);
}

/* The Metafor example (docs/model.md), at the given tick size. */
static void metafor(eng_config *c, const char *tick_ms) {
  eng_config_defaults(c);
  const char *kv[][2] = {{"shards", "1"},         {"workers", "1"},
                         {"vnodes", "1"},         {"clients", "1"},
                         {"service_mean_ms", "100"}, {"rate_rps", "9.5"},
                         {"timeout_ms", "3000"},  {"max_retries", "4"},
                         {"queue_capacity", "100"}, {"surge", "none"},
                         {"brownout", "none"},    {"horizon_ms", "1000000"},
                         {"tick_ms", tick_ms}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) cfg_set(c, kv[i][0], kv[i][1]);
}

static void simulate(eng_run *r, const eng_config *c, uint64_t seed, eng_summary *s) {
  char err[512] = "";
  if (eng_run_simulate(r, c, seed, s, err, sizeof err)) fail_msg("seed %llu: %s", (unsigned long long)seed, err);
}

/* Every seed collapses, with a time inside the run; the baseline reads
 * unhealthy; nothing passes; the recovery threshold fits in the queue. */
static void test_metafor_example_collapses(void **state) {
  (void)state;
  eng_config c;
  metafor(&c, "10");
  eng_run *r = eng_run_create();
  assert_non_null(r);
  for (uint64_t k = 0; k < SEEDS; k++) {
    uint64_t seed = eng_seed_derive(18, 0, k);
    eng_summary s;
    simulate(r, &c, seed, &s);
    if (s.outcome != ENG_OUTCOME_COLLAPSED)
      fail_msg("seed %llu: outcome %s, expected collapsed (goodput ratio %g, amplification %g)",
               (unsigned long long)seed, eng_outcome_name((eng_outcome)s.outcome),
               s.baseline_goodput_ratio, s.baseline_amplification);
    if (!(s.collapse_ms > 0 && s.collapse_ms < c.horizon_ms))
      fail_msg("seed %llu: collapse_ms %g", (unsigned long long)seed, s.collapse_ms);
    assert_true(isnan(s.recovery_ms));
    assert_int_equal(s.passed_slo, 0);
    if (!(s.recovery_threshold <= 50)) fail_msg("threshold %g above half the queue", s.recovery_threshold);
    if (!(s.baseline_amplification > 1.2)) fail_msg("amplification %g", s.baseline_amplification);
  }
  eng_run_destroy(r);
}

/* M/M/1/K at rho = 0.8, no retries: healthy every time, L = 4 in theory. */
static void test_no_retries_healthy_matches_mm1k(void **state) {
  (void)state;
  eng_config c;
  metafor(&c, "2");
  cfg_set(&c, "rate_rps", "8");
  cfg_set(&c, "max_retries", "0");
  eng_run *r = eng_run_create();
  assert_non_null(r);
  const double rho = 0.8, K = 101;
  double theory = rho / (1 - rho) - (K + 1) * pow(rho, K + 1) / (1 - pow(rho, K + 1));
  double sum = 0, ss = 0;
  for (uint64_t k = 0; k < SEEDS; k++) {
    uint64_t seed = eng_seed_derive(18, 1, k);
    eng_summary s;
    simulate(r, &c, seed, &s);
    if (s.outcome != ENG_OUTCOME_RECOVERED || !isnan(s.collapse_ms))
      fail_msg("seed %llu: outcome %s, collapse_ms %g; expected a healthy run",
               (unsigned long long)seed, eng_outcome_name((eng_outcome)s.outcome), s.collapse_ms);
    assert_int_equal(s.passed_slo, 1);
    const int32_t *inf = eng_run_metric(r, ENG_M_IN_FLIGHT);
    int32_t T = eng_run_ticks(r), a = (int32_t)(c.warmup_ms / c.tick_ms);
    double L = 0;
    for (int32_t t = a; t < T; t++) L += inf[t];
    L /= T - a;
    sum += L;
    ss += L * L;
  }
  double mean = sum / SEEDS, sd = sqrt((ss - SEEDS * mean * mean) / (SEEDS - 1));
  /* lambda (per ms) x (tick + Wq tick^2 / (4 E[S^2])), Wq = 400 ms, E[S^2] = 2e4 ms^2 */
  double se = sd / sqrt(SEEDS), delta = 8.0 / 1000.0 * (2.0 + 400.0 * 4.0 / (4.0 * 2e4));
  print_message("M/M/1/K L = %.4f +- %.4f (SE) over %d runs; theory %.4f\n", mean, se, SEEDS, theory);
  if (!(fabs(mean - theory) <= 4 * se + delta))
    fail_msg("L = %.4f +- %.4f (SE), M/M/1/K theory %.4f (tolerance %.4f)", mean, se, theory,
             4 * se + delta);
  eng_run_destroy(r);
}

/* analyze's collapse figures on runs with known answers (in memory, no file):
 * point 0: two of four runs collapsed at 100 and 200 ms, two watched to
 * 1000 ms without collapsing. KM: S = 1 to 100, 3/4 to 200, 1/2 after, so
 * the restricted mean to 1000 is 100 + 75 + 400 = 575 and the median 200.
 * Point 1: three runs collapsed at 10, 20, 30: every run collapsed, so the
 * plain mean 20 with a t interval 20 +- 4.303 x 10 / sqrt 3. Point 2: all
 * recovered within the SLO. Collapsed runs count as runs (P(collapsed)
 * 0.5 and 1), and recommend never picks a point with a collapsed run even
 * when it is cheaper and otherwise perfect. */
static void test_analysis_collapse_figures(void **state) {
  (void)state;
  fmt_run runs[11];
  size_t of[11];
  memset(runs, 0, sizeof runs);
  const double cms[4] = {100, 200, NAN, NAN};
  for (int i = 0; i < 11; i++) {
    fmt_run *u = &runs[i];
    u->run = i;
    u->ticks = -1;
    u->amplification = i < 7 ? 1.0 : 2.0; /* the collapsing points look cheaper */
    u->goodput_during = u->goodput_after = 1.0;
    u->peak_queue = u->baseline_queue = 0;
    u->collapse_watch_ms = 1000;
    if (i < 4) {
      of[i] = 0;
      u->outcome = isnan(cms[i]) ? ENG_OUTCOME_RECOVERED : ENG_OUTCOME_COLLAPSED;
      u->collapse_ms = cms[i];
      u->recovery_ms = isnan(cms[i]) ? 0 : NAN;
    } else if (i < 7) {
      of[i] = 1;
      u->outcome = ENG_OUTCOME_COLLAPSED;
      u->collapse_ms = 10.0 * (i - 3);
      u->recovery_ms = NAN;
    } else {
      of[i] = 2;
      u->outcome = ENG_OUTCOME_RECOVERED;
      u->collapse_ms = NAN;
      u->recovery_ms = 10;
    }
    u->point = (int64_t)of[i];
    u->passed_slo = u->outcome == ENG_OUTCOME_RECOVERED;
  }
  char *axes[] = {"load"};
  int64_t ids[3] = {0, 1, 2};
  double values[3] = {0.9, 0.95, 0.5};
  fmt_results r;
  memset(&r, 0, sizeof r);
  r.path = "memory";
  r.tick_ms = 1;
  r.slo_ms = 1500;
  r.n_axes = 1;
  r.axes = axes;
  r.n_points = 3;
  r.point_ids = ids;
  r.values = values;
  r.n_runs = 11;
  r.runs = runs;
  r.point_of_run = of;
  ana_summary s;
  char err[256] = "";
  if (ana_summary_compute(&s, &r, 1500, ANA_INTERVAL_EXACT, err, sizeof err)) fail_msg("%s", err);
  const ana_point_stats *p0 = &s.points[0], *p1 = &s.points[1];
  assert_int_equal(p0->n, 4);
  assert_int_equal(p0->n_coll, 2);
  assert_true(fabs(p0->p_coll - 0.5) < 1e-12);
  assert_int_equal(p0->coll_restricted, 1);
  if (fabs(p0->coll_mean - 575) > 1e-9) fail_msg("restricted mean %g, expected 575", p0->coll_mean);
  assert_true(fabs(p0->coll_p50 - 200) < 1e-12);
  assert_true(p0->coll_ci.lo < 575 && p0->coll_ci.hi > 575);
  assert_int_equal(p1->n_coll, 3);
  assert_int_equal(p1->coll_restricted, 0);
  assert_true(fabs(p1->coll_mean - 20) < 1e-12);
  double half = 4.302652729911275 * 10 / sqrt(3);
  /* on the log scale: never below 0 (the plain t interval was [-4.8, 44.8]) */
  double f = exp(half / 20);
  if (fabs(p1->coll_ci.hi - 20 * f) > 1e-6) fail_msg("interval hi %g", p1->coll_ci.hi);
  if (fabs(p1->coll_ci.lo - 20 / f) > 1e-6) fail_msg("interval lo %g", p1->coll_ci.lo);
  assert_true(p0->coll_ci.lo > 0 && p1->coll_ci.lo > 0);
  ana_reco_opts o = {1.0, 0.0}; /* every point would qualify but for its collapses */
  ana_reco rec;
  assert_int_equal(ana_recommend(&rec, &r, &s, &o), 0);
  assert_int_equal(rec.best, 2);
  assert_int_equal(rec.n_collapsed_points, 2);
  ana_summary_free(&s);
}

/* Effects pool only the sweep's own replicates: refine's fresh runs (replicate
 * >= the declared count) must not make their point weigh more. Point 0 has 2
 * own runs (1 passing) plus 8 fresh passing runs; point 1 has 2 own runs, none
 * passing. Pooled over the one axis with both points at the same value, P(pass)
 * is 1/4 — counting every run it would be 9/12. */
static void test_effects_pool_own_replicates(void **state) {
  (void)state;
  fmt_run runs[12];
  size_t of[12];
  memset(runs, 0, sizeof runs);
  for (int i = 0; i < 12; i++) {
    fmt_run *u = &runs[i];
    u->run = i;
    of[i] = i < 10 ? 0 : 1;
    u->point = (int64_t)of[i];
    u->replicate = i < 10 ? i : i - 10;
    int pass = i == 0 || (i >= 2 && i < 10);
    u->outcome = ENG_OUTCOME_RECOVERED;
    u->recovery_ms = pass ? 100 : 5000;
    u->passed_slo = pass;
    u->amplification = 1;
    u->collapse_ms = NAN;
  }
  char *axes[] = {"vnodes", "load"};
  int64_t ids[2] = {0, 1};
  double values[4] = {10, 0.5, 10, 0.7};
  fmt_results r;
  memset(&r, 0, sizeof r);
  r.path = "memory";
  r.tick_ms = 1;
  r.slo_ms = 1500;
  r.n_axes = 2;
  r.axes = axes;
  r.n_points = 2;
  r.point_ids = ids;
  r.values = values;
  r.n_runs = 12;
  r.runs = runs;
  r.point_of_run = of;
  r.replicates = 2;
  ana_summary s;
  char err[256] = "";
  if (ana_summary_compute(&s, &r, 1500, ANA_INTERVAL_EXACT, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(s.points[0].n, 10); /* the point's own table keeps every run */
  assert_int_equal(s.points[0].n_pass, 9);
  for (size_t k = 0; k < s.n_axes; k++) {
    const ana_axis_effect *e = &s.effects[k];
    if (e->axis != 0) continue;
    assert_int_equal(e->n_levels, 1);
    assert_int_equal(e->levels[0].n, 4);
    assert_int_equal(e->levels[0].n_pass, 1);
  }
  ana_summary_free(&s);
  r.replicates = 0; /* undeclared: every run counts, as before */
  if (ana_summary_compute(&s, &r, 1500, ANA_INTERVAL_EXACT, err, sizeof err)) fail_msg("%s", err);
  for (size_t k = 0; k < s.n_axes; k++)
    if (s.effects[k].axis == 0) assert_int_equal(s.effects[k].levels[0].n, 12);
  ana_summary_free(&s);
}

/* The time-to-collapse interval's coverage where the truth is known: 4,000
 * samples of 20 lognormal times (sigma 0.5, mean exp(mu + sigma^2/2) ms)
 * and of 20 exponential ones; the log-scale interval must hold the true
 * mean close to 95% of the time, and never reach below 0. */
static uint64_t cov_state = 0x9e3779b97f4a7c15ull;
static double cov_uniform(void) {
  cov_state ^= cov_state << 13;
  cov_state ^= cov_state >> 7;
  cov_state ^= cov_state << 17;
  return ((double)(cov_state >> 11) + 0.5) / 9007199254740992.0;
}
static double cov_normal(void) {
  return sqrt(-2 * log(cov_uniform())) * cos(6.283185307179586 * cov_uniform());
}

static void test_collapse_interval_coverage(void **state) {
  (void)state;
  enum { TRIALS = 4000, N = 20 };
  for (int dist = 0; dist < 2; dist++) {
    double truth = dist == 0 ? exp(log(500.0) + 0.125) : 300.0, x[N];
    int covered = 0;
    for (int t = 0; t < TRIALS; t++) {
      for (int i = 0; i < N; i++)
        x[i] = dist == 0 ? exp(log(500.0) + 0.5 * cov_normal()) : -300.0 * log(cov_uniform());
      ana_mean m = ana_mean_compute(x, N);
      ana_interval ci = ana_log_scale_interval(m.mean, m.ci.hi - m.mean);
      assert_true(ci.lo > 0 && ci.lo <= m.mean && m.mean <= ci.hi);
      covered += ci.lo <= truth && truth <= ci.hi;
    }
    double c = (double)covered / TRIALS;
    print_message("%s: the interval holds the true mean in %.1f%% of %d samples of %d\n",
                  dist == 0 ? "lognormal" : "exponential", 100 * c, TRIALS, N);
    assert_true(c >= 0.92 && c <= 0.975);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metafor_example_collapses),
      cmocka_unit_test(test_no_retries_healthy_matches_mm1k),
      cmocka_unit_test(test_analysis_collapse_figures),
      cmocka_unit_test(test_effects_pool_own_replicates),
      cmocka_unit_test(test_collapse_interval_coverage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
