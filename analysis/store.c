/*
 * store.c — `analyze --write`: stores what analyze computed in the result
 * file under /analysis, replacing an earlier /analysis.
 *
 * Layout written (all tables are 1-D compound datasets, h5py-friendly):
 *
 *   /analysis                group; attributes
 *       slo_ms               float64, the SLO the pass rule used
 *       confidence           0.95
 *       interval_methods     "wilson: Wilson score; exact: Clopper-Pearson"
 *       recovery_quantiles   how p50/p90/p99 were estimated (Kaplan-Meier,
 *                            censored at horizon - clearance; inf = not
 *                            reached)
 *       effects_method       how effects were computed
 *       recommendation       the text of `recommend` with default targets
 *       tool_version         version of the stormsweep that wrote it
 *   /analysis/points         one row per grid point, in /points order:
 *       point, runs, recovered, slow, metastable, passed (int64);
 *       p_metastable, p_metastable_{wilson,exact}_{lo,hi}, p_pass,
 *       p_pass_{wilson,exact}_{lo,hi}, censor_ms, recovery_p{50,90,99}_ms,
 *       amplification_{mean,lo,hi}, goodput_during_{mean,lo,hi},
 *       goodput_after_{mean,lo,hi}, peak_queue_mean (float64), ..., bad (int64:
 *       runs metastable, collapsed or undetermined), p_bad,
 *       p_bad_{wilson,exact}_{lo,hi} (what the targets bound; p_metastable
 *       is the metastable runs alone); then one
 *       float64 column per grid axis, named by its key, with the point's
 *       value as /points has it (no join needed)
 *   /analysis/effects        one row per (axis, value): axis, value (string
 *       as the sweep wrote it), rank (1 = largest effect), runs, metastable,
 *       passed, bad, p_bad(_lo,_hi), p_pass(_lo,_hi), effect_bad (on P(bad)),
 *       effect_pass
 *   /analysis/recovery_histogram  int64 (points x ANA_HISTOGRAM_BINS) counts
 *       of recovered runs; attributes lo_ms = 0 and bin_ms
 *
 * The file is opened read-write only here, and only after the same checks
 * as reading (a wrong file is never modified). Deleting the old group frees
 * its space only after h5repack; that is the HDF5 way and harmless.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "fmt_store.h"
#include "textsafe.h"

enum { NAME_LEN = 64 };

typedef struct point_row {
  long long point, runs, recovered, slow, metastable, passed;
  double p_meta, meta_w_lo, meta_w_hi, meta_e_lo, meta_e_hi;
  double p_pass, pass_w_lo, pass_w_hi, pass_e_lo, pass_e_hi;
  double censor_ms, p50, p90, p99;
  double amp, amp_lo, amp_hi, gd, gd_lo, gd_hi, ga, ga_lo, ga_hi, peak;
  long long collapsed, undetermined;
  double p_coll, coll_lo, coll_hi, coll_p50, coll_mean, coll_mean_lo, coll_mean_hi;
  long long bad;
  double p_bad, bad_w_lo, bad_w_hi, bad_e_lo, bad_e_hi;
} point_row;

typedef struct effect_row {
  char axis[NAME_LEN];
  char value[NAME_LEN];
  long long rank, runs, metastable, passed, bad;
  double p_bad, bad_lo, bad_hi, p_pass, pass_lo, pass_hi, effect_bad, effect_pass;
} effect_row;

#define PI(f, n) {n, offsetof(point_row, f), FMT_CT_I64, 0}
#define PF(f, n) {n, offsetof(point_row, f), FMT_CT_F64, 0}
static const fmt_column point_columns[] = {
    PI(point, "point"), PI(runs, "runs"), PI(recovered, "recovered"), PI(slow, "slow"),
    PI(metastable, "metastable"), PI(passed, "passed"), PF(p_meta, "p_metastable"),
    PF(meta_w_lo, "p_metastable_wilson_lo"), PF(meta_w_hi, "p_metastable_wilson_hi"),
    PF(meta_e_lo, "p_metastable_exact_lo"), PF(meta_e_hi, "p_metastable_exact_hi"),
    PF(p_pass, "p_pass"), PF(pass_w_lo, "p_pass_wilson_lo"), PF(pass_w_hi, "p_pass_wilson_hi"),
    PF(pass_e_lo, "p_pass_exact_lo"), PF(pass_e_hi, "p_pass_exact_hi"),
    PF(censor_ms, "censor_ms"), PF(p50, "recovery_p50_ms"), PF(p90, "recovery_p90_ms"),
    PF(p99, "recovery_p99_ms"), PF(amp, "amplification_mean"), PF(amp_lo, "amplification_lo"),
    PF(amp_hi, "amplification_hi"), PF(gd, "goodput_during_mean"), PF(gd_lo, "goodput_during_lo"),
    PF(gd_hi, "goodput_during_hi"), PF(ga, "goodput_after_mean"), PF(ga_lo, "goodput_after_lo"),
    PF(ga_hi, "goodput_after_hi"), PF(peak, "peak_queue_mean"), PI(collapsed, "collapsed"),
    PI(undetermined, "undetermined"), PF(p_coll, "p_collapsed"),
    PF(coll_lo, "p_collapsed_exact_lo"), PF(coll_hi, "p_collapsed_exact_hi"),
    PF(coll_p50, "collapse_p50_ms"), PF(coll_mean, "collapse_mean_ms"),
    PF(coll_mean_lo, "collapse_mean_lo"), PF(coll_mean_hi, "collapse_mean_hi"),
    PI(bad, "bad"), PF(p_bad, "p_bad"), PF(bad_w_lo, "p_bad_wilson_lo"),
    PF(bad_w_hi, "p_bad_wilson_hi"), PF(bad_e_lo, "p_bad_exact_lo"), PF(bad_e_hi, "p_bad_exact_hi"),
};
#undef PI
#undef PF
enum { N_POINT_COLUMNS = sizeof point_columns / sizeof point_columns[0] };

#define EI(f, n) {n, offsetof(effect_row, f), FMT_CT_I64, 0}
#define EF(f, n) {n, offsetof(effect_row, f), FMT_CT_F64, 0}
static const fmt_column effect_columns[] = {
    {"axis", offsetof(effect_row, axis), FMT_CT_STR, NAME_LEN},
    {"value", offsetof(effect_row, value), FMT_CT_STR, NAME_LEN},
    EI(rank, "rank"), EI(runs, "runs"), EI(metastable, "metastable"), EI(passed, "passed"),
    EI(bad, "bad"), EF(p_bad, "p_bad"), EF(bad_lo, "p_bad_lo"), EF(bad_hi, "p_bad_hi"),
    EF(p_pass, "p_pass"), EF(pass_lo, "p_pass_lo"), EF(pass_hi, "p_pass_hi"),
    EF(effect_bad, "effect_bad"), EF(effect_pass, "effect_pass"),
};
#undef EI
#undef EF
enum { N_EFFECT_COLUMNS = sizeof effect_columns / sizeof effect_columns[0] };

/* The /analysis/points columns: point_row's, then each grid axis's value by
 * name (as /points has it), so a table user needs no join; a statistic's
 * name wins over an axis of the same name. */
