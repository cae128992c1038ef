/*
 * resume.c — reopening an interrupted result file (run --resume) or a
 * finished one to append to it (refine): it must hold this same sweep (text,
 * seed, shapes, slice), every run it marks done must have all its chunks,
 * and — with a journal — every done run must match its journal record byte
 * for byte; the journal's runs the file lacks are restored, and a damaged
 * file is rebuilt from it (docs/durability.md).
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

/* ---- resume ---- */

/* Whether text holds the line [l, l + n) as one of its lines. */
static int text_has_line(const char *text, const char *l, size_t n) {
  for (const char *p = text; p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !memcmp(p, l, n)) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

/* Names the first line where two sweep texts differ: "this sweep has
 * 'load = 0.6' (line 11), which the file's lacks". */
static void text_first_difference(const char *mine, const char *theirs, char *buf, size_t len) {
  int line = 1;
  const char *a = mine, *b = theirs;
  for (;;) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
    if (la != lb || memcmp(a, b, la) || (!ea) != (!eb)) {
      int pa = (int)(la > 120 ? 120 : la), pb = (int)(lb > 120 ? 120 : lb);
      if (la && !text_has_line(theirs, a, la))
        snprintf(buf, len, "this sweep has '%.*s' (line %d of its effective text), which the "
                 "file's sweep lacks", pa, a, line);
      else if (lb && !text_has_line(mine, b, lb))
        snprintf(buf, len, "the file's sweep has '%.*s' (line %d of its effective text), which "
                 "this one lacks", pb, b, line);
      else
        snprintf(buf, len, "line %d of the effective sweep is '%.*s' in the file but '%.*s' here",
                 line, pb, b, pa, a);
      return;
    }
    if (!ea) break;
    a = ea + 1;
    b = eb + 1;
    line++;
  }
  snprintf(buf, len, "the sweep texts differ");
}

/* Checks that every run marked done has all its chunks; clears the flag of
 * one that lacks some (it is run again). Returns the number cleared, or -1
 * when the chunk index cannot be read at all. */
static int64_t verify_done_chunks(fmt_out *o, int64_t from, char *why, size_t whylen) {
  int64_t cleared = 0;
  for (int64_t r = from; r < o->n_runs; r++) {
    if (!o->done[r]) continue;
    for (int m = 0; m < ENG_M_COUNT; m++) {
      hsize_t size = 0;
      if (fmt__chunk_size_at(o->ticks[m], r, &size)) {
        char h5[256];
        fmt_h5_reason(h5, sizeof h5);
        snprintf(why, whylen, "reading the chunk index of /ticks/%s at run %lld: %s",
                 eng_metric_get_info((eng_metric)m)->name, (long long)r, h5);
        return -1;
      }
      if (!size) {
        o->done[r] = 0;
        cleared++;
        break;
      }
    }
    hsize_t size = 1;
    if (o->done[r] && o->shardq >= 0) {
      if (fmt__chunk_size_at(o->shardq, r, &size)) {
        char h5[256];
        fmt_h5_reason(h5, sizeof h5);
        snprintf(why, whylen, "reading the chunk index of /ticks/%s at run %lld: %s",
                 FMT_TICKS_SHARD_QUEUES, (long long)r, h5);
        return -1;
      }
      if (!size) {
        o->done[r] = 0;
        cleared++;
      }
    }
  }
  return cleared;
}

