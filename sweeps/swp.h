/*
 * swp.h — public API of stormsweep sweeps (SPEC §3–4): sweep files, grid
 * expansion, the OpenMP driver and the HDF5 result writer.
 *
 * A sweep is a scenario (engine settings fixed for every run), grid axes
 * (settings that take a list of values), a replicate count and a master seed.
 * Every (grid point, replicate) is one run:
 *
 *   points   = cartesian product of the axes in file order, the first axis
 *              varying slowest (point 0 takes every axis's first value);
 *   run      = point * replicates + replicate;
 *   seed     = eng_seed_derive(master seed, point, replicate), or with
 *              crn = on eng_seed_derive(master seed, 0, replicate): common
 *              random numbers, every point sharing replicate r's streams.
 *
 * A run's results depend only on its point's configuration and its seed, so a
 * sweep gives bit-identical results for any thread count or run order.
 *
 * Sweep file grammar (INI, parsed with libinih; ';' or '#' start a comment):
 *
 *   [sweep]                   ; all optional
 *   name        = seed        ; a label stored in the result file
 *   description = free text
 *   replicates  = 20          ; runs per grid point (default 20)
 *   seed        = 1           ; master seed, decimal or 0x hex (default 1)
 *   crn         = off         ; on: common random numbers across points
 *   refine      = off         ; on: `run` then refines the file (stormsweep refine)
 *   scenario_axes = load, ... ; axes that are the world's, not a choice (default: traffic,
 *   tunable_axes  = ...       ; faults, time, measurement settings; docs/decisions.md)
 *
 *   [scenario]                ; fixed settings: any key of the engine
 *   load        = 0.7         ; settings table ('stormsweep sim --list-settings')
 *   surge       = 2000+500
 *
 *   [grid]                    ; axes: any setting key, a list of values
 *   vnodes          = 10, 50, 150
 *   capacity_factor = 1.1, 1.25, 2, inf
 *   load            = lin(0.5, 0.9, 5)         ; 5 points, ends included
 *   budget_ratio    = log(0.01, 1, 3), inf     ; 0.01, 0.1, 1, inf
 *   surge           = none, 2000+500 6000+200  ; a value may contain spaces
 *
 * A list item is a value (anything eng_config_set accepts, without commas),
 * lin(START, STOP, N) or log(START, STOP, N) (N points including both ends;
 * integer settings round to whole numbers). Lines are at most
 * SWP_MAX_LINE characters; a longer list continues on indented lines, each
 * continuation adding more list items (for a scenario value or description,
 * more words). Settings apply in order: engine defaults, then [scenario] in
 * file order, then one value of each axis in axis order — so an axis that is
 * a preset (policy) overrides the scenario settings it covers.
 *
 * Command-line overrides: --set key=value fixes a setting (removing an axis of
 * that key); --grid key=v1,v2 replaces an axis in place or appends one
 * (removing a scenario entry of that key). The effective sweep, with the
 * overrides folded in, is swp_sweep_format()'s INI text, which parses back to
 * the same sweep and is stored in the result file.
 *
 * Errors name the file, the line and the key ("seed.ini:12: unknown setting
 * 'vnode' in [grid] (did you mean 'vnodes'?)"). swp_sweep_check() validates
 * every grid point with eng_config_validate before anything runs.
 *
 * Threading: a parsed swp_sweep is read-only during a sweep and may be shared
 * by all threads. The writer (swp_h5out) is not thread-safe: the driver calls
 * it from one critical section; encoding chunks (swp_chunk_encode, one
 * encoder per thread) runs in the workers.
 */
#ifndef STORMSWEEP_SWP_H
#define STORMSWEEP_SWP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "eng.h"
#include "eng_config.h"

#define SWP_MAX_LINE 196          /* longest sweep-file line (libinih's buffer is 200) */
#define SWP_DEFAULT_REPLICATES 20
#define SWP_DEFAULT_SEED 1
#define SWP_MAX_RUNS 1000000000LL /* a sweep bigger than this is surely a typo */
#define SWP_MAX_AXES 64
/* Most grid points: each is validated (about a microsecond) and listed
 * before anything runs, so a typo like lin(1, 1000, 1000) on four axes must
 * not stall for minutes before its message; the analysis refuses a /points
 * table longer than this too. Replicates bring the runs up to SWP_MAX_RUNS. */
