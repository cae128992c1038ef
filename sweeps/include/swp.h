/*
 * swp.h — public API of stormsweep sweeps: sweep files, grid expansion, the
 * runs of a sweep and their seeds, and slices of them. Running a sweep is the
 * driver's (drv.h), its result file the format library's (fmt.h).
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
 *   screen_up_to = off        ; N: sequential screening. refine first gives every point
 *                             ; its first `replicates` runs leave open (not screened out)
 *                             ; replicates up to N-1; fresh runs start at N (refine_plan.h)
 *   seed        = 1           ; master seed, decimal or 0x hex (default 1)
 *   crn         = off         ; on: common random numbers across points
 *   refine      = off         ; on: `run` then refines the file (stormsweep refine)
 *   scenario_axes = load, ... ; axes that are the world's, not a choice (default: traffic,
 *   tunable_axes  = ...       ; faults, time, measurement settings; docs/decisions.md)
 *   record      = full        ; what /ticks stores per run: full (every tick), every=MS
 *                             ; (one row per MS window: counters summed, levels at the
 *                             ; window's end) or summary (no per-tick rows); record.c
 *   record_metrics = all      ; or the /ticks metrics to store: queue_depth, successes, ...
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
 * by all threads.
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
  int64_t screen_up_to; /* 0: fixed screening; else > replicates: sequential (see above) */
  uint64_t seed;
  int crn;           /* common random numbers: the seed ignores the point */
  int refine;        /* [sweep] refine = on: `run` refines the file when the sweep is done */
  char *scenario_axes, *tunable_axes; /* [sweep] role overrides, "a, b" ("" = none); NULL unset */
  /* [sweep] telemetry_digests: "PATH xxh3:HEX; ..." of each telemetry file
   * the sweep reads, as swp_sweep_check found them (NULL: none). */
  char *telemetry_digests;
  int sweep_line;     /* line of the first [sweep] key in the file (0: none) */
  /* [sweep] record / record_metrics (record.c): what /ticks stores per run. */
  int record;              /* SWP_RECORD_FULL (default), _EVERY, _SUMMARY */
  double record_every_ms;  /* every=MS: the window */
  uint32_t record_metrics; /* bit m: metric m is stored; 0: unset (all) */
  int record_line;         /* line of `record` in the file (0: none, or --set) */
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
  int32_t services;   /* a call graph's services, the front first (0: a single tier, or
                         record = summary). The width of /ticks/service_<metric> */
  char service_names[ENG_MAX_SERVICES + 1][ENG_NAME_MAX]; /* theirs, the same at every point */
  eng_memory run_memory; /* the most one thread's engine run holds over the points: each
                            part's largest (eng_run_memory), for the driver's check */
  int32_t record_stride; /* ticks per stored /ticks row: 1 at full, 0 at summary */
  int32_t rows;          /* stored /ticks rows per run: ceil(ticks / record_stride); 0: none */
  uint8_t axis_live[SWP_MAX_AXES]; /* 1: axis a's setting is live at some grid point
                                      (eng_setting_live); 0: no value of it changes a run */
  int checked;
} swp_sweep;

void swp_sweep_init(swp_sweep *sw);
/* 1 when key is a scenario axis of this sweep ([sweep] scenario_axes /
 * tunable_axes, else the setting's default role, eng_setting_role_find). */
int swp_sweep_axis_is_scenario(const swp_sweep *sw, const char *key);
void swp_sweep_free(swp_sweep *sw);

/* The keys of [sweep], up to a NULL (--set takes them too), for help texts. */
const char *const *swp_sweep_keys(void);

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
/* The runs a parsed sweep's grid declares (points x replicates) before it
 * is checked, without looking at any point; -1 past the limits. */
int64_t swp_sweep_runs_declared(const swp_sweep *sw);
int swp_sweep_check(swp_sweep *sw, char *err, size_t errlen);

