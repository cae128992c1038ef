/*
 * mpi_driver.c — the sweep driver across MPI processes (built only with
 * -DSTORMSWEEP_MPI=ON): `mpirun -np N stormsweep run SWEEP.ini -o FILE`
 * spreads the runs over N ranks, each computing on its OpenMP threads, and
 * produces one result file identical (h5diff) to a single-process run's.
 *
 * ## Why rank 0 gathers compressed results and is the only writer
 *
 * Nodes of a cluster often share no fast file system (node-local scratch, an
 * NFS home, a Lustre that punishes small writes), and our serial HDF5 build
 * cannot write one file from many processes anyway; parallel HDF5 would
 * need MPI-IO on a shared parallel file system and collective calls for
 * every chunk. So the other ranks never touch the file: each run's 19 /ticks
 * chunks are compressed where they were computed (shuffle + deflate, the
 * costly part of writing) and sent to rank 0 with the run's summary row —
 * about 60 KB per 10,000-tick run, some 6 MB/s at 100 runs/s, far below
 * any interconnect — and rank 0 stores them with H5Dwrite_chunk, the same
 * writer, commit protocol and file as a single process, so slices, --resume,
 * Ctrl-C and the full-disk handling behave the same under MPI.
 *
 * ## Why work is handed out on request
 *
 * A naive retry storm costs several times a guarded run and the points are
 * ordered, so a static split (blocks or strides per rank) leaves ranks idle
 * at the end. Rank 0 instead keeps the list of runs to do (all, a slice, or
 * those a resumed file lacks) and hands out one run per request: every
 * message from a worker thread carries its finished run and asks for the
 * next, and the reply is the next run index (-1: nothing left, stop). One run
 * per request costs one round trip (tens of microseconds) per run of 10-100
 * ms, so batching would buy nothing and cost balance at the end.
 *
 * ## Threads
 *
 * Rank 0 runs its T compute threads plus one server thread (OpenMP thread 0
 * of a team of T + 1) that polls for requests (MPI_Iprobe, napping 20 us to
 * 1 ms when idle rather than spinning in a blocking receive, which would take
 * a core from the computation), replies at once, then writes the received
 * run inside the same critical section the local threads use. On the other
 * ranks each compute thread does its own send-then-receive inside a critical
 * section, so MPI is called by one thread at a time: MPI_THREAD_SERIALIZED,
 * which every MPI library provides.
 *
 * A run's result depends only on (sweep, point, replicate), never on which
 * rank or thread ran it, so the file equals a single-process run's. Messages
 * carry eng_summary as raw bytes: every rank must run the same binary on the
 * same architecture, as MPI jobs do. /timing/run_thread holds rank x 1000 +
 * thread.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drv_internal.h"

#define TAG_REQUEST 7101
#define TAG_REPLY 7102
#define IDLE_SLEEP_MIN_NS 20000L   /* first nap after the last request */
#define IDLE_SLEEP_MAX_NS 1000000L /* longest: a request waits at most ~1 ms */

enum msg_kind {
  MSG_HELLO = 1,  /* no run yet: give me one */
  MSG_RESULT = 2, /* a finished run follows, and give me the next */
  MSG_FAILED = 3, /* the run failed (msg), give me the next */
  MSG_FATAL = 4   /* this rank cannot work (msg); no reply wanted */
};

typedef struct msg_head {
  int32_t kind;
  int32_t threads;   /* compute threads of the sending rank */
  int32_t thread;    /* rank x 1000 + thread */
  int32_t ticks;
  int32_t want_more; /* 0: the sender is stopping (its own stop flag) */
  int32_t pad;
  int64_t run;
  double wall_s, encode_s;
  eng_summary summary;
  uint64_t chunk_size[ENG_M_COUNT];
  uint64_t wide_chunk_size[FMT_WIDE_COUNT]; /* 0: not recorded */
  char msg[256];
} msg_head;

/* ---- rank 0 ---- */

typedef struct server {
  drv_pool *pool;
  const drv_source *src;
  const swp_sweep *sw;
  MPI_Comm comm;
  int ranks;
  uint8_t *buf;
  size_t cap;
  int remote_threads;
  char *seen; /* ranks heard from */
} server;