#define SWP_MAX_POINTS 10000000LL
/* Longest sweep text stored in (and read back from) a result file. */
#define SWP_MAX_TEXT (1u << 20)

/* Strings read from files somebody else wrote: NULL when s is at most
 * max_len bytes of valid, printable UTF-8 (no C0 or C1 control character,
 * no DEL; newline and tab only when multiline), else what is wrong ("is not
 * valid UTF-8", "holds control character 0x1b", "is longer than 64
 * bytes"), for a message. */
const char *swp_text_problem(const char *s, size_t max_len, int multiline);

/* ---- sweeps ---- */

/* A fixed scenario setting, as written. */
typedef struct swp_setting {
  char *key;
  char *value;
  int line;      /* line in the sweep file; 0 when it came from --set */
} swp_setting;

/* A grid axis: the list as written and its expansion. */
typedef struct swp_axis {
  char *key;
  char *spec;    /* items joined by ", ", e.g. "0.05, lin(0.1, 0.3, 3), inf" */
  int line;      /* 0 when it came from --grid */
  size_t count;  /* number of values, >= 1 */
  char **values; /* each value in the form eng_config_get prints (presets: the name) */
} swp_axis;

typedef struct swp_sweep {
  char *source;      /* file name for messages; "built-in seed study" for the default */
  char *source_text; /* the file text verbatim (NULL when built from overrides only) */
  char *name, *description;
  int64_t replicates;
  uint64_t seed;
  int crn;           /* common random numbers: the seed ignores the point */
  int refine;        /* [sweep] refine = on: `run` refines the file when the sweep is done */
  char *scenario_axes, *tunable_axes; /* [sweep] role overrides, "a, b" ("" = none); NULL unset */
  size_t n_settings;
  swp_setting *settings;
  size_t n_axes;
  swp_axis *axes;
  /* Filled by swp_sweep_check: */
  eng_config base;   /* defaults + [scenario]; a point's config adds its axis values */
  int64_t n_points;  /* product of the axis lengths */
  int32_t ticks;     /* most ticks of any point (horizon_ms may be an axis) */
  double tick_ms;    /* the same for every point */
  int32_t shard_queues; /* most shards of any point recording them (record_shard_queues = on);
                           0: no point does. The width of /ticks/shard_queue_depth */
  int checked;
} swp_sweep;

void swp_sweep_init(swp_sweep *sw);
/* 1 when key is a scenario axis of this sweep ([sweep] scenario_axes /
 * tunable_axes, else the setting's default role, eng_setting_role_find). */
int swp_sweep_axis_is_scenario(const swp_sweep *sw, const char *key);
void swp_sweep_free(swp_sweep *sw);

/* Parses sweep text (source names it in messages). sw must be freshly
 * initialised. Returns 0 or -1 with "SOURCE:LINE: message" in err. */
int swp_sweep_parse_string(swp_sweep *sw, const char *text, const char *source, char *err,
                           size_t errlen);
/* Reads and parses a sweep file. */
int swp_sweep_parse_file(swp_sweep *sw, const char *path, char *err, size_t errlen);
/* The built-in seed study (the text of sweeps/seed.ini, compiled in). */
const char *swp_seed_study_text(void);
int swp_sweep_parse_seed_study(swp_sweep *sw, char *err, size_t errlen);

/* Command-line overrides, "key=value" and "key=v1,v2,...". */
int swp_sweep_override_set(swp_sweep *sw, const char *assignment, char *err, size_t errlen);
int swp_sweep_override_grid(swp_sweep *sw, const char *assignment, char *err, size_t errlen);
/* key = value as if appended to [scenario]: replaces the file's setting of
 * key but, unlike --set, keeps a grid axis of key (which then wins). For
 * --client (client_import.h). */
int swp_sweep_scenario_set(swp_sweep *sw, const char *key, const char *value, char *err,
                           size_t errlen);

/* Builds the base config and validates every grid point (cost: one
 * eng_config_validate per point). Must succeed before the calls below. */
int swp_sweep_check(swp_sweep *sw, char *err, size_t errlen);

static inline int64_t swp_sweep_runs(const swp_sweep *sw) { return sw->n_points * sw->replicates; }

