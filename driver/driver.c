/*
 * driver.c — runs the (point, replicate) runs of a sweep on OpenMP threads
 * and streams the results into the writer; also the slice rule and the
 * pieces the MPI driver (mpi_driver.c) is built from.
 *
 * The runs to do are a list (drv_runlist): every run, a slice, or — for
 * --resume — those the file does not hold yet. Threads take the next list
 * entry from an atomic counter one run at a time: run costs differ by an
 * order of magnitude between a calm point and a retry storm, so static blocks
 * would leave threads idle. Each thread owns one eng_run (reused, so a sweep
 * allocates once per thread), a chunk encoder and the compressed chunks of
 * its current run; it simulates and compresses outside any lock, then enters
 * a single critical section where the writer — HDF5 is not thread-safe —
 * stores the run, counts outcomes (integers only: no floating-point reduction
 * whose order could vary), commits the file every few seconds and reports
 * progress. Memory is therefore threads x one run, whatever the number of
 * runs.
 *
 * A run's result depends only on its point's config and its seed, so thread
 * count, completion order and the subset a process runs change nothing in the
 * file but /timing. A run that fails is counted and named (with its seed) but
 * does not stop the others; a write failure stops the sweep, since nothing
 * more can be saved.
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_internal.h"

int drv_runlist_build(drv_runlist *l, const swp_sweep *sw, const swp_subset *s) {
  int64_t n_runs = swp_sweep_runs(sw), n = swp_subset_count(sw, s);
  l->n = 0;
  l->refs = NULL;
  l->runs = malloc((size_t)(n ? n : 1) * sizeof *l->runs);
  if (!l->runs) return -1;
  for (int64_t r = 0; r < n_runs; r++)
    if (swp_subset_has(sw, s, r)) l->runs[l->n++] = r;
  return 0;
}

void drv_runlist_free(drv_runlist *l) {
  free(l->runs);
  l->runs = NULL;
  l->refs = NULL;
  l->n = 0;
}

/* ---- workers ---- */

int drv_worker_init(drv_worker *w, int32_t ticks) {
  memset(w, 0, sizeof *w);
  w->cfg_point = -1;
  w->bound = fmt_chunk_bound((size_t)ticks);
  w->run = eng_run_create();
  w->padded = malloc((size_t)ticks * sizeof *w->padded);
  w->encoder = fmt_chunk_encoder_create((size_t)ticks);
  w->tmp = malloc(w->bound);
  return w->run && w->padded && w->encoder && w->tmp ? 0 : -1;
}

void drv_worker_free(drv_worker *w) {
  if (w->run) eng_run_destroy(w->run);
  free(w->padded);
  fmt_chunk_encoder_destroy(w->encoder);
  free(w->tmp);
  free(w->arena);
  free(w->shard_padded);
  fmt_chunk_encoder_destroy(w->shard_encoder);
  free(w->shard_tmp);
  memset(w, 0, sizeof *w);
}

int drv_worker_simulate(drv_worker *w, const swp_sweep *sw, int64_t r, int32_t thread,
                        fmt_run_record *rec, double *encode_s, char *msg, size_t msglen) {
  fmt_run_ref ref = {r, r / sw->replicates, (int32_t)(r % sw->replicates)};
  return drv_worker_simulate_ref(w, sw, &ref, thread, rec, encode_s, msg, msglen);
}

/* The run's ticks x shards matrix, padded to the file's ticks x
 * sw->shard_queues with -1 (a shorter horizon, fewer shards, or a point that
 * does not record them), encoded into the worker's shard_tmp. */
static int encode_shard_queues(drv_worker *w, const swp_sweep *sw, int32_t ticks,
                               fmt_run_record *rec, char *msg, size_t msglen) {
  size_t S = (size_t)sw->shard_queues, T = (size_t)sw->ticks, n = T * S;
  size_t bound = fmt_chunk_bound(n);
  if (!w->shard_encoder) {
    w->shard_padded = malloc(n * sizeof *w->shard_padded);
    w->shard_encoder = fmt_chunk_encoder_create(n);
    w->shard_tmp = malloc(bound);
    if (!w->shard_padded || !w->shard_encoder || !w->shard_tmp) {
      swp_seterr(msg, msglen, "out of memory for the per-shard queue depths");
      return -1;
    }
  }
  const int32_t *q = eng_run_shard_queues(w->run);
  size_t own = q ? (size_t)w->cfg.shards : 0;
  if (own > S) {
    swp_seterr(msg, msglen, "the run has %zu shards, more than the file's %zu", own, S);
    return -1;
  }
  for (size_t t = 0; t < T; t++)
    for (size_t k = 0; k < S; k++)
      w->shard_padded[t * S + k] = t < (size_t)ticks && k < own ? q[t * own + k] : -1;
  size_t len = fmt_chunk_encode(w->shard_encoder, w->shard_padded, w->shard_tmp, bound);
  if (!len) {
    swp_seterr(msg, msglen, "compressing the per-shard queue depths failed");
    return -1;
  }
  rec->shard_chunk = w->shard_tmp;
  rec->shard_chunk_size = len;
  return 0;
}

