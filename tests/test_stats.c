/*
 * test_stats.c — known-answer tests of analysis/stats.c: binomial intervals
 * (published Wilson and Clopper–Pearson values), the incomplete beta and t
 * quantiles, Kaplan–Meier steps and quantiles on hand-computed censored
 * examples, histograms, sample quantiles and t intervals for means.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "ana.h"
#include "testutil.h"

static void test_beta_inc(void **state) {
  (void)state;
  /* I_x(2,3) = P(Binomial(4, x) >= 2): at x = 0.5 that is 11/16. */
  assert_near(ana_beta_inc(2, 3, 0.5), 11.0 / 16.0, 1e-12);
  /* I_x(1,1) = x; I_x(a,1) = x^a. */
  assert_near(ana_beta_inc(1, 1, 0.3), 0.3, 1e-12);
  assert_near(ana_beta_inc(4, 1, 0.7), pow(0.7, 4), 1e-12);
  assert_near(ana_beta_inc(2, 3, 0.0), 0.0, 0);
  assert_near(ana_beta_inc(2, 3, 1.0), 1.0, 0);
  /* Symmetry I_x(a,b) = 1 - I_{1-x}(b,a) on the other branch of the fraction. */
  assert_near(ana_beta_inc(30, 5, 0.9), 1.0 - ana_beta_inc(5, 30, 0.1), 1e-12);
  assert_near(ana_beta_inc_inv(2, 3, 11.0 / 16.0), 0.5, 1e-12);
}

static void test_clopper_pearson_known(void **state) {
  (void)state;
  ana_interval i = ana_clopper_pearson(0, 20, 0.95);
  assert_near(i.lo, 0.0, 0);
  assert_near(i.hi, 0.16843, 5e-5);
  assert_near(i.hi, 1.0 - pow(0.025, 1.0 / 20.0), 1e-12); /* closed form for k = 0 */
  i = ana_clopper_pearson(20, 20, 0.95);
  assert_near(i.lo, 0.83157, 5e-5);
  assert_near(i.hi, 1.0, 0);
  i = ana_clopper_pearson(5, 20, 0.95);
  assert_near(i.lo, 0.08657, 5e-5);
  assert_near(i.hi, 0.49105, 5e-5);
  /* 50/100: a textbook value, [0.3983, 0.6017]. */
  i = ana_clopper_pearson(50, 100, 0.95);
  assert_near(i.lo, 0.39832, 5e-5);
  assert_near(i.hi, 0.60168, 5e-5);
  /* Invalid input gives NaN, not a number that looks like an answer. */
  i = ana_clopper_pearson(3, 0, 0.95);
  assert_true(isnan(i.lo) && isnan(i.hi));
}

static void test_wilson_known(void **state) {
  (void)state;
  ana_interval i = ana_wilson(5, 20, ANA_Z95);
  assert_near(i.lo, 0.11186, 5e-5);
  assert_near(i.hi, 0.46870, 5e-5);
  i = ana_wilson(0, 20, ANA_Z95);
  assert_near(i.lo, 0.0, 0);
  assert_near(i.hi, 0.16113, 5e-5); /* z^2/(n+z^2) */
  i = ana_wilson(20, 20, ANA_Z95);
  assert_near(i.lo, 1.0 - 0.16113, 5e-5);
  assert_near(i.hi, 1.0, 0);
  /* Wilson is never wider than the exact interval at the edges. */
  ana_interval e = ana_clopper_pearson(0, 20, 0.95);
  assert_true(i.lo >= 1.0 - e.hi);
}

static void test_runs_needed(void **state) {
  (void)state;
  /* 0.025^(1/n) >= 0.99 first holds at n = 368 (ln 0.025 / ln 0.99 = 367.04). */
  assert_int_equal(ana_runs_needed(0.01, 0.99, 0.95), 368);
  /* With 20 runs the bound is 0.8316, so 0.8 is reachable, 0.9 is not. */
  assert_true(ana_runs_needed(0.2, 0.8, 0.95) <= 20);
  assert_true(ana_runs_needed(0.1, 0.9, 0.95) > 20);
}

