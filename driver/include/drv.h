/*
 * drv.h — public API of the stormsweep driver: the one worker loop. It runs
 * jobs — seeded engine runs — on OpenMP threads (and, built with MPI, across
 * ranks: mpi_driver.c is a transport for sweeps) and hands each finished run
 * to a sink, one at a time: the result file's writer (fmt.h) for a sweep,
 * refine and verify -o; a command's own callback for verify and boundary.
 *
 * A run's result depends only on its configuration and its seed, so thread
 * count, rank count and completion order change nothing but timing. A run
 * that fails — an invalid configuration, or a run that needs more memory
 * than it may have (memory_limit_mb) or than the machine gives — is counted
 * and named with its seed and never stops the others; a sink failure (a
 * write) stops them all.
 *
 * Threading: call from one thread; the callbacks of a source may be called
 * from any worker thread at once (they must be pure), those of a sink and
 * the progress callback from one thread at a time.
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

/* ---- jobs ---- */

/* One run to make: its identity and its seed. */
typedef struct drv_job {
  int64_t run, point;  /* for a sweep: its /runs row and grid point */
  int32_t replicate;
  uint64_t seed;
  int no_rows; /* the run stores its summary row alone, no /ticks rows (refine's) */
} drv_job;

/* Where jobs come from. */
typedef struct drv_source {
  int64_t n;  /* jobs 0 .. n-1, handed out in this order */
  /* Job j's identity and seed: a pure function of j. */
  void (*job)(void *user, int64_t j, drv_job *job);
  /* The configuration of job j: called again only when job->point differs
   * from the previous job's on the same thread (or is negative). 0, or -1
   * with a message in msg. */
  int (*config)(void *user, int64_t j, const drv_job *job, eng_config *cfg, char *msg,
                size_t msglen);
  int32_t ticks;        /* > 0: encode each run's /ticks chunks padded to this many stored
                           rows (the sweep's rows: ticks at record = full) */
  int32_t wide[FMT_WIDE_COUNT]; /* > 0: also that fmt_wide matrix, this wide (per-shard
                                   queue depths, a call graph's per-service series) */
  void *user;
  /* The most one job's engine run holds (eng_run_memory, each part at its
   * largest over the jobs): drv_execute refuses to start threads that
   * would not fit (drv_memory_check). NULL: no check. */
  const eng_memory *run_memory;
  /* What a run stores (sweeps/record.c: metrics and their rows); NULL:
   * every metric at every tick. */
  const swp_sweep *record;
} drv_source;

/* Where finished runs go. */
typedef struct drv_sink {
  /* A run finished: store it (chunks valid only during the call). 0, or -1
   * with a message: nothing more is stored and no new run starts. */
  int (*record)(void *user, const fmt_run_record *rec, char *err, size_t errlen);
  /* Makes what was stored so far durable: called every flush_interval_s
   * (may be NULL; the caller commits the rest, e.g. by closing the writer). */
  int (*flush)(void *user, char *err, size_t errlen);
  void *user;
} drv_sink;

typedef struct drv_options {
  int threads;                      /* <= 0: omp_get_max_threads() */
  drv_progress_fn progress;         /* at most every progress_interval_s, and at the end */
  void *progress_user;
  double progress_interval_s;
  double flush_interval_s;          /* sink->flush at most this often (default 2 s) */
  const volatile sig_atomic_t *stop; /* when it turns nonzero, no new runs start */
  /* drv_sweep_execute only: */
  const swp_subset *subset;         /* NULL: every run */
  const fmt_run_ref *runs;          /* non-NULL: exactly these runs, in this order (subset is
                                       ignored; refine, verify); not over MPI */
  int64_t n_runs;                   /* entries of runs */
  int runs_summary;                 /* those of runs past the sweep's own rows with a
                                       replicate >= summary_from (refine's confirmation runs)
                                       store no /ticks rows, their summary row alone */
  int64_t summary_from;
  /* Called with every run the writer stored (or, without a writer, every
   * finished run), from the sink's thread: verify's test reads them here. */
  void (*on_record)(void *user, const fmt_run_record *rec);
  void *on_record_user;
} drv_options;

typedef struct drv_result {
  drv_progress totals;
  double wall_s;
  /* Where the time went (wall seconds; not results, so summing across
   * threads in completion order is harmless): */
  double simulate_s;           /* eng_run_simulate, summed over runs */
  double encode_s;             /* shuffle + deflate in the workers, summed */
  double write_s;              /* inside the sink: rows, chunks, flushes */
  double wait_s;               /* threads waiting for the sink, summed (OpenMP driver) */
  int threads;                 /* computing threads, over all ranks */
  int ranks;                   /* MPI processes (1 without MPI) */
  int stopped;                 /* the stop flag ended the runs early */
  int write_failed;            /* the sink failed: what it holds is incomplete */
  int refused;                 /* drv_memory_check refused the threads: nothing ran */
  char first_error[512];       /* first failed run (with its seed) or sink error */
} drv_result;

/* ---- memory (memory.c) ---- */

/* Whether threads (<= 0: all cores) running jobs (<= 0: as many as
 * threads) fit: the process, each busy thread's engine run (run) and each
 * thread's buffers for ticks (and the fmt_wide matrices of widths wide, NULL: none)
 * against the least of the memory the system says is available, the room
 * under the cgroup's limit and under ulimit -v. 0, or -1 with a message
 * naming the estimate, the memory available and the -j that would fit. */
int drv_memory_check(const eng_memory *run, int32_t ticks, const int32_t *wide, int64_t jobs,
                     int threads, char *err, size_t errlen);
/* The same for the runs of a checked sweep, before anything is created. */
int drv_sweep_memory_check(const swp_sweep *sw, int threads, int64_t jobs, char *err,
                           size_t errlen);
/* Bytes of one worker's buffers besides its engine run (worker.c). */
double drv_worker_memory(int32_t ticks, const int32_t *wide);
/* Bytes this process may still take (-1: the system does not say); *what
 * names the limit, *address_space is 1 when it is ulimit -v. */
double drv_available_memory(const char **what, int *address_space);

/* Runs every job of src into sink. Returns 0 when every job was simulated
 * and stored, -1 otherwise (res says why). res->totals.total = src->n. */
int drv_execute(const drv_source *src, const drv_sink *sink, const drv_options *opt,
                drv_result *res);

/* Runs every run of a checked sweep (or of opt->subset, or opt->runs) and
 * writes it through out (NULL: nothing is written; opt->on_record sees the
 * runs). Same contract as drv_execute. */
int drv_sweep_execute(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                      drv_result *res);

#ifdef STORMSWEEP_MPI
#include <mpi.h>

/* ---- across MPI ranks (mpi_driver.c; built with STORMSWEEP_MPI) ---- */

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
