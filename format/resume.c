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

/* Checks that every run marked done has all its chunks (or, refine's
 * runs, none: a summary row alone); clears the flag of one that lacks some
 * (it is run again). Returns the number cleared, or -1 when the chunk index
 * cannot be read at all. */
static int64_t verify_done_chunks(fmt_out *o, int64_t from, char *why, size_t whylen) {
  int64_t cleared = 0;
  for (int64_t r = from; r < o->n_runs; r++) {
    if (!o->done[r]) continue;
    /* (an unreadable index, -1, is reported below) */
    if (r >= o->base_runs && fmt__run_chunks_none(o->ticks, o->wide, r) == 1) continue;
    for (int m = 0; m < ENG_M_COUNT; m++) {
      hsize_t size = 0;
      if (o->ticks[m] < 0) continue; /* not recorded */
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
    for (int w = 0; w < FMT_WIDE_COUNT && o->done[r]; w++) {
      hsize_t size = 1;
      if (o->wide[w] < 0) continue;
      if (fmt__chunk_size_at(o->wide[w], r, &size)) {
        char h5[256];
        fmt_h5_reason(h5, sizeof h5);
        snprintf(why, whylen, "reading the chunk index of /ticks/%s at run %lld: %s",
                 fmt_wide_name((fmt_wide)w), (long long)r, h5);
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

/* What resume_open_file found: the file opened and is this sweep's (0); it
 * is another sweep's, or in use, and must be left alone (REFUSED); it is
 * missing or damaged, so a journal of it may rebuild it (DAMAGED). */
enum { OPEN_REFUSED = -1, OPEN_DAMAGED = -2 };

/* Whether the file that opened is this sweep's (tool, seed, definition,
 * shape, slice). Grows o->done when refine appended rows. */
static int resume_same_sweep(fmt_out *o, const char *path, const fmt_info *info,
                             const swp_sweep *sw, const char *text, int64_t slice_index,
                             int64_t slice_count, int append, char *err, size_t errlen) {
  char why[512];
  if (strcmp(info->tool_version, STORMSWEEP_VERSION)) {
    swp_seterr(err, errlen,
               "%s: written by stormsweep %s; this is %s, whose results may differ, so it cannot "
               "continue the file (start over with --force)",
               path, info->tool_version, STORMSWEEP_VERSION);
    return -1;
  }
  if (info->master_seed != sw->seed) {
    swp_seterr(err, errlen,
               "%s: belongs to another sweep: its master seed is %llu, this sweep's is %llu "
               "(refusing to resume)",
               path, (unsigned long long)info->master_seed, (unsigned long long)sw->seed);
    return -1;
  }
  if (strcmp(info->sweep_text, text)) {
    text_first_difference(text, info->sweep_text, why, sizeof why);
    swp_seterr(err, errlen,
               "%s: belongs to another sweep definition: %s (refusing to resume; "
               "'stormsweep list --ini' prints a sweep's effective text)",
               path, why);
    return -1;
  }
  if (append && info->n_runs > o->n_runs && info->rows == o->ticks_n) {
    /* Rows appended by an earlier refine: the file is longer than the sweep. */
    uint8_t *d = realloc(o->done, (size_t)info->n_runs);
    if (!d) {
      swp_seterr(err, errlen, "%s: out of memory", path);
      return -1;
    }
    memset(d, 0, (size_t)info->n_runs);
    o->done = d;
    o->n_runs = info->n_runs;
  }
  if (!append && info->n_runs > o->n_runs && info->rows == o->ticks_n) {
    swp_seterr(err, errlen, "%s: holds %lld runs, more than this sweep's %lld: runs were "
               "appended by refine; continue it with 'stormsweep refine %s'", path,
               (long long)info->n_runs, (long long)o->n_runs, path);
    return -1;
  }
  if (info->n_runs != o->n_runs || info->rows != o->ticks_n || info->stored != o->stored) {
    swp_seterr(err, errlen, "%s: holds %lld runs of %d stored rows (record = %s); this sweep has "
               "%lld of %d", path, (long long)info->n_runs, info->rows, info->record,
               (long long)o->n_runs, o->ticks_n);
    return -1;
  }
  if (info->slice_count != slice_count || info->slice_index != slice_index) {
    char have[64], want[64];
    if (info->slice_count)
      snprintf(have, sizeof have, "slice %lld/%lld", (long long)info->slice_index,
               (long long)info->slice_count);
    else snprintf(have, sizeof have, "the whole sweep");
    if (slice_count)
      snprintf(want, sizeof want, "slice %lld/%lld", (long long)slice_index,
               (long long)slice_count);
    else snprintf(want, sizeof want, "the whole sweep");
    swp_seterr(err, errlen, "%s: holds %s, but this command runs %s (refusing to resume)", path,
               have, want);
    return -1;
  }
  return 0;
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
    return OPEN_REFUSED;
  }
  if (slice_count <= 1) slice_index = slice_count = 0;
  struct stat st;
  if (stat(path, &st)) {
    if (errno == ENOENT)
      swp_seterr(err, errlen, "%s: does not exist: nothing to resume (drop --resume to start it)",
                 path);
    else
      swp_seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return errno == ENOENT ? OPEN_DAMAGED : OPEN_REFUSED;
  }
  if (!S_ISREG(st.st_mode)) {
    swp_seterr(err, errlen, "%s: not a regular file (expected a stormsweep result file)", path);
    return OPEN_REFUSED;
  }
  fmt_out *o = fmt__out_alloc(path, swp_sweep_runs(sw), sw->rows);
  char *text = swp_sweep_format(sw);
  if (!o || !text) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    free(text);
    if (o) fmt__out_free(o);
    return OPEN_REFUSED;
  }
  o->resumed = 1;
  o->stored = swp_record_mask(sw);
  o->master_seed = sw->seed;
  o->replicates = sw->replicates;
  o->sw = sw;
  fmt_info info;
  memset(&info, 0, sizeof info);
  char why[512];
  int rc = OPEN_DAMAGED;
  hid_t fapl = fmt__file_access();
  o->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
  fmt_h5_reason(why, sizeof why);
  H5Pclose(fapl);
  if (o->file < 0) {
    if (strstr(why, "unable to lock") || strstr(why, "locked")) {
      /* HDF5's own lock: a healthy file another program has open. */
      swp_seterr(err, errlen,
                 "%s: another program has it open (HDF5's file lock is taken: %s); close it "
                 "there and try again",
                 path, why);
      rc = OPEN_REFUSED;
    } else if (strstr(why, "signature")) {
      swp_seterr(err, errlen, "%s: not an HDF5 file (or damaged beyond reading)%s", path, lost);
    } else {
      swp_seterr(err, errlen, "%s: cannot open for --resume: %s%s", path, why, lost);
    }
    goto fail;
  }
  char *format = NULL;
  if (fmt_attr_get_str(o->file, FMT_ATTR_FORMAT, 256, &format) == 0 &&
      strcmp(format, FMT_FORMAT_NAME)) {
    /* Somebody else's HDF5 file, whole: never rebuilt over. */
    swp_seterr(err, errlen, "%s: not a stormsweep result file (its format is not '%s')", path,
               FMT_FORMAT_NAME);
    free(format);
    rc = OPEN_REFUSED;
    goto fail;
  }
  free(format);
  if (fmt_layout_read_info(o->file, path, &info, err, errlen)) goto fail;
  o->instance = info.instance;
  /* From here the file reads as a result file: what it is not is a
   * refusal, never a reason to rebuild it. */
  rc = OPEN_REFUSED;
  if (resume_same_sweep(o, path, &info, sw, text, slice_index, slice_count, append, err,
                        errlen))
    goto fail;
  rc = OPEN_DAMAGED;
  if (fmt_layout_open_datasets(o->file, path, &info, &o->runs, &o->runs_mem, o->ticks,
                               &o->wall, &o->thread, &o->outcome, o->wide, o->wide_n, err,
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
    return rc;
  }
  *out = o;
  return 0;
}

/* What journal_verify found. */
enum { JV_READ = -1, JV_OK = 0, JV_DAMAGED, JV_NOT_ITS, JV_BAD_RECORD };

/* Appends to the file the rows its journal appended after the file's last
 * commit (killed between the two). */
static int restore_appends(fmt_out *o, fmt_journal *j, char *why, size_t whylen) {
  for (size_t i = 0; i < fmt_journal_appends(j); i++) {
    int64_t first, n, got;
    int64_t *point;
    int32_t *rep;
    if (fmt_journal_read_append(j, i, &first, &n, &point, &rep, why, whylen)) return JV_READ;
    int rc = JV_OK;
    if (first + n > o->n_runs) {
      char err[400]; /* fits in why with its prefix */
      o->replaying = 1;
      if (first != o->n_runs || fmt_out_append(o, n, point, rep, &got, err, sizeof err)) {
        snprintf(why, whylen, "restoring the rows appended at %lld: %s", (long long)first,
                 first != o->n_runs ? "they overlap the file's" : err);
        rc = JV_DAMAGED;
      }
      o->replaying = 0;
    }
    free(point);
    free(rep);
    if (rc) return rc;
  }
  return JV_OK;
}

/* Checks the file against its journal: every row the file has must be one
 * the journal knows and every run it marks done must be in the journal (a
 * journal that lacks one is not this file's: JV_NOT_ITS); each must match
 * its record byte for byte (else the file is damaged: JV_DAMAGED). The
 * journal's runs the file lacks (killed between the journal's sync and the
 * rows' commit) are checked as any run from outside the writer is
 * (JV_BAD_RECORD when one is not the run it claims to be) and written
 * again; appending, so are its rows. */
static int journal_verify(fmt_out *o, fmt_journal *j, int append, int64_t *restored, char *why,
                          size_t whylen) {
  *restored = 0;
  int64_t jrows = fmt_journal_rows(j);
  int64_t known = append ? jrows : o->base_runs;
  if (o->n_runs > known) {
    snprintf(why, whylen, "it has %lld rows, but its journal knows only %lld",
             (long long)o->n_runs, (long long)known);
    return JV_NOT_ITS;
  }
  for (int64_t r = 0; r < o->n_runs; r++)
    if (o->done[r] && !fmt_journal_has(j, r)) {
      snprintf(why, whylen, "run %lld is marked done in it but is not in its journal",
               (long long)r);
      return JV_NOT_ITS;
    }
  int rc = append && jrows > o->n_runs ? restore_appends(o, j, why, whylen) : JV_OK;
  uint8_t *jbuf = NULL, *cbuf = NULL;
  size_t jcap = 0, ccap = 0;
  fmt_record_rules rules = fmt__out_rules(o);
  for (int64_t r = 0; r < o->n_runs && !rc; r++) {
    if (!fmt_journal_has(j, r)) continue;
    fmt_run_record rec;
    int64_t point;
    int32_t rep;
    if (fmt_journal_read(j, r, &rec, &jbuf, &jcap, why, whylen)) {
      rc = JV_READ;
    } else if (o->done[r]) {
      if (!fmt__run_matches(o, r, &rec, &cbuf, &ccap, why, whylen)) rc = JV_DAMAGED;
    } else if (fmt__row_coords(o, r, &point, &rep)) {
      snprintf(why, whylen, "run %lld's row cannot be read", (long long)r);
      rc = JV_DAMAGED;
    } else if (fmt__record_check(&rules, &rec, point, rep, 1, why, whylen)) {
      rc = JV_BAD_RECORD;
    } else {
      char err[512];
      o->replaying = 1;
      if (fmt__out_write_run(o, &rec, err, sizeof err)) {
        snprintf(why, whylen, "%s", err);
        rc = JV_DAMAGED;
      }
      o->replaying = 0;
      o->done[r] = 1; /* written now: the driver skips it */
      (*restored)++;
    }
  }
  free(jbuf);
  free(cbuf);
  return rc;
}

/* The message for a journal that is not the file's. */
static void not_its_journal(const char *path, const char *why, char *err, size_t errlen) {
  swp_seterr(err, errlen,
             "%s: its journal %s.journal is not this file's (%s): it was left by another file "
             "of this name, e.g. a killed first attempt before this one was copied or moved "
             "here. Nothing was changed; if %s is the file you want, remove %s.journal (or move "
             "it aside) and run again",
             path, path, why, path, path);
}

/* Drops a writer that must not write anything (nothing of it committed). */
static void out_drop(fmt_out **o) {
  if (!*o) return;
  fmt__out_fail(*o);
  fmt__out_abandon(*o);
  *o = NULL;
}

/* Opens path's file against its journal j (NULL: none, jerr: why there is
 * none usable) and, when it is damaged and the journal holds its runs,
 * rebuilds it from the journal first. note: what was salvaged. */
static int open_checked(fmt_out **out, const char *path, const swp_sweep *sw,
                        int64_t slice_index, int64_t slice_count, int append, fmt_journal *j,
                        const char *jerr, int64_t *restored, char *note, size_t notelen,
                        char *err, size_t errlen) {
  char first[1024] = "", why[512] = "";
  fmt_out *o = NULL;
  int rc = resume_open_file(&o, path, sw, slice_index, slice_count, append,
                            j != NULL || jerr[0], first, sizeof first);
  int damaged = rc == OPEN_DAMAGED;
  if (!rc && jerr[0]) {
    swp_seterr(err, errlen, "%s (refusing to resume)", jerr);
    out_drop(&o);
    return -1;
  }
  if (!rc && j) {
    if (fmt_journal_instance(j) != o->instance) {
      not_its_journal(path, "it names another file instance", err, errlen);
      out_drop(&o);
      return -1;
    }
    int v = journal_verify(o, j, append, restored, why, sizeof why);
    if (v == JV_READ) swp_seterr(err, errlen, "%s: its journal: %s", path, why);
    else if (v == JV_NOT_ITS) not_its_journal(path, why, err, errlen);
    else if (v == JV_BAD_RECORD)
      swp_seterr(err, errlen, "%s: its journal %s.journal holds a record that is not the run it "
                 "claims to be (%s); it is damaged or was not written by stormsweep, and nothing "
                 "of it was used", path, path, why);
    if (v != JV_OK) out_drop(&o);
    if (v == JV_READ || v == JV_NOT_ITS || v == JV_BAD_RECORD) return -1;
    if (v == JV_DAMAGED) {
      damaged = 1;
      snprintf(first, sizeof first, "%s", why);
    }
  }
  if (damaged && j) {
    /* Damaged (or gone) but the journal holds every committed run: rebuild
     * it from the journal, then open that. */
    if (fmt__journal_rebuild(path, sw, slice_index, slice_count, j, NULL, err, errlen))
      return -1;
    const char *p = strncmp(first, path, strlen(path)) ? first : first + strlen(path);
    if (*p == ':') p++;
    while (*p == ' ') p++;
    snprintf(note, notelen, "%s was damaged (%.200s); rebuilt it from %s.journal, keeping the "
             "%lld runs committed there", path, *p ? p : "unreadable", path,
             (long long)fmt_journal_count(j));
    first[0] = 0;
    *restored = 0;
    rc = resume_open_file(&o, path, sw, slice_index, slice_count, append, 1, first,
                          sizeof first);
    int v = rc ? JV_OK : journal_verify(o, j, append, restored, why, sizeof why);
    if (v) {
      swp_seterr(err, errlen, "%s: rebuilt from its journal but does not verify: %s", path, why);
      out_drop(&o);
      return -1;
    }
  } else if (damaged && jerr[0]) {
    swp_seterr(err, errlen, "%s; and %s", first, jerr + (strncmp(jerr, path, strlen(path)) ? 0 : strlen(path) + 2));
    return -1;
  }
  if (rc) {
    swp_seterr(err, errlen, "%s", first);
    return -1;
  }
  *out = o;
  return 0;
}

static int fmt_out_open_resume_q(fmt_out **out, const char *given, const swp_sweep *sw,
                                   int64_t slice_index, int64_t slice_count, int append,
                                   fmt_lock *held, char *err, size_t errlen) {
  *out = NULL;
  if (!sw->checked) {
    swp_seterr(err, errlen, "%s: the sweep was not checked", given);
    return -1;
  }
  if (slice_count <= 1) slice_index = slice_count = 0;
  /* The file itself, through any link to it: its lock, its journal and the
   * name a rebuild replaces are all the file's. */
  char *path = fmt_path_resolved(given);
  if (!path) {
    swp_seterr(err, errlen, "%s: out of memory", given);
    return -1;
  }
  /* The writer's lock: the caller's (a refine session holds it across its
   * rounds) or taken here and held until close. */
  fmt_lock *lock = NULL;
  fmt_journal_id id = {0};
  fmt_journal *j = NULL;
  fmt_out *o = NULL;
  int have_journal = 0;
  int64_t restored = 0;
  char note[768] = "", jerr[512] = "";
  if (!held && fmt_lock_acquire(&lock, path, err, errlen)) goto fail;
  if (fmt__journal_id(sw, slice_index, slice_count, NULL, &id)) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    goto fail;
  }
  if (fmt_journal_open(&j, path, &id, &have_journal, jerr, sizeof jerr)) j = NULL;
  if (open_checked(&o, path, sw, slice_index, slice_count, append, j, jerr, &restored, note,
                   sizeof note, err, errlen))
    goto fail;
  o->lock = lock;
  lock = NULL;
  o->jid = id; /* its sweep text is the writer's now */
  id.sweep_text = NULL;
  if (slice_count > 1) o->finish_runs = fmt__slice_runs(sw, slice_index, slice_count);
  if (restored && !note[0])
    snprintf(note, sizeof note, "%s: restored %lld committed runs from %s.journal", path,
             (long long)restored, path);
  snprintf(o->note, sizeof o->note, "%s", note);
  if (j) {
    if (fmt_journal_truncate_tail(j, err, errlen)) goto fail;
    o->jid.instance = o->instance;
    o->journal = j;
    j = NULL;
  } else if (append) {
    /* The session's journal: the file as it is, then what it adds. */
    if (fmt__journal_fill(o, err, errlen)) goto fail;
  } else {
    /* A file closed cleanly (or written before journals): start one for the
     * runs this session adds. */
    if (fmt__out_instance_ensure(o, err, errlen) || !(o->jcmd = strdup(""))) {
      if (!err[0]) swp_seterr(err, errlen, "%s: out of memory", path);
      goto fail;
    }
    o->jid.command_line = o->jcmd;
    o->jid.instance = o->instance;
    if (fmt_journal_create(&o->journal, path, &o->jid, err, errlen)) goto fail;
  }
  /* A refine session keeps its journal across its rounds; it goes when the
   * session ends (fmt_out_session_end). */
  o->keep_journal = append;
  free(path);
  *out = o;
  return 0;
fail:
  out_drop(&o);
  fmt_journal_close(j);
  fmt_lock_release(lock);
  free((char *)id.sweep_text);
  free(path);
  return -1;
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

int fmt_out_salvage(const char *given, fmt_lock *held, char *note, size_t notelen, char *err,
                    size_t errlen) {
  note[0] = 0;
  char *path = fmt_path_resolved(given);
  if (!path) {
    swp_seterr(err, errlen, "%s: out of memory", given);
    return -1;
  }
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  hid_t f = fmt_journal_exists(path) ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : 0;
  if (f > 0) H5Fclose(f);
  int rc = 1;
  fmt_lock *lock = NULL;
  fmt_journal *j = NULL;
  swp_sweep sw;
  swp_sweep_init(&sw);
  if (f >= 0) goto done; /* no journal, or HDF5 opens it: the writer's checks take over */
  rc = -1;
  int exists = 0;
  char msg[1024], source[4200];
  if ((!held && fmt_lock_acquire(&lock, path, err, errlen)) ||
      fmt_journal_open(&j, path, NULL, &exists, err, errlen))
    goto done;
  snprintf(source, sizeof source, "%s.journal (its sweep text)", path);
  /* The sweep must be the journal's own shape before it is checked: a
   * hostile header cannot make the check walk a grid of another size. */
  if (!fmt_journal_sweep_text(j)[0] ||
      swp_sweep_parse_string(&sw, fmt_journal_sweep_text(j), source, msg, sizeof msg) ||
      swp_sweep_runs_declared(&sw) != fmt_journal_sweep_runs(j) ||
      swp_sweep_check(&sw, msg, sizeof msg)) {
    swp_seterr(err, errlen, "%s: damaged, and its journal holds no sweep it can be rebuilt with",
               path);
    goto done;
  }
  int64_t si, sc;
  fmt_journal_slice(j, &si, &sc);
  if (fmt__journal_rebuild(path, &sw, si, sc, j, NULL, err, errlen)) goto done;
  snprintf(note, notelen, "%s was damaged (HDF5 cannot open it); rebuilt it from %s.journal, "
           "keeping the %lld runs committed there", path, path,
           (long long)fmt_journal_count(j));
  rc = 0;
done:
  fmt_h5_quiet_end(&q);
  fmt_journal_close(j);
  fmt_lock_release(lock);
  swp_sweep_free(&sw);
  free(path);
  return rc;
}
