/*
 * writer.h — the result file's writer, shared by its files (internal to the
 * format library): the state of an open writer and the steps that make
 * it durable. The writer streams a sweep's results into one HDF5 file:
 * nothing is held per run beyond the run being written, so memory does not
 * grow with the number of runs.
 *
 * The file is created with every object sized up front (n_runs rows, n_runs x
 * ticks per metric). Workers encode their /ticks chunks themselves
 * (chunk.c); the writer, called from one critical section, stores them with
 * H5Dwrite_chunk and stages the run's /runs row with done = 1 for the next
 * commit. Unwritten rows read as fill values (done = 0, ticks -1), so an
 * interrupted sweep leaves a readable file whose finished runs are marked.
 * The same module reopens a file to finish it (--resume) and reads files for
 * `merge`; the layout checks both rely on, the /runs row and the names are
 * in layout.c / layout.h (the one owner of the layout).
 *
 * ## Durability: what a file cut off at any moment holds
 *
 * HDF5 1.10 has no journal: a process killed while the library writes
 * metadata (chunk indexes, the superblock) can leave a file whose index
 * points at blocks never written. So metadata reaches the disk only at
 * commits, and a commit never marks a run done before its data is indexed:
 *
 * 1. the metadata cache runs with evictions off (file_access()), so dirty
 *    metadata is written only by an explicit flush, never on its own (after
 *    each commit the then clean /ticks index nodes are dropped by reopening
 *    the datasets with evict-on-close, so memory stays bounded);
 * 2. /runs and /timing are allocated and filled when created, so writing a
 *    row later changes raw bytes in place and never their chunk index;
 * 3. a run's chunks go to disk at once (H5Dwrite_chunk), its row waits in
 *    memory; a commit (every 2 s, at most PEND_MAX rows, and at close)
 *    flushes — the chunks' index reaches the disk — then writes the staged
 *    rows and flushes again.
 *
 * A SIGKILL between commits leaves the file as of the last commit plus
 * orphan chunk bytes past its end (ignored; overwritten on resume). Killed
 * inside a commit's first flush, some runs' chunks may be indexed without
 * their rows: resumed, they are simply run again. --resume also checks that
 * every run marked done has all 19 chunks (and one per fmt_wide dataset), and
 * reruns any that lacks one. /ticks/outcome is written with the rows. A
 * failed write (disk full) freezes the file at its last commit: closing it
 * would flush half-written metadata (out_freeze in state.c). The one window left is a
 * kill *during* a flush of index blocks, milliseconds every 2 s, and a power
 * cut, which may leave any mix of old and new pages: for those, every run is
 * also appended to FILE.journal (journal.c), which each commit makes durable
 * (fdatasync) before it writes a row. --resume checks the file's done runs
 * against the journal byte for byte, restores the journal's runs the file
 * lacks, and rebuilds a damaged file from the journal (journal_verify,
 * journal_rebuild). Files are created under a temporary name and renamed into
 * place; one writer at a time holds FILE.lock (writelock.c). The guarantee
 * and its cost: docs/durability.md.
 *
 */
#ifndef STORMSWEEP_FMT_WRITER_H
#define STORMSWEEP_FMT_WRITER_H

#include <hdf5.h>

#include "fmt.h"
#include "h5util.h"
#include "journal.h"
#include "layout.h"
#include "layout_h5.h"
#include "writelock.h"

#define RUNS_CHUNK_ROWS 1024
#define TICKS_FILL (-1)
#define PEND_MAX 8192        /* rows staged before a commit is forced */

