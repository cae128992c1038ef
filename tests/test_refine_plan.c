/*
 * test_refine_plan.c — refine's decisions (analysis/refine_plan.c) on known
 * inputs and on synthetic Bernoulli grids with known truth: whole refine
 * procedures (screening, candidates, alpha spending, rounds of batches)
 * simulated 2,000 times with a fixed-seed xoshiro256++ (engine/rng.h).
 *
 * The family-wise claim: on a grid of 240 points all exactly at the
 * boundary P(pass) = 0.99 (the worst case for a false claim), a point is
 * declared proven in at most 5% of procedures (plus three Monte Carlo
 * standard errors). The same simulation without alpha spending (every
 * candidate at the full alpha) is run too and must break the bound: the
 * check can fail. Power: one point at 0.999 among points at 0.9 is found
 * in most procedures.
 *
 * Sequential screening (5 replicates, then up to 20 only where the first 5
 * leave a point open: ana_rp_screen_more) is run through the same 2,000
 * procedures: the family-wise bound and the power must hold as for fixed
 * screening, on fewer screening runs.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "refine_plan.h"
#include "rng.h"

#define TRIALS 2000
#define MC_MARGIN (3.0 * sqrt(0.05 * 0.95 / TRIALS))
#define R0 20
#define R1 5 /* sequential screening's first stage */

static ana_seq_design targets(void) {
  ana_seq_design d = {.min_pass = 0.99, .max_meta = 0.01};
  assert_int_equal(ana_seq_design_check(&d, NULL, 0), 0);
  return d;
}

/* ---- known answers ---- */

static void test_screening(void **state) {
  (void)state;
  ana_seq_design d = targets();
  /* 20 of 20 pass: upper bound 1. 19 of 20: 0.9987 >= 0.99. 18 of 20:
   * 0.9877 < 0.99: refuted. */
  ana_rp_point p = {.id = 0, .n = 20, .n_pass = 20};
  assert_true(ana_rp_screen_ok(&p, &d));
  p.n_pass = 19;
  assert_true(ana_rp_screen_ok(&p, &d));
  p.n_pass = 18;
  assert_false(ana_rp_screen_ok(&p, &d));
  /* Metastable: 1 of 20 has lower bound 0.0013 <= 0.01; 2 of 20 0.0123. */
  p.n_pass = 19;
  p.n_meta = 1;
  assert_true(ana_rp_screen_ok(&p, &d));
  p.n_pass = 18;
  p.n_meta = 2;
  d.min_pass = 0; /* pass target off: only the metastable bound decides */
  assert_int_equal(ana_seq_design_check(&d, NULL, 0), 0);
  assert_false(ana_rp_screen_ok(&p, &d));
  /* A collapsed run rules a point out whatever else it shows. */
  d = targets();
  p = (ana_rp_point){.id = 0, .n = 20, .n_pass = 20, .n_collapsed = 1};
  assert_false(ana_rp_screen_ok(&p, &d));
  p.n_collapsed = 0;
  p.n = 0;
  assert_false(ana_rp_screen_ok(&p, &d));
}

