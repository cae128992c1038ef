/*
 * fmt.h — public API of stormsweep's result file: the one owner of
 * the HDF5 file a sweep writes. Writing it (create, commit, resume, rebuild
 * from the journal, append), reading it back (merge, verify --resume), the
 * /ticks chunk encoding, and the journal and lock that keep it durable.
 * Reading a file for analysis: fmt_results.h; the /refine, /analysis and
 * /boundary groups: fmt_store.h; every other file a command writes:
 * fmt_outfile.h.
 *
 * The layout (names, versions, the /runs columns) is documented once, in
 * format/layout.h's header comment, and for users in
 * docs/file-format.md.
 *
 * Threading: a writer (fmt_out) is not thread-safe: the driver calls it from
 * one critical section; encoding chunks (fmt_chunk_encode, one encoder per
 * thread) runs in the workers. HDF5's error printing is off inside every
 * call; errors come back as one line naming the file.
 */
#ifndef STORMSWEEP_FMT_H
#define STORMSWEEP_FMT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "eng.h"
#include "swp.h"

/* The lock every writer of a result file holds (run, resume, refine, verify,
 * merge, analyze --write), independent of HDF5's own file locking
 * (fmt_lock_acquire below). */
typedef struct fmt_lock fmt_lock;

#define FMT_FORMAT_NAME "stormsweep-results"
#define FMT_FORMAT_VERSION 3          /* what this version writes */
#define FMT_FORMAT_VERSION_MIN_READ 1 /* the oldest the readers still read */

/* ---- chunk encoding (thread-safe, pure) ---- */
/* Deflate level of /ticks chunks. Measured on seed-study runs (19 metrics x
 * 10,000 ticks): levels 1-3 take zlib's fast path, about 1.9 ms per run and
 * 64 KB; levels 4-9 take 3.3-6.7 ms for 61 KB. Encoding was 15% of a sweep's
 * CPU at level 4, so 3 buys ~7% throughput for ~4% more disk. */
#define FMT_DEFLATE_LEVEL 3

/* Upper bound of an encoded chunk of n int32 values. */
size_t fmt_chunk_bound(size_t n);

/* Encodes chunks of n int32 values exactly as HDF5's filter pipeline
 * shuffle(4) + deflate(FMT_DEFLATE_LEVEL) does, so the bytes can be written
 * with H5Dwrite_chunk and read back by any HDF5 reader. One encoder per
 * thread: it keeps its zlib state between chunks. */
typedef struct fmt_chunk_encoder fmt_chunk_encoder;
fmt_chunk_encoder *fmt_chunk_encoder_create(size_t n);
void fmt_chunk_encoder_destroy(fmt_chunk_encoder *e);
/* Returns the encoded size (<= outcap; fmt_chunk_bound(n) always fits), 0 on failure. */
size_t fmt_chunk_encode(fmt_chunk_encoder *e, const int32_t *values, uint8_t *out,
                        size_t outcap);
/* 0 when data (size bytes) is a whole encoded chunk of exactly n values,
 * -1 when it does not decode to that (a record from an untrusted journal). */
int fmt_chunk_check(const uint8_t *data, size_t size, size_t n);

/* ---- runs and their records ---- */

/* One run named explicitly: its row in the file, point and replicate. Runs
 * of the sweep's own shape have run = point * replicates + replicate; runs
 * `refine` appends have any row past those (fmt_out_append). */
typedef struct fmt_run_ref {
  int64_t run, point;
  int32_t replicate;
} fmt_run_ref;

typedef struct fmt_out fmt_out;

/* The 3-D /ticks datasets, int32 [runs, rows, width], one chunk per run:
 * each shard's queue depth (record_shard_queues = on; width the sweep's
 * shard_queues), a call graph's per-service series (width its services,
 * the front first) in eng_service_trace order, and its per-service
 * summary (rows: the FMT_SERVICE_FIELDS below). A sweep records those of
 * non-zero width (fmt_wide_width). */
typedef enum fmt_wide {
  FMT_WIDE_SHARD_QUEUES,
  FMT_WIDE_SERVICE_FIRST, /* + eng_service_trace */
  FMT_WIDE_SERVICE_SUMMARY = FMT_WIDE_SERVICE_FIRST + ENG_SV_COUNT,
  FMT_WIDE_COUNT
} fmt_wide;
/* Its width in sw's file (0: not recorded). */
int32_t fmt_wide_width(const swp_sweep *sw, fmt_wide w);
/* Its name under /ticks ("shard_queue_depth", "service_attempts", ...). */
const char *fmt_wide_name(fmt_wide w);
/* Its rows: the file's stored rows per run, or FMT_SERVICE_FIELDS. */
int32_t fmt_wide_rows(fmt_wide w, int32_t rows);