struct fmt_out {
  hid_t file;
  hid_t runs, runs_mem, runs_space;
  hid_t ticks[ENG_M_COUNT];
  hid_t wall, thread, timing_space;
  hid_t outcome;            /* /ticks/outcome */
  hid_t wide[FMT_WIDE_COUNT];    /* the fmt_wide datasets (-1: not recorded) */
  int32_t wide_n[FMT_WIDE_COUNT]; /* their widths (0: none) */
  const swp_sweep *sw;   /* the sweep, kept by the caller until close */
  int64_t n_runs;
  int64_t written;        /* runs handed to write_run this session */
  int64_t committed;      /* ... of which rows are on disk */
  int64_t reserved_to;    /* file bytes [0, reserved_to) known to have disk blocks */
  int64_t done_before;    /* runs the file held when opened */
  int32_t ticks_n;        /* stored /ticks rows per run (sw->rows; 0: summary) */
  uint32_t stored;        /* bit m: metric m has a /ticks dataset (sweeps/record.c) */
  int64_t base_runs;      /* the sweep's own runs: points x replicates */
  uint64_t master_seed;
  int64_t replicates;
  int failed;             /* a write failed: the file is frozen at its last commit */
  int resumed;
  uint8_t *done;          /* n_runs flags, as found when opened */
  /* Rows staged until the next commit, with their timing. */
  run_row *pend;
  hsize_t *pend_at;
  double *pend_wall;
  int32_t *pend_thread;
  int32_t *pend_outcome;
  size_t n_pend;
  char *path;
  /* Durability (journal.c, writelock.c, docs/durability.md). */
  fmt_lock *lock;         /* our own one-writer lock, held until closed */
  fmt_journal *journal;    /* FILE.journal; NULL: none (merge, refine) */
  int replaying;           /* writing runs read from the journal: not journaled again */
  int64_t finish_runs;     /* runs that make the file finished (its slice, or n_runs) */
  int sync_file;           /* no journal: fdatasync the file between commit steps */
  char note[512];          /* what resume salvaged, for the caller to print */
  fmt_journal_id jid;      /* the journal's identity (jcmd: its command line) */
  uint64_t instance;       /* the file instance (root `instance`): its journal's too */
  int keep_journal;        /* a refine session's: kept past close until the session ends */
  char *jcmd;
};

/* ---- state.c: the open writer, its commits and its runs ---- */

hid_t fmt__file_access(void);
uint64_t fmt__instance_new(void);
fmt_out *fmt__out_alloc(const char *path, int64_t n_runs, int32_t ticks);
int fmt__out_free(fmt_out *o);
int fmt__out_spaces(fmt_out *o);
int fmt__journal_id(const swp_sweep *sw, int64_t slice_index, int64_t slice_count, const char
    *command_line, fmt_journal_id *id);
int64_t fmt__slice_runs(const swp_sweep *sw, int64_t index, int64_t count);
void fmt__out_fail(fmt_out *o);
void fmt__out_abandon(fmt_out *o);
int fmt__out_reserve(fmt_out *o, char *why, size_t whylen);
void fmt__trim_reserve(const char *path);
int fmt__out_sync_file(fmt_out *o, char *why, size_t whylen);
int fmt__out_commit(fmt_out *o, char *err, size_t errlen);
int fmt__out_write_run(fmt_out *o, const fmt_run_record *rec, char *err, size_t errlen);
/* Run r's /runs row as the file has it. */
int fmt__out_row_read(fmt_out *o, int64_t r, run_row *row);
int fmt__buf_reserve(uint8_t **buf, size_t *cap, size_t need);

/* ---- record_check.c: a record is the run it claims to be ---- */

typedef struct fmt_record_rules {
  uint64_t master_seed;
  int32_t crn;
  int64_t replicates, base_runs, rows;
  int32_t ticks;          /* the horizon */
  int32_t wide[FMT_WIDE_COUNT]; /* each fmt_wide chunk's width (0: not recorded) */
  uint32_t stored;        /* metrics with a chunk (bit m) */
  int32_t stored_rows;    /* values per chunk (sweeps/record.c; ticks at full) */
} fmt_record_rules;

