/*
 * reader.c — reading a stormsweep result file (SPEC §4) for the analysis.
 * This is the only analysis module that knows the HDF5 layout; the names it
 * relies on are collected below so following a layout change means editing
 * one place. The writer documents the layout in sweeps/h5out.c; this reader
 * needs from it:
 *
 *   /            attributes format = "stormsweep-results" (string) and
 *                format_version (integer, <= ANA_FORMAT_VERSION); uses
 *                tool_version, master_seed, tick_ms, complete and sweep_text
 *                (the effective sweep INI) when present
 *   /points      compound table: "point" (integer id) and one numeric column
 *                per grid axis, named by the setting key, in axis order
 *   /points_text optional: "point" and one string column per axis, the value
 *                as written ("inf", "full", "guarded"), used for labels
 *   /runs        compound table, one row per run; needs "point", "outcome"
 *                (integer, or enum on any integer: recovered = 0, slow = 1,
 *                metastable = 2) and "recovery_ms" (NaN unless recovered);
 *                uses "done" (0 = not written yet: skipped), "run" (row of
 *                /ticks; default: the row of /runs), "replicate", "seed",
 *                "passed_slo", "ticks" (the run's own tick count),
 *                "amplification", "goodput_during", "goodput_after",
 *                "peak_queue", "baseline_queue" when present
 *   /ticks/<m>   int32 (runs x ticks), one per metric (queue_depth,
 *                successes, open_breakers, ...); values past a run's own
 *                tick count are ignored
 *
 * Columns are matched by name, never by position, through HDF5 compound
 * conversion, so the writer may add columns or reorder them freely.
 *
 * Memory: /points and /runs are read whole into compact arrays (one small
 * row per run, in blocks of RUN_BLOCK rows through a packed buffer). /ticks
 * is never read whole: ana_band_read reads one run's row at a time (a block
 * of ticks at a time for very long rows) and keeps only per-bin means, so its
 * memory is O(replicates x bins + block), whatever the file size.
 *
 * Scenario times (horizon, fault start and clearance) are not columns: they
 * come from re-parsing the stored sweep text with the sweeps library (the
 * writer guarantees it parses back to the same sweep). A file whose sweep
 * text cannot be parsed is still analysed; its recovery quantiles then say
 * ">horizon" without a number.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "ana.h"
#include "ana_h5.h"
#include "swp.h"

/* ---- layout names (keep in step with sweeps/h5out.c) ---- */
#define ATTR_FORMAT "format"
#define ATTR_FORMAT_VERSION "format_version"
#define ATTR_TOOL_VERSION "tool_version"
#define ATTR_MASTER_SEED "master_seed"
#define ATTR_SWEEP_TEXT "sweep_text"
#define ATTR_TICK_MS "tick_ms"
#define ATTR_COMPLETE "complete"
#define DSET_POINTS "/points"
#define DSET_POINTS_TEXT "/points_text"
#define DSET_RUNS "/runs"
#define GROUP_TICKS "/ticks"
#define COL_POINT "point"

enum { RUN_BLOCK = 4096, TICK_BLOCK = 1 << 20, MAX_BAND_CELLS = 1 << 24 };

/* ------------------------------------------------------------------------ */
/* Small HDF5 helpers                                                        */
/* ------------------------------------------------------------------------ */

static void quiet_hdf5(void) {
  /* HDF5 prints its error stack by default; our messages say it in one line. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* Reads a string attribute (fixed or variable length) of obj; malloc'd or
 * NULL when absent / not a string. */
static char *attr_string(hid_t obj, const char *name) {
  if (H5Aexists(obj, name) <= 0) return NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return NULL;
  char *out = NULL;
  hid_t ft = H5Aget_type(a);
  hid_t sp = H5Aget_space(a);
  if (ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_STRING &&
      H5Sget_simple_extent_npoints(sp) == 1) {
    if (H5Tis_variable_str(ft) > 0) {
      hid_t mt = H5Tcopy(H5T_C_S1);
      H5Tset_size(mt, H5T_VARIABLE);
      H5Tset_cset(mt, H5Tget_cset(ft));
      char *v = NULL;
      if (H5Aread(a, mt, &v) >= 0 && v) {
        out = strdup(v);
        H5free_memory(v);
      }
      H5Tclose(mt);
    } else {
      size_t n = H5Tget_size(ft);
      hid_t mt = H5Tcopy(H5T_C_S1);
      H5Tset_size(mt, n + 1);
      H5Tset_strpad(mt, H5T_STR_NULLTERM);
      out = calloc(n + 2, 1);
      if (out && H5Aread(a, mt, out) < 0) {
        free(out);
        out = NULL;
      }
      H5Tclose(mt);
    }
  }
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return out;
}

/* Reads a numeric scalar attribute as double; 0 ok, -1 absent or not a
 * number. */
static int attr_double(hid_t obj, const char *name, double *v) {
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  int rc = -1;
  hid_t ft = H5Aget_type(a);
  hid_t sp = H5Aget_space(a);
  H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
  if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && sp >= 0 &&
      H5Sget_simple_extent_npoints(sp) == 1)
    rc = H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0 ? 0 : -1;
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return rc;
}

