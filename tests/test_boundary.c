/*
 * test_boundary.c — the boundary search (analysis/boundary.c): the logistic
 * fit, the coverage of the crossing's interval through the whole sequential
 * design on synthetic curves with a known crossing, the uniform-grid
 * equivalent, two boundaries with closed forms found by the engine-driven
 * search, and common random numbers in sweeps (determinism for any thread
 * count; identical points give identical runs).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <unistd.h>

#include "ana.h"
#include "boundary.h"
#include "testutil.h"

static char tmpdir[256];

static int setup_dir(void **state) {
  (void)state;
  return tu_tmpdir_make(tmpdir, sizeof tmpdir, "test_boundary");
}

static int teardown_dir(void **state) {
  (void)state;
  return tu_tmpdir_remove(tmpdir);
}

/* Runs `stormsweep ARGS` quietly; returns its exit status. */
static int run_cli(const char *args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >>'%s/log' 2>&1", tmpdir, STORMSWEEP_BIN, args,
           tmpdir);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- synthetic response curves ---- */

/* The tests' own generator (splitmix64), so that the measured coverage does
 * not move when the engine's generator does. */
typedef struct trng {
  uint64_t s;
} trng;

static void trng_seed(trng *r, uint64_t seed, uint64_t stream) {
  r->s = seed * 0x9E3779B97F4A7C15ULL ^ (stream + 0x632BE59BD9B4E019ULL);
}

