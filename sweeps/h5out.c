/*
 * h5out.c — writes a sweep's results into one HDF5 file (SPEC §4), streaming:
 * nothing is held per run beyond the run being written, so memory does not
 * grow with the number of runs.
 *
 * The file is created with every object sized up front (n_runs rows, n_runs x
 * ticks per metric). Workers encode their /ticks chunks themselves
 * (chunk.c); the writer, called from one critical section, stores them with
 * H5Dwrite_chunk and writes the run's /runs row with done = 1. Unwritten
 * rows read as fill values (done = 0, ticks -1), so an interrupted sweep
 * leaves a readable file whose finished runs are marked; flush regularly.
 *
 * ## Layout (format "stormsweep-results", format_version 1)
 *
 * N = n_runs = n_points x replicates; T = ticks (the most of any point);
 * run r = point * replicates + replicate; point p = the cartesian product of
 * the axes with the first axis varying slowest. Strings are ASCII: attributes
 * and /axes variable-length, /points_text fixed-length NUL-terminated.
 *
 * | object            | type, shape, storage                     | contents |
 * |-------------------|------------------------------------------|----------|
 * | `/` (attributes)  | scalars unless noted                     | `format` = "stormsweep-results"; `format_version` = 1 (int32); `tool_version`; `master_seed` (uint64); `replicates`, `n_points`, `n_runs` (int64); `ticks` (int32, T); `tick_ms` (float64); `axes` (string [n_axes], axis keys, slowest first); `metrics` (string [19], the /ticks datasets in engine order); `sweep_name`, `sweep_description` ("" when unset); `sweep_text` (the effective sweep as INI, overrides folded in; parses back to the same sweep); `sweep_source` (file name, or "built-in seed study"); `sweep_source_text` (that file verbatim, comments included); `command_line`; `created` (ISO 8601 UTC, e.g. "2024-05-01T12:00:00Z"); `complete` (int32: 0 until every run is written, then 1) |
 * | `/points`         | compound [n_points]                      | `point` (int64), then one float64 column per axis named by its key: eng_config_get_number of the point's config (enums: their index; windows: first start in ms, NaN for none; policy: 0 naive, 1 guarded, NaN custom) |
 * | `/points_text`    | compound [n_points]                      | `point` (int64), then one string column per axis, same names: the value as the engine prints it ("inf", "full", "2000+500 6000+200") |
 * | `/axes/<key>`     | string [values]                          | one per axis: its values in order; attributes `numbers` (float64 [values]) and `position` (int32, 0 = slowest) |
 * | `/runs`           | compound [N], chunks of 1024 rows        | one row per run, columns below |
 * | `/ticks/<metric>` | int32 [N, T], chunk [1, T], shuffle + deflate 3, fill -1 | per-tick counts, one dataset per metric: `new_requests`, `attempts`, `retries`, `successes`, `timeouts`, `rejected_queue_full`, `rejected_router`, `rejected_breaker`, `rejected_budget`, `shed`, `lost`, `failed_requests`, `wasted`, `queue_depth`, `max_shard_queue`, `in_flight`, `hops`, `open_breakers`, `budget_tokens` (eng_metric_get_info; the root `metrics` attribute lists them); attributes `units`, `long_name`, `_FillValue` = -1; dimension scales `/run` on dim 0 and `/time_ms` on dim 1, labelled "run" and "time_ms". Runs not written yet, and ticks past a run's own horizon (when horizon_ms is an axis), read -1 |
 * | `/run`            | int64 [N]                                | dimension scale "run": 0 .. N-1 |
 * | `/time_ms`        | float64 [T]                              | dimension scale "time_ms": start of tick t, t x tick_ms (`units` = "ms") |
 * | `/timing`         | group                                    | wall-clock data, the only part that differs between two runs of one sweep: `run_wall_s` (float64 [N], simulation time of each run, NaN until written), `run_thread` (int32 [N], OpenMP thread, -1 until written); attributes `wall_s`, `threads`, `runs_done`, `runs_per_s`, `host`, `started`, `finished`, and where the time went: `simulate_s`, `encode_s` (summed over threads), `write_s` (the single writer) |
 *
 * `/runs` columns, in order (the dataset's `columns` attribute has a line on
 * each): `run` (int64), `point` (int64), `replicate` (int32), `seed` (uint64,
 * eng_seed_derive(master_seed, point, replicate)), `done` (int8: 1 once the
 * run is written; 0 rows are unwritten fill), `outcome` (HDF5 enum on int8:
 * recovered = 0, slow = 1, metastable = 2), `passed_slo` (int8), `recovery_ms`
 * (float64, NaN unless recovered), then the rest of eng_summary in eng.h
 * order — float64: `baseline_queue`, `recovery_threshold`, `peak_queue`,
 * `amplification`, `amplification_after`, `goodput_baseline`,
 * `goodput_during`, `goodput_after`, `late_queue_trend`,
 * `max_mean_shard_load`, `mean_hops`, `little_L`, `little_lambda_w`,
 * `little_lambda`, `little_w_ms`, `little_rel_error`, `keys_remapped`,
 * `successor_peak_load`; int64: `new_requests`, `attempts`, `successes`,
 * `failed_requests`, `events` — and last `ticks` (int32, the run's own tick
 * count; -1 in unwritten rows).
 *
 * Reading it: h5py `f["runs"]["outcome"]` gives the enum codes (h5py
 * `h5py.check_enum_dtype` names them); `f["ticks/queue_depth"][r]` is run r's
 * trace; xarray/h5netcdf see dims (run, time_ms) on every /ticks dataset.
 *
 * Comparing two result files: everything except `/timing` and the root
 * attributes `created` and `command_line` is a pure function of the sweep, so
 * for the same sweep at any thread count these compare equal:
 *   h5diff a.h5 b.h5 /runs /runs      (and /points, /points_text, /run,
 *   h5diff a.h5 b.h5 /ticks /ticks     /time_ms, /axes the same way)
 * `h5diff --exclude-path /timing a.h5 b.h5` reports only the two root
 * attributes. tests/cli_run.sh does exactly this.
 */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swp_internal.h"

