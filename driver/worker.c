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
  free(w->wide_padded);
  free(w->wide_series);
  for (int k = 0; k < DRV_WIDE_SHAPES; k++) fmt_chunk_encoder_destroy(w->wide_encoder[k]);
  for (int k = 0; k < FMT_WIDE_COUNT; k++) free(w->wide_tmp[k]);
  memset(w, 0, sizeof *w);
}

/* Fills padded (T x width, -1 where the run has nothing) with matrix w of
 * the run's rows: the engine's rows x shards queue depths (its row keeps
 * the row's last tick), or each service's series w names. */
static int wide_fill(drv_worker *w, fmt_wide which, size_t width, int32_t rows, int32_t *padded,
                     char *msg, size_t msglen) {
  size_t T = (size_t)fmt_wide_rows(which, w->ticks), R = (size_t)rows;
  for (size_t i = 0; i < T * width; i++) padded[i] = -1;
  if (which == FMT_WIDE_SHARD_QUEUES) {
    const int32_t *q = eng_run_shard_queues(w->run);
    size_t own = q ? (size_t)w->cfg.shards : 0;
    if (own > width) {
      swp_seterr(msg, msglen, "the run has %zu shards, more than the file's %zu", own, width);
      return -1;
    }
    for (size_t t = 0; t < R; t++)
      for (size_t k = 0; k < own; k++) padded[t * width + k] = q[t * own + k];
    return 0;
  }
  size_t own = (size_t)eng_run_services(w->run);
  if (own > width) {
    swp_seterr(msg, msglen, "the run has %zu services, more than the file's %zu", own, width);
    return -1;
  }
  if (which == FMT_WIDE_SERVICE_SUMMARY) {
    for (size_t k = 0; k < own; k++) {
      eng_service_summary s;
      int32_t f[FMT_SERVICE_FIELDS];
      if (eng_run_service(w->run, (int32_t)k, &s)) return -1;
      fmt_service_fields(&s, f);
      for (size_t i = 0; i < FMT_SERVICE_FIELDS; i++) padded[i * width + k] = f[i];
    }
    return 0;
  }
  /* One service's rows at a time, then across: the matrix is ticks-major,
   * a service's series is not. */
  int32_t *one = w->wide_series;
  for (size_t k = 0; k < own; k++) {
    if (eng_run_service_rows(w->run, (int32_t)k,
                             (eng_service_trace)(which - FMT_WIDE_SERVICE_FIRST), one)) {
      swp_seterr(msg, msglen, "the engine has no series %s for service %zu",
                 fmt_wide_name(which), k);
      return -1;
    }
    for (size_t t = 0; t < R; t++) padded[t * width + k] = one[t];
  }
  return 0;
}

/* The run's fmt_wide matrices the source records, each padded to the
 * file's rows x width with -1 (a shorter horizon, fewer shards or
 * services, or a point that does not record them) and encoded into the
 * worker's wide_tmp. */
static int encode_wide(drv_worker *w, const drv_source *src, int32_t rows, fmt_run_record *rec,
                       char *msg, size_t msglen) {
  size_t T = (size_t)w->ticks;
  for (int k = 0; k < FMT_WIDE_COUNT; k++) {
    if (src->wide[k] <= 0) continue;
    size_t width = (size_t)src->wide[k], n = (size_t)fmt_wide_rows((fmt_wide)k, w->ticks) * width;
    size_t bound = fmt_chunk_bound(n);
    if (n > w->wide_padded_n) {
      free(w->wide_padded);
      w->wide_padded = malloc(n * sizeof *w->wide_padded);
      w->wide_padded_n = w->wide_padded ? n : 0;
    }
    if (!w->wide_series) w->wide_series = malloc((T ? T : 1) * sizeof *w->wide_series);
    fmt_chunk_encoder **enc = &w->wide_encoder[drv_wide_shape(k)];
    if (!*enc) *enc = fmt_chunk_encoder_create(n);
    if (!w->wide_tmp[k]) w->wide_tmp[k] = malloc(bound);
    if (!w->wide_padded || !w->wide_series || !*enc || !w->wide_tmp[k]) {
      swp_seterr(msg, msglen, "out of memory for /ticks/%s", fmt_wide_name((fmt_wide)k));
      return -1;
    }
    if (wide_fill(w, (fmt_wide)k, width, rows, w->wide_padded, msg, msglen)) return -1;
    size_t len = fmt_chunk_encode(*enc, w->wide_padded, w->wide_tmp[k], bound);
    if (!len) {
      swp_seterr(msg, msglen, "compressing /ticks/%s failed", fmt_wide_name((fmt_wide)k));
      return -1;
    }
    rec->wide_chunk[k] = w->wide_tmp[k];
    rec->wide_chunk_size[k] = len;
  }
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
  if (encode_wide(w, src, rows, rec, msg, msglen)) return -1;
  *encode_s = omp_get_wtime() - e0;
  return 0;
}
