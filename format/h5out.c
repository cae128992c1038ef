/*
 * h5out.c — writes a sweep's results into one HDF5 file (SPEC §4), streaming:
 * nothing is held per run beyond the run being written, so memory does not
 * grow with the number of runs.
 *
 * The file is created with every object sized up front (n_runs rows, n_runs x
 * ticks per metric). Workers encode their /ticks chunks themselves
 * (chunk.c); the writer, called from one critical section, stores them with
 * H5Dwrite_chunk and stages the run's /runs row with done = 1 for the next
 * commit. Unwritten rows read as fill values (done = 0, ticks -1), so an
 * interrupted sweep leaves a readable file whose finished runs are marked.
 * The same module reopens a file to finish it (--resume) and reads files for
 * `merge`; the layout checks both rely on, the /runs row and the names are
 * in layout.c / layout.h (the one owner of the layout).
 *
 * ## Durability: what a file cut off at any moment holds
 *
 * HDF5 1.10 has no journal: a process killed while the library writes
 * metadata (chunk indexes, the superblock) can leave a file whose index
 * points at blocks never written. So metadata reaches the disk only at
 * commits, and a commit never marks a run done before its data is indexed:
 *
 * 1. the metadata cache runs with evictions off (file_access()), so dirty
 *    metadata is written only by an explicit flush, never on its own (after
 *    each commit the then clean /ticks index nodes are dropped by reopening
 *    the datasets with evict-on-close, so memory stays bounded);
 * 2. /runs and /timing are allocated and filled when created, so writing a
 *    row later changes raw bytes in place and never their chunk index;
 * 3. a run's chunks go to disk at once (H5Dwrite_chunk), its row waits in
 *    memory; a commit (every 2 s, at most PEND_MAX rows, and at close)
 *    flushes — the chunks' index reaches the disk — then writes the staged
 *    rows and flushes again.
 *
 * A SIGKILL between commits leaves the file as of the last commit plus
 * orphan chunk bytes past its end (ignored; overwritten on resume). Killed
 * inside a commit's first flush, some runs' chunks may be indexed without
 * their rows: resumed, they are simply run again. --resume also checks that
 * every run marked done has all 19 chunks (20 with shard_queue_depth), and
 * reruns any that lacks one. /ticks/outcome is written with the rows. A
 * failed write (disk full) freezes the file at its last commit: closing it
 * would flush half-written metadata (h5out_freeze). The one window left is a
 * kill *during* a flush of index blocks, milliseconds every 2 s, and a power
 * cut, which may leave any mix of old and new pages: for those, every run is
 * also appended to FILE.journal (journal.c), which each commit makes durable
 * (fdatasync) before it writes a row. --resume checks the file's done runs
 * against the journal byte for byte, restores the journal's runs the file
 * lacks, and rebuilds a damaged file from the journal (journal_verify,
 * journal_rebuild). Files are created under a temporary name and renamed into
 * place; one writer at a time holds FILE.lock (writelock.c). The guarantee
 * and its cost: docs/durability.md.
 *
 * ## Layout (format "stormsweep-results", format_version 2)
 *
 * The names and versions are owned by layout.h (what changed since format 1
 * is listed there); docs/file-format.md is the user's description.
 *
 * N = n_runs = n_points x replicates; T = ticks (the most of any point);
 * run r = point * replicates + replicate — for the sweep's own runs: `refine`
 * appends rows past them (h5out_append: /runs, every run-indexed /ticks
 * dataset and /timing/run_<x> have an unlimited run dimension; n_runs then counts the appended rows too,
 * whose point and replicate are in their columns, and /refine/round_start
 * records where each round's rows begin; see analysis/refine.h for /refine);
 * point p = the cartesian product of
 * the axes with the first axis varying slowest. Strings are ASCII: attributes
 * and /axes variable-length, /points_text fixed-length NUL-terminated.
 *
 * | object            | type, shape, storage                     | contents |
 * |-------------------|------------------------------------------|----------|
 * | `/` (attributes)  | scalars unless noted                     | `format` = "stormsweep-results"; `format_version` = 2 (int32); `tool_version`; `master_seed` (uint64); `crn` (int32: 1 with common random numbers, `crn = on`; missing in older files = 0); `replicates`, `n_points`, `n_runs` (int64); `ticks` (int32, T); `tick_ms` (float64); `axes` (string [n_axes], axis keys, slowest first); `scenario_axes` (the axes that are scenario, not tunable, joined by ", "; missing in older files: each setting's default role, docs/decisions.md); `metrics` (string [19], the /ticks datasets in engine order); `sweep_name`, `sweep_description` ("" when unset); `sweep_text` (the effective sweep as INI, overrides folded in; parses back to the same sweep); `sweep_source` (file name, or "built-in seed study"); `sweep_source_text` (that file verbatim, comments included); `command_line`; `created` (ISO 8601 UTC, e.g. "2024-05-01T12:00:00Z"); `complete` (int32: 0 until every run of the sweep is written, then 1). Only in the file of one slice (run --slice K/N): `slice` ("K/N"), `slice_index`, `slice_count` (int64) |
 * | `/points`         | compound [n_points]                      | `point` (int64), then one float64 column per axis named by its key: eng_config_get_number of the point's config (enums: their index; windows: first start in ms, NaN for none; policy: 0 naive, 1 guarded, NaN custom) |
 * | `/points_text`    | compound [n_points]                      | `point` (int64), then one string column per axis, same names: the value as the engine prints it ("inf", "full", "2000+500 6000+200") |
 * | `/axes/<key>`     | string [values]                          | one per axis: its values in order; attributes `numbers` (float64 [values]) and `position` (int32, 0 = slowest) |
 * | `/runs`           | compound [N], chunks of 1024 rows        | one row per run, columns below |
 * | `/ticks/<metric>` | int32 [N, T], chunk [1, T], shuffle + deflate 3, fill -1 | per-tick counts, one dataset per metric: `new_requests`, `attempts`, `retries`, `successes`, `timeouts`, `rejected_queue_full`, `rejected_router`, `rejected_breaker`, `rejected_budget`, `shed`, `lost`, `failed_requests`, `wasted`, `queue_depth`, `max_shard_queue`, `in_flight`, `hops`, `open_breakers`, `budget_tokens` (eng_metric_get_info; the root `metrics` attribute lists them); attributes `units`, `long_name`, `coordinates` (CF: the run coordinates below); no `_FillValue` attribute (xarray would decode to float64); dimension scales `/ticks/run` on dim 0 and `/ticks/time_ms` on dim 1. Runs not written yet, and ticks past a run's own horizon (when horizon_ms is an axis), read -1 (the storage fill value) |
 * | `/ticks/run`      | int64 [N]                                | dimension scale "run": 0 .. N-1 (`units`, `long_name` on every coordinate) |
 * | `/ticks/time_ms`  | float64 [T]                              | dimension scale "time_ms": start of tick t, t x tick_ms (`units` = "ms") |
 * | `/ticks/point`, `/ticks/replicate`, `/ticks/seed` | int64, int32, uint64 [N] | run coordinates, as in /runs; written when the row is created |
 * | `/ticks/outcome`  | int8 [N], allocated early, fill -1       | run coordinate written at each commit with the /runs row; `flag_values` -1..4, `flag_meanings` "not_run recovered slow metastable collapsed undetermined" |
 * | `/ticks/<axis>`   | float64 [N]                              | one per grid axis, named by its key ("axis_<key>" if a metric has that name): the /points value of the run's point |
 * | `/ticks/shard`, `/ticks/shard_queue_depth` | int32 [S]; int32 [N, T, S], chunk [1, T, S], shuffle + deflate 3, fill -1 | only when some point records them (record_shard_queues = on; S the most shards of such a point): each shard's queue depth at the end of each tick; -1 for shards a point lacks. Written like the metrics (H5Dwrite_chunk) |
 * | `/timing`         | group                                    | wall-clock data, the only part that differs between two runs of one sweep: `run_wall_s` (float64 [N], simulation time of each run, NaN until written), `run_thread` (int32 [N], OpenMP thread — under MPI rank x 1000 + thread — -1 until written); attributes of the last session: `wall_s`, `threads`, `ranks` (MPI processes), `runs_done`, `runs_per_s`, `host`, `started`, `finished`, and where the time went: `simulate_s`, `encode_s` (summed over threads), `write_s` (the single writer); `sessions` (1, plus one per --resume; merge: the parts) and, when resumed, `last_command_line` |
 *
 * `/runs` columns, in order (the dataset's `columns` attribute has a line on
 * each): `run` (int64), `point` (int64), `replicate` (int32), `seed` (uint64,
 * eng_seed_derive(master_seed, point, replicate), point 0 when crn = 1), `done` (int8: 1 once the
 * run is written and committed; 0 rows are unwritten fill), `outcome` (HDF5 enum on int8:
 * recovered = 0, slow = 1, metastable = 2, collapsed = 3), `passed_slo` (int8), `recovery_ms`
 * (float64, NaN unless recovered), then the rest of eng_summary in eng.h
 * order — float64: `baseline_queue`, `recovery_threshold`, `peak_queue`,
 * `amplification`, `amplification_after`, `goodput_baseline`,
 * `goodput_during`, `goodput_after`, `late_queue_trend`,
 * `max_mean_shard_load`, `mean_hops`, `little_L`, `little_lambda_w`,
 * `little_lambda`, `little_w_ms`, `little_rel_error`, `keys_remapped`,
 * `successor_peak_load`; int64: `new_requests`, `attempts`, `successes`,
 * `failed_requests`, `events` — then `ticks` (int32, the run's own tick
 * count; -1 in unwritten rows), and appended after it (float64, the figures
 * the outcome rule decides on; README "The outcome rule"):
 * `baseline_goodput_ratio`, `baseline_amplification`, `collapse_ms`,
 * `collapse_watch_ms`, `return_ms`, `late_goodput`, `late_amplification`,
 * `late_wasted_share`, `drain_ms`, `late_load`.
 *
 * Reading it: h5py `f["runs"]["outcome"]` gives the enum codes (h5py
 * `h5py.check_enum_dtype` names them); `f["ticks/queue_depth"][r]` is run r's
 * trace; xr.open_dataset(FILE, group="ticks") gives the labelled Dataset.
 *
 * Comparing two result files: everything except `/timing` and the root
 * attributes `created` and `command_line` is a pure function of the sweep, so
 * for the same sweep at any thread count these compare equal:
 *   h5diff a.h5 b.h5 /runs /runs      (and /points, /points_text and
 *   h5diff a.h5 b.h5 /ticks /ticks     /axes the same way)
 * `h5diff --exclude-path /timing a.h5 b.h5` reports only the two root
 * attributes. tests/cli_run.sh does exactly this.
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

#include "journal.h"
#include "layout.h"
#include "layout_h5.h"
#include "fmt.h"
#include "h5util.h"
#include "writelock.h"

#define FORMAT_NAME FMT_FORMAT_NAME
#define FORMAT_VERSION FMT_FORMAT_VERSION
#define RUNS_CHUNK_ROWS 1024
#define TICKS_FILL (-1)

#define PEND_MAX 8192        /* rows staged before a commit is forced */