static double trng_uniform(trng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

typedef struct synth {
  double t0[ANA_BND_MAX_RESP], k[ANA_BND_MAX_RESP]; /* logit p = k (t - t0), t = ln x or x */
  double level[ANA_BND_MAX_RESP];
  int log_scale, step; /* step: a deterministic 0/1 response at t0 */
  size_t n_resp;
  uint64_t seed;
} synth;

static int synth_oracle(void *user, int64_t first, size_t m, const double *x, uint8_t *const *y,
                        char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  const synth *s = user;
  for (size_t i = 0; i < m; i++) {
    double t = s->log_scale ? log(x[i]) : x[i];
    trng rng;
    trng_seed(&rng, s->seed, (uint64_t)(first + (int64_t)i));
    for (size_t r = 0; r < s->n_resp; r++) {
      if (s->step) {
        y[r][i] = t >= s->t0[r];
        continue;
      }
      /* curve through level at t0: logit p = logit(level) + k (t - t0) */
      double L = log(s->level[r] / (1 - s->level[r]));
      double p = 1 / (1 + exp(-(L + s->k[r] * (t - s->t0[r]))));
      y[r][i] = trng_uniform(&rng) < p;
    }
  }
  return 0;
}

static void test_fit_recovers_coefficients(void **state) {
  (void)state;
  /* 4000 runs from logit p = -2 + 4 t on [0, 1]: the MLE lands within 3 s.e. */
  size_t n = 4000;
  double *t = malloc(n * sizeof *t);
  uint8_t *y = malloc(n);
  trng rng;
  trng_seed(&rng, 7, 0);
  for (size_t i = 0; i < n; i++) {
    t[i] = (double)i / (double)(n - 1);
    y[i] = trng_uniform(&rng) < 1 / (1 + exp(-(-2 + 4 * t[i])));
  }
  ana_bnd_fit f;
  assert_int_equal(ana_bnd_fit_logistic(t, y, n, &f), 0);
  assert_false(f.separated);
  assert_int_equal(f.direction, 1);
  assert_true(fabs(f.a + 2) < 3 * sqrt(f.cov[0]));
  assert_true(fabs(f.b - 4) < 3 * sqrt(f.cov[2]));
  ana_bnd_crossing c;
  assert_int_equal(ana_bnd_crossing_compute(t, y, n, &f, 0.5, 0.95, 0, 1, &c), 0);
  assert_int_equal(c.status, ANA_BND_FOUND);
  assert_true(c.lo < c.est && c.est < c.hi);
  assert_true(c.lo < 0.5 && 0.5 < c.hi);
  /* the profile interval is about as wide as the delta method's here */
  double dw = 2 * 1.959964 * c.se_delta;
  assert_true(fabs((c.hi - c.lo) / dw - 1) < 0.1);
  free(t);
  free(y);
}

static void test_fit_separated_and_constant(void **state) {
  (void)state;
  double t[6] = {0.1, 0.2, 0.3, 0.6, 0.7, 0.8};
  uint8_t y[6] = {1, 1, 1, 0, 0, 0};
  ana_bnd_fit f;
  ana_bnd_fit_logistic(t, y, 6, &f);
  assert_true(f.separated);
  assert_int_equal(f.direction, -1);
  assert_true(f.gap_lo == 0.3 && f.gap_hi == 0.6);
  ana_bnd_crossing c;
  ana_bnd_crossing_compute(t, y, 6, &f, 0.5, 0.95, 0, 1, &c);
  assert_true(fabs(c.est - 0.45) < 1e-12);
  /* the interval holds the whole gap */
  assert_true(c.lo <= 0.3 && c.hi >= 0.6);
  uint8_t z[6] = {0};
  ana_bnd_fit_logistic(t, z, 6, &f);
  assert_int_equal(f.direction, 0);
  ana_bnd_crossing_compute(t, z, 6, &f, 0.5, 0.95, 0, 1, &c);
  assert_int_equal(c.status, ANA_BND_ABSENT);
}

/* 500 trials of the whole sequential design on random logistic curves (two
 * responses at once, levels 0.5 and 0.9, one of them on a log axis half of
 * the time): each 95% interval covers its true crossing in >= 93% of trials. */
static void test_coverage_synthetic(void **state) {
  (void)state;
  const int trials = 500;
  int covered[ANA_BND_MAX_RESP] = {0}, counted[ANA_BND_MAX_RESP] = {0};
  int64_t runs = 0, unif = 0;
  trng rng;
  trng_seed(&rng, 2024, 99);
  for (int tr = 0; tr < trials; tr++) {
    synth s = {.seed = 1000 + (uint64_t)tr, .log_scale = tr % 2, .n_resp = 2};
    ana_bnd_opts o = {.n_resp = 2, .conf = 0.95, .width = 0.1, .max_runs = 3000, .batch = 32};
    o.level[0] = s.level[0] = 0.5;
    o.level[1] = s.level[1] = 0.9;
    o.log_scale = s.log_scale;
    o.lo = s.log_scale ? 0.05 : 0;
    o.hi = 1;
    double rlo = s.log_scale ? log(o.lo) : o.lo, rhi = s.log_scale ? 0 : 1, span = rhi - rlo;
    for (int r = 0; r < 2; r++) {
      s.t0[r] = rlo + span * (0.15 + 0.7 * trng_uniform(&rng));
      s.k[r] = (6 + 30 * trng_uniform(&rng)) / span;
    }
    ana_bnd_search sr;
    char err[256];
    assert_int_equal(ana_bnd_search_run(&sr, &o, synth_oracle, &s, err, sizeof err), 0);
    runs += sr.n;
    for (int r = 0; r < 2; r++) {
      const ana_bnd_crossing *c = &sr.cross[r];
      /* a monotone curve is never called non-monotone */
      if (c->status == ANA_BND_NONMONOTONE)
        fail_msg("trial %d response %d: a logistic curve called non-monotone", tr, r);
      counted[r]++;
      covered[r] += c->lo <= s.t0[r] && s.t0[r] <= c->hi;
      if (getenv("BND_DEBUG") && !(c->lo <= s.t0[r] && s.t0[r] <= c->hi))
        print_message("miss r%d n=%lld k=%.1f t0=%.3f [%.3f %.3f] sep=%d est=%.3f open=%d%d\n", r,
                      (long long)sr.n, s.k[r] * span, (s.t0[r] - rlo) / span, (c->lo - rlo) / span,
                      (c->hi - rlo) / span, sr.fit[r].separated, (c->est - rlo) / span, c->lo_open,
                      c->hi_open);
      int64_t lv, rp;
      if (r == 0) unif += ana_bnd_uniform_equivalent(sr.t, (size_t)sr.n, &sr.fit[r], c, rlo, rhi,
                                                     &lv, &rp);
    }
    ana_bnd_search_free(&sr);
  }
  for (int r = 0; r < 2; r++) {
    double cov = (double)covered[r] / counted[r];
    print_message("level %.1f: interval covers the true crossing in %d / %d trials (%.1f%%)\n",
                  r ? 0.9 : 0.5, covered[r], counted[r], 100 * cov);
    assert_true(cov >= 0.93);
  }
  print_message("mean runs per search %.0f; uniform grid of equal precision (level 0.5) %.0f\n",
                (double)runs / trials, (double)unif / trials);
}

/* A deterministic step: every interval contains the step, and the search
 * bisects (runs grow like log(1/width), far below a uniform grid's). */
static void test_step_brackets(void **state) {
  (void)state;
  for (int tr = 0; tr < 50; tr++) {
    synth s = {.step = 1, .n_resp = 1};
    s.t0[0] = 0.1 + 0.8 * tr / 50.0 + 0.0037;
    ana_bnd_opts o = {.n_resp = 1, .conf = 0.95, .width = 0.01, .max_runs = 2000, .batch = 8,
                      .lo = 0, .hi = 1};
    o.level[0] = 0.5;
    ana_bnd_search sr;
    char err[256];
    assert_int_equal(ana_bnd_search_run(&sr, &o, synth_oracle, &s, err, sizeof err), 0);
    const ana_bnd_crossing *c = &sr.cross[0];
    assert_true(sr.resolved[0]);
    assert_int_not_equal(c->status, ANA_BND_NONMONOTONE);
    assert_true(c->lo <= s.t0[0] && s.t0[0] <= c->hi);
    assert_true(sr.n <= 120);
    int64_t lv, rp;
    int64_t u = ana_bnd_uniform_equivalent(sr.t, (size_t)sr.n, &sr.fit[0], c, 0, 1, &lv, &rp);
    assert_true(u >= 100);
    ana_bnd_search_free(&sr);
  }
}

/* A non-monotone response, as bounded load gave on a cluster with a hot
 * key (P(metastable) high close to c = 1, near 0 from 1.4 to 2, near 1 above):
 * the search says "non-monotone" with the stretch where it turns, and no
 * crossing or uniform-grid figure; a monotone rise on the same range does
 * not. */
static int valley_oracle(void *user, int64_t first, size_t m, const double *x, uint8_t *const *y,
                         char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  const int *rising = user;
  for (size_t i = 0; i < m; i++) {
    trng rng;
    trng_seed(&rng, 77, (uint64_t)(first + (int64_t)i));
    double p = *rising ? 1 / (1 + exp(-8 * (x[i] - 1.75)))
               : x[i] < 1.4 ? 0.95 : x[i] < 2 ? 0.03 : 0.97;
    y[0][i] = trng_uniform(&rng) < p;
  }
  return 0;
}

/* The printed crossing never shows an interval clipped to one end of the
 * range as [LO, LO] or [HI, HI]: it says the interval lies beyond that end,
 * or names the end inside the range. */
static void test_crossing_text(void **state) {
  (void)state;
  ana_bnd_opts o = {.n_resp = 1, .conf = 0.95, .lo = 1.05, .hi = 4};
  char buf[512];
  ana_bnd_crossing c = {.level = 0.5, .status = ANA_BND_ABOVE, .est = 6, .lo = 4, .hi = 4,
                        .hi_open = 1};
  ana_bnd_crossing_text(&o, &c, 0, buf, sizeof buf);
  assert_string_equal(buf, "above range (> 4): its 95% interval lies above the range too");
  c.lo = 3.2;
  ana_bnd_crossing_text(&o, &c, 0, buf, sizeof buf);
  assert_string_equal(buf, "above range (> 4); its 95% interval reaches down to 3.2");
  c = (ana_bnd_crossing){.level = 0.5, .status = ANA_BND_BELOW, .est = 0.5, .lo = 1.05,
                         .hi = 1.05, .lo_open = 1};
  ana_bnd_crossing_text(&o, &c, 0, buf, sizeof buf);
  assert_string_equal(buf, "below range (< 1.05): its 95% interval lies below the range too");
  c.hi = 1.3;
  ana_bnd_crossing_text(&o, &c, 0, buf, sizeof buf);
  assert_string_equal(buf, "below range (< 1.05); its 95% interval reaches up to 1.3");
  /* Computed: a rise that stays far below the level over the range. */
  double t[400];
  uint8_t y[400];
  for (int i = 0; i < 400; i++) {
    t[i] = 1.05 + 2.95 * i / 399.0;
    y[i] = i >= 200 && i % 10 == 0;
  }
  ana_bnd_fit fit;
  assert_int_equal(ana_bnd_fit_logistic(t, y, 400, &fit), 0);
  assert_int_equal(ana_bnd_crossing_compute(t, y, 400, &fit, 0.5, 0.95, 1.05, 4, &c), 0);
  assert_int_equal(c.status, ANA_BND_ABOVE);
  ana_bnd_crossing_text(&o, &c, 0, buf, sizeof buf);
  print_message("%s\n", buf);
  assert_null(strstr(buf, "[4, 4]"));
  assert_non_null(strstr(buf, "above range (> 4)"));
}

static void test_nonmonotone(void **state) {
  (void)state;
  for (int rising = 0; rising < 2; rising++) {
    ana_bnd_opts o = {.n_resp = 1, .conf = 0.95, .width = 0.05, .max_runs = 2000, .batch = 32,
                      .lo = 1.05, .hi = 4};
    o.level[0] = 0.5;
    ana_bnd_search sr;
    char err[256];
    assert_int_equal(ana_bnd_search_run(&sr, &o, valley_oracle, &rising, err, sizeof err), 0);
    const ana_bnd_crossing *c = &sr.cross[0];
    int64_t lv, rp;
    int64_t u = ana_bnd_uniform_equivalent(sr.t, (size_t)sr.n, &sr.fit[0], c, 1.05, 4, &lv, &rp);
    if (rising) {
      assert_int_equal(c->status, ANA_BND_FOUND);
      assert_true(c->lo <= 1.75 && 1.75 <= c->hi);
      assert_true(u > 0);
    } else {
      assert_int_equal(c->status, ANA_BND_NONMONOTONE);
      assert_true(sr.resolved[0]);
      /* down from a bin below 1.4, up after the valley of 1.4-2 */
      assert_true(c->nm_t[0] < 1.4 && c->nm_p[0] > 0.6);
      assert_true(c->nm_t[1] > 1.4 && c->nm_t[1] < 2 && c->nm_p[1] < 0.2);
      assert_true(c->nm_t[2] > 2 && c->nm_p[2] > 0.6);
      assert_int_equal(u, -1);
      print_message("non-monotone after %lld runs: %.3f at %.3g, %.3f at %.3g, %.3f at %.3g\n",
                    (long long)sr.n, c->nm_p[0], c->nm_t[0], c->nm_p[1], c->nm_t[1], c->nm_p[2],
                    c->nm_t[2]);
    }
    ana_bnd_search_free(&sr);
  }
  /* directly: a peak in 60 + 60 + 60 runs; a flat response is monotone */
  double t[180];
  uint8_t y[180];
  for (int i = 0; i < 180; i++) {
    t[i] = i / 180.0;
    y[i] = i >= 60 && i < 120;
  }
  ana_bnd_crossing c;
  assert_int_equal(ana_bnd_monotone_check(t, y, 180, &c), 1);
  assert_true(c.nm_p[1] == 1 && c.nm_p[0] == 0 && c.nm_p[2] == 0);
  for (int i = 0; i < 180; i++) y[i] = i % 2;
  assert_int_equal(ana_bnd_monotone_check(t, y, 180, &c), 0);
}

/* ---- validation: boundaries with closed forms (docs/reference.md "Boundary search") ---- */

/* Reads /boundary crossing and interval of response 0, combination 0. */
static void read_crossing(const char *name, double *est, double *lo, double *hi) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_true(H5LTread_dataset_double(f, "/boundary/crossing", est) >= 0);
  assert_true(H5LTread_dataset_double(f, "/boundary/interval_lo", lo) >= 0);
  assert_true(H5LTread_dataset_double(f, "/boundary/interval_hi", hi) >= 0);
  H5Fclose(f);
}

