/*
 * fmt_results.h — reading a result file for the analysis: /points, /runs and
 * the sweep's scenario times whole (one small row per run), /ticks one point
 * at a time. Every value that later indexes an array or counts as evidence is
 * checked first (results_read.c's header comment lists the checks), so a
 * damaged or hostile file gets a one-line message naming the file and the
 * object, never a crash or a wrong count.
 */
#ifndef STORMSWEEP_FMT_RESULTS_H
#define STORMSWEEP_FMT_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "fmt.h"

/* One row of /runs: the columns the analysis uses. Optional columns missing
 * from the file read as NaN. */
typedef struct fmt_run {
  int64_t run;       /* run id = row of the /ticks datasets */
  int64_t point;     /* point id (matches /points "point") */
  int64_t replicate;
  uint64_t seed;
  int32_t outcome;   /* ENG_OUTCOME_RECOVERED .. ENG_OUTCOME_UNDETERMINED; <0 = not run */
  int32_t passed_slo;
  double recovery_ms;      /* NaN unless recovered */
  double amplification;    /* attempts / new requests, whole run */
  double goodput_during;   /* goodput during the faults / baseline */
  double goodput_after;    /* goodput from clearance to horizon / baseline */
  double peak_queue;
  double baseline_queue;
  int64_t ticks;           /* ticks this run simulated; -1 when unknown */
  double collapse_ms;       /* time to collapse (NaN: none seen; column absent: NaN) */
  double collapse_watch_ms; /* how long collapse was watched for (its censoring time) */
  int32_t stage;     /* FMT_STAGE_SCREENING, or k >= 1: appended by refine round k */
  /* What users see (NaN in files written before the user-view series): */
  double latency_window_ms, user_hold_ms, clear_ms;
  double user_recovery_ms; /* as the run's own --slo judged it; ana_judge_user_slo recomputes
                              it for other terms */
} fmt_run;

/* The stage of a run (fmt_run.stage), as /runs stores it in its stage
 * column: screening is the sweep's own replicates 0 .. replicates-1 (with
 * sequential screening, every replicate below screen_up_to); a fresh
 * replicate (at or above both) is of refine round k. A file from before the
 * column gets it derived: round k when /refine/round_start says its row
 * lies in round k (round 1 when the file records no rounds). The one source
 * of "screening or fresh" for every count a command prints. */
#define FMT_STAGE_SCREENING 0
/* How many replicates of a point screen it: the sweep's own, or with
 * sequential screening every one below screen_up_to; fresh runs start here. */
static inline int64_t fmt_screening_replicates(int64_t replicates, int64_t screen_up_to) {
  return screen_up_to > replicates ? screen_up_to : replicates;
}

/* Times of one grid point's scenario in ms; NaN when the file does not say. */
typedef struct fmt_point_times {
  double horizon_ms, fault_start_ms, fault_clear_ms;
  double censor_ms; /* horizon - clearance: where not-recovered runs are censored */
} fmt_point_times;

