/*
 * close.c — closing a writer: the last commit, /timing, complete = 1 once
 * every run is in, the journal removed once the closed file is on disk. A
 * resumed file is made complete only once every run reads back as its
 * journal record (a power cut may have left pages of two versions); if one
 * does not, the journal rebuilds the file — the same rebuild resume uses
 * for a file damaged before it was opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "writer.h"

#define FORMAT_NAME FMT_FORMAT_NAME
#define FORMAT_VERSION FMT_FORMAT_VERSION

/* The /timing sessions count so far (1 when missing or malformed). */
static int32_t timing_sessions(hid_t g) {
  int32_t v = 1;
  return fmt_attr_get_num(g, "sessions", H5T_NATIVE_INT32, &v) == 0 ? v : 1;
}

static int write_timing_attrs(fmt_out *o, const fmt_timing *t) {
  hid_t g = H5Gopen2(o->file, "timing", H5P_DEFAULT);
  if (g < 0) return -1;
  int rc = 0;
  if (t) {
    static const char *const names[] = {"wall_s", "threads", "ranks", "runs_done", "runs_per_s",
                                        "host", "started", "finished", "simulate_s", "encode_s",
                                        "write_s", "sessions", "last_command_line"};
    int32_t sessions = t->sessions > 0 ? t->sessions
                                        : timing_sessions(g) + (o->resumed ? 1 : 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) fmt_attr_delete(g, names[i]);
    char host[256] = "";
    if (gethostname(host, sizeof host - 1)) snprintf(host, sizeof host, "unknown");
    rc = fmt_attr_put_f64(g, "wall_s", t->wall_s) || fmt_attr_put_i32(g, "threads", t->threads) ||
         fmt_attr_put_i32(g, "ranks", t->ranks > 0 ? t->ranks : 1) ||
         fmt_attr_put_i64(g, "runs_done", t->runs_done) ||
         fmt_attr_put_f64(g, "runs_per_s", t->wall_s > 0 ? (double)t->runs_done / t->wall_s : 0) ||
         fmt_attr_put_str(g, "host", host) || fmt_attr_put_str(g, "started", t->started) ||
         fmt_attr_put_str(g, "finished", t->finished) || fmt_attr_put_f64(g, "simulate_s", t->simulate_s) ||
         fmt_attr_put_f64(g, "encode_s", t->encode_s) || fmt_attr_put_f64(g, "write_s", t->write_s) ||
         fmt_attr_put_i32(g, "sessions", sessions) ||
         (t->command_line && fmt_attr_put_str(g, "last_command_line", t->command_line));
  }
  H5Gclose(g);
  return rc;
}

static int file_matches_journal(fmt_out *o, char *why, size_t whylen);
static int close_by_rebuild(fmt_out *o, const fmt_timing *t, const char *why, char *err,
                            size_t errlen);

static int fmt_out_close_q(fmt_out *o, const fmt_timing *t, char *err, size_t errlen) {
  if (!o) return 0;
  if (err && errlen) err[0] = 0;
  char msg[768] = "";
  int rc = o->failed ? -1 : fmt__out_commit(o, msg, sizeof msg);
  if (rc) {
    if (!msg[0])
      snprintf(msg, sizeof msg, "%s: not finished after a failed write; it keeps the %lld runs "
               "committed before", o->path, (long long)(o->done_before + o->committed));
    fmt__out_fail(o);
    fmt__out_abandon(o);
    swp_seterr(err, errlen, "%s", msg);
    return -1;
  }
  /* A resumed file can be damaged in a way no check at open sees: after a
   * power cut left pages of two versions, HDF5 may place this session's
   * chunks over older ones its index still uses. So a resumed file is made
   * complete only once every run reads back as its journal record; if one
   * does not, the journal (which now holds every run) rebuilds it. */
  if (o->resumed && o->journal && !o->keep_journal &&
      o->done_before + o->committed >= o->finish_runs) {
    char why[512] = "";
    if (!file_matches_journal(o, why, sizeof why)) return close_by_rebuild(o, t, why, err, errlen);
  }
  const char *step = "/timing";
  rc = write_timing_attrs(o, t);
  if (!rc && o->done_before + o->committed == o->n_runs) {
    step = "complete";
    int32_t one = 1;
    rc = fmt_attr_set_num(o->file, "complete", H5T_NATIVE_INT32, &one) != 0;
  }
  char why[256] = "";
  if (rc) {
    /* Every run is committed; only the attributes failed. Closing would
     * flush half-written headers, so the file stays as of the commit. */
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: finishing (%s): %s; its runs are committed (--resume completes "
               "it)", o->path, step, why);
    fmt__out_fail(o);
    fmt__out_abandon(o);
    return -1;
  }
  char *path = strdup(o->path);
  /* Kept past the close: the journal goes only once the closed file is on
   * disk, and no other writer may come in between. */
  fmt_journal *journal = o->journal;
  fmt_lock *lock = o->lock;
  int finished = o->done_before + o->committed >= o->finish_runs && !o->keep_journal;
  o->journal = NULL;
  o->lock = NULL;
  if (fmt__out_free(o)) {
    if (!rc) {
      step = "close";
      fmt_h5_reason(why, sizeof why);
    }
    rc = -1;
  }
  if (!rc && path) fmt__trim_reserve(path);
  if (!rc && path && fmt_fsync_path(path) == 0 && fmt_fsync_dir(path) == 0 && finished &&
      journal) {
    fmt_journal_close(journal);
    journal = NULL;
    fmt_journal_remove(path);
  }
  fmt_journal_close(journal);
  fmt_lock_release(lock);
  if (rc) swp_seterr(err, errlen, "%s: finishing (%s): %s", path ? path : "result file", step, why);
  free(path);
  return rc ? -1 : 0;
}

