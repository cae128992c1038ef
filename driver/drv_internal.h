/*
 * drv_internal.h — the pieces both drivers (OpenMP, MPI) are made of; not
 * part of the driver's public API (drv.h).
 */
#ifndef STORMSWEEP_DRV_INTERNAL_H
#define STORMSWEEP_DRV_INTERNAL_H

#include "drv.h"

/* The runs to execute, ascending. */
typedef struct drv_runlist {
  int64_t n;
  int64_t *runs;
  const fmt_run_ref *refs; /* explicit runs (driver options), else NULL */
} drv_runlist;

/* Builds the list of subset s (NULL: every run). Cost: one pass over n_runs. */
int drv_runlist_build(drv_runlist *l, const swp_sweep *sw, const swp_subset *s);
void drv_runlist_free(drv_runlist *l);

/* One computing thread: its engine run, encoder and encoded chunks. */
typedef struct drv_worker {
  eng_run *run;
  int32_t *padded;  /* one metric padded to the file's ticks */
  fmt_chunk_encoder *encoder;
  uint8_t *tmp;     /* one chunk's encoding, fmt_chunk_bound bytes */
  uint8_t *arena;   /* the run's encoded chunks back to back (compressed sizes only) */
  size_t bound, arena_cap;
  eng_config cfg;
  int64_t cfg_point;
  /* Per-shard queue depths (sweeps with record_shard_queues = on), made on
   * first use: ticks x shard_queues values, their encoder and encoding. */
  int32_t *shard_padded;
  fmt_chunk_encoder *shard_encoder;
  uint8_t *shard_tmp;
} drv_worker;

int drv_worker_init(drv_worker *w, int32_t ticks);
void drv_worker_free(drv_worker *w);
/* Simulates run r and encodes its chunks into rec (chunk pointers into the
 * worker's arena, valid until its next run). Returns 0 or -1 with msg. */
int drv_worker_simulate(drv_worker *w, const swp_sweep *sw, int64_t r, int32_t thread,
                        fmt_run_record *rec, double *encode_s, char *msg, size_t msglen);
/* The same for a run named by reference (an appended row). */
int drv_worker_simulate_ref(drv_worker *w, const swp_sweep *sw, const fmt_run_ref *ref,
                            int32_t thread, fmt_run_record *rec, double *encode_s, char *msg,
                            size_t msglen);

/* The state the threads of one process share: the run list, the next index
 * (omp atomics) and the writer side (only inside critical(drv_writer)). */
typedef struct drv_sink {
  const swp_sweep *sw;
  fmt_out *out;
  const drv_options *opt;
  drv_result *res;
  const drv_runlist *list;
  int64_t next;      /* index into list->runs of the next run to hand out */
  double t0, last_flush, last_progress;
  int halt;          /* write or allocation failure: start no new runs */
} drv_sink;

void drv_sink_init(drv_sink *sk, const swp_sweep *sw, fmt_out *out,
                   const drv_options *opt, drv_result *res,
                   const drv_runlist *list);

/* Shared start of the OpenMP and MPI drivers: checks the sweep, builds the
 * list of runs to do and the sink. Returns 0, or -1 with res->first_error. */
int drv_execute_begin(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                      drv_result *res, drv_runlist *list, drv_sink *sk);
/* The next run to simulate, or -1 when none is left or the sweep stops.
 * Thread-safe. */
int64_t drv_sink_next(drv_sink *sk);
/* The same as an index into the list (-1: none). */
int64_t drv_sink_next_index(drv_sink *sk);
/* Stores one finished (or failed) run; call inside critical(drv_writer). */
void drv_sink_record(drv_sink *sk, const fmt_run_record *rec, int failed, double encode_s,
                     const char *msg);
/* Sets halt (thread-safe). */
void drv_sink_halt(drv_sink *sk);
/* Totals, stop state and the last progress call, after the threads joined. */
int drv_sink_finish(drv_sink *sk);

#ifdef STORMSWEEP_MPI
#include <mpi.h>

/* ---- mpi_driver.c ---- */

/* Rank 0 of comm: hands the runs of opt->subset out to the other ranks on
 * request, computes with its own threads too, and writes every result through
 * out. Same contract as drv_sweep_execute. */
int drv_mpi_execute_root(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                         drv_result *res, MPI_Comm comm);
/* Every other rank: computes the runs rank 0 hands out (opt->threads
 * threads) until it has none left. sw NULL: this rank could not load the
 * sweep (err says why); it tells rank 0 and leaves. Returns 0 or -1. */
int drv_mpi_execute_worker(const swp_sweep *sw, const drv_options *opt, MPI_Comm comm,
                           char *err, size_t errlen);
#endif

#endif