typedef struct fmt_results {
  char *path;
  int format_version;
  char *tool_version;      /* NULL when absent */
  uint64_t master_seed;
  int has_master_seed;     /* the file declares it: each run's seed is checked against it */
  int crn;                 /* root attribute "crn" (0 when absent) */
  double tick_ms;          /* NaN when unknown (plots then use ticks) */
  double slo_ms;           /* the sweep's own SLO; NaN when unknown */
  int32_t services;        /* a call graph's services, the front included (0: a single tier) */
  char front[ENG_NAME_MAX]; /* its front service's name: every figure in the file is that one's */
  char service_names[ENG_MAX_SERVICES + 1][ENG_NAME_MAX]; /* the front first (services of them) */
  int64_t n_ticks;         /* columns of the /ticks datasets, the stored rows (0 when none) */
  char record[64];         /* root `record`: "full" (also when absent), "every=10ms", "summary" */
  int64_t row_ticks;       /* ticks per stored /ticks row: 1 at full, 0 at summary */
  double row_ms;           /* their spacing: tick_ms at full (NaN when unknown or summary) */
  size_t n_axes;
  char **axes;             /* axis (setting key) names, in /points column order */
  char ***labels;          /* labels[axis][point]: value as the sweep wrote it, or NULL */
  size_t n_points;
  int64_t *point_ids;      /* n_points */
  double *values;          /* n_points x n_axes, row-major */
  fmt_point_times *times;  /* n_points */
  size_t n_runs;
  fmt_run *runs;
  size_t *point_of_run;    /* n_runs: index into the points (not the id) */
  size_t n_skipped;        /* rows of /runs not used (not run yet, unknown point) */
  int complete;            /* root attribute "complete": 1, 0, or -1 when absent */
  int64_t replicates;      /* the sweep's own runs per point (root attribute); 0 when
                              unknown. refine appends replicates >= this one. */
  int64_t screen_up_to;    /* the stored sweep's screen_up_to (sequential screening: refine
                              appends screening replicates below it); 0 when fixed */
  unsigned char *scenario; /* n_axes: 1 = a scenario axis (the world's: traffic, faults,
                              time), 0 = tunable (docs/decisions.md); NULL = all tunable */
  int stage_stored;        /* /runs has the stage column; without it (files from before
                              it) each run's stage is derived from its replicate and row */
  size_t n_rounds;         /* refine rounds the file records (/refine/round_start) */
  int64_t *round_start;    /* n_rounds: the first /runs row each round appended, ascending */
  eng_slo user_slo;        /* the SLO terms runs are judged by (ana_judge_user_slo); none:
                              the queue-recovery check */
  size_t n_unjudged;       /* runs the terms could not judge, left out of runs: they store
                              no /ticks rows (refine's confirmation runs by default) */
} fmt_results;

/* Reads everything but /ticks. Returns 0; or -1 with a one-line message
 * ("FILE: not an HDF5 file", "FILE: not a stormsweep result file (...)",
 * "FILE: format_version 3 is newer than this stormsweep understands (1)")
 * for a file analysis cannot use. */
int fmt_results_read(fmt_results *r, const char *path, char *err, size_t errlen);
void fmt_results_free(fmt_results *r);
/* 1 when axis is a scenario axis (see fmt_results.scenario). */
int fmt_axis_is_scenario(const fmt_results *r, size_t axis);
/* Index of the point with id, or -1. */
long fmt_results_point_index(const fmt_results *r, int64_t id);

/* Per-tick values of one metric for the runs of one point, averaged over
 * bins of ticks so a curve has at most max_bins points: cell[i * nbins + k]
 * is run runs[i]'s mean over bin k (the runs in run-id order; a run that
 * stores no rows, as refine's confirmation runs by default, is left out).
 * Reads only that point's rows, one row at a time (a block of ticks at a
 * time for very long rows), so memory is O(runs x bins + block) whatever
 * the file's size. */
typedef struct fmt_bins {
  size_t nbins, n_runs;
  int64_t *runs; /* n_runs run ids */
  int64_t ticks_per_bin;
  double *t_ms;  /* bin centre in ms (ticks when tick_ms unknown) */
  double *cell;  /* n_runs x nbins */
} fmt_bins;

int fmt_bins_read(fmt_bins *b, const fmt_results *r, const char *metric, size_t point_index,
                  size_t max_bins, char *err, size_t errlen);
void fmt_bins_free(fmt_bins *b);
/* 1 if /ticks/<metric> exists, 0 if not, -1 on error. */
int fmt_metric_exists(const fmt_results *r, const char *metric);

/* A call graph's per-service figures, run by run (r->runs order): cell[(i *
 * n_fields + f) * n_services + k] is field fields[f] (fmt_service_field_name:
 * "outcome", "attempts", "calls", ...) of service k (0: the front; its name
 * r->service_names[k]) in run r->runs[i]; -1 where the run stores no /ticks
 * rows. */
typedef struct fmt_service_runs {
  int32_t n_services, n_fields;
  size_t n_runs;
  int32_t *cell;
} fmt_service_runs;
/* 0 when read; 1 when the file keeps none (a single tier, record = summary:
 * s left empty); -1 with a message. */
int fmt_service_runs_read(fmt_service_runs *s, const fmt_results *r, const char *const *fields,
                          int n_fields, char *err, size_t errlen);
void fmt_service_runs_free(fmt_service_runs *s);

#endif
