/*
 * recommend.c — the tuning recommendation of `recommend`: the
 * cheapest grid point that provably meets the targets, with its evidence.
 *
 * Rule. A point qualifies when, with the two-sided 95% Clopper–Pearson
 * (exact) interval — conservative, so a recommendation is never an artefact
 * of an optimistic approximation —
 *     upper bound of P(bad) <= max_meta   (default 0.01), and
 *     lower bound of P(pass SLO)   >= min_pass   (default 0.99).
 *
 * Cost. Qualifying points are ranked by, in order:
 *   1. mean retry amplification (attempts per request over the whole run),
 *      rounded to 0.01 — the extra load the policy puts on the servers;
 *   2. goodput during the fault, mean goodput_during (a share of the
 *      baseline's; above 1 when a surge raised it), highest first, rounded
 *      to 0.01 — what users keep while it lasts;
 *   3. vnodes, when it is an axis (ring memory and lookup cost);
 *   4. the point id (so the ranking is total and reproducible).
 * Rounding makes a negligible difference in amplification (a 0.1% noise
 * wobble) defer to the next criterion instead of deciding alone.
 *
 * A point with any run that collapsed without a fault never qualifies and
 * counts as refuted: the system falls over by itself there, whatever the
 * fault-recovery odds (docs/model.md "Collapse without a fault"). A point with an undetermined run
 * (too little time after clearance to judge it) cannot be proven either.
 *
 * No point qualifying is a normal answer, not an error. The text then says
 * so and splits the rejected points in two: refuted (the whole 95% interval
 * is on the wrong side of a target: the data shows the point fails) and
 * unproven (consistent with the targets, but too few runs to show it). It
 * names the nearest miss — the point with the highest lower bound of
 * P(pass), ties broken by the lowest upper bound of P(bad) and then
 * by cost — and by how much it misses each target, lists the next unproven
 * candidates, and, when the file has too few runs per point for any point to
 * prove the targets (20 runs of 20 passing show at best P(pass) >= 0.832;
 * the default targets need 368), says how many runs per point it would take.
 *
 * These bounds hold for one point fixed in advance, not for the cheapest of
 * many that happened to qualify (the text says so). A file `refine` worked
 * on carries a proof that does hold for the choice (refine_plan.h): then
 * ana_reco_refined_text names the point refine proved, with its SPRT
 * evidence on fresh runs and its alpha_i — recomputed from the runs under
 * the stored design (refine_eval.h), never read from what /refine claims.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "decision.h"
#include "refine.h"
#include "recommend_explain.h"
#include "refine_eval.h"
#include "seqtest.h"
#include "textsafe.h"

typedef ana_cost_key cost_key;

static long axis_find(const fmt_results *r, const char *name) {
  for (size_t a = 0; a < r->n_axes; a++)
    if (!strcmp(r->axes[a], name)) return (long)a;
  return -1;
}

static cost_key cost_of(const fmt_results *r, const ana_point_stats *ps, long vnodes_axis) {
  double vn = vnodes_axis >= 0 ? r->values[ps->index * r->n_axes + (size_t)vnodes_axis] : 0.0;
  return ana_cost_key_make(ps->amp.mean, 1.0 - ps->gp_during.mean, vn, ps->point, ps->index);
}

static int qualifies(const ana_point_stats *ps, const ana_reco_opts *o) {
  return ps->n > 0 && ps->n_coll == 0 && ps->n_undet == 0 && ps->bad_exact.hi <= o->max_meta &&
         ps->pass_exact.lo >= o->min_pass;
}

/* The data contradicts the targets: the whole interval is on the wrong side. */
static int refuted(const ana_point_stats *ps, const ana_reco_opts *o) {
  return ps->n_coll > 0 || ps->bad_exact.lo > o->max_meta || ps->pass_exact.hi < o->min_pass;
}

/* Nearest-miss order: higher lower bound of P(pass), then lower upper bound
 * of P(bad), then cheaper. */
static int closer(const ana_point_stats *a, const cost_key *ka, const ana_point_stats *b,
                  const cost_key *kb) {
  if ((a->n_coll > 0) != (b->n_coll > 0)) return b->n_coll > 0; /* collapsing: never nearest */
  if (a->pass_exact.lo != b->pass_exact.lo) return a->pass_exact.lo > b->pass_exact.lo;
  if (a->bad_exact.hi != b->bad_exact.hi) return a->bad_exact.hi < b->bad_exact.hi;
  return ana_cost_compare(ka, kb) < 0;
}


void ana_reco_free(ana_reco *rec) {
  ana_split_free(&rec->split);
  free(rec->scen_best);
  free(rec->scen_closest);
  rec->scen_best = rec->scen_closest = NULL;
}

/* The scenario cell where tunable combination t is furthest from the
 * targets (lowest lower bound of P(pass), then highest upper bound of
 * P(bad)); -1 when it has no cell with runs. */
static long worst_cell(const ana_split *sp, const ana_summary *s, size_t t) {
  long w = -1;
  for (size_t c = 0; c < sp->n_scen; c++) {
    long p = sp->cell[t * sp->n_scen + c];
    if (p < 0 || s->points[p].n <= 0) continue;
    const ana_point_stats *a = &s->points[p];
    if (w < 0) {
      w = p;
      continue;
    }
    const ana_point_stats *b = &s->points[w];
    if ((a->n_coll > 0) != (b->n_coll > 0) ? a->n_coll > 0
        : a->pass_exact.lo != b->pass_exact.lo ? a->pass_exact.lo < b->pass_exact.lo
                                               : a->bad_exact.hi > b->bad_exact.hi)
      w = p;
  }
  return w;
}

