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

/* What a journal belongs to: a result file of this sweep, tool and slice. */
typedef struct fmt_journal_id {
  uint64_t master_seed;
  int64_t n_runs;          /* the sweep's own runs */
  int32_t ticks;
  int64_t slice_index, slice_count;
  uint32_t sweep_crc;      /* crc32 of the effective sweep text */
  const char *tool_version;
  const char *command_line; /* of the session that created the file */
} fmt_journal_id;

typedef struct fmt_journal fmt_journal;

/* path of the journal of result file h5path, malloc'd. */
char *fmt_journal_path(const char *h5path);
/* crc32 (zlib) of a string, for fmt_journal_id.sweep_crc. */
uint32_t fmt_journal_crc_text(const char *text);

/* Creates (truncating) the journal of h5path with its header, and makes it
 * durable (fdatasync, then the directory). */
int fmt_journal_create(fmt_journal **j, const char *h5path, const fmt_journal_id *id, char *err,
                       size_t errlen);
/* Opens an existing journal: checks its header against id (a journal of
 * another sweep, tool or slice is refused, naming the difference) and scans
 * its records; the valid prefix — every record whose length, run and CRC
 * check — is what it holds. *exists is 0 (and 0 returned) when there is none. */
int fmt_journal_open(fmt_journal **j, const char *h5path, const fmt_journal_id *id, int *exists,
                     char *err, size_t errlen);
/* Runs held (the latest record of each counts); has(r) tells one. */
int64_t fmt_journal_count(const fmt_journal *j);
int fmt_journal_has(const fmt_journal *j, int64_t run);
/* Bytes of the valid prefix and of the whole file (the rest is a torn tail). */
int64_t fmt_journal_valid_bytes(const fmt_journal *j);
int64_t fmt_journal_file_bytes(const fmt_journal *j);
/* The command line stored in the header ("" when none). */
const char *fmt_journal_command_line(const fmt_journal *j);
/* Reads run r's record into rec; its chunks point into *buf (grown as needed,
 * *cap its size). The record's CRC is checked again. */
int fmt_journal_read(fmt_journal *j, int64_t run, fmt_run_record *rec, uint8_t **buf,
                     size_t *cap, char *err, size_t errlen);
/* Cuts a torn tail off, so appends continue the valid prefix. */
int fmt_journal_truncate_tail(fmt_journal *j, char *err, size_t errlen);
/* Appends one run's record (written at once, not yet durable). */
int fmt_journal_append(fmt_journal *j, const fmt_run_record *rec, char *err, size_t errlen);
/* Makes every record appended so far durable (fdatasync). */
int fmt_journal_sync(fmt_journal *j, char *err, size_t errlen);
void fmt_journal_close(fmt_journal *j);
/* 1 when h5path has a journal (it was being written, or is damaged). */
int fmt_journal_exists(const char *h5path);
/* Removes the journal of h5path (and syncs the directory); 0 when there was
 * none. Call only once h5path itself is durable. */
int fmt_journal_remove(const char *h5path);
#endif