struct fmt_out {
  hid_t file;
  hid_t runs, runs_mem, runs_space;
  hid_t ticks[ENG_M_COUNT];
  hid_t wall, thread, timing_space;
  hid_t outcome, shardq; /* /ticks/outcome; /ticks/shard_queue_depth (-1: none) */
  int32_t shards_n;      /* its width (0: none) */
  const swp_sweep *sw;   /* the sweep, kept by the caller until close */
  int64_t n_runs;
  int64_t written;        /* runs handed to write_run this session */
  int64_t committed;      /* ... of which rows are on disk */
  int64_t reserved_to;    /* file bytes [0, reserved_to) known to have disk blocks */
  int64_t done_before;    /* runs the file held when opened */
  int32_t ticks_n;
  int64_t base_runs;      /* the sweep's own runs: points x replicates */
  uint64_t master_seed;
  int64_t replicates;
  int failed;             /* a write failed: the file is frozen at its last commit */
  int resumed;
  uint8_t *done;          /* n_runs flags, as found when opened */
  /* Rows staged until the next commit, with their timing. */
  run_row *pend;
  hsize_t *pend_at;
  double *pend_wall;
  int32_t *pend_thread;
  int32_t *pend_outcome;
  size_t n_pend;
  char *path;
  /* Durability (journal.c, writelock.c, docs/durability.md). */
  fmt_lock *lock;         /* our own one-writer lock, held until closed */
  fmt_journal *journal;    /* FILE.journal; NULL: none (merge, refine) */
  int replaying;           /* writing runs read from the journal: not journaled again */
  int64_t finish_runs;     /* runs that make the file finished (its slice, or n_runs) */
  int sync_file;           /* no journal: fdatasync the file between commit steps */
  char note[512];          /* what resume salvaged, for the caller to print */
  fmt_journal_id jid;      /* the journal's identity (jcmd: its command line) */
  char *jcmd;
};

/* A result file open read-only (merge). */
struct fmt_in {
  hid_t file, runs, runs_mem, wall, thread;
  hid_t ticks[ENG_M_COUNT];
  hid_t outcome, shardq; /* shardq -1: the file records no per-shard queues */
  int32_t shards_n;
  fmt_info info;
  char *path;
};

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
static hid_t dataset_1d(hid_t loc, const char *name, hid_t type, hsize_t n, hsize_t chunk,
                        const void *fill, int early, int grow) {
  /* Per-run datasets may grow: refine appends runs (h5out_append). */
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
  hid_t ds = dataset_1d(file, "points", t, (hsize_t)sw->n_points, chunk, NULL, 0, 0);
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
  ds = dataset_1d(file, "points_text", t, (hsize_t)sw->n_points, chunk, NULL, 0, 0);
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
    hid_t st = fmt_h5_str_type(0), sp = H5Screate_simple(1, &n, NULL);
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
    if (!rc) rc = fmt_attr_put_nums(d, "numbers", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, nums, ax->count);
    if (!rc) rc = fmt_attr_put_i32(d, "position", (int32_t)a);
    free(nums);
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(st);
  }
  H5Gclose(g);
  return rc;
}


/* ---- create ---- */

void fmt_time_iso8601(char *buf, size_t len) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int write_root_attrs(hid_t f, const swp_sweep *sw, const char *command_line) {
  char created[32];
  fmt_time_iso8601(created, sizeof created);
  char *text = swp_sweep_format(sw);
  const char **axes = malloc((sw->n_axes + 1) * sizeof *axes);
  /* The axes recommend treats as scenario (the world's), not tunables. */
  size_t scen_len = 1;
  for (size_t a = 0; a < sw->n_axes; a++) scen_len += strlen(sw->axes[a].key) + 2;
  char *scen = calloc(scen_len, 1);
  const char *metrics[ENG_M_COUNT];
  for (int m = 0; m < ENG_M_COUNT; m++) metrics[m] = eng_metric_get_info((eng_metric)m)->name;
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
         fmt_attr_put_i32(f, "crn", sw->crn) || fmt_attr_put_i64(f, "replicates", sw->replicates) || fmt_attr_put_i64(f, "n_points", sw->n_points) ||
         fmt_attr_put_i64(f, "n_runs", swp_sweep_runs(sw)) || fmt_attr_put_i32(f, "ticks", sw->ticks) ||
         fmt_attr_put_f64(f, "tick_ms", sw->tick_ms) || fmt_attr_put_strs(f, "axes", axes, sw->n_axes) ||
         fmt_attr_put_str(f, "scenario_axes", scen) || fmt_attr_put_strs(f, "metrics", metrics, ENG_M_COUNT) ||
         fmt_attr_put_str(f, "sweep_name", sw->name) || fmt_attr_put_str(f, "sweep_description", sw->description) ||
         fmt_attr_put_str(f, "sweep_text", text) || fmt_attr_put_str(f, "sweep_source", sw->source) ||
         fmt_attr_put_str(f, "sweep_source_text", sw->source_text) ||
         fmt_attr_put_str(f, "command_line", command_line) || fmt_attr_put_str(f, "created", created) ||
         fmt_attr_put_i32(f, "complete", 0)
             ? -1
             : 0;
  }
  free(text);
  free(axes);
  free(scen);
  return rc;
}

/* The /runs fill row: done = 0, ticks -1, recovery NaN. */
static void runs_fill_row(run_row *fill) {
  memset(fill, 0, sizeof *fill);
  fill->ticks = TICKS_FILL;
  fill->s.recovery_ms = NAN;
}

static int create_runs(fmt_out *o) {
  hid_t ft;
  if (fmt_layout_runs_types(&o->runs_mem, &ft)) return -1;
  run_row fill;
  runs_fill_row(&fill);
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

/* Every point's axis values as /points stores them. */
static double *points_numbers(const swp_sweep *sw) {
  size_t na = sw->n_axes ? sw->n_axes : 1;
  double *v = malloc((size_t)sw->n_points * na * sizeof *v);
  for (int64_t p = 0; v && p < sw->n_points; p++) {
    eng_config cfg;
    if (swp_sweep_point_config(sw, p, &cfg, NULL, 0)) memset(&cfg, 0, sizeof cfg);
    for (size_t a = 0; a < sw->n_axes; a++)
      v[(size_t)p * na + a] = eng_config_get_number(&cfg, sw->axes[a].key);
  }
  return v;
}

/* Writes rows [first, first + n) of every run-indexed coordinate in group g
 * (point, replicate, seed and the axes; outcome is written at commit). */
static int write_run_coords(fmt_out *o, hid_t g, const swp_sweep *sw, const double *numbers,
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
  hid_t ds = dataset_1d(g, name, type, n, n < 65536 ? (n ? n : 1) : 65536, fill, early, 1);
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

/* A per-tick variable: its scales, units, long_name and coordinates. */
static int ticks_var_attrs(hid_t ds, hid_t run_ds, hid_t time_ds, hid_t shard_ds,
                           const char *units, const char *long_name, const char *coords) {
  return fmt_attr_put_str(ds, "units", units) || fmt_attr_put_str(ds, "long_name", long_name) ||
                 fmt_attr_put_str(ds, "coordinates", coords) || H5DSattach_scale(ds, run_ds, 0) < 0 ||
                 H5DSattach_scale(ds, time_ds, 1) < 0 ||
                 (shard_ds >= 0 && H5DSattach_scale(ds, shard_ds, 2) < 0) ||
                 /* h5py's d.dims[i].label, as format 1 had them */
                 H5DSset_label(ds, 0, FMT_COORD_RUN) < 0 || H5DSset_label(ds, 1, FMT_COORD_TIME) < 0 ||
                 (shard_ds >= 0 && H5DSset_label(ds, 2, FMT_COORD_SHARD) < 0)
             ? -1
             : 0;
}

static int create_ticks(fmt_out *o, const swp_sweep *sw) {
  hsize_t n = (hsize_t)o->n_runs, t = (hsize_t)o->ticks_n;
  hid_t g = H5Gcreate2(o->file, "ticks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  double tick_ms = sw->tick_ms;
  hid_t run_ds = dataset_1d(g, FMT_COORD_RUN, H5T_STD_I64LE, n, n < 65536 ? n : 65536, NULL, 0, 1);
  hid_t time_ds = dataset_1d(g, FMT_COORD_TIME, H5T_IEEE_F64LE, t, 0, NULL, 0, 0);
  hid_t shard_ds = -1;
  int rc = run_ds < 0 || time_ds < 0 ? -1 : 0;
  if (!rc) rc = write_blocks(run_ds, H5T_NATIVE_INT64, 8, n, fill_run_index, NULL);
  if (!rc) rc = write_blocks(time_ds, H5T_NATIVE_DOUBLE, 8, t, fill_time, &tick_ms);
  if (!rc) rc = H5DSset_scale(run_ds, FMT_COORD_RUN) < 0 || H5DSset_scale(time_ds, FMT_COORD_TIME) < 0;
  if (!rc) rc = fmt_attr_put_str(run_ds, "units", "1") || fmt_attr_put_str(run_ds, "long_name", "run index (row of /runs)") ||
                fmt_attr_put_str(time_ds, "units", "ms") ||
                fmt_attr_put_str(time_ds, "long_name", "start of the tick");
  /* Run-indexed coordinates: point, replicate, seed, outcome, the axes. */
  double *numbers = rc ? NULL : points_numbers(sw);
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
                           "the run's outcome (SPEC 2); -1: not run yet", &none, 1);
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
  if (!rc) rc = write_run_coords(o, g, sw, numbers, 0, (int64_t)n, NULL, NULL);
  free(numbers);
  char *coords = rc ? NULL : coords_attr(sw);
  if (!rc && !coords) rc = -1;
  hsize_t dims[2] = {n, t}, chunk[2] = {1, t}, maxdims[2] = {H5S_UNLIMITED, t};
  int32_t fill = TICKS_FILL;
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    const eng_metric_info *info = eng_metric_get_info((eng_metric)m);
    hid_t sp = H5Screate_simple(2, dims, maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, FMT_DEFLATE_LEVEL);
    /* The fill value lives in the storage only: a _FillValue attribute
     * would make xarray decode the counts to float64 (layout.h). */
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT32, &fill);
    o->ticks[m] = H5Dcreate2(g, info->name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (o->ticks[m] < 0) rc = -1;
    if (!rc)
      rc = ticks_var_attrs(o->ticks[m], run_ds, time_ds, -1, info->unit, info->description,
                           coords);
  }
  if (!rc && o->shards_n > 0) {
    /* Per-shard queue depths (record_shard_queues = on): runs x ticks x shards. */
    hsize_t s = (hsize_t)o->shards_n;
    shard_ds = dataset_1d(g, FMT_COORD_SHARD, H5T_STD_I32LE, s, 0, NULL, 0, 0);
    int32_t *ids = shard_ds < 0 ? NULL : malloc((size_t)s * sizeof *ids);
    for (hsize_t k = 0; ids && k < s; k++) ids[k] = (int32_t)k;
    rc = !ids || H5Dwrite(shard_ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids) < 0 ||
         H5DSset_scale(shard_ds, FMT_COORD_SHARD) < 0 || fmt_attr_put_str(shard_ds, "units", "1") ||
         fmt_attr_put_str(shard_ds, "long_name", "shard index");
    free(ids);
    hsize_t d3[3] = {n, t, s}, c3[3] = {1, t, s}, m3[3] = {H5S_UNLIMITED, t, s};
    hid_t sp = H5Screate_simple(3, d3, m3);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, c3);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, FMT_DEFLATE_LEVEL);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT32, &fill);
    if (!rc)
      o->shardq = H5Dcreate2(g, FMT_TICKS_SHARD_QUEUES, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl,
                             H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (!rc) rc = o->shardq < 0;
    if (!rc)
      rc = ticks_var_attrs(o->shardq, run_ds, time_ds, shard_ds, "attempts",
                           "attempts queued at each shard at the end of the tick (-1: none)",
                           coords);
  }
  free(coords);
  if (shard_ds >= 0) H5Dclose(shard_ds);
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
  o->wall = dataset_1d(g, "run_wall_s", H5T_IEEE_F64LE, n, 4096, &nan, 1, 1);
  o->thread = dataset_1d(g, "run_thread", H5T_STD_I32LE, n, 4096, &none, 1, 1);
  int rc = o->wall < 0 || o->thread < 0 ? -1 : 0;
  if (!rc) rc = fmt_attr_put_str(o->wall, "units", "s");
  H5Gclose(g);
  return rc;
}