/* Robust and per-scenario answers (docs/decisions.md). A tunable
 * combination qualifies robustly when its point qualifies at every scenario
 * value: an intersection-union test, so its false-proof rate is that of one
 * point's test. Its cost is the worst over the scenario values. */
static int recommend_split(ana_reco *out, const fmt_results *r, const ana_summary *s,
                           const ana_reco_opts *o, long vn) {
  ana_split *sp = &out->split;
  if (ana_split_compute(sp, r)) return -1;
  out->robust = out->robust_runner_up = out->robust_closest = -1;
  if (sp->n_tun == 0) return 0;
  out->scen_best = malloc(sp->n_scen * sizeof *out->scen_best);
  out->scen_closest = malloc(sp->n_scen * sizeof *out->scen_closest);
  cost_key *keys = malloc(sp->n_tun * sizeof *keys);
  size_t *ok_cells = calloc(sp->n_tun, sizeof *ok_cells);
  if (!out->scen_best || !out->scen_closest || !keys || !ok_cells) {
    free(keys);
    free(ok_cells);
    return -1;
  }
  size_t nq = 0;
  for (size_t t = 0; t < sp->n_tun; t++) {
    double amp = -INFINITY, lost = -INFINITY, vnodes = 0;
    int64_t id = INT64_MAX;
    for (size_t c = 0; c < sp->n_scen; c++) {
      long p = sp->cell[t * sp->n_scen + c];
      if (p < 0) continue;
      const ana_point_stats *ps = &s->points[p];
      if (qualifies(ps, o)) ok_cells[t]++;
      cost_key k = cost_of(r, ps, vn);
      amp = fmax(amp, k.amp);
      lost = fmax(lost, k.lost);
      vnodes = k.vnodes;
      if (ps->point < id) id = ps->point;
    }
    if (ok_cells[t] == sp->n_scen)
      keys[nq++] = (cost_key){amp, lost, vnodes, id, t};
  }
  out->robust_qualifying = nq;
  qsort(keys, nq, sizeof *keys, ana_cost_compare);
  if (nq > 0) out->robust = (long)keys[0].index;
  if (nq > 1) out->robust_runner_up = (long)keys[1].index;
  free(keys);
  /* Nearest robust miss: most scenario values qualifying, then the best
   * worst cell. */
  for (size_t t = 0; t < sp->n_tun && out->robust < 0; t++) {
    long w = worst_cell(sp, s, t);
    if (w < 0) continue;
    if (out->robust_closest < 0 || ok_cells[t] > ok_cells[out->robust_closest] ||
        (ok_cells[t] == ok_cells[out->robust_closest] &&
         s->points[w].pass_exact.lo >
             s->points[worst_cell(sp, s, (size_t)out->robust_closest)].pass_exact.lo))
      out->robust_closest = (long)t;
  }
  if (out->robust_closest >= 0) out->robust_closest_cells = ok_cells[out->robust_closest];
  free(ok_cells);
  /* Per scenario value: the cheapest qualifying point, else the nearest. */
  for (size_t c = 0; c < sp->n_scen; c++) {
    long best = -1, near = -1;
    cost_key kb = {0}, kn = {0};
    for (size_t t = 0; t < sp->n_tun; t++) {
      long p = sp->cell[t * sp->n_scen + c];
      if (p < 0 || s->points[p].n <= 0) continue;
      cost_key k = cost_of(r, &s->points[p], vn);
      if (qualifies(&s->points[p], o) && (best < 0 || ana_cost_compare(&k, &kb) < 0)) {
        best = p;
        kb = k;
      }
      if (near < 0 || closer(&s->points[p], &k, &s->points[near], &kn)) {
        near = p;
        kn = k;
      }
    }
    out->scen_best[c] = best;
    out->scen_closest[c] = near;
  }
  /* The point-level fields name the robust choice's worst cell, so report
   * draws its curves. */
  if (out->robust >= 0) {
    out->best = worst_cell(sp, s, (size_t)out->robust);
    out->runner_up =
        out->robust_runner_up >= 0 ? worst_cell(sp, s, (size_t)out->robust_runner_up) : -1;
    out->closest = -1;
  } else {
    out->best = out->runner_up = -1;
    if (out->robust_closest >= 0) out->closest = worst_cell(sp, s, (size_t)out->robust_closest);
  }
  return 0;
}

