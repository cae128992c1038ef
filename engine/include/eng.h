/*
 * eng.h — public API of the stormsweep engine: one seeded run of a sharded
 * cluster in integer ticks.
 *
 * Threading: the engine has no mutable global state. An eng_run owns every
 * buffer a run needs; use one eng_run per thread and reuse it across runs
 * (eng_run_simulate only grows its buffers, so a sweep allocates once per
 * thread). An eng_config is plain data and may be shared read-only.
 *
 * Errors: configuration problems are reported as -1 with a message in a
 * caller-supplied buffer; broken model invariants abort with the run's seed.
 */
#ifndef STORMSWEEP_ENG_H
#define STORMSWEEP_ENG_H

#include <stddef.h>
#include <stdint.h>

#include "eng_config.h"

/* ---- per-tick metrics; every one is an int32 count per tick ---- */
typedef enum eng_metric {
  ENG_M_NEW_REQUESTS,   /* requests created by the clients (open or closed loop) */
  ENG_M_ATTEMPTS,       /* attempts sent to the router (first tries + retries) */
  ENG_M_RETRIES,        /* attempts that were retries (hedged copies too) */
  ENG_M_SUCCESSES,      /* attempts answered within the client timeout (goodput) */
  ENG_M_TIMEOUTS,       /* attempts abandoned by the client at its timeout (or deadline) */
  ENG_M_REJ_QUEUE_FULL, /* attempts rejected by a full shard queue */
  ENG_M_REJ_ROUTER,     /* attempts refused by the router (cluster_capacity_exhausted) */
  ENG_M_REJ_BREAKER,    /* attempts failed fast by an open breaker or the concurrency limit */
  ENG_M_REJ_BUDGET,     /* retries refused by the retry limiter (sre_adaptive: any attempt) */
  ENG_M_SHED,           /* queued attempts dropped by the shard (controlled delay, deadline drop) */
  ENG_M_LOST,           /* attempts lost to a crashed shard or a network outage */
  ENG_M_FAILED,         /* requests that ended without success (deadline exceeded too) */
  ENG_M_WASTED,         /* completions of attempts the client had abandoned */
  ENG_M_QUEUE_DEPTH,    /* attempts waiting in shard queues, summed over shards */
  ENG_M_MAX_SHARD_QUEUE,/* the longest shard queue */
  ENG_M_IN_FLIGHT,      /* attempts admitted and not finished (queued + in service) */
  ENG_M_HOPS,           /* router hops taken by this tick's admissions, summed */
  ENG_M_OPEN_BREAKERS,  /* (client, shard) breakers open or half-open */
  ENG_M_BUDGET_TOKENS,  /* retry limiter level (budget tokens left), summed over clients */
  /* What users see, per latency window (every tick of a window has its
   * window's value; -1 where no request ended in the window): */
  ENG_M_LATENCY_P50,    /* latency quantiles of the requests that ended, us */
  ENG_M_LATENCY_P90,
  ENG_M_LATENCY_P99,
  ENG_M_LATENCY_P999,
  ENG_M_ERROR_RATE,     /* failed / ended requests, parts per million */
  ENG_M_COUNT
} eng_metric;

/* The user-view metrics: ENG_M_USER_FIRST .. ENG_M_COUNT - 1, the four
 * quantiles in the order of eng_user_quantiles, then the error rate. */
#define ENG_M_USER_FIRST ENG_M_LATENCY_P50
#define ENG_M_USER_COUNT (ENG_M_COUNT - ENG_M_USER_FIRST)
#define ENG_USER_QUANTILES 4
extern const double eng_user_quantiles[ENG_USER_QUANTILES]; /* 0.5, 0.9, 0.99, 0.999 */

typedef struct eng_metric_info {
  const char *name;        /* dataset name, e.g. "queue_depth" */
  const char *unit;        /* "attempts/tick", "attempts", ... */
  const char *description; /* one line for help text and file attributes */
  int sums;                /* a count of the tick's events: a row of several ticks
                              holds their sum (saturating at INT32_MAX); 0: a level,
                              such a row holds the value at its last tick */
} eng_metric_info;

const eng_metric_info *eng_metric_get_info(eng_metric m);

