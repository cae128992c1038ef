/*
 * append.c — refine's fresh runs: rows appended past the sweep's own, with
 * their point and replicate in their columns and every run-indexed dataset
 * grown with them, as one commit; and the rows not done yet, which the next
 * session runs first.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fmt_results.h"
#include "writer.h"

#define FORMAT_NAME FMT_FORMAT_NAME
#define FORMAT_VERSION FMT_FORMAT_VERSION

/* ---- appending runs (refine) ---- */

int64_t fmt_out_rows(const fmt_out *o) { return o->n_runs; }

/* The rounds /refine/round_start records so far (0 when none). */
static int64_t rounds_recorded(hid_t f) {
  hsize_t n = 0;
  if (H5Lexists(f, "refine", H5P_DEFAULT) <= 0 ||
      H5Lexists(f, "refine/round_start", H5P_DEFAULT) <= 0)
    return 0;
  hid_t ds = H5Dopen2(f, "refine/round_start", H5P_DEFAULT);
  hid_t sp = ds < 0 ? -1 : H5Dget_space(ds);
  if (sp < 0 || H5Sget_simple_extent_dims(sp, &n, NULL) != 1) n = 0;
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  return (int64_t)n;
}

/* Appends first_row to /refine/round_start: the round's rows start there. */
static int record_round(hid_t f, int64_t first_row) {
  hid_t g = H5Lexists(f, "refine", H5P_DEFAULT) > 0
                ? H5Gopen2(f, "refine", H5P_DEFAULT)
                : H5Gcreate2(f, "refine", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  hid_t ds;
  hsize_t n = 0;
  if (H5Lexists(g, "round_start", H5P_DEFAULT) > 0) {
    ds = H5Dopen2(g, "round_start", H5P_DEFAULT);
    hid_t sp = ds < 0 ? -1 : H5Dget_space(ds);
    if (sp < 0 || H5Sget_simple_extent_dims(sp, &n, NULL) != 1) n = (hsize_t)-1;
    if (sp >= 0) H5Sclose(sp);
    hsize_t n1 = n + 1;
    if (ds >= 0 && (n == (hsize_t)-1 || H5Dset_extent(ds, &n1) < 0)) {
      H5Dclose(ds);
      ds = -1;
    }
  } else {
    ds = fmt__dataset_1d(g, "round_start", H5T_STD_I64LE, 1, 64, NULL, 0, 1);
  }
  int rc = ds < 0 ? -1 : 0;
  if (!rc) {
    hid_t fs = H5Dget_space(ds);
    hsize_t one = 1;
    hid_t ms = H5Screate_simple(1, &one, NULL);
    rc = fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &n, NULL, &one, NULL) < 0 ||
         H5Dwrite(ds, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, &first_row) < 0;
    if (fs >= 0) H5Sclose(fs);
    if (ms >= 0) H5Sclose(ms);
    H5Dclose(ds);
  }
  H5Gclose(g);
  return rc;
}

/* Grows every per-run dataset by n rows and writes the new /runs rows (not
 * done, with their point, replicate and seed) and /run values; the flush
 * after it makes the append one commit. An append cut off before that flush
 * leaves the file as it was (the new extent is metadata, written only by
 * the flush), so the rows are simply planned again. */
