/*
 * test_decisions.c — tunable vs scenario axes (docs/decisions.md): the
 * default roles and the [sweep] overrides; recommend's robust and
 * per-scenario answers on synthetic grids whose answer is known (robust !=
 * per-scenario != the old "cheapest point"); and the error rate of the
 * robust claim, for recommend's exact bounds and for refine's grouped SPRTs,
 * over many trials with known truth. The rate checks can fail: the same
 * simulation counting "some per-scenario claim is wrong" exceeds the bound.
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

#include "ana.h"
#include "eng_config.h"
#include "refine_plan.h"
#include "rng.h"
#include "swp.h"
#include "drv_internal.h"

static void assert_contains(const char *text, const char *needle) {
  if (!text || !strstr(text, needle)) {
    print_error("expected to find \"%s\" in:\n%s\n", needle, text ? text : "(null)");
    fail();
  }
}

/* ---- roles ---- */

static void test_default_roles(void **state) {
  (void)state;
  const char *scenario[] = {"load", "rate_rps", "keys", "key_dist", "zipf_s", "hot_key",
                            "hot_key_share", "clients", "surge", "surge_factor", "brownout",
                            "crash", "outage", "horizon_ms", "slo_ms", NULL};
  const char *tunable[] = {"policy", "budget_ratio", "backoff_cap_ms", "vnodes",
                           "capacity_factor", "deadline_drop", "queue_capacity", "shards",
                           "timeout_ms", "breaker", NULL};
  for (int i = 0; scenario[i]; i++) {
    if (eng_setting_role_find(scenario[i]) != ENG_ROLE_SCENARIO) {
      print_error("%s should be a scenario setting\n", scenario[i]);
      fail();
    }
  }
  for (int i = 0; tunable[i]; i++) {
    if (eng_setting_role_find(tunable[i]) != ENG_ROLE_TUNABLE) {
      print_error("%s should be tunable\n", tunable[i]);
      fail();
    }
  }
  /* Every row of the table has a role by its group. */
  for (size_t i = 0; i < eng_settings_count(); i++) assert_non_null(eng_settings_at(i)->group);
}

static void test_sweep_overrides(void **state) {
  (void)state;
  const char *text = "[sweep]\nscenario_axes = vnodes\ntunable_axes = load, clients\n"
                     "[grid]\nload = 0.5, 0.7\nvnodes = 10, 150\nbudget_ratio = 0.1\n";
  swp_sweep sw;
  swp_sweep_init(&sw);
  char err[512];
  assert_int_equal(swp_sweep_parse_string(&sw, text, "t.ini", err, sizeof err), 0);
  assert_int_equal(swp_sweep_axis_is_scenario(&sw, "vnodes"), 1);
  assert_int_equal(swp_sweep_axis_is_scenario(&sw, "load"), 0);
  assert_int_equal(swp_sweep_axis_is_scenario(&sw, "budget_ratio"), 0);
  assert_int_equal(swp_sweep_axis_is_scenario(&sw, "hot_key_share"), 1); /* default */
  /* The effective text keeps the overrides (the result file stores it). */
  char *fmt = swp_sweep_format(&sw);
  assert_contains(fmt, "scenario_axes = vnodes\n");
  assert_contains(fmt, "tunable_axes = load, clients\n");
  swp_sweep again;
  swp_sweep_init(&again);
  assert_int_equal(swp_sweep_parse_string(&again, fmt, "fmt", err, sizeof err), 0);
  assert_int_equal(swp_sweep_axis_is_scenario(&again, "vnodes"), 1);
  assert_int_equal(swp_sweep_axis_is_scenario(&again, "load"), 0);
  swp_sweep_free(&again);
  free(fmt);
  swp_sweep_free(&sw);

  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"[sweep]\nscenario_axes = lod\n", "t.ini:2: scenario_axes: 'lod' is not a setting (did you mean 'load'?)"},
      {"[sweep]\nscenario_axes = load\ntunable_axes = load\n", "'load' is also listed in scenario_axes"},
      {"[sweep]\nscenario_axis = load\n", "did you mean 'scenario_axes'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    swp_sweep_init(&sw);
    assert_int_equal(swp_sweep_parse_string(&sw, bad[i].text, "t.ini", err, sizeof err), -1);
    assert_contains(err, bad[i].msg);
    swp_sweep_free(&sw);
  }
}

/* ---- synthetic grids: tunable budget x scenario load ---- */

typedef struct synth {
  fmt_results r;
  ana_summary s;
  char *axes[2];
  unsigned char scenario[2];
  double values[64];
  int64_t ids[32];
  ana_point_stats pts[32];
} synth;

