/*
 * layout.h — the one owner of the result file's layout: the format
 * name and versions, the names of every group, dataset and attribute that
 * the writer (create.c, state.c), resume, merge and the analysis
 * reader (results_read.c) share, and the /ticks coordinates of format 2.
 * A format change is made here, and described below (docs/file-format.md
 * is the users' description).
 *
 * Format versions:
 *   1  (stormsweep 0.1.0) dimension scales /run and /time_ms at the root;
 *      /ticks/<metric> carry a `_FillValue` attribute (xarray decodes them to
 *      float64) and no coordinates beyond the two scales.
 *   2  the scales live in /ticks (/ticks/run, /ticks/time_ms), with run-indexed
 *      coordinates /ticks/point, /ticks/replicate, /ticks/seed, /ticks/outcome
 *      and one float64 /ticks/<axis key> per grid axis, named in each
 *      variable's CF `coordinates` attribute; no `_FillValue` attribute, so
 *      counts stay int32 in xarray (unwritten cells still read -1, the HDF5
 *      fill value); optional /ticks/shard_queue_depth (runs x ticks x shards)
 *      with the scale /ticks/shard.
 * Readers accept every version from FMT_FORMAT_VERSION_MIN_READ up; writers
 * (run, resume, refine, merge) write FMT_FORMAT_VERSION only and refuse to
 * continue or merge a file of another version.
 *
 * ## Layout (format "stormsweep-results", format_version 3)
 *
 * N = n_runs = n_points x replicates; T = ticks (the most of any point);
 * run r = point * replicates + replicate — for the sweep's own runs: `refine`
 * appends rows past them (append.c: /runs, every run-indexed /ticks dataset
 * and /timing/run_<x> have an unlimited run dimension; n_runs then counts
 * the appended rows too, whose point and replicate are in their columns, and
 * /refine/round_start records where each round's rows begin; fmt_store.h and
 * refine_store.c describe /refine);
 * point p = the cartesian product of
 * the axes with the first axis varying slowest. Strings are ASCII: attributes
 * and /axes variable-length, /points_text fixed-length NUL-terminated.
 *
 * | object            | type, shape, storage                     | contents |
 * |-------------------|------------------------------------------|----------|
 * | `/` (attributes)  | scalars unless noted                     | `format` = "stormsweep-results"; `format_version` = 2 (int32); `tool_version`; `master_seed` (uint64); `instance` (uint64: random, drawn at creation and kept by resume and rebuild; FILE.journal names it, journal.c); `crn` (int32: 1 with common random numbers, `crn = on`; missing in older files = 0); `replicates`, `n_points`, `n_runs` (int64); `ticks` (int32, T); `tick_ms` (float64); `axes` (string [n_axes], axis keys, slowest first); `scenario_axes` (the axes that are scenario, not tunable, joined by ", "; missing in older files: each setting's default role, docs/decisions.md); `metrics` (string [19], the /ticks datasets in engine order); `sweep_name`, `sweep_description` ("" when unset); `sweep_text` (the effective sweep as INI, overrides folded in; parses back to the same sweep); `sweep_source` (file name, or "built-in seed study"); `sweep_source_text` (that file verbatim, comments included); `command_line`; `created` (ISO 8601 UTC, e.g. "2024-05-01T12:00:00Z"); `complete` (int32: 0 until every run of the sweep is written, then 1). Only in the file of one slice (run --slice K/N): `slice` ("K/N"), `slice_index`, `slice_count` (int64) |
 * | `/points`         | compound [n_points]                      | `point` (int64), then one float64 column per axis named by its key: eng_config_get_number of the point's config (enums: their index; windows: first start in ms, NaN for none; policy: 0 naive, 1 guarded, NaN custom) |
 * | `/points_text`    | compound [n_points]                      | `point` (int64), then one string column per axis, same names: the value as the engine prints it ("inf", "full", "2000+500 6000+200") |
 * | `/axes/<key>`     | string [values]                          | one per axis: its values in order; attributes `numbers` (float64 [values]) and `position` (int32, 0 = slowest) |
 * | `/runs`           | compound [N], chunks of 1024 rows        | one row per run, columns below |
 * | `/ticks/<metric>` | int32 [N, T], chunk [1, T], shuffle + deflate 3, fill -1 | per-tick counts, one dataset per metric: `new_requests`, `attempts`, `retries`, `successes`, `timeouts`, `rejected_queue_full`, `rejected_router`, `rejected_breaker`, `rejected_budget`, `shed`, `lost`, `failed_requests`, `wasted`, `queue_depth`, `max_shard_queue`, `in_flight`, `hops`, `open_breakers`, `budget_tokens` (eng_metric_get_info; the root `metrics` attribute lists them); attributes `units`, `long_name`, `coordinates` (CF: the run coordinates below); no `_FillValue` attribute (xarray would decode to float64); dimension scales `/ticks/run` on dim 0 and `/ticks/time_ms` on dim 1. Runs not written yet, ticks past a run's own horizon (when horizon_ms is an axis) and refine's confirmation runs (appended rows of replicate >= the screening ones, unless refined by SLO terms or --ticks: their chunks are never written, fmt__record_has_rows) read -1 (the storage fill value) |
 * | `/ticks/run`      | int64 [N]                                | dimension scale "run": 0 .. N-1 (`units`, `long_name` on every coordinate) |
 * | `/ticks/time_ms`  | float64 [T]                              | dimension scale "time_ms": start of tick t, t x tick_ms (`units` = "ms") |
 * | `/ticks/point`, `/ticks/replicate`, `/ticks/seed` | int64, int32, uint64 [N] | run coordinates, as in /runs; written when the row is created |
 * | `/ticks/outcome`  | int8 [N], allocated early, fill -1       | run coordinate written at each commit with the /runs row; `flag_values` -1..4, `flag_meanings` "not_run recovered slow metastable collapsed undetermined" |
 * | `/ticks/<axis>`   | float64 [N]                              | one per grid axis, named by its key ("axis_<key>" if a metric has that name): the /points value of the run's point |
 * | `/ticks/shard`, `/ticks/shard_queue_depth` | int32 [S]; int32 [N, T, S], chunk [1, T, S], shuffle + deflate 3, fill -1 | only when some point records them (record_shard_queues = on; S the most shards of such a point): each shard's queue depth at the end of each tick; -1 for shards a point lacks. Written like the metrics (H5Dwrite_chunk) |
 * | `/ticks/service`, `/ticks/service_<metric>` | string (variable length) [K]; int32 [N, T, K], chunk [1, T, K], shuffle + deflate 3, fill -1 | only for a call graph (swp_sweep.services = K, the front first; not at record = summary): each service's series (eng_service_trace, named service_ + the metric each mirrors, eng_service_trace_metric) per stored row; the front's column is its metric. Written like the metrics |
 * | `/ticks/service_field`, `/ticks/service_summary` | string [FMT_SERVICE_FIELDS]; int32 [N, FMT_SERVICE_FIELDS, K], chunk of one run, filters and fill as above | the same graphs: each service's eng_service_summary as fmt_service_fields encodes it |
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
 * the outcome rule decides on; docs/model.md "The outcome rule"):
 * `baseline_goodput_ratio`, `baseline_amplification`, `collapse_ms`,
 * `collapse_watch_ms`, `return_ms`, `late_goodput`, `late_amplification`,
 * `late_wasted_share`, `drain_ms`, `late_load`; last `stage` (int32: 0 for
 * the sweep's own runs, k >= 1 for a row refine round k appended; set when
 * the row is made, kept by commits). A file from before the stage column
 * is still read, resumed and refined as it is (its rows get no stage;
 * readers derive it from the replicate and /refine/round_start).
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
#ifndef STORMSWEEP_LAYOUT_H
#define STORMSWEEP_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "fmt.h"


/* Root attributes. */
/* The longest run a result file may hold: a /ticks chunk of 400 MB, far
 * beyond any sweep the engine is asked for; every reader and the journal
 * refuse more before allocating for it. */
