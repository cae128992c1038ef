/*
 * merge.c — joins the result files of a sweep's slices (`run --slice K/N`,
 * e.g. one per batch-array task) into the file a single run of the whole
 * sweep would have written (the `merge` command, cli/cmd_merge.c).
 *
 * Every part is opened read-only and its layout checked (fmt_in: a
 * truncated, foreign or malformed file is refused with a message). The parts
 * must come from one sweep — same effective sweep_text, master seed, tool
 * and format version, shapes — and together hold every run exactly once,
 * judged by their done flags: a run held by two parts, or by none, is an
 * error that names the runs, the parts and, for slice files, which slices
 * are missing, given twice or unfinished. All of this is decided before
 * anything is written, so a refused merge leaves no file.
 *
 * The output is then built like a fresh run: the sweep is re-parsed from the
 * parts' sweep_text and fmt_out_create writes /points, /axes, the /ticks
 * coordinates and the attributes exactly as `run` does; each run's /runs row
 * (checked against its index and seed) and /timing values are copied, and
 * its /ticks chunks are copied raw — H5Dread_chunk to H5Dwrite_chunk, still
 * compressed, so the merge costs disk bandwidth, not deflate time. The file
 * is an fmt_outfile (fmt_outfile.h): built under a fresh name beside OUT and
 * renamed over it only when complete, so a failed or stopped merge never
 * leaves a half file and never damages an existing OUT. The merge holds
 * OUT's writer lock throughout, and a stale OUT.journal — of an earlier,
 * unfinished `run -o OUT` — is removed once OUT is replaced: it describes a
 * file that no longer exists.
 */
#include <errno.h>
#include <hdf5.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fmt.h"
#include "fmt_outfile.h"
#include "journal.h"
#include "writelock.h"

#define MERGE_BLOCK 4096 /* runs per pass over the parts */
#define LIST_MAX 6       /* runs named in a message */

/* One problem, one line, to the caller. */
static void say(const fmt_merge_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const fmt_merge_opts *o, const char *fmt, ...) {
  if (!o->say) return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  o->say(o->user, line);
}

/* ", 3, 6, 9 and 12 more" style list of the runs r with pick(r), at most
 * LIST_MAX named; returns how many there are. */
typedef int (*run_pick)(const void *user, int64_t r);

static int64_t runs_describe(int64_t n_runs, run_pick pick, const void *user, char *buf,
                             size_t len) {
  int64_t count = 0;
  size_t used = 0;
  buf[0] = 0;
  for (int64_t r = 0; r < n_runs; r++) {
    if (!pick(user, r)) continue;
    if (count < LIST_MAX && used < len)
      used += (size_t)snprintf(buf + used, len - used, "%s%lld", count ? ", " : "", (long long)r);
    count++;
  }
  if (count > LIST_MAX && used < len)
    snprintf(buf + used, len - used, " and %lld more", (long long)(count - LIST_MAX));
  return count;
}

typedef struct owner_pick {
  const int32_t *owner;
  const uint8_t *done;   /* for duplicates: the second part's flags */
  int32_t want;          /* owner to match (-1: unowned) */
  int64_t replicates, slice_index, slice_count; /* slice filter (count 0: none) */
} owner_pick;

static int pick_owner(const void *user, int64_t r) {
  const owner_pick *p = user;
  if (p->slice_count > 1 && swp_slice_of(p->replicates, p->slice_count, r) != p->slice_index)
    return 0;
  if (p->done) return p->done[r] && p->owner[r] == p->want;
  return p->owner[r] == p->want;
}

static void slice_name(const fmt_info *in, char *buf, size_t len) {
  if (in->slice_count)
    snprintf(buf, len, "slice %lld/%lld", (long long)in->slice_index, (long long)in->slice_count);
  else
    snprintf(buf, len, "whole sweep");
}