/* ---- run outcome (the rule lives in recovery.c and the README) ---- */
typedef enum eng_outcome {
  ENG_OUTCOME_RECOVERED = 0,
  ENG_OUTCOME_SLOW = 1,
  ENG_OUTCOME_METASTABLE = 2,
  ENG_OUTCOME_COLLAPSED = 3,   /* fell into the storm state before (or without) any fault */
  ENG_OUTCOME_UNDETERMINED = 4 /* not back, and too little time after clearance to tell
                                  slow from metastable (< recovery_hold_ms + trend_ms) */
} eng_outcome;

enum { ENG_OUTCOME_COUNT = 5 }; /* number of outcome classes, for tallies */

const char *eng_outcome_name(eng_outcome o);

/* Per-run summary row. Times are in ms; NaN where undefined. */
typedef struct eng_summary {
  uint64_t seed;
  int32_t outcome;             /* eng_outcome */
  int32_t passed_slo;          /* recovered and recovery_ms <= slo_ms (with user_slo terms:
                                  user recovery time <= slo_ms) */
  double recovery_ms;          /* NaN unless recovered */
  double baseline_queue;       /* mean total queue depth over the baseline window */
  double recovery_threshold;   /* queue depth that counts as "back to baseline" */
  double peak_queue;           /* max total queue depth over the run */
  double amplification;        /* attempts / new requests over the whole run */
  double amplification_after;  /* the same from fault clearance to the horizon */
  double goodput_baseline;     /* successes per tick over the baseline window */
  double goodput_during;       /* goodput during the faults / baseline goodput */
  double goodput_after;        /* goodput from clearance to horizon / baseline goodput */
  double late_queue_trend;     /* late-window mean queue / previous-window mean queue */
  double max_mean_shard_load;  /* max over shards of admissions / mean admissions */
  double mean_hops;            /* router hops per admission */
  double little_L;             /* time-average attempts in system (steady window) */
  double little_lambda_w;      /* admission rate x mean time in system */
  double little_lambda;        /* admissions per ms over the steady window */
  double little_w_ms;          /* mean time in system (ms) of attempts admitted then */
  double little_rel_error;     /* |L - lambda W| / L */
  double keys_remapped;        /* fraction of the key space moved by crash faults */
  double successor_peak_load;  /* peak in-flight on a live shard during a crash / baseline mean */
  int64_t new_requests, attempts, successes, failed_requests;
  int64_t events;              /* engine events processed (for cost accounting) */
  /* What the outcome rule decided on (docs/model.md "The outcome rule"): */
  double baseline_goodput_ratio; /* successes / new requests over the health window */
  double baseline_amplification; /* attempts / new requests over the health window */
  double collapse_ms;          /* time from start to the first collapsed window's midpoint,
                                  watched before the first fault (NaN: none; 0: never healthy) */
  double collapse_watch_ms;    /* how long collapse was watched for (censoring time) */
  double return_ms;            /* from collapse_ms to the first healthy window's midpoint */
  double late_goodput;         /* goodput over the last trend_ms / baseline goodput */
  double late_amplification;   /* attempts / new requests over the last trend_ms */
  double late_wasted_share;    /* wasted / (wasted + successes) over the last trend_ms */
  double drain_ms;             /* not recovered: projected ms past the horizon until the
                                  queue reaches the threshold (inf: not shrinking) */
  double late_load;            /* attempts per tick over the last trend_ms / what the
                                  cluster serves per tick (>= 1: retries keep it full) */
  /* What users saw (per phase: baseline, during the faults, after clearance;
   * NaN where no request ended in the phase): */
  struct eng_user_phase {
    double p50_ms, p90_ms, p99_ms, p999_ms; /* request latency quantiles */
    double error_rate;                      /* failed / ended requests */
  } user[3];
  double latency_window_ms; /* the latency window the user-view series use */
  double user_hold_ms;      /* the hold window of user recovery, ms */
  double clear_ms;          /* the last fault's clearance (0 without faults), ms */
  double user_recovery_ms;  /* user recovery time under the run's --slo terms; NaN: none given,
                               or the terms never held again before the horizon */
} eng_summary;

/* ---- what users see: each request's latency and final status ---- */
/* A request's latency runs from its first send to its final answer: its
 * first success, or its failure after the last retry, at its deadline or at
 * a local refusal, backoff waits included. Its final status: */
