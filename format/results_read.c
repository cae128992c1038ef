/*
 * reader.c — reading a stormsweep result file for the analysis.
 * This is the only analysis module that knows the HDF5 layout; the names it
 * relies on are collected below so following a layout change means editing
 * one place. The layout is documented in layout.h; this reader
 * needs from it:
 *
 *   /            attributes format = "stormsweep-results" (string) and
 *                format_version (integer, <= FMT_FORMAT_VERSION); uses
 *                tool_version, master_seed, tick_ms, complete and sweep_text
 *                (the effective sweep INI) when present
 *   /points      compound table: "point" (integer id) and one numeric column
 *                per grid axis, named by the setting key, in axis order
 *   /points_text optional: "point" and one string column per axis, the value
 *                as written ("inf", "full", "guarded"), used for labels
 *   /runs        compound table, one row per run; needs "point", "outcome"
 *                (integer, or enum on any integer: recovered = 0, slow = 1,
 *                metastable = 2, collapsed = 3, undetermined = 4) and
 *                "recovery_ms" (NaN unless recovered);
 *                uses "done" (0 = not written yet: skipped), "run" (row of
 *                /ticks; default: the row of /runs), "replicate", "seed",
 *                "passed_slo", "ticks" (the run's own tick count),
 *                "amplification", "goodput_during", "goodput_after",
 *                "peak_queue", "baseline_queue", "collapse_ms",
 *                "collapse_watch_ms" when present
 *   /ticks/<m>   int32 (runs x ticks), one per metric (queue_depth,
 *                successes, open_breakers, ...); values past a run's own
 *                tick count are ignored
 *
 * Columns are matched by name, never by position, through HDF5 compound
 * conversion, so the writer may add columns or reorder them freely.
 *
 * Damaged and hostile files: every HDF5 call is checked and every problem
 * is one line naming the file and the object ("/runs row 5: point 99 is not
 * in /points"), which the commands print before exiting 2. Before anything
 * is allocated, a table's row count must be at most SWP_MAX_RUNS and fit in
 * a quarter of physical memory; /runs memory then grows with the runs
 * actually found (a table that only declares rows costs nothing). Values
 * that later index arrays or are cast to integers are checked first: point
 * ids (whole, unique), enum axis values (an index of one of the setting's
 * names), a written row's point (in /points), outcome (0 to OUTCOME_MAX),
 * run id and a recovered run's recovery_ms (finite, >= 0). Every member of
 * /ticks must be a 2-D integer dataset with one row per /runs row and the
 * same tick count, at most 100 million, in chunks no larger than one such
 * row and not so wide that plotting a point costs far more than its ticks.
 * Root attributes n_points, n_runs, replicates and ticks, when present,
 * must agree with the tables.
 *
 * Untrusted files: evidence is counted once — a run id or a
 * (point, replicate) pair that appears twice, more finished runs at a point
 * than the file declares, or a /runs fill value that would make unwritten
 * rows finished runs is refused; at most SWP_MAX_POINTS points; every
 * string taken from the file (names, labels, texts) must be printable
 * UTF-8 of bounded length, and a label must parse back to its /points value
 * (label_matches) or it is not shown. Rows with done = 0 are simply
 * not written yet (an interrupted sweep or a slice), never an error.
 *
 * Memory: /points and /runs are read whole into compact arrays (one small
 * row per run, in blocks of RUN_BLOCK rows through a packed buffer). /ticks
 * is never read whole: fmt_bins_read reads one run's row at a time (a block
 * of ticks at a time for very long rows) and keeps only per-bin means, so its
 * memory is O(replicates x bins + block), whatever the file size.
 *
 * Scenario times (horizon, fault start and clearance) are not columns: they
 * come from re-parsing the stored sweep text with the sweeps library (the
 * writer guarantees it parses back to the same sweep). A file whose sweep
 * text cannot be parsed is still analysed; its recovery quantiles then say
 * ">horizon" without a number.
 *
 * This file assembles a fmt_results from the parts results_points.c,
 * results_runs.c and results_ticks.c read; results_util.c holds the checked
 * reads they share.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_h5.h"
#include "results.h"

static int roles_read(fmt_results *r, hid_t root);
static int rounds_read(fmt_results *r, hid_t fid, char *err, size_t errlen);
static void stages_fill(fmt_results *r);

int fmt_results_read(fmt_results *r, const char *path, char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  r->tick_ms = r->slo_ms = NAN;
  r->path = strdup(path);
  if (!r->path) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  char *sweep_text = NULL;
  hid_t root = -1;
  hid_t fid = fmt_open(path, H5F_ACC_RDONLY, &r->format_version, err, errlen);
  if (fid < 0) goto fail;
  root = H5Gopen2(fid, "/", H5P_DEFAULT);
  if (root < 0) {
    snprintf(err, errlen, "%s: cannot read the root group", path);
    goto fail;
  }
  /* Decoration: a version or sweep text that is not printable text is
   * dropped, as if absent. */
  r->tool_version = fmt__rr_attr_string(root, ATTR_TOOL_VERSION, MAX_SHORT_TEXT, 0, NULL);
  r->has_master_seed = fmt__rr_attr_u64(root, ATTR_MASTER_SEED, &r->master_seed) == 0;
  double crn = 0;
  if (fmt__rr_attr_double(root, "crn", &crn) == 0) r->crn = crn == 1;
  if (fmt__rr_attr_double(root, ATTR_TICK_MS, &r->tick_ms) == 0 && !(r->tick_ms > 0 && isfinite(r->tick_ms)))
    r->tick_ms = NAN;
  /* What /ticks stores (layout.h: record, rows, row_ms); absent: full. */
  snprintf(r->record, sizeof r->record, "full");
  r->row_ticks = 1;
  r->row_ms = r->tick_ms;
  char *rec = fmt__rr_attr_string(root, FMT_ATTR_RECORD, sizeof r->record - 1, 0, NULL);
  if (rec) {
    snprintf(r->record, sizeof r->record, "%s", rec);
    free(rec);
    double row_ms = NAN;
    r->row_ticks = 0;
    r->row_ms = NAN;
    if (fmt__rr_attr_double(root, FMT_ATTR_ROW_MS, &row_ms) == 0 && row_ms > 0 &&
        isfinite(row_ms) && r->tick_ms > 0) {
      double k = floor(row_ms / r->tick_ms + 0.5);
      if (k >= 1 && k <= (double)MAX_TICKS) {
        r->row_ticks = (int64_t)k;
        r->row_ms = row_ms;
      }
    }
  }
  double complete = NAN;
  r->complete = fmt__rr_attr_double(root, ATTR_COMPLETE, &complete) == 0 ? complete != 0 : -1;
  sweep_text = fmt__rr_attr_string(root, ATTR_SWEEP_TEXT, SWP_MAX_TEXT, 1, NULL);

  double reps = 0, chunk_bytes = 0;
  hsize_t chunk_ticks = 0;
  int64_t replicates = 0;
  /* refine appends fresh replicates after the sweep's own rows and records
   * its rounds under /refine (append.c). */
  int refined = H5Lexists(fid, "refine", H5P_DEFAULT) > 0;
  if (fmt__rr_attr_double(root, ATTR_REPLICATES, &reps) == 0) {
    if (!(reps >= 1 && reps <= (double)SWP_MAX_RUNS && reps == floor(reps))) {
      snprintf(err, errlen, "%s: the '%s' attribute is %g, not a whole number from 1 to %lld",
               path, ATTR_REPLICATES, reps, (long long)SWP_MAX_RUNS);
      goto fail;
    }
    replicates = (int64_t)reps;
    r->replicates = replicates;
  }

  if (fmt__rr_points_read(r, fid, err, errlen) != 0) goto fail;
  /* The stored sweep before the runs: a row's stage is checked against its
   * screen_up_to. */
  fmt__rr_labels_read(r, fid);
  if (sweep_text) fmt__rr_sweep_apply(r, sweep_text);
  if (fmt__rr_runs_read(r, fid, replicates, refined, err, errlen) != 0 ||
      fmt__rr_attr_agrees(r, root, ATTR_N_POINTS, (double)r->n_points, DSET_POINTS, err, errlen) != 0 ||
      fmt__rr_attr_agrees(r, root, ATTR_N_RUNS, (double)(r->n_runs + r->n_skipped), DSET_RUNS, err,
                  errlen) != 0 ||
      fmt__rr_ticks_read(r, fid, &chunk_bytes, &chunk_ticks, err, errlen) != 0 ||
      (r->n_ticks > 0 && r->row_ticks == 1 &&
       fmt__rr_attr_agrees(r, root, ATTR_TICKS, (double)r->n_ticks, "/ticks", err, errlen) != 0) ||
      (r->n_ticks > 0 && r->row_ticks > 1 &&
       fmt__rr_attr_agrees(r, root, FMT_ATTR_ROWS, (double)r->n_ticks, "/ticks", err, errlen) != 0) ||
      (r->n_ticks > 0 && r->row_ticks < 1 &&
       (snprintf(err, errlen, "%s: /ticks has %lld rows but the file records %s", path,
                 (long long)r->n_ticks, r->record), 1)) ||
      (replicates && !refined &&
       fmt__rr_attr_agrees(r, root, ATTR_N_RUNS, (double)r->n_points * (double)replicates,
                   "n_points x replicates", err, errlen) != 0) ||
      (replicates && refined &&
       (double)(r->n_runs + r->n_skipped) < (double)r->n_points * (double)replicates &&
       fmt__rr_attr_agrees(r, root, ATTR_N_RUNS, (double)r->n_points * (double)replicates,
                   "at least n_points x replicates", err, errlen) != 0))
    goto fail;
  if (roles_read(r, root)) goto oom_fail;
  if (refined && rounds_read(r, fid, err, errlen)) goto fail;
  stages_fill(r);
  if (fmt__rr_band_work_check(r, chunk_bytes, chunk_ticks, err, errlen)) goto fail;
  free(sweep_text);
  H5Gclose(root);
  H5Fclose(fid);
  return 0;
