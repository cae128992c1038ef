/*
 * swp_internal.h — helpers shared by the files of the sweeps library; not
 * part of its public API (swp.h).
 */
#ifndef STORMSWEEP_SWP_INTERNAL_H
#define STORMSWEEP_SWP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "swp.h"

/* snprintf into err (no-op when err is NULL). */
void swp_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Expands an axis list ("10, lin(1, 5, 3), inf") for setting key into
 * ax->values / ax->count and stores the normalised spec. ax->key must be set.
 * other_points is the product of the other axes' counts: an axis that would
 * take the grid past SWP_MAX_POINTS is refused before its values are made
 * (returns -2 for that, -1 for any other problem).
 * Messages carry no file or line; the caller prefixes them. */
int swp_axis_expand(swp_axis *ax, const char *spec, int64_t other_points, char *err,
                    size_t errlen);
/* How many values swp_axis_expand would make of spec, counted without
 * making them (a range that does not parse counts as one value). */
int64_t swp_axis_count(const char *key, const char *spec);
void swp_axis_clear(swp_axis *ax);

/* ---- driver.c: the pieces both drivers (OpenMP, MPI) are made of ---- */

/* The runs to execute, ascending. */
typedef struct swp_runlist {
  int64_t n;
  int64_t *runs;
  const swp_run_ref *refs; /* explicit runs (driver options), else NULL */
} swp_runlist;

/* Builds the list of subset s (NULL: every run). Cost: one pass over n_runs. */
int swp_runlist_build(swp_runlist *l, const swp_sweep *sw, const swp_subset *s);
void swp_runlist_free(swp_runlist *l);
/* The number of runs in subset s, without building the list. */
int64_t swp_subset_count(const swp_sweep *sw, const swp_subset *s);

/* One computing thread: its engine run, encoder and encoded chunks. */
typedef struct swp_worker {
  eng_run *run;
  int32_t *padded;  /* one metric padded to the file's ticks */
  swp_chunk_encoder *encoder;
  uint8_t *tmp;     /* one chunk's encoding, swp_chunk_bound bytes */
  uint8_t *arena;   /* the run's encoded chunks back to back (compressed sizes only) */
  size_t bound, arena_cap;
  eng_config cfg;
  int64_t cfg_point;
  /* Per-shard queue depths (sweeps with record_shard_queues = on), made on
   * first use: ticks x shard_queues values, their encoder and encoding. */
  int32_t *shard_padded;
  swp_chunk_encoder *shard_encoder;
  uint8_t *shard_tmp;
} swp_worker;

int swp_worker_init(swp_worker *w, int32_t ticks);
void swp_worker_free(swp_worker *w);
/* Simulates run r and encodes its chunks into rec (chunk pointers into the
 * worker's arena, valid until its next run). Returns 0 or -1 with msg. */
int swp_worker_simulate(swp_worker *w, const swp_sweep *sw, int64_t r, int32_t thread,
                        swp_run_record *rec, double *encode_s, char *msg, size_t msglen);
/* The same for a run named by reference (an appended row). */
int swp_worker_simulate_ref(swp_worker *w, const swp_sweep *sw, const swp_run_ref *ref,
                            int32_t thread, swp_run_record *rec, double *encode_s, char *msg,
                            size_t msglen);

/* The state the threads of one process share: the run list, the next index
 * (omp atomics) and the writer side (only inside critical(swp_writer)). */
typedef struct swp_sink {
  const swp_sweep *sw;
  swp_h5out *out;
  const swp_driver_options *opt;
  swp_driver_result *res;
  const swp_runlist *list;
  int64_t next;      /* index into list->runs of the next run to hand out */
  double t0, last_flush, last_progress;
  int halt;          /* write or allocation failure: start no new runs */
} swp_sink;

void swp_sink_init(swp_sink *sk, const swp_sweep *sw, swp_h5out *out,
                   const swp_driver_options *opt, swp_driver_result *res,
                   const swp_runlist *list);

/* Shared start of the OpenMP and MPI drivers: checks the sweep, builds the
 * list of runs to do and the sink. Returns 0, or -1 with res->first_error. */
int swp_execute_begin(const swp_sweep *sw, swp_h5out *out, const swp_driver_options *opt,
                      swp_driver_result *res, swp_runlist *list, swp_sink *sk);