/* The per-service summary's rows (/ticks/service_summary, labelled by
 * /ticks/service_field): eng_service_summary as int32 — outcome, recovery
 * time in whole ms (-1: not recovered), the counts (saturating at
 * INT32_MAX), the peak queue, and the busy share in parts per million (-1
 * for the front, whose work is not timed apart). */
#define FMT_SERVICE_FIELDS 18
const char *fmt_service_field_name(int i);
void fmt_service_fields(const eng_service_summary *s, int32_t out[FMT_SERVICE_FIELDS]);

typedef struct fmt_run_record {
  int64_t run, point;
  int32_t replicate;
  int32_t ticks;                     /* valid ticks of this run (<= the file's) */
  eng_summary summary;
  const uint8_t *chunk[ENG_M_COUNT]; /* fmt_chunk_encode output of each metric */
  size_t chunk_size[ENG_M_COUNT];
  /* The run's fmt_wide matrices (ticks x width, padded with -1) encoded
   * the same way, those the sweep records; else NULL, 0. */
  const uint8_t *wide_chunk[FMT_WIDE_COUNT];
  size_t wide_chunk_size[FMT_WIDE_COUNT];
  double wall_s;                     /* wall time of the simulation */
  int32_t thread;
} fmt_run_record;

typedef struct fmt_timing {
  double wall_s;      /* whole sweep */
  int32_t threads;
  int64_t runs_done;  /* this session */
  const char *started, *finished; /* ISO 8601 UTC */
  double simulate_s, encode_s, write_s; /* drv_result's breakdown */
  int32_t ranks;      /* MPI processes (0 is taken as 1) */
  int32_t sessions;   /* 0: the file's count, plus one when resumed */
  const char *command_line; /* of this session when resumed (NULL: none) */
} fmt_timing;

/* Creates path (truncating an existing file only with force) and writes every
 * object except run rows and ticks. command_line is stored as given. */
int fmt_out_create(fmt_out **out, const char *path, const swp_sweep *sw,
                     const char *command_line, int force, char *err, size_t errlen);
/* fmt_out_create with flags: FORCE as force above; NO_JOURNAL writes no
 * FILE.journal (merge: its output is renamed into place only when whole);
 * NO_LOCK takes no FILE.lock; IN_PLACE creates path itself rather than a
 * temporary renamed over it (path is then a name the caller just made). */
enum { FMT_OUT_FORCE = 1, FMT_OUT_NO_JOURNAL = 2, FMT_OUT_NO_LOCK = 4,
       FMT_OUT_IN_PLACE = 8 };
int fmt_out_create_flags(fmt_out **out, const char *path, const swp_sweep *sw,
                           const char *command_line, unsigned flags, char *err, size_t errlen);
/* What opening it salvaged or repaired ("" when nothing): e.g. a damaged
 * file rebuilt from its journal. For the caller to print. */
const char *fmt_out_note(const fmt_out *o);
/* Marks a new file as slice index/count (root attributes slice, slice_index,
 * slice_count); a file without them holds the whole sweep. */
int fmt_out_set_slice(fmt_out *o, int64_t index, int64_t count, char *err, size_t errlen);
/* Reopens an interrupted result file to finish it (run --resume). Refuses,
 * naming the difference, a file of another sweep (effective sweep_text,
 * master seed, shapes) or another slice (slice_count 0: the whole sweep);
 * checks that every run marked done has all its /ticks chunks (a run that
 * lacks one is run again). With a journal (FILE.journal) every done run is
 * checked against it byte for byte, and a damaged file is rebuilt from it
 * (fmt_out_note then says so); see docs/durability.md. A file another
 * process is writing (FILE.lock held) is refused. */
int fmt_out_open_resume(fmt_out **out, const char *path, const swp_sweep *sw,
                          int64_t slice_index, int64_t slice_count, char *err, size_t errlen);