static int attr_u64(hid_t obj, const char *name, uint64_t *v) {
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  int rc = -1;
  hid_t ft = H5Aget_type(a);
  if (ft >= 0 && H5Tget_class(ft) == H5T_INTEGER)
    rc = H5Aread(a, H5T_NATIVE_ULLONG, v) >= 0 ? 0 : -1;
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return rc;
}

/* Builds a memory enum over native long long with the names and values of
 * the file enum ft, so an enum column converts to our integer by name. */
static hid_t enum_as_llong(hid_t ft) {
  hid_t mt = H5Tenum_create(H5T_NATIVE_LLONG);
  hid_t super = H5Tget_super(ft);
  int n = H5Tget_nmembers(ft);
  for (int i = 0; i < n && mt >= 0; i++) {
    unsigned char raw[16] = {0};
    long long value = 0;
    char *name = H5Tget_member_name(ft, (unsigned)i);
    if (!name || H5Tget_member_value(ft, (unsigned)i, raw) < 0) {
      H5free_memory(name);
      H5Tclose(mt);
      mt = -1;
      break;
    }
    /* The value is stored in the enum's base type: convert it in place. */
    unsigned char conv[64] = {0};
    memcpy(conv, raw, sizeof raw);
    if (H5Tconvert(super, H5T_NATIVE_LLONG, 1, conv, NULL, H5P_DEFAULT) >= 0)
      memcpy(&value, conv, sizeof value);
    H5Tenum_insert(mt, name, &value);
    H5free_memory(name);
  }
  H5Tclose(super);
  return mt;
}

/* Column of a compound file type: its member type class, or H5T_NO_CLASS
 * when absent. */
static H5T_class_t column_class(hid_t ft, const char *name, hid_t *member_type) {
  int i = H5Tget_member_index(ft, name);
  if (i < 0) return H5T_NO_CLASS;
  hid_t mt = H5Tget_member_type(ft, (unsigned)i);
  H5T_class_t c = H5Tget_class(mt);
  if (member_type)
    *member_type = mt;
  else
    H5Tclose(mt);
  return c;
}

/* Adds column name to the memory compound mt at offset as a long long (for
 * integer and enum columns) or double (float columns). Returns 1 if added,
 * 0 if the file lacks it or it is not numeric, -1 on error. */
static int column_add(hid_t mt, hid_t ft, const char *name, size_t offset, int as_integer) {
  hid_t member = -1;
  H5T_class_t c = column_class(ft, name, &member);
  if (c == H5T_NO_CLASS) return 0;
  hid_t use = -1;
  int owned = 0;
  if (c == H5T_ENUM && as_integer) {
    use = enum_as_llong(member);
    owned = 1;
  } else if (c == H5T_INTEGER || c == H5T_FLOAT) {
    use = as_integer ? H5T_NATIVE_LLONG : H5T_NATIVE_DOUBLE;
  }
  H5Tclose(member);
  if (use < 0) return 0;
  herr_t rc = H5Tinsert(mt, name, offset, use);
  if (owned) H5Tclose(use);
  return rc < 0 ? -1 : 1;
}

/* ------------------------------------------------------------------------ */
/* /points                                                                   */
/* ------------------------------------------------------------------------ */