static int resume_open_file(fmt_out **out, const char *path, const swp_sweep *sw,
                          int64_t slice_index, int64_t slice_count, int append, int journal,
                          char *err, size_t errlen) {
  /* Without a journal the damage is final; with one, the caller rebuilds. */
  const char *lost = journal ? "" : " (the file is damaged and has no journal to rebuild it "
                                    "from; its runs cannot be saved: start over with --force)";
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", path);
    return -1;
  }
  if (slice_count <= 1) slice_index = slice_count = 0;
  fmt_out *o = fmt__out_alloc(path, swp_sweep_runs(sw), sw->ticks);
  char *text = swp_sweep_format(sw);
  if (!o || !text) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    free(text);
    if (o) fmt__out_free(o);
    return -1;
  }
  o->resumed = 1;
  o->master_seed = sw->seed;
  o->replicates = sw->replicates;
  o->sw = sw;
  fmt_info info;
  memset(&info, 0, sizeof info);
  char why[512];
  int rc = -1;
  if (H5Fis_hdf5(path) <= 0) {
    if (access(path, F_OK))
      swp_seterr(err, errlen, "%s: does not exist: nothing to resume (drop --resume to start it)",
                 path);
    else
      swp_seterr(err, errlen, "%s: not an HDF5 file (or damaged beyond reading)%s", path,
                 lost);
    goto fail;
  }
  hid_t fapl = fmt__file_access();
  o->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
  fmt_h5_reason(why, sizeof why);
  H5Pclose(fapl);
  if (o->file < 0) {
    swp_seterr(err, errlen, "%s: cannot open for --resume: %s%s", path, why,
               strstr(why, "locked") ? "" : lost);
    goto fail;
  }
  if (fmt_layout_read_info(o->file, path, &info, err, errlen)) goto fail;
  if (strcmp(info.tool_version, STORMSWEEP_VERSION)) {
    swp_seterr(err, errlen,
               "%s: written by stormsweep %s; this is %s, whose results may differ, so it cannot "
               "continue the file (start over with --force)",
               path, info.tool_version, STORMSWEEP_VERSION);
    goto fail;
  }
  if (info.master_seed != sw->seed) {
    swp_seterr(err, errlen,
               "%s: belongs to another sweep: its master seed is %llu, this sweep's is %llu "
               "(refusing to resume)",
               path, (unsigned long long)info.master_seed, (unsigned long long)sw->seed);
    goto fail;
  }
  if (strcmp(info.sweep_text, text)) {
    text_first_difference(text, info.sweep_text, why, sizeof why);
    swp_seterr(err, errlen,
               "%s: belongs to another sweep definition: %s (refusing to resume; "
               "'stormsweep list --ini' prints a sweep's effective text)",
               path, why);
    goto fail;
  }
  if (append && info.n_runs > o->n_runs && info.ticks == o->ticks_n) {
    /* Rows appended by an earlier refine: the file is longer than the sweep. */
    uint8_t *d = realloc(o->done, (size_t)info.n_runs);
    if (!d) {
      swp_seterr(err, errlen, "%s: out of memory", path);
      goto fail;
    }
    memset(d, 0, (size_t)info.n_runs);
    o->done = d;
    o->n_runs = info.n_runs;
  }
  if (!append && info.n_runs > o->n_runs && info.ticks == o->ticks_n) {
    swp_seterr(err, errlen, "%s: holds %lld runs, more than this sweep's %lld: runs were "
               "appended by refine; continue it with 'stormsweep refine %s'", path,
               (long long)info.n_runs, (long long)o->n_runs, path);
    goto fail;
  }
  if (info.n_runs != o->n_runs || info.ticks != o->ticks_n) {
    swp_seterr(err, errlen, "%s: holds %lld runs of %d ticks; this sweep has %lld of %d", path,
               (long long)info.n_runs, info.ticks, (long long)o->n_runs, o->ticks_n);
    goto fail;
  }
  if (info.slice_count != slice_count || info.slice_index != slice_index) {
    char have[64], want[64];
    if (info.slice_count)
      snprintf(have, sizeof have, "slice %lld/%lld", (long long)info.slice_index,
               (long long)info.slice_count);
    else snprintf(have, sizeof have, "the whole sweep");
    if (slice_count)
      snprintf(want, sizeof want, "slice %lld/%lld", (long long)slice_index,
               (long long)slice_count);
    else snprintf(want, sizeof want, "the whole sweep");
    swp_seterr(err, errlen, "%s: holds %s, but this command runs %s (refusing to resume)", path,
               have, want);
    goto fail;
  }
  if (fmt_layout_open_datasets(o->file, path, &info, &o->runs, &o->runs_mem, o->ticks,
                               &o->wall, &o->thread, &o->outcome, &o->shardq, &o->shards_n, err,
                               errlen) ||
      fmt__out_spaces(o))
    goto fail;
  if (fmt_layout_read_done(o->runs, o->n_runs, o->done)) {
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: cannot read /runs: %s%s", path, why, lost);
    goto fail;
  }
  /* Appending (refine) checks only the appended rows: the sweep's own runs
   * were all committed (refine requires it) before any append. */
  if (verify_done_chunks(o, append ? o->base_runs : 0, why, sizeof why) < 0) {
    swp_seterr(err, errlen,
               "%s: damaged: %s%s", path, why, lost);
    goto fail;
  }
  for (int64_t r = 0; r < o->n_runs; r++) o->done_before += o->done[r];
  rc = 0;
