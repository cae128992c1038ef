/*
 * create.c — a new result file: its skeleton (root attributes, /points,
 * /points_text, /axes, /runs, /ticks with its coordinates, /timing), every
 * object sized up front, built under a fresh name and renamed into place
 * whole; and the slice attributes of a slice's file. The layout is
 * layout.h's.
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

#include "writer.h"

#define FORMAT_NAME FMT_FORMAT_NAME
#define FORMAT_VERSION FMT_FORMAT_VERSION

/* ---- HDF5 helpers ---- */

/* A dataset of n elements written in blocks by fill(i0, count, buf). */
typedef void (*fill_fn)(const void *user, hsize_t i0, hsize_t count, void *buf);

static int write_blocks(hid_t ds, hid_t mem_type, size_t elem, hsize_t n, fill_fn fill,
                        const void *user) {
  const hsize_t block = 65536;
  void *buf = malloc((size_t)(n < block ? (n ? n : 1) : block) * elem);
  if (!buf) return -1;
  hid_t fs = H5Dget_space(ds);
  int rc = 0;
  for (hsize_t i0 = 0; i0 < n && !rc; i0 += block) {
    hsize_t cnt = n - i0 < block ? n - i0 : block;
    fill(user, i0, cnt, buf);
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &i0, NULL, &cnt, NULL);
    if (H5Dwrite(ds, mem_type, ms, fs, H5P_DEFAULT, buf) < 0) rc = -1;
    H5Sclose(ms);
  }
  H5Sclose(fs);
  free(buf);
  return rc;
}

static void fill_run_index(const void *user, hsize_t i0, hsize_t n, void *buf) {
  (void)user;
  int64_t *v = buf;
  for (hsize_t i = 0; i < n; i++) v[i] = (int64_t)(i0 + i);
}

static void fill_time(const void *user, hsize_t i0, hsize_t n, void *buf) {
  double tick_ms = *(const double *)user;
  double *v = buf;
  for (hsize_t i = 0; i < n; i++) v[i] = (double)(i0 + i) * tick_ms;
}

/* early: allocate (and fill) the storage now, so later writes never change
 * the dataset's metadata. */
hid_t fmt__dataset_1d(hid_t loc, const char *name, hid_t type, hsize_t n, hsize_t chunk,
                        const void *fill, int early, int grow) {
  /* Per-run datasets may grow: refine appends runs (append.c). */
  hsize_t maxn = chunk && grow ? H5S_UNLIMITED : n;
  hid_t sp = H5Screate_simple(1, &n, &maxn);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunk) {
    if (chunk > n) chunk = n ? n : 1;
    H5Pset_chunk(dcpl, 1, &chunk);
  }
  if (early) H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  if (fill) H5Pset_fill_value(dcpl, type, fill);
  hid_t ds = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(sp);
  return ds;
}

/* ---- /points, /points_text, /axes ---- */

typedef struct points_ctx {
  const swp_sweep *sw;
  size_t rowsize, *text_off, text_width;
  int text;
  const double *numbers; /* fmt__points_numbers */
} points_ctx;

static void fill_points(const void *user, hsize_t i0, hsize_t n, void *buf) {
  const points_ctx *pc = user;
  const swp_sweep *sw = pc->sw;
  size_t idx[SWP_MAX_AXES];
  for (hsize_t i = 0; i < n; i++) {
    char *row = (char *)buf + i * pc->rowsize;
    int64_t p = (int64_t)(i0 + i);
    memcpy(row, &p, 8);
    if (pc->text) {
      swp_sweep_point_indexes(sw, p, idx);
      for (size_t a = 0; a < sw->n_axes; a++) {
        char *dst = row + pc->text_off[a];
        memset(dst, 0, pc->text_off[a + 1] - pc->text_off[a]);
        memcpy(dst, sw->axes[a].values[idx[a]], strlen(sw->axes[a].values[idx[a]]));
      }
    } else {
      const double *v = pc->numbers + (size_t)p * (sw->n_axes ? sw->n_axes : 1);
      for (size_t a = 0; a < sw->n_axes; a++) memcpy(row + 8 + 8 * a, &v[a], 8);
    }
  }
}