/* Checks part i against part 0. */
static int parts_consistent(fmt_in **in, const fmt_merge_opts *o, int i) {
  const fmt_info *a = fmt_in_info(in[0]), *b = fmt_in_info(in[i]);
  const char *x = o->parts[0], *y = o->parts[i];
  if (strcmp(a->tool_version, b->tool_version)) {
    say(o, "%s was written by stormsweep %s, %s by %s: versions may simulate "
            "differently, so their runs cannot be merged",
            x, a->tool_version, y, b->tool_version);
    return -1;
  }
  if (a->master_seed != b->master_seed) {
    say(o, "%s and %s come from different sweeps: master seed %llu vs %llu",
            x, y, (unsigned long long)a->master_seed, (unsigned long long)b->master_seed);
    return -1;
  }
  if (strcmp(a->record, b->record) || a->stored != b->stored || a->rows != b->rows) {
    /* Said before the sweep texts (which differ too): /ticks has another shape. */
    say(o, "%s stores record = %s (%d rows per run) but %s stores record = %s (%d rows): "
           "files of different record modes or metric lists cannot be merged (run every part "
           "with the same record and record_metrics)",
        x, a->record, a->rows, y, b->record, b->rows);
    return -1;
  }
  if (strcmp(a->sweep_text, b->sweep_text)) {
    /* First differing line, for the message. */
    const char *p = a->sweep_text, *q = b->sweep_text;
    int line = 1;
    while (*p && *p == *q) {
      if (*p == '\n') line++;
      p++;
      q++;
    }
    while (p > a->sweep_text && p[-1] != '\n') p--, q--;
    int lp = (int)strcspn(p, "\n"), lq = (int)strcspn(q, "\n");
    say(o, "%s and %s come from different sweeps: line %d of their effective "
            "sweep text is '%.*s' vs '%.*s'",
            x, y, line, lp > 100 ? 100 : lp, p, lq > 100 ? 100 : lq, q);
    return -1;
  }
  if (a->n_runs != b->n_runs || a->n_points != b->n_points || a->replicates != b->replicates ||
      a->ticks != b->ticks || a->tick_ms != b->tick_ms) {
    say(o, "%s and %s have different shapes (%lld runs x %d ticks vs %lld x "
            "%d)",
            x, y, (long long)a->n_runs, a->ticks, (long long)b->n_runs, b->ticks);
    return -1;
  }
  if (a->slice_count && b->slice_count && a->slice_count != b->slice_count) {
    say(o, "%s is slice %lld/%lld but %s is slice %lld/%lld: parts of one "
            "slicing have the same N",
            x, (long long)a->slice_index, (long long)a->slice_count, y,
            (long long)b->slice_index, (long long)b->slice_count);
    return -1;
  }
  return 0;
}

/* The coverage check: each run in exactly one part. Fills owner (part index
 * per run). Prints every problem; returns 0 or -1. */
static int coverage_check(fmt_in **in, const fmt_merge_opts *o, int32_t *owner, uint8_t *done) {
  const fmt_info *i0 = fmt_in_info(in[0]);
  int64_t n_runs = i0->n_runs, replicates = i0->replicates;
  for (int64_t r = 0; r < n_runs; r++) owner[r] = -1;
  int problems = 0;
  char list[256], err[1024];
  for (int p = 0; p < o->n_parts; p++) {
    if (fmt_in_read_done(in[p], done, err, sizeof err)) {
      say(o, "%s", err);
      return -1;
    }
    int reported = 0;
    for (int64_t r = 0; r < n_runs; r++) {
      if (!done[r]) continue;
      if (owner[r] < 0) {
        owner[r] = p;
        continue;
      }
      if (reported) continue;
      /* Report each pair of parts once, with the runs they share. */
      int32_t q = owner[r];
      owner_pick pk = {owner, done, q, replicates, 0, 0};
      int64_t n = runs_describe(n_runs, pick_owner, &pk, list, sizeof list);
      char sa[64], sb[64];
      slice_name(fmt_in_info(in[q]), sa, sizeof sa);
      slice_name(fmt_in_info(in[p]), sb, sizeof sb);
      int same = !strcmp(sa, sb);
      say(o, "%lld run%s (%s) %s in both %s (%s) and %s (%s)%s: each run must "
              "come from exactly one part",
              (long long)n, n == 1 ? "" : "s", list, n == 1 ? "is" : "are", o->parts[q], sa,
              o->parts[p], sb, same && i0->slice_count ? ": that slice is given twice" : "");
      problems++;
      reported = 1;
    }
  }
  int64_t missing = 0;
  for (int64_t r = 0; r < n_runs; r++) missing += owner[r] < 0;
  if (missing) {
    /* Slices: name the ones no part is, and the parts that are unfinished. */
    int64_t n_slices = 0;
    int all_sliced = 1;
    for (int p = 0; p < o->n_parts; p++) {
      const fmt_info *info = fmt_in_info(in[p]);
      if (!info->slice_count) all_sliced = 0;
      else n_slices = info->slice_count;
    }
    int64_t explained = 0;
    if (all_sliced && n_slices > 1) {
      char absent[512] = "";
      size_t used = 0;
      int64_t n_absent = 0;
      for (int64_t k = 0; k < n_slices; k++) {
        int present = 0;
        for (int p = 0; p < o->n_parts && !present; p++)
          present = fmt_in_info(in[p])->slice_index == k;
        if (present) continue;
        if (n_absent < 16 && used < sizeof absent)
          used += (size_t)snprintf(absent + used, sizeof absent - used, "%s%lld/%lld",
                                   n_absent ? ", " : "", (long long)k, (long long)n_slices);
        n_absent++;
        owner_pick pk = {owner, NULL, -1, replicates, k, n_slices};
        explained += runs_describe(n_runs, pick_owner, &pk, list, sizeof list);
      }
      if (n_absent)
        say(o, "missing slice%s %s%s (no part given is %s)",
                n_absent == 1 ? "" : "s", absent, n_absent > 16 ? " and more" : "",
                n_absent == 1 ? "that slice" : "those slices");
      for (int p = 0; p < o->n_parts; p++) {
        const fmt_info *info = fmt_in_info(in[p]);
        owner_pick pk = {owner, NULL, -1, replicates, info->slice_index, info->slice_count};
        int64_t n = runs_describe(n_runs, pick_owner, &pk, list, sizeof list);
        if (!n) continue;
        explained += n;
        say(o, "%s (slice %lld/%lld) lacks %lld of its runs (%s): it was "
                "interrupted; finish it with: %s --resume",
                o->parts[p], (long long)info->slice_index, (long long)info->slice_count,
                (long long)n, list,
                info->command_line && info->command_line[0] ? info->command_line
                                                            : "the same 'stormsweep run'");
      }
    }
    if (explained < missing) {
      owner_pick pk = {owner, NULL, -1, replicates, 0, 0};
      runs_describe(n_runs, pick_owner, &pk, list, sizeof list);
      say(o, "%lld of the sweep's %lld runs are in no part: %s",
              (long long)missing, (long long)n_runs, list);
    }
    problems++;
  }
  return problems ? -1 : 0;
}