/* Seed of run (point, replicate); with crn every point shares replicate r's. */
static inline uint64_t swp_run_seed(uint64_t master, int crn, int64_t point, int64_t replicate) {
  return eng_seed_derive(master, crn ? 0 : (uint64_t)point, (uint64_t)replicate);
}

/* Value index of each axis at point (idx has n_axes entries). */
void swp_sweep_point_indexes(const swp_sweep *sw, int64_t point, size_t *idx);
/* The configuration of point: base plus the point's axis values. */
int swp_sweep_point_config(const swp_sweep *sw, int64_t point, eng_config *cfg, char *err,
                           size_t errlen);
/* "vnodes=10 capacity_factor=inf" for messages. */
void swp_sweep_point_describe(const swp_sweep *sw, int64_t point, char *buf, size_t len);

/* The effective sweep as INI text (malloc'd; NULL when out of memory). */
char *swp_sweep_format(const swp_sweep *sw);

/* ---- chunk encoding (thread-safe, pure) ---- */

/* Deflate level of /ticks chunks. Measured on seed-study runs (19 metrics x
 * 10,000 ticks): levels 1-3 take zlib's fast path, about 1.9 ms per run and
 * 64 KB; levels 4-9 take 3.3-6.7 ms for 61 KB. Encoding was 15% of a sweep's
 * CPU at level 4, so 3 buys ~7% throughput for ~4% more disk. */
#define SWP_DEFLATE_LEVEL 3

/* Upper bound of an encoded chunk of n int32 values. */
size_t swp_chunk_bound(size_t n);

/* Encodes chunks of n int32 values exactly as HDF5's filter pipeline
 * shuffle(4) + deflate(SWP_DEFLATE_LEVEL) does, so the bytes can be written
 * with H5Dwrite_chunk and read back by any HDF5 reader. One encoder per
 * thread: it keeps its zlib state between chunks. */
typedef struct swp_chunk_encoder swp_chunk_encoder;
swp_chunk_encoder *swp_chunk_encoder_create(size_t n);
void swp_chunk_encoder_destroy(swp_chunk_encoder *e);
/* Returns the encoded size (<= outcap; swp_chunk_bound(n) always fits), 0 on failure. */
size_t swp_chunk_encode(swp_chunk_encoder *e, const int32_t *values, uint8_t *out,
                        size_t outcap);

/* ---- subsets of a sweep: slices and resumption ---- */

/* Which runs one process executes; the others stay unwritten (done = 0) in
 * its file, which always has the sweep's full shape.
 *
 * Slice K of N (0 <= K < N) holds the runs whose
 *
 *   (replicate + offset(point)) mod N == K,   offset(p) = floor(frac(p x g) x N),
 *
 * g = 0.6180339887... (computed exactly, in 64-bit fixed point: the high 64
 * bits of (p x 0x9E3779B97F4A7C15 mod 2^64) x N). Each point deals its
 * replicates round-robin over the slices, starting at a golden-ratio offset,
 * so every slice gets an even share of every grid point whenever N <=
 * replicates, and otherwise the points' windows of slices spread evenly. On the
 * seed study (a naive storm costs 2-3 guarded runs) the costliest of N slices
 * exceeds the mean by 0-2% for N <= 40 and by about 10% at N = 160. Contiguous
 * blocks would give each slice a region of the grid, and plain striding
 * (r mod N) lines slices up with an axis when N is a multiple of replicates x
 * its stride: 27% (N = 40) to 82% (N = 80) over the mean there. Slice sizes
 * differ by a few runs.
 *
 * done (n_runs flags, may be NULL) removes the runs a file already holds:
 * --resume runs only the rest. */
/* One run named explicitly: its row in the file, point and replicate. Runs
 * of the sweep's own shape have run = point * replicates + replicate; runs
 * `refine` appends have any row past those (swp_h5out_append). */
typedef struct swp_run_ref {
  int64_t run, point;
  int32_t replicate;
} swp_run_ref;

typedef struct swp_subset {
  int64_t slice_index, slice_count; /* slice_count 0 (or 1): every run */
  const uint8_t *done;
} swp_subset;

