/*
 * refine_store.c — the /refine group of a result file (fmt_store.h):
 *
 *   attributes  the design: min_pass, max_meta, alpha, beta, ratio (float64),
 *               k (int32: candidates per round), r0 (int64: screening
 *               replicates), slo_ms (float64: the SLO the proofs judged runs
 *               by; absent in files refined before it was recorded, which
 *               were judged by the sweep's own slo_ms), user_slo (text: the
 *               SLO terms on what users see the runs were judged by, "" for
 *               the queue-recovery check; absent = ""); the state after the
 *               last evaluation: status
 *               ("proven", "none" or "open"), decided_point, decided_rank,
 *               closest_point (int64, -1 when none), n_candidates,
 *               runs_appended, rounds (int64)
 *   round_start int64 [rounds]: first row of /runs each round appended
 *               (written by the writer in the same commit as the rows)
 *   candidates  compound [n_candidates], in rank order: rank (int32, 1 =
 *               cheapest), point (int64), alpha (float64, alpha / 2^rank),
 *               state (int8: 0 open, 1 proven, 2 refuted), runs (int64:
 *               fresh runs fed to its test), not_passing, metastable (int64,
 *               among those), llr_pass, llr_meta (float64), screen_runs,
 *               screen_pass, screen_meta (int64), amplification, goodput_lost
 *               (float64: its cost keys, from screening)
 *
 * What is read back is a record of what refine did, never a verdict by
 * itself (analysis/refine_eval.c recomputes the verdict from the runs and
 * checks this record against it): every attribute is checked for class and
 * shape (one value) before it is read, and the candidate table may hold at
 * most one row per grid point of the file and no more rows than it stores.
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_store.h"
#include "h5util.h"
#include "layout.h"
#include "open.h"

#define C(name, field, type) {name, offsetof(fmt_refine_cand, field), type, 0}
static const fmt_column cand_columns[] = {
    C("rank", rank, FMT_CT_I32),
    C("point", point, FMT_CT_I64),
    C("alpha", alpha, FMT_CT_F64),
    C("state", state, FMT_CT_I8),
    C("runs", runs, FMT_CT_I64),
    C("not_passing", not_passing, FMT_CT_I64),
    C("metastable", metastable, FMT_CT_I64),
    C("llr_pass", llr_pass, FMT_CT_F64),
    C("llr_meta", llr_meta, FMT_CT_F64),
    C("screen_runs", screen_runs, FMT_CT_I64),
    C("screen_pass", screen_pass, FMT_CT_I64),
    C("screen_meta", screen_meta, FMT_CT_I64),
    C("amplification", amplification, FMT_CT_F64),
    C("goodput_lost", goodput_lost, FMT_CT_F64),
};
#undef C
enum { N_CAND_COLUMNS = sizeof cand_columns / sizeof cand_columns[0] };

void fmt_refine_info_free(fmt_refine_info *ri) {
  free(ri->cand);
  memset(ri, 0, sizeof *ri);
}

const fmt_refine_cand *fmt_refine_find(const fmt_refine_info *ri, int64_t point) {
  for (size_t i = 0; i < ri->n_cand; i++)
    if (ri->cand[i].point == point) return &ri->cand[i];
  return NULL;
}

int fmt_refine_read(const char *path, fmt_refine_info *ri, char *err, size_t errlen) {
  memset(ri, 0, sizeof *ri);
  ri->decided_point = ri->decided_rank = ri->closest_point = -1;
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = 1;
  hid_t f = fmt_open(path, H5F_ACC_RDONLY, NULL, err, errlen), g = -1;
  char *status = NULL;
  if (f < 0) {
    rc = -1;
    goto done;
  }
  if (H5Lexists(f, "refine", H5P_DEFAULT) <= 0) goto done;
  g = H5Gopen2(f, "refine", H5P_DEFAULT);
  if (g < 0) {
    swp_seterr(err, errlen, "%s: /refine is damaged: it is not a group", path);
    rc = -1;
    goto done;
  }
  if (H5Aexists(g, "status") <= 0) goto done; /* rounds recorded, no evaluation yet */
  const char *bad = NULL;
  fmt_refine_design *d = &ri->d;
  if (fmt_attr_get_num(g, "min_pass", H5T_NATIVE_DOUBLE, &d->min_pass)) bad = "min_pass";
  else if (fmt_attr_get_num(g, "max_meta", H5T_NATIVE_DOUBLE, &d->max_meta)) bad = "max_meta";
  else if (fmt_attr_get_num(g, "alpha", H5T_NATIVE_DOUBLE, &d->alpha)) bad = "alpha";
  else if (fmt_attr_get_num(g, "beta", H5T_NATIVE_DOUBLE, &d->beta)) bad = "beta";
  else if (fmt_attr_get_num(g, "ratio", H5T_NATIVE_DOUBLE, &d->ratio)) bad = "ratio";
  else if (fmt_attr_get_num(g, "k", H5T_NATIVE_INT32, &d->k)) bad = "k";
  else if (fmt_attr_get_num(g, "r0", H5T_NATIVE_INT64, &d->r0)) bad = "r0";
  else if (fmt_attr_get_num(g, "decided_point", H5T_NATIVE_INT64, &ri->decided_point))
    bad = "decided_point";
  else if (fmt_attr_get_num(g, "decided_rank", H5T_NATIVE_INT64, &ri->decided_rank))
    bad = "decided_rank";
  else if (fmt_attr_get_num(g, "closest_point", H5T_NATIVE_INT64, &ri->closest_point))
    bad = "closest_point";
  else if (fmt_attr_get_num(g, "runs_appended", H5T_NATIVE_INT64, &ri->runs_appended))
    bad = "runs_appended";
  else if (fmt_attr_get_num(g, "rounds", H5T_NATIVE_INT64, &ri->rounds)) bad = "rounds";
  else if (fmt_attr_get_str(g, "status", sizeof ri->status - 1, &status)) bad = "status";
  if (bad) {
    swp_seterr(err, errlen,
               "%s: /refine is damaged: attribute '%s' is missing or not one value of its type",
               path, bad);
    rc = -1;
    goto done;
  }
  /* Optional: absent in files written before the SLO was recorded. */
  d->slo_ms = NAN;
  if (H5Aexists(g, "slo_ms") > 0 &&
      fmt_attr_get_num(g, "slo_ms", H5T_NATIVE_DOUBLE, &d->slo_ms)) {
    swp_seterr(err, errlen,
               "%s: /refine is damaged: attribute 'slo_ms' is not one value of its type", path);
    rc = -1;
    goto done;
  }
  d->user_slo[0] = 0;
  if (H5Aexists(g, "user_slo") > 0) {
    char *terms = NULL;
    if (fmt_attr_get_str(g, "user_slo", sizeof d->user_slo - 1, &terms)) {
      swp_seterr(err, errlen,
                 "%s: /refine is damaged: attribute 'user_slo' is not one text of at most %zu "
                 "bytes", path, sizeof d->user_slo - 1);
      rc = -1;
      goto done;
    }
    snprintf(d->user_slo, sizeof d->user_slo, "%s", terms);
    free(terms);
  }
  snprintf(ri->status, sizeof ri->status, "%s", status);
  /* A candidate is a grid point: no more rows than the file has points. */
  int64_t n_points = 0;
  if (fmt_attr_get_num(f, FMT_ATTR_N_POINTS, H5T_NATIVE_INT64, &n_points) || n_points < 0 ||
      n_points > SWP_MAX_POINTS)
    n_points = 0;
  void *rows = NULL;
  size_t n = 0;
  char why[256];
  int trc = fmt_table_read(g, "candidates", cand_columns, N_CAND_COLUMNS, sizeof(fmt_refine_cand),
                           (size_t)n_points, &rows, &n, why, sizeof why);
  if (trc < 0) {
    swp_seterr(err, errlen, "%s: /refine is damaged: /refine/%s", path, why);
    rc = -1;
    goto done;
  }
  ri->cand = rows;
  ri->n_cand = n;
  rc = 0;