/* File access: the metadata cache never evicts (so never writes) on its
 * own; metadata reaches the disk only when we commit (see Durability). */
static hid_t file_access(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5AC_cache_config_t c;
  memset(&c, 0, sizeof c);
  c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  if (fapl < 0 || H5Pget_mdc_config(fapl, &c) < 0) return fapl;
  c.evictions_enabled = 0;
  c.incr_mode = H5C_incr__off;
  c.flash_incr_mode = H5C_flash_incr__off;
  c.decr_mode = H5C_decr__off;
  H5Pset_mdc_config(fapl, &c);
  H5Pset_evict_on_close(fapl, 1);
  return fapl;
}

static void h5out_release(fmt_out *o) {
  if (o->runs >= 0) H5Dclose(o->runs);
  if (o->runs_mem >= 0) H5Tclose(o->runs_mem);
  if (o->runs_space >= 0) H5Sclose(o->runs_space);
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (o->ticks[m] >= 0) H5Dclose(o->ticks[m]);
  if (o->wall >= 0) H5Dclose(o->wall);
  if (o->thread >= 0) H5Dclose(o->thread);
  if (o->timing_space >= 0) H5Sclose(o->timing_space);
  if (o->outcome >= 0) H5Dclose(o->outcome);
  if (o->shardq >= 0) H5Dclose(o->shardq);
  o->runs = o->runs_mem = o->runs_space = o->wall = o->thread = o->timing_space = -1;
  o->outcome = o->shardq = -1;
  for (int m = 0; m < ENG_M_COUNT; m++) o->ticks[m] = -1;
}

static int h5out_close_file(fmt_out *o) {
  h5out_release(o);
  int rc = o->file >= 0 && H5Fclose(o->file) < 0 ? -1 : 0;
  fmt_journal_close(o->journal);
  fmt_lock_release(o->lock);
  free(o->jcmd);
  free(o->path);
  free(o->done);
  free(o->pend);
  free(o->pend_at);
  free(o->pend_wall);
  free(o->pend_thread);
  free(o->pend_outcome);
  free(o);
  return rc;
}

static void h5out_fail(fmt_out *o);
static void h5out_abandon(fmt_out *o);

/* A writer with nothing open yet; HDF5's error printing off until closed. */
static fmt_out *h5out_alloc(const char *path, int64_t n_runs, int32_t ticks) {
  fmt_out *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->file = -1;
  o->runs = o->runs_mem = o->runs_space = -1;
  o->wall = o->thread = o->timing_space = -1;
  o->outcome = o->shardq = -1;
  for (int m = 0; m < ENG_M_COUNT; m++) o->ticks[m] = -1;
  o->n_runs = o->base_runs = o->finish_runs = n_runs;
  o->ticks_n = ticks;
  o->path = strdup(path);
  o->done = calloc((size_t)(n_runs > 0 ? n_runs : 1), 1);
  o->pend = malloc(PEND_MAX * sizeof *o->pend);
  o->pend_at = malloc(PEND_MAX * sizeof *o->pend_at);
  o->pend_wall = malloc(PEND_MAX * sizeof *o->pend_wall);
  o->pend_thread = malloc(PEND_MAX * sizeof *o->pend_thread);
  o->pend_outcome = malloc(PEND_MAX * sizeof *o->pend_outcome);
  if (!o->path || !o->done || !o->pend || !o->pend_at || !o->pend_wall || !o->pend_thread ||
      !o->pend_outcome) {
    h5out_close_file(o);
    return NULL;
  }
  return o;
}

/* Dataspaces the row writes select in. */
static int h5out_spaces(fmt_out *o) {
  o->runs_space = H5Dget_space(o->runs);
  o->timing_space = H5Dget_space(o->wall);
  return o->runs_space < 0 || o->timing_space < 0 ? -1 : 0;
}

/* The journal's identity of a file of sweep sw (slice 0/0: the whole sweep). */
static int journal_id(const swp_sweep *sw, int64_t slice_index, int64_t slice_count,
                      const char *command_line, fmt_journal_id *id) {
  char *text = swp_sweep_format(sw);
  if (!text) return -1;
  memset(id, 0, sizeof *id);
  id->master_seed = sw->seed;
  id->n_runs = swp_sweep_runs(sw);
  id->ticks = sw->ticks;
  id->slice_index = slice_count > 1 ? slice_index : 0;
  id->slice_count = slice_count > 1 ? slice_count : 0;
  id->sweep_crc = fmt_journal_crc_text(text);
  id->tool_version = STORMSWEEP_VERSION;
  id->command_line = command_line;
  free(text);
  return 0;
}

/* Runs of slice index/count of sw (all of them when count <= 1). */
static int64_t slice_runs(const swp_sweep *sw, int64_t index, int64_t count) {
  swp_subset s = {index, count, NULL};
  return swp_subset_count(sw, &s);
}

static int fmt_out_create_q(fmt_out **out, const char *path, const swp_sweep *sw,
                     const char *command_line, unsigned flags, char *err, size_t errlen) {
  int force = (flags & FMT_OUT_FORCE) != 0;
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", path);
    return -1;
  }
  fmt_out *o = h5out_alloc(path, swp_sweep_runs(sw), sw->ticks);
  if (!o) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  o->master_seed = sw->seed;
  o->replicates = sw->replicates;
  o->finish_runs = o->n_runs;
  if (!(flags & FMT_OUT_NO_LOCK) && fmt_lock_acquire(&o->lock, path, err, errlen)) {
    h5out_close_file(o);
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
    h5out_close_file(o);
    return -1;
  }
  if (!in_place) {
    int fd = fmt_mkstemp_beside(path, "new", &tmp);
    if (fd < 0) {
      swp_seterr(err, errlen, "%s: cannot create a temporary file beside it: %s", path,
                 strerror(errno));
      h5out_close_file(o);
      return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    int chmod_rc = fchmod(fd, 0666 & ~mask);
    (void)chmod_rc;
    close(fd);
  }
  o->shards_n = sw->shard_queues;
  o->sw = sw;
  hid_t fapl = file_access();
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
    h5out_close_file(o);
    return -1;
  }
  const char *step = "root attributes";
  int rc = write_root_attrs(o->file, sw, command_line);
  if (!rc) step = "/points", rc = write_points(o->file, sw);
  if (!rc) step = "/runs", rc = create_runs(o);
  if (!rc) step = "/ticks", rc = create_ticks(o, sw);
  if (!rc) step = "/timing", rc = create_timing(o);
  if (!rc) step = "/runs", rc = h5out_spaces(o);
  if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
  if (rc) {
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: writing %s: %s", path, step, why);
    /* Half a file is worse than none: it was ours, so it goes. */
    h5out_fail(o);
    h5out_abandon(o);
    unlink(in_place ? path : tmp);
    free(tmp);
    return -1;
  }
  if (!in_place && fmt_rename_into_place(tmp, path, force)) {
    int e = errno;
    if (e == EEXIST)
      swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", path);
    else
      swp_seterr(err, errlen, "%s: cannot rename the new file into place: %s", path,
                 strerror(e));
    h5out_fail(o);
    h5out_abandon(o);
    unlink(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  if (!(flags & FMT_OUT_NO_JOURNAL)) {
    if (journal_id(sw, 0, 0, command_line, &o->jid) ||
        !(o->jcmd = strdup(command_line ? command_line : "")) ||
        (o->jid.command_line = o->jcmd,
         fmt_journal_create(&o->journal, path, &o->jid, err, errlen))) {
      if (!o->journal && (!err || !err[0]))
        swp_seterr(err, errlen, "%s: out of memory", path);
      h5out_fail(o);
      h5out_abandon(o);
      unlink(path);
      return -1;
    }
  }
  *out = o;
  return 0;
}

static int fmt_out_set_slice_q(fmt_out *o, int64_t index, int64_t count, char *err,
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

const uint8_t *fmt_out_done(const fmt_out *o) { return o->done; }

int64_t fmt_out_done_count(const fmt_out *o) {
  return o->done_before + (o->failed ? o->committed : o->written);
}

int fmt_out_failed(const fmt_out *o) { return o->failed; }

int64_t fmt_out_committed_count(const fmt_out *o) { return o->done_before + o->committed; }

/* ---- runs and commits ---- */

/* After a failed write the HDF5 library still holds dirty metadata (the
 * chunk index of the runs since the last commit), and closing the file would
 * write it: the parts that land inside the file would succeed, those that
 * extend it would fail again on a full disk, leaving an index that points
 * past the end of the file. Nor can the close be skipped or left to fail:
 * HDF5 1.10 then crashes when it closes the file again at exit. So the
 * file's descriptor is swapped for one on an anonymous shared-memory file
 * (shm_open, unlinked at once): the close "succeeds" into memory, the file on
 * disk stays as of its last commit — which is what --resume continues from. */
static void h5out_freeze(fmt_out *o) {
  hid_t fapl = H5Fget_access_plist(o->file);
  void *handle = NULL;
  if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
      H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle) {
    int fd = *(int *)handle;
    char name[64];
    snprintf(name, sizeof name, "/stormsweep-frozen-%ld", (long)getpid());
    int sink = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (sink >= 0) {
      shm_unlink(name);
    } else {
      /* No shared memory: a read-only descriptor still protects the file. */
      sink = open(o->path, O_RDONLY);
    }
    if (sink >= 0) {
      dup2(sink, fd);
      close(sink);
    }
  }
  if (fapl >= 0) H5Pclose(fapl);
}

/* Releases a frozen file without H5Fclose: closing fails (its flush cannot
 * write), and HDF5 1.10 crashes at exit when it closes a file whose close
 * failed. The library's own shutdown at exit closes it once; its writes fail
 * on the frozen descriptor. Error printing stays off for that. */
static void h5out_abandon(fmt_out *o) {
  h5out_release(o);
  fmt_journal_close(o->journal);
  fmt_lock_release(o->lock);
  free(o->jcmd);
  free(o->path);
  free(o->done);
  free(o->pend);
  free(o->pend_at);
  free(o->pend_wall);
  free(o->pend_thread);
  free(o->pend_outcome);
  free(o);
}

static void h5out_fail(fmt_out *o) {
  if (!o->failed) h5out_freeze(o);
  o->failed = 1;
}

/* Space the metadata may still claim past the end of the allocated file
 * while a commit or close writes it (attributes, object headers). */
#define RESERVE_MARGIN (256 * 1024)

/* Makes sure every byte a flush may write has its disk blocks: the file up
 * to its end of allocation plus a margin (posix_fallocate, which also fills
 * the holes left where metadata was allocated but not yet written). A full
 * disk then fails here, before the flush, and the file stays as of its last
 * commit — instead of failing in the middle of the flush, after some index
 * blocks were rewritten in place and others could not be written. Skipped
 * where the file system or driver cannot tell. */
static int h5out_reserve(fmt_out *o, char *why, size_t whylen) {
  haddr_t eoa = 0;
  hid_t fapl = H5Fget_access_plist(o->file);
  void *handle = NULL;
  int ok = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
           H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle &&
           H5Fget_eoa(o->file, &eoa) >= 0;
  if (fapl >= 0) H5Pclose(fapl);
  if (!ok) return 0;
  off_t to = (off_t)eoa + RESERVE_MARGIN;
  if (to <= o->reserved_to) return 0;
  int e = posix_fallocate(*(int *)handle, (off_t)o->reserved_to, to - (off_t)o->reserved_to);
  if (e == EINVAL || e == EOPNOTSUPP) return 0;
  /* The margin is a precaution, not a need: a sweep that fits the disk
   * must not fail for it. Without it a flush may still find the disk full;
   * the journal then holds every committed run (docs/durability.md). */
  if ((e == ENOSPC || e == EDQUOT || e == EFBIG) && (off_t)eoa > o->reserved_to)
    e = posix_fallocate(*(int *)handle, (off_t)o->reserved_to, (off_t)eoa - o->reserved_to);
  else if (e == ENOSPC || e == EDQUOT || e == EFBIG)
    e = 0;
  if (e) {
    snprintf(why, whylen, "reserving disk space: %s", strerror(e));
    return -1;
  }
  /* Keep a little below eoa: the next commit re-checks the blocks that
   * metadata allocated between now and then may have left as holes. */
  o->reserved_to = (int64_t)eoa > 4096 ? (int64_t)eoa - 4096 : 0;
  return 0;
}

/* Cuts a closed file back to its end of allocation: h5out_reserve may have
 * extended it past that, and HDF5 only trims what it wrote itself. A file
 * longer than its superblock says is valid but wastes the margin and hides
 * truncation from readers that compare sizes. */
static void trim_reserve(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  haddr_t eoa = 0;
  int ok = f >= 0 && H5Fget_eoa(f, &eoa) >= 0;
  if (f >= 0) H5Fclose(f);
  struct stat st;
  if (ok && eoa > 0 && stat(path, &st) == 0 && (uint64_t)st.st_size > (uint64_t)eoa) {
    int trimmed = truncate(path, (off_t)eoa); /* failing, a longer file is still valid */
    (void)trimmed;
  }
}

/* With evictions off the metadata cache would keep every chunk-index node
 * it ever touched (some 7 KB per run over 19 datasets). After a commit all
 * of it is clean, so closing and reopening the /ticks datasets — the file is
 * opened with evict-on-close — drops their index nodes without writing
 * anything; the next runs reload the few nodes they insert into. */
static int h5out_evict(fmt_out *o, char *err, size_t errlen) {
  hid_t g = H5Gopen2(o->file, "ticks", H5P_DEFAULT);
  int rc = g < 0;
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    H5Dclose(o->ticks[m]);
    o->ticks[m] = H5Dopen2(g, eng_metric_get_info((eng_metric)m)->name, H5P_DEFAULT);
    rc = o->ticks[m] < 0;
  }
  if (!rc && o->shardq >= 0) {
    H5Dclose(o->shardq);
    o->shardq = H5Dopen2(g, FMT_TICKS_SHARD_QUEUES, H5P_DEFAULT);
    rc = o->shardq < 0;
  }
  if (g >= 0) H5Gclose(g);
  if (rc) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: reopening /ticks after a commit: %s", o->path, why);
    h5out_fail(o);
    return -1;
  }
  return 0;
}