/* Whether run r's chunk of ds (stored, filters applied) is byte for byte
 * want; why says where it is not. */
static int chunk_matches(hid_t ds, int64_t r, const char *name, const uint8_t *want,
                         size_t want_size, uint8_t **buf, size_t *cap, char *why,
                         size_t whylen) {
  hsize_t size = 0, off[3] = {(hsize_t)r, 0, 0};
  uint32_t mask = 0;
  if (fmt__chunk_size_at(ds, r, &size) || size != want_size) {
    snprintf(why, whylen, "run %lld's /ticks/%s chunk is %s", (long long)r, name,
             !want_size ? "there, but its journal record stores no rows"
             : size     ? "of another size than its journal record"
                        : "missing or unreadable");
    return 0;
  }
  if (!want_size) return 1; /* a run storing no rows (refine's): none there either */
  if (fmt__buf_reserve(buf, cap, (size_t)size)) {
    snprintf(why, whylen, "out of memory");
    return 0;
  }
  if (H5Dread_chunk(ds, H5P_DEFAULT, off, &mask, *buf) < 0 || mask ||
      memcmp(*buf, want, (size_t)size)) {
    snprintf(why, whylen, "run %lld's /ticks/%s chunk differs from its journal record",
             (long long)r, name);
    return 0;
  }
  return 1;
}

/* Whether run r's row and chunks in the file equal its journal record. */
int fmt__run_matches(fmt_out *o, int64_t r, const fmt_run_record *rec, uint8_t **buf,
                       size_t *cap, char *why, size_t whylen) {
  run_row row;
  hsize_t at = (hsize_t)r, one = 1;
  if (fmt__out_row_read(o, r, &row)) {
    char h5[256];
    fmt_h5_reason(h5, sizeof h5);
    snprintf(why, whylen, "run %lld's /runs row cannot be read (%s)", (long long)r, h5);
    return 0;
  }
  if (row.run != rec->run || row.point != rec->point || row.replicate != rec->replicate ||
      row.ticks != rec->ticks || row.done != 1 ||
      memcmp(&row.s, &rec->summary, sizeof row.s)) {
    snprintf(why, whylen, "run %lld's /runs row differs from its journal record", (long long)r);
    return 0;
  }
  /* /ticks/outcome is rewritten in place at each commit, so a power cut can
   * leave an older page of it beside newer rows. */
  if (o->outcome >= 0) {
    int32_t oc = -2;
    hid_t os = H5Dget_space(o->outcome), om = H5Screate_simple(1, &one, NULL);
    int obad = os < 0 || om < 0 || H5Sselect_elements(os, H5S_SELECT_SET, 1, &at) < 0 ||
               H5Dread(o->outcome, H5T_NATIVE_INT32, om, os, H5P_DEFAULT, &oc) < 0;
    if (os >= 0) H5Sclose(os);
    if (om >= 0) H5Sclose(om);
    if (obad || oc != rec->summary.outcome) {
      snprintf(why, whylen, "run %lld's /ticks/outcome %s its journal record", (long long)r,
               obad ? "cannot be read beside" : "differs from");
      return 0;
    }
  }
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (o->ticks[m] >= 0 && !chunk_matches(o->ticks[m], r, eng_metric_get_info((eng_metric)m)->name, rec->chunk[m],
                       rec->chunk_size[m], buf, cap, why, whylen))
      return 0;
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if (o->wide[w] >= 0 && !chunk_matches(o->wide[w], r, fmt_wide_name((fmt_wide)w),
                                          rec->wide_chunk[w], rec->wide_chunk_size[w], buf, cap,
                                          why, whylen))
      return 0;
  return 1;
}