fmt_record_rules fmt__out_rules(const fmt_out *o);
/* Whether rec stores any /ticks chunk: a run past the sweep's own rows
 * (refine's) may store none, its summary row alone. */
static inline int fmt__record_has_rows(const fmt_run_record *rec) {
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if (rec->wide_chunk_size[w]) return 1;
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (rec->chunk_size[m]) return 1;
  return 0;
}
/* 0 when rec is the run of its row: the sweep's own rows derive (point,
 * replicate) from the row, appended rows must match point and replicate as
 * given; the seed is the one they derive; outcome, ticks and recovery time
 * are in range; with decode, every chunk decodes to exactly one row of the
 * file. -1 with why naming what is wrong. */
int fmt__record_check(const fmt_record_rules *k, const fmt_run_record *rec, int64_t point,
                      int32_t replicate, int decode, char *why, size_t whylen);
/* Reads run r's chunks raw (still compressed, as stored) from the /ticks
 * datasets ticks[] and wide[] (-1: none; widths wide_n) into *buf (grown as needed), and
 * points rec's chunks at them; a chunk missing or larger than any encoding
 * is an error (readback.c), except that a row from base_runs on (refine's)
 * may have none at all: rec then has no chunks. */
int fmt__chunks_read(const char *path, const hid_t *ticks, const hid_t *wide, int32_t ticks_n,
                     const int32_t *wide_n, int64_t r, int64_t base_runs, uint8_t **buf, size_t *cap,
                     fmt_run_record *rec, char *err, size_t errlen);
/* Run r's /runs row and /timing values into rec (no chunks), checked to be
 * the run it claims to be (readback.c). */
int fmt__out_read_row(fmt_out *o, int64_t r, fmt_run_record *rec, char *err, size_t errlen);
/* Row r's point and replicate as the file has them. */
int fmt__row_coords(fmt_out *o, int64_t r, int64_t *point, int32_t *replicate);

/* ---- journal_fill.c: a journal for a file refine appends to ---- */

/* Gives a file from before instances one (written into it at once). */
int fmt__out_instance_ensure(fmt_out *o, char *err, size_t errlen);
/* Creates o's journal (bound to its instance, given one if it has none)
 * holding every committed run and round of the file. */
int fmt__journal_fill(fmt_out *o, char *err, size_t errlen);

/* ---- group_store.c: groups journaled as HDF5 file images ---- */

/* Copies every group the journal holds into the new file f (before its
 * appended rows are replayed: /refine/round_start is the writer's). */
int fmt__journal_groups_apply(hid_t f, fmt_journal *j, const char *path, char *err,
                              size_t errlen);

/* ---- create.c: a new file's skeleton ---- */

hid_t fmt__dataset_1d(hid_t loc, const char *name, hid_t type, hsize_t n, hsize_t chunk, const
    void *fill, int early, int grow);
void fmt__runs_fill_row(run_row *fill);
double *fmt__points_numbers(const swp_sweep *sw);
int fmt__write_run_coords(fmt_out *o, hid_t g, const swp_sweep *sw, const double *numbers, int64_t
    first, int64_t n, const int64_t *point, const int32_t *replicate);
/* instance: the file instance to continue (a rebuild), 0 for a new one. */
int fmt__out_create(fmt_out **out, const char *path, const swp_sweep *sw, const char
    *command_line, unsigned flags, uint64_t instance, char *err, size_t errlen);
int fmt__out_set_slice(fmt_out *o, int64_t index, int64_t count, char *err, size_t errlen);

/* ---- close.c: verifying a resumed file against its journal, rebuilding from it ---- */

int fmt__run_matches(fmt_out *o, int64_t r, const fmt_run_record *rec, uint8_t **buf, size_t *cap,
    char *why, size_t whylen);
int fmt__journal_rebuild(const char *path, const swp_sweep *sw, int64_t slice_index, int64_t
    slice_count, fmt_journal *j, const fmt_timing *t, char *err, size_t errlen);

#endif
