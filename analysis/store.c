/*
 * store.c — `analyze --write`: stores what analyze computed in the result
 * file under /analysis (SPEC §4), replacing an earlier /analysis.
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
 *       goodput_after_{mean,lo,hi}, peak_queue_mean (float64), ...; then one
 *       float64 column per grid axis, named by its key, with the point's
 *       value as /points has it (no join needed)
 *   /analysis/effects        one row per (axis, value): axis, value (string
 *       as the sweep wrote it), rank (1 = largest effect), runs, metastable,
 *       passed, p_metastable(_lo,_hi), p_pass(_lo,_hi), effect_metastable,
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

#include <hdf5.h>

#include "ana.h"
#include "open.h"
#include "textsafe.h"

#define GROUP_ANALYSIS "/analysis"
enum { NAME_LEN = 64 };

typedef struct point_row {
  long long point, runs, recovered, slow, metastable, passed;
  double p_meta, meta_w_lo, meta_w_hi, meta_e_lo, meta_e_hi;
  double p_pass, pass_w_lo, pass_w_hi, pass_e_lo, pass_e_hi;
  double censor_ms, p50, p90, p99;
  double amp, amp_lo, amp_hi, gd, gd_lo, gd_hi, ga, ga_lo, ga_hi, peak;
  long long collapsed, undetermined;
  double p_coll, coll_lo, coll_hi, coll_p50, coll_mean, coll_mean_lo, coll_mean_hi;
} point_row;

typedef struct effect_row {
  char axis[NAME_LEN];
  char value[NAME_LEN];
  long long rank, runs, metastable, passed;
  double p_meta, meta_lo, meta_hi, p_pass, pass_lo, pass_hi, effect_meta, effect_pass;
} effect_row;

static int attr_put_string(hid_t obj, const char *name, const char *value) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a >= 0 && H5Awrite(a, t, &value) >= 0 ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc;
}

static int attr_put_double(hid_t obj, const char *name, double v) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, &v) >= 0 ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc;
}

/* Writes a 1-D table of n rows of memory type mt (stored as its packed
 * little-endian equivalent). */
static int table_write(hid_t group, const char *name, hid_t mt, const void *rows, size_t n) {
  hsize_t dim = n;
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t ft = H5Tcopy(mt);
  H5Tpack(ft);
  hid_t ds = H5Dcreate2(group, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds >= 0 && (n == 0 || H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0)
               ? 0
               : -1;
  if (ds >= 0) H5Dclose(ds);
  H5Tclose(ft);
  H5Sclose(sp);
  return rc;
}

/* A /analysis/points row: point_row, then each grid axis's value by name
 * (as /points has it), so a table user needs no join (issue 14). */
static hid_t point_type(const fmt_results *r) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(point_row) + r->n_axes * sizeof(double));
#define I64(f, n) H5Tinsert(t, n, offsetof(point_row, f), H5T_NATIVE_LLONG)
#define F64(f, n) H5Tinsert(t, n, offsetof(point_row, f), H5T_NATIVE_DOUBLE)
  I64(point, "point");
  I64(runs, "runs");
  I64(recovered, "recovered");
  I64(slow, "slow");
  I64(metastable, "metastable");
  I64(passed, "passed");
  F64(p_meta, "p_metastable");
  F64(meta_w_lo, "p_metastable_wilson_lo");
  F64(meta_w_hi, "p_metastable_wilson_hi");
  F64(meta_e_lo, "p_metastable_exact_lo");
  F64(meta_e_hi, "p_metastable_exact_hi");
  F64(p_pass, "p_pass");
  F64(pass_w_lo, "p_pass_wilson_lo");
  F64(pass_w_hi, "p_pass_wilson_hi");
  F64(pass_e_lo, "p_pass_exact_lo");
  F64(pass_e_hi, "p_pass_exact_hi");
  F64(censor_ms, "censor_ms");
  F64(p50, "recovery_p50_ms");
  F64(p90, "recovery_p90_ms");
  F64(p99, "recovery_p99_ms");
  F64(amp, "amplification_mean");
  F64(amp_lo, "amplification_lo");
  F64(amp_hi, "amplification_hi");
  F64(gd, "goodput_during_mean");
  F64(gd_lo, "goodput_during_lo");
  F64(gd_hi, "goodput_during_hi");
  F64(ga, "goodput_after_mean");
  F64(ga_lo, "goodput_after_lo");
  F64(ga_hi, "goodput_after_hi");
  F64(peak, "peak_queue_mean");
  I64(collapsed, "collapsed");
  I64(undetermined, "undetermined");
  F64(p_coll, "p_collapsed");
  F64(coll_lo, "p_collapsed_exact_lo");
  F64(coll_hi, "p_collapsed_exact_hi");
  F64(coll_p50, "collapse_p50_ms");
  F64(coll_mean, "collapse_mean_ms");
  F64(coll_mean_lo, "collapse_mean_lo");
  F64(coll_mean_hi, "collapse_mean_hi");