static void test_t_quantile(void **state) {
  (void)state;
  assert_near(ana_t_quantile(0.975, 1), 12.7062, 1e-4);
  assert_near(ana_t_quantile(0.975, 19), 2.093024, 1e-5);
  assert_near(ana_t_quantile(0.975, 1000), 1.962339, 1e-5);
  assert_near(ana_t_quantile(0.025, 19), -2.093024, 1e-5);
  assert_near(ana_t_quantile(0.5, 7), 0.0, 0);
}

static void test_mean_interval(void **state) {
  (void)state;
  double x[] = {1, 2, 3, 4, 5, NAN};
  ana_mean m = ana_mean_compute(x, 6);
  assert_int_equal(m.n, 5);
  assert_near(m.mean, 3.0, 1e-12);
  assert_near(m.sd, sqrt(2.5), 1e-12);
  /* t(0.975, 4) = 2.776445 */
  double half = 2.776445 * sqrt(2.5) / sqrt(5.0);
  assert_near(m.ci.lo, 3.0 - half, 1e-5);
  assert_near(m.ci.hi, 3.0 + half, 1e-5);
  double one = 7.5;
  m = ana_mean_compute(&one, 1);
  assert_near(m.mean, 7.5, 0);
  assert_near(m.ci.lo, 7.5, 0);
  assert_true(isnan(m.sd));
  m = ana_mean_compute(x + 5, 1);
  assert_int_equal(m.n, 0);
  assert_true(isnan(m.mean));
}

/* Restricted mean of the KM curve (time to collapse in analyze). Exact on
 * small data: times 1, 2, 3+, 4 give S = 1, 0.75, 0.5 (until 4), 0, so
 * RMST(4) = 1 + 0.75 + 0.5 x 2 = 2.75 and RMST(2.5) = 2.0; the variance
 * sums A_i^2 d_i / (Y_i (Y_i - d_i)) over events with Y > d: A(1) = 1.75,
 * A(2) = 1 -> 1.75^2 / 12 + 1 / 6 = 0.421875. Uncensored 1..4 up to the
 * largest time: the sample mean 2.5 with variance sum (x - mean)^2 / n^2 =
 * 5/16. */
static void test_km_rmst_exact(void **state) {
  (void)state;
  double t[] = {4, 3, 2, 1};
  unsigned char ev[] = {1, 0, 1, 1};
  ana_km km;
  double se;
  assert_int_equal(ana_km_compute(&km, t, ev, 4), 0);
  assert_near(ana_km_rmst(&km, 4, &se), 2.75, 1e-12);
  assert_near(se, sqrt(0.421875), 1e-12);
  assert_near(ana_km_rmst(&km, 2.5, NULL), 2.0, 1e-12);
  assert_near(ana_km_rmst(&km, 0.5, NULL), 0.5, 1e-12);
  ana_km_free(&km);
  unsigned char all[] = {1, 1, 1, 1};
  assert_int_equal(ana_km_compute(&km, t, all, 4), 0);
  assert_near(ana_km_rmst(&km, 4, &se), 2.5, 1e-12);
  assert_near(se, sqrt(5.0 / 16.0), 1e-12);
  ana_km_free(&km);
}