/* Call graphs: what one service did in a run (eng_run_service). */
typedef struct eng_service_summary {
  char name[ENG_NAME_MAX];
  int32_t outcome;          /* the outcome rule on the service's own traces (the front: the run's) */
  double recovery_ms;       /* NaN unless recovered */
  int64_t calls;            /* calls made to it: first attempts (the front: new requests) */
  int64_t attempts, retries, successes;
  int64_t errors;           /* answered with an error: error_rate, or a call of its own failed */
  int64_t rejected;         /* refused by a full queue */
  int64_t dropped;          /* dropped unserved, their deadline passed (deadline_drop) */
  int64_t shed;             /* shed unserved by controlled delay (codel_target_ms) */
  int64_t timeouts;         /* attempts their callers gave up at a timeout or deadline */
  int64_t lost;             /* attempts lost to an outage (their callers time out) */
  int64_t wasted;           /* work finished after its caller gave up */
  int64_t budget_refused;   /* retries the callers' retry limiters refused (and sre_adaptive's
                               local refusals) */
  int64_t breaker_refused;  /* attempts the callers refused themselves: an open circuit
                               breaker, or their concurrency limit (as rejected_breaker) */
  int64_t failed_calls;     /* calls that failed after their retries (the front: requests) */
  double amplification;     /* attempts here per front request */
  double work_ms;           /* worker time spent here per front request, ms (NaN: the front) */
  double busy_share;        /* worker time used / worker time there was (NaN: the front) */
  double peak_queue;        /* the most attempts waiting in its queues at once */
} eng_service_summary;

typedef enum eng_status {
  ENG_ST_OK,       /* answered in time */
  ENG_ST_TIMEOUT,  /* its last attempt timed out (or was lost) */
  ENG_ST_DEADLINE, /* its request deadline passed */
  ENG_ST_REJECTED, /* its last attempt was refused: full queue, router, client limit */
  ENG_ST_SHED,     /* its last attempt was shed with an overload error */
  ENG_ST_BREAKER,  /* an open circuit breaker failed it fast */
  ENG_ST_BUDGET,   /* the retry limiter refused its retry (sre_adaptive: its send) */
  ENG_ST_COUNT
} eng_status;
const char *eng_status_name(eng_status s);

/* Per latency window (latency_window_ms; the last may be shorter), over the
 * requests that ended in it, failed ones included. */
typedef enum eng_lat_series {
  ENG_L_FINISHED,     /* requests that ended */
  ENG_L_FAILED,       /* of them, those that ended without success */
  ENG_L_P50,          /* latency quantiles, ms (NaN: no request ended) */
  ENG_L_P90,
  ENG_L_P99,
  ENG_L_P999,
  ENG_L_ERROR_RATE,   /* failed / finished (NaN: none) */
  ENG_L_SUCCESS_RATE, /* 1 - error rate */
  ENG_L_COUNT
} eng_lat_series;
const eng_metric_info *eng_lat_series_info(eng_lat_series s);

/* The phases of a run: the baseline window, the faults (first start to last
 * clearance) and after clearance (to the horizon); a request counts in the
 * phase it ended in. Without faults only the baseline has requests. */
enum { ENG_PHASE_BASELINE, ENG_PHASE_DURING, ENG_PHASE_AFTER, ENG_PHASE_COUNT };
const char *eng_phase_name(int phase);

typedef struct eng_latency_phase {
  double begin_ms, end_ms;    /* the phase's ticks, [begin, end) in ms */
  int64_t finished, failed;   /* requests that ended in it, and those without success */
  int64_t status[ENG_ST_COUNT];
  double p50_ms, p90_ms, p99_ms, p999_ms, max_ms; /* NaN when none ended */
  double error_rate;          /* failed / finished (NaN when none ended) */
} eng_latency_phase;

/* ---- one run ---- */
typedef struct eng_run eng_run;

eng_run *eng_run_create(void);
void eng_run_destroy(eng_run *run);

/* Simulates one run of cfg with the given seed. Returns 0, or -1 with a
 * message in err when the configuration is invalid (validate first to get
 * all messages up front). Per-tick metrics stay readable until the next call. */
int eng_run_simulate(eng_run *run, const eng_config *cfg, uint64_t seed,
                     eng_summary *out, char *err, size_t errlen);
/* Whether runs on this context may skip empty ticks (on by default): the
 * results are bit-identical either way; off runs every tick, which tests
 * and the skip's own cost measurements compare against. */
void eng_run_set_skipping(eng_run *run, int on);
/* The rows runs on this context keep: k = 1 one per tick (the default);
 * k > 1 one per k ticks, counters summed over the row (saturating at
 * INT32_MAX) and levels and the user view at the row's last tick (the last
 * row may be shorter); 0 none. Below one row per tick the outcome rule is
 * fed tick by tick instead of from the rows, so memory follows the rows
 * kept, not the horizon (4 bytes x 24 metrics a row); the summary is the
 * same to the bit whatever k. A sweep's `record` setting picks k. */