static int write_points(hid_t file, const swp_sweep *sw) {
  /* Numbers: point + one float64 per axis (file and memory layouts agree). */
  size_t rowsize = 8 + 8 * sw->n_axes;
  hid_t t = H5Tcreate(H5T_COMPOUND, rowsize);
  H5Tinsert(t, "point", 0, H5T_NATIVE_INT64);
  for (size_t a = 0; a < sw->n_axes; a++) H5Tinsert(t, sw->axes[a].key, 8 + 8 * a, H5T_NATIVE_DOUBLE);
  hsize_t chunk = (hsize_t)(sw->n_points < 4096 ? sw->n_points : 4096);
  hid_t ds = fmt__dataset_1d(file, "points", t, (hsize_t)sw->n_points, chunk, NULL, 0, 0);
  double *numbers = fmt__points_numbers(sw);
  points_ctx pc = {sw, rowsize, NULL, 0, 0, numbers};
  int rc = ds < 0 || !numbers
               ? -1
               : write_blocks(ds, t, rowsize, (hsize_t)sw->n_points, fill_points, &pc);
  free(numbers);
  if (ds >= 0) H5Dclose(ds);
  H5Tclose(t);
  if (rc) return -1;

  /* Text: point + one fixed-length string per axis. */
  size_t *off = malloc((sw->n_axes + 1) * sizeof *off);
  if (!off) return -1;
  off[0] = 8;
  for (size_t a = 0; a < sw->n_axes; a++) {
    size_t w = 1;
    for (size_t v = 0; v < sw->axes[a].count; v++)
      if (strlen(sw->axes[a].values[v]) + 1 > w) w = strlen(sw->axes[a].values[v]) + 1;
    off[a + 1] = off[a] + w;
  }
  rowsize = off[sw->n_axes];
  t = H5Tcreate(H5T_COMPOUND, rowsize);
  H5Tinsert(t, "point", 0, H5T_NATIVE_INT64);
  for (size_t a = 0; a < sw->n_axes; a++) {
    hid_t s = H5Tcopy(H5T_C_S1);
    H5Tset_size(s, off[a + 1] - off[a]);
    H5Tset_strpad(s, H5T_STR_NULLTERM);
    H5Tinsert(t, sw->axes[a].key, off[a], s);
    H5Tclose(s);
  }
  ds = fmt__dataset_1d(file, "points_text", t, (hsize_t)sw->n_points, chunk, NULL, 0, 0);
  pc = (points_ctx){sw, rowsize, off, 0, 1, NULL};
  rc = ds < 0 ? -1 : write_blocks(ds, t, rowsize, (hsize_t)sw->n_points, fill_points, &pc);
  if (ds >= 0) H5Dclose(ds);
  H5Tclose(t);
  free(off);
  if (rc) return -1;

  /* /axes/<key>: values in order, with their numbers. */
  hid_t g = H5Gcreate2(file, "axes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  for (size_t a = 0; a < sw->n_axes && !rc; a++) {
    const swp_axis *ax = &sw->axes[a];
    hsize_t n = ax->count;
    hid_t st = fmt_h5_str_type(0), sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, ax->key, st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double *nums = malloc(ax->count * sizeof *nums);
    if (d < 0 || !nums || H5Dwrite(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, ax->values) < 0)
      rc = -1;
    int by_index = nums ? swp_axis_numbers(sw, a, nums) : 0;
    if (!rc) rc = fmt_attr_put_nums(d, "numbers", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, nums, ax->count);
    if (!rc) rc = fmt_attr_put_i32(d, "position", (int32_t)a);
    /* Only where it applies, so files of numeric axes stay as they were. */
    if (!rc && by_index) rc = fmt_attr_put_i32(d, FMT_ATTR_NUMBERS_ARE_INDEXES, 1);
    free(nums);
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(st);
  }
  H5Gclose(g);
  return rc;
}


/* ---- create ---- */

/* ---- create ---- */