/* Free space for about `need` bytes in the directory of path. */
static int merge_space_check(const fmt_merge_opts *o, const char *path, double need) {
  char *copy = strdup(path);
  struct statvfs vfs;
  int rc = 0;
  const char *dir = copy ? dirname(copy) : NULL;
  if (dir && statvfs(dir, &vfs) == 0) {
    double avail = (double)vfs.f_bavail * (double)vfs.f_frsize;
    if (need > avail) {
      say(o, "not enough disk space for %s (in %s): the merged file needs "
              "about %.1f MB and %.1f MB is free (--no-space-check skips this check)",
              path, dir, need / 1e6, avail / 1e6);
      rc = -1;
    }
  }
  free(copy);
  return rc;
}

/* Copies every run from its owner part. Returns 0, 1 (writing failed), 2
 * (a part could not be read) or 3 (o->stop was raised). */
static int copy_runs(fmt_in **in, const fmt_merge_opts *o, const int32_t *owner, int64_t n_runs,
                     fmt_out *out, char *err, size_t errlen) {
  int64_t *runs = malloc(MERGE_BLOCK * sizeof *runs);
  fmt_run_record *recs = malloc(MERGE_BLOCK * sizeof *recs);
  uint8_t *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  if (!runs || !recs) {
    swp_seterr(err, errlen, "out of memory");
    rc = 1;
  }
  for (int64_t r0 = 0; r0 < n_runs && !rc; r0 += MERGE_BLOCK) {
    int64_t r1 = r0 + MERGE_BLOCK < n_runs ? r0 + MERGE_BLOCK : n_runs;
    for (int p = 0; p < o->n_parts && !rc; p++) {
      size_t n = 0;
      for (int64_t r = r0; r < r1; r++)
        if (owner[r] == p) runs[n++] = r;
      if (!n) continue;
      if (fmt_in_read_records(in[p], runs, n, recs, err, errlen)) {
        rc = 2;
        break;
      }
      for (size_t i = 0; i < n && !rc; i++) {
        if (o->stop && *o->stop) rc = 3;
        else if (fmt_in_read_chunks(in[p], runs[i], &buf, &cap, &recs[i], err, errlen)) rc = 2;
        else if (fmt_out_write_run(out, &recs[i], err, errlen)) rc = 1;
      }
    }
  }
  free(runs);
  free(recs);
  free(buf);
  return rc;
}