done:
  free(status);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  fmt_h5_quiet_end(&q);
  if (rc) {
    free(ri->cand);
    ri->cand = NULL;
    ri->n_cand = 0;
  }
  return rc;
}

int fmt_refine_write(const char *path, fmt_lock *held, const fmt_refine_info *ri, char *err,
                     size_t errlen) {
  const fmt_refine_design *d = &ri->d;
  int64_t n_cand = (int64_t)ri->n_cand;
  const char *status = ri->status;
  fmt_value attrs[] = {
      {"min_pass", FMT_V_F64, 0, {0}, &d->min_pass, NULL, 0},
      {"max_meta", FMT_V_F64, 0, {0}, &d->max_meta, NULL, 0},
      {"alpha", FMT_V_F64, 0, {0}, &d->alpha, NULL, 0},
      {"beta", FMT_V_F64, 0, {0}, &d->beta, NULL, 0},
      {"ratio", FMT_V_F64, 0, {0}, &d->ratio, NULL, 0},
      {"k", FMT_V_I32, 0, {0}, &d->k, NULL, 0},
      {"r0", FMT_V_I64, 0, {0}, &d->r0, NULL, 0},
      {"slo_ms", FMT_V_F64, 0, {0}, &d->slo_ms, NULL, 0},
      {"user_slo", FMT_V_TEXT, 0, {0}, d->user_slo, NULL, 0},
      {"status", FMT_V_TEXT, 0, {0}, status, NULL, 0},
      {"decided_point", FMT_V_I64, 0, {0}, &ri->decided_point, NULL, 0},
      {"decided_rank", FMT_V_I64, 0, {0}, &ri->decided_rank, NULL, 0},
      {"closest_point", FMT_V_I64, 0, {0}, &ri->closest_point, NULL, 0},
      {"n_candidates", FMT_V_I64, 0, {0}, &n_cand, NULL, 0},
      {"runs_appended", FMT_V_I64, 0, {0}, &ri->runs_appended, NULL, 0},
      {"rounds", FMT_V_I64, 0, {0}, &ri->rounds, NULL, 0},
  };
  fmt_table cand = {"candidates", cand_columns, N_CAND_COLUMNS, sizeof(fmt_refine_cand),
                    ri->cand, ri->n_cand, NULL, 0};
  fmt_group g = {FMT_GROUP_REFINE, 0, attrs, sizeof attrs / sizeof attrs[0], NULL, 0, &cand, 1};
  return fmt_group_store(path, held, &g, err, errlen);
}