int drv_worker_simulate_ref(drv_worker *w, const swp_sweep *sw, const fmt_run_ref *ref,
                            int32_t thread, fmt_run_record *rec, double *encode_s, char *msg,
                            size_t msglen) {
  int64_t r = ref->run, point = ref->point;
  int32_t rep = ref->replicate;
  memset(rec, 0, sizeof *rec);
  rec->run = r;
  rec->point = point;
  rec->replicate = rep;
  rec->thread = thread;
  uint64_t seed = swp_run_seed(sw->seed, sw->crn, point, rep);
  rec->summary.seed = seed;
  *encode_s = 0;
  /* Consecutive runs mostly share a point: build its config once. */
  if (w->cfg_point != point) {
    w->cfg_point = -1;
    if (swp_sweep_point_config(sw, point, &w->cfg, msg, msglen)) return -1;
    w->cfg_point = point;
  }
  double t0 = omp_get_wtime();
  if (eng_run_simulate(w->run, &w->cfg, seed, &rec->summary, msg, msglen)) return -1;
  rec->wall_s = omp_get_wtime() - t0;
  int32_t ticks = eng_run_ticks(w->run);
  if (ticks < 0 || ticks > sw->ticks) {
    swp_seterr(msg, msglen, "engine returned %d ticks, expected at most %d", ticks, sw->ticks);
    return -1;
  }
  rec->ticks = ticks;
  double e0 = omp_get_wtime();
  size_t n = (size_t)sw->ticks, used = 0, offset[ENG_M_COUNT];
  for (int m = 0; m < ENG_M_COUNT; m++) {
    const int32_t *src = eng_run_metric(w->run, (eng_metric)m);
    if (ticks < sw->ticks) {
      /* A shorter horizon than the file's: the rest reads as the fill value. */
      memcpy(w->padded, src, (size_t)ticks * sizeof *src);
      for (size_t t = (size_t)ticks; t < n; t++) w->padded[t] = -1;
      src = w->padded;
    }
    size_t len = fmt_chunk_encode(w->encoder, src, w->tmp, w->bound);
    if (!len) {
      swp_seterr(msg, msglen, "compressing metric %s failed",
                 eng_metric_get_info((eng_metric)m)->name);
      return -1;
    }
    /* Keep only the compressed bytes: a few percent of the raw run. */
    if (used + len > w->arena_cap) {
      size_t cap = w->arena_cap ? w->arena_cap : 4096;
      while (cap < used + len) cap *= 2;
      uint8_t *a = realloc(w->arena, cap);
      if (!a) {
        swp_seterr(msg, msglen, "out of memory for the encoded run");
        return -1;
      }
      w->arena = a;
      w->arena_cap = cap;
    }
    memcpy(w->arena + used, w->tmp, len);
    offset[m] = used;
    rec->chunk_size[m] = len;
    used += len;
  }
  for (int m = 0; m < ENG_M_COUNT; m++) rec->chunk[m] = w->arena + offset[m];
  if (sw->shard_queues > 0 && encode_shard_queues(w, sw, ticks, rec, msg, msglen)) return -1;
  *encode_s = omp_get_wtime() - e0;
  return 0;
}

/* ---- the shared writer side ---- */

void drv_sink_init(drv_sink *sk, const swp_sweep *sw, fmt_out *out,
                   const drv_options *opt, drv_result *res,
                   const drv_runlist *list) {
  memset(sk, 0, sizeof *sk);
  sk->sw = sw;
  sk->out = out;
  sk->opt = opt;
  sk->res = res;
  sk->list = list;
  sk->t0 = sk->last_flush = sk->last_progress = omp_get_wtime();
  res->totals.total = list->n;
}

int64_t drv_sink_next(drv_sink *sk) {
  int64_t j = drv_sink_next_index(sk);
  return j < 0 ? -1 : sk->list->runs[j];
}

int64_t drv_sink_next_index(drv_sink *sk) {
  int halt;
#pragma omp atomic read
  halt = sk->halt;
  /* Set by a signal handler, or by another thread (a progress callback):
   * read atomically, as one would write it. */
  if (halt || (sk->opt->stop && __atomic_load_n(sk->opt->stop, __ATOMIC_RELAXED))) return -1;
  int64_t j;
#pragma omp atomic capture
  j = sk->next++;
  return j < sk->list->n ? j : -1;
}

void drv_sink_halt(drv_sink *sk) {
#pragma omp atomic write
  sk->halt = 1;
}