/* Writes into the new file o the journal's runs of rows [from, to), each
 * checked to be the run it claims to be. */
static int rebuild_runs(fmt_out *o, fmt_journal *j, int64_t from, int64_t to, uint8_t **buf,
                        size_t *cap, char *err, size_t errlen) {
  fmt_record_rules rules = fmt__out_rules(o);
  for (int64_t r = from; r < to; r++) {
    if (!fmt_journal_has(j, r)) continue;
    fmt_run_record rec;
    int64_t point;
    int32_t rep;
    char why[512];
    if (fmt_journal_read(j, r, &rec, buf, cap, err, errlen)) return -1;
    if (fmt__row_coords(o, r, &point, &rep) ||
        fmt__record_check(&rules, &rec, point, rep, 1, why, sizeof why)) {
      swp_seterr(err, errlen, "%s: its journal holds a record that is not the run it claims to "
                 "be (%s): it is damaged or was not written by stormsweep; nothing was rebuilt "
                 "from it", o->path, why);
      return -1;
    }
    if (fmt__out_write_run(o, &rec, err, errlen)) return -1;
  }
  return 0;
}

/* Replays the journal's appended rows (refine's rounds, in order) into the
 * new file o, each round's runs after it. */
static int rebuild_appends(fmt_out *o, fmt_journal *j, uint8_t **buf, size_t *cap, char *err,
                           size_t errlen) {
  for (size_t i = 0; i < fmt_journal_appends(j); i++) {
    int64_t first, n, got = -1;
    int64_t *point;
    int32_t *rep;
    if (fmt_journal_read_append(j, i, &first, &n, &point, &rep, err, errlen)) return -1;
    int rc = fmt_out_append(o, n, point, rep, &got, err, errlen);
    free(point);
    free(rep);
    if (!rc && got != first) {
      swp_seterr(err, errlen, "%s: its journal's appended rows start at %lld, not %lld",
                 o->path, (long long)first, (long long)got);
      rc = -1;
    }
    if (rc || rebuild_runs(o, j, first, first + n, buf, cap, err, errlen)) return -1;
  }
  return 0;
}

/* Writes a fresh file of sw holding the journal's runs (its instance, its
 * groups, its rounds of appended rows), and renames it over path (the
 * damaged file), keeping the damaged file's permissions. */
int fmt__journal_rebuild(const char *path, const swp_sweep *sw, int64_t slice_index,
                           int64_t slice_count, fmt_journal *j, const fmt_timing *t,
                           char *err, size_t errlen) {
  char *tmp = NULL;
  int fd = fmt_mkstemp_beside(path, "rebuild", &tmp);
  if (fd < 0) {
    swp_seterr(err, errlen, "%s: cannot create a file beside it to rebuild it in: %s", path,
               strerror(errno));
    return -1;
  }
  struct stat was;
  if (stat(path, &was) == 0) {
    int kept = fchmod(fd, was.st_mode & 07777); /* failing, the new file is only private */
    (void)kept;
  }
  close(fd);
  fmt_out *o = NULL;
  int rc = fmt__out_create(&o, tmp, sw, fmt_journal_command_line(j),
                           FMT_OUT_FORCE | FMT_OUT_NO_JOURNAL | FMT_OUT_NO_LOCK |
                               FMT_OUT_IN_PLACE,
                           fmt_journal_instance(j), err, errlen);
  if (!rc && slice_count > 1) rc = fmt__out_set_slice(o, slice_index, slice_count, err, errlen);
  if (!rc) rc = fmt__journal_groups_apply(o->file, j, path, err, errlen);
  uint8_t *buf = NULL;
  size_t cap = 0;
  if (!rc) rc = rebuild_runs(o, j, 0, o->n_runs, &buf, &cap, err, errlen);
  if (!rc) rc = rebuild_appends(o, j, &buf, &cap, err, errlen);
  free(buf);
  if (o) {
    int crc = rc ? (fmt__out_fail(o), fmt__out_abandon(o), -1) : fmt_out_close_q(o, t, err, errlen);
    if (crc) rc = -1;
  }
  if (!rc && (fmt_fsync_path(tmp) || fmt_rename_into_place(tmp, path, 1))) {
    swp_seterr(err, errlen, "%s: renaming the rebuilt file into place: %s", path, strerror(errno));
    rc = -1;
  }
  if (rc) unlink(tmp);
  free(tmp);
  return rc ? -1 : 0;
}

