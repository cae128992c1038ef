/*
 * test_seqtest.c — the sequential test of analysis/seqtest.c: known-answer
 * log-likelihood ratios, boundaries and stopping points, then its error
 * rates on synthetic Bernoulli runs with known truth (2,000 simulated
 * decisions per case, fixed-seed xoshiro256++ from engine/rng.h).
 *
 * The level checks are written as functions that return the observed rate,
 * and a miscalibrated design (alpha = 0.3) is run through the same check to
 * show the check can fail.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "seqtest.h"
#include "testutil.h"

#define TRIALS 2000
/* Three Monte Carlo standard errors of a rate of 5% over TRIALS decisions. */
#define MC_MARGIN (3.0 * sqrt(0.05 * 0.95 / TRIALS))

static ana_seq_design design(double min_pass, double max_meta) {
  ana_seq_design d = {.min_pass = min_pass, .max_meta = max_meta};
  char err[128];
  assert_int_equal(ana_seq_design_check(&d, err, sizeof err), 0);
  return d;
}

static void test_known_answers(void **state) {
  (void)state;
  ana_seq_design d = design(0.99, 0.01);
  assert_near(d.alpha, 0.05, 0);
  assert_near(d.beta, 0.10, 0);
  assert_near(d.ratio, 10.0, 0);
  ana_seq s;
  ana_seq_init(&s, &d);
  /* q0 = 0.01, q1 = 0.001: ln(0.1) per bad run, ln(0.999/0.99) per good one;
   * boundaries ln(1/0.05) = ln 20 and ln(0.1/0.95). */
  assert_near(s.pass.q0, 0.01, 1e-15);
  assert_near(s.pass.q1, 0.001, 1e-15);
  assert_near(s.pass.step_bad, -2.302585092994046, 1e-12);
  assert_near(s.pass.step_good, 0.009049835519, 1e-11);
  assert_near(s.pass.upper, 2.995732273553991, 1e-12);
  assert_near(s.pass.lower, -2.251291798606495, 1e-12);
  assert_near(s.meta.step_good, s.pass.step_good, 1e-15);
  /* ln 20 / 0.0090498 = 331.03: a clean point is proven at run 332. */
  assert_int_equal(ana_seq_runs_to_prove(&d), 332);
  for (int i = 0; i < 331; i++) assert_int_equal(ana_seq_add(&s, 1, 0), ANA_SEQ_OPEN);
  assert_near(s.pass.llr, 331 * 0.009049835519, 1e-8);
  assert_int_equal(ana_seq_add(&s, 1, 0), ANA_SEQ_PROVEN);
  assert_int_equal(s.decided_at, 332);
  assert_int_equal(s.pass.decided_at, 332);
  /* Decided: further runs change nothing. */
  assert_int_equal(ana_seq_add(&s, 0, 1), ANA_SEQ_PROVEN);
  assert_int_equal(s.n, 332);

  /* A failure among the first 6 runs refutes: 5 good + 1 bad gives
   * 5 * 0.00905 - 2.3026 = -2.2573 <= -2.2513; at run 7 it is -2.2483. */
  ana_seq_init(&s, &d);
  for (int i = 0; i < 5; i++) ana_seq_add(&s, 1, 0);
  assert_int_equal(ana_seq_add(&s, 0, 0), ANA_SEQ_REFUTED);
  assert_int_equal(s.pass.state, ANA_SEQ_REFUTED);
  assert_int_equal(s.meta.state, ANA_SEQ_OPEN);
  ana_seq_init(&s, &d);
  for (int i = 0; i < 6; i++) ana_seq_add(&s, 1, 0);
  assert_int_equal(ana_seq_add(&s, 0, 0), ANA_SEQ_OPEN);
  assert_near(s.pass.llr, 6 * 0.009049835519 - 2.302585092994046, 1e-9);
  /* From there proof needs 2.9957 + 2.2483 = 5.2440 more: 579.5 good
   * runs, so it comes at run 7 + 580 = 587. */
  while (ana_seq_add(&s, 1, 0) == ANA_SEQ_OPEN) {
  }
  assert_int_equal(s.decided_at, 587);
  assert_int_equal(s.state, ANA_SEQ_PROVEN);

  /* A metastable run counts against both targets, even if flagged passed. */
  ana_seq_init(&s, &d);
  for (int i = 0; i < 10; i++) ana_seq_add(&s, 1, 0);
  ana_seq_add(&s, 1, 1);
  assert_int_equal(s.pass.bad, 1);
  assert_int_equal(s.meta.bad, 1);
  /* A slow run (recovered late) counts only against P(pass). */
  ana_seq_add(&s, 0, 0);
  assert_int_equal(s.pass.bad, 2);
  assert_int_equal(s.meta.bad, 1);
}