/* Reopens a complete whole-sweep file to append runs to it (refine): like
 * open_resume, but the file may hold more rows than the sweep's own runs
 * (earlier appends). held: the writer lock the caller holds for the whole
 * session (NULL: taken here until close). The first open of a session
 * copies the file's runs into a fresh journal, which then journals the
 * session's rows and runs too and stays until fmt_out_session_end. Files
 * written before the run dimension became extendable are refused with a
 * message. */
int fmt_out_open_append(fmt_out **out, const char *path, const swp_sweep *sw, fmt_lock *held,
                        char *err, size_t errlen);
/* A result file HDF5 cannot open at all, beside a journal that holds its
 * sweep (every journal does): rebuilt from the journal now, under the
 * file's lock (held, or taken for the call), with note saying so. What
 * refine, which takes its sweep from the file, does first. 0 when rebuilt,
 * 1 when there was nothing to do (no journal, or the file opens: the
 * writer's own checks then compare it with its journal), -1 on failure. */
int fmt_out_salvage(const char *path, fmt_lock *held, char *note, size_t notelen, char *err,
                    size_t errlen);
/* Ends a refine session whose writes all closed: makes the file durable and
 * removes its journal (the session's, kept across its rounds by
 * fmt_out_open_append), when that journal is this file's. Call it with the
 * session's lock still held. */
int fmt_out_session_end(const char *path, char *err, size_t errlen);
/* Appends n rows (point[i], replicate[i]) at the end of every per-run
 * dataset, not done (done = 0), updates the root n_runs and commits; the
 * rows' run ids are first, first + 1, ... The driver then runs them like any
 * other (drv_options.runs). */
int fmt_out_append(fmt_out *o, int64_t n, const int64_t *point, const int32_t *replicate,
                     int64_t *first, char *err, size_t errlen);
/* The rows not done yet, in row order, as a malloc'd list (*refs NULL when
 * none). */
int fmt_out_pending(fmt_out *o, fmt_run_ref **refs, int64_t *n, char *err, size_t errlen);
/* Rows in the file (the sweep's runs plus appended ones). */
int64_t fmt_out_rows(const fmt_out *o);
/* n_runs flags: the runs the file held when opened (all 0 for a new file). */
const uint8_t *fmt_out_done(const fmt_out *o);
/* The rows and summaries (no chunks) of n done runs of an open writer,
 * each checked to be the run it claims to be: what a resumed verify starts
 * from, read after the writer's open has rebuilt a damaged file. */
int fmt_out_read_records(fmt_out *o, const int64_t *runs, size_t n, fmt_run_record *recs,
                         char *err, size_t errlen);
int64_t fmt_out_done_count(const fmt_out *o);

/* Writes one finished run: its /ticks chunks at once, its /runs row (done = 1)
 * and timing at the next commit (fmt_out_flush or close), after the
 * chunks' index is on disk — so a file cut off at any moment never marks a
 * run done whose data it lacks. */
int fmt_out_write_run(fmt_out *o, const fmt_run_record *rec, char *err, size_t errlen);
/* Commits: flush, write the pending rows, flush again. */
int fmt_out_flush(fmt_out *o, char *err, size_t errlen);
/* Commits, writes /timing attributes (and complete = 1 once every run is in)
 * and closes; o is freed even on error. After a failed write the file is
 * closed without writing anything more, so it keeps its last commit intact
 * for --resume. A resumed file is checked against its journal before it is
 * made complete and rebuilt from it if it differs; err then says so although
 * the call succeeds (err is "" otherwise). */
int fmt_out_close(fmt_out *o, const fmt_timing *timing, char *err, size_t errlen);
/* Nonzero once a write failed. */
int fmt_out_failed(const fmt_out *o);

/* ISO 8601 UTC time, "2024-05-01T12:00:00Z". */
void fmt_time_iso8601(char *buf, size_t len);

/* Runs the file holds as of its last commit (what a failed close keeps). */
int64_t fmt_out_committed_count(const fmt_out *o);

/* ---- reading result files back (merge, verify --resume) ---- */