/* The slice of run r among slice_count slices (0 when slice_count <= 1). */
int64_t swp_slice_of(int64_t replicates, int64_t slice_count, int64_t run);
/* Parses "K/N" (0 <= K < N <= SWP_MAX_RUNS). Returns 0 or -1 with a message. */
int swp_slice_parse(const char *text, int64_t *index, int64_t *count, char *err, size_t errlen);

/* ---- result file (layout: see h5out.c) ---- */

typedef struct swp_h5out swp_h5out;

typedef struct swp_run_record {
  int64_t run, point;
  int32_t replicate;
  int32_t ticks;                     /* valid ticks of this run (<= the file's) */
  eng_summary summary;
  const uint8_t *chunk[ENG_M_COUNT]; /* swp_chunk_encode output of each metric */
  size_t chunk_size[ENG_M_COUNT];
  /* The run's per-shard queue depths (ticks x shard_queues, padded with -1)
   * encoded the same way, when the sweep records them; else NULL, 0. */
  const uint8_t *shard_chunk;
  size_t shard_chunk_size;
  double wall_s;                     /* wall time of the simulation */
  int32_t thread;
} swp_run_record;

typedef struct swp_timing {
  double wall_s;      /* whole sweep */
  int32_t threads;
  int64_t runs_done;  /* this session */
  const char *started, *finished; /* ISO 8601 UTC */
  double simulate_s, encode_s, write_s; /* swp_driver_result's breakdown */
  int32_t ranks;      /* MPI processes (0 is taken as 1) */
  int32_t sessions;   /* 0: the file's count, plus one when resumed */
  const char *command_line; /* of this session when resumed (NULL: none) */
} swp_timing;

/* Creates path (truncating an existing file only with force) and writes every
 * object except run rows and ticks. command_line is stored as given. */
int swp_h5out_create(swp_h5out **out, const char *path, const swp_sweep *sw,
                     const char *command_line, int force, char *err, size_t errlen);
/* swp_h5out_create with flags: FORCE as force above; NO_JOURNAL writes no
 * FILE.journal (merge: its output is renamed into place only when whole);
 * NO_LOCK takes no FILE.lock; IN_PLACE creates path itself rather than a
 * temporary renamed over it (path is then a name the caller just made). */
enum { SWP_H5OUT_FORCE = 1, SWP_H5OUT_NO_JOURNAL = 2, SWP_H5OUT_NO_LOCK = 4,
       SWP_H5OUT_IN_PLACE = 8 };
int swp_h5out_create_flags(swp_h5out **out, const char *path, const swp_sweep *sw,
                           const char *command_line, unsigned flags, char *err, size_t errlen);
/* What opening it salvaged or repaired ("" when nothing): e.g. a damaged
 * file rebuilt from its journal. For the caller to print. */
const char *swp_h5out_note(const swp_h5out *o);
/* Marks a new file as slice index/count (root attributes slice, slice_index,
 * slice_count); a file without them holds the whole sweep. */
int swp_h5out_set_slice(swp_h5out *o, int64_t index, int64_t count, char *err, size_t errlen);
/* Reopens an interrupted result file to finish it (run --resume). Refuses,
 * naming the difference, a file of another sweep (effective sweep_text,
 * master seed, shapes) or another slice (slice_count 0: the whole sweep);
 * checks that every run marked done has all its /ticks chunks (a run that
 * lacks one is run again). With a journal (FILE.journal) every done run is
 * checked against it byte for byte, and a damaged file is rebuilt from it
 * (swp_h5out_note then says so); see docs/durability.md. A file another
 * process is writing (FILE.lock held) is refused. */
int swp_h5out_open_resume(swp_h5out **out, const char *path, const swp_sweep *sw,
                          int64_t slice_index, int64_t slice_count, char *err, size_t errlen);
/* Reopens a complete whole-sweep file to append runs to it (refine): like
 * open_resume, but the file may hold more rows than the sweep's own runs
 * (earlier appends). Files written before the run dimension became
 * extendable are refused with a message. */
int swp_h5out_open_append(swp_h5out **out, const char *path, const swp_sweep *sw, char *err,
                          size_t errlen);
/* Appends n rows (point[i], replicate[i]) at the end of every per-run
 * dataset, not done (done = 0), updates the root n_runs and commits; the
 * rows' run ids are first, first + 1, ... The driver then runs them like any
 * other (swp_driver_options.runs). */