#define FMT_MAX_TICKS 100000000

#define FMT_ATTR_FORMAT "format"
#define FMT_ATTR_FORMAT_VERSION "format_version"
#define FMT_ATTR_TOOL_VERSION "tool_version"
#define FMT_ATTR_MASTER_SEED "master_seed"
#define FMT_ATTR_SWEEP_TEXT "sweep_text"
#define FMT_ATTR_TICK_MS "tick_ms"
#define FMT_ATTR_COMPLETE "complete"
#define FMT_ATTR_N_RUNS "n_runs"
#define FMT_ATTR_N_POINTS "n_points"
#define FMT_ATTR_TICKS "ticks"
#define FMT_ATTR_REPLICATES "replicates"
#define FMT_ATTR_INSTANCE "instance"
/* On /axes/<key>: 1 when its numbers (and /points') are the values'
 * indexes, the settings' numbers not telling them apart (swp_axis_numbers). */
#define FMT_ATTR_NUMBERS_ARE_INDEXES "numbers_are_indexes"
/* What /ticks stores (sweeps/record.c), only in files that are not full
 * with every metric: `record` ("every=10ms", "summary", or "full" with a
 * record_metrics list), `rows` (int32: stored rows per run, the /ticks
 * width; 0 at summary), `row_ms` (float64: the spacing of stored rows, NaN
 * at summary); `metrics` then lists the /ticks datasets there are. */
#define FMT_ATTR_RECORD "record"
#define FMT_ATTR_ROWS "rows"
#define FMT_ATTR_ROW_MS "row_ms"

/* Objects (paths from the root). */
#define FMT_DSET_POINTS "/points"
#define FMT_DSET_POINTS_TEXT "/points_text"
#define FMT_DSET_RUNS "/runs"
#define FMT_GROUP_TICKS "/ticks"
#define FMT_GROUP_TIMING "/timing"
#define FMT_GROUP_REFINE "/refine"
#define FMT_COL_POINT "point"

/* Format 2: the /ticks coordinates (names inside /ticks). */
#define FMT_COORD_RUN "run"
#define FMT_COORD_TIME "time_ms"
#define FMT_COORD_SHARD "shard"
#define FMT_TICKS_SHARD_QUEUES "shard_queue_depth"
#define FMT_COORD_SERVICE "service"
#define FMT_COORD_SERVICE_FIELD "service_field"
/* A fmt_wide dataset's third dimension: its scale's name (shard, service)
 * and the most it may hold. */
const char *fmt_layout_wide_scale(fmt_wide w);
int32_t fmt_layout_wide_max(fmt_wide w);
/* The run-indexed coordinates every format 2 file has, in this order; the
 * grid axes follow, named by their setting keys. */
enum { FMT_RUN_COORDS = 4 };
extern const char *const fmt_run_coord_names[FMT_RUN_COORDS]; /* point replicate seed outcome */

/* The /ticks name of axis key in format 2: the key itself, or "axis_<key>"
 * when the key is already taken in /ticks (a metric or a coordinate above).
 * buf holds len bytes. */
const char *fmt_layout_axis_coord(const char *key, char *buf, size_t len);
/* Whether name is a member of a format 2 /ticks group that is no (runs x
 * ticks) metric: a coordinate (run, time_ms, shard, service, a run
 * coordinate above) or a fmt_wide dataset. Axis coordinates are named by fmt_layout_axis_coord. */
int fmt_layout_is_fixed_coord(const char *name);

#endif
