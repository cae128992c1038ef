/*
 * drv.h — public API of the stormsweep driver: runs the (point, replicate)
 * runs of a sweep on OpenMP threads (and, built with MPI, across ranks) and
 * streams each finished run to the result file's writer (fmt.h).
 *
 * A run's result depends only on its point's configuration and its seed, so
 * thread count, rank count and completion order change nothing in the file
 * but /timing. A run that fails is counted and named (with its seed) but does
 * not stop the others; a write failure stops the sweep.
 */
#ifndef STORMSWEEP_DRV_H
#define STORMSWEEP_DRV_H

#include <signal.h>
#include <stdint.h>

#include "fmt.h"
#include "swp.h"

typedef struct drv_progress {
  int64_t done, total;  /* runs */
  int64_t outcomes[ENG_OUTCOME_COUNT];  /* by eng_outcome */
  int64_t passed, failed;
  double elapsed_s;
} drv_progress;

typedef void (*drv_progress_fn)(void *user, const drv_progress *p);

typedef struct drv_options {
  int threads;                      /* <= 0: omp_get_max_threads() */
  drv_progress_fn progress;         /* called from the writer's critical section */
  void *progress_user;
  double progress_interval_s;       /* at most this often (and once at the end) */
  double flush_interval_s;          /* H5Fflush at most this often (default 2 s) */
  const volatile sig_atomic_t *stop; /* when it turns nonzero, no new runs start */
  const swp_subset *subset;         /* NULL: every run */
  const fmt_run_ref *runs;          /* non-NULL: exactly these runs, in this order (subset is
                                       ignored; refine); not supported by the MPI driver */
  int64_t n_runs;                   /* entries of runs */
} drv_options;

typedef struct drv_result {
  drv_progress totals;
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
} drv_result;

/* Runs every run of a checked sweep (or of opt->subset) and writes it
 * through out. Returns 0 when every such run was simulated and written, -1
 * otherwise (res says why; runs that fail do not stop the others, a write
 * failure does). res->totals.total is the number of runs selected. */
int drv_sweep_execute(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                      drv_result *res);

#endif