void fmt_time_iso8601(char *buf, size_t len) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int write_root_attrs(hid_t f, const swp_sweep *sw, const char *command_line,
                            uint64_t instance) {
  char created[32];
  fmt_time_iso8601(created, sizeof created);
  char *text = swp_sweep_format(sw);
  const char **axes = malloc((sw->n_axes + 1) * sizeof *axes);
  /* The axes recommend treats as scenario (the world's), not tunables. */
  size_t scen_len = 1;
  for (size_t a = 0; a < sw->n_axes; a++) scen_len += strlen(sw->axes[a].key) + 2;
  char *scen = calloc(scen_len, 1);
  /* `metrics` lists the /ticks datasets: every metric unless record_metrics
   * or summary says otherwise. */
  const char *metrics[ENG_M_COUNT];
  size_t n_metrics = 0;
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (swp_record_is_default(sw) || swp_record_stored(sw, m))
      metrics[n_metrics++] = eng_metric_get_info((eng_metric)m)->name;
  int rc = -1;
  if (text && axes && scen) {
    for (size_t a = 0; a < sw->n_axes; a++) {
      axes[a] = sw->axes[a].key;
      if (!swp_sweep_axis_is_scenario(sw, sw->axes[a].key)) continue;
      if (*scen) strcat(scen, ", ");
      strcat(scen, sw->axes[a].key);
    }
    uint64_t seed = sw->seed;
    rc = fmt_attr_put_str(f, "format", FORMAT_NAME) || fmt_attr_put_i32(f, "format_version", FORMAT_VERSION) ||
         fmt_attr_put_str(f, "tool_version", STORMSWEEP_VERSION) ||
         fmt_attr_put_nums(f, "master_seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &seed, 1) ||
         fmt_attr_put_nums(f, FMT_ATTR_INSTANCE, H5T_STD_U64LE, H5T_NATIVE_UINT64, &instance, 1) ||
         fmt_attr_put_i32(f, "crn", sw->crn) || fmt_attr_put_i64(f, "replicates", sw->replicates) || fmt_attr_put_i64(f, "n_points", sw->n_points) ||
         fmt_attr_put_i64(f, "n_runs", swp_sweep_runs(sw)) || fmt_attr_put_i32(f, "ticks", sw->ticks) ||
         fmt_attr_put_f64(f, "tick_ms", sw->tick_ms) || fmt_attr_put_strs(f, "axes", axes, sw->n_axes) ||
         fmt_attr_put_str(f, "scenario_axes", scen) || fmt_attr_put_strs(f, "metrics", metrics, n_metrics) ||
         fmt_attr_put_str(f, "sweep_name", sw->name) || fmt_attr_put_str(f, "sweep_description", sw->description) ||
         fmt_attr_put_str(f, "sweep_text", text) || fmt_attr_put_str(f, "sweep_source", sw->source) ||
         fmt_attr_put_str(f, "sweep_source_text", sw->source_text) ||
         fmt_attr_put_str(f, "command_line", command_line) || fmt_attr_put_str(f, "created", created) ||
         fmt_attr_put_i32(f, "complete", 0)
             ? -1
             : 0;
  }
  if (!rc && !swp_record_is_default(sw)) {
    /* Only when not full with every metric: a default file stays as it was. */
    char rec[64];
    swp_record_text(sw, rec, sizeof rec);
    rc = fmt_attr_put_str(f, FMT_ATTR_RECORD, rec) || fmt_attr_put_i32(f, FMT_ATTR_ROWS, sw->rows) ||
         fmt_attr_put_f64(f, FMT_ATTR_ROW_MS, sw->rows ? swp_record_row_ms(sw) : NAN);
  }
  free(text);
  free(axes);
  free(scen);
  return rc;
}

/* The /runs fill row: done = 0, ticks -1, recovery NaN. */
void fmt__runs_fill_row(run_row *fill) {
  memset(fill, 0, sizeof *fill);
  fill->ticks = TICKS_FILL;
  fill->s.recovery_ms = NAN;
}

static int create_runs(fmt_out *o) {
  hid_t ft;
  if (fmt_layout_runs_types(&o->runs_mem, &ft)) return -1;
  run_row fill;
  fmt__runs_fill_row(&fill);
  hsize_t n = (hsize_t)o->n_runs;
  hsize_t chunk = n < RUNS_CHUNK_ROWS ? n : RUNS_CHUNK_ROWS, maxn = H5S_UNLIMITED;
  hid_t sp = H5Screate_simple(1, &n, &maxn);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  /* Every chunk allocated (and filled) now: later row writes then change
   * raw data in place and never the chunk index (see Durability). */
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  /* The fill value is given in memory layout; HDF5 converts it. */
  hid_t ffill = H5Tcopy(o->runs_mem);
  herr_t rc = H5Pset_fill_value(dcpl, ffill, &fill);
  H5Tclose(ffill);
  o->runs = rc < 0 ? -1 : H5Dcreate2(o->file, "runs", ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(sp);
  H5Tclose(ft);
  if (o->runs < 0) return -1;
  /* One line per column, for readers who only have the file. */
  char *doc = fmt_layout_runs_doc();
  if (!doc) return -1;
  int arc = fmt_attr_put_str(o->runs, "columns", doc);
  free(doc);
  return arc;
}

/* ---- /ticks (format 2: the coordinates live in the group, see layout.h) ---- */

/* Values of the run-indexed coordinates for rows [i0, i0 + n): the sweep's
 * own rows derive point and replicate from the row; appended rows (refine)
 * bring theirs. */
typedef struct coord_ctx {
  const fmt_out *o;
  int which;                 /* 0 point, 1 replicate, 2 seed, 3 + a: axis a */
  const double *axis_values; /* n_points x n_axes, /points' numbers */
  size_t n_axes;
  int crn;
  const int64_t *point;      /* appended rows: their points and replicates */
  const int32_t *replicate;
  int64_t first;             /* ... starting at this row */
} coord_ctx;

static void coord_of(const coord_ctx *c, int64_t r, int64_t *point, int32_t *rep) {
  if (c->point) {
    *point = c->point[r - c->first];
    *rep = c->replicate[r - c->first];
  } else {
    *point = r / c->o->replicates;
    *rep = (int32_t)(r % c->o->replicates);
  }
}

static void fill_coord(const void *user, hsize_t i0, hsize_t n, void *buf) {
  const coord_ctx *c = user;
  for (hsize_t i = 0; i < n; i++) {
    int64_t p;
    int32_t rep;
    coord_of(c, c->first + (int64_t)(i0 + i), &p, &rep);
    if (c->which == 0) ((int64_t *)buf)[i] = p;
    else if (c->which == 1) ((int32_t *)buf)[i] = rep;
    else if (c->which == 2) ((uint64_t *)buf)[i] = swp_run_seed(c->o->master_seed, c->crn, p, rep);
    else ((double *)buf)[i] = c->axis_values[(size_t)p * c->n_axes + (size_t)(c->which - 3)];
  }
}

/* Every point's axis values as /points stores them: the point's setting as
 * a number, or the value's index on an axis whose numbers do not tell its
 * values apart (swp_axis_numbers). */
double *fmt__points_numbers(const swp_sweep *sw) {
  size_t na = sw->n_axes ? sw->n_axes : 1;
  double *v = malloc((size_t)sw->n_points * na * sizeof *v);
  uint8_t by_index[SWP_MAX_AXES] = {0};
  for (size_t a = 0; v && a < sw->n_axes && a < SWP_MAX_AXES; a++) {
    double *nums = malloc(sw->axes[a].count * sizeof *nums);
    if (!nums) {
      free(v);
      return NULL;
    }
    by_index[a] = (uint8_t)swp_axis_numbers(sw, a, nums);
    free(nums);
  }
  size_t ix[SWP_MAX_AXES];
  for (int64_t p = 0; v && p < sw->n_points; p++) {
    eng_config cfg;
    if (swp_sweep_point_config(sw, p, &cfg, NULL, 0)) memset(&cfg, 0, sizeof cfg);
    if (sw->n_axes <= SWP_MAX_AXES) swp_sweep_point_indexes(sw, p, ix);
    for (size_t a = 0; a < sw->n_axes; a++)
      v[(size_t)p * na + a] = a < SWP_MAX_AXES && by_index[a]
                                  ? (double)ix[a]
                                  : eng_config_get_number(&cfg, sw->axes[a].key);
  }
  return v;
}

/* Writes rows [first, first + n) of every run-indexed coordinate in group g
 * (point, replicate, seed and the axes; outcome is written at commit). */
int fmt__write_run_coords(fmt_out *o, hid_t g, const swp_sweep *sw, const double *numbers,
                            int64_t first, int64_t n, const int64_t *point,
                            const int32_t *replicate) {
  coord_ctx c = {o, 0, numbers, sw->n_axes ? sw->n_axes : 1, sw->crn, point, replicate, first};
  int rc = 0;
  for (int which = 0; which < 3 + (int)sw->n_axes && !rc; which++) {
    char axis[160];
    const char *name = which < 3 ? fmt_run_coord_names[which]
                                 : fmt_layout_axis_coord(sw->axes[which - 3].key, axis,
                                                         sizeof axis);
    hid_t mt = which == 0 ? H5T_NATIVE_INT64 : which == 1 ? H5T_NATIVE_INT32
               : which == 2 ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE;
    c.which = which;
    hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t fs = ds < 0 ? -1 : H5Dget_space(ds);
    const hsize_t block = 65536;
    size_t elem = H5Tget_size(mt);
    void *buf = malloc((size_t)(n < (int64_t)block ? (n ? n : 1) : (int64_t)block) * elem);
    rc = ds < 0 || fs < 0 || !buf;
    for (hsize_t i0 = 0; i0 < (hsize_t)n && !rc; i0 += block) {
      hsize_t cnt = (hsize_t)n - i0 < block ? (hsize_t)n - i0 : block, at = (hsize_t)first + i0;
      fill_coord(&c, i0, cnt, buf);
      hid_t ms = H5Screate_simple(1, &cnt, NULL);
      rc = ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &cnt, NULL) < 0 ||
           H5Dwrite(ds, mt, ms, fs, H5P_DEFAULT, buf) < 0;
      if (ms >= 0) H5Sclose(ms);
    }
    free(buf);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
  }
  return rc ? -1 : 0;
}

/* A run-indexed coordinate: 1-D over the run scale, CF units and long_name. */
static hid_t run_coord(hid_t g, const char *name, hid_t type, hsize_t n, hid_t run_ds,
                       const char *units, const char *long_name, const void *fill, int early) {
  hid_t ds = fmt__dataset_1d(g, name, type, n, n < 65536 ? (n ? n : 1) : 65536, fill, early, 1);
  if (ds < 0) return -1;
  if (fmt_attr_put_str(ds, "units", units) || fmt_attr_put_str(ds, "long_name", long_name) ||
      H5DSattach_scale(ds, run_ds, 0) < 0) {
    H5Dclose(ds);
    return -1;
  }
  return ds;
}

/* The CF `coordinates` attribute of every per-run variable. */
static char *coords_attr(const swp_sweep *sw) {
  size_t len = 64;
  for (size_t a = 0; a < sw->n_axes; a++) len += strlen(sw->axes[a].key) + 7;
  char *s = malloc(len);
  if (!s) return NULL;
  s[0] = 0;
  for (int i = 0; i < FMT_RUN_COORDS; i++) {
    strcat(s, i ? " " : "");
    strcat(s, fmt_run_coord_names[i]);
  }
  for (size_t a = 0; a < sw->n_axes; a++) {
    char axis[160];
    strcat(s, " ");
    strcat(s, fmt_layout_axis_coord(sw->axes[a].key, axis, sizeof axis));
  }
  return s;
}

/* A per-tick variable: its scales (time_ds, or the scale named dim1 of a
 * fmt_wide one without a time axis; the third, width_ds named width_name,
 * for a fmt_wide one), units, long_name and coordinates. */
static int ticks_var_attrs(hid_t ds, hid_t run_ds, hid_t time_ds, const char *dim1,
                           hid_t width_ds, const char *width_name, const char *units,
                           const char *long_name, const char *coords) {
  return fmt_attr_put_str(ds, "units", units) || fmt_attr_put_str(ds, "long_name", long_name) ||
                 fmt_attr_put_str(ds, "coordinates", coords) || H5DSattach_scale(ds, run_ds, 0) < 0 ||
                 H5DSattach_scale(ds, time_ds, 1) < 0 ||
                 (width_ds >= 0 && H5DSattach_scale(ds, width_ds, 2) < 0) ||
                 /* h5py's d.dims[i].label, as format 1 had them */
                 H5DSset_label(ds, 0, FMT_COORD_RUN) < 0 ||
                 H5DSset_label(ds, 1, dim1 ? dim1 : FMT_COORD_TIME) < 0 ||
                 (width_ds >= 0 && H5DSset_label(ds, 2, width_name) < 0)
             ? -1
             : 0;
}

/* A 1-D scale of names (variable-length strings: xarray takes them as
 * the coordinate's labels, ds.service_attempts.sel(service="db")). */
static hid_t names_scale(hid_t g, const char *name, const char *const *names, hsize_t n,
                         const char *long_name) {
  hid_t st = fmt_h5_str_type(0), sp = H5Screate_simple(1, &n, NULL);
  hid_t ds = H5Dcreate2(g, name, st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds < 0 || H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) < 0 ||
           H5DSset_scale(ds, name) < 0 || fmt_attr_put_str(ds, "units", "1") ||
           fmt_attr_put_str(ds, "long_name", long_name);
  H5Sclose(sp);
  H5Tclose(st);
  if (rc && ds >= 0) H5Dclose(ds);
  return rc ? -1 : ds;
}

/* A /ticks dataset of int32 [N, rows(, width)] (rank 2 or 3), extendable
 * in runs, in chunks of one run with the filters fmt_chunk_encode
 * reproduces. The fill value lives in the storage only: a _FillValue
 * attribute would make xarray decode the counts to float64 (layout.h). */
static hid_t ticks_dataset(hid_t g, const char *name, int rank, hsize_t n, hsize_t rows,
                           hsize_t width) {
  hsize_t d[3] = {n, rows, width}, c[3] = {1, rows, width}, m[3] = {H5S_UNLIMITED, rows, width};
  int32_t fill = TICKS_FILL;
  hid_t sp = H5Screate_simple(rank, d, m);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, c);
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, FMT_DEFLATE_LEVEL);
  H5Pset_fill_value(dcpl, H5T_NATIVE_INT32, &fill);
  hid_t ds = sp < 0 || dcpl < 0 ? -1
                                : H5Dcreate2(g, name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl,
                                             H5P_DEFAULT);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (sp >= 0) H5Sclose(sp);
  return ds;
}