static void test_disabled_and_errors(void **state) {
  (void)state;
  ana_seq_design d = design(0.0, 0.01);
  ana_seq s;
  ana_seq_init(&s, &d);
  assert_int_equal(s.pass.state, ANA_SEQ_PROVEN);
  /* Slow runs do not matter when only P(metastable) is claimed. */
  for (int i = 0; i < 331; i++) assert_int_equal(ana_seq_add(&s, 0, 0), ANA_SEQ_OPEN);
  assert_int_equal(ana_seq_add(&s, 0, 0), ANA_SEQ_PROVEN);

  d = design(0.0, 1.0);
  ana_seq_init(&s, &d);
  assert_int_equal(s.state, ANA_SEQ_PROVEN);
  assert_int_equal(ana_seq_runs_to_prove(&d), 0);

  /* Looser target, looser ratio: q0 = 0.1, q1 = 0.05. */
  d = design(0.9, 1.0);
  d.ratio = 2.0;
  ana_seq_init(&s, &d);
  assert_near(s.pass.step_good, log(0.95 / 0.9), 1e-12);
  assert_int_equal(ana_seq_runs_to_prove(&d), (int64_t)ceil(log(20.0) / log(0.95 / 0.9)));

  const ana_seq_design bad[] = {
      {.min_pass = 1.0, .max_meta = 0.01},    {.min_pass = 0.99, .max_meta = 0.0},
      {.min_pass = 0.99, .max_meta = -0.5},   {.min_pass = NAN, .max_meta = 0.01},
      {.min_pass = 0.99, .max_meta = 1.0, .alpha = 0.5},
      {.min_pass = 0.99, .max_meta = 1.0, .alpha = -0.1},
      {.min_pass = 0.99, .max_meta = 1.0, .beta = 0.7},
      {.min_pass = 0.99, .max_meta = 1.0, .ratio = 1.0},
      {.min_pass = 0.99, .max_meta = 1.0, .ratio = INFINITY},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ana_seq_design b = bad[i];
    char err[128] = "";
    assert_int_equal(ana_seq_design_check(&b, err, sizeof err), -1);
    assert_true(strlen(err) > 0);
  }

  char line[256];
  d = design(0.99, 0.01);
  ana_seq_describe(&d, line, sizeof line);
  assert_non_null(strstr(line, "q0=0.01 vs q1=0.001"));
  assert_non_null(strstr(line, "332 runs"));
  ana_seq_init(&s, &d);
  ana_seq_add(&s, 1, 0);
  ana_seq_status(&s, line, sizeof line);
  assert_non_null(strstr(line, "P(pass) >= 0.99 open: LLR 0.009, between the reject bound -2.251 "
                               "and the accept bound 2.996"));
  assert_non_null(strstr(line, "P(bad) <= 0.01 open"));
  ana_seq_verdict(&s, line, sizeof line);
  assert_string_equal(line, "no target's SPRT has crossed a bound yet");
  /* A verdict names the bound the LLR was compared with, never an interval. */
  while (ana_seq_add(&s, 1, 0) == ANA_SEQ_OPEN) {
  }
  ana_seq_verdict(&s, line, sizeof line);
  assert_string_equal(line, "P(pass) >= 0.99 and P(bad) <= 0.01, each by its SPRT crossing the "
                            "accept bound: LLR 3.005 and 3.005 >= ln(1/alpha) = 2.996");
  ana_seq_target_status(&s, 0, line, sizeof line);
  assert_string_equal(line, "P(bad) <= 0.01 proven: SPRT crossed the accept bound, LLR 3.005 >= "
                            "2.996 (alpha 0.05, beta 0.1; H0 bad rate 0.01, H1 0.001)");
  ana_seq_init(&s, &d);
  ana_seq_add(&s, 0, 0); /* slow: not passing, not bad */
  ana_seq_verdict(&s, line, sizeof line);
  assert_string_equal(line, "P(pass) >= 0.99 missed: its SPRT crossed the reject bound: LLR "
                            "-2.303 <= ln(beta/(1 - alpha)) = -2.251");
}