/* Naps between polls, doubling from IDLE_SLEEP_MIN_NS while no request
 * comes: quick answers in a burst, ~1000 wake-ups a second at most when
 * idle (polling every 100 us cost 15% of a core in system time). */
static void sleep_idle(int *naps) {
  long ns = IDLE_SLEEP_MIN_NS << (*naps < 8 ? *naps : 8);
  if (ns > IDLE_SLEEP_MAX_NS) ns = IDLE_SLEEP_MAX_NS;
  else (*naps)++;
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
}

/* Serves requests until every remote thread has been told to stop. */
static void server_loop(server *sv) {
  int pending_ranks = sv->ranks - 1, active = 0, naps = 0;
  drv_result *res = sv->pool->res;
  while (pending_ranks > 0 || active > 0) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQUEST, sv->comm, &flag, &st);
    if (!flag) {
      sleep_idle(&naps);
      continue;
    }
    naps = 0;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    int src = st.MPI_SOURCE;
    if ((size_t)count > sv->cap) {
      uint8_t *b = realloc(sv->buf, (size_t)count);
      if (!b) {
        /* Cannot even receive: drain it into nothing useful and stop. */
        MPI_Abort(sv->comm, 1);
        return;
      }
      sv->buf = b;
      sv->cap = (size_t)count;
    }
    MPI_Recv(sv->buf, count, MPI_BYTE, src, TAG_REQUEST, sv->comm, MPI_STATUS_IGNORE);
    msg_head h;
    if ((size_t)count < sizeof h) continue; /* not ours */
    memcpy(&h, sv->buf, sizeof h);
    h.msg[sizeof h.msg - 1] = 0;
    if (!sv->seen[src]) {
      sv->seen[src] = 1;
      pending_ranks--;
      active += h.threads;
      sv->remote_threads += h.threads;
    }
    if (h.kind == MSG_FATAL) {
#pragma omp critical(drv_writer)
      if (!res->first_error[0])
        snprintf(res->first_error, sizeof res->first_error, "rank %d: %s", src, h.msg);
      continue;
    }
    int64_t j = h.want_more ? drv_pool_next(sv->pool) : -1, next = -1;
    if (j >= 0) {
      drv_job job;
      sv->src->job(sv->src->user, j, &job);
      next = job.run; /* the other ranks know runs by their id */
    }
    MPI_Send(&next, 1, MPI_INT64_T, src, TAG_REPLY, sv->comm);
    if (next < 0) active--;
    if (h.kind != MSG_RESULT && h.kind != MSG_FAILED) continue;
    if (h.run < 0) { /* a thread that could not start */
#pragma omp critical(drv_writer)
      if (!res->first_error[0])
        snprintf(res->first_error, sizeof res->first_error, "rank %d: %s", src, h.msg);
      continue;
    }
    fmt_run_record rec;
    memset(&rec, 0, sizeof rec);
    rec.run = h.run;
    rec.point = h.run / sv->sw->replicates;
    rec.replicate = (int32_t)(h.run % sv->sw->replicates);
    rec.ticks = h.ticks;
    rec.summary = h.summary;
    rec.wall_s = h.wall_s;
    rec.thread = h.thread;
    int bad = 0;
    size_t used = sizeof h;
    for (int m = 0; m < ENG_M_COUNT && h.kind == MSG_RESULT; m++) {
      if (h.chunk_size[m] > (uint64_t)count - used) {
        bad = 1;
        break;
      }
      rec.chunk[m] = sv->buf + used;
      rec.chunk_size[m] = (size_t)h.chunk_size[m];
      used += (size_t)h.chunk_size[m];
    }
    for (int w = 0; w < FMT_WIDE_COUNT && !bad && h.kind == MSG_RESULT; w++) {
      if (!h.wide_chunk_size[w]) continue;
      if (h.wide_chunk_size[w] > (uint64_t)count - used) {
        bad = 1;
        break;
      }
      rec.wide_chunk[w] = sv->buf + used;
      rec.wide_chunk_size[w] = (size_t)h.wide_chunk_size[w];
      used += (size_t)h.wide_chunk_size[w];
    }
    if (bad) snprintf(h.msg, sizeof h.msg, "rank %d sent a truncated result", src);