/* The scale of a fmt_wide dataset's third dimension: the shard index, or
 * the service names. */
static hid_t wide_scale(hid_t g, const swp_sweep *sw, fmt_wide w, hsize_t width) {
  const char *name = fmt_layout_wide_scale(w);
  if (w != FMT_WIDE_SHARD_QUEUES) {
    const char *names[ENG_MAX_SERVICES + 1];
    for (hsize_t k = 0; k < width; k++) names[k] = sw->service_names[k];
    return names_scale(g, name, names, width, "service of the call graph (the front first)");
  }
  hid_t ds = fmt__dataset_1d(g, name, H5T_STD_I32LE, width, 0, NULL, 0, 0);
  int32_t *ids = ds < 0 ? NULL : malloc((size_t)width * sizeof *ids);
  for (hsize_t k = 0; ids && k < width; k++) ids[k] = (int32_t)k;
  int rc = !ids || H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids) < 0 ||
           H5DSset_scale(ds, name) < 0 || fmt_attr_put_str(ds, "units", "1") ||
           fmt_attr_put_str(ds, "long_name", "shard index");
  free(ids);
  if (rc && ds >= 0) H5Dclose(ds);
  return rc ? -1 : ds;
}

/* The fmt_wide datasets sw records: int32 [runs, ticks, width], chunks of
 * one run, written like the metrics. */