typedef struct outcome_rates {
  double proven, refuted, open;
  double mean_runs;
} outcome_rates;

/* TRIALS decisions on synthetic runs: each run is "not passing" with
 * probability q_fail and metastable with probability q_meta (a metastable
 * run also does not pass), stopped at max_runs if still open. */
static outcome_rates simulate(const ana_seq_design *d, double q_fail, double q_meta, int64_t max_runs,
                              uint64_t seed) {
  eng_rng r;
  eng_rng_seed(&r, seed, 0);
  int64_t proven = 0, refuted = 0, runs = 0;
  for (int t = 0; t < TRIALS; t++) {
    ana_seq s;
    ana_seq_init(&s, d);
    while (s.state == ANA_SEQ_OPEN && s.n < max_runs) {
      int meta = eng_rng_uniform(&r) < q_meta;
      int fail = meta || eng_rng_uniform(&r) < q_fail;
      ana_seq_add(&s, !fail, meta);
    }
    proven += s.state == ANA_SEQ_PROVEN;
    refuted += s.state == ANA_SEQ_REFUTED;
    runs += s.n;
  }
  outcome_rates o = {.proven = (double)proven / TRIALS, .refuted = (double)refuted / TRIALS};
  o.open = 1.0 - o.proven - o.refuted;
  o.mean_runs = (double)runs / TRIALS;
  return o;
}

#define NO_CAP INT64_C(1000000)

static void report(const char *what, outcome_rates o) {
  printf("  %-44s proven %.4f refuted %.4f open %.4f mean runs %.1f\n", what, o.proven, o.refuted,
         o.open, o.mean_runs);
}

static void test_pass_target_error_rates(void **state) {
  (void)state;
  ana_seq_design d = design(0.99, 1.0);
  outcome_rates o = simulate(&d, 0.02, 0.0, NO_CAP, 101);
  report("P(pass) = 0.98, claim >= 0.99", o);
  assert_true(o.proven <= 0.05);
  o = simulate(&d, 0.01, 0.0, NO_CAP, 102);
  report("P(pass) = 0.99 (boundary), claim >= 0.99", o);
  assert_true(o.proven <= 0.05 + MC_MARGIN);
  o = simulate(&d, 0.001, 0.0, NO_CAP, 103);
  report("P(pass) = 0.999, claim >= 0.99", o);
  assert_true(o.proven >= 0.80);
  assert_true(o.refuted <= 0.10 + MC_MARGIN); /* beta */
}

static void test_meta_target_error_rates(void **state) {
  (void)state;
  ana_seq_design d = design(0.0, 0.01);
  outcome_rates o = simulate(&d, 0.5, 0.02, NO_CAP, 201);
  report("P(meta) = 0.02, claim <= 0.01", o);
  assert_true(o.proven <= 0.05);
  o = simulate(&d, 0.5, 0.01, NO_CAP, 202);
  report("P(meta) = 0.01 (boundary), claim <= 0.01", o);
  assert_true(o.proven <= 0.05 + MC_MARGIN);
  o = simulate(&d, 0.5, 0.001, NO_CAP, 203);
  report("P(meta) = 0.001, claim <= 0.01", o);
  assert_true(o.proven >= 0.80);
}