static void test_ranking_alpha_and_batches(void **state) {
  (void)state;
  ana_seq_design d = targets();
  ana_rp_point pts[6] = {
      {.id = 0, .n = 20, .n_pass = 20, .amp = 1.30, .lost = 0.1, .vnodes = 50},
      {.id = 1, .n = 20, .n_pass = 20, .amp = 1.10, .lost = 0.2, .vnodes = 50},
      {.id = 2, .n = 20, .n_pass = 10, .amp = 1.00, .lost = 0.0, .vnodes = 10}, /* refuted */
      {.id = 3, .n = 20, .n_pass = 20, .amp = 1.104, .lost = 0.1, .vnodes = 50}, /* = 1.10 */
      {.id = 4, .n = 20, .n_pass = 20, .amp = 1.10, .lost = 0.1, .vnodes = 10},
      {.id = 5, .n = 20, .n_pass = 20, .amp = NAN, .lost = 0.0, .vnodes = 10},
  };
  ana_rp rp;
  char err[128];
  assert_int_equal(ana_rp_init(&rp, pts, 6, &d, err, sizeof err), 0);
  assert_int_equal(rp.n_cand, 5);
  /* amp (to 0.01), then lost, then vnodes, then id; NaN last. */
  size_t want[5] = {4, 3, 1, 0, 5};
  for (size_t i = 0; i < 5; i++) {
    assert_int_equal(rp.cand[i].point, want[i]);
    assert_true(fabs(rp.cand[i].alpha - 0.05 / pow(2.0, (double)(i + 1))) < 1e-15);
    /* The test runs at alpha_i: its upper boundary ln(1 / alpha_i) bounds
     * the false-proof rate by alpha_i (Ville). */
    assert_true(fabs(rp.cand[i].seq.d.alpha - rp.cand[i].alpha) < 1e-15);
    assert_true(fabs(rp.cand[i].seq.pass.upper - log(1 / rp.cand[i].alpha)) < 1e-12);
  }
  int64_t batch[5];
  ana_rp_step st = ana_rp_decide(&rp, 4, batch);
  assert_int_equal(st.status, ANA_RP_OPEN);
  assert_int_equal(st.n_open, 5);
  /* The 4 cheapest get what a perfect point needs at their alpha_i. */
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(batch[i], ana_seq_runs_to_prove(&rp.cand[i].seq.d));
  }
  assert_int_equal(batch[4], 0);
  /* Rank 1 proven on perfect runs: decided at once. */
  for (int64_t j = 0; j < batch[0]; j++) ana_seq_add(&rp.cand[0].seq, 1, 0);
  assert_int_equal(rp.cand[0].seq.state, ANA_SEQ_PROVEN);
  st = ana_rp_decide(&rp, 4, batch);
  assert_int_equal(st.status, ANA_RP_PROVEN);
  assert_int_equal(st.decided, 0);
  ana_rp_free(&rp);

  /* Rank 2 proven while rank 1 is open: not decided; rank 1 refuted: it is. */
  assert_int_equal(ana_rp_init(&rp, pts, 6, &d, err, sizeof err), 0);
  int64_t need = ana_seq_runs_to_prove(&rp.cand[1].seq.d);
  for (int64_t j = 0; j < need; j++) ana_seq_add(&rp.cand[1].seq, 1, 0);
  st = ana_rp_decide(&rp, 1, batch);
  assert_int_equal(st.status, ANA_RP_OPEN);
  assert_true(batch[0] > 0);
  for (int j = 1; j < 5; j++) assert_int_equal(batch[j], 0); /* K = 1 */
  ana_seq_add(&rp.cand[0].seq, 0, 1);
  ana_seq_add(&rp.cand[0].seq, 0, 1);
  assert_int_equal(rp.cand[0].seq.state, ANA_SEQ_REFUTED);
  st = ana_rp_decide(&rp, 4, batch);
  assert_int_equal(st.status, ANA_RP_PROVEN);
  assert_int_equal(st.decided, 1);
  /* A batch is at least ANA_REFINE_MIN_BATCH even close to the proof. */
  ana_rp_free(&rp);
  assert_int_equal(ana_rp_init(&rp, pts, 6, &d, err, sizeof err), 0);
  int64_t to_go = ana_rp_runs_to_go(&rp.cand[0].seq);
  for (int64_t j = 0; j < to_go - 2; j++) ana_seq_add(&rp.cand[0].seq, 1, 0);
  assert_int_equal(ana_rp_runs_to_go(&rp.cand[0].seq), 2);
  st = ana_rp_decide(&rp, 4, batch);
  assert_int_equal(st.status, ANA_RP_OPEN);
  assert_int_equal(batch[0], ANA_REFINE_MIN_BATCH);
  ana_rp_free(&rp);

  /* Every candidate refuted: none, and the closest is named. */
  assert_int_equal(ana_rp_init(&rp, pts, 6, &d, err, sizeof err), 0);
  for (size_t i = 0; i < rp.n_cand; i++) {
    for (int j = 0; j < (i == 3 ? 200 : 0); j++) ana_seq_add(&rp.cand[i].seq, 1, 0);
    while (rp.cand[i].seq.state == ANA_SEQ_OPEN) ana_seq_add(&rp.cand[i].seq, 0, 0);
  }
  st = ana_rp_decide(&rp, 4, batch);
  assert_int_equal(st.status, ANA_RP_NONE);
  assert_int_equal(st.closest, 3);
  ana_rp_free(&rp);
}

/* ---- whole procedures on synthetic grids ---- */

typedef struct grid {
  size_t n;
  const double *p_pass; /* per point */
  int no_spending;      /* the broken variant: every candidate at the full alpha */
  int sequential;       /* screening: R1 replicates, up to R0 where R1 leave a point open */
  int64_t screen_runs;  /* screening runs spent, over all procedures */
} grid;