#undef I64
#undef F64
  for (size_t a = 0; a < r->n_axes; a++)
    if (H5Tget_member_index(t, r->axes[a]) < 0) /* a statistic's name wins */
      H5Tinsert(t, r->axes[a], sizeof(point_row) + a * sizeof(double), H5T_NATIVE_DOUBLE);
  return t;
}

static hid_t effect_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(effect_row));
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, NAME_LEN);
  H5Tset_strpad(str, H5T_STR_NULLTERM);
  H5Tinsert(t, "axis", offsetof(effect_row, axis), str);
  H5Tinsert(t, "value", offsetof(effect_row, value), str);
  H5Tclose(str);
#define I64(f, n) H5Tinsert(t, n, offsetof(effect_row, f), H5T_NATIVE_LLONG)
#define F64(f, n) H5Tinsert(t, n, offsetof(effect_row, f), H5T_NATIVE_DOUBLE)
  I64(rank, "rank");
  I64(runs, "runs");
  I64(metastable, "metastable");
  I64(passed, "passed");
  F64(p_meta, "p_metastable");
  F64(meta_lo, "p_metastable_lo");
  F64(meta_hi, "p_metastable_hi");
  F64(p_pass, "p_pass");
  F64(pass_lo, "p_pass_lo");
  F64(pass_hi, "p_pass_hi");
  F64(effect_meta, "effect_metastable");
  F64(effect_pass, "effect_pass");
#undef I64
#undef F64
  return t;
}

static void point_row_fill(point_row *w, const ana_point_stats *ps) {
  *w = (point_row){
      .point = ps->point, .runs = ps->n, .recovered = ps->n_recovered, .slow = ps->n_slow,
      .metastable = ps->n_meta, .passed = ps->n_pass, .p_meta = ps->p_meta,
      .meta_w_lo = ps->meta_wilson.lo, .meta_w_hi = ps->meta_wilson.hi,
      .meta_e_lo = ps->meta_exact.lo, .meta_e_hi = ps->meta_exact.hi, .p_pass = ps->p_pass,
      .pass_w_lo = ps->pass_wilson.lo, .pass_w_hi = ps->pass_wilson.hi,
      .pass_e_lo = ps->pass_exact.lo, .pass_e_hi = ps->pass_exact.hi,
      .censor_ms = ps->censor_ms, .p50 = ps->rec_p50, .p90 = ps->rec_p90, .p99 = ps->rec_p99,
      .amp = ps->amp.mean, .amp_lo = ps->amp.ci.lo, .amp_hi = ps->amp.ci.hi,
      .gd = ps->gp_during.mean, .gd_lo = ps->gp_during.ci.lo, .gd_hi = ps->gp_during.ci.hi,
      .ga = ps->gp_after.mean, .ga_lo = ps->gp_after.ci.lo, .ga_hi = ps->gp_after.ci.hi,
      .peak = ps->peak_queue.mean, .collapsed = ps->n_coll, .undetermined = ps->n_undet,
      .p_coll = ps->p_coll, .coll_lo = ps->coll_exact.lo, .coll_hi = ps->coll_exact.hi,
      .coll_p50 = ps->coll_p50, .coll_mean = ps->coll_mean, .coll_mean_lo = ps->coll_ci.lo,
      .coll_mean_hi = ps->coll_ci.hi};
}