oom_fail:
  snprintf(err, errlen, "%s: out of memory", path);
fail:
  free(sweep_text);
  if (root >= 0) H5Gclose(root);
  if (fid >= 0) H5Fclose(fid);
  fmt_results_free(r);
  return -1;
}

/* The role of each axis: the file's scenario_axes attribute (the sweep's
 * [sweep] overrides resolved when it was written), or for older files each
 * setting's default role. A damaged attribute falls back to the defaults. */
static int roles_read(fmt_results *r, hid_t root) {
  r->scenario = calloc(r->n_axes ? r->n_axes : 1, 1);
  if (!r->scenario) return -1;
  char *list = fmt__rr_attr_string(root, "scenario_axes", MAX_SHORT_TEXT * 64, 0, NULL);
  for (size_t a = 0; a < r->n_axes; a++) {
    if (!list) {
      r->scenario[a] = eng_setting_role_find(r->axes[a]) == ENG_ROLE_SCENARIO;
      continue;
    }
    size_t n = strlen(r->axes[a]);
    for (const char *p = list; *p;) {
      while (*p == ' ' || *p == ',') p++;
      const char *e = p;
      while (*e && *e != ',') e++;
      if ((size_t)(e - p) == n && !strncmp(p, r->axes[a], n)) r->scenario[a] = 1;
      p = e;
    }
  }
  free(list);
  return 0;
}

