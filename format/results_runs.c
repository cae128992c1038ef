/*
 * results_runs.c — /runs read in blocks into one small row per finished
 * run, every value that indexes an array or counts as evidence checked, no
 * run counted twice.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"

/* ------------------------------------------------------------------------ */
/* /runs                                                                     */
/* ------------------------------------------------------------------------ */

/* Packed buffer row for /runs: every column we use, by name. */
typedef struct run_row {
  long long run, point, replicate, done, outcome, passed_slo, ticks, stage;
  unsigned long long seed;
  double recovery_ms, amplification, goodput_during, goodput_after, peak_queue, baseline_queue;
  double collapse_ms, collapse_watch_ms;
  double latency_window_ms, user_hold_ms, clear_ms, user_recovery_ms;
} run_row;

enum col_as { AS_LLONG, AS_ULLONG, AS_DOUBLE };

typedef struct run_column {
  const char *name;
  size_t offset;
  enum col_as as;
  int required;
} run_column;

#define RC(f) offsetof(run_row, f)
static const run_column run_columns[] = {
    {"run", RC(run), AS_LLONG, 0},
    {"point", RC(point), AS_LLONG, 1},
    {"replicate", RC(replicate), AS_LLONG, 0},
    {"seed", RC(seed), AS_ULLONG, 0},
    {"done", RC(done), AS_LLONG, 0},
    {"ticks", RC(ticks), AS_LLONG, 0},
    {"outcome", RC(outcome), AS_LLONG, 1},
    {"passed_slo", RC(passed_slo), AS_LLONG, 0},
    {"recovery_ms", RC(recovery_ms), AS_DOUBLE, 1},
    {"amplification", RC(amplification), AS_DOUBLE, 0},
    {"goodput_during", RC(goodput_during), AS_DOUBLE, 0},
    {"goodput_after", RC(goodput_after), AS_DOUBLE, 0},
    {"peak_queue", RC(peak_queue), AS_DOUBLE, 0},
    {"baseline_queue", RC(baseline_queue), AS_DOUBLE, 0},
    {"collapse_ms", RC(collapse_ms), AS_DOUBLE, 0},
    {"collapse_watch_ms", RC(collapse_watch_ms), AS_DOUBLE, 0},
    {"latency_window_ms", RC(latency_window_ms), AS_DOUBLE, 0},
    {"user_hold_ms", RC(user_hold_ms), AS_DOUBLE, 0},
    {"clear_ms", RC(clear_ms), AS_DOUBLE, 0},
    {"user_recovery_ms", RC(user_recovery_ms), AS_DOUBLE, 0},
    {"stage", RC(stage), AS_LLONG, 0}, /* absent in older files: derived (results_read.c) */
};
enum { N_RUN_COLUMNS = sizeof run_columns / sizeof run_columns[0] };

/* The index of a column in run_columns, by name (stable however the table
 * grows). */
static size_t col_of(const char *name) {
  for (size_t c = 0; c < N_RUN_COLUMNS; c++)
    if (!strcmp(run_columns[c].name, name)) return c;
  return 0;
}

static void run_row_clear(run_row *b) {
  memset(b, 0, sizeof *b);
  b->outcome = -1;
  b->done = 1;
  b->ticks = -1;
  b->recovery_ms = b->amplification = b->goodput_during = b->goodput_after = NAN;
  b->peak_queue = b->baseline_queue = NAN;
  b->collapse_ms = b->collapse_watch_ms = NAN;
  b->latency_window_ms = b->user_hold_ms = b->clear_ms = b->user_recovery_ms = NAN;
}

/* Grows r->runs / r->point_of_run to hold one more run: memory follows the
 * runs actually found, never a row count the file merely declares. */
static int runs_reserve(fmt_results *r, size_t *cap) {
  if (r->n_runs < *cap) return 0;
  size_t n = *cap ? *cap * 2 : 1024;
  fmt_run *v = realloc(r->runs, n * sizeof *v);
  if (!v) return -1;
  r->runs = v;
  size_t *w = realloc(r->point_of_run, n * sizeof *w);
  if (!w) return -1;
  r->point_of_run = w;
  *cap = n;
  return 0;
}

