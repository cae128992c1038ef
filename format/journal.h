/*
 * journal.h — the append-only journal kept beside a result file while it is
 * being written (FILE.journal), from which a torn or short FILE is rebuilt.
 * Format and guarantees: journal.c and docs/durability.md.
 */
#ifndef STORMSWEEP_JOURNAL_H
#define STORMSWEEP_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "fmt.h"
#include "fmt_outfile.h"

/* What a journal belongs to: one file instance (its root `instance`) of
 * this sweep, tool and slice. */
typedef struct fmt_journal_id {
  uint64_t master_seed;
  int64_t n_runs;          /* the sweep's own runs */
  int32_t ticks;
  int32_t wide[FMT_WIDE_COUNT]; /* each fmt_wide chunk's width (0: none) */
  int64_t slice_index, slice_count;
  uint32_t sweep_crc;      /* crc32 of the effective sweep text */
  const char *sweep_text;  /* that text, kept in the header (NULL: none) so a
                              refined file that tore can be rebuilt from it */
  uint64_t instance;       /* the file's; written by create, compared by the caller */
  const char *tool_version;
  const char *command_line; /* of the session that created the file */
} fmt_journal_id;

typedef struct fmt_journal fmt_journal;

/* path of the journal of result file h5path, malloc'd. */
char *fmt_journal_path(const char *h5path);
/* crc32 (zlib) of a string, for fmt_journal_id.sweep_crc. */
uint32_t fmt_journal_crc_text(const char *text);

/* Creates the journal of h5path with its header, as a new file (an old
 * FILE.journal is unlinked first, never written through: it may be a hard
 * link), and makes it durable (fdatasync, then the directory). */
int fmt_journal_create(fmt_journal **j, const char *h5path, const fmt_journal_id *id, char *err,
                       size_t errlen);
/* Opens an existing journal: checks its header against id (a journal of
 * another sweep, tool or slice is refused, naming the difference; id NULL:
 * any sweep, its own header's shapes) and scans its records; the valid
 * prefix — every record whose length, row, CRC and place check — is what it
 * holds. A symbolic link, a hard-linked file or anything but a regular file
 * is refused (*exists 1). *exists is 0 (and 0 returned) when there is none.
 * Which file instance it belongs to is the caller's to check
 * (fmt_journal_instance). */
int fmt_journal_open(fmt_journal **j, const char *h5path, const fmt_journal_id *id, int *exists,
                     char *err, size_t errlen);
uint64_t fmt_journal_instance(const fmt_journal *j);
/* Runs held (the latest record of each counts); has(r) tells one. */
int64_t fmt_journal_count(const fmt_journal *j);
int fmt_journal_has(const fmt_journal *j, int64_t run);
/* Rows it knows: the sweep's runs plus every row appended (refine); the
 * sweep's own runs alone. */
int64_t fmt_journal_rows(const fmt_journal *j);
int64_t fmt_journal_sweep_runs(const fmt_journal *j);
/* Bytes of the valid prefix and of the whole file (the rest is a torn tail). */
int64_t fmt_journal_valid_bytes(const fmt_journal *j);
int64_t fmt_journal_file_bytes(const fmt_journal *j);
/* The command line and sweep text stored in the header ("" when none). */
const char *fmt_journal_command_line(const fmt_journal *j);
const char *fmt_journal_sweep_text(const fmt_journal *j);
/* Its slice (0, 0: the whole sweep). */
void fmt_journal_slice(const fmt_journal *j, int64_t *index, int64_t *count);
/* Reads run r's record into rec; its chunks point into *buf (grown as needed,
 * *cap its size). The record's CRC is checked again. */
int fmt_journal_read(fmt_journal *j, int64_t run, fmt_run_record *rec, uint8_t **buf,
                     size_t *cap, char *err, size_t errlen);
/* Cuts a torn tail off, so appends continue the valid prefix. */
int fmt_journal_truncate_tail(fmt_journal *j, char *err, size_t errlen);
/* Appends one run's record (written at once, not yet durable). */
int fmt_journal_append(fmt_journal *j, const fmt_run_record *rec, char *err, size_t errlen);
/* Records n rows appended at first (which must be fmt_journal_rows) with
 * their points and replicates, durably: before the file's own append. */
int fmt_journal_append_rows(fmt_journal *j, int64_t first, int64_t n, const int64_t *point,
                            const int32_t *replicate, char *err, size_t errlen);
/* The appends held, in order; read_append gives the i-th (point and
 * replicate malloc'd, the caller frees them). */
size_t fmt_journal_appends(const fmt_journal *j);
int fmt_journal_read_append(fmt_journal *j, size_t i, int64_t *first, int64_t *n,
                            int64_t **point, int32_t **replicate, char *err, size_t errlen);
/* Records group name (without '/') as an HDF5 file image holding it,
 * durably; read_group gives the latest (malloc'd): 0, 1 when none, -1. */
int fmt_journal_put_group(fmt_journal *j, const char *name, const void *image, size_t size,
                          char *err, size_t errlen);
int fmt_journal_read_group(fmt_journal *j, const char *name, uint8_t **image, size_t *size,
                           char *err, size_t errlen);
/* The names of the groups it holds (at most cap, into names; they point
 * into j). */
size_t fmt_journal_groups(const fmt_journal *j, const char **names, size_t cap);
/* Makes every record appended so far durable (fdatasync). */
int fmt_journal_sync(fmt_journal *j, char *err, size_t errlen);
void fmt_journal_close(fmt_journal *j);
/* 1 when h5path has a journal (it was being written, or is damaged). */
int fmt_journal_exists(const char *h5path);
/* Removes the journal of h5path (and syncs the directory); 0 when there was
 * none. Call only once h5path itself is durable. */
int fmt_journal_remove(const char *h5path);
#endif