static double unif01(uint64_t *s) {
  *s += 0x9E3779B97F4A7C15ull; /* splitmix64 */
  uint64_t z = *s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return ((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* Coverage with known truth: 2000 samples of 50 times ~ Exp(mean 100),
 * each censored at U(0, 300); the restricted mean to 150 is 100 (1 -
 * e^-1.5) = 77.69. Its 95% normal interval must cover the truth in 93-97%
 * of samples (4 standard errors of a 2000-sample proportion). */
static void test_km_rmst_coverage(void **state) {
  (void)state;
  const double truth = 100.0 * (1.0 - exp(-1.5));
  uint64_t seed = 42;
  int covered = 0, trials = 2000;
  double t[50];
  unsigned char ev[50];
  for (int k = 0; k < trials; k++) {
    for (int i = 0; i < 50; i++) {
      double x = -100.0 * log(1.0 - unif01(&seed)), c = 300.0 * unif01(&seed);
      t[i] = x < c ? x : c;
      ev[i] = x < c;
    }
    ana_km km;
    double se;
    assert_int_equal(ana_km_compute(&km, t, ev, 50), 0);
    double m = ana_km_rmst(&km, 150, &se);
    covered += fabs(m - truth) <= ANA_Z95 * se;
    ana_km_free(&km);
  }
  double cov = (double)covered / trials;
  if (!(cov >= 0.93 && cov <= 0.97)) {
    print_error("RMST interval coverage %.4f, expected 0.95\n", cov);
    fail();
  }
}

/* A standard normal by Box-Muller from the same stream. */
static double normal01(uint64_t *seed) {
  double u = unif01(seed), v = unif01(seed);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* The Student t interval of ana_mean_compute, as replay states it for a
 * candidate's mean and for its paired difference from today's client:
 * over 4000 samples with known truth it must cover in 94-96% (3 standard
 * errors of a 4000-sample proportion), at n = 4 (where a normal quantile
 * would cover only ~86%) and n = 20. The paired case draws replicate r of
 * both clients with a shared term (common random numbers): the difference's
 * interval must cover the true shift and be narrower than one client's mean
 * interval (the shared term cancels). */
static void test_mean_t_coverage(void **state) {
  (void)state;
  const int trials = 4000;
  const size_t ns[] = {4, 20};
  uint64_t seed = 7;
  for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
    size_t n = ns[c];
    double x[20], d[20];
    int cov_mean = 0, cov_diff = 0;
    double w_diff = 0, w_plain = 0;
    for (int k = 0; k < trials; k++) {
      for (size_t i = 0; i < n; i++) {
        double shared = 3.0 * normal01(&seed);
        double today = 10.0 + shared + normal01(&seed);
        double cand = 10.0 - 2.0 + shared + normal01(&seed); /* true shift -2 */
        x[i] = today;
        d[i] = cand - today;
      }
      ana_mean m = ana_mean_compute(x, n), dm = ana_mean_compute(d, n);
      cov_mean += m.ci.lo <= 10.0 && 10.0 <= m.ci.hi;
      cov_diff += dm.ci.lo <= -2.0 && -2.0 <= dm.ci.hi;
      w_diff += dm.ci.hi - dm.ci.lo;
      w_plain += m.ci.hi - m.ci.lo;
    }
    double a = (double)cov_mean / trials, b = (double)cov_diff / trials;
    print_message("t interval, n = %zu: coverage %.4f (mean), %.4f (paired difference)\n", n, a,
                  b);
    if (!(a >= 0.94 && a <= 0.96) || !(b >= 0.94 && b <= 0.96)) {
      print_error("n = %zu: t interval coverage %.4f / %.4f, expected 0.95\n", n, a, b);
      fail();
    }
    if (!(w_diff < 0.6 * w_plain)) {
      print_error("n = %zu: the paired interval is not narrower (%.3f vs %.3f)\n", n,
                  w_diff / trials, w_plain / trials);
      fail();
    }
  }
}

static void test_km_censored_middle(void **state) {
  (void)state;
  /* Times 1,2,3,4 with 3 censored: S(1) = 3/4, S(2) = 3/4 * 2/3 = 1/2,
   * S(3) = 1/2 (censoring), S(4) = 1/2 * 0/1 = 0. */
  double t[] = {4, 3, 2, 1};
  unsigned char ev[] = {1, 0, 1, 1};
  ana_km km;
  assert_int_equal(ana_km_compute(&km, t, ev, 4), 0);
  assert_int_equal(km.n_steps, 4);
  assert_int_equal(km.n_events, 3);
  assert_near(km.steps[0].t, 1, 0);
  assert_near(km.steps[0].surv, 0.75, 1e-12);
  assert_near(km.steps[1].surv, 0.5, 1e-12);
  assert_int_equal(km.steps[2].censored, 1);
  assert_near(km.steps[2].surv, 0.5, 1e-12);
  assert_int_equal(km.steps[3].at_risk, 1);
  assert_near(km.steps[3].surv, 0.0, 1e-12);
  assert_near(ana_km_survival(&km, 0.5), 1.0, 0);
  assert_near(ana_km_survival(&km, 2.5), 0.5, 1e-12);
  assert_near(ana_km_quantile(&km, 0.25), 1, 0);
  assert_near(ana_km_quantile(&km, 0.50), 2, 0); /* S(2) = 0.5 exactly reaches 1 - q */
  assert_near(ana_km_quantile(&km, 0.90), 4, 0);
  assert_near(ana_km_quantile(&km, 0.99), 4, 0);
  assert_near(km.censor_max, 3, 0);
  ana_km_free(&km);
}

static void test_km_not_reached(void **state) {
  (void)state;
  /* Two recover at 100 and 200 ms; two never do (censored at the horizon,
   * 8000 ms after clearance): S stops at 1/2, so p50 = 200 and p90 is not
   * reached. */
  double t[] = {100, 8000, 200, 8000};
  unsigned char ev[] = {1, 0, 1, 0};
  ana_km km;
  assert_int_equal(ana_km_compute(&km, t, ev, 4), 0);
  assert_near(ana_km_quantile(&km, 0.5), 200, 0);
  assert_true(isinf(ana_km_quantile(&km, 0.9)));
  assert_true(isinf(ana_km_quantile(&km, 0.99)));
  assert_near(km.censor_max, 8000, 0);
  ana_km_free(&km);
  /* Nobody recovers: every quantile is "not reached". */
  unsigned char none[] = {0, 0, 0, 0};
  assert_int_equal(ana_km_compute(&km, t, none, 4), 0);
  assert_true(isinf(ana_km_quantile(&km, 0.5)));
  ana_km_free(&km);
  /* No observations at all: NaN. */
  assert_int_equal(ana_km_compute(&km, t, ev, 0), 0);
  assert_true(isnan(ana_km_quantile(&km, 0.5)));
  ana_km_free(&km);
}

static void test_km_ties(void **state) {
  (void)state;
  /* 2,2 events; 3 event and 3 censored; 5 event (n = 5):
   * S(2) = 1 - 2/5 = 0.6; S(3) = 0.6 * (1 - 1/3) = 0.4; S(5) = 0. */
  double t[] = {2, 3, 5, 2, 3};
  unsigned char ev[] = {1, 1, 1, 1, 0};
  ana_km km;
  assert_int_equal(ana_km_compute(&km, t, ev, 5), 0);
  assert_int_equal(km.n_steps, 3);
  assert_near(km.steps[0].surv, 0.6, 1e-12);
  assert_int_equal(km.steps[1].at_risk, 3);
  assert_int_equal(km.steps[1].events, 1);
  assert_int_equal(km.steps[1].censored, 1);
  assert_near(km.steps[1].surv, 0.4, 1e-12);
  assert_near(km.steps[2].surv, 0.0, 1e-12);
  assert_near(ana_km_quantile(&km, 0.4), 2, 0);
  assert_near(ana_km_quantile(&km, 0.5), 3, 0);
  assert_near(ana_km_quantile(&km, 0.7), 5, 0);
  ana_km_free(&km);
}

static void test_km_no_censoring_is_empirical(void **state) {
  (void)state;
  /* Without censoring KM is 1 - the empirical CDF: 10 runs at 10..100 ms
   * give p50 = 50 (S = 0.5) and p90 = 90 (S = 0.1). */
  double t[10];
  unsigned char ev[10];
  for (int i = 0; i < 10; i++) {
    t[i] = 10.0 * (10 - i);
    ev[i] = 1;
  }
  ana_km km;
  assert_int_equal(ana_km_compute(&km, t, ev, 10), 0);
  assert_near(ana_km_quantile(&km, 0.5), 50, 0);
  assert_near(ana_km_quantile(&km, 0.9), 90, 0);
  assert_near(ana_km_quantile(&km, 0.99), 100, 0);
  ana_km_free(&km);
}

static void test_histogram(void **state) {
  (void)state;
  double x[] = {0, 0.5, 1, 1.99, 2, 9.99, 10, -1, 11, NAN};
  ana_histogram h;
  assert_int_equal(ana_histogram_fill(&h, x, 10, 0, 10, 5), 0);
  assert_int_equal(h.counts[0], 4); /* 0, 0.5, 1, 1.99 */
  assert_int_equal(h.counts[1], 1); /* 2 */
  assert_int_equal(h.counts[2], 0);
  assert_int_equal(h.counts[4], 2); /* 9.99 and the upper edge 10 */
  assert_int_equal(h.under, 1);
  assert_int_equal(h.over, 1);
  assert_int_equal(h.missing, 1);
  ana_histogram_free(&h);
  assert_int_equal(ana_histogram_fill(&h, x, 10, 5, 5, 5), -1);
}

static void test_sample_quantiles(void **state) {
  (void)state;
  double x[] = {5, 1, 4, 2, 3};
  ana_sort_doubles(x, 5);
  assert_near(x[0], 1, 0);
  assert_near(ana_quantile_sorted(x, 5, 0.5), 3, 0);
  assert_near(ana_quantile_sorted(x, 5, 0.05), 1.2, 1e-12);
  assert_near(ana_quantile_sorted(x, 5, 0.95), 4.8, 1e-12);
  assert_near(ana_quantile_sorted(x, 1, 0.3), 1, 0);
  assert_true(isnan(ana_quantile_sorted(x, 0, 0.5)));
}

/* Coverage of the proportion intervals every P(...) in analyze and
 * recommend carries, computed exactly (the sum of the binomial pmf over the
 * k whose interval contains p) on a grid of true p, so it is the true error
 * rate, not a lucky sample. Clopper-Pearson must never cover less than 95%;
 * Wilson is approximate: its mean coverage over p must be near 95% and its
 * worst dip bounded. The same check with z = 1 (a 68% interval) must fail. */
static double binom_pmf(int64_t k, int64_t n, double p) {
  return exp(lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
             (double)k * log(p) + (double)(n - k) * log1p(-p));
}

static double coverage(int kind, int64_t n, double p, double z) {
  double cov = 0;
  for (int64_t k = 0; k <= n; k++) {
    ana_interval ci = kind ? ana_clopper_pearson(k, n, ANA_CONF) : ana_wilson(k, n, z);
    if (ci.lo <= p && p <= ci.hi) cov += binom_pmf(k, n, p);
  }
  return cov;
}

static void test_interval_coverage(void **state) {
  (void)state;
  const int64_t ns[] = {20, 100, 368};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    double cp_min = 1, w_min = 1, w_sum = 0, narrow_sum = 0;
    int m = 0;
    for (double p = 0.005; p < 1; p += 0.005, m++) {
      double cp = coverage(1, ns[i], p, 0), w = coverage(0, ns[i], p, ANA_Z95);
      cp_min = cp < cp_min ? cp : cp_min;
      w_min = w < w_min ? w : w_min;
      w_sum += w;
      narrow_sum += coverage(0, ns[i], p, 1.0);
    }
    print_message("n = %3lld: Clopper-Pearson min coverage %.4f; Wilson mean %.4f, min %.4f; "
                  "z = 1: mean %.4f\n",
                  (long long)ns[i], cp_min, w_sum / m, w_min, narrow_sum / m);
    assert_true(cp_min >= 0.95 - 1e-9);
    assert_true(w_sum / m >= 0.94 && w_sum / m <= 0.97);
    assert_true(w_min >= 0.88);
    assert_true(narrow_sum / m < 0.9); /* the check can fail */
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_beta_inc),
      cmocka_unit_test(test_clopper_pearson_known),
      cmocka_unit_test(test_wilson_known),
      cmocka_unit_test(test_interval_coverage),
      cmocka_unit_test(test_runs_needed),
      cmocka_unit_test(test_t_quantile),
      cmocka_unit_test(test_mean_interval),
      cmocka_unit_test(test_km_censored_middle),
      cmocka_unit_test(test_km_not_reached),
      cmocka_unit_test(test_km_rmst_exact),
      cmocka_unit_test(test_km_rmst_coverage),
      cmocka_unit_test(test_mean_t_coverage),
      cmocka_unit_test(test_km_ties),
      cmocka_unit_test(test_km_no_censoring_is_empirical),
      cmocka_unit_test(test_histogram),
      cmocka_unit_test(test_sample_quantiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