#pragma omp critical(drv_writer)
    drv_pool_record(sv->pool, &rec, h.kind == MSG_FAILED || bad, h.encode_s, h.msg);
  }
}

int drv_mpi_execute_root(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                         drv_result *res, MPI_Comm comm) {
  memset(res, 0, sizeof *res);
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  res->ranks = ranks;
  int local = opt->threads > 0 ? opt->threads : omp_get_max_threads();
  if (opt->runs) {
    /* Workers derive (point, replicate) from the run id; appended rows need
     * the explicit list, which the protocol does not carry (yet). */
    snprintf(res->first_error, sizeof res->first_error,
             "refine does not run under MPI with several ranks yet: run refine (or run "
             "--refine) without mpirun; the file is the same");
    return -1;
  }
  if (!sw->checked) {
    snprintf(res->first_error, sizeof res->first_error, "the sweep was not checked");
    return -1;
  }
  drv_sweep_jobs js;
  drv_source src;
  drv_sink sink;
  if (drv_sweep_jobs_init(&js, sw, out, opt, 1, &src, &sink)) {
    snprintf(res->first_error, sizeof res->first_error, "out of memory for the list of runs");
    return -1;
  }
  drv_pool pool;
  drv_pool_init(&pool, &src, &sink, opt, res);
  server sv = {&pool, &src, sw, comm, ranks, NULL, 0, 0, calloc((size_t)ranks, 1)};
  if (!sv.seen) {
    snprintf(res->first_error, sizeof res->first_error, "out of memory");
    drv_sweep_jobs_free(&js);
    return -1;
  }
  int computing = 0, alloc_failed = 0;

  /* Thread 0 serves the other ranks; threads 1..local compute. */
#pragma omp parallel num_threads(local + 1)
  {
    if (omp_get_thread_num() == 0) {
      server_loop(&sv);
    } else {
#pragma omp atomic
      computing++;
      drv_worker w;
      if (drv_worker_init(&w, src.ticks)) {
#pragma omp atomic write
        alloc_failed = 1;
        drv_pool_halt(&pool);
      }
      int64_t j;
      while ((j = drv_pool_next(&pool)) >= 0) {
        fmt_run_record rec;
        char msg[256] = "";
        double encode_s = 0;
        int failed = drv_worker_run(&w, &src, j, (int32_t)omp_get_thread_num() - 1, &rec,
                                    &encode_s, msg, sizeof msg) != 0;
#pragma omp critical(drv_writer)
        drv_pool_record(&pool, &rec, failed, encode_s, msg);
      }
      drv_worker_free(&w);
    }
  }
  res->threads = computing + sv.remote_threads;
  if (alloc_failed && !res->first_error[0])
    snprintf(res->first_error, sizeof res->first_error,
             "out of memory allocating a run buffer for %d ticks", sw->ticks);
  int rc = drv_pool_finish(&pool);
  free(sv.buf);
  free(sv.seen);
  drv_sweep_jobs_free(&js);
  return rc;
}

/* ---- the other ranks ---- */

/* Sends h (and n chunk bytes) and waits for the next run. */
static int64_t request(MPI_Comm comm, uint8_t *buf, size_t len) {
  int64_t next = -1;
#pragma omp critical(swp_mpi)
  {
    MPI_Send(buf, (int)len, MPI_BYTE, 0, TAG_REQUEST, comm);
    MPI_Recv(&next, 1, MPI_INT64_T, 0, TAG_REPLY, comm, MPI_STATUS_IGNORE);
  }
  return next;
}

