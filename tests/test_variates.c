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
#include "testutil.h"

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
  assert_near_msg(mean, lam, 5 * sqrt(lam / n), what);
  snprintf(what, sizeof what, "Poisson(%g) variance", lam);
  /* var of the sample variance ~ (mu4 - sigma^4)/n = (lam + 2 lam^2)/n */
  assert_near_msg(var, lam, 5 * sqrt((lam + 2 * lam * lam) / n), what);
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
  assert_near_msg((double)hits / n, p, 5 * sqrt(p * (1 - p) / n), "P(K=18)");
}

/* The PTRS draw as it was written before its constants were computed once
 * per rate (eng_poisson_prep): the engine's draws,
 * and so every run's arrivals, must not change. */
static int64_t ref_poisson(eng_rng *g, double lam) {
  if (!(lam > 0)) return 0;
  if (lam < 10) {
    double p = eng_rng_uniform(g), e = exp(-lam);
    int64_t k = 0;
    while (p > e) {
      p *= eng_rng_uniform(g);
      k++;
    }
    return k;
  }
  double slam = sqrt(lam), loglam = log(lam);
  double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    double U = eng_rng_uniform(g) - 0.5, V = eng_rng_uniform(g);
    double us = 0.5 - fabs(U);
    int64_t k = (int64_t)floor((2 * a / us + b) * U + lam + 0.43);
    if (us >= 0.07 && V <= vr) return k;
    if (k < 0 || (us < 0.013 && V > us)) continue;
    static const double small[10] = {0, 0, 0.69314718055994531, 1.79175946922805500,
                                     3.17805383034794562, 4.78749174278204599,
                                     6.57925121201010100, 8.52516136106541430,
                                     10.60460290274525023, 12.80182748008146961};
    double lf = k < 10 ? small[k] : 0;
    if (k >= 10) {
      double n1 = (double)k + 1;
      lf = (n1 - 0.5) * log(n1) - n1 + 0.91893853320467274 + 1 / (12 * n1) -
           1 / (360 * n1 * n1 * n1);
    }
    if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + (double)k * loglam - lf)
      return k;
  }
}

static void test_poisson_prepared_same_draws(void **state) {
  (void)state;
  static const double lams[] = {0, 0.3, 3.5, 9.99, 10.0, 17.92, 89.6, 1000.0, 1e6};
  for (size_t j = 0; j < sizeof lams / sizeof lams[0]; j++) {
    eng_poisson_rate p;
    eng_poisson_prep(&p, lams[j]);
    eng_rng g, h;
    eng_rng_seed(&g, 11, j);
    eng_rng_seed(&h, 11, j);
    for (int i = 0; i < 100000; i++) {
      int64_t got = eng_poisson_draw(&g, &p), want = ref_poisson(&h, lams[j]);
      if (got != want)
        fail_msg("lam %g draw %d: got %lld, want %lld", lams[j], i, (long long)got,
                 (long long)want);
    }
    /* and both streams advanced alike */
    assert_true(eng_rng_next(&g) == eng_rng_next(&h));
  }
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
  assert_near_msg((double)c1 / c2, pow(2, s), 0.08, "Zipf count(1)/count(2)");
  assert_near_msg((double)c1 / c10, pow(10, s), 1.2, "Zipf count(1)/count(10)");
  /* and P(1) = 1 / H(n, s) */
  double h = 0;
  for (double k = 1; k <= n; k++) h += pow(k, -s);
  double p1 = 1 / h;
  assert_near_msg((double)c1 / draws, p1, 5 * sqrt(p1 * (1 - p1) / draws), "Zipf P(rank 1)");
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
    assert_near_msg((double)c[k] / draws, p, 5 * sqrt(p * (1 - p) / draws), "Zipf(2) over 3 ranks");
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
  assert_near_msg(mean, 1, 5 / sqrt(n), "Exp(1) mean");
  assert_near_msg(var, 1, 5 * sqrt(8.0 / n), "Exp(1) variance");
  double p3 = exp(-3.0), p8 = exp(-8.0), p01 = 1 - exp(-0.1);
  assert_near_msg((double)tail3 / n, p3, 5 * sqrt(p3 / n), "P(X > 3)");
  assert_near_msg((double)tail8 / n, p8, 5 * sqrt(p8 / n) + 1e-6, "P(X > 8)");
  assert_near_msg((double)below01 / n, p01, 5 * sqrt(p01 / n), "P(X < 0.1)");
  assert_near_msg(fs / n, 0.5, 5 * sqrt(1.0 / 12 / n), "rounding fraction mean");
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
      cmocka_unit_test(test_poisson_pmf_point),
      cmocka_unit_test(test_poisson_prepared_same_draws),
      cmocka_unit_test(test_zipf_ratios),
      cmocka_unit_test(test_zipf_small_n),         cmocka_unit_test(test_ziggurat_exponential),
      cmocka_unit_test(test_rng_streams_differ),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
