/*
 * worker.c — one computing thread of the driver: it owns an eng_run (reused,
 * so a sweep allocates once per thread), the configuration of the point it
 * ran last (consecutive jobs mostly share a point), a chunk encoder and the
 * compressed chunks of its current run. It simulates and compresses outside
 * any lock; the sink sees only compressed bytes, a few percent of the raw
 * run.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_internal.h"

int drv_worker_init(drv_worker *w, int32_t ticks) {
  memset(w, 0, sizeof *w);
  w->cfg_point = -1;
  w->ticks = ticks;
  w->run = eng_run_create();
  if (!w->run) return -1;
  if (ticks <= 0) return 0;
  w->bound = fmt_chunk_bound((size_t)ticks);
  w->padded = malloc((size_t)ticks * sizeof *w->padded);
  w->encoder = fmt_chunk_encoder_create((size_t)ticks);
  w->tmp = malloc(w->bound);
  return w->padded && w->encoder && w->tmp ? 0 : -1;
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

/* The run's rows x shards matrix (the engine keeps a row's last tick),
 * padded to the file's rows x S with -1 (a shorter horizon, fewer shards,
 * or a point that does not record them), encoded into the worker's
 * shard_tmp. */
static int encode_shard_queues(drv_worker *w, int32_t S_, int32_t rows, fmt_run_record *rec,
                               char *msg, size_t msglen) {
  size_t S = (size_t)S_, T = (size_t)w->ticks, n = T * S;
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
      w->shard_padded[t * S + k] = t < (size_t)rows && k < own ? q[t * own + k] : -1;
  size_t len = fmt_chunk_encode(w->shard_encoder, w->shard_padded, w->shard_tmp, bound);
  if (!len) {
    swp_seterr(msg, msglen, "compressing the per-shard queue depths failed");
    return -1;
  }
  rec->shard_chunk = w->shard_tmp;
  rec->shard_chunk_size = len;
  return 0;
}

/* The run's metric rows, each padded to the file's rows and encoded, back
 * to back in the arena. */
static int encode_metrics(drv_worker *w, const swp_sweep *record, int32_t rows,
                          fmt_run_record *rec, char *msg, size_t msglen) {
  size_t n = (size_t)w->ticks, used = 0, offset[ENG_M_COUNT];
  for (int m = 0; m < ENG_M_COUNT; m++) {
    offset[m] = used;
    rec->chunk_size[m] = 0;
    if (record && !swp_record_stored(record, m)) continue; /* record_metrics: not stored */
    const int32_t *src = eng_run_metric(w->run, (eng_metric)m);
    if (rows < w->ticks) {
      /* A shorter horizon than the file's: the rest reads as the fill value. */
      memcpy(w->padded, src, (size_t)rows * sizeof *src);
      for (size_t t = (size_t)rows; t < n; t++) w->padded[t] = -1;
      src = w->padded;
    }
    size_t len = fmt_chunk_encode(w->encoder, src, w->tmp, w->bound);
    if (!len) {
      swp_seterr(msg, msglen, "compressing metric %s failed",
                 eng_metric_get_info((eng_metric)m)->name);
      return -1;
    }
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
  for (int m = 0; m < ENG_M_COUNT; m++)
    rec->chunk[m] = rec->chunk_size[m] ? w->arena + offset[m] : NULL;
  return 0;
}

int drv_worker_run(drv_worker *w, const drv_source *src, int64_t j, int32_t thread,
                   fmt_run_record *rec, double *encode_s, char *msg, size_t msglen) {
  drv_job job;
  src->job(src->user, j, &job);
  memset(rec, 0, sizeof *rec);
  rec->run = job.run;
  rec->point = job.point;
  rec->replicate = job.replicate;
  rec->thread = thread;
  rec->summary.seed = job.seed;
  *encode_s = 0;
  if (job.point < 0 || w->cfg_point != job.point) {
    w->cfg_point = -1;
    if (src->config(src->user, j, &job, &w->cfg, msg, msglen)) return -1;
    w->cfg_point = job.point;
  }
  /* The run keeps the rows the file stores (record: a row per tick, per
   * every=MS, or none at summary), so its memory follows them, not the
   * horizon. */
  int32_t stride = src->record && src->record->record_stride > 1 ? src->record->record_stride : 1;
  int rows_kept = w->ticks > 0 && !job.no_rows;
  eng_run_set_row_ticks(w->run, rows_kept ? stride : 0);
  double t0 = omp_get_wtime();
  if (eng_run_simulate(w->run, &w->cfg, job.seed, &rec->summary, msg, msglen)) return -1;
  rec->wall_s = omp_get_wtime() - t0;
  int32_t ticks = eng_run_ticks(w->run);
  rec->ticks = ticks;
  if (!rows_kept) return 0; /* no chunks: the summary row alone */
  int32_t rows = eng_run_rows(w->run);
  if (ticks < 0 || rows != (int32_t)(((int64_t)ticks + stride - 1) / stride) || rows > w->ticks) {
    swp_seterr(msg, msglen, "engine returned %d rows of %d ticks, expected at most %d", rows,
               ticks, w->ticks);
    return -1;
  }
  double e0 = omp_get_wtime();
  if (encode_metrics(w, src->record, rows, rec, msg, msglen)) return -1;
  if (src->shard_queues > 0 &&
      encode_shard_queues(w, src->shard_queues, rows, rec, msg, msglen))
    return -1;
  *encode_s = omp_get_wtime() - e0;
  return 0;
}