/* The pair: proving both at alpha proves the claim at alpha (IUT), whichever
 * target sits at its boundary. */
static void test_pair_error_rates(void **state) {
  (void)state;
  ana_seq_design d = design(0.99, 0.01);
  outcome_rates o = simulate(&d, 0.01, 0.0005, NO_CAP, 301);
  report("pass at boundary, meta well inside", o);
  assert_true(o.proven <= 0.05 + MC_MARGIN);
  o = simulate(&d, 0.0, 0.01, NO_CAP, 302);
  report("meta at boundary (so pass too)", o);
  assert_true(o.proven <= 0.05 + MC_MARGIN);
  o = simulate(&d, 0.0005, 0.0005, NO_CAP, 303);
  report("both at 0.999", o);
  assert_true(o.proven >= 0.80);
}

/* Truncation at a run budget: stopping early can only turn decisions into
 * "open", never into false claims; the open share is what a budget costs. */
static void test_truncated(void **state) {
  (void)state;
  ana_seq_design d = design(0.99, 0.01);
  const int64_t caps[] = {332, 1000, 3000};
  for (size_t i = 0; i < 3; i++) {
    char what[64];
    snprintf(what, sizeof what, "P(pass) = 0.999, at most %lld runs", (long long)caps[i]);
    outcome_rates o = simulate(&d, 0.001, 0.0, caps[i], 401);
    report(what, o);
    assert_near(o.proven + o.refuted + o.open, 1.0, 1e-12);
    assert_true(o.mean_runs <= (double)caps[i]);
    snprintf(what, sizeof what, "P(pass) = 0.99, at most %lld runs", (long long)caps[i]);
    outcome_rates b = simulate(&d, 0.01, 0.0, caps[i], 402);
    report(what, b);
    assert_true(b.proven <= 0.05 + MC_MARGIN);
  }
  /* 332 runs is the least that can prove: only runs without a failure do,
   * probability 0.999^332 = 0.717. */
  outcome_rates o = simulate(&d, 0.001, 0.0, 332, 403);
  assert_near(o.proven, pow(0.999, 332), MC_MARGIN * 2);
  o = simulate(&d, 0.001, 0.0, 3000, 404);
  assert_true(o.open <= 0.02);
}

/* The level check above must be able to fail: a design that promises
 * alpha = 0.05 but tests at 0.3 is caught by the same comparison. */
static void test_level_check_can_fail(void **state) {
  (void)state;
  ana_seq_design d = design(0.99, 1.0);
  d.alpha = 0.3;
  outcome_rates o = simulate(&d, 0.01, 0.0, NO_CAP, 102);
  report("alpha 0.3 at the boundary (must exceed)", o);
  assert_true(o.proven > 0.05 + MC_MARGIN);
  o = simulate(&d, 0.02, 0.0, NO_CAP, 101);
  assert_true(o.proven > 0.05);
  /* And the power check fails for a design that cannot prove within its
   * run budget (alpha = 1e-6 needs 1,514 clean runs; the cap is 1,000). */
  d = design(0.99, 1.0);
  d.alpha = 1e-6;
  o = simulate(&d, 0.001, 0.0, 1000, 103);
  report("alpha 1e-6, at most 1000 runs (power must fail)", o);
  assert_true(o.proven < 0.80);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_answers),
      cmocka_unit_test(test_disabled_and_errors),
      cmocka_unit_test(test_pass_target_error_rates),
      cmocka_unit_test(test_meta_target_error_rates),
      cmocka_unit_test(test_pair_error_rates),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_level_check_can_fail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