/* Opens every part: readable, not the output, not given twice, of one
 * sweep with the sweep's own shape. 0, or -1 after a message. */
static int parts_open(const fmt_merge_opts *o, fmt_in **in) {
  char err[1024];
  struct stat out_st;
  int out_exists = stat(o->output, &out_st) == 0;
  for (int p = 0; p < o->n_parts; p++) {
    struct stat ps;
    if (stat(o->parts[p], &ps) == 0) {
      if (out_exists && ps.st_dev == out_st.st_dev && ps.st_ino == out_st.st_ino) {
        say(o, "%s is one of the parts; choose another -o", o->output);
        return -1;
      }
      for (int q = 0; q < p; q++) {
        struct stat qs;
        if (stat(o->parts[q], &qs) == 0 && qs.st_dev == ps.st_dev && qs.st_ino == ps.st_ino) {
          say(o, "%s and %s are the same file, given twice", o->parts[q], o->parts[p]);
          return -1;
        }
      }
    }
    if (fmt_in_open(&in[p], o->parts[p], err, sizeof err)) {
      say(o, "%s", err);
      return -1;
    }
    const fmt_info *ip = fmt_in_info(in[p]);
    if (ip->n_runs != ip->n_points * ip->replicates) {
      /* Rows appended by refine: merge joins the slices of one sweep. */
      say(o, "%s holds %lld runs appended by refine; merge joins slices of a sweep before "
             "refine (refine the merged file)",
          o->parts[p], (long long)(ip->n_runs - ip->n_points * ip->replicates));
      return -1;
    }
    if (p && parts_consistent(in, o, p)) return -1;
  }
  return 0;
}

/* The coverage check with its memory bound: owner[r] is the part holding
 * run r. 0, or -1 after a message. */
static int parts_cover(const fmt_merge_opts *o, fmt_in **in, int32_t **owner) {
  const fmt_info *i0 = fmt_in_info(in[0]);
  /* The analysis reader's bound, before anything is allocated: what is
   * held per run must fit in a quarter of memory (the parts' /runs were
   * checked to store every row they declare). */
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
  double need = (double)i0->n_runs * (double)(sizeof **owner + 1);
  if (phys > 0 && need > phys / 4) {
    say(o, "%s: %lld runs need about %.1f GB to merge, more than a quarter of this machine's "
           "%.1f GB",
        o->parts[0], (long long)i0->n_runs, need / (1024.0 * 1024.0 * 1024.0),
        phys / (1024.0 * 1024.0 * 1024.0));
    return -1;
  }
  *owner = malloc((size_t)i0->n_runs * sizeof **owner);
  uint8_t *done = malloc((size_t)i0->n_runs);
  int rc = 0;
  if (!*owner || !done) {
    say(o, "out of memory for %lld runs", (long long)i0->n_runs);
    rc = -1;
  } else if (coverage_check(in, o, *owner, done)) {
    say(o, "nothing written");
    rc = -1;
  }
  free(done);
  return rc;
}

/* /timing of the merged file: the parts' sums (CPU-like totals). */
static void merged_timing(const fmt_merge_opts *o, fmt_in **in, fmt_timing *t,
                          const char *now) {
  memset(t, 0, sizeof *t);
  const char *first = NULL, *last = NULL;
  for (int p = 0; p < o->n_parts; p++) {
    const fmt_info *info = fmt_in_info(in[p]);
    t->wall_s += info->wall_s;
    t->simulate_s += info->simulate_s;
    t->encode_s += info->encode_s;
    t->write_s += info->write_s;
    if (info->threads > t->threads) t->threads = info->threads;
    if (info->started && (!first || strcmp(info->started, first) < 0)) first = info->started;
    if (info->finished && (!last || strcmp(info->finished, last) > 0)) last = info->finished;
  }
  t->runs_done = fmt_in_info(in[0])->n_runs;
  t->started = first ? first : now;
  t->finished = last ? last : now;
  t->sessions = o->n_parts;
}

