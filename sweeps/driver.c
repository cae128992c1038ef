/*
 * driver.c — runs every (point, replicate) of a sweep on OpenMP threads and
 * streams the results into the writer.
 *
 * Runs are handed out one at a time (schedule(dynamic, 1)): run costs differ
 * by an order of magnitude between a calm point and a retry storm, so static
 * blocks would leave threads idle. Each thread owns one eng_run (reused, so a
 * sweep allocates once per thread), a chunk encoder and the compressed chunks
 * of its current run; it simulates and compresses outside any
 * lock, then enters a single critical section where the writer — HDF5 is not
 * thread-safe — stores the run, counts outcomes (integers only: no
 * floating-point reduction whose order could vary), flushes the file every
 * few seconds and reports progress. Memory is therefore threads x one run,
 * whatever the number of runs.
 *
 * A run's result depends only on its point's config and its seed, so thread
 * count and completion order change nothing in the file but /timing. A run
 * that fails is counted and named (with its seed) but does not stop the
 * others; a write failure stops the sweep, since nothing more can be saved.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swp_internal.h"

/* State shared by the workers; touched only inside the critical section or
 * through omp atomics (halt). */
typedef struct shared {
  const swp_sweep *sw;
  swp_h5out *out;
  const swp_driver_options *opt;
  swp_driver_result *res;
  double t0, last_flush, last_progress;
  int halt; /* write failure or allocation failure: start no new runs */
} shared;

typedef struct worker {
  eng_run *run;
  int32_t *padded;  /* one metric padded to the file's ticks */
  swp_chunk_encoder *encoder;
  uint8_t *tmp;     /* one chunk's encoding, swp_chunk_bound bytes */
  uint8_t *arena;   /* the run's encoded chunks back to back (compressed sizes only) */
  size_t bound, arena_cap;
  eng_config cfg;
  int64_t cfg_point;
} worker;

static int worker_init(worker *w, int32_t ticks) {
  memset(w, 0, sizeof *w);
  w->cfg_point = -1;
  w->bound = swp_chunk_bound((size_t)ticks);
  w->run = eng_run_create();
  w->padded = malloc((size_t)ticks * sizeof *w->padded);
  w->encoder = swp_chunk_encoder_create((size_t)ticks);
  w->tmp = malloc(w->bound);
  return w->run && w->padded && w->encoder && w->tmp ? 0 : -1;
}

static void worker_free(worker *w) {
  if (w->run) eng_run_destroy(w->run);
  free(w->padded);
  swp_chunk_encoder_destroy(w->encoder);
  free(w->tmp);
  free(w->arena);
}

/* Simulates run r and encodes its chunks into rec (encode_s gets the time
 * spent encoding). Returns 0 or -1 with msg. */
static int worker_simulate(worker *w, const swp_sweep *sw, int64_t r, swp_run_record *rec,
                           double *encode_s, char *msg, size_t msglen) {
  int64_t point = r / sw->replicates;
  int32_t rep = (int32_t)(r % sw->replicates);
  memset(rec, 0, sizeof *rec);
  rec->run = r;
  rec->point = point;
  rec->replicate = rep;
  rec->thread = omp_get_thread_num();
  uint64_t seed = eng_seed_derive(sw->seed, (uint64_t)point, (uint64_t)rep);
  rec->summary.seed = seed;
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
    size_t len = swp_chunk_encode(w->encoder, src, w->tmp, w->bound);
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
  *encode_s = omp_get_wtime() - e0;
  return 0;
}

