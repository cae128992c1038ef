/*
 * drv_internal.h — the pieces the OpenMP loop (driver.c) and the MPI
 * transport (mpi_driver.c) are made of; not part of the driver's public API
 * (drv.h).
 */
#ifndef STORMSWEEP_DRV_INTERNAL_H
#define STORMSWEEP_DRV_INTERNAL_H

#include "drv.h"

/* ---- worker.c: one computing thread ---- */

/* The shapes of the fmt_wide matrices: shard queues (rows x shards), the
 * service series (rows x services, all fifteen alike), the service summary
 * (fields x services). An encoder is sized by its shape. */
enum { DRV_WIDE_SHAPES = 3 };
static inline int drv_wide_shape(int w) {
  return w == FMT_WIDE_SHARD_QUEUES ? 0 : w == FMT_WIDE_SERVICE_SUMMARY ? 2 : 1;
}

/* Its engine run, its configuration cache and its encoded chunks. */
typedef struct drv_worker {
  eng_run *run;
  eng_config cfg;
  int64_t cfg_point;  /* the point cfg belongs to (-1: none) */
  int32_t ticks;      /* what chunks are padded to (0: not encoded) */
  int32_t *padded;    /* one metric padded to ticks */
  fmt_chunk_encoder *encoder;
  uint8_t *tmp;       /* one chunk's encoding, fmt_chunk_bound bytes */
  uint8_t *arena;     /* the run's encoded chunks back to back (compressed sizes only) */
  size_t bound, arena_cap;
  /* The fmt_wide matrices (sources with wide[w] > 0), made on first use:
   * one padded ticks x width matrix (the widest), an encoder per shape
   * (drv_wide_shape: the service series all share one) and per matrix its
   * encoding. */
  int32_t *wide_padded;
  size_t wide_padded_n;
  int32_t *wide_series; /* one service's series, ticks values */
  fmt_chunk_encoder *wide_encoder[DRV_WIDE_SHAPES];
  uint8_t *wide_tmp[FMT_WIDE_COUNT];
} drv_worker;

/* ticks 0: the worker encodes nothing. */
int drv_worker_init(drv_worker *w, int32_t ticks);
void drv_worker_free(drv_worker *w);
/* Simulates job j of src into rec (chunks into the worker's arena, valid
 * until its next run). Returns 0 or -1 with msg (the run failed: an invalid
 * configuration, or out of memory). */
int drv_worker_run(drv_worker *w, const drv_source *src, int64_t j, int32_t thread,
                   fmt_run_record *rec, double *encode_s, char *msg, size_t msglen);

/* ---- driver.c: the state the threads of one process share ---- */

typedef struct drv_pool {
  const drv_source *src;
  const drv_sink *sink;
  const drv_options *opt;
  drv_result *res;
  int64_t next;      /* the next job to hand out (omp atomics) */
  double t0, last_flush, last_progress;
  int halt;          /* sink or allocation failure: start no new runs */
} drv_pool;

void drv_pool_init(drv_pool *p, const drv_source *src, const drv_sink *sink,
                   const drv_options *opt, drv_result *res);
/* The next job, or -1 when none is left or the runs stop. Thread-safe. */
int64_t drv_pool_next(drv_pool *p);
/* Counts one finished (or failed) run and stores it through the sink; call
 * inside critical(drv_writer). */
void drv_pool_record(drv_pool *p, const fmt_run_record *rec, int failed, double encode_s,
                     const char *msg);
/* Starts no new run (thread-safe). */
void drv_pool_halt(drv_pool *p);
/* Totals, stop state and the last progress call, after the threads joined
 * (the caller makes the sink durable: closing the writer commits). Returns 0
 * when every job was stored. */
int drv_pool_finish(drv_pool *p);

/* ---- sweep_jobs.c: a sweep's runs as a source, the writer as a sink ---- */

typedef struct drv_sweep_jobs {
  const swp_sweep *sw;
  int64_t n, *runs;          /* run ids, ascending (subset or every run) */
  const fmt_run_ref *refs;   /* explicit runs instead (options), else NULL */
  fmt_out *out;
  const drv_options *opt;
} drv_sweep_jobs;

/* The source of opt's runs of sw (subset, explicit list or every run; job
 * j is run j when neither is given), encoding their chunks when encode, and
 * the sink that writes them through out (NULL: nowhere). -1 when out of
 * memory. */
int drv_sweep_jobs_init(drv_sweep_jobs *js, const swp_sweep *sw, fmt_out *out,
                        const drv_options *opt, int encode, drv_source *src, drv_sink *sink);
void drv_sweep_jobs_free(drv_sweep_jobs *js);

#endif