/* Unwritten rows of /runs read as its fill value, so that must say "not
 * done" (a fill value of finished runs would turn one stored chunk into
 * millions of runs); without a done column every row must be written. */
static int runs_fill_check(const fmt_results *r, hid_t ds, int has_done, char *err,
                           size_t errlen) {
  hid_t dcpl = H5Dget_create_plist(ds);
  H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
  H5D_space_status_t space = H5D_SPACE_STATUS_ERROR;
  int rc = -1;
  if (dcpl < 0 || H5Pfill_value_defined(dcpl, &fv) < 0 || H5Dget_space_status(ds, &space) < 0) {
    snprintf(err, errlen, "%s: cannot read the storage properties of %s", r->path, DSET_RUNS);
  } else if (!has_done && space != H5D_SPACE_STATUS_ALLOCATED) {
    snprintf(err, errlen, "%s: %s has no 'done' column but rows that were never written (they "
             "would read as runs); the file is damaged", r->path, DSET_RUNS);
  } else if (has_done && fv == H5D_FILL_VALUE_USER_DEFINED) {
    long long done = 0;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof done);
    if (mt < 0 || H5Tinsert(mt, "done", 0, H5T_NATIVE_LLONG) < 0 ||
        H5Pget_fill_value(dcpl, mt, &done) < 0)
      snprintf(err, errlen, "%s: cannot read the fill value of %s", r->path, DSET_RUNS);
    else if (done != 0)
      snprintf(err, errlen, "%s: %s has a fill value with done = %lld: rows never written would "
               "count as finished runs; the file is damaged", r->path, DSET_RUNS, done);
    else
      rc = 0;
    if (mt >= 0) H5Tclose(mt);
  } else {
    rc = 0;
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  return rc;
}

static int cmp_i64_pair(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  if (a[0] != b[0]) return (a[0] > b[0]) - (a[0] < b[0]);
  return (a[1] > b[1]) - (a[1] < b[1]);
}

/* A run counted twice is a verdict on fake evidence: refuses a run id or a
 * (point, replicate) pair that appears twice, a replicate outside the
 * declared count, and a point with more finished runs than the file
 * declares (replicates; when the file does not say, /runs rows / points). */
static int runs_unique_check(const fmt_results *r, int has_run, int has_replicate,
                             int64_t replicates, int64_t appended, char *err, size_t errlen) {
  /* A refined file (refine appends fresh replicates R0, R0+1, ... after the
   * sweep's own rows): a point may hold its appended replicates too, never
   * more than there are appended rows. */
  int64_t limit = replicates + appended;
  size_t n = r->n_runs;
  if (n == 0) return 0;
  int64_t *v = malloc(n * 2 * sizeof *v);
  size_t *per = calloc(r->n_points, sizeof *per);
  int rc = -1;
  if (!v || !per) {
    snprintf(err, errlen, "%s: out of memory checking %s", r->path, DSET_RUNS);
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    size_t p = r->point_of_run[i];
    if (++per[p] > (size_t)limit) {
      snprintf(err, errlen, "%s: %s: point %lld has more than the %lld finished runs the file "
               "declares; the file is damaged", r->path, DSET_RUNS, (long long)r->point_ids[p],
               (long long)limit);
      goto out;
    }
  }
  if (has_replicate) {
    for (size_t i = 0; i < n; i++) {
      int64_t rep = r->runs[i].replicate;
      if (rep < 0 || rep >= limit) {
        snprintf(err, errlen, "%s: %s: point %lld has replicate %lld; the file declares %lld "
                 "replicates (0 to %lld)", r->path, DSET_RUNS, (long long)r->runs[i].point,
                 (long long)rep, (long long)limit, (long long)limit - 1);
        goto out;
      }
      v[2 * i] = (int64_t)r->point_of_run[i];
      v[2 * i + 1] = rep;
    }
    qsort(v, n, 2 * sizeof *v, cmp_i64_pair);
    for (size_t i = 1; i < n; i++)
      if (v[2 * i] == v[2 * i - 2] && v[2 * i + 1] == v[2 * i - 1]) {
        snprintf(err, errlen, "%s: %s: point %lld replicate %lld appears twice; the file is "
                 "damaged", r->path, DSET_RUNS, (long long)r->point_ids[v[2 * i]],
                 (long long)v[2 * i + 1]);
        goto out;
      }
  }
  if (has_run) {
    for (size_t i = 0; i < n; i++) v[i] = r->runs[i].run;
    qsort(v, n, sizeof *v, fmt__rr_cmp_i64);
    for (size_t i = 1; i < n; i++)
      if (v[i] == v[i - 1]) {
        snprintf(err, errlen, "%s: %s: run id %lld appears twice; the file is damaged", r->path,
                 DSET_RUNS, (long long)v[i]);
        goto out;
      }
  }
  rc = 0;
out:
  free(v);
  free(per);
  return rc;
}