void drv_sink_record(drv_sink *sk, const fmt_run_record *rec, int failed, double encode_s,
                     const char *msg) {
  drv_result *res = sk->res;
  double w0 = omp_get_wtime();
  if (failed) {
    res->totals.failed++;
    if (!res->first_error[0])
      snprintf(res->first_error, sizeof res->first_error,
               "run %lld (point %lld, replicate %d, seed %llu): %s", (long long)rec->run,
               (long long)rec->point, rec->replicate, (unsigned long long)rec->summary.seed, msg);
  } else if (!sk->halt) {
    char err[512];
    if (fmt_out_write_run(sk->out, rec, err, sizeof err)) {
      snprintf(res->first_error, sizeof res->first_error, "%s", err);
      res->write_failed = 1;
      drv_sink_halt(sk);
    } else {
      res->simulate_s += rec->wall_s;
      res->encode_s += encode_s;
      res->totals.done++;
      int o = rec->summary.outcome;
      if (o >= 0 && o < ENG_OUTCOME_COUNT) res->totals.outcomes[o]++;
      if (rec->summary.passed_slo) res->totals.passed++;
    }
  }
  double now = omp_get_wtime();
  const drv_options *opt = sk->opt;
  double flush_every = opt->flush_interval_s > 0 ? opt->flush_interval_s : 2.0;
  if (!sk->halt && now - sk->last_flush >= flush_every) {
    char err[512];
    if (fmt_out_flush(sk->out, err, sizeof err)) {
      snprintf(res->first_error, sizeof res->first_error, "%s", err);
      res->write_failed = 1;
      drv_sink_halt(sk);
    }
    sk->last_flush = now;
  }
  res->write_s += omp_get_wtime() - w0;
  if (opt->progress && now - sk->last_progress >= opt->progress_interval_s) {
    res->totals.elapsed_s = now - sk->t0;
    opt->progress(opt->progress_user, &res->totals);
    sk->last_progress = now;
  }
}

int drv_sink_finish(drv_sink *sk) {
  drv_result *res = sk->res;
  res->wall_s = omp_get_wtime() - sk->t0;
  res->totals.elapsed_s = res->wall_s;
  int64_t n = sk->list->n;
  res->stopped = sk->opt->stop && __atomic_load_n(sk->opt->stop, __ATOMIC_RELAXED) &&
                 res->totals.done + res->totals.failed < n;
  if (sk->opt->progress) sk->opt->progress(sk->opt->progress_user, &res->totals);
  return res->totals.done == n ? 0 : -1;
}

/* ---- the OpenMP driver ---- */

int drv_execute_begin(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                      drv_result *res, drv_runlist *list, drv_sink *sk) {
  if (!sw->checked) {
    snprintf(res->first_error, sizeof res->first_error, "the sweep was not checked");
    return -1;
  }
  if (opt->runs) {
    /* An explicit list (refine's appended rows): run exactly these. */
    list->n = 0;
    list->refs = opt->runs;
    list->runs = malloc((size_t)(opt->n_runs > 0 ? opt->n_runs : 1) * sizeof *list->runs);
    if (!list->runs) {
      snprintf(res->first_error, sizeof res->first_error, "out of memory for the list of runs");
      return -1;
    }
    for (int64_t i = 0; i < opt->n_runs; i++) list->runs[list->n++] = opt->runs[i].run;
  } else if (drv_runlist_build(list, sw, opt->subset)) {
    snprintf(res->first_error, sizeof res->first_error, "out of memory for the list of runs");
    return -1;
  }
  drv_sink_init(sk, sw, out, opt, res, list);
  return 0;
}

int drv_sweep_execute(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                      drv_result *res) {
  memset(res, 0, sizeof *res);
  res->threads = opt->threads > 0 ? opt->threads : omp_get_max_threads();
  res->ranks = 1;
  drv_runlist list;
  drv_sink sk;
  if (drv_execute_begin(sw, out, opt, res, &list, &sk)) return -1;
  int alloc_failed = 0, threads = res->threads;

#pragma omp parallel num_threads(threads)
  {
    /* OpenMP may give fewer threads than asked (OMP_THREAD_LIMIT). */
#pragma omp single nowait
    res->threads = omp_get_num_threads();
    drv_worker w;
    if (drv_worker_init(&w, sw->ticks)) {
#pragma omp atomic write
      alloc_failed = 1;
      drv_sink_halt(&sk);
    }
    int64_t j;
    while ((j = drv_sink_next_index(&sk)) >= 0) {
      fmt_run_record rec;
      char msg[256] = "";
      double encode_s = 0;
      fmt_run_ref ref = list.refs ? list.refs[j]
                                  : (fmt_run_ref){list.runs[j], list.runs[j] / sw->replicates,
                                                  (int32_t)(list.runs[j] % sw->replicates)};
      int failed = drv_worker_simulate_ref(&w, sw, &ref, (int32_t)omp_get_thread_num(), &rec,
                                           &encode_s, msg, sizeof msg) != 0;
      /* Time spent queueing for the writer is what a writer costs the
       * other threads (Amdahl's serial part): measured, not guessed. */
      double q0 = omp_get_wtime();
#pragma omp critical(drv_writer)
      {
        res->wait_s += omp_get_wtime() - q0;
        drv_sink_record(&sk, &rec, failed, encode_s, msg);
      }
    }
    drv_worker_free(&w);
  }

  if (alloc_failed && !res->first_error[0])
    snprintf(res->first_error, sizeof res->first_error,
             "out of memory allocating a run buffer for %d ticks", sw->ticks);
  int rc = drv_sink_finish(&sk);
  drv_runlist_free(&list);
  return rc;
}