/* fdatasync of the HDF5 file (sec2 driver; others are not synced). */
static int h5out_sync_file(fmt_out *o, char *why, size_t whylen) {
  hid_t fapl = H5Fget_access_plist(o->file);
  void *handle = NULL;
  int ok = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
           H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle;
  if (fapl >= 0) H5Pclose(fapl);
  if (ok && fdatasync(*(int *)handle)) {
    snprintf(why, whylen, "fdatasync: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* The commit: the chunks written since the last commit are on disk already
 * (H5Dwrite_chunk writes raw data at once); the first flush puts their index
 * on disk, then their rows (done = 1) are written and flushed. A file cut off
 * anywhere in between holds runs not yet marked done — rerun on resume —
 * never a run marked done without its data. */
static int h5out_commit(fmt_out *o, char *err, size_t errlen) {
  if (o->failed) {
    swp_seterr(err, errlen, "%s: an earlier write failed", o->path);
    return -1;
  }
  char why[256] = "";
  const char *step = "journal";
  /* The journal first: once it is durable the runs are committed, whatever
   * happens to the HDF5 file from here on. */
  int rc = o->journal && !o->replaying ? fmt_journal_sync(o->journal, why, sizeof why) : 0;
  if (!rc) step = "reserve", rc = h5out_reserve(o, why, sizeof why);
  if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
  if (!rc && o->sync_file) step = "fdatasync", rc = h5out_sync_file(o, why, sizeof why);
  if (!rc && o->n_pend) {
    hsize_t n = o->n_pend;
    hid_t ms = H5Screate_simple(1, &n, NULL);
    step = "/runs";
    rc = ms < 0 ||
         H5Sselect_elements(o->runs_space, H5S_SELECT_SET, o->n_pend, o->pend_at) < 0 ||
         H5Dwrite(o->runs, o->runs_mem, ms, o->runs_space, H5P_DEFAULT, o->pend) < 0;
    if (!rc) {
      step = "/timing";
      rc = H5Sselect_elements(o->timing_space, H5S_SELECT_SET, o->n_pend, o->pend_at) < 0 ||
           H5Dwrite(o->wall, H5T_NATIVE_DOUBLE, ms, o->timing_space, H5P_DEFAULT,
                    o->pend_wall) < 0 ||
           H5Dwrite(o->thread, H5T_NATIVE_INT32, ms, o->timing_space, H5P_DEFAULT,
                    o->pend_thread) < 0;
    }
    if (!rc) {
      /* /ticks/outcome has the rows of /timing (both allocated early). */
      step = "/ticks/outcome";
      rc = H5Dwrite(o->outcome, H5T_NATIVE_INT32, ms, o->timing_space, H5P_DEFAULT,
                    o->pend_outcome) < 0;
    }
    if (ms >= 0) H5Sclose(ms);
    if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
    if (!rc && o->sync_file) step = "fdatasync", rc = h5out_sync_file(o, why, sizeof why);
  }
  if (rc) {
    if (!why[0]) fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: committing %zu runs (%s): %s", o->path, o->n_pend, step, why);
    h5out_fail(o);
    return -1;
  }
  o->committed += (int64_t)o->n_pend;
  o->n_pend = 0;
  return h5out_evict(o, err, errlen);
}

static int fmt_out_write_run_q(fmt_out *o, const fmt_run_record *rec, char *err,
                                 size_t errlen) {
  if (o->failed) {
    swp_seterr(err, errlen, "%s: an earlier write failed", o->path);
    return -1;
  }
  if (rec->run < 0 || rec->run >= o->n_runs) {
    swp_seterr(err, errlen, "%s: run %lld out of range (0..%lld)", o->path, (long long)rec->run,
               (long long)o->n_runs - 1);
    return -1;
  }
  if (o->n_pend == PEND_MAX && h5out_commit(o, err, errlen)) return -1;
  hsize_t offset[2] = {(hsize_t)rec->run, 0};
  for (int m = 0; m < ENG_M_COUNT; m++) {
    if (H5Dwrite_chunk(o->ticks[m], H5P_DEFAULT, 0, offset, rec->chunk_size[m], rec->chunk[m]) <
        0) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      swp_seterr(err, errlen, "%s: writing run %lld (/ticks/%s): %s", o->path,
                 (long long)rec->run, eng_metric_get_info((eng_metric)m)->name, why);
      h5out_fail(o);
      return -1;
    }
  }
  if (o->journal && !o->replaying && fmt_journal_append(o->journal, rec, err, errlen)) {
    h5out_fail(o);
    return -1;
  }
  if (o->shardq >= 0) {
    hsize_t at[3] = {(hsize_t)rec->run, 0, 0};
    if (!rec->shard_chunk_size ||
        H5Dwrite_chunk(o->shardq, H5P_DEFAULT, 0, at, rec->shard_chunk_size, rec->shard_chunk) <
            0) {
      char why[256];
      if (rec->shard_chunk_size) fmt_h5_reason(why, sizeof why);
      else snprintf(why, sizeof why, "the run has no per-shard queue depths");
      swp_seterr(err, errlen, "%s: writing run %lld (/ticks/%s): %s", o->path,
                 (long long)rec->run, FMT_TICKS_SHARD_QUEUES, why);
      h5out_fail(o);
      return -1;
    }
  }
  run_row *row = &o->pend[o->n_pend];
  memset(row, 0, sizeof *row);
  row->run = rec->run;
  row->point = rec->point;
  row->replicate = rec->replicate;
  row->ticks = rec->ticks;
  row->done = 1;
  row->s = rec->summary;
  o->pend_at[o->n_pend] = (hsize_t)rec->run;
  o->pend_wall[o->n_pend] = rec->wall_s;
  o->pend_thread[o->n_pend] = rec->thread;
  o->pend_outcome[o->n_pend] = (int32_t)rec->summary.outcome;
  o->n_pend++;
  o->written++;
  return 0;
}

static int fmt_out_flush_q(fmt_out *o, char *err, size_t errlen) {
  return h5out_commit(o, err, errlen);
}

/* The /timing sessions count so far (1 when missing or malformed). */
static int32_t timing_sessions(hid_t g) {
  int32_t v = 1;
  return fmt_attr_get_num(g, "sessions", H5T_NATIVE_INT32, &v) == 0 ? v : 1;
}

static int write_timing_attrs(fmt_out *o, const fmt_timing *t) {
  hid_t g = H5Gopen2(o->file, "timing", H5P_DEFAULT);
  if (g < 0) return -1;
  int rc = 0;
  if (t) {
    static const char *const names[] = {"wall_s", "threads", "ranks", "runs_done", "runs_per_s",
                                        "host", "started", "finished", "simulate_s", "encode_s",
                                        "write_s", "sessions", "last_command_line"};
    int32_t sessions = t->sessions > 0 ? t->sessions
                                        : timing_sessions(g) + (o->resumed ? 1 : 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) fmt_attr_delete(g, names[i]);
    char host[256] = "";
    if (gethostname(host, sizeof host - 1)) snprintf(host, sizeof host, "unknown");
    rc = fmt_attr_put_f64(g, "wall_s", t->wall_s) || fmt_attr_put_i32(g, "threads", t->threads) ||
         fmt_attr_put_i32(g, "ranks", t->ranks > 0 ? t->ranks : 1) ||
         fmt_attr_put_i64(g, "runs_done", t->runs_done) ||
         fmt_attr_put_f64(g, "runs_per_s", t->wall_s > 0 ? (double)t->runs_done / t->wall_s : 0) ||
         fmt_attr_put_str(g, "host", host) || fmt_attr_put_str(g, "started", t->started) ||
         fmt_attr_put_str(g, "finished", t->finished) || fmt_attr_put_f64(g, "simulate_s", t->simulate_s) ||
         fmt_attr_put_f64(g, "encode_s", t->encode_s) || fmt_attr_put_f64(g, "write_s", t->write_s) ||
         fmt_attr_put_i32(g, "sessions", sessions) ||
         (t->command_line && fmt_attr_put_str(g, "last_command_line", t->command_line));
  }
  H5Gclose(g);
  return rc;
}

static int file_matches_journal(fmt_out *o, char *why, size_t whylen);
static int close_by_rebuild(fmt_out *o, const fmt_timing *t, const char *why, char *err,
                            size_t errlen);

static int fmt_out_close_q(fmt_out *o, const fmt_timing *t, char *err, size_t errlen) {
  if (!o) return 0;
  if (err && errlen) err[0] = 0;
  char msg[768] = "";
  int rc = o->failed ? -1 : h5out_commit(o, msg, sizeof msg);
  if (rc) {
    if (!msg[0])
      snprintf(msg, sizeof msg, "%s: not finished after a failed write; it keeps the %lld runs "
               "committed before", o->path, (long long)(o->done_before + o->committed));
    h5out_fail(o);
    h5out_abandon(o);
    swp_seterr(err, errlen, "%s", msg);
    return -1;
  }
  /* A resumed file can be damaged in a way no check at open sees: after a
   * power cut left pages of two versions, HDF5 may place this session's
   * chunks over older ones its index still uses. So a resumed file is made
   * complete only once every run reads back as its journal record; if one
   * does not, the journal (which now holds every run) rebuilds it. */
  if (o->resumed && o->journal && o->done_before + o->committed >= o->finish_runs) {
    char why[512] = "";
    if (!file_matches_journal(o, why, sizeof why)) return close_by_rebuild(o, t, why, err, errlen);
  }
  const char *step = "/timing";
  rc = write_timing_attrs(o, t);
  if (!rc && o->done_before + o->committed == o->n_runs) {
    step = "complete";
    int32_t one = 1;
    rc = fmt_attr_set_num(o->file, "complete", H5T_NATIVE_INT32, &one) != 0;
  }
  char why[256] = "";
  if (rc) {
    /* Every run is committed; only the attributes failed. Closing would
     * flush half-written headers, so the file stays as of the commit. */
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: finishing (%s): %s; its runs are committed (--resume completes "
               "it)", o->path, step, why);
    h5out_fail(o);
    h5out_abandon(o);
    return -1;
  }
  char *path = strdup(o->path);
  /* Kept past the close: the journal goes only once the closed file is on
   * disk, and no other writer may come in between. */
  fmt_journal *journal = o->journal;
  fmt_lock *lock = o->lock;
  int finished = o->done_before + o->committed >= o->finish_runs;
  o->journal = NULL;
  o->lock = NULL;
  if (h5out_close_file(o)) {
    if (!rc) {
      step = "close";
      fmt_h5_reason(why, sizeof why);
    }
    rc = -1;
  }
  if (!rc && path) trim_reserve(path);
  if (!rc && path && fmt_fsync_path(path) == 0 && fmt_fsync_dir(path) == 0 && finished &&
      journal) {
    fmt_journal_close(journal);
    journal = NULL;
    fmt_journal_remove(path);
  }
  fmt_journal_close(journal);
  fmt_lock_release(lock);
  if (rc) swp_seterr(err, errlen, "%s: finishing (%s): %s", path ? path : "result file", step, why);
  free(path);
  return rc ? -1 : 0;
}

/* ---- resume ---- */

/* Whether text holds the line [l, l + n) as one of its lines. */
static int text_has_line(const char *text, const char *l, size_t n) {
  for (const char *p = text; p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !memcmp(p, l, n)) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

/* Names the first line where two sweep texts differ: "this sweep has
 * 'load = 0.6' (line 11), which the file's lacks". */
static void text_first_difference(const char *mine, const char *theirs, char *buf, size_t len) {
  int line = 1;
  const char *a = mine, *b = theirs;
  for (;;) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
    if (la != lb || memcmp(a, b, la) || (!ea) != (!eb)) {
      int pa = (int)(la > 120 ? 120 : la), pb = (int)(lb > 120 ? 120 : lb);
      if (la && !text_has_line(theirs, a, la))
        snprintf(buf, len, "this sweep has '%.*s' (line %d of its effective text), which the "
                 "file's sweep lacks", pa, a, line);
      else if (lb && !text_has_line(mine, b, lb))
        snprintf(buf, len, "the file's sweep has '%.*s' (line %d of its effective text), which "
                 "this one lacks", pb, b, line);
      else
        snprintf(buf, len, "line %d of the effective sweep is '%.*s' in the file but '%.*s' here",
                 line, pb, b, pa, a);
      return;
    }
    if (!ea) break;
    a = ea + 1;
    b = eb + 1;
    line++;
  }
  snprintf(buf, len, "the sweep texts differ");
}

/* Stored size of the chunk of run r (0: none). H5Dget_chunk_storage_size
 * fails on a chunk never written; this tells "missing" from "unreadable". */
static int chunk_size_at(hid_t ds, int64_t r, hsize_t *size) {
  hsize_t offset[3] = {(hsize_t)r, 0, 0};
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  *size = 0;
  if (H5Dget_chunk_info_by_coord(ds, offset, &mask, &addr, size) < 0) return -1;
  if (addr == HADDR_UNDEF) *size = 0;
  return 0;
}

/* Checks that every run marked done has all its chunks; clears the flag of
 * one that lacks some (it is run again). Returns the number cleared, or -1
 * when the chunk index cannot be read at all. */
static int64_t verify_done_chunks(fmt_out *o, int64_t from, char *why, size_t whylen) {
  int64_t cleared = 0;
  for (int64_t r = from; r < o->n_runs; r++) {
    if (!o->done[r]) continue;
    for (int m = 0; m < ENG_M_COUNT; m++) {
      hsize_t size = 0;
      if (chunk_size_at(o->ticks[m], r, &size)) {
        char h5[256];
        fmt_h5_reason(h5, sizeof h5);
        snprintf(why, whylen, "reading the chunk index of /ticks/%s at run %lld: %s",
                 eng_metric_get_info((eng_metric)m)->name, (long long)r, h5);
        return -1;
      }
      if (!size) {
        o->done[r] = 0;
        cleared++;
        break;
      }
    }
    hsize_t size = 1;
    if (o->done[r] && o->shardq >= 0) {
      if (chunk_size_at(o->shardq, r, &size)) {
        char h5[256];
        fmt_h5_reason(h5, sizeof h5);
        snprintf(why, whylen, "reading the chunk index of /ticks/%s at run %lld: %s",
                 FMT_TICKS_SHARD_QUEUES, (long long)r, h5);
        return -1;
      }
      if (!size) {
        o->done[r] = 0;
        cleared++;
      }
    }
  }
  return cleared;
}

static int resume_open_file(fmt_out **out, const char *path, const swp_sweep *sw,
                          int64_t slice_index, int64_t slice_count, int append, int journal,
                          char *err, size_t errlen) {
  /* Without a journal the damage is final; with one, the caller rebuilds. */
  const char *lost = journal ? "" : " (the file is damaged and has no journal to rebuild it "
                                    "from; its runs cannot be saved: start over with --force)";
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", path);
    return -1;
  }
  if (slice_count <= 1) slice_index = slice_count = 0;
  fmt_out *o = h5out_alloc(path, swp_sweep_runs(sw), sw->ticks);
  char *text = swp_sweep_format(sw);
  if (!o || !text) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    free(text);
    if (o) h5out_close_file(o);
    return -1;
  }
  o->resumed = 1;
  o->master_seed = sw->seed;
  o->replicates = sw->replicates;
  o->sw = sw;
  fmt_info info;
  memset(&info, 0, sizeof info);
  char why[512];
  int rc = -1;
  if (H5Fis_hdf5(path) <= 0) {
    if (access(path, F_OK))
      swp_seterr(err, errlen, "%s: does not exist: nothing to resume (drop --resume to start it)",
                 path);
    else
      swp_seterr(err, errlen, "%s: not an HDF5 file (or damaged beyond reading)%s", path,
                 lost);
    goto fail;
  }
  hid_t fapl = file_access();
  o->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
  fmt_h5_reason(why, sizeof why);
  H5Pclose(fapl);
  if (o->file < 0) {
    swp_seterr(err, errlen, "%s: cannot open for --resume: %s%s", path, why,
               strstr(why, "locked") ? "" : lost);
    goto fail;
  }
  if (fmt_layout_read_info(o->file, path, &info, err, errlen)) goto fail;
  if (strcmp(info.tool_version, STORMSWEEP_VERSION)) {
    swp_seterr(err, errlen,
               "%s: written by stormsweep %s; this is %s, whose results may differ, so it cannot "
               "continue the file (start over with --force)",
               path, info.tool_version, STORMSWEEP_VERSION);
    goto fail;
  }
  if (info.master_seed != sw->seed) {
    swp_seterr(err, errlen,
               "%s: belongs to another sweep: its master seed is %llu, this sweep's is %llu "
               "(refusing to resume)",
               path, (unsigned long long)info.master_seed, (unsigned long long)sw->seed);
    goto fail;
  }
  if (strcmp(info.sweep_text, text)) {
    text_first_difference(text, info.sweep_text, why, sizeof why);
    swp_seterr(err, errlen,
               "%s: belongs to another sweep definition: %s (refusing to resume; "
               "'stormsweep list --ini' prints a sweep's effective text)",
               path, why);
    goto fail;
  }
  if (append && info.n_runs > o->n_runs && info.ticks == o->ticks_n) {
    /* Rows appended by an earlier refine: the file is longer than the sweep. */
    uint8_t *d = realloc(o->done, (size_t)info.n_runs);
    if (!d) {
      swp_seterr(err, errlen, "%s: out of memory", path);
      goto fail;
    }
    memset(d, 0, (size_t)info.n_runs);
    o->done = d;
    o->n_runs = info.n_runs;
  }
  if (!append && info.n_runs > o->n_runs && info.ticks == o->ticks_n) {
    swp_seterr(err, errlen, "%s: holds %lld runs, more than this sweep's %lld: runs were "
               "appended by refine; continue it with 'stormsweep refine %s'", path,
               (long long)info.n_runs, (long long)o->n_runs, path);
    goto fail;
  }
  if (info.n_runs != o->n_runs || info.ticks != o->ticks_n) {
    swp_seterr(err, errlen, "%s: holds %lld runs of %d ticks; this sweep has %lld of %d", path,
               (long long)info.n_runs, info.ticks, (long long)o->n_runs, o->ticks_n);
    goto fail;
  }
  if (info.slice_count != slice_count || info.slice_index != slice_index) {
    char have[64], want[64];
    if (info.slice_count)
      snprintf(have, sizeof have, "slice %lld/%lld", (long long)info.slice_index,
               (long long)info.slice_count);
    else snprintf(have, sizeof have, "the whole sweep");
    if (slice_count)
      snprintf(want, sizeof want, "slice %lld/%lld", (long long)slice_index,
               (long long)slice_count);
    else snprintf(want, sizeof want, "the whole sweep");
    swp_seterr(err, errlen, "%s: holds %s, but this command runs %s (refusing to resume)", path,
               have, want);
    goto fail;
  }
  if (fmt_layout_open_datasets(o->file, path, &info, &o->runs, &o->runs_mem, o->ticks,
                               &o->wall, &o->thread, &o->outcome, &o->shardq, &o->shards_n, err,
                               errlen) ||
      h5out_spaces(o))
    goto fail;
  if (fmt_layout_read_done(o->runs, o->n_runs, o->done)) {
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: cannot read /runs: %s%s", path, why, lost);
    goto fail;
  }
  /* Appending (refine) checks only the appended rows: the sweep's own runs
   * were all committed (refine requires it) before any append. */
  if (verify_done_chunks(o, append ? o->base_runs : 0, why, sizeof why) < 0) {
    swp_seterr(err, errlen,
               "%s: damaged: %s%s", path, why, lost);
    goto fail;
  }
  for (int64_t r = 0; r < o->n_runs; r++) o->done_before += o->done[r];
  rc = 0;
fail:
  fmt_info_free(&info);
  free(text);
  if (rc) {
    h5out_close_file(o);
    return -1;
  }
  *out = o;
  return 0;
}