static int points_read(ana_results *r, hid_t fid, char *err, size_t errlen) {
  if (H5Lexists(fid, DSET_POINTS, H5P_DEFAULT) <= 0) {
    snprintf(err, errlen, "%s: not a stormsweep result file (no %s table)", r->path, DSET_POINTS);
    return -1;
  }
  int rc = -1;
  hid_t ds = H5Dopen2(fid, DSET_POINTS, H5P_DEFAULT);
  hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hid_t mt = -1;
  double *row = NULL;
  if (ft < 0 || sp < 0 || H5Tget_class(ft) != H5T_COMPOUND || H5Sget_simple_extent_ndims(sp) != 1 ||
      column_class(ft, COL_POINT, NULL) == H5T_NO_CLASS) {
    snprintf(err, errlen, "%s: not a stormsweep result file (%s is not a table with a '%s' column)",
             r->path, DSET_POINTS, COL_POINT);
    goto done;
  }
  hsize_t n = 0;
  H5Sget_simple_extent_dims(sp, &n, NULL);
  int nm = H5Tget_nmembers(ft);
  r->n_points = (size_t)n;
  r->axes = calloc((size_t)nm, sizeof *r->axes);
  if (!r->axes) goto oom;
  /* Every numeric column other than "point" is an axis, in file order. */
  for (int i = 0; i < nm; i++) {
    char *name = H5Tget_member_name(ft, (unsigned)i);
    if (!name) goto oom;
    hid_t mtype = H5Tget_member_type(ft, (unsigned)i);
    H5T_class_t c = H5Tget_class(mtype);
    H5Tclose(mtype);
    if (strcmp(name, COL_POINT) != 0 && (c == H5T_FLOAT || c == H5T_INTEGER))
      r->axes[r->n_axes++] = strdup(name);
    H5free_memory(name);
  }
  size_t rowsize = (r->n_axes + 1) * sizeof(double);
  mt = H5Tcreate(H5T_COMPOUND, rowsize);
  if (mt < 0 || H5Tinsert(mt, COL_POINT, 0, H5T_NATIVE_DOUBLE) < 0) goto h5fail;
  for (size_t a = 0; a < r->n_axes; a++)
    if (H5Tinsert(mt, r->axes[a], (a + 1) * sizeof(double), H5T_NATIVE_DOUBLE) < 0) goto h5fail;
  size_t np = r->n_points ? r->n_points : 1;
  row = malloc(np * rowsize);
  r->point_ids = malloc(np * sizeof *r->point_ids);
  r->values = malloc(np * (r->n_axes ? r->n_axes : 1) * sizeof *r->values);
  r->times = malloc(np * sizeof *r->times);
  if (!row || !r->point_ids || !r->values || !r->times) goto oom;
  if (n > 0 && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, row) < 0) goto h5fail;
  for (size_t p = 0; p < r->n_points; p++) {
    r->point_ids[p] = (int64_t)row[p * (r->n_axes + 1)];
    for (size_t a = 0; a < r->n_axes; a++)
      r->values[p * r->n_axes + a] = row[p * (r->n_axes + 1) + a + 1];
    r->times[p] = (ana_point_times){NAN, NAN, NAN, NAN};
  }
  rc = 0;
  goto done;
h5fail:
  snprintf(err, errlen, "%s: cannot read %s", r->path, DSET_POINTS);
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory reading %s", r->path, DSET_POINTS);
done:
  free(row);
  if (mt >= 0) H5Tclose(mt);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
  return rc;
}