void eng_run_set_row_ticks(eng_run *run, int32_t k);

/* What one run of cfg holds at its peak, by part, in bytes: the settings
 * alone decide it, so it is known before anything runs (a sweep refuses
 * what the machine cannot hold). An eng_run reused for several
 * configurations holds the largest of them. */
typedef struct eng_memory {
  double per_tick;     /* the rows kept, ENG_M_COUNT int32 each, and below one row
                          a tick the outcome rule's windows */
  double shard_queues; /* record_shard_queues: rows x shards int32 */
  double ring;         /* shards x vnodes points, the sort's copy and the lookup table */
  double breakers;     /* a circuit breaker per (client, shard) */
  double tables;       /* per-shard and per-client state */
  double attempts;     /* attempt records, their timeouts (and requests) alive at once */
  double latency;      /* latency histograms (fixed) and the per-window series */
  double live;         /* attempts alive at once at most (a count) */
  double total;        /* bytes, the sum of the parts */
} eng_memory;
/* row_ticks: as eng_run_set_row_ticks (1 a row per tick, k per k ticks, 0
 * none). */
void eng_run_memory(const eng_config *cfg, int32_t row_ticks, eng_memory *m);
/* acc := each part the larger of acc and m (total their sum): what an
 * eng_run holds after runs of both, its buffers only growing. Start from
 * zeros. */
void eng_memory_max(eng_memory *acc, const eng_memory *m);

/* The rows of metric m from the last simulation (eng_run_set_row_ticks),
 * eng_run_rows() of them: one per tick by default; NULL without rows. */
const int32_t *eng_run_metric(const eng_run *run, eng_metric m);
int32_t eng_run_rows(const eng_run *run);
int32_t eng_run_ticks(const eng_run *run);

/* The latency windows of the last simulation: their count, their length in
 * ms, and series s (one value per window). */
int32_t eng_run_latency_windows(const eng_run *run);
double eng_run_latency_window_ms(const eng_run *run);
const double *eng_run_latency(const eng_run *run, eng_lat_series s);
/* The last simulation's latency and errors in phase (ENG_PHASE_*). */
const eng_latency_phase *eng_run_latency_phase(const eng_run *run, int phase);
/* User recovery time of the last simulation under cfg->user_slo: ms from
 * the last fault's clearance (the start without faults) to the start of the
 * first latency window from which every term holds in each window for
 * recovery_hold_ms (a window where no request ended does not hold); NaN when
 * that never happens before the horizon, or without SLO terms. With terms,
 * the summary's passed_slo is "user recovery time <= slo_ms". */
double eng_run_user_recovery_ms(const eng_run *run);
/* ---- user recovery: the one rule (recovery.c), for the engine's own runs
 * and for the analysis on the user-view rows stored in a result file ---- */
/* 1 when every term of slo holds on one window's user-view values (v[k] is
 * metric ENG_M_USER_FIRST + k: quantiles in us, error rate in ppm); a window
 * where no request ended (-1) does not hold. Latency terms must be on one of
 * eng_user_quantiles (eng_slo_check). */
int eng_slo_window_holds(const eng_slo *slo, const int32_t *v);
/* User recovery time in ms: from tick clear (the last fault's clearance; 0
 * without faults) to the start of the first latency window at or after it
 * that begins hold_ticks (at least one window) of windows in which every
 * term holds. rows[k] is the per-tick row of metric ENG_M_USER_FIRST + k,
 * ticks long; windows are window_ticks long from tick 0. NaN when that never
 * happens before the horizon or slo has no terms. */
double eng_user_recovery_ms(const eng_slo *slo, const int32_t *const *rows, int32_t ticks,
                            int32_t window_ticks, int32_t clear, int32_t hold_ticks,
                            double tick_ms);
/* Whether a run passes under user SLO terms: not undetermined, and user
 * recovery within slo_ms. */
static inline int eng_user_slo_passes(int outcome, double user_recovery_ms, double slo_ms) {
  return outcome != 4 /* ENG_OUTCOME_UNDETERMINED */ && user_recovery_ms == user_recovery_ms &&
         user_recovery_ms <= slo_ms;
}