/* Called inside the critical section. */
static void record_result(shared *sh, const swp_run_record *rec, int failed, double encode_s,
                          const char *msg) {
  swp_driver_result *res = sh->res;
  double w0 = omp_get_wtime();
  if (failed) {
    res->totals.failed++;
    if (!res->first_error[0])
      snprintf(res->first_error, sizeof res->first_error,
               "run %lld (point %lld, replicate %d, seed %llu): %s", (long long)rec->run,
               (long long)rec->point, rec->replicate, (unsigned long long)rec->summary.seed, msg);
  } else if (!sh->halt) {
    char err[512];
    if (swp_h5out_write_run(sh->out, rec, err, sizeof err)) {
      snprintf(res->first_error, sizeof res->first_error, "%s", err);
      res->write_failed = 1;
#pragma omp atomic write
      sh->halt = 1;
    } else {
      res->simulate_s += rec->wall_s;
      res->encode_s += encode_s;
      res->totals.done++;
      int o = rec->summary.outcome;
      if (o >= 0 && o <= 2) res->totals.outcomes[o]++;
      if (rec->summary.passed_slo) res->totals.passed++;
    }
  }
  double now = omp_get_wtime();
  const swp_driver_options *opt = sh->opt;
  double flush_every = opt->flush_interval_s > 0 ? opt->flush_interval_s : 2.0;
  if (!sh->halt && now - sh->last_flush >= flush_every) {
    char err[512];
    if (swp_h5out_flush(sh->out, err, sizeof err)) {
      snprintf(res->first_error, sizeof res->first_error, "%s", err);
      res->write_failed = 1;
#pragma omp atomic write
      sh->halt = 1;
    }
    sh->last_flush = now;
  }
  res->write_s += omp_get_wtime() - w0;
  if (opt->progress && now - sh->last_progress >= opt->progress_interval_s) {
    res->totals.elapsed_s = now - sh->t0;
    opt->progress(opt->progress_user, &res->totals);
    sh->last_progress = now;
  }
}

int swp_sweep_execute(const swp_sweep *sw, swp_h5out *out, const swp_driver_options *opt,
                      swp_driver_result *res) {
  memset(res, 0, sizeof *res);
  int64_t n_runs = swp_sweep_runs(sw);
  res->totals.total = n_runs;
  res->threads = opt->threads > 0 ? opt->threads : omp_get_max_threads();
  if (!sw->checked) {
    snprintf(res->first_error, sizeof res->first_error, "the sweep was not checked");
    return -1;
  }
  shared sh = {sw, out, opt, res, omp_get_wtime(), 0, 0, 0};
  sh.last_flush = sh.last_progress = sh.t0;
  int alloc_failed = 0, threads = res->threads;

#pragma omp parallel num_threads(threads)
  {
    /* OpenMP may give fewer threads than asked (OMP_THREAD_LIMIT). */
#pragma omp single nowait
    res->threads = omp_get_num_threads();
    worker w;
    int ok = worker_init(&w, sw->ticks) == 0;
    if (!ok) {
#pragma omp atomic write
      alloc_failed = 1;
#pragma omp atomic write
      sh.halt = 1;
    }
#pragma omp for schedule(dynamic, 1)
    for (int64_t r = 0; r < n_runs; r++) {
      int halt;
#pragma omp atomic read
      halt = sh.halt;
      if (!ok || halt || (opt->stop && *opt->stop)) continue;
      swp_run_record rec;
      char msg[256] = "";
      double encode_s = 0;
      int failed = worker_simulate(&w, sw, r, &rec, &encode_s, msg, sizeof msg) != 0;
#pragma omp critical(swp_writer)
      record_result(&sh, &rec, failed, encode_s, msg);
    }
    worker_free(&w);
  }

  res->wall_s = omp_get_wtime() - sh.t0;
  res->totals.elapsed_s = res->wall_s;
  if (alloc_failed && !res->first_error[0])
    snprintf(res->first_error, sizeof res->first_error,
             "out of memory allocating a run buffer for %d ticks", sw->ticks);
  res->stopped = opt->stop && *opt->stop && res->totals.done + res->totals.failed < n_runs;
  if (opt->progress) opt->progress(opt->progress_user, &res->totals);
  return res->totals.done == n_runs ? 0 : -1;
}