/* A quiet cluster with deterministic service D = 5 ms, no retries and so
 * little load that nothing waits: an attempt succeeds iff its timeout, in
 * ticks round(T / tick), is at least D / tick. The success ratio drops from
 * 1 to 0 at T* = D - tick / 2. */
static void test_validation_timeout_step(void **state) {
  (void)state;
  assert_int_equal(run_cli("boundary --axis timeout_ms --range 1:20 --goodput-below 0.5 "
                           "--set surge=none --set brownout=none --set service=deterministic "
                           "--set service_mean_ms=5 --set load=0.05 --set max_retries=0 "
                           "--set tick_ms=0.1 --set horizon_ms=2000 --no-plot -j 2 -o step.h5"),
                   0);
  double est, lo, hi, truth = 5 - 0.1 / 2;
  read_crossing("step.h5", &est, &lo, &hi);
  print_message("timeout step: closed form %.4f, found %.4f [%.4f, %.4f]\n", truth, est, lo, hi);
  assert_true(lo <= truth && truth <= hi);
  assert_true(hi - lo < 0.05 * 19);
}

/* One shard of W = 8 workers, deterministic service s = 5 ms, no timeout to
 * speak of, an unbounded queue, no retries, horizon H = 10 s: above
 * saturation the workers complete W (H/s - 1) attempts while lambda H =
 * rho W H / s arrive, so the success ratio is (1 - s/H) / rho and falls
 * below f = 0.8 at rho* = (1 - s/H) / f = 1.249375. */