/* n_tun budgets x n_scen loads; pass[t][c] of n runs pass, the rest are
 * metastable; amp[t] the cost. */
static void synth_make(synth *g, size_t n_tun, size_t n_scen, const int64_t *pass, int64_t n,
                       const double *amp) {
  memset(g, 0, sizeof *g);
  g->axes[0] = "budget_ratio";
  g->axes[1] = "load";
  g->scenario[0] = 0;
  g->scenario[1] = 1;
  g->r.n_axes = 2;
  g->r.axes = g->axes;
  g->r.scenario = g->scenario;
  g->r.n_points = n_tun * n_scen;
  g->r.values = g->values;
  g->r.point_ids = g->ids;
  g->s.points = g->pts;
  g->s.n_points = g->r.n_points;
  g->s.slo_ms = 1500;
  for (size_t t = 0; t < n_tun; t++)
    for (size_t c = 0; c < n_scen; c++) {
      size_t p = t * n_scen + c;
      g->ids[p] = (int64_t)p;
      g->values[p * 2] = 0.05 * (double)(t + 1);
      g->values[p * 2 + 1] = 0.5 + 0.1 * (double)c;
      ana_point_stats *ps = &g->pts[p];
      ps->index = p;
      ps->point = (int64_t)p;
      ps->n = n;
      ps->n_pass = ps->n_recovered = pass[p];
      ps->n_meta = n - pass[p];
      ps->p_pass = (double)pass[p] / (double)n;
      ps->n_bad = ps->n_meta;
      ps->p_meta = ps->p_bad = 1.0 - ps->p_pass;
      ps->pass_exact = ana_clopper_pearson(ps->n_pass, n, ANA_CONF);
      ps->bad_exact = ana_clopper_pearson(ps->n_bad, n, ANA_CONF);
      ps->amp.mean = amp[t];
      ps->gp_during.mean = 1.0;
    }
}

static void test_robust_differs_from_per_scenario(void **state) {
  (void)state;
  /* budget 0.05 (cheapest) passes at load 0.5 only; 0.1 passes at both
   * loads; 0.15 passes at both but costs more. Robust: 0.1. Per scenario:
   * 0.05 at load 0.5, 0.1 at load 0.6. The old rule (cheapest point) said
   * "budget_ratio=0.05 load=0.5". */
  const int64_t pass[6] = {60, 10, 60, 60, 60, 60};
  const double amp[3] = {1.0, 1.2, 1.5};
  synth *g = calloc(1, sizeof *g);
  synth_make(g, 3, 2, pass, 60, amp);
  ana_reco_opts o = {0.1, 0.9};
  ana_reco rec;
  assert_int_equal(ana_recommend(&rec, &g->r, &g->s, &o), 0);
  assert_int_equal(rec.split.n_tun, 3);
  assert_int_equal(rec.split.n_scen, 2);
  assert_int_equal(rec.robust, 1);
  assert_int_equal(rec.robust_runner_up, 2);
  assert_int_equal(rec.robust_qualifying, 2);
  assert_int_equal(rec.scen_best[0], 0);
  assert_int_equal(rec.scen_best[1], 3);
  assert_int_equal(rec.n_qualifying, 5); /* point by point */
  char *text = ana_reco_text(&rec, &g->r, &g->s, &o);
  assert_contains(text, "ROBUST RECOMMENDATION (meets the targets at every scenario value): "
                        "budget_ratio=0.1 — qualifies at all 2 scenario values");
  assert_contains(text, "    load=0.5: budget_ratio=0.05 (point 0:");
  assert_contains(text, "    load=0.6: budget_ratio=0.1 (point 3:");
  assert_contains(text, "Scenario axes (what happens to you): load");
  if (strstr(text, "RECOMMENDED: point 0")) fail();
  free(text);
  ana_reco_free(&rec);

  /* Nothing robust: the closest names where it fails. */
  const int64_t pass2[6] = {60, 10, 60, 30, 10, 10};
  synth_make(g, 3, 2, pass2, 60, amp);
  assert_int_equal(ana_recommend(&rec, &g->r, &g->s, &o), 0);
  assert_int_equal(rec.robust, -1);
  /* 0.05 and 0.1 both qualify at 1 of 2 values; 0.1 misses by less there */
  assert_int_equal(rec.robust_closest, 1);
  assert_int_equal(rec.robust_closest_cells, 1);
  text = ana_reco_text(&rec, &g->r, &g->s, &o);
  assert_contains(text, "NO ROBUST RECOMMENDATION");
  assert_contains(text, "Closest: budget_ratio=0.1 qualifies at 1 of 2 scenario values; not at:");
  assert_contains(text, "load=0.6 (point 3): refuted — 30/60 passed");
  assert_contains(text, "    load=0.6: none qualifies");
  free(text);
  ana_reco_free(&rec);

  /* Without scenario axes the old answer stands. */
  g->scenario[1] = 0;
  synth_make(g, 3, 2, pass, 60, amp);
  g->scenario[1] = 0;
  assert_int_equal(ana_recommend(&rec, &g->r, &g->s, &o), 0);
  assert_int_equal(rec.split.n_tun, 0);
  assert_int_equal(rec.best, 0);
  ana_reco_free(&rec);
  free(g);
}