/* The next run to simulate, or -1 when none is left or the sweep stops.
 * Thread-safe. */
int64_t swp_sink_next(swp_sink *sk);
/* The same as an index into the list (-1: none). */
int64_t swp_sink_next_index(swp_sink *sk);
/* Stores one finished (or failed) run; call inside critical(swp_writer). */
void swp_sink_record(swp_sink *sk, const swp_run_record *rec, int failed, double encode_s,
                     const char *msg);
/* Sets halt (thread-safe). */
void swp_sink_halt(swp_sink *sk);
/* Totals, stop state and the last progress call, after the threads joined. */
int swp_sink_finish(swp_sink *sk);

#ifdef STORMSWEEP_MPI
#include <mpi.h>

/* ---- mpi_driver.c ---- */

/* Rank 0 of comm: hands the runs of opt->subset out to the other ranks on
 * request, computes with its own threads too, and writes every result through
 * out. Same contract as swp_sweep_execute. */
int swp_mpi_execute_root(const swp_sweep *sw, swp_h5out *out, const swp_driver_options *opt,
                         swp_driver_result *res, MPI_Comm comm);
/* Every other rank: computes the runs rank 0 hands out (opt->threads
 * threads) until it has none left. sw NULL: this rank could not load the
 * sweep (err says why); it tells rank 0 and leaves. Returns 0 or -1. */
int swp_mpi_execute_worker(const swp_sweep *sw, const swp_driver_options *opt, MPI_Comm comm,
                           char *err, size_t errlen);
#endif

/* ---- h5out.c: the writer's state, for messages ---- */

/* Runs the file holds as of its last commit (what a failed close keeps). */
int64_t swp_h5out_committed_count(const swp_h5out *o);

/* ---- h5out.c: reading result files (merge, and checks shared with resume) ---- */

/* Root attributes of a result file, as read. */
typedef struct swp_h5info {
  int32_t format_version;
  char *tool_version;
  uint64_t master_seed;
  int32_t crn; /* 0 when the attribute is missing (files before crn) */
  int64_t n_runs, n_points, replicates;
  int32_t ticks;
  double tick_ms;
  int32_t complete;
  int64_t slice_index, slice_count; /* slice_count 0: the whole sweep */
  char *sweep_text, *sweep_source, *sweep_source_text, *command_line;
  /* /timing attributes (0 / NULL when missing) */
  double wall_s, simulate_s, encode_s, write_s;
  int32_t threads;
  char *started, *finished;
} swp_h5info;

void swp_h5info_free(swp_h5info *info);

/* A result file opened read-only, its layout checked against what this
 * version writes: a file that is not HDF5, not a stormsweep result, of another
 * format version, or with shapes that disagree with its attributes is refused
 * with a message naming the file and what is wrong. HDF5's own error printing
 * is off while one is open. */
typedef struct swp_h5in swp_h5in;

int swp_h5in_open(swp_h5in **in, const char *path, char *err, size_t errlen);
void swp_h5in_close(swp_h5in *in);
const swp_h5info *swp_h5in_info(const swp_h5in *in);
/* The done column: n_runs flags (1 for any nonzero value). */
int swp_h5in_read_done(swp_h5in *in, uint8_t *done, char *err, size_t errlen);
/* Rows runs[0..n) into recs (run, point, replicate, ticks, summary, wall_s,
 * thread; chunks left empty), checking each row is the run it claims to be
 * (index, point, replicate, seed, outcome, ticks in range). */
int swp_h5in_read_records(swp_h5in *in, const int64_t *runs, size_t n, swp_run_record *recs,
                          char *err, size_t errlen);
/* Bytes the /ticks chunks take in the file. */
double swp_h5in_ticks_bytes(swp_h5in *in);
/* Run r's stored /ticks chunks, raw (still compressed), back to back into
 * *buf (grown as needed; *cap its size); rec->chunk/chunk_size point into it.
 * A missing chunk or one larger than swp_chunk_bound(ticks) is an error. */
int swp_h5in_read_chunks(swp_h5in *in, int64_t r, uint8_t **buf, size_t *cap,
                         swp_run_record *rec, char *err, size_t errlen);

#endif