static int create_wide(fmt_out *o, const swp_sweep *sw, hid_t g, hid_t run_ds, hid_t time_ds,
                       const char *coords) {
  hsize_t n = (hsize_t)o->n_runs;
  hid_t scale[2] = {-1, -1}, fields = -1; /* shard, service; service_field */
  int rc = 0;
  for (int w = 0; w < FMT_WIDE_COUNT && !rc; w++) {
    hsize_t s = (hsize_t)o->wide_n[w], t = (hsize_t)fmt_wide_rows((fmt_wide)w, o->ticks_n);
    if (!s) continue;
    int which = w == FMT_WIDE_SHARD_QUEUES ? 0 : 1, summary = w == FMT_WIDE_SERVICE_SUMMARY;
    if (scale[which] < 0 && (scale[which] = wide_scale(g, sw, (fmt_wide)w, s)) < 0) rc = -1;
    if (!rc && summary) {
      const char *names[FMT_SERVICE_FIELDS];
      for (int i = 0; i < FMT_SERVICE_FIELDS; i++) names[i] = fmt_service_field_name(i);
      fields = names_scale(g, FMT_COORD_SERVICE_FIELD, names, FMT_SERVICE_FIELDS,
                           "what a service did in the run (docs/file-format.md)");
      rc = fields < 0;
    }
    if (!rc) o->wide[w] = ticks_dataset(g, fmt_wide_name((fmt_wide)w), 3, n, t, s);
    if (!rc) rc = o->wide[w] < 0;
    if (rc) break;
    const char *units = "attempts";
    char desc[256];
    if (which == 0) {
      snprintf(desc, sizeof desc, "attempts queued at each shard at the end of the tick (-1: none)");
    } else if (summary) {
      units = "1";
      snprintf(desc, sizeof desc, "what each service did in the run, one row per service_field "
               "(the outcome rule on its own traces; counts; -1: none)");
    } else {
      const eng_metric_info *mi =
          eng_metric_get_info(eng_service_trace_metric((eng_service_trace)(w - FMT_WIDE_SERVICE_FIRST)));
      units = mi->unit;
      snprintf(desc, sizeof desc, "each service's %s: %s", mi->name, mi->description);
    }
    rc = ticks_var_attrs(o->wide[w], run_ds, summary ? fields : time_ds,
                         summary ? FMT_COORD_SERVICE_FIELD : NULL, scale[which],
                         fmt_layout_wide_scale((fmt_wide)w), units, desc, coords);
  }
  for (int i = 0; i < 2; i++)
    if (scale[i] >= 0) H5Dclose(scale[i]);
  if (fields >= 0) H5Dclose(fields);
  return rc;
}

