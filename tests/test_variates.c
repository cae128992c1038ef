/*
 * test_variates.c — the engine's random variates against their known
 * moments and shapes: Poisson (both samplers), Zipf rank ratios, the
 * exponential ziggurat (mean, variance, tail, the rounding fraction), and the
 * RNG's stream independence. Tolerances are several standard errors wide.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rng.h"
#include "variates.h"

static void assert_close(double got, double want, double tol, const char *what) {
  if (fabs(got - want) > tol) {
    print_error("%s: got %.6g, want %.6g +- %.3g\n", what, got, want, tol);
    fail();
  }
}

static void check_poisson(double lam) {
  eng_rng g;
  eng_rng_seed(&g, 42, 7);
  const int n = 200000;
  double s = 0, s2 = 0;
  for (int i = 0; i < n; i++) {
    double k = (double)eng_poisson(&g, lam, exp(-lam));
    assert_true(k >= 0);
    s += k;
    s2 += k * k;
  }
  double mean = s / n, var = s2 / n - mean * mean;
  char what[64];
  snprintf(what, sizeof what, "Poisson(%g) mean", lam);
  assert_close(mean, lam, 5 * sqrt(lam / n), what);
  snprintf(what, sizeof what, "Poisson(%g) variance", lam);
  /* var of the sample variance ~ (mu4 - sigma^4)/n = (lam + 2 lam^2)/n */
  assert_close(var, lam, 5 * sqrt((lam + 2 * lam * lam) / n), what);
}

static void test_poisson_small(void **state) {
  (void)state;
  check_poisson(0.3);
  check_poisson(3.5);
  check_poisson(9.9);
}

static void test_poisson_large(void **state) {
  (void)state;
  check_poisson(10.0);
  check_poisson(17.92); /* the seed study's arrivals per tick */
  check_poisson(89.6);  /* ... during its 5x surge */
  check_poisson(1000.0);
}

static void test_poisson_pmf_point(void **state) {
  (void)state;
  /* P(K = 18) for lam = 17.92 = e^-lam lam^18 / 18! = 0.09381... */
  eng_rng g;
  eng_rng_seed(&g, 3, 1);
  const int n = 400000;
  int hits = 0;
  for (int i = 0; i < n; i++) hits += eng_poisson(&g, 17.92, exp(-17.92)) == 18;
  double p = exp(-17.92 + 18 * log(17.92) - lgamma(19.0));
  assert_close((double)hits / n, p, 5 * sqrt(p * (1 - p) / n), "P(K=18)");
}

static void test_zipf_ratios(void **state) {
  (void)state;
  const double s = 1.1, n = 1000000;
  eng_zipf z;
  eng_zipf_init(&z, s, n);
  eng_rng g;
  eng_rng_seed(&g, 9, 2);
  const int draws = 400000;
  int c1 = 0, c2 = 0, c10 = 0;
  for (int i = 0; i < draws; i++) {
    uint64_t k = eng_zipf_draw(&z, &g);
    assert_true(k >= 1 && k <= (uint64_t)n);
    c1 += k == 1;
    c2 += k == 2;
    c10 += k == 10;
  }
  /* P(k) is proportional to k^-s: the count ratios follow. */
  assert_close((double)c1 / c2, pow(2, s), 0.08, "Zipf count(1)/count(2)");
  assert_close((double)c1 / c10, pow(10, s), 1.2, "Zipf count(1)/count(10)");
  /* and P(1) = 1 / H(n, s) */
  double h = 0;
  for (double k = 1; k <= n; k++) h += pow(k, -s);
  double p1 = 1 / h;
  assert_close((double)c1 / draws, p1, 5 * sqrt(p1 * (1 - p1) / draws), "Zipf P(rank 1)");
}

static void test_zipf_small_n(void **state) {
  (void)state;
  eng_zipf z;
  eng_zipf_init(&z, 2.0, 3);
  eng_rng g;
  eng_rng_seed(&g, 1, 1);
  int c[4] = {0};
  const int draws = 300000;
  for (int i = 0; i < draws; i++) {
    uint64_t k = eng_zipf_draw(&z, &g);
    assert_true(k >= 1 && k <= 3);
    c[k]++;
  }
  double h = 1 + 0.25 + 1.0 / 9;
  for (int k = 1; k <= 3; k++) {
    double p = 1 / (k * k * h);
    assert_close((double)c[k] / draws, p, 5 * sqrt(p * (1 - p) / draws), "Zipf(2) over 3 ranks");
  }
}

static void test_ziggurat_exponential(void **state) {
  (void)state;
  eng_zig z;
  eng_zig_init(&z);
  eng_rng g;
  eng_rng_seed(&g, 11, 3);
  const int n = 1000000;
  double s = 0, s2 = 0, fs = 0;
  int tail3 = 0, tail8 = 0, below01 = 0;
  for (int i = 0; i < n; i++) {
    double frac, x = eng_zig_exp1(&z, &g, &frac);
    assert_true(x >= 0);
    assert_true(frac >= 0 && frac < 1);
    s += x;
    s2 += x * x;
    fs += frac;
    tail3 += x > 3;
    tail8 += x > 8; /* beyond the base layer: the tail path */
    below01 += x < 0.1;
  }
  double mean = s / n, var = s2 / n - mean * mean;
  assert_close(mean, 1, 5 / sqrt(n), "Exp(1) mean");
  assert_close(var, 1, 5 * sqrt(8.0 / n), "Exp(1) variance");
  double p3 = exp(-3.0), p8 = exp(-8.0), p01 = 1 - exp(-0.1);
  assert_close((double)tail3 / n, p3, 5 * sqrt(p3 / n), "P(X > 3)");
  assert_close((double)tail8 / n, p8, 5 * sqrt(p8 / n) + 1e-6, "P(X > 8)");
  assert_close((double)below01 / n, p01, 5 * sqrt(p01 / n), "P(X < 0.1)");
  assert_close(fs / n, 0.5, 5 * sqrt(1.0 / 12 / n), "rounding fraction mean");
}

static void test_rng_streams_differ(void **state) {
  (void)state;
  eng_rng a, b, c;
  eng_rng_seed(&a, 5, 1);
  eng_rng_seed(&b, 5, 2);
  eng_rng_seed(&c, 5, 1);
  int same_ab = 0;
  for (int i = 0; i < 1000; i++) {
    uint64_t x = eng_rng_next(&a), y = eng_rng_next(&b), z = eng_rng_next(&c);
    same_ab += x == y;
    assert_int_equal(x, z); /* same seed and stream: same numbers */
  }
  assert_int_equal(same_ab, 0);
  /* uniform() stays in [0, 1), below(n) in [0, n) */
  for (int i = 0; i < 100000; i++) {
    double u = eng_rng_uniform(&a);
    assert_true(u >= 0 && u < 1);
    assert_true(eng_rng_below(&a, 7) < 7);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_poisson_small),        cmocka_unit_test(test_poisson_large),
      cmocka_unit_test(test_poisson_pmf_point),    cmocka_unit_test(test_zipf_ratios),
      cmocka_unit_test(test_zipf_small_n),         cmocka_unit_test(test_ziggurat_exponential),
      cmocka_unit_test(test_rng_streams_differ),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