/* ---- error rates with known truth ---- */

#define TRIALS 2000
#define K_SCEN 5
#define N_RUNS 120
#define MIN_PASS 0.9

static int64_t binomial(eng_rng *r, int64_t n, double p) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) k += eng_rng_uniform(r) < p;
  return k;
}

/* Probability the robust claim (and "some per-scenario claim") is made for
 * a setting whose P(pass) is truth[c] at scenario value c; the targets are
 * P(pass) >= MIN_PASS (P(bad) <= 1, so only P(pass) matters). */
static void recommend_rates(const double *truth, uint64_t seed, double *robust, double *any) {
  eng_rng r;
  eng_rng_seed(&r, seed, 0);
  synth *g = calloc(1, sizeof *g);
  const double amp[1] = {1.0};
  int n_robust = 0, n_any = 0;
  for (int t = 0; t < TRIALS; t++) {
    int64_t pass[K_SCEN];
    for (int c = 0; c < K_SCEN; c++) pass[c] = binomial(&r, N_RUNS, truth[c]);
    synth_make(g, 1, K_SCEN, pass, N_RUNS, amp);
    ana_reco_opts o = {1.0, MIN_PASS};
    ana_reco rec;
    assert_int_equal(ana_recommend(&rec, &g->r, &g->s, &o), 0);
    n_robust += rec.robust == 0;
    int some = 0;
    for (int c = 0; c < K_SCEN; c++) some |= rec.scen_best[c] >= 0 && truth[c] < MIN_PASS + 1e-12;
    n_any += some;
    ana_reco_free(&rec);
  }
  free(g);
  *robust = (double)n_robust / TRIALS;
  *any = (double)n_any / TRIALS;
}

static void test_recommend_robust_error_rate(void **state) {
  (void)state;
  const double margin = 3.0 * sqrt(0.025 * 0.975 / TRIALS);
  /* Worst case for the robust claim: fails (at the boundary) at one value,
   * perfect elsewhere. */
  double one_bad[K_SCEN] = {1, 1, MIN_PASS, 1, 1}, robust, any;
  recommend_rates(one_bad, 21, &robust, &any);
  print_message("bad at 1 of %d values: called robust in %.2f%% of %d trials\n", K_SCEN,
                100 * robust, TRIALS);
  assert_true(robust <= 0.025 + margin);
  /* At the boundary everywhere: the robust claim still errs at most 2.5%
   * (it needs all five), but some per-scenario claim is wrong far more
   * often: the check above can fail for a rule that multiplies claims. */
  double all_bad[K_SCEN] = {MIN_PASS, MIN_PASS, MIN_PASS, MIN_PASS, MIN_PASS};
  recommend_rates(all_bad, 22, &robust, &any);
  print_message("bad at all values: robust %.3f%%, some per-scenario claim wrong %.2f%%\n",
                100 * robust, 100 * any);
  assert_true(robust <= 0.025 + margin);
  double single_rate, dummy;
  double one_only[K_SCEN] = {MIN_PASS, 1, 1, 1, 1};
  recommend_rates(one_only, 23, &dummy, &single_rate);
  assert_true(any > single_rate * 2.5);
  assert_true(any > 0.025 + margin);
}

/* refine with groups: a tunable setting over K_SCEN scenario values, its
 * truth per value; returns the rank-1 group's proof (1) or not (0). */