int drv_mpi_execute_worker(const swp_sweep *sw, const drv_options *opt, MPI_Comm comm,
                           char *err, size_t errlen) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  char why[400];
  if (sw && drv_sweep_memory_check(sw, opt->threads, 0, why, sizeof why)) {
    /* This rank's machine cannot hold its threads' runs: refused as a
     * sweep it could not load is, so rank 0 stops the run and says why. */
    swp_seterr(err, errlen, "rank %d: %s", rank, why);
    sw = NULL;
  }
  if (!sw) {
    msg_head h;
    memset(&h, 0, sizeof h);
    h.kind = MSG_FATAL;
    h.run = -1;
    snprintf(h.msg, sizeof h.msg, "%s", err && err[0] ? err : "cannot load the sweep");
    MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, TAG_REQUEST, comm);
    return -1;
  }
  int threads = opt->threads > 0 ? opt->threads : omp_get_max_threads();
  int failed_any = 0;
  /* Every run of the sweep, job j = run j: rank 0 sends run ids. */
  drv_options all = {0};
  drv_sweep_jobs js;
  drv_source src;
  drv_sink sink;
  if (drv_sweep_jobs_init(&js, sw, NULL, &all, 1, &src, &sink)) {
    swp_seterr(err, errlen, "rank %d: out of memory", rank);
    return -1;
  }
#pragma omp parallel num_threads(threads)
  {
    int team = omp_get_num_threads(), me = omp_get_thread_num();
    drv_worker w;
    int ok = drv_worker_init(&w, src.ticks) == 0;
    size_t cap = sizeof(msg_head) + (size_t)ENG_M_COUNT * fmt_chunk_bound((size_t)sw->ticks);
    for (int k = 0; k < FMT_WIDE_COUNT; k++)
      if (src.wide[k])
        cap += fmt_chunk_bound((size_t)fmt_wide_rows((fmt_wide)k, sw->ticks) * (size_t)src.wide[k]);
    uint8_t *buf = ok ? malloc(cap) : NULL;
    msg_head h;
    memset(&h, 0, sizeof h);
    h.kind = MSG_HELLO;
    h.threads = team;
    h.run = -1;
    h.want_more = 1;
    size_t len = sizeof h;
    if (!buf) {
      h.kind = MSG_FAILED;
      h.want_more = 0;
      snprintf(h.msg, sizeof h.msg, "thread %d: out of memory for a run of %d ticks", me,
               sw->ticks);
    }
    for (;;) {
      h.want_more = h.want_more && !(opt->stop && *opt->stop);
      if (buf) memcpy(buf, &h, sizeof h);
      int64_t next = request(comm, buf ? buf : (uint8_t *)&h, len);
      if (next < 0) break;
      fmt_run_record rec;
      double encode_s = 0;
      memset(&h, 0, sizeof h);
      h.threads = team;
      h.want_more = 1;
      h.thread = rank * 1000 + me;
      int fail = drv_worker_run(&w, &src, next, h.thread, &rec, &encode_s, h.msg,
                                sizeof h.msg) != 0;
      h.run = next;
      len = sizeof h;
      if (fail) {
        h.kind = MSG_FAILED;
        continue;
      }
      h.kind = MSG_RESULT;
      h.ticks = rec.ticks;
      h.wall_s = rec.wall_s;
      h.encode_s = encode_s;
      h.summary = rec.summary;
      for (int m = 0; m < ENG_M_COUNT; m++) {
        h.chunk_size[m] = rec.chunk_size[m];
        if (rec.chunk_size[m]) memcpy(buf + len, rec.chunk[m], rec.chunk_size[m]);
        len += rec.chunk_size[m];
      }
      for (int k = 0; k < FMT_WIDE_COUNT; k++) {
        h.wide_chunk_size[k] = rec.wide_chunk_size[k];
        if (rec.wide_chunk_size[k]) memcpy(buf + len, rec.wide_chunk[k], rec.wide_chunk_size[k]);
        len += rec.wide_chunk_size[k];
      }
    }
    if (!ok) {
#pragma omp atomic write
      failed_any = 1;
    }
    free(buf);
    drv_worker_free(&w);
  }
  drv_sweep_jobs_free(&js);
  if (failed_any) swp_seterr(err, errlen, "rank %d: a thread could not allocate its run", rank);
  return failed_any ? -1 : 0;
}