static int cmp_id_index(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

long ana_results_point_index(const ana_results *r, int64_t id) {
  /* Points are normally stored in id order with id == row: try that first. */
  if (id >= 0 && (uint64_t)id < r->n_points && r->point_ids[id] == id) return (long)id;
  for (size_t p = 0; p < r->n_points; p++)
    if (r->point_ids[p] == id) return (long)p;
  return -1;
}

/* ------------------------------------------------------------------------ */
/* /runs                                                                     */
/* ------------------------------------------------------------------------ */

/* Packed buffer row for /runs: every column we use, by name. */
typedef struct run_row {
  long long run, point, replicate, seed, done, outcome, passed_slo, ticks;
  double recovery_ms, amplification, goodput_during, goodput_after, peak_queue, baseline_queue;
} run_row;

static int runs_read(ana_results *r, hid_t fid, char *err, size_t errlen) {
  if (H5Lexists(fid, DSET_RUNS, H5P_DEFAULT) <= 0) {
    snprintf(err, errlen, "%s: not a stormsweep result file (no %s table)", r->path, DSET_RUNS);
    return -1;
  }
  int rc = -1;
  hid_t ds = H5Dopen2(fid, DSET_RUNS, H5P_DEFAULT);
  hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hid_t mt = -1, msp = -1;
  run_row *buf = NULL;
  int64_t *index = NULL;
  if (ft < 0 || sp < 0 || H5Tget_class(ft) != H5T_COMPOUND ||
      H5Sget_simple_extent_ndims(sp) != 1) {
    snprintf(err, errlen, "%s: not a stormsweep result file (%s is not a table)", r->path,
             DSET_RUNS);
    goto done;
  }
  static const char *const required[] = {"point", "outcome", "recovery_ms"};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    if (column_class(ft, required[i], NULL) == H5T_NO_CLASS) {
      snprintf(err, errlen, "%s: not a stormsweep result file (%s has no '%s' column)", r->path,
               DSET_RUNS, required[i]);
      goto done;
    }
  mt = H5Tcreate(H5T_COMPOUND, sizeof(run_row));
  if (mt < 0) goto h5fail;
  int has_run = 0, has_rep = 0, has_seed = 0, has_pass = 0, has_ticks = 0;
  int has_amp = 0, has_gd = 0, has_ga = 0, has_peak = 0, has_base = 0;
  if ((has_run = column_add(mt, ft, "run", offsetof(run_row, run), 1)) < 0 ||
      column_add(mt, ft, "point", offsetof(run_row, point), 1) < 0 ||
      (has_rep = column_add(mt, ft, "replicate", offsetof(run_row, replicate), 1)) < 0 ||
      (has_seed = column_add(mt, ft, "seed", offsetof(run_row, seed), 1)) < 0 ||
      column_add(mt, ft, "done", offsetof(run_row, done), 1) < 0 ||
      (has_ticks = column_add(mt, ft, "ticks", offsetof(run_row, ticks), 1)) < 0 ||
      column_add(mt, ft, "outcome", offsetof(run_row, outcome), 1) < 0 ||
      (has_pass = column_add(mt, ft, "passed_slo", offsetof(run_row, passed_slo), 1)) < 0 ||
      column_add(mt, ft, "recovery_ms", offsetof(run_row, recovery_ms), 0) < 0 ||
      (has_amp = column_add(mt, ft, "amplification", offsetof(run_row, amplification), 0)) < 0 ||
      (has_gd = column_add(mt, ft, "goodput_during", offsetof(run_row, goodput_during), 0)) < 0 ||
      (has_ga = column_add(mt, ft, "goodput_after", offsetof(run_row, goodput_after), 0)) < 0 ||
      (has_peak = column_add(mt, ft, "peak_queue", offsetof(run_row, peak_queue), 0)) < 0 ||
      (has_base = column_add(mt, ft, "baseline_queue", offsetof(run_row, baseline_queue), 0)) < 0)
    goto h5fail;

  hsize_t n = 0;
  H5Sget_simple_extent_dims(sp, &n, NULL);
  size_t cap = n ? (size_t)n : 1;
  r->runs = malloc(cap * sizeof *r->runs);
  r->point_of_run = malloc(cap * sizeof *r->point_of_run);
  buf = malloc(RUN_BLOCK * sizeof *buf);
  if (!r->runs || !r->point_of_run || !buf) goto oom;
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
    qsort(index, r->n_points, 2 * sizeof *index, cmp_id_index);
  }

  for (hsize_t start = 0; start < n; start += RUN_BLOCK) {
    hsize_t count = n - start < RUN_BLOCK ? n - start : RUN_BLOCK;
    for (hsize_t i = 0; i < count; i++) {
      run_row *b = &buf[i];
      memset(b, 0, sizeof *b);
      b->outcome = -1;
      b->done = 1;
      b->ticks = -1;
      b->recovery_ms = b->amplification = b->goodput_during = b->goodput_after = NAN;
      b->peak_queue = b->baseline_queue = NAN;
    }
    msp = H5Screate_simple(1, &count, NULL);
    if (msp < 0 || H5Sselect_hyperslab(sp, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
        H5Dread(ds, mt, msp, sp, H5P_DEFAULT, buf) < 0)
      goto h5fail;
    H5Sclose(msp);
    msp = -1;
    for (hsize_t i = 0; i < count; i++) {
      const run_row *b = &buf[i];
      long p = -1;
      if (ids_are_rows) {
        if (b->point >= 0 && (unsigned long long)b->point < r->n_points) p = (long)b->point;
      } else {
        int64_t key[2] = {b->point, 0};
        int64_t *hit = bsearch(key, index, r->n_points, 2 * sizeof *index, cmp_id_index);
        if (hit) p = (long)hit[1];
      }
      if (p < 0 || !b->done || b->outcome < ANA_RECOVERED || b->outcome > ANA_METASTABLE) {
        r->n_skipped++; /* a row not written yet, or one we cannot place */
        continue;
      }
      ana_run *run = &r->runs[r->n_runs];
      run->run = has_run ? b->run : (int64_t)(start + i);
      run->point = b->point;
      run->replicate = has_rep ? b->replicate : -1;
      run->seed = has_seed ? (uint64_t)b->seed : 0;
      run->outcome = (int32_t)b->outcome;
      run->recovery_ms = run->outcome == ANA_RECOVERED ? b->recovery_ms : NAN;
      run->passed_slo = has_pass ? (int32_t)b->passed_slo : -1;
      run->amplification = has_amp ? b->amplification : NAN;
      run->goodput_during = has_gd ? b->goodput_during : NAN;
      run->goodput_after = has_ga ? b->goodput_after : NAN;
      run->peak_queue = has_peak ? b->peak_queue : NAN;
      run->baseline_queue = has_base ? b->baseline_queue : NAN;
      run->ticks = has_ticks ? b->ticks : -1;
      r->point_of_run[r->n_runs] = (size_t)p;
      r->n_runs++;
    }
  }
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

/* ------------------------------------------------------------------------ */
/* Labels from /points_text                                                  */
/* ------------------------------------------------------------------------ */

enum { LABEL_LEN = 64 };

static void labels_free(ana_results *r) {
  if (!r->labels) return;
  for (size_t a = 0; a < r->n_axes; a++) {
    if (!r->labels[a]) continue;
    for (size_t p = 0; p < r->n_points; p++) free(r->labels[a][p]);
    free(r->labels[a]);
  }
  free(r->labels);
  r->labels = NULL;
}

/* Reads each axis's string column of /points_text (same rows as /points).
 * Optional: any problem just leaves the labels to ana_value_format. */
static void labels_read(ana_results *r, hid_t fid) {
  if (r->n_axes == 0 || r->n_points == 0 || H5Lexists(fid, DSET_POINTS_TEXT, H5P_DEFAULT) <= 0)
    return;
  hid_t ds = H5Dopen2(fid, DSET_POINTS_TEXT, H5P_DEFAULT);
  hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, LABEL_LEN);
  H5Tset_strpad(str, H5T_STR_NULLTERM);
  char *buf = malloc(r->n_points * LABEL_LEN);
  int64_t *ids = malloc(r->n_points * sizeof *ids);
  hsize_t n = 0;
  int ok = ds >= 0 && ft >= 0 && sp >= 0 && buf && ids && H5Tget_class(ft) == H5T_COMPOUND &&
           H5Sget_simple_extent_ndims(sp) == 1;
  if (ok) H5Sget_simple_extent_dims(sp, &n, NULL);
  ok = ok && n == r->n_points;
  if (ok) {
    hid_t it = H5Tcreate(H5T_COMPOUND, sizeof(int64_t));
    ok = H5Tinsert(it, COL_POINT, 0, H5T_NATIVE_INT64) >= 0 &&
         H5Dread(ds, it, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids) >= 0;
    H5Tclose(it);
    for (size_t p = 0; ok && p < r->n_points; p++)
      if (ids[p] != r->point_ids[p]) ok = 0;
  }
  if (ok) r->labels = calloc(r->n_axes, sizeof *r->labels);
  for (size_t a = 0; ok && r->labels && a < r->n_axes; a++) {
    hid_t member = -1;
    if (column_class(ft, r->axes[a], &member) != H5T_STRING) continue;
    H5Tclose(member);
    hid_t mt = H5Tcreate(H5T_COMPOUND, LABEL_LEN);
    int got = H5Tinsert(mt, r->axes[a], 0, str) >= 0 &&
              H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
    H5Tclose(mt);
    if (!got) continue;
    r->labels[a] = calloc(r->n_points, sizeof *r->labels[a]);
    for (size_t p = 0; r->labels[a] && p < r->n_points; p++) {
      buf[p * LABEL_LEN + LABEL_LEN - 1] = '\0';
      r->labels[a][p] = strdup(buf + p * LABEL_LEN);
    }
  }
  free(buf);
  free(ids);
  H5Tclose(str);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
}

/* ------------------------------------------------------------------------ */
/* Scenario times (and labels, when /points_text is absent) from the sweep   */
/* ------------------------------------------------------------------------ */

static void sweep_apply(ana_results *r, const char *text) {
  swp_sweep sw;
  char msg[512];
  swp_sweep_init(&sw);
  if (swp_sweep_parse_string(&sw, text, "stored sweep", msg, sizeof msg) != 0 ||
      swp_sweep_check(&sw, msg, sizeof msg) != 0) {
    swp_sweep_free(&sw);
    return;
  }
  if (isnan(r->tick_ms)) r->tick_ms = sw.tick_ms;
  if (isnan(r->slo_ms)) r->slo_ms = sw.base.slo_ms;
  /* Labels only when the stored grid is the table's grid. */
  int same_axes = sw.n_axes == r->n_axes && (int64_t)r->n_points <= sw.n_points;
  for (size_t a = 0; same_axes && a < r->n_axes; a++)
    if (strcmp(sw.axes[a].key, r->axes[a]) != 0) same_axes = 0;
  size_t *idx = malloc((sw.n_axes ? sw.n_axes : 1) * sizeof *idx);
  int make_labels = same_axes && idx && !r->labels; /* /points_text wins */
  if (make_labels) {
    r->labels = calloc(r->n_axes ? r->n_axes : 1, sizeof *r->labels);
    for (size_t a = 0; r->labels && a < r->n_axes; a++)
      r->labels[a] = calloc(r->n_points ? r->n_points : 1, sizeof *r->labels[a]);
  }
  for (size_t p = 0; p < r->n_points; p++) {
    int64_t id = r->point_ids[p];
    if (id < 0 || id >= sw.n_points) continue;
    eng_config cfg;
    if (swp_sweep_point_config(&sw, id, &cfg, msg, sizeof msg) != 0) continue;
    ana_point_times *t = &r->times[p];
    t->horizon_ms = cfg.horizon_ms;
    t->fault_start_ms = eng_config_fault_start_ms(&cfg);
    t->fault_clear_ms = eng_config_fault_clear_ms(&cfg);
    t->censor_ms = t->horizon_ms - t->fault_clear_ms;
    if (make_labels && r->labels) {
      swp_sweep_point_indexes(&sw, id, idx);
      for (size_t a = 0; a < r->n_axes; a++)
        if (r->labels[a]) r->labels[a][p] = strdup(sw.axes[a].values[idx[a]]);
    }
  }
  free(idx);
  swp_sweep_free(&sw);
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

hid_t ana_h5_open(const char *path, unsigned flags, int *format_version, char *err,
                  size_t errlen) {
  quiet_hdf5();
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  fclose(probe);
  if (H5Fis_hdf5(path) <= 0) {
    snprintf(err, errlen, "%s: not an HDF5 file (expected a stormsweep result file)", path);
    return -1;
  }
  hid_t fid = H5Fopen(path, flags, H5P_DEFAULT);
  if (fid < 0) {
    snprintf(err, errlen, "%s: cannot open HDF5 file%s", path,
             flags == H5F_ACC_RDWR ? " for writing" : "");
    return -1;
  }
  hid_t root = H5Gopen2(fid, "/", H5P_DEFAULT);
  char *format = attr_string(root, ATTR_FORMAT);
  double version = NAN;
  int has_version = attr_double(root, ATTR_FORMAT_VERSION, &version) == 0;
  H5Gclose(root);
  if (!format || strcmp(format, ANA_FORMAT_NAME) != 0) {
    if (format)
      snprintf(err, errlen, "%s: not a stormsweep result file (format is '%.100s', expected '%s')",
               path, format, ANA_FORMAT_NAME);
    else
      snprintf(err, errlen, "%s: not a stormsweep result file (no '%s' attribute)", path,
               ATTR_FORMAT);
    free(format);
    H5Fclose(fid);
    return -1;
  }
  free(format);
  if (!has_version || version != floor(version) || version < 1) {
    snprintf(err, errlen, "%s: not a stormsweep result file (missing or invalid '%s')", path,
             ATTR_FORMAT_VERSION);
    H5Fclose(fid);
    return -1;
  }
  if (version > ANA_FORMAT_VERSION) {
    snprintf(err, errlen,
             "%s: format_version %.0f is newer than this stormsweep understands (%d); use a newer "
             "stormsweep",
             path, version, ANA_FORMAT_VERSION);
    H5Fclose(fid);
    return -1;
  }
  if (format_version) *format_version = (int)version;
  return fid;
}

int ana_results_read(ana_results *r, const char *path, char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  r->tick_ms = r->slo_ms = NAN;
  r->path = strdup(path);
  if (!r->path) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  hid_t fid = ana_h5_open(path, H5F_ACC_RDONLY, &r->format_version, err, errlen);
  if (fid < 0) goto fail;
  hid_t root = H5Gopen2(fid, "/", H5P_DEFAULT);
  r->tool_version = attr_string(root, ATTR_TOOL_VERSION);
  attr_u64(root, ATTR_MASTER_SEED, &r->master_seed);
  attr_double(root, ATTR_TICK_MS, &r->tick_ms);
  double complete = NAN;
  r->complete = attr_double(root, ATTR_COMPLETE, &complete) == 0 ? complete != 0 : -1;
  char *sweep_text = attr_string(root, ATTR_SWEEP_TEXT);
  H5Gclose(root);

  if (points_read(r, fid, err, errlen) != 0 || runs_read(r, fid, err, errlen) != 0) {
    free(sweep_text);
    H5Fclose(fid);
    goto fail;
  }
  labels_read(r, fid);
  if (sweep_text) sweep_apply(r, sweep_text);
  free(sweep_text);

  /* Tick count from any /ticks dataset (they share one time axis). */
  if (H5Lexists(fid, GROUP_TICKS, H5P_DEFAULT) > 0) {
    static const char *const probe[] = {"queue_depth", "successes", NULL};
    for (size_t i = 0; probe[i] && r->n_ticks == 0; i++) {
      char name[128];
      snprintf(name, sizeof name, "%s/%s", GROUP_TICKS, probe[i]);
      if (H5Lexists(fid, name, H5P_DEFAULT) <= 0) continue;
      hid_t ds = H5Dopen2(fid, name, H5P_DEFAULT);
      hid_t sp = H5Dget_space(ds);
      hsize_t dims[2] = {0, 0};
      if (H5Sget_simple_extent_ndims(sp) == 2) H5Sget_simple_extent_dims(sp, dims, NULL);
      r->n_ticks = (int64_t)dims[1];
      H5Sclose(sp);
      H5Dclose(ds);
    }
  }
  H5Fclose(fid);
  return 0;
fail:
  ana_results_free(r);
  return -1;
}

void ana_results_free(ana_results *r) {
  labels_free(r);
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
  memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------------ */
/* /ticks                                                                    */
/* ------------------------------------------------------------------------ */

int ana_metric_exists(const ana_results *r, const char *metric) {
  char err[256];
  hid_t fid = ana_h5_open(r->path, H5F_ACC_RDONLY, NULL, err, sizeof err);
  if (fid < 0) return -1;
  char name[256];
  snprintf(name, sizeof name, "%s/%s", GROUP_TICKS, metric);
  int rc = H5Lexists(fid, GROUP_TICKS, H5P_DEFAULT) > 0 && H5Lexists(fid, name, H5P_DEFAULT) > 0;
  H5Fclose(fid);
  return rc;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

void ana_band_free(ana_band *b) {
  free(b->t_ms);
  free(b->p05);
  free(b->p50);
  free(b->p95);
  free(b->mean);
  memset(b, 0, sizeof *b);
}

int ana_band_read(ana_band *b, const ana_results *r, const char *metric, size_t point_index,
                  size_t max_bins, char *err, size_t errlen) {
  memset(b, 0, sizeof *b);
  int rc = -1;
  hid_t fid = -1, ds = -1, sp = -1, msp = -1;
  int64_t *rows = NULL;
  int32_t *block = NULL;
  double *cell = NULL, *col = NULL;
  char name[256];
  snprintf(name, sizeof name, "%s/%s", GROUP_TICKS, metric);

  size_t nrows = 0;
  rows = malloc((r->n_runs ? r->n_runs : 1) * sizeof *rows);
  if (!rows) goto oom;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->point_of_run[i] == point_index) rows[nrows++] = r->runs[i].run;
  qsort(rows, nrows, sizeof *rows, cmp_i64);
  if (nrows == 0) {
    snprintf(err, errlen, "%s: point %lld has no finished runs", r->path,
             (long long)r->point_ids[point_index]);
    goto done;
  }

  fid = ana_h5_open(r->path, H5F_ACC_RDONLY, NULL, err, errlen);
  if (fid < 0) goto done;
  if (H5Lexists(fid, GROUP_TICKS, H5P_DEFAULT) <= 0 || H5Lexists(fid, name, H5P_DEFAULT) <= 0) {
    snprintf(err, errlen, "%s: no %s dataset", r->path, name);
    goto done;
  }
  ds = H5Dopen2(fid, name, H5P_DEFAULT);
  sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hsize_t dims[2] = {0, 0};
  if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 2) {
    snprintf(err, errlen, "%s: %s is not a (runs x ticks) dataset", r->path, name);
    goto done;
  }
  H5Sget_simple_extent_dims(sp, dims, NULL);
  if ((hsize_t)rows[nrows - 1] >= dims[0] || rows[0] < 0) {
    snprintf(err, errlen, "%s: run %lld has no row in %s (%llu rows)", r->path,
             (long long)rows[nrows - 1], name, (unsigned long long)dims[0]);
    goto done;
  }
  /* A point whose horizon is shorter than the file's uses only its own
   * ticks (the rest of its rows is fill). */
  int64_t ticks = (int64_t)dims[1], own = -1;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->point_of_run[i] == point_index && r->runs[i].ticks > own) own = r->runs[i].ticks;
  const ana_point_times *pt = &r->times[point_index];
  if (own < 0 && isfinite(pt->horizon_ms) && isfinite(r->tick_ms) && r->tick_ms > 0)
    own = (int64_t)ceil(pt->horizon_ms / r->tick_ms - 1e-9);
  if (own > 0 && own < ticks) ticks = own;
  if (ticks <= 0) {
    snprintf(err, errlen, "%s: %s has no ticks", r->path, name);
    goto done;
  }
  if (max_bins == 0) max_bins = 1;
  size_t cells_cap = MAX_BAND_CELLS / nrows;
  if (cells_cap < 16) cells_cap = 16;
  if (max_bins > cells_cap) max_bins = cells_cap;
  int64_t per = (ticks + (int64_t)max_bins - 1) / (int64_t)max_bins;
  size_t nbins = (size_t)((ticks + per - 1) / per);
  b->nbins = nbins;
  b->n_runs = nrows;
  b->ticks_per_bin = per;

  /* Bin means of every run (rows x bins), filled one run at a time. */
  cell = malloc(nrows * nbins * sizeof *cell);
  int64_t blen = ticks < TICK_BLOCK ? ticks : (TICK_BLOCK / per) * per;
  if (blen <= 0) blen = per;
  block = malloc((size_t)blen * sizeof *block);
  col = malloc(nrows * sizeof *col);
  b->t_ms = malloc(nbins * sizeof *b->t_ms);
  b->p05 = malloc(nbins * sizeof *b->p05);
  b->p50 = malloc(nbins * sizeof *b->p50);
  b->p95 = malloc(nbins * sizeof *b->p95);
  b->mean = malloc(nbins * sizeof *b->mean);
  if (!cell || !block || !col || !b->t_ms || !b->p05 || !b->p50 || !b->p95 || !b->mean) goto oom;
  for (size_t i = 0; i < nrows; i++) {
    double *out = cell + i * nbins;
    for (size_t k = 0; k < nbins; k++) out[k] = 0.0;
    for (int64_t t0 = 0; t0 < ticks; t0 += blen) {
      hsize_t count[2] = {1, (hsize_t)(ticks - t0 < blen ? ticks - t0 : blen)};
      hsize_t start[2] = {(hsize_t)rows[i], (hsize_t)t0};
      hsize_t mdim = count[1];
      msp = H5Screate_simple(1, &mdim, NULL);
      if (msp < 0 || H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
          H5Dread(ds, H5T_NATIVE_INT32, msp, sp, H5P_DEFAULT, block) < 0) {
        snprintf(err, errlen, "%s: cannot read %s row %lld", r->path, name, (long long)rows[i]);
        goto done;
      }
      H5Sclose(msp);
      msp = -1;
      for (hsize_t k = 0; k < count[1]; k++) out[(size_t)((t0 + (int64_t)k) / per)] += block[k];
    }
    for (size_t k = 0; k < nbins; k++) {
      int64_t lo = (int64_t)k * per, hi = lo + per < ticks ? lo + per : ticks;
      out[k] /= (double)(hi - lo);
    }
  }
  double tick = isfinite(r->tick_ms) && r->tick_ms > 0 ? r->tick_ms : 1.0;
  for (size_t k = 0; k < nbins; k++) {
    int64_t lo = (int64_t)k * per, hi = lo + per < ticks ? lo + per : ticks;
    double sum = 0.0;
    for (size_t i = 0; i < nrows; i++) {
      col[i] = cell[i * nbins + k];
      sum += col[i];
    }
    ana_sort_doubles(col, nrows);
    b->t_ms[k] = 0.5 * (double)(lo + hi) * tick;
    b->p05[k] = ana_quantile_sorted(col, nrows, 0.05);
    b->p50[k] = ana_quantile_sorted(col, nrows, 0.50);
    b->p95[k] = ana_quantile_sorted(col, nrows, 0.95);
    b->mean[k] = sum / (double)nrows;
  }
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory reading %s", r->path, name);
done:
  if (rc != 0) ana_band_free(b);
  free(rows);
  free(block);
  free(cell);
  free(col);
  if (msp >= 0) H5Sclose(msp);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (fid >= 0) H5Fclose(fid);
  return rc;
}