static int refine_once(const double *truth, eng_rng *r, int groups) {
  ana_seq_design d = {.min_pass = 0.99, .max_meta = 0.01};
  assert_int_equal(ana_seq_design_check(&d, NULL, 0), 0);
  ana_rp_point pts[K_SCEN];
  size_t group[K_SCEN];
  memset(pts, 0, sizeof pts);
  for (int c = 0; c < K_SCEN; c++) {
    pts[c].id = c;
    pts[c].n = 20;
    pts[c].n_pass = 20; /* screening passes: the point reaches confirmation */
    pts[c].amp = 1.0;
    group[c] = 0;
  }
  ana_rp rp;
  assert_int_equal(ana_rp_init_grouped(&rp, pts, K_SCEN, groups ? group : NULL, &d, NULL, 0), 0);
  int64_t batch[K_SCEN];
  int proven = 0;
  for (int round = 0; round < 100000; round++) {
    ana_rp_step st = ana_rp_decide(&rp, ANA_REFINE_K, batch);
    if (st.status == ANA_RP_PROVEN) {
      /* Without groups: a claim about the bad value's point is what errs. */
      proven = groups ? 1 : truth[rp.cand[st.decided].point] < 0.99 + 1e-12;
    }
    if (st.status != ANA_RP_OPEN) break;
    for (size_t i = 0; i < rp.n_cand; i++) {
      ana_seq *s = &rp.cand[i].seq;
      for (int64_t j = 0; j < batch[i] && s->state == ANA_SEQ_OPEN; j++)
        ana_seq_add(s, eng_rng_uniform(r) < truth[rp.cand[i].point], 0);
    }
  }
  ana_rp_free(&rp);
  return proven;
}

static void test_refine_robust_error_rate(void **state) {
  (void)state;
  const int trials = 1000;
  const double alpha = 0.05, margin = 3.0 * sqrt(0.05 * 0.95 / trials);
  /* One value at the boundary 0.99, the rest perfect: the group is proven
   * only if that value's SPRT errs, at alpha_1 = alpha / 2. */
  double truth[K_SCEN] = {1, 1, 0.99, 1, 1};
  eng_rng r;
  eng_rng_seed(&r, 31, 0);
  int wrong = 0;
  for (int t = 0; t < trials; t++) wrong += refine_once(truth, &r, 1);
  print_message("refine, bad at 1 of %d values: robust proven in %.2f%% of %d procedures\n",
                K_SCEN, 100.0 * wrong / trials, trials);
  assert_true((double)wrong / trials <= alpha / 2 + margin);
  /* A group with every value good is proven (power). */
  double good[K_SCEN] = {1, 1, 1, 1, 1};
  int found = 0;
  for (int t = 0; t < 50; t++) found += refine_once(good, &r, 1);
  assert_int_equal(found, 50);
}

static void test_refine_group_ranking(void **state) {
  (void)state;
  /* Two tunables x two scenario values: tunable 0 is cheaper but its
   * screening refutes it at value 1, so the group is no candidate. */
  ana_seq_design d = {.min_pass = 0.99, .max_meta = 0.01};
  assert_int_equal(ana_seq_design_check(&d, NULL, 0), 0);
  ana_rp_point pts[4] = {
      {.id = 0, .n = 20, .n_pass = 20, .amp = 1.0},
      {.id = 1, .n = 20, .n_pass = 10, .n_meta = 10, .amp = 1.0},
      {.id = 2, .n = 20, .n_pass = 20, .amp = 1.1},
      {.id = 3, .n = 20, .n_pass = 20, .amp = 1.3},
  };
  size_t group[4] = {0, 0, 1, 1};
  ana_rp rp;
  assert_int_equal(ana_rp_init_grouped(&rp, pts, 4, group, &d, NULL, 0), 0);
  assert_int_equal(rp.n_groups, 1);
  assert_int_equal(rp.n_cand, 2);
  assert_int_equal(rp.cand[0].point, 2);
  assert_int_equal(rp.cand[1].point, 3);
  assert_int_equal(rp.cand[0].rank, 1);
  assert_int_equal(rp.cand[1].rank, 1);
  assert_true(rp.cand[0].alpha == rp.cand[1].alpha);
  int64_t batch[2];
  ana_rp_step st = ana_rp_decide(&rp, 1, batch);
  assert_int_equal(st.status, ANA_RP_OPEN);
  assert_true(batch[0] > 0 && batch[1] > 0); /* every value of the group gets runs */
  /* One value proven, the other refuted: the group is refuted. */
  while (rp.cand[0].seq.state == ANA_SEQ_OPEN) ana_seq_add(&rp.cand[0].seq, 1, 0);
  while (rp.cand[1].seq.state == ANA_SEQ_OPEN) ana_seq_add(&rp.cand[1].seq, 0, 0);
  st = ana_rp_decide(&rp, 1, batch);
  assert_int_equal(st.status, ANA_RP_NONE);
  ana_rp_free(&rp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_roles),
      cmocka_unit_test(test_sweep_overrides),
      cmocka_unit_test(test_robust_differs_from_per_scenario),
      cmocka_unit_test(test_recommend_robust_error_rate),
      cmocka_unit_test(test_refine_robust_error_rate),
      cmocka_unit_test(test_refine_group_ranking),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