/* ---- resume with a journal: verify, restore, rebuild ---- */

/* Grows *buf (capacity *cap) to hold need bytes, doubling from 64 KiB. */
static int buf_reserve(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 65536;
  while (c < need) c *= 2;
  uint8_t *b = realloc(*buf, c);
  if (!b) return -1;
  *buf = b;
  *cap = c;
  return 0;
}

/* Whether run r's chunk of ds (stored, filters applied) is byte for byte
 * want; why says where it is not. */
static int chunk_matches(hid_t ds, int64_t r, const char *name, const uint8_t *want,
                         size_t want_size, uint8_t **buf, size_t *cap, char *why,
                         size_t whylen) {
  hsize_t size = 0, off[3] = {(hsize_t)r, 0, 0};
  uint32_t mask = 0;
  if (chunk_size_at(ds, r, &size) || size != want_size) {
    snprintf(why, whylen, "run %lld's /ticks/%s chunk is %s", (long long)r, name,
             size ? "of another size than its journal record" : "missing or unreadable");
    return 0;
  }
  if (buf_reserve(buf, cap, (size_t)size)) {
    snprintf(why, whylen, "out of memory");
    return 0;
  }
  if (H5Dread_chunk(ds, H5P_DEFAULT, off, &mask, *buf) < 0 || mask ||
      memcmp(*buf, want, (size_t)size)) {
    snprintf(why, whylen, "run %lld's /ticks/%s chunk differs from its journal record",
             (long long)r, name);
    return 0;
  }
  return 1;
}