static void test_validation_saturation(void **state) {
  (void)state;
  assert_int_equal(run_cli("boundary --axis load --range 0.8:1.6 --goodput-below 0.8 "
                           "--set surge=none --set brownout=none --set service=deterministic "
                           "--set service_mean_ms=5 --set shards=1 --set workers=8 "
                           "--set timeout_ms=1000000 --set queue_capacity=inf --set max_retries=0 "
                           "--set horizon_ms=10000 --no-plot -j 2 -o sat.h5"),
                   0);
  double est, lo, hi, truth = (1 - 5.0 / 10000) / 0.8;
  read_crossing("sat.h5", &est, &lo, &hi);
  print_message("saturation: closed form %.5f, found %.5f [%.5f, %.5f]\n", truth, est, lo, hi);
  assert_true(lo <= truth && truth <= hi);
  assert_true(hi - lo < 0.05 * 0.8);
}

/* ---- common random numbers ---- */

static const char crn_sweep[] =
    "[sweep]\nreplicates = 3\nseed = 11\ncrn = on\n"
    "[scenario]\nbudget_ratio = 0.3\nbackoff = full\nhorizon_ms = 6000\n"
    "[grid]\ncapacity_factor = 1.25, 2\n"
    "; the breaker is off: the two cool-downs are the same configuration\n"
    "breaker_cooldown_ms = 500, 1000\n";