static int recommend_points(ana_reco *out, const fmt_results *r, const ana_summary *s,
                            const ana_reco_opts *o) {
  out->best = out->runner_up = out->closest = -1;
  out->min_runs = -1;
  long vn = axis_find(r, "vnodes");
  cost_key *keys = malloc((s->n_points ? s->n_points : 1) * sizeof *keys);
  if (!keys) return -1;
  size_t nq = 0;
  for (size_t p = 0; p < s->n_points; p++) {
    const ana_point_stats *ps = &s->points[p];
    if (ps->n <= 0) continue;
    if (out->min_runs < 0 || ps->n < out->min_runs) out->min_runs = ps->n;
    if (ps->n > out->max_runs) out->max_runs = ps->n;
    if (!(ps->bad_exact.hi <= o->max_meta)) out->n_reject_meta++;
    if (!(ps->pass_exact.lo >= o->min_pass)) out->n_reject_pass++;
    if (ps->n_coll > 0) out->n_collapsed_points++;
    if (qualifies(ps, o))
      keys[nq++] = cost_of(r, ps, vn);
    else if (refuted(ps, o))
      out->n_refuted++;
    else
      out->n_unproven++;
  }
  out->n_qualifying = nq;
  out->runs_needed = ana_runs_needed(o->max_meta, o->min_pass, ANA_CONF);
  if (nq > 0) {
    qsort(keys, nq, sizeof *keys, ana_cost_compare);
    out->best = (long)keys[0].index;
    if (nq > 1) out->runner_up = (long)keys[1].index;
    free(keys);
    return 0;
  }
  free(keys);

  /* Nearest miss over all points; candidates = the nearest unproven ones
   * (kept sorted by insertion, at most ANA_RECO_CANDIDATES). */
  cost_key best_cost = {0};
  cost_key cand_cost[ANA_RECO_CANDIDATES];
  for (size_t p = 0; p < s->n_points; p++) {
    const ana_point_stats *ps = &s->points[p];
    if (ps->n <= 0) continue;
    cost_key k = cost_of(r, ps, vn);
    if (out->closest < 0 || closer(ps, &k, &s->points[out->closest], &best_cost)) {
      out->closest = (long)p;
      best_cost = k;
    }
    if (refuted(ps, o)) continue;
    size_t at = out->n_candidates;
    while (at > 0 && closer(ps, &k, &s->points[out->candidates[at - 1]], &cand_cost[at - 1])) at--;
    if (at >= ANA_RECO_CANDIDATES) continue;
    size_t last = out->n_candidates < ANA_RECO_CANDIDATES ? out->n_candidates
                                                           : ANA_RECO_CANDIDATES - 1;
    for (size_t j = last; j > at; j--) {
      out->candidates[j] = out->candidates[j - 1];
      cand_cost[j] = cand_cost[j - 1];
    }
    out->candidates[at] = (long)p;
    cand_cost[at] = k;
    if (out->n_candidates < ANA_RECO_CANDIDATES) out->n_candidates++;
  }
  if (out->closest >= 0) {
    const ana_point_stats *b = &s->points[out->closest];
    out->miss_pass = fmax(0.0, o->min_pass - b->pass_exact.lo);
    out->miss_meta = fmax(0.0, b->bad_exact.hi - o->max_meta);
  }
  return 0;
}