static fmt_column *point_columns_of(const fmt_results *r, size_t *n) {
  fmt_column *c = malloc((N_POINT_COLUMNS + r->n_axes) * sizeof *c);
  if (!c) return NULL;
  memcpy(c, point_columns, sizeof point_columns);
  *n = N_POINT_COLUMNS;
  for (size_t a = 0; a < r->n_axes; a++) {
    int taken = 0;
    for (size_t k = 0; k < *n; k++) taken |= !strcmp(c[k].name, r->axes[a]);
    if (!taken)
      c[(*n)++] = (fmt_column){r->axes[a], sizeof(point_row) + a * sizeof(double), FMT_CT_F64, 0};
  }
  return c;
}

static void point_row_fill(point_row *w, const ana_point_stats *ps) {
  ana_interval mw = ana_wilson(ps->n_meta, ps->n, ANA_Z95);
  ana_interval me = ana_clopper_pearson(ps->n_meta, ps->n, ANA_CONF);
  *w = (point_row){
      .point = ps->point, .runs = ps->n, .recovered = ps->n_recovered, .slow = ps->n_slow,
      .metastable = ps->n_meta, .passed = ps->n_pass, .p_meta = ps->p_meta,
      .meta_w_lo = mw.lo, .meta_w_hi = mw.hi, .meta_e_lo = me.lo, .meta_e_hi = me.hi,
      .p_pass = ps->p_pass,
      .pass_w_lo = ps->pass_wilson.lo, .pass_w_hi = ps->pass_wilson.hi,
      .pass_e_lo = ps->pass_exact.lo, .pass_e_hi = ps->pass_exact.hi,
      .censor_ms = ps->censor_ms, .p50 = ps->rec_p50, .p90 = ps->rec_p90, .p99 = ps->rec_p99,
      .amp = ps->amp.mean, .amp_lo = ps->amp.ci.lo, .amp_hi = ps->amp.ci.hi,
      .gd = ps->gp_during.mean, .gd_lo = ps->gp_during.ci.lo, .gd_hi = ps->gp_during.ci.hi,
      .ga = ps->gp_after.mean, .ga_lo = ps->gp_after.ci.lo, .ga_hi = ps->gp_after.ci.hi,
      .peak = ps->peak_queue.mean, .collapsed = ps->n_coll, .undetermined = ps->n_undet,
      .p_coll = ps->p_coll, .coll_lo = ps->coll_exact.lo, .coll_hi = ps->coll_exact.hi,
      .coll_p50 = ps->coll_p50, .coll_mean = ps->coll_mean, .coll_mean_lo = ps->coll_ci.lo,
      .coll_mean_hi = ps->coll_ci.hi, .bad = ps->n_bad, .p_bad = ps->p_bad,
      .bad_w_lo = ps->bad_wilson.lo, .bad_w_hi = ps->bad_wilson.hi,
      .bad_e_lo = ps->bad_exact.lo, .bad_e_hi = ps->bad_exact.hi};
}