static void write_file(const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* -j1 and -j2 give the same /runs and /ticks; every run's seed ignores its
 * point; two points of identical configuration give identical runs, and
 * crn = off gives them different ones. */
static void test_crn_determinism_and_pairing(void **state) {
  (void)state;
  write_file("crn.ini", crn_sweep);
  assert_int_equal(run_cli("run crn.ini --allow-dead-axes -q -j 1 -o crn1.h5"), 0);
  assert_int_equal(run_cli("run crn.ini --allow-dead-axes -q -j 2 -o crn2.h5"), 0);
  char cmd[1024];
  for (int k = 0; k < 2; k++) {
    const char *obj = k ? "/ticks" : "/runs";
    snprintf(cmd, sizeof cmd, "h5diff '%s/crn1.h5' '%s/crn2.h5' %s %s >/dev/null 2>&1", tmpdir,
             tmpdir, obj, obj);
    assert_int_equal(system(cmd), 0);
  }
  assert_int_equal(run_cli("run crn.ini --allow-dead-axes -q -j 2 --set crn=off -o plain.h5"), 0);
  for (int crn = 1; crn >= 0; crn--) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, crn ? "crn1.h5" : "plain.h5");
    fmt_results r;
    assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
    assert_int_equal(r.n_runs, 12);
    int same_pairs = 0;
    /* points: capacity_factor slowest; cool-down 500 / 1000 are points 2c, 2c + 1 */
    for (size_t i = 0; i < r.n_runs; i++) {
      const fmt_run *a = &r.runs[i];
      assert_int_equal(a->seed, crn ? r.runs[a->replicate].seed : a->seed);
      if (a->point % 2) continue;
      for (size_t j = 0; j < r.n_runs; j++) {
        const fmt_run *b = &r.runs[j];
        if (b->point != a->point + 1 || b->replicate != a->replicate) continue;
        int same = a->seed == b->seed && a->outcome == b->outcome &&
                   a->peak_queue == b->peak_queue && a->amplification == b->amplification &&
                   (a->recovery_ms == b->recovery_ms || (isnan(a->recovery_ms) && isnan(b->recovery_ms)));
        same_pairs += same;
      }
    }
    print_message("crn %s: %d of 6 identical-configuration pairs gave identical runs\n",
                  crn ? "on" : "off", same_pairs);
    assert_int_equal(same_pairs, crn ? 6 : 0);
    fmt_results_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fit_recovers_coefficients),
      cmocka_unit_test(test_fit_separated_and_constant),
      cmocka_unit_test(test_coverage_synthetic),
      cmocka_unit_test(test_step_brackets),
      cmocka_unit_test(test_nonmonotone),
      cmocka_unit_test(test_crossing_text),
      cmocka_unit_test(test_validation_timeout_step),
      cmocka_unit_test(test_validation_saturation),
      cmocka_unit_test(test_crn_determinism_and_pairing),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