int fmt__round_starts_read(hid_t fid, int64_t base, int64_t rows, int64_t **starts, size_t *n_out) {
  const char *name = "/refine/round_start";
  *starts = NULL;
  *n_out = 0;
  if (H5Lexists(fid, "/refine", H5P_DEFAULT) <= 0 || H5Lexists(fid, name, H5P_DEFAULT) <= 0)
    return 0;
  hid_t ds = H5Dopen2(fid, name, H5P_DEFAULT);
  hid_t sp = ds < 0 ? -1 : H5Dget_space(ds), ft = ds < 0 ? -1 : H5Dget_type(ds);
  hsize_t n = 0;
  int ok = ds >= 0 && sp >= 0 && ft >= 0 && H5Tget_class(ft) == H5T_INTEGER &&
           H5Sget_simple_extent_ndims(sp) == 1 && H5Sget_simple_extent_dims(sp, &n, NULL) == 1 &&
           n <= (hsize_t)(rows > 0 ? rows : 0);
  int64_t *v = NULL;
  if (ok && n) {
    v = malloc((size_t)n * sizeof *v);
    ok = v && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    for (hsize_t i = 0; ok && i < n; i++)
      ok = v[i] >= base && v[i] <= rows && (i == 0 || v[i] >= v[i - 1]);
  }
  if (ft >= 0) H5Tclose(ft);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (!ok) {
    free(v);
    return -1;
  }
  *starts = v;
  *n_out = (size_t)n;
  return 0;
}

/* /refine/round_start: where each refine round's rows begin. */
static int rounds_read(fmt_results *r, hid_t fid, char *err, size_t errlen) {
  int64_t base = (int64_t)r->n_points * (r->replicates > 0 ? r->replicates : 0);
  size_t n = 0;
  if (fmt__round_starts_read(fid, base, (int64_t)(r->n_runs + r->n_skipped), &r->round_start,
                             &n)) {
    snprintf(err, errlen, "%s: /refine/round_start is not an ascending list of /runs rows past "
             "the sweep's own; the file is damaged", r->path);
    return -1;
  }
  r->n_rounds = n;
  return 0;
}

/* Each run's stage (fmt_run.stage) in a file whose /runs has no stage
 * column: from its replicate and its row (= its run id) among the rounds'
 * first rows. A stored stage column is read as it is. */
static void stages_fill(fmt_results *r) {
  if (r->stage_stored) return;
  for (size_t i = 0; i < r->n_runs; i++) {
    fmt_run *run = &r->runs[i];
    int64_t screening = fmt_screening_replicates(r->replicates, r->screen_up_to);
    if (r->replicates <= 0 || (run->replicate >= 0 && run->replicate < screening)) {
      run->stage = FMT_STAGE_SCREENING;
      continue;
    }
    size_t lo = 0, hi = r->n_rounds; /* rounds starting at or before the row */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (r->round_start[mid] <= run->run) lo = mid + 1;
      else hi = mid;
    }
    run->stage = lo ? (int32_t)(lo > INT32_MAX ? INT32_MAX : lo) : 1;
  }
}

int fmt_axis_is_scenario(const fmt_results *r, size_t axis) {
  return r->scenario && axis < r->n_axes && r->scenario[axis];
}

void fmt_results_free(fmt_results *r) {
  fmt__rr_labels_free(r);
  free(r->scenario);
  if (r->axes)
    for (size_t a = 0; a < r->n_axes; a++) free(r->axes[a]);
  free(r->axes);
  free(r->path);
  free(r->tool_version);
  free(r->point_ids);
  free(r->values);
  free(r->times);
  free(r->runs);
  free(r->point_of_run);
  free(r->round_start);
  memset(r, 0, sizeof *r);
}