int swp_h5out_append(swp_h5out *o, int64_t n, const int64_t *point, const int32_t *replicate,
                     int64_t *first, char *err, size_t errlen);
/* The rows not done yet, in row order, as a malloc'd list (*refs NULL when
 * none). */
int swp_h5out_pending(swp_h5out *o, swp_run_ref **refs, int64_t *n, char *err, size_t errlen);
/* Rows in the file (the sweep's runs plus appended ones). */
int64_t swp_h5out_rows(const swp_h5out *o);
/* n_runs flags: the runs the file held when opened (all 0 for a new file). */
const uint8_t *swp_h5out_done(const swp_h5out *o);
int64_t swp_h5out_done_count(const swp_h5out *o);

/* Writes one finished run: its /ticks chunks at once, its /runs row (done = 1)
 * and timing at the next commit (swp_h5out_flush or close), after the
 * chunks' index is on disk — so a file cut off at any moment never marks a
 * run done whose data it lacks. */
int swp_h5out_write_run(swp_h5out *o, const swp_run_record *rec, char *err, size_t errlen);
/* Commits: flush, write the pending rows, flush again. */
int swp_h5out_flush(swp_h5out *o, char *err, size_t errlen);
/* Commits, writes /timing attributes (and complete = 1 once every run is in)
 * and closes; o is freed even on error. After a failed write the file is
 * closed without writing anything more, so it keeps its last commit intact
 * for --resume. A resumed file is checked against its journal before it is
 * made complete and rebuilt from it if it differs; err then says so although
 * the call succeeds (err is "" otherwise). */
int swp_h5out_close(swp_h5out *o, const swp_timing *timing, char *err, size_t errlen);
/* Nonzero once a write failed. */
int swp_h5out_failed(const swp_h5out *o);

/* ISO 8601 UTC time, "2024-05-01T12:00:00Z". */
void swp_time_iso8601(char *buf, size_t len);

/* ---- the driver ---- */

typedef struct swp_progress {
  int64_t done, total;  /* runs */
  int64_t outcomes[ENG_OUTCOME_COUNT];  /* by eng_outcome */
  int64_t passed, failed;
  double elapsed_s;
} swp_progress;

typedef void (*swp_progress_fn)(void *user, const swp_progress *p);

typedef struct swp_driver_options {
  int threads;                      /* <= 0: omp_get_max_threads() */
  swp_progress_fn progress;         /* called from the writer's critical section */
  void *progress_user;
  double progress_interval_s;       /* at most this often (and once at the end) */
  double flush_interval_s;          /* H5Fflush at most this often (default 2 s) */
  const volatile sig_atomic_t *stop; /* when it turns nonzero, no new runs start */
  const swp_subset *subset;         /* NULL: every run */
  const swp_run_ref *runs;          /* non-NULL: exactly these runs, in this order (subset is
                                       ignored; refine); not supported by the MPI driver */
  int64_t n_runs;                   /* entries of runs */
} swp_driver_options;

typedef struct swp_driver_result {
  swp_progress totals;
  double wall_s;
  /* Where the time went (wall seconds; not results, so summing across
   * threads in completion order is harmless): */
  double simulate_s;           /* eng_run_simulate, summed over runs */
  double encode_s;             /* shuffle + deflate in the workers, summed */
  double write_s;              /* inside the single writer: rows, chunks, flushes */
  double wait_s;               /* threads waiting for the writer, summed (OpenMP driver) */
  int threads;                 /* computing threads, over all ranks */
  int ranks;                   /* MPI processes (1 without MPI) */
  int stopped;                 /* the stop flag ended the sweep early */
  int write_failed;            /* the writer failed: the file is incomplete */
  char first_error[512];       /* first failed run (with its seed) or write error */
} swp_driver_result;

/* Runs every run of a checked sweep (or of opt->subset) and writes it
 * through out. Returns 0 when every such run was simulated and written, -1
 * otherwise (res says why; runs that fail do not stop the others, a write
 * failure does). res->totals.total is the number of runs selected. */
int swp_sweep_execute(const swp_sweep *sw, swp_h5out *out, const swp_driver_options *opt,
                      swp_driver_result *res);

/* ---- CLI entry points (cmd_run.c; also declared in cli/commands.h) ---- */
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_merge(int argc, char **argv); /* merge.c */

#endif