/* replicates: what the file declares (its root attribute), 0 when it does
 * not say. */
/* Whether a written row of /runs is a run this file can hold: an outcome
 * code, a recovery time where it recovered, a run id in range, the seed of
 * its own coordinates and (where ids are rows) the run id of them. */
static int run_row_check(const fmt_results *r, const run_row *b, unsigned long long row,
                         const int *has, int ids_are_rows, int64_t replicates, int refined,
                         char *err, size_t errlen) {
  if (b->outcome < ENG_OUTCOME_RECOVERED || b->outcome > OUTCOME_MAX) {
    snprintf(err, errlen, "%s: %s row %llu: outcome %lld is not an outcome code (0 to %d)",
             r->path, DSET_RUNS, row, (long long)b->outcome, OUTCOME_MAX);
    return -1;
  }
  if (b->outcome == ENG_OUTCOME_RECOVERED && !(b->recovery_ms >= 0 && isfinite(b->recovery_ms))) {
    snprintf(err, errlen, "%s: %s row %llu: a recovered run needs a recovery_ms >= 0, got %g",
             r->path, DSET_RUNS, row, b->recovery_ms);
    return -1;
  }
  if (has[0] && (b->run < 0 || b->run >= (long long)SWP_MAX_RUNS)) {
    snprintf(err, errlen, "%s: %s row %llu: run id %lld is out of range", r->path, DSET_RUNS,
             row, (long long)b->run);
    return -1;
  }
  /* A run is the run of its seed: a row copied from another run (or
   * damaged) has the seed of its origin, not of its own coordinates. */
  if (has[2] && has[3] && r->has_master_seed && b->replicate >= 0 &&
      (uint64_t)b->seed != swp_run_seed(r->master_seed, r->crn, b->point, b->replicate)) {
    snprintf(err, errlen, "%s: %s row %llu: seed %llu is not the seed of point %lld "
             "replicate %lld (derived from master_seed): the row is a copy of another run, "
             "or damaged", r->path, DSET_RUNS, row, (unsigned long long)b->seed,
             (long long)b->point, (long long)b->replicate);
    return -1;
  }
  if (ids_are_rows && has[0] && has[2] && b->run < (long long)r->n_points * replicates &&
      (b->replicate < 0 || b->replicate >= replicates ||
       b->run != b->point * replicates + b->replicate)) {
    snprintf(err, errlen, "%s: %s row %llu: run %lld is not point %lld replicate %lld of "
             "a sweep of %lld replicates", r->path, DSET_RUNS, row, (long long)b->run,
             (long long)b->point, (long long)b->replicate, (long long)replicates);
    return -1;
  }
  /* The stored stage (absent in older files): screening is the sweep's own
   * replicates (and sequential screening's, below screen_up_to) only (rows past them in a file refine never touched are the
   * checks' above and runs_unique_check's to name). */
  if (has[col_of("stage")] &&
      (b->stage < FMT_STAGE_SCREENING || b->stage > (long long)SWP_MAX_RUNS ||
       (refined && b->stage == FMT_STAGE_SCREENING && replicates > 0 && has[2] &&
        b->replicate >= fmt_screening_replicates(replicates, r->screen_up_to)))) {
    snprintf(err, errlen, "%s: %s row %llu: stage %lld is not a stage of replicate %lld (0: "
             "screening, k >= 1: refine round k); the file is damaged", r->path, DSET_RUNS, row,
             (long long)b->stage, (long long)b->replicate);
    return -1;
  }
  return 0;
}