/* Whether run r's row and chunks in the file equal its journal record. */
static int run_matches(fmt_out *o, int64_t r, const fmt_run_record *rec, uint8_t **buf,
                       size_t *cap, char *why, size_t whylen) {
  run_row row;
  memset(&row, 0, sizeof row);
  hsize_t at = (hsize_t)r, one = 1;
  hid_t ms = H5Screate_simple(1, &one, NULL);
  int bad = ms < 0 || H5Sselect_elements(o->runs_space, H5S_SELECT_SET, 1, &at) < 0 ||
            H5Dread(o->runs, o->runs_mem, ms, o->runs_space, H5P_DEFAULT, &row) < 0;
  if (ms >= 0) H5Sclose(ms);
  if (bad) {
    char h5[256];
    fmt_h5_reason(h5, sizeof h5);
    snprintf(why, whylen, "run %lld's /runs row cannot be read (%s)", (long long)r, h5);
    return 0;
  }
  if (row.run != rec->run || row.point != rec->point || row.replicate != rec->replicate ||
      row.ticks != rec->ticks || row.done != 1 ||
      memcmp(&row.s, &rec->summary, sizeof row.s)) {
    snprintf(why, whylen, "run %lld's /runs row differs from its journal record", (long long)r);
    return 0;
  }
  /* /ticks/outcome is rewritten in place at each commit, so a power cut can
   * leave an older page of it beside newer rows. */
  if (o->outcome >= 0) {
    int32_t oc = -2;
    hid_t os = H5Dget_space(o->outcome), om = H5Screate_simple(1, &one, NULL);
    int obad = os < 0 || om < 0 || H5Sselect_elements(os, H5S_SELECT_SET, 1, &at) < 0 ||
               H5Dread(o->outcome, H5T_NATIVE_INT32, om, os, H5P_DEFAULT, &oc) < 0;
    if (os >= 0) H5Sclose(os);
    if (om >= 0) H5Sclose(om);
    if (obad || oc != rec->summary.outcome) {
      snprintf(why, whylen, "run %lld's /ticks/outcome %s its journal record", (long long)r,
               obad ? "cannot be read beside" : "differs from");
      return 0;
    }
  }
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (!chunk_matches(o->ticks[m], r, eng_metric_get_info((eng_metric)m)->name, rec->chunk[m],
                       rec->chunk_size[m], buf, cap, why, whylen))
      return 0;
  if (o->shardq >= 0 && !chunk_matches(o->shardq, r, FMT_TICKS_SHARD_QUEUES, rec->shard_chunk,
                                       rec->shard_chunk_size, buf, cap, why, whylen))
    return 0;
  return 1;
}

/* Checks every run the file marks done against the journal, and stages the
 * journal's runs the file lacks (killed between the journal's sync and the
 * rows' commit) to be written again from it. Returns 0, 1 when the file
 * disagrees with the journal (why says where), -1 on a read failure of the
 * journal itself. */
static int journal_verify(fmt_out *o, fmt_journal *j, int64_t *restored, char *why,
                          size_t whylen) {
  uint8_t *jbuf = NULL, *cbuf = NULL;
  size_t jcap = 0, ccap = 0;
  int rc = 0;
  *restored = 0;
  int64_t n = o->jid.n_runs < o->n_runs ? o->jid.n_runs : o->n_runs;
  for (int64_t r = 0; r < n && !rc; r++) {
    int has = fmt_journal_has(j, r);
    if (o->done[r] && !has) {
      snprintf(why, whylen, "run %lld is marked done in it but is not in its journal",
               (long long)r);
      rc = 1;
    } else if (has) {
      fmt_run_record rec;
      if (fmt_journal_read(j, r, &rec, &jbuf, &jcap, why, whylen)) {
        rc = -1;
      } else if (o->done[r]) {
        if (!run_matches(o, r, &rec, &cbuf, &ccap, why, whylen)) rc = 1;
      } else {
        char err[512];
        o->replaying = 1;
        if (fmt_out_write_run_q(o, &rec, err, sizeof err)) {
          snprintf(why, whylen, "%s", err);
          rc = 1;
        }
        o->replaying = 0;
        o->done[r] = 1; /* written now: the driver skips it */
        (*restored)++;
      }
    }
  }
  free(jbuf);
  free(cbuf);
  return rc;
}

/* Writes a fresh file of sw holding the journal's runs, and renames it over
 * path (the damaged file). */
static int journal_rebuild(const char *path, const swp_sweep *sw, int64_t slice_index,
                           int64_t slice_count, fmt_journal *j, const fmt_timing *t,
                           char *err, size_t errlen) {
  char *tmp = NULL;
  int fd = fmt_mkstemp_beside(path, "rebuild", &tmp);
  if (fd < 0) {
    swp_seterr(err, errlen, "%s: cannot create a file beside it to rebuild it in: %s", path,
               strerror(errno));
    return -1;
  }
  close(fd);
  fmt_out *o = NULL;
  int rc = fmt_out_create_q(&o, tmp, sw, fmt_journal_command_line(j),
                              FMT_OUT_FORCE | FMT_OUT_NO_JOURNAL | FMT_OUT_NO_LOCK |
                                  FMT_OUT_IN_PLACE,
                              err, errlen);
  if (!rc && slice_count > 1) rc = fmt_out_set_slice_q(o, slice_index, slice_count, err, errlen);
  uint8_t *buf = NULL;
  size_t cap = 0;
  for (int64_t r = 0; r < o->n_runs && !rc && o; r++) {
    if (!fmt_journal_has(j, r)) continue;
    fmt_run_record rec;
    rc = fmt_journal_read(j, r, &rec, &buf, &cap, err, errlen) ||
         fmt_out_write_run_q(o, &rec, err, errlen);
  }
  free(buf);
  if (o) {
    int crc = rc ? (h5out_fail(o), h5out_abandon(o), -1) : fmt_out_close_q(o, t, err, errlen);
    if (crc) rc = -1;
  }
  if (!rc && (fmt_fsync_path(tmp) || fmt_rename_into_place(tmp, path, 1))) {
    swp_seterr(err, errlen, "%s: renaming the rebuilt file into place: %s", path, strerror(errno));
    rc = -1;
  }
  if (rc) unlink(tmp);
  free(tmp);
  return rc ? -1 : 0;
}

/* Whether every run of the journal reads back from the file as its record
 * (why says where not). */
static int file_matches_journal(fmt_out *o, char *why, size_t whylen) {
  uint8_t *jbuf = NULL, *cbuf = NULL;
  size_t jcap = 0, ccap = 0;
  int ok = 1;
  int64_t n = o->jid.n_runs < o->n_runs ? o->jid.n_runs : o->n_runs;
  for (int64_t r = 0; r < n && ok; r++) {
    if (!fmt_journal_has(o->journal, r)) continue;
    fmt_run_record rec;
    ok = !fmt_journal_read(o->journal, r, &rec, &jbuf, &jcap, why, whylen) &&
         run_matches(o, r, &rec, &cbuf, &ccap, why, whylen);
  }
  free(jbuf);
  free(cbuf);
  return ok;
}

/* Closes a finished resumed file that failed file_matches_journal: drops
 * it, writes it anew from the journal, and says so in err (returning 0). */
