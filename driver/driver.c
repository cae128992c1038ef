/*
 * driver.c — the worker loop (drv.h): jobs on OpenMP threads, each finished
 * run handed to the sink from one critical section.
 *
 * Threads take the next job from an atomic counter one at a time: run costs
 * differ by an order of magnitude between a calm point and a retry storm, so
 * static blocks would leave threads idle. Each thread owns a worker
 * (worker.c); it simulates and compresses outside any lock, then enters a
 * single critical section where the sink — HDF5 is not thread-safe — stores
 * the run, where outcomes are counted (integers only: no floating-point
 * reduction whose order could vary), the sink is flushed every few seconds
 * and progress is reported. Memory is therefore threads x one run, whatever
 * the number of runs. The MPI transport (mpi_driver.c) is built from the
 * same pool.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_internal.h"

void drv_pool_init(drv_pool *p, const drv_source *src, const drv_sink *sink,
                   const drv_options *opt, drv_result *res) {
  memset(p, 0, sizeof *p);
  p->src = src;
  p->sink = sink;
  p->opt = opt;
  p->res = res;
  p->t0 = p->last_flush = p->last_progress = omp_get_wtime();
  res->totals.total = src->n;
}

int64_t drv_pool_next(drv_pool *p) {
  int halt;
#pragma omp atomic read
  halt = p->halt;
  /* Set by a signal handler, or by another thread (a progress callback):
   * read atomically, as one would write it. */
  if (halt || (p->opt->stop && __atomic_load_n(p->opt->stop, __ATOMIC_RELAXED))) return -1;
  int64_t j;
#pragma omp atomic capture
  j = p->next++;
  return j < p->src->n ? j : -1;
}

void drv_pool_halt(drv_pool *p) {
#pragma omp atomic write
  p->halt = 1;
}

void drv_pool_record(drv_pool *p, const fmt_run_record *rec, int failed, double encode_s,
                     const char *msg) {
  drv_result *res = p->res;
  const drv_options *opt = p->opt;
  double w0 = omp_get_wtime();
  if (failed) {
    res->totals.failed++;
    if (!res->first_error[0])
      snprintf(res->first_error, sizeof res->first_error,
               "run %lld (point %lld, replicate %d, seed %llu): %s", (long long)rec->run,
               (long long)rec->point, rec->replicate, (unsigned long long)rec->summary.seed, msg);
  } else if (!p->halt) {
    char err[512] = "";
    if (p->sink && p->sink->record && p->sink->record(p->sink->user, rec, err, sizeof err)) {
      snprintf(res->first_error, sizeof res->first_error, "%s", err);
      res->write_failed = 1;
      drv_pool_halt(p);
    } else {
      res->simulate_s += rec->wall_s;
      res->encode_s += encode_s;
      res->totals.done++;
      int o = rec->summary.outcome;
      if (o >= 0 && o < ENG_OUTCOME_COUNT) res->totals.outcomes[o]++;
      if (rec->summary.passed_slo) res->totals.passed++;
      if (opt->on_record) opt->on_record(opt->on_record_user, rec);
    }
  }
  double now = omp_get_wtime();
  double flush_every = opt->flush_interval_s > 0 ? opt->flush_interval_s : 2.0;
  if (!p->halt && p->sink && p->sink->flush && now - p->last_flush >= flush_every) {
    char err[512] = "";
    if (p->sink->flush(p->sink->user, err, sizeof err)) {
      snprintf(res->first_error, sizeof res->first_error, "%s", err);
      res->write_failed = 1;
      drv_pool_halt(p);
    }
    p->last_flush = now;
  }
  res->write_s += omp_get_wtime() - w0;
  if (opt->progress && now - p->last_progress >= opt->progress_interval_s) {
    res->totals.elapsed_s = now - p->t0;
    opt->progress(opt->progress_user, &res->totals);
    p->last_progress = now;
  }
}

int drv_pool_finish(drv_pool *p) {
  drv_result *res = p->res;
  res->wall_s = omp_get_wtime() - p->t0;
  res->totals.elapsed_s = res->wall_s;
  int64_t n = p->src->n;
  res->stopped = p->opt->stop && __atomic_load_n(p->opt->stop, __ATOMIC_RELAXED) &&
                 res->totals.done + res->totals.failed < n;
  if (p->opt->progress) p->opt->progress(p->opt->progress_user, &res->totals);
  return res->totals.done == n && !res->write_failed ? 0 : -1;
}

int drv_execute(const drv_source *src, const drv_sink *sink, const drv_options *opt,
                drv_result *res) {
  memset(res, 0, sizeof *res);
  res->threads = opt->threads > 0 ? opt->threads : omp_get_max_threads();
  res->ranks = 1;
  /* Before any thread exists: threads that cannot all hold a run are
   * refused whole, rather than each failing (or the kernel killing the
   * process) once the memory runs out. */
  if (src->run_memory && drv_memory_check(src->run_memory, src->ticks, src->wide, src->n,
                                          res->threads, res->first_error,
                                          sizeof res->first_error)) {
    res->refused = 1;
    res->totals.total = src->n;
    return -1;
  }
  drv_pool p;
  drv_pool_init(&p, src, sink, opt, res);
  int alloc_failed = 0, threads = res->threads;

#pragma omp parallel num_threads(threads)
  {
    /* OpenMP may give fewer threads than asked (OMP_THREAD_LIMIT). */
#pragma omp single nowait
    res->threads = omp_get_num_threads();
    drv_worker w;
    if (drv_worker_init(&w, src->ticks)) {
#pragma omp atomic write
      alloc_failed = 1;
      drv_pool_halt(&p);
    }
    int64_t j;
    while ((j = drv_pool_next(&p)) >= 0) {
      fmt_run_record rec;
      char msg[256] = "";
      double encode_s = 0;
      int failed = drv_worker_run(&w, src, j, (int32_t)omp_get_thread_num(), &rec, &encode_s,
                                  msg, sizeof msg) != 0;
      /* Time spent queueing for the sink is what a single writer costs the
       * other threads (Amdahl's serial part): measured, not guessed. */
      double q0 = omp_get_wtime();
#pragma omp critical(drv_writer)
      {
        res->wait_s += omp_get_wtime() - q0;
        drv_pool_record(&p, &rec, failed, encode_s, msg);
      }
    }
    drv_worker_free(&w);
  }

  if (alloc_failed && !res->first_error[0])
    snprintf(res->first_error, sizeof res->first_error,
             "out of memory allocating a run buffer for %d ticks", src->ticks);
  return drv_pool_finish(&p);
}