int ana_analysis_store(const char *path, const fmt_results *r, const ana_summary *s,
                       const char *recommendation, char *err, size_t errlen) {
  int rc = -1;
  unsigned char *prow = NULL; /* point_row + the axis values, per point */
  size_t prow_size = sizeof(point_row) + r->n_axes * sizeof(double);
  effect_row *erow = NULL;
  long long *hist = NULL;
  size_t n_eff = 0;
  for (size_t k = 0; k < s->n_axes; k++) n_eff += s->effects[k].n_levels;
  prow = calloc(s->n_points ? s->n_points : 1, prow_size);
  erow = calloc(n_eff ? n_eff : 1, sizeof *erow);
  hist = calloc((s->n_points ? s->n_points : 1) * ANA_HISTOGRAM_BINS, sizeof *hist);
  if (!prow || !erow || !hist) {
    snprintf(err, errlen, "%s: out of memory writing /analysis", path);
    goto done;
  }
  for (size_t p = 0; p < s->n_points; p++) {
    point_row w;
    point_row_fill(&w, &s->points[p]);
    unsigned char *row = prow + p * prow_size;
    memcpy(row, &w, sizeof w);
    for (size_t a = 0; a < r->n_axes; a++) {
      double v = r->values[s->points[p].index * r->n_axes + a];
      memcpy(row + sizeof w + a * sizeof v, &v, sizeof v);
    }
  }
  size_t e = 0;
  for (size_t k = 0; k < s->n_axes; k++) {
    const ana_axis_effect *ax = &s->effects[k];
    for (size_t l = 0; l < ax->n_levels; l++, e++) {
      const ana_level *lv = &ax->levels[l];
      effect_row *w = &erow[e];
      ana_text_copy(w->axis, sizeof w->axis, r->axes[ax->axis]); /* whole characters */
      ana_value_label(r, ax->axis, lv->example, w->value, sizeof w->value);
      w->rank = (long long)k + 1;
      w->runs = lv->n;
      w->metastable = lv->n_meta;
      w->passed = lv->n_pass;
      w->bad = lv->n_bad;
      w->p_bad = lv->p_bad;
      w->bad_lo = lv->bad_ci.lo;
      w->bad_hi = lv->bad_ci.hi;
      w->p_pass = lv->p_pass;
      w->pass_lo = lv->pass_ci.lo;
      w->pass_hi = lv->pass_ci.hi;
      w->effect_bad = ax->effect_bad;
      w->effect_pass = ax->effect_pass;
    }
  }
  double hhi = ana_histogram_range(r);
  for (size_t p = 0; p < s->n_points; p++) {
    ana_histogram h;
    if (ana_point_histogram(&h, r, p, hhi, ANA_HISTOGRAM_BINS) == 0) {
      for (size_t b = 0; b < ANA_HISTOGRAM_BINS; b++)
        hist[p * ANA_HISTOGRAM_BINS + b] = h.counts[b];
      ana_histogram_free(&h);
    }
  }

  char method[160];
  snprintf(method, sizeof method, "wilson: %s; exact: %s; the table shows %s",
           ana_method_name(ANA_INTERVAL_WILSON), ana_method_name(ANA_INTERVAL_EXACT),
           ana_method_name(s->method));
  double conf = ANA_CONF, lo_ms = 0.0, bin_ms = hhi / ANA_HISTOGRAM_BINS;
  const char *quantiles = "Kaplan-Meier; runs that did not recover are censored at censor_ms "
                          "(horizon - fault clearance); inf = not reached";
  const char *effects = "runs pooled by the axis value over all other axes; effect = max - min "
                        "across values; rank by the larger of the two effects";
  const char *reco = recommendation ? recommendation : "", *tool = STORMSWEEP_VERSION;
  fmt_value attrs[] = {
      {"slo_ms", FMT_V_F64, 0, {0}, &s->slo_ms, NULL, 0},
      {"confidence", FMT_V_F64, 0, {0}, &conf, NULL, 0},
      {"interval_methods", FMT_V_TEXT, 0, {0}, method, NULL, 0},
      {"recovery_quantiles", FMT_V_TEXT, 0, {0}, quantiles, NULL, 0},
      {"effects_method", FMT_V_TEXT, 0, {0}, effects, NULL, 0},
      {"recommendation", FMT_V_TEXT, 0, {0}, reco, NULL, 0},
      {"tool_version", FMT_V_TEXT, 0, {0}, tool, NULL, 0},
  };
  fmt_value hist_attrs[] = {{"lo_ms", FMT_V_F64, 0, {0}, &lo_ms, NULL, 0},
                            {"bin_ms", FMT_V_F64, 0, {0}, &bin_ms, NULL, 0}};
  fmt_value hist_ds = {"recovery_histogram", FMT_V_I64, 2, {s->n_points, ANA_HISTOGRAM_BINS, 0},
                       hist, hist_attrs, 2};
  size_t n_pcols = 0;
  fmt_column *pcols = point_columns_of(r, &n_pcols);
  if (!pcols) {
    snprintf(err, errlen, "%s: out of memory writing /analysis", path);
    goto done;
  }
  fmt_table tables[] = {
      {"points", pcols, n_pcols, prow_size, prow, s->n_points, NULL, 0},
      {"effects", effect_columns, N_EFFECT_COLUMNS, sizeof(effect_row), erow, n_eff, NULL, 0},
  };
  fmt_group g = {"/analysis", 1, attrs, sizeof attrs / sizeof attrs[0], &hist_ds, 1, tables, 2};
  rc = fmt_group_store(path, NULL, &g, err, errlen);
  free(pcols);
done:
  free(prow);
  free(erow);
  free(hist);
  return rc;
}
