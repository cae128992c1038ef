/*
 * layout.h — the one owner of the result file's layout (SPEC §4): the format
 * name and versions, the names of every group, dataset and attribute that
 * the writer (h5out.c), merge/resume (h5out.c, merge.c) and the analysis
 * reader (analysis/reader.c) share, and the /ticks coordinates of format 2.
 * A format change is made here; the full description of the layout is in
 * sweeps/h5out.c's header comment and docs/file-format.md.
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
 */
#ifndef STORMSWEEP_LAYOUT_H
#define STORMSWEEP_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "fmt.h"


/* Root attributes. */
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
/* The run-indexed coordinates every format 2 file has, in this order; the
 * grid axes follow, named by their setting keys. */
enum { FMT_RUN_COORDS = 4 };
extern const char *const fmt_run_coord_names[FMT_RUN_COORDS]; /* point replicate seed outcome */

/* The /ticks name of axis key in format 2: the key itself, or "axis_<key>"
 * when the key is already taken in /ticks (a metric or a coordinate above).
 * buf holds len bytes. */
const char *fmt_layout_axis_coord(const char *key, char *buf, size_t len);
/* Whether name is a member of a format 2 /ticks group that is no (runs x
 * ticks) metric: a coordinate (run, time_ms, shard, a run coordinate above)
 * or shard_queue_depth. Axis coordinates are named by fmt_layout_axis_coord. */
int fmt_layout_is_fixed_coord(const char *name);

#endif