static int close_by_rebuild(fmt_out *o, const fmt_timing *t, const char *why, char *err,
                            size_t errlen) {
  fmt_journal *j = o->journal;
  fmt_lock *lock = o->lock;
  const swp_sweep *sw = o->sw;
  int64_t si = o->jid.slice_index, sc = o->jid.slice_count;
  char *path = strdup(o->path);
  o->journal = NULL;
  o->lock = NULL;
  h5out_fail(o);
  h5out_abandon(o);
  int rc = !path ? (swp_seterr(err, errlen, "out of memory"), -1)
                 : journal_rebuild(path, sw, si, sc, j, t, err, errlen);
  if (!rc) {
    int64_t kept = fmt_journal_count(j);
    fmt_fsync_dir(path);
    fmt_journal_close(j);
    j = NULL;
    fmt_journal_remove(path);
    swp_seterr(err, errlen, "%s was damaged while resuming (%.200s); rebuilt it from its "
               "journal, with all %lld runs", path, why, (long long)kept);
  }
  fmt_journal_close(j);
  fmt_lock_release(lock);
  free(path);
  return rc ? -1 : 0;
}

static int fmt_out_open_resume_q(fmt_out **out, const char *path, const swp_sweep *sw,
                                   int64_t slice_index, int64_t slice_count, int append,
                                   fmt_lock *held, char *err, size_t errlen) {
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", path);
    return -1;
  }
  if (slice_count <= 1) slice_index = slice_count = 0;
  /* The writer's lock: the caller's (a refine session holds it across its
   * rounds) or taken here and held until close. */
  fmt_lock *lock = NULL;
  if (!held && fmt_lock_acquire(&lock, path, err, errlen)) return -1;
  fmt_journal_id id;
  fmt_journal *j = NULL;
  int have_journal = 0;
  if (journal_id(sw, slice_index, slice_count, NULL, &id)) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    fmt_lock_release(lock);
    return -1;
  }
  char first[1024] = "", why[512] = "", note[512] = "", jerr[512] = "";
  if (fmt_journal_open(&j, path, &id, &have_journal, jerr, sizeof jerr)) {
    /* A journal of another sweep: the file's own checks name the
     * difference better; a matching file with it is refused below. */
    j = NULL;
  }
  fmt_out *o = NULL;
  int64_t restored = 0;
  int rc = resume_open_file(&o, path, sw, slice_index, slice_count, append, j != NULL, first,
                            sizeof first);
  if (!rc && j) {
    o->jid = id;
    int v = journal_verify(o, j, &restored, why, sizeof why);
    if (v < 0) {
      swp_seterr(err, errlen, "%s: its journal: %s", path, why);
      h5out_fail(o);
      h5out_abandon(o);
      fmt_journal_close(j);
      fmt_lock_release(lock);
      return -1;
    }
    if (v) {
      snprintf(first, sizeof first, "%s", why);
      /* Nothing of the damaged file may be written back. */
      h5out_fail(o);
      h5out_abandon(o);
      o = NULL;
      rc = -1;
    }
  }
  if (rc && j && !strstr(first, "locked")) {
    /* The file is damaged (or gone) but the journal holds every committed
     * run: rebuild it from the journal, then open that. */
    if (journal_rebuild(path, sw, slice_index, slice_count, j, NULL, err, errlen)) {
      fmt_journal_close(j);
      fmt_lock_release(lock);
      return -1;
    }
    char *dmg = first[0] ? first : (char *)"damaged";
    const char *p = strncmp(dmg, path, strlen(path)) ? dmg : dmg + strlen(path);
    if (*p == ':') p++;
    while (*p == ' ') p++;
    snprintf(note, sizeof note, "%s was damaged (%.200s); rebuilt it from %s.journal, keeping "
             "the %lld runs committed there", path, p, path, (long long)fmt_journal_count(j));
    first[0] = 0;
    restored = 0;
    rc = resume_open_file(&o, path, sw, slice_index, slice_count, append, j != NULL, first,
                            sizeof first);
    if (!rc) {
      o->jid = id;
      int v = journal_verify(o, j, &restored, why, sizeof why);
      if (v) {
        swp_seterr(err, errlen, "%s: rebuilt from its journal but does not verify: %s", path,
                   why);
        h5out_fail(o);
        h5out_abandon(o);
        fmt_journal_close(j);
        fmt_lock_release(lock);
        return -1;
      }
    }
  }
  if (!rc && jerr[0]) {
    snprintf(first, sizeof first, "%s (refusing to resume)", jerr);
    h5out_fail(o);
    h5out_abandon(o);
    rc = -1;
  }
  if (rc) {
    swp_seterr(err, errlen, "%s", first);
    fmt_journal_close(j);
    fmt_lock_release(lock);
    return -1;
  }
  o->lock = lock;
  o->jid = id;
  if (slice_count > 1)
    o->finish_runs = slice_runs(sw, slice_index, slice_count);
  if (restored && !note[0])
    snprintf(note, sizeof note, "%s: restored %lld committed runs from %s.journal", path,
             (long long)restored, path);
  snprintf(o->note, sizeof o->note, "%s", note);
  if (append) {
    /* Refine appends rows the journal cannot describe: finish what it
     * holds, make the file durable and drop it; from here commits sync the
     * file itself. */
    o->sync_file = 1;
    if (j && (h5out_commit(o, err, errlen) || h5out_sync_file(o, jerr, sizeof jerr))) {
      if (!err[0]) swp_seterr(err, errlen, "%s: %s", path, jerr);
      fmt_journal_close(j);
      h5out_fail(o);
      h5out_abandon(o);
      return -1;
    }
    fmt_journal_close(j);
    if (have_journal) fmt_journal_remove(path);
    *out = o;
    return 0;
  }
  if (j) {
    if (fmt_journal_truncate_tail(j, err, errlen)) {
      fmt_journal_close(j);
      h5out_fail(o);
      h5out_abandon(o);
      return -1;
    }
    o->journal = j;
  } else {
    /* A file closed cleanly (or written before journals): start one for the
     * runs this session adds. */
    o->jcmd = strdup("");
    id.command_line = "";
    if (fmt_journal_create(&o->journal, path, &id, err, errlen)) {
      h5out_fail(o);
      h5out_abandon(o);
      return -1;
    }
  }
  *out = o;
  return 0;
}


/* ---- appending runs (refine) ---- */