static int create_ticks(fmt_out *o, const swp_sweep *sw) {
  hsize_t n = (hsize_t)o->n_runs, t = (hsize_t)o->ticks_n;
  hid_t g = H5Gcreate2(o->file, "ticks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  double tick_ms = sw->rows ? swp_record_row_ms(sw) : sw->tick_ms; /* stored rows' spacing */
  hid_t run_ds = fmt__dataset_1d(g, FMT_COORD_RUN, H5T_STD_I64LE, n, n < 65536 ? n : 65536, NULL, 0, 1);
  hid_t time_ds = fmt__dataset_1d(g, FMT_COORD_TIME, H5T_IEEE_F64LE, t, 0, NULL, 0, 0);
  int rc = run_ds < 0 || time_ds < 0 ? -1 : 0;
  if (!rc) rc = write_blocks(run_ds, H5T_NATIVE_INT64, 8, n, fill_run_index, NULL);
  if (!rc) rc = write_blocks(time_ds, H5T_NATIVE_DOUBLE, 8, t, fill_time, &tick_ms);
  if (!rc) rc = H5DSset_scale(run_ds, FMT_COORD_RUN) < 0 || H5DSset_scale(time_ds, FMT_COORD_TIME) < 0;
  if (!rc) rc = fmt_attr_put_str(run_ds, "units", "1") || fmt_attr_put_str(run_ds, "long_name", "run index (row of /runs)") ||
                fmt_attr_put_str(time_ds, "units", "ms") ||
                fmt_attr_put_str(time_ds, "long_name",
                                 sw->record_stride > 1 ? "start of the stored window (root attribute record)"
                                                       : "start of the tick");
  /* Run-indexed coordinates: point, replicate, seed, outcome, the axes. */
  double *numbers = rc ? NULL : fmt__points_numbers(sw);
  if (!rc && !numbers) rc = -1;
  static const char *const coord_units[3] = {"1", "1", "1"};
  static const char *const coord_long[3] = {
      "grid point (row of /points)", "replicate within the point",
      "the run's random seed: eng_seed_derive(master_seed, point, replicate)"};
  for (int i = 0; i < 3 && !rc; i++) {
    hid_t type = i == 0 ? H5T_STD_I64LE : i == 1 ? H5T_STD_I32LE : H5T_STD_U64LE;
    hid_t ds = run_coord(g, fmt_run_coord_names[i], type, n, run_ds, coord_units[i],
                         coord_long[i], NULL, 0);
    rc = ds < 0 ? -1 : 0;
    if (ds >= 0) H5Dclose(ds);
  }
  if (!rc) {
    /* Written at each commit, in place: allocated (and filled) now, like
     * /timing (see Durability). -1: not run yet. */
    int8_t none = -1;
    o->outcome = run_coord(g, fmt_run_coord_names[3], H5T_STD_I8LE, n, run_ds, "1",
                           "the run's outcome (docs/model.md); -1: not run yet", &none, 1);
    int8_t flags[ENG_OUTCOME_COUNT + 1];
    char meanings[256] = "not_run";
    flags[0] = -1;
    for (int v = 0; v < ENG_OUTCOME_COUNT; v++) {
      flags[v + 1] = (int8_t)v;
      strcat(meanings, " ");
      strcat(meanings, eng_outcome_name((eng_outcome)v));
    }
    rc = o->outcome < 0 ||
         fmt_attr_put_nums(o->outcome, "flag_values", H5T_STD_I8LE, H5T_NATIVE_INT8, flags,
                  ENG_OUTCOME_COUNT + 1) ||
         fmt_attr_put_str(o->outcome, "flag_meanings", meanings);
  }
  for (size_t a = 0; a < sw->n_axes && !rc; a++) {
    char axis[160], desc[256];
    const char *key = sw->axes[a].key;
    const eng_setting *st = eng_settings_find(key);
    int named = st && (st->type == ENG_SET_ENUM || st->type == ENG_SET_PRESET);
    snprintf(desc, sizeof desc, "grid axis %s: the value at the run's point, as in /points%s", key,
             named ? " (the index of its name; /points_text has the names)" : "");
    size_t kl = strlen(key);
    const char *units = kl > 3 && !strcmp(key + kl - 3, "_ms") ? "ms" : "1";
    hid_t ds = run_coord(g, fmt_layout_axis_coord(key, axis, sizeof axis), H5T_IEEE_F64LE, n,
                         run_ds, units, desc, NULL, 0);
    rc = ds < 0 ? -1 : 0;
    if (ds >= 0) H5Dclose(ds);
  }
  if (!rc) rc = fmt__write_run_coords(o, g, sw, numbers, 0, (int64_t)n, NULL, NULL);
  free(numbers);
  char *coords = rc ? NULL : coords_attr(sw);
  if (!rc && !coords) rc = -1;
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    const eng_metric_info *info = eng_metric_get_info((eng_metric)m);
    if (!swp_record_stored(sw, m)) continue; /* record_metrics, summary: no dataset */
    o->ticks[m] = ticks_dataset(g, info->name, 2, n, t, 1);
    if (o->ticks[m] < 0) rc = -1;
    if (!rc)
      rc = ticks_var_attrs(o->ticks[m], run_ds, time_ds, NULL, -1, NULL, info->unit, info->description,
                           coords);
  }
  if (!rc) rc = create_wide(o, sw, g, run_ds, time_ds, coords);
  free(coords);
  if (run_ds >= 0) H5Dclose(run_ds);
  if (time_ds >= 0) H5Dclose(time_ds);
  H5Gclose(g);
  return rc;
}