int fmt__rr_runs_read(fmt_results *r, hid_t fid, int64_t replicates, int refined, char *err,
                     size_t errlen) {
  int rc = -1;
  hid_t ft, sp, mt = -1, msp = -1;
  hsize_t n = 0;
  run_row *buf = NULL;
  int64_t *index = NULL;
  int has[N_RUN_COLUMNS] = {0};
  hid_t ds = fmt__rr_table_open(r, fid, DSET_RUNS, &ft, &sp, &n, err, errlen);
  if (ds < 0) return -1;
  mt = H5Tcreate(H5T_COMPOUND, sizeof(run_row));
  if (mt < 0) goto h5fail;
  for (size_t c = 0; c < N_RUN_COLUMNS; c++) {
    const run_column *col = &run_columns[c];
    int got = fmt__rr_column_add(mt, ft, col->name, col->offset, col->as);
    if (got == -1) goto h5fail;
    if (got != 1 && col->required) {
      snprintf(err, errlen, "%s: not a stormsweep result file (%s has no numeric '%s' column)",
               r->path, DSET_RUNS, col->name);
      goto done;
    }
    has[c] = got == 1; /* an optional column that is not a number counts as absent */
  }
  if (fmt__rr_rows_fit(r->path, DSET_RUNS, n, (double)RUN_BYTES, err, errlen)) goto done;
  if (runs_fill_check(r, ds, has[4], err, errlen)) goto done;
  if (replicates <= 0) /* undeclared: the table's own rows per point */
    replicates = (int64_t)((n + r->n_points - 1) / (r->n_points ? r->n_points : 1));
  if (replicates <= 0) replicates = 1;
  buf = malloc(RUN_BLOCK * sizeof *buf);
  if (!buf) goto oom;
  /* Sorted (id, index) pairs when point ids are not simply their rows. */
  int ids_are_rows = 1;
  for (size_t p = 0; p < r->n_points; p++)
    if (r->point_ids[p] != (int64_t)p) ids_are_rows = 0;
  if (!ids_are_rows) {
    index = malloc((r->n_points ? r->n_points : 1) * 2 * sizeof *index);
    if (!index) goto oom;
    for (size_t p = 0; p < r->n_points; p++) {
      index[2 * p] = r->point_ids[p];
      index[2 * p + 1] = (int64_t)p;
    }
    qsort(index, r->n_points, 2 * sizeof *index, fmt__rr_cmp_id_index);
  }
  /* Nothing stored yet (a sweep stopped before its first run, or a table
   * that only declares its rows): every row is fill, so skip reading it. */
  if (n > 0 && H5Dget_storage_size(ds) == 0) {
    r->n_skipped = (size_t)n;
    n = 0;
  }
  size_t cap = 0;
  for (hsize_t start = 0; start < n; start += RUN_BLOCK) {
    hsize_t count = n - start < RUN_BLOCK ? n - start : RUN_BLOCK;
    for (hsize_t i = 0; i < count; i++) run_row_clear(&buf[i]);
    msp = H5Screate_simple(1, &count, NULL);
    if (msp < 0 || H5Sselect_hyperslab(sp, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
        H5Dread(ds, mt, msp, sp, H5P_DEFAULT, buf) < 0)
      goto h5fail;
    H5Sclose(msp);
    msp = -1;
    for (hsize_t i = 0; i < count; i++) {
      const run_row *b = &buf[i];
      unsigned long long row = (unsigned long long)(start + i);
      if (!b->done) {
        r->n_skipped++; /* a row not written yet */
        continue;
      }
      /* A written row must be placeable: a damaged table is an error, not
       * a silently smaller sweep. */
      long p = -1;
      if (ids_are_rows) {
        if (b->point >= 0 && (unsigned long long)b->point < r->n_points) p = (long)b->point;
      } else {
        int64_t key[2] = {b->point, 0};
        int64_t *hit = bsearch(key, index, r->n_points, 2 * sizeof *index, fmt__rr_cmp_id_index);
        if (hit) p = (long)hit[1];
      }
      if (p < 0) {
        snprintf(err, errlen, "%s: %s row %llu: point %lld is not in %s", r->path, DSET_RUNS,
                 row, (long long)b->point, DSET_POINTS);
        goto done;
      }
      if (run_row_check(r, b, row, has, ids_are_rows, replicates, refined, err, errlen))
        goto done;
      if (runs_reserve(r, &cap)) goto oom;
      fmt_run *run = &r->runs[r->n_runs];
      run->run = has[0] ? b->run : (int64_t)row;
      run->point = b->point;
      run->replicate = has[2] ? b->replicate : -1;
      run->seed = has[3] ? (uint64_t)b->seed : 0;
      run->outcome = (int32_t)b->outcome;
      run->recovery_ms = run->outcome == ENG_OUTCOME_RECOVERED ? b->recovery_ms : NAN;
      run->passed_slo = has[7] ? (b->passed_slo != 0) : -1;
      run->amplification = has[9] ? b->amplification : NAN;
      run->goodput_during = has[10] ? b->goodput_during : NAN;
      run->goodput_after = has[11] ? b->goodput_after : NAN;
      run->peak_queue = has[12] ? b->peak_queue : NAN;
      run->baseline_queue = has[13] ? b->baseline_queue : NAN;
      run->ticks = has[5] && b->ticks >= 0 && b->ticks <= MAX_TICKS ? b->ticks : -1;
      /* Hostile values read as "not seen": times are finite and >= 0. */
      run->collapse_ms = has[14] && b->collapse_ms >= 0 && isfinite(b->collapse_ms) ? b->collapse_ms : NAN;
      run->collapse_watch_ms =
          has[15] && b->collapse_watch_ms >= 0 && isfinite(b->collapse_watch_ms) ? b->collapse_watch_ms : NAN;
      /* Hostile values read as unknown: times are finite and >= 0. */
      const double *user[4] = {&b->latency_window_ms, &b->user_hold_ms, &b->clear_ms,
                               &b->user_recovery_ms};
      double *to[4] = {&run->latency_window_ms, &run->user_hold_ms, &run->clear_ms,
                       &run->user_recovery_ms};
      static const char *const names[4] = {"latency_window_ms", "user_hold_ms", "clear_ms",
                                           "user_recovery_ms"};
      for (int k = 0; k < 4; k++)
        *to[k] = has[col_of(names[k])] && *user[k] >= 0 && isfinite(*user[k]) ? *user[k] : NAN;
      run->stage = has[col_of("stage")]
                       ? (int32_t)(b->stage > INT32_MAX ? INT32_MAX : b->stage)
                       : FMT_STAGE_SCREENING;
      r->point_of_run[r->n_runs] = (size_t)p;
      r->n_runs++;
    }
  }
  r->stage_stored = has[col_of("stage")];
  int64_t base = (int64_t)r->n_points * replicates;
  int64_t appended = refined && (int64_t)n > base ? (int64_t)n - base : 0;
  if (runs_unique_check(r, has[0], has[2], replicates, appended, err, errlen)) goto done;
  /* Callers index these even when no run is written. */
  if (!r->runs && runs_reserve(r, &cap)) goto oom;
  rc = 0;
  goto done;
h5fail:
  snprintf(err, errlen, "%s: cannot read %s", r->path, DSET_RUNS);
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory reading %s", r->path, DSET_RUNS);
done:
  free(buf);
  free(index);
  if (msp >= 0) H5Sclose(msp);
  if (mt >= 0) H5Tclose(mt);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
  return rc;
}