#define FORMAT_NAME "stormsweep-results"
#define FORMAT_VERSION 1
#define RUNS_CHUNK_ROWS 1024
#define TICKS_FILL (-1)

/* The in-memory /runs row: HDF5 converts it to the packed file layout. */
typedef struct run_row {
  int64_t run, point;
  int32_t replicate, ticks;
  int8_t done;
  eng_summary s;
} run_row;

enum col_kind { K_I64, K_U64, K_I32, K_I8, K_I8_FROM_I32, K_F64, K_OUTCOME };

typedef struct column {
  const char *name;
  size_t offset;
  enum col_kind kind;
  const char *doc;
} column;

#define RS(f) (offsetof(run_row, s) + offsetof(eng_summary, f))
static const column run_columns[] = {
    {"run", offsetof(run_row, run), K_I64, "run index = point * replicates + replicate"},
    {"point", offsetof(run_row, point), K_I64, "grid point (row of /points)"},
    {"replicate", offsetof(run_row, replicate), K_I32, "replicate within the point"},
    {"seed", RS(seed), K_U64, "the run's seed: eng_seed_derive(master_seed, point, replicate)"},
    {"done", offsetof(run_row, done), K_I8, "1 once the run is written (0: not run yet)"},
    {"outcome", RS(outcome), K_OUTCOME, "recovered, slow or metastable (SPEC 2)"},
    {"passed_slo", RS(passed_slo), K_I8_FROM_I32, "1: recovered within slo_ms"},
    {"recovery_ms", RS(recovery_ms), K_F64, "fault clearance to recovery in ms; NaN unless recovered"},
    {"baseline_queue", RS(baseline_queue), K_F64, "mean total queue depth over the baseline window"},
    {"recovery_threshold", RS(recovery_threshold), K_F64, "queue depth that counts as back to baseline"},
    {"peak_queue", RS(peak_queue), K_F64, "max total queue depth"},
    {"amplification", RS(amplification), K_F64, "attempts / new requests over the run"},
    {"amplification_after", RS(amplification_after), K_F64, "the same from fault clearance on"},
    {"goodput_baseline", RS(goodput_baseline), K_F64, "successes per tick over the baseline window"},
    {"goodput_during", RS(goodput_during), K_F64, "goodput during the faults / baseline goodput"},
    {"goodput_after", RS(goodput_after), K_F64, "goodput after clearance / baseline goodput"},
    {"late_queue_trend", RS(late_queue_trend), K_F64, "late-window mean queue / previous window's"},
    {"max_mean_shard_load", RS(max_mean_shard_load), K_F64, "max over shards of admissions / mean"},
    {"mean_hops", RS(mean_hops), K_F64, "router hops per admission"},
    {"little_L", RS(little_L), K_F64, "time-average attempts in system (steady window)"},
    {"little_lambda_w", RS(little_lambda_w), K_F64, "admission rate x mean time in system"},
    {"little_lambda", RS(little_lambda), K_F64, "admissions per ms over the steady window"},
    {"little_w_ms", RS(little_w_ms), K_F64, "mean time in system (ms) of attempts admitted then"},
    {"little_rel_error", RS(little_rel_error), K_F64, "|L - lambda W| / L"},
    {"keys_remapped", RS(keys_remapped), K_F64, "fraction of the key space moved by crashes"},
    {"successor_peak_load", RS(successor_peak_load), K_F64, "peak in-flight on a live shard during a crash / baseline mean"},
    {"new_requests", RS(new_requests), K_I64, "requests created"},
    {"attempts", RS(attempts), K_I64, "attempts sent"},
    {"successes", RS(successes), K_I64, "attempts answered in time"},
    {"failed_requests", RS(failed_requests), K_I64, "requests that ended without success"},
    {"events", RS(events), K_I64, "engine events processed"},
    {"ticks", offsetof(run_row, ticks), K_I32, "ticks simulated by this run"},
};
#define N_RUN_COLUMNS (sizeof run_columns / sizeof run_columns[0])
/* Every eng_summary field needs a column above: a new field changes the size. */
_Static_assert(sizeof(eng_summary) == 16 + 19 * 8 + 5 * 8,
               "eng_summary changed: update run_columns and the layout comment");