int64_t fmt_out_rows(const fmt_out *o) { return o->n_runs; }

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
    ds = dataset_1d(g, "round_start", H5T_STD_I64LE, 1, 64, NULL, 0, 1);
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
  if (o->n_pend && h5out_commit(o, err, errlen)) return -1;
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
  for (int64_t i = 0; i < n; i++) {
    runs_fill_row(&rows[i]);
    rows[i].run = ids[i] = n0 + i;
    rows[i].point = point[i];
    rows[i].replicate = replicate[i];
    rows[i].s.seed = eng_seed_derive(o->master_seed, (uint64_t)point[i], (uint64_t)replicate[i]);
  }
  hsize_t dim = (hsize_t)n1, dims2[2] = {(hsize_t)n1, (hsize_t)o->ticks_n};
  hsize_t start = (hsize_t)n0, cnt = (hsize_t)n;
  const char *step = "extending /runs";
  int rc = H5Dset_extent(o->runs, &dim) < 0;
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    step = "extending /ticks";
    rc = H5Dset_extent(o->ticks[m], dims2) < 0;
  }
  if (!rc) step = "extending /timing", rc = H5Dset_extent(o->wall, &dim) < 0 ||
                                         H5Dset_extent(o->thread, &dim) < 0;
  if (!rc) {
    H5Sclose(o->runs_space);
    H5Sclose(o->timing_space);
    o->runs_space = o->timing_space = -1;
    step = "/runs";
    rc = h5out_spaces(o);
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
    if (!rc && o->shardq >= 0) {
      hsize_t d3[3] = {(hsize_t)n1, (hsize_t)o->ticks_n, (hsize_t)o->shards_n};
      rc = H5Dset_extent(o->shardq, d3) < 0;
    }
    double *numbers = rc ? NULL : points_numbers(sw);
    if (!rc) {
      step = "/ticks coordinates";
      rc = !numbers || write_run_coords(o, g, sw, numbers, n0, n, point, replicate);
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
  if (!rc) step = "reserve", rc = h5out_reserve(o, why, sizeof why);
  if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
  free(rows);
  free(ids);
  if (rc) {
    if (!why[0]) fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: appending %lld runs (%s): %s", o->path, (long long)n, step, why);
    h5out_fail(o);
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

/* ---- read-only access (merge) ---- */

static void h5in_release(fmt_in *in) {
  if (in->runs >= 0) H5Dclose(in->runs);
  if (in->runs_mem >= 0) H5Tclose(in->runs_mem);
  if (in->wall >= 0) H5Dclose(in->wall);
  if (in->thread >= 0) H5Dclose(in->thread);
  if (in->outcome >= 0) H5Dclose(in->outcome);
  if (in->shardq >= 0) H5Dclose(in->shardq);
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (in->ticks[m] >= 0) H5Dclose(in->ticks[m]);
  if (in->file >= 0) H5Fclose(in->file);
}

static void fmt_in_close_q(fmt_in *in) {
  if (!in) return;
  h5in_release(in);
  fmt_info_free(&in->info);
  free(in->path);
  free(in);
}

static void read_timing_info(hid_t f, fmt_info *info) {
  if (H5Lexists(f, "timing", H5P_DEFAULT) <= 0) return;
  hid_t g = H5Gopen2(f, "timing", H5P_DEFAULT);
  if (g < 0) return;
  fmt_attr_get_num(g, "wall_s", H5T_NATIVE_DOUBLE, &info->wall_s);
  fmt_attr_get_num(g, "simulate_s", H5T_NATIVE_DOUBLE, &info->simulate_s);
  fmt_attr_get_num(g, "encode_s", H5T_NATIVE_DOUBLE, &info->encode_s);
  fmt_attr_get_num(g, "write_s", H5T_NATIVE_DOUBLE, &info->write_s);
  fmt_attr_get_num(g, "threads", H5T_NATIVE_INT32, &info->threads);
  fmt_attr_get_str(g, "started", SWP_MAX_TEXT, &info->started);
  fmt_attr_get_str(g, "finished", SWP_MAX_TEXT, &info->finished);
  char **when[2] = {&info->started, &info->finished};
  for (int i = 0; i < 2; i++)
    if (*when[i] && swp_text_problem(*when[i], 64, 0)) {
      free(*when[i]);
      *when[i] = NULL;
    }
  H5Gclose(g);
}

static int fmt_in_open_q(fmt_in **out, const char *path, char *err, size_t errlen) {
  *out = NULL;
  fmt_in *in = calloc(1, sizeof *in);
  if (!in || !(in->path = strdup(path))) {
    free(in);
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  in->file = in->runs = in->runs_mem = in->wall = in->thread = in->outcome = in->shardq = -1;
  for (int m = 0; m < ENG_M_COUNT; m++) in->ticks[m] = -1;
  char why[256];
  if (access(path, R_OK)) {
    swp_seterr(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    goto fail;
  }
  if (H5Fis_hdf5(path) <= 0) {
    swp_seterr(err, errlen, "%s: not an HDF5 file (or truncated or damaged beyond reading)", path);
    goto fail;
  }
  in->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (in->file < 0) {
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: cannot open: %s", path, why);
    goto fail;
  }
  if (fmt_layout_read_info(in->file, path, &in->info, err, errlen) ||
      fmt_layout_open_datasets(in->file, path, &in->info, &in->runs, &in->runs_mem,
                               in->ticks, &in->wall, &in->thread, &in->outcome, &in->shardq,
                               &in->shards_n, err, errlen))
    goto fail;
  read_timing_info(in->file, &in->info);
  *out = in;
  return 0;
fail:
  fmt_in_close(in);
  return -1;
}

const fmt_info *fmt_in_info(const fmt_in *in) { return &in->info; }

int fmt_in_sweep(const fmt_in *in, swp_sweep *sw, char *err, size_t errlen) {
  const fmt_info *info = &in->info;
  swp_sweep_init(sw);
  char source[512], msg[1024];
  snprintf(source, sizeof source, "%s (its sweep_text)", in->path);
  if (swp_sweep_parse_string(sw, info->sweep_text, source, msg, sizeof msg) ||
      swp_sweep_check(sw, msg, sizeof msg)) {
    swp_seterr(err, errlen, "%s", msg);
    swp_sweep_free(sw);
    swp_sweep_init(sw);
    return -1;
  }
  char *text = swp_sweep_format(sw);
  int same = text && !strcmp(text, info->sweep_text);
  free(text);
  int64_t runs = swp_sweep_runs(sw);
  if (!same || runs > info->n_runs || (info->n_runs != runs && info->n_points * info->replicates != runs) ||
      sw->ticks != info->ticks || sw->seed != info->master_seed) {
    swp_seterr(err, errlen, "%s: its sweep_text does not describe its own shape (%lld runs x %d "
               "ticks, seed %llu): damaged or from another tool", in->path,
               (long long)info->n_runs, info->ticks, (unsigned long long)info->master_seed);
    swp_sweep_free(sw);
    swp_sweep_init(sw);
    return -1;
  }
  /* The sweep names its origin as the file does. */
  free(sw->source);
  free(sw->source_text);
  sw->source = strdup(info->sweep_source ? info->sweep_source : "");
  sw->source_text =
      info->sweep_source_text && info->sweep_source_text[0] ? strdup(info->sweep_source_text) : NULL;
  return 0;
}

static int fmt_in_read_done_q(fmt_in *in, uint8_t *done, char *err, size_t errlen) {
  if (fmt_layout_read_done(in->runs, in->info.n_runs, done)) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: cannot read the done column of /runs: %s", in->path, why);
    return -1;
  }
  return 0;
}

static int fmt_in_read_records_q(fmt_in *in, const int64_t *runs, size_t n,
                                   fmt_run_record *recs, char *err, size_t errlen) {
  if (!n) return 0;
  run_row *rows = malloc(n * sizeof *rows);
  hsize_t *at = malloc(n * sizeof *at);
  double *wall = malloc(n * sizeof *wall);
  int32_t *thread = malloc(n * sizeof *thread);
  hid_t fs = H5Dget_space(in->runs), ts = H5Dget_space(in->wall);
  hsize_t cnt = n;
  hid_t ms = H5Screate_simple(1, &cnt, NULL);
  int rc = !rows || !at || !wall || !thread || fs < 0 || ts < 0 || ms < 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (runs[i] < 0 || runs[i] >= in->info.n_runs) rc = 1;
    at[i] = (hsize_t)runs[i];
  }
  const char *step = "/runs";
  if (!rc)
    rc = H5Sselect_elements(fs, H5S_SELECT_SET, n, at) < 0 ||
         H5Dread(in->runs, in->runs_mem, ms, fs, H5P_DEFAULT, rows) < 0;
  if (!rc) {
    step = "/timing";
    rc = H5Sselect_elements(ts, H5S_SELECT_SET, n, at) < 0 ||
         H5Dread(in->wall, H5T_NATIVE_DOUBLE, ms, ts, H5P_DEFAULT, wall) < 0 ||
         H5Dread(in->thread, H5T_NATIVE_INT32, ms, ts, H5P_DEFAULT, thread) < 0;
  }
  if (rc) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: reading %s: %s", in->path, step, why);
  }
  const fmt_info *info = &in->info;
  for (size_t i = 0; i < n && !rc; i++) {
    const run_row *row = &rows[i];
    int64_t r = runs[i], point = r / info->replicates;
    int32_t rep = (int32_t)(r % info->replicates);
    uint64_t seed = swp_run_seed(info->master_seed, info->crn, point, rep);
    if (row->run != r || row->point != point || row->replicate != rep || row->s.seed != seed ||
        !row->done || row->s.outcome < ENG_OUTCOME_RECOVERED ||
        row->s.outcome >= ENG_OUTCOME_COUNT || row->ticks < 0 || row->ticks > info->ticks) {
      swp_seterr(err, errlen,
                 "%s: the /runs row of run %lld is inconsistent (run %lld, point %lld, replicate "
                 "%d, seed %llu, done %d, outcome %d, ticks %d; expected point %lld, replicate %d, "
                 "seed %llu)",
                 in->path, (long long)r, (long long)row->run, (long long)row->point,
                 row->replicate, (unsigned long long)row->s.seed, row->done, row->s.outcome,
                 row->ticks, (long long)point, rep, (unsigned long long)seed);
      rc = 1;
      break;
    }
    fmt_run_record *rec = &recs[i];
    memset(rec, 0, sizeof *rec);
    rec->run = r;
    rec->point = point;
    rec->replicate = rep;
    rec->ticks = row->ticks;
    rec->summary = row->s;
    rec->wall_s = wall[i];
    rec->thread = thread[i];
  }
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (ts >= 0) H5Sclose(ts);
  free(rows);
  free(at);
  free(wall);
  free(thread);
  return rc ? -1 : 0;
}

static int fmt_in_read_chunks_q(fmt_in *in, int64_t r, uint8_t **buf, size_t *cap,
                         fmt_run_record *rec, char *err, size_t errlen) {
  size_t bound = fmt_chunk_bound((size_t)in->info.ticks), used = 0, offset[ENG_M_COUNT];
  hsize_t at[2] = {(hsize_t)r, 0};
  for (int m = 0; m < ENG_M_COUNT; m++) {
    const char *name = eng_metric_get_info((eng_metric)m)->name;
    hsize_t size = 0;
    if (chunk_size_at(in->ticks[m], r, &size)) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      swp_seterr(err, errlen, "%s: reading the chunk index of /ticks/%s at run %lld: %s",
                 in->path, name, (long long)r, why);
      return -1;
    }
    if (size == 0 || size > bound) {
      swp_seterr(err, errlen, "%s: run %lld is marked done but its /ticks/%s chunk %s", in->path,
                 (long long)r, name, size ? "is larger than any encoding" : "is missing");
      return -1;
    }
    if (buf_reserve(buf, cap, used + (size_t)size)) {
      swp_seterr(err, errlen, "%s: out of memory reading run %lld", in->path, (long long)r);
      return -1;
    }
    uint32_t mask = 0;
    if (H5Dread_chunk(in->ticks[m], H5P_DEFAULT, at, &mask, *buf + used) < 0 || mask != 0) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      swp_seterr(err, errlen, "%s: reading run %lld's /ticks/%s chunk: %s", in->path,
                 (long long)r, name, mask ? "stored without its filters" : why);
      return -1;
    }
    offset[m] = used;
    rec->chunk_size[m] = (size_t)size;
    used += (size_t)size;
  }
  rec->shard_chunk = NULL;
  rec->shard_chunk_size = 0;
  if (in->shardq >= 0) {
    hsize_t size = 0, at3[3] = {(hsize_t)r, 0, 0};
    size_t sbound = fmt_chunk_bound((size_t)in->info.ticks * (size_t)in->shards_n);
    if (chunk_size_at(in->shardq, r, &size) || size == 0 || size > sbound) {
      swp_seterr(err, errlen, "%s: run %lld is marked done but its /ticks/%s chunk is missing "
                 "or unreadable", in->path, (long long)r, FMT_TICKS_SHARD_QUEUES);
      return -1;
    }
    if (buf_reserve(buf, cap, used + (size_t)size)) {
      swp_seterr(err, errlen, "%s: out of memory reading run %lld", in->path, (long long)r);
      return -1;
    }
    uint32_t mask = 0;
    if (H5Dread_chunk(in->shardq, H5P_DEFAULT, at3, &mask, *buf + used) < 0 || mask != 0) {
      swp_seterr(err, errlen, "%s: reading run %lld's /ticks/%s chunk", in->path, (long long)r,
                 FMT_TICKS_SHARD_QUEUES);
      return -1;
    }
    rec->shard_chunk_size = (size_t)size;
    rec->shard_chunk = *buf + used; /* set after any realloc, like the metrics' below */
  }
  for (int m = 0; m < ENG_M_COUNT; m++) rec->chunk[m] = *buf + offset[m];
  return 0;
}

static double fmt_in_ticks_bytes_q(fmt_in *in) {
  double b = 0;
  for (int m = 0; m < ENG_M_COUNT; m++) b += (double)H5Dget_storage_size(in->ticks[m]);
  return b;
}

/* ---- public entry points: HDF5's error printing off around each ----
 *
 * The library is built thread-safe, so error stacks and their printing are
 * per thread, and the writer is called from whichever OpenMP thread holds
 * the critical section: each call silences its own thread, and our messages
 * (h5_reason) replace HDF5's stack dumps. */

int fmt_out_create(fmt_out **out, const char *path, const swp_sweep *sw,
                     const char *command_line, int force, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_create_q(out, path, sw, command_line, force ? FMT_OUT_FORCE : 0, err,
                              errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_create_flags(fmt_out **out, const char *path, const swp_sweep *sw,
                           const char *command_line, unsigned flags, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_create_q(out, path, sw, command_line, flags, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

const char *fmt_out_note(const fmt_out *o) { return o->note; }

int fmt_out_set_slice(fmt_out *o, int64_t index, int64_t count, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_set_slice_q(o, index, count, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_write_run(fmt_out *o, const fmt_run_record *rec, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_write_run_q(o, rec, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_flush(fmt_out *o, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_flush_q(o, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_close(fmt_out *o, const fmt_timing *t, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_close_q(o, t, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_open_resume(fmt_out **out, const char *path, const swp_sweep *sw,
                          int64_t slice_index, int64_t slice_count, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_open_resume_q(out, path, sw, slice_index, slice_count, 0, NULL, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

void fmt_in_close(fmt_in *in) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  fmt_in_close_q(in);
  fmt_h5_quiet_end(&q);
}

int fmt_in_open(fmt_in **out, const char *path, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_open_q(out, path, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_in_read_done(fmt_in *in, uint8_t *done, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_read_done_q(in, done, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_in_read_records(fmt_in *in, const int64_t *runs, size_t n, fmt_run_record *recs,
                          char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_read_records_q(in, runs, n, recs, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_in_read_chunks(fmt_in *in, int64_t r, uint8_t **buf, size_t *cap, fmt_run_record *rec,
                         char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_read_chunks_q(in, r, buf, cap, rec, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

double fmt_in_ticks_bytes(fmt_in *in) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  double rc = fmt_in_ticks_bytes_q(in);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_open_append(fmt_out **out, const char *path, const swp_sweep *sw, fmt_lock *held,
                        char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_open_resume_q(out, path, sw, 0, 0, 1, held, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
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