int ana_recommend(ana_reco *out, const fmt_results *r, const ana_summary *s,
                  const ana_reco_opts *o) {
  memset(out, 0, sizeof *out);
  out->robust = out->robust_runner_up = out->robust_closest = -1;
  if (recommend_points(out, r, s, o)) return -1;
  if (recommend_split(out, r, s, o, axis_find(r, "vnodes"))) {
    ana_reco_free(out);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

/* proven: the point's proof (an SPRT) was printed above; the intervals
 * here are evidence beside it, and say so. */
static void evidence_print(FILE *f, const fmt_results *r, const ana_point_stats *ps,
                           double slo_ms, int proven) {
  char where[1024], q50[32], q90[32], q99[32];
  ana_point_describe(r, ps->index, where, sizeof where);
  ana_ms_format(ps->rec_p50, ps->censor_ms, q50, sizeof q50);
  ana_ms_format(ps->rec_p90, ps->censor_ms, q90, sizeof q90);
  ana_ms_format(ps->rec_p99, ps->censor_ms, q99, sizeof q99);
  fprintf(f, "point %lld: %s\n", (long long)ps->point, where);
  fprintf(f,
          "    evidence: %lld runs: %lld recovered, %lld slow, %lld metastable, %lld collapsed "
          "without a fault; %lld passed the %.0f ms SLO\n",
          (long long)ps->n, (long long)ps->n_recovered, (long long)ps->n_slow,
          (long long)ps->n_meta, (long long)ps->n_coll, (long long)ps->n_pass, slo_ms);
  if (ps->n_undet)
    fprintf(f, "              %lld run(s) undetermined: too little time after clearance\n",
            (long long)ps->n_undet);
  fprintf(f, "              P(bad) %.3f [%.4f, %.4f]; P(pass) %.3f [%.4f, %.4f] (exact two-sided "
          "95%% intervals%s)\n",
          ps->p_bad, ps->bad_exact.lo, ps->bad_exact.hi, ps->p_pass, ps->pass_exact.lo,
          ps->pass_exact.hi, proven ? "; evidence beside the SPRT above, which is the proof" : "");
  fprintf(f, "              recovery after clearance: p50 %s ms, p90 %s ms, p99 %s ms\n", q50,
          q90, q99);
  fprintf(f,
          "    cost: retry amplification %.3f; goodput during the fault %.3f of baseline; "
          "goodput after clearance %.3f of baseline\n",
          ps->amp.mean, ps->gp_during.mean, ps->gp_after.mean);
}

/* One scenario cell in a line: "18/20 passed, 1 slow, 1 metastable". */
static void cell_brief(FILE *f, const ana_point_stats *ps) {
  fprintf(f, "%lld/%lld passed; %lld recovered, %lld slow, %lld metastable", (long long)ps->n_pass,
          (long long)ps->n, (long long)ps->n_recovered, (long long)ps->n_slow,
          (long long)ps->n_meta);
  if (ps->n_coll) fprintf(f, ", %lld collapsed", (long long)ps->n_coll);
  if (ps->n_undet) fprintf(f, ", %lld undetermined", (long long)ps->n_undet);
}

static void axes_of_role(FILE *f, const fmt_results *r, int scenario) {
  int any = 0;
  for (size_t a = 0; a < r->n_axes; a++) {
    if (fmt_axis_is_scenario(r, a) != scenario) continue;
    char name[256];
    ana_term_text(name, sizeof name, r->axes[a]);
    fprintf(f, "%s%s", any ? ", " : "", name);
    any = 1;
  }
  if (!any) fprintf(f, "none");
}

static void robust_print(FILE *f, const char *title, const ana_reco *rec, const fmt_results *r,
                         const ana_summary *s, size_t t) {
  const ana_split *sp = &rec->split;
  long w = worst_cell(sp, s, t);
  char tun[1024], scen[1024];
  ana_point_describe_role(r, (size_t)sp->cell[t * sp->n_scen], 0, tun, sizeof tun);
  double amp = 0, lost = 0;
  for (size_t c = 0; c < sp->n_scen; c++) {
    long p = sp->cell[t * sp->n_scen + c];
    if (p < 0) continue;
    amp = fmax(amp, s->points[p].amp.mean);
    lost = fmax(lost, 1.0 - s->points[p].gp_during.mean);
  }
  fprintf(f, "%s%s — qualifies at all %zu scenario values\n", title, tun, sp->n_scen);
  fprintf(f, "    cost (worst over the scenario values): retry amplification %.3f; goodput "
             "during the fault %.3f of baseline\n", amp, 1.0 - lost);
  if (w >= 0) {
    ana_point_describe_role(r, (size_t)w, 1, scen, sizeof scen);
    fprintf(f, "    hardest scenario value %s: ", scen);
    evidence_print(f, r, &s->points[w], s->slo_ms, 0);
  }
}

static void split_text(FILE *f, const ana_reco *rec, const fmt_results *r, const ana_summary *s,
                       const ana_reco_opts *o) {
  const ana_split *sp = &rec->split;
  fprintf(f, "Tunable axes (what you choose): ");
  axes_of_role(f, r, 0);
  fprintf(f, ". Scenario axes (what happens to you): ");
  axes_of_role(f, r, 1);
  fprintf(f, " — %zu scenario value%s. Override with scenario_axes / tunable_axes in [sweep].\n",
          sp->n_scen, sp->n_scen == 1 ? "" : "s");
  if (rec->robust >= 0) {
    robust_print(f, "ROBUST RECOMMENDATION (meets the targets at every scenario value): ", rec, r,
                 s, (size_t)rec->robust);
    if (rec->robust_runner_up >= 0)
      robust_print(f, "Robust runner-up: ", rec, r, s, (size_t)rec->robust_runner_up);
    fprintf(f, "%zu of %zu tunable settings qualify at every scenario value.\n",
            rec->robust_qualifying, sp->n_tun);
  } else {
    fprintf(f, "NO ROBUST RECOMMENDATION: none of the %zu tunable settings meets the targets at "
               "every one of the %zu scenario values.\n", sp->n_tun, sp->n_scen);
    if (rec->robust_closest >= 0) {
      size_t t = (size_t)rec->robust_closest;
      char tun[1024];
      ana_point_describe_role(r, (size_t)sp->cell[t * sp->n_scen], 0, tun, sizeof tun);
      fprintf(f, "Closest: %s qualifies at %zu of %zu scenario values; not at:\n", tun,
              rec->robust_closest_cells, sp->n_scen);
      int shown = 0;
      for (size_t c = 0; c < sp->n_scen; c++) {
        long p = sp->cell[t * sp->n_scen + c];
        if (p < 0 || qualifies(&s->points[p], o)) continue;
        if (shown++ == 8) {
          fprintf(f, "    ...\n");
          break;
        }
        char scen[1024];
        ana_point_describe_role(r, (size_t)p, 1, scen, sizeof scen);
        fprintf(f, "    %s (point %lld): %s — ", scen, (long long)s->points[p].point,
                refuted(&s->points[p], o) ? "refuted" : "not proven");
        cell_brief(f, &s->points[p]);
        fprintf(f, "\n");
      }
    }
  }
  if (rec->robust < 0 && rec->max_runs > 0 && rec->runs_needed > rec->max_runs)
    fprintf(f, "With %lld runs per point no point can qualify: the targets need at least %lld "
               "runs per point (rerun with replicates = %lld, or 'stormsweep refine').\n",
            (long long)rec->max_runs, (long long)rec->runs_needed, (long long)rec->runs_needed);
  fprintf(f, "Per scenario value (the cheapest tunable setting that qualifies there):\n");
  for (size_t c = 0; c < sp->n_scen; c++) {
    long any = -1;
    for (size_t t = 0; t < sp->n_tun && any < 0; t++) any = sp->cell[t * sp->n_scen + c];
    if (any < 0) continue;
    char scen[1024], tun[1024];
    ana_point_describe_role(r, (size_t)any, 1, scen, sizeof scen);
    long b = rec->scen_best[c], n = rec->scen_closest[c];
    if (b >= 0) {
      ana_point_describe_role(r, (size_t)b, 0, tun, sizeof tun);
      fprintf(f, "    %s: %s (point %lld: ", scen, tun, (long long)s->points[b].point);
      cell_brief(f, &s->points[b]);
      fprintf(f, "; amplification %.3f)\n", s->points[b].amp.mean);
    } else if (n >= 0) {
      ana_point_describe_role(r, (size_t)n, 0, tun, sizeof tun);
      fprintf(f, "    %s: none qualifies (closest %s, point %lld: ", scen, tun,
              (long long)s->points[n].point);
      cell_brief(f, &s->points[n]);
      fprintf(f, ")\n");
    } else {
      fprintf(f, "    %s: no finished runs\n", scen);
    }
  }
  fprintf(f,
          "Error rates: each scenario value is judged by exact bounds (at most 2.5%% chance per "
          "target of calling a setting fixed in advance good when it is not). The robust answer "
          "needs every scenario value to qualify (an intersection-union test), so a setting that "
          "fails at even one value is called robust with at most that same chance, not %zu "
          "times it. The per-scenario lines are %zu separate claims: the chance that at least "
          "one is wrong can reach %zu times it. Not corrected for picking the cheapest of %zu "
          "settings: 'stormsweep refine' proves the robust choice on fresh runs.\n",
          sp->n_scen, sp->n_scen, sp->n_scen, sp->n_tun);
}

/* The answer judged from the runs, into f; headline names the chosen point. */
static void reco_text_to(FILE *f, const ana_reco *rec, const fmt_results *r,
                         const ana_summary *s, const ana_reco_opts *o, const char *headline) {
  size_t judged = rec->n_qualifying + rec->n_refuted + rec->n_unproven;
  fprintf(f,
          "Targets: P(bad) upper 95%% bound <= %g and P(pass %.0f ms SLO) lower 95%% bound "
          ">= %g (two-sided Clopper-Pearson exact bounds).\n",
          o->max_meta, s->slo_ms, o->min_pass);
  ana_user_slo_note(f, r, s->slo_ms);
  if (rec->split.n_tun > 0) {
    split_text(f, rec, r, s, o);
  } else if (rec->best >= 0) {
    fputs(headline, f);
    evidence_print(f, r, &s->points[rec->best], s->slo_ms, 0);
    if (rec->runner_up >= 0) {
      fprintf(f, "Runner-up: ");
      evidence_print(f, r, &s->points[rec->runner_up], s->slo_ms, 0);
    } else {
      fprintf(f, "Runner-up: none (no other point qualifies).\n");
    }
    fprintf(f,
            "%zu of %zu %s qualify (cheapest first: retry amplification, then the most goodput "
            "during the fault, then vnodes). Rejected: %zu refuted by the data (95%% interval "
            "wholly outside a target), %zu not proven with the runs available.\n",
            rec->n_qualifying, judged, judged == 1 ? "point" : "points", rec->n_refuted,
            rec->n_unproven);
    if (rec->n_collapsed_points)
      fprintf(f,
              "%zu %s collapsed without any fault in some run and never qualify (counted as "
              "refuted).\n",
              rec->n_collapsed_points, rec->n_collapsed_points == 1 ? "point" : "points");
    if (judged > 1)
      fprintf(f, "Note: these 95%% bounds hold for one point chosen in advance; they are not "
                 "corrected for picking the cheapest of %zu points. 'stormsweep refine' proves "
                 "a choice on fresh runs.\n",
              judged);
  } else if (judged == 0) {
    fprintf(f, "NO POINT QUALIFIES: the file has no finished runs to judge.\n");
  } else {
    fprintf(f,
            "NO POINT QUALIFIES: none of the %zu %s meets both targets. Rejected by the data "
            "(95%% interval wholly above %g for P(bad) or below %g for P(pass)): %zu; "
            "consistent with the targets but not proven: %zu.\n",
            judged, judged == 1 ? "point" : "points", o->max_meta, o->min_pass, rec->n_refuted,
            rec->n_unproven);
    if (rec->max_runs > 0 && rec->runs_needed > rec->max_runs) {
      ana_interval best_pass = ana_clopper_pearson(rec->max_runs, rec->max_runs, ANA_CONF);
      ana_interval best_meta = ana_clopper_pearson(0, rec->max_runs, ANA_CONF);
      fprintf(f,
              "With %lld runs per point no point can qualify: even %lld passing runs of %lld "
              "give a lower bound of only %.4f for P(pass) (and 0 bad of %lld an upper "
              "bound of %.4f). It needs at least %lld runs per point to show P(pass) >= %g and "
              "P(bad) <= %g at 95%%: rerun the sweep%s with replicates = %lld.\n",
              (long long)rec->max_runs, (long long)rec->max_runs, (long long)rec->max_runs,
              best_pass.lo, (long long)rec->max_runs, best_meta.hi, (long long)rec->runs_needed,
              o->min_pass, o->max_meta,
              rec->n_candidates > 0 ? " (or only the candidate points named below)" : "",
              (long long)rec->runs_needed);
    }
    if (rec->n_collapsed_points)
      fprintf(f,
              "%zu %s collapsed without any fault in some run: a point with any collapsed run "
              "never qualifies (counted as refuted).\n",
              rec->n_collapsed_points, rec->n_collapsed_points == 1 ? "point" : "points");
    const ana_point_stats *c = &s->points[rec->closest];
    fprintf(f, "Closest (not proven to meet the targets): ");
    evidence_print(f, r, c, s->slo_ms, 0);
    fprintf(f, "    how it misses: P(pass) lower bound %.4f", c->pass_exact.lo);
    if (rec->miss_pass > 0)
      fprintf(f, " < %g (short by %.4f)", o->min_pass, rec->miss_pass);
    else
      fprintf(f, " >= %g (met)", o->min_pass);
    fprintf(f, "; P(bad) upper bound %.4f", c->bad_exact.hi);
    if (rec->miss_meta > 0)
      fprintf(f, " > %g (over by %.4f).\n", o->max_meta, rec->miss_meta);
    else
      fprintf(f, " <= %g (met).\n", o->max_meta);
    int header = 0;
    for (size_t i = 0; i < rec->n_candidates; i++) {
      if (rec->candidates[i] == rec->closest) continue;
      const ana_point_stats *ps = &s->points[rec->candidates[i]];
      char where[1024];
      ana_point_describe(r, ps->index, where, sizeof where);
      if (!header) fprintf(f, "Next candidates (consistent with the targets, not proven):\n");
      header = 1;
      fprintf(f, "    point %lld: %s (%lld/%lld passed, %lld metastable, amplification %.3f)\n",
              (long long)ps->point, where, (long long)ps->n_pass, (long long)ps->n,
              (long long)ps->n_meta, ps->amp.mean);
    }
  }
}

char *ana_reco_text(const ana_reco *rec, const fmt_results *r, const ana_summary *s,
                    const ana_reco_opts *o) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  reco_text_to(f, rec, r, s, o, "RECOMMENDED: ");
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* ------------------------------------------------------------------------ */
/* The proof of a refined file                                               */
/* ------------------------------------------------------------------------ */

static long stats_of(const ana_summary *s, int64_t id) {
  for (size_t p = 0; p < s->n_points; p++)
    if (s->points[p].point == id) return (long)p;
  return -1;
}

static void where_of(const fmt_results *r, int64_t id, char *where, size_t len) {
  long li = fmt_results_point_index(r, id);
  where[0] = '\0';
  if (li >= 0) ana_point_describe(r, (size_t)li, where, len);
}

/* The proven candidate group starting at x's decision. */
static void refined_proven(FILE *f, const ana_refined *v, const fmt_results *r,
                           const ana_summary *s) {
  const ana_rf_eval *x = &v->now;
  const fmt_refine_design *d = &v->design;
  const ana_rp_cand *c = &x->rp.cand[x->st.decided];
  int64_t id = x->pts[c->point].id;
  char where[1024], bad[256], used[96], counts[160];
  ana_refine_counts n = ana_refine_counts_of(x, r);
  where_of(r, id, where, sizeof where);
  ana_rf_tally_describe(&x->fresh[c->point], bad, sizeof bad);
  ana_tested_runs_text(r, c->point, c->seq.n, used, sizeof used);
  char proof[320];
  ana_seq_verdict(&c->seq, proof, sizeof proof);
  fprintf(f,
          "RECOMMENDED (proven): point %lld: %s — proven on %s (%s): %s, at alpha_%d = %.3g "
          "(rank %d of %zu candidates; family alpha = %g)\n",
          (long long)id, where, used, bad, proof, c->rank, c->alpha, c->rank, n.candidates,
          d->alpha);
  fprintf(f,
          "    cost (screening runs): retry amplification %.3f; goodput during the fault "
          "%.3f of baseline\n",
          x->pts[c->point].amp, 1.0 - x->pts[c->point].lost);
  /* A robust candidate: its other scenario values share its rank, each
   * proven by its own SPRT at the same alpha_i (docs/decisions.md). */
  for (size_t i = 0; i < x->rp.n_cand; i++) {
    const ana_rp_cand *o2 = &x->rp.cand[i];
    if (o2->rank != c->rank || o2 == c) continue;
    char w2[1024];
    where_of(r, x->pts[o2->point].id, w2, sizeof w2);
    ana_rf_tally_describe(&x->fresh[o2->point], bad, sizeof bad);
    ana_tested_runs_text(r, o2->point, o2->seq.n, used, sizeof used);
    ana_seq_verdict(&o2->seq, proof, sizeof proof);
    fprintf(f, "    and at point %lld: %s — %s on %s (%s): %s\n",
            (long long)x->pts[o2->point].id, w2,
            o2->seq.state == ANA_SEQ_PROVEN ? "proven" : "NOT proven", used, bad, proof);
  }
  long sp = stats_of(s, id);
  if (sp >= 0) {
    fprintf(f, "    all its runs (screening + fresh): ");
    evidence_print(f, r, &s->points[sp], s->slo_ms, 1);
  }
  ana_refine_counts_text(&n, counts, sizeof counts);
  char upto[96] = ""; /* sequential screening: more where the first ones left a point open */
  if (x->screen_next)
    snprintf(upto, sizeof upto, ", up to %lld for %zu points", (long long)x->r_fresh,
             x->screen_open);
  fprintf(f,
          "Refine: %s (screening: %lld replicates each%s), %lld fresh runs in %zu round(s); %s "
          "(%zu refuted in all).\n",
          counts, (long long)n.screening, upto, (long long)n.fresh, n.rounds,
          c->rank == 1 ? "it is the cheapest candidate" : "every cheaper candidate was refuted",
          x->st.n_refuted);
}

/* Still open: stopped at its run budget, or interrupted (then the file
 * holds rows refine appended but did not evaluate). */
static void refined_open(FILE *f, const ana_refined *v, const fmt_results *r) {
  const ana_rf_eval *x = &v->now;
  if (v->interrupted) {
    fprintf(f, "UNDECIDED: refine was interrupted before it decided (%lld fresh runs appended",
            (long long)x->appended);
    if (v->pending) fprintf(f, ", %lld of them not run yet", (long long)v->pending);
    fprintf(f, "); continue with 'stormsweep refine %s' (it keeps the file's design and runs "
               "what is pending first). Open candidates, cheapest first:\n", r->path);
  } else {
    fprintf(f, "UNDECIDED: refine stopped at its run budget (%lld fresh runs); continue with "
               "'stormsweep refine %s --max-runs N'. Open candidates, cheapest first:\n",
            (long long)x->appended, r->path);
  }
  int shown = 0;
  for (size_t i = 0; i < x->rp.n_cand && shown < 5; i++) {
    const ana_rp_cand *c = &x->rp.cand[i];
    if (c->seq.state != ANA_SEQ_OPEN) continue;
    char where[1024], bad[256], used[96];
    where_of(r, x->pts[c->point].id, where, sizeof where);
    ana_rf_tally_describe(&x->fresh[c->point], bad, sizeof bad);
    ana_tested_runs_text(r, c->point, c->seq.n, used, sizeof used);
    fprintf(f, "    rank %d: point %lld: %s (%s, %s)\n", c->rank,
            (long long)x->pts[c->point].id, where, used, bad);
    shown++;
  }
}

static void refined_text_to(FILE *f, const ana_refined *v, const fmt_results *r,
                            const ana_summary *s) {
  const ana_rf_eval *x = &v->now;
  const fmt_refine_design *d = &v->design;
  /* The SLO refine's runs were judged under: the sweep's own. */
  double slo = !isnan(d->slo_ms) ? d->slo_ms : !isnan(r->slo_ms) ? r->slo_ms : s->slo_ms;
  char terms[256];
  ana_slo_format(&v->user_slo, terms, sizeof terms);
  fprintf(f,
          "Targets (refine's design): P(pass %.0f ms SLO%s%s) >= %g and P(bad) <= %g, each "
          "proven by a Wald SPRT (bad rate q0 at the target vs q0/%g, beta %g) on fresh runs; "
          "the candidate of cost rank i is tested at alpha_i = alpha/2^i, so the claim's "
          "family-wise error is <= alpha = %g.\n",
          slo, v->user_slo.n ? " on " : "", terms, d->min_pass, d->max_meta, d->ratio, d->beta,
          d->alpha);
  if (v->user_slo.n) ana_user_slo_note(f, r, slo);
  if (x->st.status == ANA_RP_PROVEN) {
    refined_proven(f, v, r, s);
  } else if (x->st.status == ANA_RP_NONE && x->rp.n_cand == 0) {
    fprintf(f, "NO POINT QUALIFIES (refined): no point's %lld screening runs are consistent with "
               "the targets (exact 95%% bounds), so refine had nothing to confirm.\n",
            (long long)x->r0);
  } else if (x->st.status == ANA_RP_NONE) {
    fprintf(f, "NO POINT QUALIFIES (refined): all %zu candidates were refuted by their fresh runs "
               "(%lld runs in %zu rounds).\n",
            ana_refine_counts_of(x, r).candidates, (long long)x->appended, r->n_rounds);
    if (x->st.closest >= 0) {
      const ana_rp_cand *cl = &x->rp.cand[x->st.closest];
      char where[1024], bad[256], used[96];
      where_of(r, x->pts[cl->point].id, where, sizeof where);
      ana_rf_tally_describe(&x->fresh[cl->point], bad, sizeof bad);
      ana_tested_runs_text(r, cl->point, cl->seq.n, used, sizeof used);
      fprintf(f, "Closest: point %lld: %s — %s: %s.\n",
              (long long)x->pts[cl->point].id, where, used, bad);
    }
  } else {
    refined_open(f, v, r);
  }
}

char *ana_reco_refined_text(const ana_refined *v, const fmt_results *r, const ana_summary *s) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  refined_text_to(f, v, r, s);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* ------------------------------------------------------------------------ */
/* The answer: a proof only for the targets it tested                        */
/* ------------------------------------------------------------------------ */

/* Which targets asked are stricter than those refine's design proved, as
 * "--min-pass 0.999 > 0.99; ..." (empty: the design covers them all). A
 * proof of P(pass within T) >= p and P(bad) <= m implies the same
 * for any SLO >= T, any target <= p and any bound >= m, and nothing else. */
static void stricter_than_design(const ana_refined *v, const fmt_results *r,
                                 const ana_summary *s, const ana_reco_opts *o,
                                 const ana_answer_opts *ao, char *buf, size_t len) {
  const fmt_refine_design *d = &v->design;
  size_t used = 0;
  buf[0] = '\0';
#define ADD(...)                                                                 \
  do {                                                                           \
    int w_ = snprintf(buf + used, len - used, "%s", used ? "; " : "");           \
    if (w_ > 0 && (size_t)w_ < len - used) used += (size_t)w_;                   \
    w_ = snprintf(buf + used, len - used, __VA_ARGS__);                          \
    if (w_ > 0 && (size_t)w_ < len - used) used += (size_t)w_;                   \
  } while (0)
  if (o->min_pass > d->min_pass) ADD("--min-pass %g > %g", o->min_pass, d->min_pass);
  if (o->max_meta < d->max_meta) ADD("--max-metastable %g < %g", o->max_meta, d->max_meta);
  if (isnan(d->slo_ms) ? ao->given_slo : s->slo_ms < d->slo_ms) {
    if (isnan(d->slo_ms))
      ADD("--slo-ms %.0f, and the file does not say which SLO refine judged by", s->slo_ms);
    else
      ADD("--slo-ms %.0f < %.0f", s->slo_ms, d->slo_ms);
  }
  /* Terms on what users see are a different question, not a stricter or
   * looser one: a proof holds for the terms it judged by only. */
  if (!ana_slo_same(&r->user_slo, &v->user_slo)) {
    char terms[256], was[256];
    ana_slo_format(&r->user_slo, terms, sizeof terms);
    ana_slo_format(&v->user_slo, was, sizeof was);
    if (!r->user_slo.n)
      ADD("the queue-recovery check, and refine judged its runs by --slo %s", was);
    else if (!v->user_slo.n)
      ADD("--slo %s, and refine judged its runs by the queue-recovery check", terms);
    else
      ADD("--slo %s, and refine judged its runs by --slo %s", terms, was);
  }
#undef ADD
}

/* The command that would prove the targets asked. */
static void prove_hint(FILE *f, const fmt_refine_design *d, const fmt_results *r,
                       const ana_summary *s, const ana_reco_opts *o) {
  fprintf(f, "To prove these targets, run refine with them on a fresh copy of the sweep (a "
             "refined file keeps the design it was refined with): 'stormsweep refine COPY.h5 "
             "--min-pass %g --max-metastable %g", o->min_pass, o->max_meta);
  if (r->user_slo.n) {
    char terms[256];
    ana_slo_format(&r->user_slo, terms, sizeof terms);
    fprintf(f, " --slo \"%s\"", terms);
  }
  fprintf(f, "'");
  if (!isnan(d->slo_ms) && s->slo_ms != d->slo_ms)
    fprintf(f, ", with slo_ms = %.0f in the sweep (refine judges each run by the sweep's SLO)",
            s->slo_ms);
  fprintf(f, ".\n");
}

char *ana_reco_answer(const ana_reco *rec, const fmt_results *r, const ana_summary *s,
                      const ana_reco_opts *o, const ana_answer_opts *ao, const ana_refined *v,
                      long *chosen) {
  static const ana_answer_opts none = {0, NULL, 0};
  if (!ao) ao = &none;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  long base = rec->split.n_tun > 0 ? -1 : rec->best;
  int proven = 0;
  if (v) {
    const fmt_refine_design *d = &v->design;
    char stricter[512], design_terms[256];
    stricter_than_design(v, r, s, o, ao, stricter, sizeof stricter);
    ana_slo_format(&v->user_slo, design_terms, sizeof design_terms);
    if (!stricter[0]) {
      refined_text_to(f, v, r, s);
      if (o->min_pass != d->min_pass || o->max_meta != d->max_meta ||
          (!isnan(d->slo_ms) && s->slo_ms != d->slo_ms))
        fprintf(f, "The targets asked (P(pass %.0f ms SLO) >= %g, P(bad) <= %g) are no "
                   "stricter than the design's: what it proved covers them.\n",
                s->slo_ms, o->min_pass, o->max_meta);
      const ana_rf_eval *x = &v->now;
      if (x->st.status == ANA_RP_PROVEN) {
        int64_t id = x->pts[x->rp.cand[x->st.decided].point].id;
        long sp = stats_of(s, id);
        base = rec->split.n_tun > 0 ? -1 : sp;
        proven = sp >= 0;
      } else {
        base = -1;
      }
    } else {
      fprintf(f,
              "NOT PROVEN FOR THESE TARGETS: refine tested P(pass %.0f ms SLO%s%s) >= %g and "
              "P(bad) <= %g on this file; the targets asked are stricter or other (%s). Its "
              "verdict says nothing about them, so they are judged again from all %zu runs "
              "(exact bounds, not corrected for the choice):\n",
              d->slo_ms, v->user_slo.n ? " on " : "", design_terms, d->min_pass, d->max_meta,
              stricter, r->n_runs);
      reco_text_to(f, rec, r, s, o,
                   "MEETS THE TARGETS ON THE EVIDENCE, NOT PROVEN (run refine with these "
                   "targets): ");
      prove_hint(f, d, r, s, o);
    }
  } else {
    reco_text_to(f, rec, r, s, o, "RECOMMENDED: ");
  }
  long c = ana_reco_explain(f, rec, r, s, o, ao, base, proven);
  if (chosen) *chosen = c;
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}