struct swp_h5out {
  hid_t file;
  hid_t runs, runs_mem, runs_space, row_space;
  hid_t dxpl;             /* one-row writes with our own conversion buffers */
  uint8_t tconv[1024], bkg[1024];
  hid_t ticks[ENG_M_COUNT];
  hid_t wall, thread, timing_space;
  int64_t n_runs, written;
  int32_t ticks_n;
  H5E_auto2_t old_func;
  void *old_data;
  char *path;
};

/* ---- HDF5 helpers ---- */

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
  (void)n;
  char *buf = data;
  if (!buf[0] && e->desc) snprintf(buf, 256, "%s", e->desc);
  return 0;
}

/* The innermost HDF5 error message (e.g. "unable to truncate a file which is already open"). */
static void h5_reason(char *buf) {
  buf[0] = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, buf);
  if (!buf[0]) snprintf(buf, 256, "HDF5 error");
}

/* Strings are ASCII-labelled: HDF5 1.10 will not convert a UTF-8 string into
 * the plain H5T_C_S1 a C reader asks for. */
static hid_t str_type(size_t len) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, len ? len : H5T_VARIABLE);
  return t;
}

static int attr_str(hid_t obj, const char *name, const char *value) {
  hid_t t = str_type(0), sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  const char *v = value ? value : "";
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, &v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

static int attr_strs(hid_t obj, const char *name, const char *const *values, size_t n) {
  hsize_t dim = n;
  hid_t t = str_type(0), sp = H5Screate_simple(1, &dim, NULL);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : n ? H5Awrite(a, t, values) : 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

static int attr_num(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                    const void *value, size_t n) {
  hsize_t dim = n;
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
  hid_t a = H5Acreate2(obj, name, file_type, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, mem_type, value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc < 0 ? -1 : 0;
}

static int attr_i32(hid_t o, const char *name, int32_t v) {
  return attr_num(o, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &v, 1);
}
static int attr_i64(hid_t o, const char *name, int64_t v) {
  return attr_num(o, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v, 1);
}
static int attr_f64(hid_t o, const char *name, double v) {
  return attr_num(o, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, 1);
}

static hid_t outcome_type(hid_t base) {
  hid_t t = H5Tenum_create(base);
  for (int v = ENG_OUTCOME_RECOVERED; v <= ENG_OUTCOME_METASTABLE; v++) {
    if (H5Tget_size(base) == 1) {
      int8_t b = (int8_t)v;
      H5Tenum_insert(t, eng_outcome_name((eng_outcome)v), &b);
    } else {
      int32_t b = v;
      H5Tenum_insert(t, eng_outcome_name((eng_outcome)v), &b);
    }
  }
  return t;
}

/* Memory and packed file compound types of /runs. */
static int runs_types(hid_t *mem, hid_t *file) {
  size_t fsize = 0;
  for (size_t i = 0; i < N_RUN_COLUMNS; i++) {
    switch (run_columns[i].kind) {
    case K_I64: case K_U64: case K_F64: fsize += 8; break;
    case K_I32: fsize += 4; break;
    default: fsize += 1; break;
    }
  }
  *mem = H5Tcreate(H5T_COMPOUND, sizeof(run_row));
  *file = H5Tcreate(H5T_COMPOUND, fsize);
  size_t off = 0;
  for (size_t i = 0; i < N_RUN_COLUMNS; i++) {
    const column *c = &run_columns[i];
    hid_t mt, ft;
    int own = 0;
    switch (c->kind) {
    case K_I64: mt = H5T_NATIVE_INT64; ft = H5T_STD_I64LE; break;
    case K_U64: mt = H5T_NATIVE_UINT64; ft = H5T_STD_U64LE; break;
    case K_I32: mt = H5T_NATIVE_INT32; ft = H5T_STD_I32LE; break;
    case K_I8: mt = H5T_NATIVE_INT8; ft = H5T_STD_I8LE; break;
    case K_I8_FROM_I32: mt = H5T_NATIVE_INT32; ft = H5T_STD_I8LE; break;
    case K_F64: mt = H5T_NATIVE_DOUBLE; ft = H5T_IEEE_F64LE; break;
    default:
      mt = outcome_type(H5T_NATIVE_INT32);
      ft = outcome_type(H5T_STD_I8LE);
      own = 1;
      break;
    }
    herr_t rc = H5Tinsert(*mem, c->name, c->offset, mt);
    if (rc >= 0) rc = H5Tinsert(*file, c->name, off, ft);
    off += H5Tget_size(ft);
    if (own) {
      H5Tclose(mt);
      H5Tclose(ft);
    }
    if (rc < 0) return -1;
  }
  return 0;
}

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

static hid_t dataset_1d(hid_t loc, const char *name, hid_t type, hsize_t n, hsize_t chunk,
                        const void *fill) {
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunk) {
    if (chunk > n) chunk = n ? n : 1;
    H5Pset_chunk(dcpl, 1, &chunk);
  }
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
      eng_config cfg;
      if (swp_sweep_point_config(sw, p, &cfg, NULL, 0)) memset(&cfg, 0, sizeof cfg);
      for (size_t a = 0; a < sw->n_axes; a++) {
        double v = eng_config_get_number(&cfg, sw->axes[a].key);
        memcpy(row + 8 + 8 * a, &v, 8);
      }
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
  hid_t ds = dataset_1d(file, "points", t, (hsize_t)sw->n_points, chunk, NULL);
  points_ctx pc = {sw, rowsize, NULL, 0, 0};
  int rc = ds < 0 ? -1 : write_blocks(ds, t, rowsize, (hsize_t)sw->n_points, fill_points, &pc);
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
  ds = dataset_1d(file, "points_text", t, (hsize_t)sw->n_points, chunk, NULL);
  pc = (points_ctx){sw, rowsize, off, 0, 1};
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
    hid_t st = str_type(0), sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, ax->key, st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double *nums = malloc(ax->count * sizeof *nums);
    if (d < 0 || !nums || H5Dwrite(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, ax->values) < 0)
      rc = -1;
    for (size_t v = 0; nums && v < ax->count; v++) {
      eng_config cfg = sw->base;
      nums[v] = eng_config_set(&cfg, ax->key, ax->values[v], NULL, 0)
                    ? NAN
                    : eng_config_get_number(&cfg, ax->key);
    }
    if (!rc) rc = attr_num(d, "numbers", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, nums, ax->count);
    if (!rc) rc = attr_i32(d, "position", (int32_t)a);
    free(nums);
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(st);
  }
  H5Gclose(g);
  return rc;
}

/* ---- create ---- */

void swp_time_iso8601(char *buf, size_t len) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int write_root_attrs(hid_t f, const swp_sweep *sw, const char *command_line) {
  char created[32];
  swp_time_iso8601(created, sizeof created);
  char *text = swp_sweep_format(sw);
  const char **axes = malloc((sw->n_axes + 1) * sizeof *axes);
  const char *metrics[ENG_M_COUNT];
  for (int m = 0; m < ENG_M_COUNT; m++) metrics[m] = eng_metric_get_info((eng_metric)m)->name;
  int rc = -1;
  if (text && axes) {
    for (size_t a = 0; a < sw->n_axes; a++) axes[a] = sw->axes[a].key;
    uint64_t seed = sw->seed;
    rc = attr_str(f, "format", FORMAT_NAME) || attr_i32(f, "format_version", FORMAT_VERSION) ||
         attr_str(f, "tool_version", STORMSWEEP_VERSION) ||
         attr_num(f, "master_seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &seed, 1) ||
         attr_i64(f, "replicates", sw->replicates) || attr_i64(f, "n_points", sw->n_points) ||
         attr_i64(f, "n_runs", swp_sweep_runs(sw)) || attr_i32(f, "ticks", sw->ticks) ||
         attr_f64(f, "tick_ms", sw->tick_ms) || attr_strs(f, "axes", axes, sw->n_axes) ||
         attr_strs(f, "metrics", metrics, ENG_M_COUNT) ||
         attr_str(f, "sweep_name", sw->name) || attr_str(f, "sweep_description", sw->description) ||
         attr_str(f, "sweep_text", text) || attr_str(f, "sweep_source", sw->source) ||
         attr_str(f, "sweep_source_text", sw->source_text) ||
         attr_str(f, "command_line", command_line) || attr_str(f, "created", created) ||
         attr_i32(f, "complete", 0)
             ? -1
             : 0;
  }
  free(text);
  free(axes);
  return rc;
}

static int create_runs(swp_h5out *o) {
  hid_t ft;
  if (runs_types(&o->runs_mem, &ft)) return -1;
  run_row fill;
  memset(&fill, 0, sizeof fill);
  fill.ticks = TICKS_FILL;
  fill.s.recovery_ms = NAN;
  hsize_t n = (hsize_t)o->n_runs;
  hsize_t chunk = n < RUNS_CHUNK_ROWS ? n : RUNS_CHUNK_ROWS;
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
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
  size_t len = 1;
  for (size_t i = 0; i < N_RUN_COLUMNS; i++)
    len += strlen(run_columns[i].name) + strlen(run_columns[i].doc) + 3;
  char *doc = malloc(len);
  if (!doc) return -1;
  doc[0] = 0;
  for (size_t i = 0; i < N_RUN_COLUMNS; i++) {
    strcat(doc, run_columns[i].name);
    strcat(doc, ": ");
    strcat(doc, run_columns[i].doc);
    strcat(doc, "\n");
  }
  int arc = attr_str(o->runs, "columns", doc);
  free(doc);
  o->runs_space = H5Dget_space(o->runs);
  hsize_t one = 1;
  o->row_space = H5Screate_simple(1, &one, NULL);
  /* Without buffers of our own, every one-row H5Dwrite callocs HDF5's default
   * 1 MiB conversion and background buffers: most of a run's page faults. */
  _Static_assert(sizeof(run_row) <= sizeof o->tconv, "conversion buffer too small");
  o->dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (o->dxpl < 0 || H5Pset_buffer(o->dxpl, sizeof o->tconv, o->tconv, o->bkg) < 0) return -1;
  return arc;
}

static int create_ticks(swp_h5out *o, double tick_ms) {
  hsize_t n = (hsize_t)o->n_runs, t = (hsize_t)o->ticks_n;
  hid_t run_ds = dataset_1d(o->file, "run", H5T_STD_I64LE, n, n < 65536 ? n : 65536, NULL);
  hid_t time_ds = dataset_1d(o->file, "time_ms", H5T_IEEE_F64LE, t, 0, NULL);
  int rc = run_ds < 0 || time_ds < 0 ? -1 : 0;
  if (!rc) rc = write_blocks(run_ds, H5T_NATIVE_INT64, 8, n, fill_run_index, NULL);
  if (!rc) rc = write_blocks(time_ds, H5T_NATIVE_DOUBLE, 8, t, fill_time, &tick_ms);
  if (!rc) rc = H5DSset_scale(run_ds, "run") < 0 || H5DSset_scale(time_ds, "time_ms") < 0;
  if (!rc) rc = attr_str(run_ds, "long_name", "run index") || attr_str(time_ds, "units", "ms") ||
                attr_str(time_ds, "long_name", "start of the tick");
  hid_t g = rc ? -1 : H5Gcreate2(o->file, "ticks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) rc = -1;
  hsize_t dims[2] = {n, t}, chunk[2] = {1, t};
  int32_t fill = TICKS_FILL;
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    const eng_metric_info *info = eng_metric_get_info((eng_metric)m);
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, SWP_DEFLATE_LEVEL);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT32, &fill);
    o->ticks[m] = H5Dcreate2(g, info->name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (o->ticks[m] < 0) rc = -1;
    if (!rc)
      rc = attr_str(o->ticks[m], "units", info->unit) ||
           attr_str(o->ticks[m], "long_name", info->description) ||
           attr_i32(o->ticks[m], "_FillValue", fill) ||
           H5DSattach_scale(o->ticks[m], run_ds, 0) < 0 ||
           H5DSattach_scale(o->ticks[m], time_ds, 1) < 0 ||
           H5DSset_label(o->ticks[m], 0, "run") < 0 || H5DSset_label(o->ticks[m], 1, "time_ms") < 0;
  }
  if (g >= 0) H5Gclose(g);
  if (run_ds >= 0) H5Dclose(run_ds);
  if (time_ds >= 0) H5Dclose(time_ds);
  return rc;
}

static int create_timing(swp_h5out *o) {
  hid_t g = H5Gcreate2(o->file, "timing", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  hsize_t n = (hsize_t)o->n_runs;
  double nan = NAN;
  int32_t none = -1;
  o->wall = dataset_1d(g, "run_wall_s", H5T_IEEE_F64LE, n, 4096, &nan);
  o->thread = dataset_1d(g, "run_thread", H5T_STD_I32LE, n, 4096, &none);
  int rc = o->wall < 0 || o->thread < 0 ? -1 : 0;
  if (!rc) rc = attr_str(o->wall, "units", "s");
  H5Gclose(g);
  o->timing_space = H5Dget_space(o->wall);
  return rc;
}

static void h5out_release(swp_h5out *o) {
  if (o->runs >= 0) H5Dclose(o->runs);
  if (o->runs_mem >= 0) H5Tclose(o->runs_mem);
  if (o->runs_space >= 0) H5Sclose(o->runs_space);
  if (o->row_space >= 0) H5Sclose(o->row_space);
  if (o->dxpl >= 0) H5Pclose(o->dxpl);
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (o->ticks[m] >= 0) H5Dclose(o->ticks[m]);
  if (o->wall >= 0) H5Dclose(o->wall);
  if (o->thread >= 0) H5Dclose(o->thread);
  if (o->timing_space >= 0) H5Sclose(o->timing_space);
}

static int h5out_close_file(swp_h5out *o) {
  h5out_release(o);
  int rc = o->file >= 0 && H5Fclose(o->file) < 0 ? -1 : 0;
  H5Eset_auto2(H5E_DEFAULT, o->old_func, o->old_data);
  free(o->path);
  free(o);
  return rc;
}

int swp_h5out_create(swp_h5out **out, const char *path, const swp_sweep *sw,
                     const char *command_line, int force, char *err, size_t errlen) {
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", path);
    return -1;
  }
  swp_h5out *o = calloc(1, sizeof *o);
  if (!o || !(o->path = strdup(path))) {
    free(o);
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  o->runs = o->runs_mem = o->runs_space = o->row_space = o->dxpl = -1;
  o->wall = o->thread = o->timing_space = -1;
  for (int m = 0; m < ENG_M_COUNT; m++) o->ticks[m] = -1;
  o->n_runs = swp_sweep_runs(sw);
  o->ticks_n = sw->ticks;
  /* Our messages replace HDF5's error-stack dump; restored on close. */
  H5Eget_auto2(H5E_DEFAULT, &o->old_func, &o->old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  o->file = H5Fcreate(path, force ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  char why[256];
  if (o->file < 0) {
    h5_reason(why);
    if (!force && access(path, F_OK) == 0)
      swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", path);
    else
      swp_seterr(err, errlen, "%s: cannot create: %s", path, why);
    h5out_close_file(o);
    return -1;
  }
  const char *step = "root attributes";
  int rc = write_root_attrs(o->file, sw, command_line);
  if (!rc) step = "/points", rc = write_points(o->file, sw);
  if (!rc) step = "/runs", rc = create_runs(o);
  if (!rc) step = "/ticks", rc = create_ticks(o, sw->tick_ms);
  if (!rc) step = "/timing", rc = create_timing(o);
  if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
  if (rc) {
    h5_reason(why);
    swp_seterr(err, errlen, "%s: writing %s: %s", path, step, why);
    h5out_close_file(o);
    return -1;
  }
  *out = o;
  return 0;
}

/* ---- runs ---- */

int swp_h5out_write_run(swp_h5out *o, const swp_run_record *rec, char *err, size_t errlen) {
  run_row row;
  memset(&row, 0, sizeof row);
  row.run = rec->run;
  row.point = rec->point;
  row.replicate = rec->replicate;
  row.ticks = rec->ticks;
  row.done = 1;
  row.s = rec->summary;
  hsize_t at = (hsize_t)rec->run, one = 1;
  const char *step = "/runs";
  int rc = rec->run < 0 || rec->run >= o->n_runs;
  if (!rc) rc = H5Sselect_hyperslab(o->runs_space, H5S_SELECT_SET, &at, NULL, &one, NULL) < 0;
  if (!rc) rc = H5Dwrite(o->runs, o->runs_mem, o->row_space, o->runs_space, o->dxpl, &row) < 0;
  hsize_t offset[2] = {at, 0};
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    step = eng_metric_get_info((eng_metric)m)->name;
    rc = H5Dwrite_chunk(o->ticks[m], H5P_DEFAULT, 0, offset, rec->chunk_size[m], rec->chunk[m]) < 0;
  }
  if (!rc) {
    step = "/timing";
    rc = H5Sselect_hyperslab(o->timing_space, H5S_SELECT_SET, &at, NULL, &one, NULL) < 0 ||
         H5Dwrite(o->wall, H5T_NATIVE_DOUBLE, o->row_space, o->timing_space, o->dxpl,
                  &rec->wall_s) < 0 ||
         H5Dwrite(o->thread, H5T_NATIVE_INT32, o->row_space, o->timing_space, o->dxpl,
                  &rec->thread) < 0;
  }
  if (rc) {
    char why[256];
    h5_reason(why);
    swp_seterr(err, errlen, "%s: writing run %lld (%s): %s", o->path, (long long)rec->run, step,
               why);
    return -1;
  }
  o->written++;
  return 0;
}

int swp_h5out_flush(swp_h5out *o, char *err, size_t errlen) {
  if (H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0) {
    char why[256];
    h5_reason(why);
    swp_seterr(err, errlen, "%s: flush: %s", o->path, why);
    return -1;
  }
  return 0;
}

int swp_h5out_close(swp_h5out *o, const swp_timing *t, char *err, size_t errlen) {
  if (!o) return 0;
  int rc = 0;
  hid_t g = H5Gopen2(o->file, "timing", H5P_DEFAULT);
  char host[256] = "";
  if (gethostname(host, sizeof host - 1)) snprintf(host, sizeof host, "unknown");
  if (g < 0) rc = -1;
  if (!rc && t)
    rc = attr_f64(g, "wall_s", t->wall_s) || attr_i32(g, "threads", t->threads) ||
         attr_i64(g, "runs_done", t->runs_done) ||
         attr_f64(g, "runs_per_s", t->wall_s > 0 ? (double)t->runs_done / t->wall_s : 0) ||
         attr_str(g, "host", host) || attr_str(g, "started", t->started) ||
         attr_str(g, "finished", t->finished) || attr_f64(g, "simulate_s", t->simulate_s) ||
         attr_f64(g, "encode_s", t->encode_s) || attr_f64(g, "write_s", t->write_s);
  if (g >= 0) H5Gclose(g);
  if (!rc && o->written == o->n_runs) {
    hid_t a = H5Aopen(o->file, "complete", H5P_DEFAULT);
    int32_t one = 1;
    rc = a < 0 || H5Awrite(a, H5T_NATIVE_INT32, &one) < 0;
    if (a >= 0) H5Aclose(a);
  }
  char why[256] = "";
  if (rc) h5_reason(why);
  char *path = strdup(o->path);
  if (h5out_close_file(o)) {
    rc = -1;
    if (!why[0]) snprintf(why, sizeof why, "closing failed");
  }
  if (rc) swp_seterr(err, errlen, "%s: finishing: %s", path ? path : "result file", why);
  free(path);
  return rc ? -1 : 0;
}