fail:
  fmt_info_free(&info);
  free(text);
  if (rc) {
    fmt__out_free(o);
    return -1;
  }
  *out = o;
  return 0;
}

/* Checks every run the file marks done against the journal, and stages the
 * journal's runs the file lacks (killed between the journal's sync and the
 * rows' commit) to be written again from it. Returns 0, 1 when the file
 * disagrees with the journal (why says where), -1 on a read failure of the
 * journal itself. */
static int journal_verify(fmt_out *o, fmt_journal *j, int64_t *restored, char *why,
                          size_t whylen) {
  uint8_t *jbuf = NULL, *cbuf = NULL;
  size_t jcap = 0, ccap = 0;
  int rc = 0;
  *restored = 0;
  int64_t n = o->jid.n_runs < o->n_runs ? o->jid.n_runs : o->n_runs;
  for (int64_t r = 0; r < n && !rc; r++) {
    int has = fmt_journal_has(j, r);
    if (o->done[r] && !has) {
      snprintf(why, whylen, "run %lld is marked done in it but is not in its journal",
               (long long)r);
      rc = 1;
    } else if (has) {
      fmt_run_record rec;
      if (fmt_journal_read(j, r, &rec, &jbuf, &jcap, why, whylen)) {
        rc = -1;
      } else if (o->done[r]) {
        if (!fmt__run_matches(o, r, &rec, &cbuf, &ccap, why, whylen)) rc = 1;
      } else {
        char err[512];
        o->replaying = 1;
        if (fmt__out_write_run(o, &rec, err, sizeof err)) {
          snprintf(why, whylen, "%s", err);
          rc = 1;
        }
        o->replaying = 0;
        o->done[r] = 1; /* written now: the driver skips it */
        (*restored)++;
      }
    }
  }
  free(jbuf);
  free(cbuf);
  return rc;
}