/* One refine procedure; returns the proven point, or -1. */
static long simulate(grid *g, eng_rng *r, int k) {
  ana_seq_design d = targets();
  ana_rp_point *pts = calloc(g->n, sizeof *pts);
  assert_non_null(pts);
  for (size_t i = 0; i < g->n; i++) {
    pts[i].id = (int64_t)i;
    int first = g->sequential ? R1 : R0;
    for (int j = 0; j < first; j++) pts[i].n_pass += eng_rng_uniform(r) < g->p_pass[i];
    pts[i].n = first;
    pts[i].amp = 1.0 + eng_rng_uniform(r); /* a random cost order */
  }
  if (g->sequential) { /* stage 2 where the rule says, from stage 1 alone */
    unsigned char *more = calloc(g->n, 1);
    assert_non_null(more);
    ana_rp_stage2(pts, g->n, &d, more);
    for (size_t i = 0; i < g->n; i++) {
      if (!more[i]) continue;
      for (int j = R1; j < R0; j++) pts[i].n_pass += eng_rng_uniform(r) < g->p_pass[i];
      pts[i].n = R0;
    }
    free(more);
  }
  for (size_t i = 0; i < g->n; i++) g->screen_runs += pts[i].n;
  ana_rp rp;
  assert_int_equal(ana_rp_init(&rp, pts, g->n, &d, NULL, 0), 0);
  if (g->no_spending)
    for (size_t i = 0; i < rp.n_cand; i++) ana_seq_init(&rp.cand[i].seq, &d);
  int64_t *batch = calloc(rp.n_cand ? rp.n_cand : 1, sizeof *batch);
  long found = -1;
  for (int round = 0; round < 100000; round++) {
    ana_rp_step st = ana_rp_decide(&rp, k, batch);
    if (st.status == ANA_RP_PROVEN) found = (long)rp.cand[st.decided].point;
    if (st.status != ANA_RP_OPEN) break;
    for (size_t i = 0; i < rp.n_cand; i++) {
      ana_seq *s = &rp.cand[i].seq;
      double p = g->p_pass[rp.cand[i].point];
      /* Runs past the decision change nothing: not drawn. */
      for (int64_t j = 0; j < batch[i] && s->state == ANA_SEQ_OPEN; j++)
        ana_seq_add(s, eng_rng_uniform(r) < p, 0);
    }
  }
  free(batch);
  ana_rp_free(&rp);
  free(pts);
  return found;
}

static double false_claim_rate(int no_spending, int sequential, uint64_t seed) {
  double p[240];
  for (int i = 0; i < 240; i++) p[i] = 0.99;
  grid g = {240, p, no_spending, sequential, 0};
  eng_rng r;
  eng_rng_seed(&r, seed, 0);
  int wrong = 0;
  for (int t = 0; t < TRIALS; t++) wrong += simulate(&g, &r, ANA_REFINE_K) >= 0;
  return (double)wrong / TRIALS;
}

static void test_family_error_at_the_boundary(void **state) {
  (void)state;
  double rate = false_claim_rate(0, 0, 11);
  print_message("240 points at P(pass) = 0.99: a point declared proven in %.2f%% of %d "
                "procedures\n", 100 * rate, TRIALS);
  assert_true(rate <= 0.05 + MC_MARGIN);
}

static void test_family_check_can_fail(void **state) {
  (void)state;
  /* Without alpha / 2^i every one of ~236 candidates gets a 5% chance. */
  double rate = false_claim_rate(1, 0, 12);
  print_message("the same without alpha spending: %.2f%%\n", 100 * rate);
  assert_true(rate > 0.05 + MC_MARGIN);
}

static void test_power_one_good_point(void **state) {
  (void)state;
  double p[240];
  for (int i = 0; i < 240; i++) p[i] = 0.9;
  p[137] = 0.999;
  grid g = {240, p, 0, 0, 0};
  eng_rng r;
  eng_rng_seed(&r, 13, 0);
  int found = 0, wrong = 0;
  for (int t = 0; t < TRIALS; t++) {
    long f = simulate(&g, &r, ANA_REFINE_K);
    found += f == 137;
    wrong += f >= 0 && f != 137;
  }
  print_message("one point at 0.999 among 0.9: found in %.1f%%, a wrong point in %.2f%%\n",
                100.0 * found / TRIALS, 100.0 * wrong / TRIALS);
  assert_true(found > TRIALS * 0.75);
  assert_true((double)wrong / TRIALS <= 0.05 + MC_MARGIN);
}

/* ---- sequential screening ---- */