int fmt_merge(const fmt_merge_opts *o, int *stopped, char *err_out, size_t err_len) {
  *stopped = 0;
  if (err_out && err_len) err_out[0] = 0;
  /* Messages are ours: no HDF5 error-stack dumps for hostile parts. */
  H5E_auto2_t old_func;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int rc;

  fmt_in **in = calloc((size_t)o->n_parts, sizeof *in);
  int32_t *owner = NULL;
  swp_sweep sw;
  swp_sweep_init(&sw);
  const char *tmp = NULL;
  fmt_outfile of;
  memset(&of, 0, sizeof of);
  of.fd = -1;
  fmt_out *out = NULL;
  fmt_lock *lock = NULL;
  char err[1024];
  rc = 2;
  if (!in) {
    say(o, "out of memory");
    goto done;
  }

  if (parts_open(o, in)) goto done;
  const fmt_info *i0 = fmt_in_info(in[0]);

  /* ---- the sweep, re-derived from its text ---- */
  if (fmt_in_sweep(in[0], &sw, err, sizeof err)) {
    say(o, "%s", err);
    goto done;
  }

  /* ---- coverage ---- */
  if (parts_cover(o, in, &owner)) goto done;

  /* ---- the output ---- */
  struct stat out_st;
  int out_exists = stat(o->output, &out_st) == 0;
  if (out_exists && !o->force) {
    say(o, "%s: already exists (use --force to overwrite)",
            o->output);
    goto done;
  }
  if (out_exists && S_ISDIR(out_st.st_mode)) {
    say(o, "%s: is a directory", o->output);
    goto done;
  }
  if (!o->no_space_check) {
    double need = 1024.0 * 1024.0 + 300.0 * (double)i0->n_runs;
    for (int p = 0; p < o->n_parts; p++) need += fmt_in_ticks_bytes(in[p]);
    if (merge_space_check(o, o->output, need)) goto done;
  }
  if (fmt_lock_acquire(&lock, o->output, err, sizeof err)) {
    say(o, "%s", err);
    rc = 1;
    goto done;
  }
  if (fmt_outfile_begin(&of, o->output, FMT_OUTFILE_FORCE, err, sizeof err)) {
    say(o, "%s", err);
    rc = 1;
    goto done;
  }
  tmp = fmt_outfile_tmp_name(&of);
  struct stat tmp_st;
  if (lstat(tmp, &tmp_st) != 0) {
    say(o, "%s: %s", tmp, strerror(errno));
    rc = 1;
    goto done;
  }
  /* Truncating is safe: the name is ours, random, and only just created. */
  int crc = fmt_out_create_flags(&out, tmp, &sw, o->command_line ? o->command_line : "",
                                   FMT_OUT_FORCE | FMT_OUT_NO_JOURNAL | FMT_OUT_NO_LOCK |
                                       FMT_OUT_IN_PLACE,
                                   err, sizeof err);
  if (crc) {
    say(o, "%s", err);
    rc = 1;
    goto done;
  }
  struct stat now_st;
  if (lstat(tmp, &now_st) != 0 || now_st.st_dev != tmp_st.st_dev ||
      now_st.st_ino != tmp_st.st_ino) {
    say(o, "%s: replaced by someone else while merging; stopped",
            tmp);
    fmt_out_close(out, NULL, NULL, 0);
    out = NULL;
    rc = 1;
    goto done;
  }
  char started[32];
  fmt_time_iso8601(started, sizeof started);
  int copy_rc = copy_runs(in, o, owner, i0->n_runs, out, err, sizeof err);
  if (copy_rc) {
    if (copy_rc == 3) *stopped = 1;
    else say(o, "%s", err);
    fmt_out_close(out, NULL, NULL, 0);
    out = NULL;
    say(o, "nothing written");
    rc = copy_rc == 3 ? 1 : copy_rc;
    goto done;
  }
  fmt_timing t;
  merged_timing(o, in, &t, started);
  int close_rc = fmt_out_close(out, &t, err, sizeof err);
  out = NULL;
  if (close_rc) {
    say(o, "%s", err);
    rc = 1;
    goto done;
  }
  /* close synced the file; the rename syncs the directory. */
  if (fmt_outfile_commit(&of, err, sizeof err)) {
    say(o, "%s", err);
    rc = 1;
    goto done;
  }
  fmt_journal_remove(o->output);
  if (o->runs_merged) *o->runs_merged = i0->n_runs;
  rc = 0;
done:
  if (out) fmt_out_close(out, NULL, NULL, 0);
  fmt_outfile_abandon(&of);
  fmt_lock_release(lock);
  for (int p = 0; in && p < o->n_parts; p++) fmt_in_close(in[p]);
  free(in);
  free(owner);
  swp_sweep_free(&sw);
  H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
  if (rc && err_out && !err_out[0]) swp_seterr(err_out, err_len, "%s: not merged", o->output);
  return rc;
}