/* Whether every run of the journal reads back from the file as its record
 * (why says where not). */
static int file_matches_journal(fmt_out *o, char *why, size_t whylen) {
  uint8_t *jbuf = NULL, *cbuf = NULL;
  size_t jcap = 0, ccap = 0;
  int ok = 1;
  int64_t n = o->jid.n_runs < o->n_runs ? o->jid.n_runs : o->n_runs;
  for (int64_t r = 0; r < n && ok; r++) {
    if (!fmt_journal_has(o->journal, r)) continue;
    fmt_run_record rec;
    ok = !fmt_journal_read(o->journal, r, &rec, &jbuf, &jcap, why, whylen) &&
         fmt__run_matches(o, r, &rec, &cbuf, &ccap, why, whylen);
  }
  free(jbuf);
  free(cbuf);
  return ok;
}

/* Closes a finished resumed file that failed file_matches_journal: drops
 * it, writes it anew from the journal, and says so in err (returning 0). */
static int close_by_rebuild(fmt_out *o, const fmt_timing *t, const char *why, char *err,
                            size_t errlen) {
  fmt_journal *j = o->journal;
  fmt_lock *lock = o->lock;
  const swp_sweep *sw = o->sw;
  int64_t si = o->jid.slice_index, sc = o->jid.slice_count;
  char *path = strdup(o->path);
  o->journal = NULL;
  o->lock = NULL;
  fmt__out_fail(o);
  fmt__out_abandon(o);
  int rc = !path ? (swp_seterr(err, errlen, "out of memory"), -1)
                 : fmt__journal_rebuild(path, sw, si, sc, j, t, err, errlen);
  if (!rc) {
    int64_t kept = fmt_journal_count(j);
    fmt_fsync_dir(path);
    fmt_journal_close(j);
    j = NULL;
    fmt_journal_remove(path);
    swp_seterr(err, errlen, "%s was damaged while resuming (%.200s); rebuilt it from its "
               "journal, with all %lld runs", path, why, (long long)kept);
  }
  fmt_journal_close(j);
  fmt_lock_release(lock);
  free(path);
  return rc ? -1 : 0;
}

int fmt_out_close(fmt_out *o, const fmt_timing *t, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_close_q(o, t, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_session_end(const char *path, char *err, size_t errlen) {
  char *file = fmt_path_resolved(path);
  if (!file) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  if (!fmt_journal_exists(file)) {
    free(file);
    return 0;
  }
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  uint64_t instance = 0;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  int ok = f >= 0 && fmt_attr_get_num(f, FMT_ATTR_INSTANCE, H5T_NATIVE_UINT64, &instance) == 0;
  if (f >= 0) ok = H5Fclose(f) >= 0 && ok;
  fmt_h5_quiet_end(&q);
  fmt_journal *j = NULL;
  int exists = 0;
  char jerr[512];
  ok = ok && !fmt_journal_open(&j, file, NULL, &exists, jerr, sizeof jerr) && j &&
       fmt_journal_instance(j) == instance;
  fmt_journal_close(j);
  int rc = 0;
  /* Only a journal of this very file goes, and only once the file is on
   * disk: until then it is what would rebuild it. */
  if (ok && (fmt_fsync_path(file) || fmt_fsync_dir(file))) {
    swp_seterr(err, errlen, "%s: syncing it at the end of the session: %s", path,
               strerror(errno));
    rc = -1;
  } else if (ok) {
    fmt_journal_remove(file);
  }
  free(file);
  return rc;
}
