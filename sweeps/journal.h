/*
 * journal.h — the append-only journal kept beside a result file while it is
 * being written (FILE.journal), from which a torn or short FILE is rebuilt.
 * Format and guarantees: journal.c and docs/durability.md.
 */
#ifndef STORMSWEEP_JOURNAL_H
#define STORMSWEEP_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "swp.h"

/* What a journal belongs to: a result file of this sweep, tool and slice. */
typedef struct swp_journal_id {
  uint64_t master_seed;
  int64_t n_runs;          /* the sweep's own runs */
  int32_t ticks;
  int64_t slice_index, slice_count;
  uint32_t sweep_crc;      /* crc32 of the effective sweep text */
  const char *tool_version;
  const char *command_line; /* of the session that created the file */
} swp_journal_id;

typedef struct swp_journal swp_journal;

/* path of the journal of result file h5path, malloc'd. */
char *swp_journal_path(const char *h5path);
/* crc32 (zlib) of a string, for swp_journal_id.sweep_crc. */
uint32_t swp_journal_crc_text(const char *text);

/* Creates (truncating) the journal of h5path with its header, and makes it
 * durable (fdatasync, then the directory). */
int swp_journal_create(swp_journal **j, const char *h5path, const swp_journal_id *id, char *err,
                       size_t errlen);
/* Opens an existing journal: checks its header against id (a journal of
 * another sweep, tool or slice is refused, naming the difference) and scans
 * its records; the valid prefix — every record whose length, run and CRC
 * check — is what it holds. *exists is 0 (and 0 returned) when there is none. */
int swp_journal_open(swp_journal **j, const char *h5path, const swp_journal_id *id, int *exists,
                     char *err, size_t errlen);
/* Runs held (the latest record of each counts); has(r) tells one. */
int64_t swp_journal_count(const swp_journal *j);
int swp_journal_has(const swp_journal *j, int64_t run);
/* Bytes of the valid prefix and of the whole file (the rest is a torn tail). */
int64_t swp_journal_valid_bytes(const swp_journal *j);
int64_t swp_journal_file_bytes(const swp_journal *j);
/* The command line stored in the header ("" when none). */
const char *swp_journal_command_line(const swp_journal *j);
/* Reads run r's record into rec; its chunks point into *buf (grown as needed,
 * *cap its size). The record's CRC is checked again. */
int swp_journal_read(swp_journal *j, int64_t run, swp_run_record *rec, uint8_t **buf,
                     size_t *cap, char *err, size_t errlen);
/* Cuts a torn tail off, so appends continue the valid prefix. */
int swp_journal_truncate_tail(swp_journal *j, char *err, size_t errlen);
/* Appends one run's record (written at once, not yet durable). */
int swp_journal_append(swp_journal *j, const swp_run_record *rec, char *err, size_t errlen);
/* Makes every record appended so far durable (fdatasync). */
int swp_journal_sync(swp_journal *j, char *err, size_t errlen);
void swp_journal_close(swp_journal *j);
/* 1 when h5path has a journal (it was being written, or is damaged). */
int swp_journal_exists(const char *h5path);
/* Removes the journal of h5path (and syncs the directory); 0 when there was
 * none. Call only once h5path itself is durable. */
int swp_journal_remove(const char *h5path);
/* fsync of the directory holding path; of the file path. */
int swp_fsync_dir(const char *path);
int swp_fsync_path(const char *path);
/* Renames from to to (replace 0: failing with EEXIST if to exists), then
 * syncs the directory. */
int swp_rename_into_place(const char *from, const char *to, int replace);
/* path followed by suffix, malloc'd (NULL: out of memory). */
char *swp_path_suffixed(const char *path, const char *suffix);
/* Creates a new empty file "path.TAG-XXXXXX" beside path (mkstemp) and
 * returns its descriptor, with its name in *name (malloc'd); -1 with errno
 * set and *name NULL on failure. */
int swp_mkstemp_beside(const char *path, const char *tag, char **name);

#endif