/* Axes that cannot change any run (dead at every grid point, by
 * eng_setting_live): returns how many, with one line per axis in err —
 * "sweep.ini:12: budget_ratio: the axis cannot change any run:
 * retry_limiter = envoy, and budget_ratio is read by the token_bucket
 * limiter only". list and run refuse such a sweep unless told to allow it;
 * a result file's sweep is read back whatever its axes. After
 * swp_sweep_check. */
int swp_sweep_dead_axes(const swp_sweep *sw, char *err, size_t errlen);

/* ---- what /ticks stores (record.c) ---- */

enum { SWP_RECORD_FULL = 0, SWP_RECORD_EVERY = 1, SWP_RECORD_SUMMARY = 2 };
/* [sweep] key record or record_metrics = value; msg gets "key: problem". */
int swp_record_apply(swp_sweep *sw, const char *key, const char *value, char *msg,
                     size_t len);
/* After tick_ms and ticks are known (swp_sweep_check): record_stride and
 * rows; -1 when every=MS is not a whole number of ticks. */
int swp_record_check(swp_sweep *sw, char *msg, size_t len);
/* 1 when metric m has a /ticks dataset in this sweep's file. */
int swp_record_stored(const swp_sweep *sw, int m);
/* The stored metrics as bits (bit m: metric m). */
uint32_t swp_record_mask(const swp_sweep *sw);
/* 1 at full with every metric: the file carries no record attributes. */
int swp_record_is_default(const swp_sweep *sw);
/* The ticks one stored row spans on ticks of tick_ms (the engine keeps its
 * rows so: eng_run_set_row_ticks): 1 at full, k at every=MS, 0 at summary;
 * -1 when every=MS is not a whole number of such ticks. */
int32_t swp_record_row_ticks(const swp_sweep *sw, double tick_ms);
/* The spacing of stored rows in ms (tick_ms at full; NaN at summary). */
double swp_record_row_ms(const swp_sweep *sw);
/* "full", "every=10ms", "summary"; the listed metrics joined by ", ". */
void swp_record_text(const swp_sweep *sw, char *buf, size_t len);
void swp_record_metrics_text(const swp_sweep *sw, char *buf, size_t len);

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
/* The numbers /axes and /points store for axis a's values (out: its count
 * entries): each value's setting as a number, or, when those numbers do not
 * tell the values apart (a text setting such as a file name or a series
 * selector, windows with one start), each value's index, so that analyses
 * grouping points by number still see one level per value. Returns 1 when
 * the indexes were stored, else 0. */
int swp_axis_numbers(const swp_sweep *sw, size_t a, double *out);
/* "vnodes=10 capacity_factor=inf" for messages. */
void swp_sweep_point_describe(const swp_sweep *sw, int64_t point, char *buf, size_t len);

/* The effective sweep as INI text (malloc'd; NULL when out of memory). */
char *swp_sweep_format(const swp_sweep *sw);

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
typedef struct swp_subset {
  int64_t slice_index, slice_count; /* slice_count 0 (or 1): every run */
  const uint8_t *done;
} swp_subset;

/* The slice of run r among slice_count slices (0 when slice_count <= 1). */
int64_t swp_slice_of(int64_t replicates, int64_t slice_count, int64_t run);
/* Parses "K/N" (0 <= K < N <= SWP_MAX_RUNS). Returns 0 or -1 with a message. */
int swp_slice_parse(const char *text, int64_t *index, int64_t *count, char *err, size_t errlen);
/* Whether run r of sw belongs to subset s (NULL: every run). */
int swp_subset_has(const swp_sweep *sw, const swp_subset *s, int64_t r);
/* The number of runs in subset s, without listing them (one pass over the runs). */
int64_t swp_subset_count(const swp_sweep *sw, const swp_subset *s);

/* A seed as the sweep file and every command spell it: a whole number in
 * decimal ("010" is ten), or hexadecimal after 0x; blanks around it are
 * ignored. Returns 0, or -1 for anything else (a sign, a fraction, a
 * number past 2^64 - 1). */
int swp_parse_seed(const char *text, uint64_t *out);

/* snprintf into err (no-op when err is NULL): the message convention of
 * every library of stormsweep. */
void swp_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