/* Root attributes of a result file, as read. */
typedef struct fmt_info {
  int32_t format_version;
  char *tool_version;
  uint64_t master_seed;
  int32_t crn; /* 0 when the attribute is missing (files before crn) */
  uint64_t instance; /* random id of this file instance (0: missing, older files) */
  int64_t n_runs, n_points, replicates;
  int32_t ticks;
  double tick_ms;
  /* What /ticks stores (sweeps/record.c): root attributes `record`, `rows`,
   * `metrics`; a file without `record` is full: every metric, rows = ticks. */
  char record[64];  /* "full", "every=10ms", "summary" */
  int32_t rows;     /* stored rows per run (the /ticks width), 0 at summary */
  uint32_t stored;  /* bit m: /ticks/<metric m> exists */
  int32_t complete;
  int64_t slice_index, slice_count; /* slice_count 0: the whole sweep */
  char *sweep_text, *sweep_source, *sweep_source_text, *command_line;
  /* /timing attributes (0 / NULL when missing) */
  double wall_s, simulate_s, encode_s, write_s;
  int32_t threads;
  char *started, *finished;
} fmt_info;

void fmt_info_free(fmt_info *info);

/* A result file opened read-only, its layout checked against what this
 * version writes: a file that is not HDF5, not a stormsweep result, of another
 * format version, or with shapes that disagree with its attributes is refused
 * with a message naming the file and what is wrong. HDF5's own error printing
 * is off while one is open. */
typedef struct fmt_in fmt_in;

int fmt_in_open(fmt_in **in, const char *path, char *err, size_t errlen);
void fmt_in_close(fmt_in *in);
const fmt_info *fmt_in_info(const fmt_in *in);
/* The sweep the file holds, parsed from its sweep_text and checked to
 * describe the file's own shape (runs, ticks, master seed; refine's
 * appended rows allowed); named by the file's sweep_source. -1 with a
 * message for a text that does not parse or does not match. */
int fmt_in_sweep(const fmt_in *in, swp_sweep *sw, char *err, size_t errlen);
/* The done column: n_runs flags (1 for any nonzero value). */
int fmt_in_read_done(fmt_in *in, uint8_t *done, char *err, size_t errlen);
/* Rows runs[0..n) into recs (run, point, replicate, ticks, summary, wall_s,
 * thread; chunks left empty), checking each row is the run it claims to be
 * (index, point, replicate, seed, outcome, ticks in range). */
int fmt_in_read_records(fmt_in *in, const int64_t *runs, size_t n, fmt_run_record *recs,
                          char *err, size_t errlen);
/* Bytes the /ticks chunks take in the file. */
double fmt_in_ticks_bytes(fmt_in *in);
/* Run r's stored /ticks chunks, raw (still compressed), back to back into
 * *buf (grown as needed; *cap its size); rec->chunk/chunk_size point into it.
 * A missing chunk or one larger than fmt_chunk_bound(ticks) is an error. */
int fmt_in_read_chunks(fmt_in *in, int64_t r, uint8_t **buf, size_t *cap,
                         fmt_run_record *rec, char *err, size_t errlen);

/* ---- merging the slices of a sweep (merge.c) ---- */

typedef struct fmt_merge_opts {
  const char *const *parts; /* the part files */
  int n_parts;
  const char *output;       /* the merged file */
  int force;                /* replace an existing output (atomically, once merged) */
  int no_space_check;
  const char *command_line; /* stored in the merged file */
  const volatile sig_atomic_t *stop; /* nonzero: stop, leaving nothing behind */
  void (*say)(void *user, const char *line); /* every problem found, one line each */
  void *user;
  int64_t *runs_merged;     /* may be NULL: the runs the merged file holds */
} fmt_merge_opts;

/* Joins the parts into output (merge.c's header says how and what is
 * checked). Returns 0 merged, 1 writing failed or stopped (*stopped 1),
 * 2 the parts cannot be merged; nothing is left behind unless 0. */
int fmt_merge(const fmt_merge_opts *o, int *stopped, char *err, size_t errlen);

/* ---- one writer per result file (writelock.c) ---- */

/* Takes the writer lock of result file path. Returns 0; 1 when another
 * process holds it (err says so: "another stormsweep process is writing
 * it"); -1 on any other failure (err says why). */
int fmt_lock_acquire(fmt_lock **lock, const char *path, char *err, size_t errlen);
/* Releases the lock (NULL is fine). */
void fmt_lock_release(fmt_lock *lock);
/* 1 when a live process holds the lock of path, 0 when none does (or it
 * cannot tell). Takes nothing. */
int fmt_lock_held_elsewhere(const char *path);

/* 1 when path has a journal (it was being written, or is damaged). */
int fmt_journal_exists(const char *h5path);

#endif