int ana_analysis_store(const char *path, const fmt_results *r, const ana_summary *s,
                       const char *recommendation, char *err, size_t errlen) {
  int rc = -1;
  hid_t fid = fmt_open(path, H5F_ACC_RDWR, NULL, err, errlen);
  if (fid < 0) return -1;
  hid_t g = -1, pt = -1, et = -1;
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
      w->p_meta = lv->p_meta;
      w->meta_lo = lv->meta_ci.lo;
      w->meta_hi = lv->meta_ci.hi;
      w->p_pass = lv->p_pass;
      w->pass_lo = lv->pass_ci.lo;
      w->pass_hi = lv->pass_ci.hi;
      w->effect_meta = ax->effect_meta;
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

  if (H5Lexists(fid, GROUP_ANALYSIS, H5P_DEFAULT) > 0 &&
      H5Ldelete(fid, GROUP_ANALYSIS, H5P_DEFAULT) < 0) {
    snprintf(err, errlen, "%s: cannot replace the existing %s", path, GROUP_ANALYSIS);
    goto done;
  }
  g = H5Gcreate2(fid, GROUP_ANALYSIS, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  pt = point_type(r);
  et = effect_type();
  char method[160];
  snprintf(method, sizeof method, "wilson: %s; exact: %s; the table shows %s",
           ana_method_name(ANA_INTERVAL_WILSON), ana_method_name(ANA_INTERVAL_EXACT),
           ana_method_name(s->method));
  int bad = g < 0 || pt < 0 || et < 0;
  bad = bad || attr_put_double(g, "slo_ms", s->slo_ms) < 0;
  bad = bad || attr_put_double(g, "confidence", ANA_CONF) < 0;
  bad = bad || attr_put_string(g, "interval_methods", method) < 0;
  bad = bad ||
        attr_put_string(g, "recovery_quantiles",
                        "Kaplan-Meier; runs that did not recover are censored at censor_ms "
                        "(horizon - fault clearance); inf = not reached") < 0;
  bad = bad ||
        attr_put_string(g, "effects_method",
                        "runs pooled by the axis value over all other axes; effect = max - min "
                        "across values; rank by the larger of the two effects") < 0;
  bad = bad || attr_put_string(g, "recommendation", recommendation ? recommendation : "") < 0;
  bad = bad || attr_put_string(g, "tool_version", STORMSWEEP_VERSION) < 0;
  bad = bad || table_write(g, "points", pt, prow, s->n_points) < 0;
  bad = bad || table_write(g, "effects", et, erow, n_eff) < 0;
  if (!bad) {
    hsize_t dims[2] = {s->n_points, ANA_HISTOGRAM_BINS};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(g, "recovery_histogram", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    bad = ds < 0 || (s->n_points > 0 &&
                     H5Dwrite(ds, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, hist) < 0);
    bad = bad || attr_put_double(ds, "lo_ms", 0.0) < 0;
    bad = bad || attr_put_double(ds, "bin_ms", hhi / ANA_HISTOGRAM_BINS) < 0;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
  }
  if (bad) {
    snprintf(err, errlen, "%s: cannot write %s", path, GROUP_ANALYSIS);
    goto done;
  }
  rc = 0;
done:
  free(prow);
  free(erow);
  free(hist);
  if (pt >= 0) H5Tclose(pt);
  if (et >= 0) H5Tclose(et);
  if (g >= 0) H5Gclose(g);
  if (H5Fclose(fid) < 0 && rc == 0) {
    snprintf(err, errlen, "%s: cannot close after writing %s", path, GROUP_ANALYSIS);
    rc = -1;
  }
  return rc;
}
