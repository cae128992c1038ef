/*
 * journal_fill.c — a journal for a finished file that `refine` is about to
 * append to: its instance, every committed run and every earlier round of
 * appended rows copied into a fresh FILE.journal, so that the session's own
 * rows and runs, journaled after them, can rebuild the whole file if it is
 * torn (docs/durability.md). Costs one read of the file's chunks, as stored,
 * and as many bytes of disk until the session ends.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer.h"

/* Run r's record as the file holds it (chunks into *buf). */
static int out_read_run(fmt_out *o, int64_t r, fmt_run_record *rec, uint8_t **buf, size_t *cap,
                        char *err, size_t errlen) {
  return fmt__out_read_row(o, r, rec, err, errlen) ||
         fmt__chunks_read(o->path, o->ticks, o->wide, o->ticks_n, o->wide_n, r,
                          o->base_runs, buf, cap, rec, err, errlen);
}

/* The rounds of rows appended so far, into the journal. */
static int fill_rounds(fmt_out *o, char *err, size_t errlen) {
  int64_t *starts = NULL;
  size_t n = 0;
  if (o->n_runs == o->base_runs) return 0;
  if (fmt__round_starts_read(o->file, o->base_runs, o->n_runs, &starts, &n) || !n ||
      starts[0] != o->base_runs) {
    free(starts);
    swp_seterr(err, errlen, "%s: /refine/round_start does not describe its appended rows; the "
               "file is damaged", o->path);
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    int64_t first = starts[i], end = i + 1 < n ? starts[i + 1] : o->n_runs, k = end - first;
    if (k <= 0) continue;
    int64_t *point = malloc((size_t)k * sizeof *point);
    int32_t *rep = malloc((size_t)k * sizeof *rep);
    rc = !point || !rep;
    for (int64_t r = 0; r < k && !rc; r++) rc = fmt__row_coords(o, first + r, &point[r], &rep[r]);
    if (rc) swp_seterr(err, errlen, "%s: reading the rows appended at %lld", o->path,
                       (long long)first);
    else rc = fmt_journal_append_rows(o->journal, first, k, point, rep, err, errlen);
    free(point);
    free(rep);
  }
  free(starts);
  return rc ? -1 : 0;
}

int fmt__out_instance_ensure(fmt_out *o, char *err, size_t errlen) {
  if (o->instance) return 0;
  /* A file from before instances: it gets one now, before its journal. */
  o->instance = fmt__instance_new();
  if (fmt_attr_put_nums(o->file, FMT_ATTR_INSTANCE, H5T_STD_U64LE, H5T_NATIVE_UINT64,
                        &o->instance, 1) ||
      H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: writing its instance: %s", o->path, why);
    fmt__out_fail(o);
    return -1;
  }
  return 0;
}

int fmt__journal_fill(fmt_out *o, char *err, size_t errlen) {
  if (fmt__out_instance_ensure(o, err, errlen)) return -1;
  if (!o->jcmd && !(o->jcmd = strdup(""))) {
    swp_seterr(err, errlen, "%s: out of memory", o->path);
    return -1;
  }
  o->jid.command_line = o->jcmd;
  o->jid.instance = o->instance;
  if (fmt_journal_create(&o->journal, o->path, &o->jid, err, errlen)) return -1;
  int rc = fill_rounds(o, err, errlen);
  uint8_t *buf = NULL;
  size_t cap = 0;
  for (int64_t r = 0; r < o->n_runs && !rc; r++) {
    if (!o->done[r]) continue;
    fmt_run_record rec;
    rc = out_read_run(o, r, &rec, &buf, &cap, err, errlen) ||
         fmt_journal_append(o->journal, &rec, err, errlen);
  }
  free(buf);
  if (!rc) rc = fmt_journal_sync(o->journal, err, errlen);
  if (rc) {
    fmt_journal_close(o->journal);
    o->journal = NULL;
    fmt_journal_remove(o->path);
    return -1;
  }
  return 0;
}