static int fmt_out_append_q(fmt_out *o, int64_t n, const int64_t *point,
                              const int32_t *replicate, int64_t *first, char *err,
                              size_t errlen) {
  *first = o->n_runs;
  if (o->failed) {
    swp_seterr(err, errlen, "%s: an earlier write failed", o->path);
    return -1;
  }
  if (n <= 0) return 0;
  if (o->n_runs + n > SWP_MAX_RUNS) {
    swp_seterr(err, errlen, "%s: appending %lld runs would pass %lld rows", o->path,
               (long long)n, (long long)SWP_MAX_RUNS);
    return -1;
  }
  if (o->n_pend && fmt__out_commit(o, err, errlen)) return -1;
  int64_t n0 = o->n_runs, n1 = n0 + n;
  uint8_t *d = realloc(o->done, (size_t)n1);
  run_row *rows = malloc((size_t)n * sizeof *rows);
  int64_t *ids = malloc((size_t)n * sizeof *ids);
  if (!d || !rows || !ids) {
    if (d) o->done = d;
    free(rows);
    free(ids);
    swp_seterr(err, errlen, "%s: out of memory appending %lld runs", o->path, (long long)n);
    return -1;
  }
  o->done = d;
  memset(o->done + n0, 0, (size_t)n);
  /* The rows' stage, stored with them: this append is refine round k,
   * but a replicate below screen_up_to is sequential screening's second
   * stage, screening like the sweep's own. */
  int64_t round = rounds_recorded(o->file) + 1;
  int64_t screening = fmt_screening_replicates(o->sw->replicates, o->sw->screen_up_to);
  for (int64_t i = 0; i < n; i++) {
    fmt__runs_fill_row(&rows[i]);
    rows[i].stage = replicate[i] < screening ? FMT_STAGE_SCREENING
                                             : (int32_t)(round < INT32_MAX ? round : INT32_MAX);
    rows[i].run = ids[i] = n0 + i;
    rows[i].point = point[i];
    rows[i].replicate = replicate[i];
    rows[i].s.seed = swp_run_seed(o->master_seed, o->sw->crn, point[i], replicate[i]);
  }
  /* The journal first, durably: a file cut off after its append then still
   * has a journal that knows every row it holds. */
  if (o->journal && !o->replaying &&
      fmt_journal_append_rows(o->journal, n0, n, point, replicate, err, errlen)) {
    free(rows);
    free(ids);
    fmt__out_fail(o);
    return -1;
  }
  hsize_t dim = (hsize_t)n1, dims2[2] = {(hsize_t)n1, (hsize_t)o->ticks_n};
  hsize_t start = (hsize_t)n0, cnt = (hsize_t)n;
  const char *step = "extending /runs";
  int rc = H5Dset_extent(o->runs, &dim) < 0;
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    step = "extending /ticks";
    rc = o->ticks[m] >= 0 && H5Dset_extent(o->ticks[m], dims2) < 0;
  }
  if (!rc) step = "extending /timing", rc = H5Dset_extent(o->wall, &dim) < 0 ||
                                         H5Dset_extent(o->thread, &dim) < 0;
  if (!rc) {
    H5Sclose(o->runs_space);
    H5Sclose(o->timing_space);
    o->runs_space = o->timing_space = -1;
    step = "/runs";
    rc = fmt__out_spaces(o);
  }
  hid_t ms = H5Screate_simple(1, &cnt, NULL);
  if (!rc)
    rc = H5Sselect_hyperslab(o->runs_space, H5S_SELECT_SET, &start, NULL, &cnt, NULL) < 0 ||
         H5Dwrite(o->runs, o->runs_mem, ms, o->runs_space, H5P_DEFAULT, rows) < 0;
  if (!rc) {
    step = "/ticks/run";
    hid_t g = H5Gopen2(o->file, "ticks", H5P_DEFAULT);
    hid_t run_ds = g < 0 ? -1 : H5Dopen2(g, FMT_COORD_RUN, H5P_DEFAULT);
    hid_t fs = -1;
    rc = run_ds < 0 || H5Dset_extent(run_ds, &dim) < 0 || (fs = H5Dget_space(run_ds)) < 0 ||
         H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL) < 0 ||
         H5Dwrite(run_ds, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, ids) < 0;
    if (fs >= 0) H5Sclose(fs);
    if (run_ds >= 0) H5Dclose(run_ds);
    /* The run coordinates grow with it; outcome is written at commit. */
    const swp_sweep *sw = o->sw;
    for (size_t i = 0; i < FMT_RUN_COORDS + sw->n_axes && !rc; i++) {
      char axis[160];
      const char *name = i < FMT_RUN_COORDS ? fmt_run_coord_names[i]
                         : fmt_layout_axis_coord(sw->axes[i - FMT_RUN_COORDS].key, axis,
                                                 sizeof axis);
      step = "extending the /ticks coordinates";
      hid_t ds = i == 3 ? o->outcome : H5Dopen2(g, name, H5P_DEFAULT);
      rc = ds < 0 || H5Dset_extent(ds, &dim) < 0;
      if (ds >= 0 && i != 3) H5Dclose(ds);
    }
    for (int w = 0; w < FMT_WIDE_COUNT && !rc; w++) {
      hsize_t d3[3] = {(hsize_t)n1, (hsize_t)fmt_wide_rows((fmt_wide)w, o->ticks_n),
                       (hsize_t)o->wide_n[w]};
      if (o->wide[w] >= 0) rc = H5Dset_extent(o->wide[w], d3) < 0;
    }
    double *numbers = rc ? NULL : fmt__points_numbers(sw);
    if (!rc) {
      step = "/ticks coordinates";
      rc = !numbers || fmt__write_run_coords(o, g, sw, numbers, n0, n, point, replicate);
    }
    free(numbers);
    if (g >= 0) H5Gclose(g);
  }
  if (ms >= 0) H5Sclose(ms);
  if (!rc) {
    step = "root attributes";
    int32_t zero = 0;
    rc = fmt_attr_set_num(o->file, "n_runs", H5T_NATIVE_INT64, &n1) ||
         fmt_attr_set_num(o->file, "complete", H5T_NATIVE_INT32, &zero);
  }
  if (!rc) step = "/refine/round_start", rc = record_round(o->file, n0);
  char why[256] = "";
  if (!rc) step = "reserve", rc = fmt__out_reserve(o, why, sizeof why);
  if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
  free(rows);
  free(ids);
  if (rc) {
    if (!why[0]) fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: appending %lld runs (%s): %s", o->path, (long long)n, step, why);
    fmt__out_fail(o);
    return -1;
  }
  o->n_runs = n1;
  return 0;
}