static int create_timing(fmt_out *o) {
  hid_t g = H5Gcreate2(o->file, "timing", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  hsize_t n = (hsize_t)o->n_runs;
  double nan = NAN;
  int32_t none = -1;
  o->wall = fmt__dataset_1d(g, "run_wall_s", H5T_IEEE_F64LE, n, 4096, &nan, 1, 1);
  o->thread = fmt__dataset_1d(g, "run_thread", H5T_STD_I32LE, n, 4096, &none, 1, 1);
  int rc = o->wall < 0 || o->thread < 0 ? -1 : 0;
  if (!rc) rc = fmt_attr_put_str(o->wall, "units", "s");
  H5Gclose(g);
  return rc;
}

int fmt__out_create(fmt_out **out, const char *path, const swp_sweep *sw,
                     const char *command_line, unsigned flags, uint64_t instance, char *err,
                     size_t errlen) {
  int force = (flags & FMT_OUT_FORCE) != 0;
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", path);
    return -1;
  }
  fmt_out *o = fmt__out_alloc(path, swp_sweep_runs(sw), sw->rows);
  if (!o) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  o->master_seed = sw->seed;
  o->replicates = sw->replicates;
  o->finish_runs = o->n_runs;
  if (!(flags & FMT_OUT_NO_LOCK) && fmt_lock_acquire(&o->lock, path, err, errlen)) {
    fmt__out_free(o);
    return -1;
  }
  /* Built under a temporary name and renamed into place once its skeleton is
   * written: a process killed while creating never leaves a file under the
   * final name that --resume would have to make sense of. */
  int in_place = (flags & FMT_OUT_IN_PLACE) != 0;
  char *tmp = NULL;
  struct stat pst;
  if (!in_place && !force && lstat(path, &pst) == 0) {
    swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", path);
    free(tmp);
    fmt__out_free(o);
    return -1;
  }
  if (!in_place && !force && !(flags & FMT_OUT_NO_JOURNAL) && fmt_journal_exists(path)) {
    /* The file is gone but its journal is not: the runs of a killed first
     * attempt (or of a file removed since) are still in it. */
    swp_seterr(err, errlen,
               "%s does not exist, but its journal %s.journal does (an earlier attempt was "
               "killed, or the file removed): --resume rebuilds the file from it, --force "
               "starts over without it",
               path, path);
    fmt__out_free(o);
    return -1;
  }
  if (!in_place) {
    int fd = fmt_mkstemp_beside(path, "new", &tmp);
    if (fd < 0) {
      swp_seterr(err, errlen, "%s: cannot create a temporary file beside it: %s", path,
                 strerror(errno));
      fmt__out_free(o);
      return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    int chmod_rc = fchmod(fd, 0666 & ~mask);
    (void)chmod_rc;
    close(fd);
  }
  for (int w = 0; w < FMT_WIDE_COUNT; w++) o->wide_n[w] = fmt_wide_width(sw, (fmt_wide)w);
  o->stored = swp_record_mask(sw);
  o->sw = sw;
  hid_t fapl = fmt__file_access();
  o->file = H5Fcreate(in_place ? path : tmp, force || !in_place ? H5F_ACC_TRUNC : H5F_ACC_EXCL,
                      H5P_DEFAULT, fapl);
  char why[256];
  fmt_h5_reason(why, sizeof why);
  H5Pclose(fapl);
  if (o->file < 0) {
    if (!force && access(path, F_OK) == 0)
      swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", path);
    else
      swp_seterr(err, errlen, "%s: cannot create: %s", path, why);
    if (tmp) unlink(tmp);
    free(tmp);
    fmt__out_free(o);
    return -1;
  }
  const char *step = "root attributes";
  o->instance = instance ? instance : fmt__instance_new();
  int rc = write_root_attrs(o->file, sw, command_line, o->instance);
  if (!rc) step = "/points", rc = write_points(o->file, sw);
  if (!rc) step = "/runs", rc = create_runs(o);
  if (!rc) step = "/ticks", rc = create_ticks(o, sw);
  if (!rc) step = "/timing", rc = create_timing(o);
  if (!rc) step = "/runs", rc = fmt__out_spaces(o);
  if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
  if (rc) {
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: writing %s: %s", path, step, why);
    /* Half a file is worse than none: it was ours, so it goes. */
    fmt__out_fail(o);
    fmt__out_abandon(o);
    unlink(in_place ? path : tmp);
    free(tmp);
    return -1;
  }
  /* A journal of the file replaced is no longer anyone's. */
  if (!in_place && force && !(flags & FMT_OUT_NO_JOURNAL)) fmt_journal_remove(path);
  if (!in_place && fmt_rename_into_place(tmp, path, force)) {
    int e = errno;
    if (e == EEXIST)
      swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", path);
    else
      swp_seterr(err, errlen, "%s: cannot rename the new file into place: %s", path,
                 strerror(e));
    fmt__out_fail(o);
    fmt__out_abandon(o);
    unlink(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  if (!(flags & FMT_OUT_NO_JOURNAL)) {
    if (fmt__journal_id(sw, 0, 0, command_line, &o->jid) ||
        !(o->jcmd = strdup(command_line ? command_line : "")) ||
        (o->jid.command_line = o->jcmd, o->jid.instance = o->instance,
         fmt_journal_create(&o->journal, path, &o->jid, err, errlen))) {
      if (!o->journal && (!err || !err[0]))
        swp_seterr(err, errlen, "%s: out of memory", path);
      fmt__out_fail(o);
      fmt__out_abandon(o);
      unlink(path);
      return -1;
    }
  }
  *out = o;
  return 0;
}

int fmt__out_set_slice(fmt_out *o, int64_t index, int64_t count, char *err,
                                 size_t errlen) {
  char text[64];
  snprintf(text, sizeof text, "%lld/%lld", (long long)index, (long long)count);
  if (fmt_attr_put_str(o->file, "slice", text) || fmt_attr_put_i64(o->file, "slice_index", index) ||
      fmt_attr_put_i64(o->file, "slice_count", count) || H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: writing the slice attributes: %s", o->path, why);
    o->failed = 1;
    return -1;
  }
  if (count > 1) {
    int64_t n = 0;
    for (int64_t r = 0; r < o->base_runs; r++)
      n += swp_slice_of(o->replicates, count, r) == index;
    o->finish_runs = n;
  }
  if (o->journal) {
    /* Still empty: written again with the slice in its identity. */
    fmt_journal_close(o->journal);
    o->journal = NULL;
    o->jid.slice_index = count > 1 ? index : 0;
    o->jid.slice_count = count > 1 ? count : 0;
    if (fmt_journal_create(&o->journal, o->path, &o->jid, err, errlen)) {
      o->failed = 1;
      return -1;
    }
  }
  return 0;
}

int fmt_out_create(fmt_out **out, const char *path, const swp_sweep *sw,
                     const char *command_line, int force, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt__out_create(out, path, sw, command_line, force ? FMT_OUT_FORCE : 0, 0, err,
                           errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_create_flags(fmt_out **out, const char *path, const swp_sweep *sw,
                           const char *command_line, unsigned flags, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt__out_create(out, path, sw, command_line, flags, 0, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_set_slice(fmt_out *o, int64_t index, int64_t count, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt__out_set_slice(o, index, count, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}