/* The last simulation's request latencies as the engine's own log-linear
 * buckets (exact below 256 ticks, at most 1/128 wide above), for export in
 * a telemetry format: bucket i holds count[i] latencies in (le_ms[i-1],
 * le_ms[i]] (from 0). A latency is a whole number of ticks, so a bucket of
 * ticks lo..hi is the interval (lo - 1/2, hi + 1/2] ticks, centred on what
 * it holds; a run of empty engine buckets before a full one is one empty
 * bucket, so the buckets say exactly what the engine counted. sum_ms adds
 * each bucket's centre times its count (exact below 256 ticks). */
#define ENG_LAT_EXPORT_MAX 4096
typedef struct eng_lat_export {
  size_t n;
  double le_ms[ENG_LAT_EXPORT_MAX];
  double count[ENG_LAT_EXPORT_MAX];
  double sum_ms, total;
} eng_lat_export;
/* phase: ENG_PHASE_* or ENG_PHASE_COUNT for every phase together (the
 * requests that ended after warmup_ms). 0, or -1 before any simulation. */
int eng_run_latency_export(const eng_run *run, int phase, eng_lat_export *out);

/* The configuration of the last simulation (NULL before the first). */
const eng_config *eng_run_config(const eng_run *run);

/* Call graphs: the services of the last run (the front and those behind
 * it; 0 for a single tier), and service k's summary (0: the front). */
int32_t eng_run_services(const eng_run *run);
int eng_run_service(const eng_run *run, int32_t k, eng_service_summary *out);
/* A service's per-tick traces (k >= 1, a service behind the front; the
 * front's are eng_run_metric's), one value per tick, named as the metrics
 * they mirror; NULL for k out of range. */
typedef enum eng_service_trace {
  ENG_SV_QUEUE,     /* queue_depth: attempts waiting in its queues */
  ENG_SV_SUCCESSES, /* successes: attempts answered while their caller waited */
  ENG_SV_CALLS,     /* new_requests: calls made to it (first attempts) */
  ENG_SV_ATTEMPTS,  /* attempts: first attempts and retries */
  ENG_SV_WASTED,    /* wasted: work finished after its caller gave up */
  ENG_SV_RETRIES,   /* retries: attempts after a call's first (hedged copies too) */
  ENG_SV_TIMEOUTS,  /* timeouts: attempts its callers gave up at a timeout or deadline */
  ENG_SV_REJECTED_QUEUE,   /* rejected_queue_full: refused by a full queue */
  ENG_SV_REJECTED_ROUTER,  /* rejected_router: every shard at its bounded-load cap */
  ENG_SV_REJECTED_BREAKER, /* rejected_breaker: its callers' open breakers, concurrency limits */
  ENG_SV_REJECTED_BUDGET,  /* rejected_budget: its callers' retry limiters */
  ENG_SV_SHED,      /* shed: dropped unserved (deadline drop, controlled delay) */
  ENG_SV_LOST,      /* lost: sent during an outage */
  ENG_SV_FAILED,    /* failed_requests: calls to it that failed after their retries */
  ENG_SV_IN_FLIGHT, /* in_flight: attempts it holds, in service and queued */
  ENG_SV_COUNT
} eng_service_trace;
/* ... as a pointer to its first tick and the stride between ticks (the
 * traces the outcome rule reads are contiguous, the others interleaved). */
const int32_t *eng_run_service_trace(const eng_run *run, int32_t k, eng_service_trace which,
                                     size_t *stride);
/* The metric a service trace mirrors (its name, units and whether it
 * sums over a row's ticks or holds its last tick's level). */
eng_metric eng_service_trace_metric(eng_service_trace which);
/* Service k's trace in the run's rows (eng_run_rows values, eng_run_set_row_ticks
 * spacing, combined like the metrics' rows), k = 0 the front's own metric.
 * -1 for k or which out of range, or a run without rows. */
int eng_run_service_rows(const eng_run *run, int32_t k, eng_service_trace which, int32_t *out);

/* Optional per-shard queue depth matrix (rows x shards, row-major, a row's
 * last tick's depths); NULL unless cfg->record_shard_queues was set and
 * rows are kept. */
const int32_t *eng_run_shard_queues(const eng_run *run);

/* Seed of run (point, replicate) of a sweep with master seed: an xxHash of
 * the three numbers, so it never depends on thread, rank or order. */
uint64_t eng_seed_derive(uint64_t master, uint64_t point, uint64_t replicate);

#endif