/* Rows not done: the sweep's own runs derive (point, replicate) from the
 * row; appended rows carry them in their columns. */
static int fmt_out_pending_q(fmt_out *o, fmt_run_ref **refs, int64_t *n, char *err,
                               size_t errlen) {
  *refs = NULL;
  *n = 0;
  int64_t count = 0;
  for (int64_t r = 0; r < o->n_runs; r++) count += !o->done[r];
  if (!count) return 0;
  fmt_run_ref *l = malloc((size_t)count * sizeof *l);
  typedef struct pr {
    int64_t point;
    int32_t replicate;
  } pr;
  hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(pr));
  H5Tinsert(mt, "point", offsetof(pr, point), H5T_NATIVE_INT64);
  H5Tinsert(mt, "replicate", offsetof(pr, replicate), H5T_NATIVE_INT32);
  int64_t extra = o->n_runs - o->base_runs;
  pr *cols = extra > 0 ? malloc((size_t)extra * sizeof *cols) : NULL;
  int rc = !l || (extra > 0 && !cols);
  if (!rc && extra > 0) {
    hsize_t start = (hsize_t)o->base_runs, cnt = (hsize_t)extra;
    hid_t fs = H5Dget_space(o->runs), ms = H5Screate_simple(1, &cnt, NULL);
    rc = fs < 0 || ms < 0 ||
         H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL) < 0 ||
         H5Dread(o->runs, mt, ms, fs, H5P_DEFAULT, cols) < 0;
    if (fs >= 0) H5Sclose(fs);
    if (ms >= 0) H5Sclose(ms);
  }
  H5Tclose(mt);
  int64_t k = 0;
  for (int64_t r = 0; r < o->n_runs && !rc; r++) {
    if (o->done[r]) continue;
    l[k].run = r;
    if (r < o->base_runs) {
      l[k].point = r / o->replicates;
      l[k].replicate = (int32_t)(r % o->replicates);
    } else {
      l[k].point = cols[r - o->base_runs].point;
      l[k].replicate = cols[r - o->base_runs].replicate;
    }
    k++;
  }
  free(cols);
  if (rc) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: reading the appended rows of /runs: %s", o->path, why);
    free(l);
    return -1;
  }
  *refs = l;
  *n = k;
  return 0;
}

int fmt_out_append(fmt_out *o, int64_t n, const int64_t *point, const int32_t *replicate,
                     int64_t *first, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_append_q(o, n, point, replicate, first, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_pending(fmt_out *o, fmt_run_ref **refs, int64_t *n, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_pending_q(o, refs, n, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}