static void test_screen_more(void **state) {
  (void)state;
  ana_seq_design d = targets();
  /* Stage 1 of 5 runs: all passing meets the targets' point estimates
   * (clearly a candidate); 4 of 5 is consistent with 0.99 (exact upper
   * bound 0.9949) but misses it (open: stage 2); 3 of 5 (0.947) is
   * refuted. */
  ana_rp_point p = {.id = 0, .n = 5, .n_pass = 5};
  assert_false(ana_rp_screen_more(&p, &d));
  p.n_pass = 4;
  assert_true(ana_rp_screen_more(&p, &d));
  p.n_pass = 3;
  assert_false(ana_rp_screen_more(&p, &d));
  /* Metastable: 1 of 5 (lower bound 0.005) open, 2 of 5 (0.053) refuted. */
  p = (ana_rp_point){.id = 0, .n = 5, .n_pass = 4, .n_meta = 1};
  assert_true(ana_rp_screen_more(&p, &d));
  p.n_pass = 3;
  p.n_meta = 2;
  assert_false(ana_rp_screen_more(&p, &d));
  /* A collapse refutes; a disabled target does not hold a point open. */
  p = (ana_rp_point){.id = 0, .n = 5, .n_pass = 5, .n_collapsed = 1};
  assert_false(ana_rp_screen_more(&p, &d));
  d.min_pass = 0;
  assert_int_equal(ana_seq_design_check(&d, NULL, 0), 0);
  p = (ana_rp_point){.id = 0, .n = 5, .n_pass = 2, .n_meta = 0};
  assert_false(ana_rp_screen_more(&p, &d));
  /* Stage 2: the open points, and the ANA_SCREEN_TOP cheapest clear
   * candidates; refuted points never. */
  d = targets();
  ana_rp_point pts[ANA_SCREEN_TOP + 3];
  size_t n = sizeof pts / sizeof *pts;
  for (size_t i = 0; i < n; i++)
    pts[i] = (ana_rp_point){.id = (int64_t)i, .n = 5, .n_pass = 5, .amp = 2.0 - 0.05 * (double)i};
  pts[0].n_pass = 4;              /* open, and the dearest */
  pts[1].n_pass = 3;              /* refuted */
  unsigned char more[ANA_SCREEN_TOP + 3];
  ana_rp_stage2(pts, n, &d, more);
  assert_true(more[0]);
  assert_false(more[1]);
  assert_false(more[2]);          /* the dearest clear candidate: 9 are, 8 get it */
  for (size_t i = 3; i < n; i++) assert_true(more[i]);
}

static void test_sequential_family_error(void **state) {
  (void)state;
  double rate = false_claim_rate(0, 1, 14);
  print_message("sequential screening, 240 points at P(pass) = 0.99: a point declared proven in "
                "%.2f%% of %d procedures\n", 100 * rate, TRIALS);
  assert_true(rate <= 0.05 + MC_MARGIN);
  /* and without alpha spending the same check fails: it can fail */
  double broken = false_claim_rate(1, 1, 15);
  print_message("the same without alpha spending: %.2f%%\n", 100 * broken);
  assert_true(broken > 0.05 + MC_MARGIN);
}

/* Known truth: 240 points, most plainly bad (P(pass) 0.5), 30 borderline
 * (0.9), 3 good (0.999) among them. Sequential screening finds a good
 * point as often as fixed screening, never a wrong one beyond the bound,
 * and spends far fewer screening runs. */
static void test_sequential_known_truth(void **state) {
  (void)state;
  double p[240];
  for (int i = 0; i < 240; i++) p[i] = i % 8 == 3 ? 0.9 : 0.5;
  p[40] = p[117] = p[201] = 0.999;
  int found[2] = {0, 0}, wrong[2] = {0, 0};
  int64_t screen[2];
  for (int seq = 0; seq < 2; seq++) {
    grid g = {240, p, 0, seq, 0};
    eng_rng r;
    eng_rng_seed(&r, 16, 0);
    for (int t = 0; t < TRIALS; t++) {
      long f = simulate(&g, &r, ANA_REFINE_K);
      found[seq] += f == 40 || f == 117 || f == 201;
      wrong[seq] += f >= 0 && f != 40 && f != 117 && f != 201;
    }
    screen[seq] = g.screen_runs;
  }
  print_message("known truth: a good point found in %.1f%% (fixed) / %.1f%% (sequential), a wrong "
                "one in %.2f%% / %.2f%%; screening runs per procedure %.0f / %.0f\n",
                100.0 * found[0] / TRIALS, 100.0 * found[1] / TRIALS, 100.0 * wrong[0] / TRIALS,
                100.0 * wrong[1] / TRIALS, (double)screen[0] / TRIALS,
                (double)screen[1] / TRIALS);
  assert_true(found[1] > TRIALS * 0.9);
  assert_true(found[1] >= found[0] - TRIALS / 50);
  assert_true((double)wrong[1] / TRIALS <= 0.05 + MC_MARGIN);
  assert_true(screen[1] * 2 < screen[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_screening),
      cmocka_unit_test(test_ranking_alpha_and_batches),
      cmocka_unit_test(test_family_error_at_the_boundary),
      cmocka_unit_test(test_family_check_can_fail),
      cmocka_unit_test(test_power_one_good_point),
      cmocka_unit_test(test_screen_more),
      cmocka_unit_test(test_sequential_family_error),
      cmocka_unit_test(test_sequential_known_truth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