static int fmt_out_open_resume_q(fmt_out **out, const char *path, const swp_sweep *sw,
                                   int64_t slice_index, int64_t slice_count, int append,
                                   fmt_lock *held, char *err, size_t errlen) {
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", path);
    return -1;
  }
  if (slice_count <= 1) slice_index = slice_count = 0;
  /* The writer's lock: the caller's (a refine session holds it across its
   * rounds) or taken here and held until close. */
  fmt_lock *lock = NULL;
  if (!held && fmt_lock_acquire(&lock, path, err, errlen)) return -1;
  fmt_journal_id id;
  fmt_journal *j = NULL;
  int have_journal = 0;
  if (fmt__journal_id(sw, slice_index, slice_count, NULL, &id)) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    fmt_lock_release(lock);
    return -1;
  }
  char first[1024] = "", why[512] = "", note[512] = "", jerr[512] = "";
  if (fmt_journal_open(&j, path, &id, &have_journal, jerr, sizeof jerr)) {
    /* A journal of another sweep: the file's own checks name the
     * difference better; a matching file with it is refused below. */
    j = NULL;
  }
  fmt_out *o = NULL;
  int64_t restored = 0;
  int rc = resume_open_file(&o, path, sw, slice_index, slice_count, append, j != NULL, first,
                            sizeof first);
  if (!rc && j) {
    o->jid = id;
    int v = journal_verify(o, j, &restored, why, sizeof why);
    if (v < 0) {
      swp_seterr(err, errlen, "%s: its journal: %s", path, why);
      fmt__out_fail(o);
      fmt__out_abandon(o);
      fmt_journal_close(j);
      fmt_lock_release(lock);
      return -1;
    }
    if (v) {
      snprintf(first, sizeof first, "%s", why);
      /* Nothing of the damaged file may be written back. */
      fmt__out_fail(o);
      fmt__out_abandon(o);
      o = NULL;
      rc = -1;
    }
  }
  if (rc && j && !strstr(first, "locked")) {
    /* The file is damaged (or gone) but the journal holds every committed
     * run: rebuild it from the journal, then open that. */
    if (fmt__journal_rebuild(path, sw, slice_index, slice_count, j, NULL, err, errlen)) {
      fmt_journal_close(j);
      fmt_lock_release(lock);
      return -1;
    }
    char *dmg = first[0] ? first : (char *)"damaged";
    const char *p = strncmp(dmg, path, strlen(path)) ? dmg : dmg + strlen(path);
    if (*p == ':') p++;
    while (*p == ' ') p++;
    snprintf(note, sizeof note, "%s was damaged (%.200s); rebuilt it from %s.journal, keeping "
             "the %lld runs committed there", path, p, path, (long long)fmt_journal_count(j));
    first[0] = 0;
    restored = 0;
    rc = resume_open_file(&o, path, sw, slice_index, slice_count, append, j != NULL, first,
                            sizeof first);
    if (!rc) {
      o->jid = id;
      int v = journal_verify(o, j, &restored, why, sizeof why);
      if (v) {
        swp_seterr(err, errlen, "%s: rebuilt from its journal but does not verify: %s", path,
                   why);
        fmt__out_fail(o);
        fmt__out_abandon(o);
        fmt_journal_close(j);
        fmt_lock_release(lock);
        return -1;
      }
    }
  }
  if (!rc && jerr[0]) {
    snprintf(first, sizeof first, "%s (refusing to resume)", jerr);
    fmt__out_fail(o);
    fmt__out_abandon(o);
    rc = -1;
  }
  if (rc) {
    swp_seterr(err, errlen, "%s", first);
    fmt_journal_close(j);
    fmt_lock_release(lock);
    return -1;
  }
  o->lock = lock;
  o->jid = id;
  if (slice_count > 1)
    o->finish_runs = fmt__slice_runs(sw, slice_index, slice_count);
  if (restored && !note[0])
    snprintf(note, sizeof note, "%s: restored %lld committed runs from %s.journal", path,
             (long long)restored, path);
  snprintf(o->note, sizeof o->note, "%s", note);
  if (append) {
    /* Refine appends rows the journal cannot describe: finish what it
     * holds, make the file durable and drop it; from here commits sync the
     * file itself. */
    o->sync_file = 1;
    if (j && (fmt__out_commit(o, err, errlen) || fmt__out_sync_file(o, jerr, sizeof jerr))) {
      if (!err[0]) swp_seterr(err, errlen, "%s: %s", path, jerr);
      fmt_journal_close(j);
      fmt__out_fail(o);
      fmt__out_abandon(o);
      return -1;
    }
    fmt_journal_close(j);
    if (have_journal) fmt_journal_remove(path);
    *out = o;
    return 0;
  }
  if (j) {
    if (fmt_journal_truncate_tail(j, err, errlen)) {
      fmt_journal_close(j);
      fmt__out_fail(o);
      fmt__out_abandon(o);
      return -1;
    }
    o->journal = j;
  } else {
    /* A file closed cleanly (or written before journals): start one for the
     * runs this session adds. */
    o->jcmd = strdup("");
    id.command_line = "";
    if (fmt_journal_create(&o->journal, path, &id, err, errlen)) {
      fmt__out_fail(o);
      fmt__out_abandon(o);
      return -1;
    }
  }
  *out = o;
  return 0;
}


int fmt_out_open_resume(fmt_out **out, const char *path, const swp_sweep *sw,
                          int64_t slice_index, int64_t slice_count, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_open_resume_q(out, path, sw, slice_index, slice_count, 0, NULL, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_open_append(fmt_out **out, const char *path, const swp_sweep *sw, fmt_lock *held,
                        char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_open_resume_q(out, path, sw, 0, 0, 1, held, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}
