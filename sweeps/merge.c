/*
 * merge.c — the `merge` command: joins the result files of a sweep's slices
 * (`run --slice K/N`, e.g. one per batch-array task) into the file a single
 * run of the whole sweep would have written.
 *
 * Every part is opened read-only and its layout checked (h5out.c's reader:
 * a truncated, foreign or malformed file is refused with a message, exit 2).
 * The parts must come from one sweep — same effective sweep_text, master
 * seed, tool and format version, shapes — and together hold every run
 * exactly once, judged by their done flags: a run held by two parts, or by
 * none, is an error that names the runs, the parts and, for slice files,
 * which slices are missing, given twice or unfinished. All of this is
 * decided before anything is written, so a refused merge leaves no file.
 *
 * The output is then built like a fresh run: the sweep is re-parsed from the
 * parts' sweep_text and swp_h5out_create writes /points, /axes, /run,
 * /time_ms and the attributes exactly as `run` does; each run's /runs row
 * (checked against its index and seed) and /timing values are copied, and
 * its 19 /ticks chunks are copied raw — H5Dread_chunk to H5Dwrite_chunk, still
 * compressed, so the merge costs disk bandwidth, not deflate time. The file
 * is written as OUT.partial-XXXXXX, a name mkstemp made up and created
 * beside OUT (O_EXCL: never a file or symbolic link somebody left there),
 * and renamed over OUT only when complete, so a failed merge never leaves a
 * half file, never damages an existing OUT, and removes only the file it
 * created. SIGINT and SIGTERM remove OUT.partial-XXXXXX too (the handler
 * only calls unlink, then dies of the signal). The merged file is synced
 * before the rename and its directory after it. The merge holds OUT's
 * writer lock (writelock.h) throughout, and a stale OUT.journal — of an
 * earlier, unfinished `run -o OUT` — is removed once OUT is replaced: it
 * describes a file that no longer exists.
 */
#include <errno.h>
#include <hdf5.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "journal.h"
#include "swp_internal.h"
#include "writelock.h"

#define MERGE_BLOCK 4096 /* runs per pass over the parts */

/* What the SIGINT/SIGTERM handler removes: the only state a handler may
 * touch, hence file scope. Set before the partial file is created. */
static char partial_path[4096];
static volatile sig_atomic_t partial_armed;

static void on_merge_signal(int sig) {
  if (partial_armed) unlink(partial_path); /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}
#define LIST_MAX 6       /* runs named in a message */

typedef struct merge_args {
  const char **parts;
  int n_parts;
  const char *output;
  int force, quiet, help, no_space_check;
} merge_args;

static void merge_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep merge PART.h5... -o FILE [--force] [--no-space-check] [--quiet]\n\n"
          "Joins the result files of one sweep's slices ('stormsweep run --slice K/N') into\n"
          "FILE, the file a single run of the whole sweep would have written: its result\n"
          "datasets (/runs, /points, /points_text, /axes, /run, /time_ms, /ticks) compare\n"
          "equal under h5diff. /ticks chunks are copied still compressed.\n\n"
          "The parts must hold the same sweep (effective sweep text, master seed, version)\n"
          "and together every run exactly once: a missing, duplicated or unfinished slice is\n"
          "named, and nothing is written. Any result files of one sweep whose done runs\n"
          "partition it can be merged, not only slices.\n\n"
          "  -o, --output FILE    the merged file (required); never overwritten unless --force\n"
          "  -f, --force          overwrite an existing FILE (only once the merge succeeded)\n"
          "  --no-space-check     skip the check that FILE's file system has room\n"
          "  -q, --quiet          no summary line\n"
          "  -h, --help           this help\n\n"
          "Exit status: 0 merged, 1 writing FILE failed, 2 bad usage or parts.\n"
          "Example (a batch array of 8 tasks, then one merge):\n"
          "  stormsweep run sweep.ini --slice $TASK/8 -o part-$TASK.h5   # TASK = 0..7\n"
          "  stormsweep merge part-*.h5 -o sweep.h5\n");
}

static int merge_args_parse(int argc, char **argv, merge_args *ma) {
  memset(ma, 0, sizeof *ma);
  ma->parts = calloc((size_t)argc + 1, sizeof *ma->parts);
  if (!ma->parts) {
    fprintf(stderr, "stormsweep merge: out of memory\n");
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      ma->help = 1;
      return 0;
    }
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (i + 1 >= argc || !argv[i + 1][0]) {
        fprintf(stderr, "stormsweep merge: option '%s' needs a value\n", a);
        return 2;
      }
      ma->output = argv[++i];
      continue;
    }
    if (!strncmp(a, "--output=", 9) || (!strncmp(a, "-o", 2) && a[2])) {
      ma->output = a[1] == 'o' ? a + 2 : a + 9;
      if (!*ma->output) {
        fprintf(stderr, "stormsweep merge: option '--output' needs a value\n");
        return 2;
      }
      continue;
    }
    if (!strcmp(a, "--force") || !strcmp(a, "-f")) {
      ma->force = 1;
      continue;
    }
    if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      ma->quiet = 1;
      continue;
    }
    if (!strcmp(a, "--no-space-check")) {
      ma->no_space_check = 1;
      continue;
    }
    if (a[0] == '-' && a[1]) {
      fprintf(stderr, "stormsweep merge: unknown option '%s' (see 'stormsweep merge --help')\n",
              a);
      return 2;
    }
    ma->parts[ma->n_parts++] = a;
  }
  if (!ma->n_parts) {
    fprintf(stderr, "stormsweep merge: no part files given (see 'stormsweep merge --help')\n");
    return 2;
  }
  if (!ma->output) {
    fprintf(stderr, "stormsweep merge: -o FILE is required (the merged result file)\n");
    return 2;
  }
  return 0;
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

static void slice_name(const swp_h5info *in, char *buf, size_t len) {
  if (in->slice_count)
    snprintf(buf, len, "slice %lld/%lld", (long long)in->slice_index, (long long)in->slice_count);
  else
    snprintf(buf, len, "whole sweep");
}

/* Checks part i against part 0. */
static int parts_consistent(swp_h5in **in, const merge_args *ma, int i) {
  const swp_h5info *a = swp_h5in_info(in[0]), *b = swp_h5in_info(in[i]);
  const char *x = ma->parts[0], *y = ma->parts[i];
  if (strcmp(a->tool_version, b->tool_version)) {
    fprintf(stderr,
            "stormsweep merge: %s was written by stormsweep %s, %s by %s: versions may simulate "
            "differently, so their runs cannot be merged\n",
            x, a->tool_version, y, b->tool_version);
    return -1;
  }
  if (a->master_seed != b->master_seed) {
    fprintf(stderr,
            "stormsweep merge: %s and %s come from different sweeps: master seed %llu vs %llu\n",
            x, y, (unsigned long long)a->master_seed, (unsigned long long)b->master_seed);
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
    fprintf(stderr,
            "stormsweep merge: %s and %s come from different sweeps: line %d of their effective "
            "sweep text is '%.*s' vs '%.*s'\n",
            x, y, line, lp > 100 ? 100 : lp, p, lq > 100 ? 100 : lq, q);
    return -1;
  }
  if (a->n_runs != b->n_runs || a->n_points != b->n_points || a->replicates != b->replicates ||
      a->ticks != b->ticks || a->tick_ms != b->tick_ms) {
    fprintf(stderr,
            "stormsweep merge: %s and %s have different shapes (%lld runs x %d ticks vs %lld x "
            "%d)\n",
            x, y, (long long)a->n_runs, a->ticks, (long long)b->n_runs, b->ticks);
    return -1;
  }
  if (a->slice_count && b->slice_count && a->slice_count != b->slice_count) {
    fprintf(stderr,
            "stormsweep merge: %s is slice %lld/%lld but %s is slice %lld/%lld: parts of one "
            "slicing have the same N\n",
            x, (long long)a->slice_index, (long long)a->slice_count, y,
            (long long)b->slice_index, (long long)b->slice_count);
    return -1;
  }
  return 0;
}

/* The coverage check: each run in exactly one part. Fills owner (part index
 * per run). Prints every problem; returns 0 or -1. */
static int coverage_check(swp_h5in **in, const merge_args *ma, int32_t *owner, uint8_t *done) {
  const swp_h5info *i0 = swp_h5in_info(in[0]);
  int64_t n_runs = i0->n_runs, replicates = i0->replicates;
  for (int64_t r = 0; r < n_runs; r++) owner[r] = -1;
  int problems = 0;
  char list[256], err[1024];
  for (int p = 0; p < ma->n_parts; p++) {
    if (swp_h5in_read_done(in[p], done, err, sizeof err)) {
      fprintf(stderr, "stormsweep merge: %s\n", err);
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
      slice_name(swp_h5in_info(in[q]), sa, sizeof sa);
      slice_name(swp_h5in_info(in[p]), sb, sizeof sb);
      int same = !strcmp(sa, sb);
      fprintf(stderr,
              "stormsweep merge: %lld run%s (%s) %s in both %s (%s) and %s (%s)%s: each run must "
              "come from exactly one part\n",
              (long long)n, n == 1 ? "" : "s", list, n == 1 ? "is" : "are", ma->parts[q], sa,
              ma->parts[p], sb, same && i0->slice_count ? ": that slice is given twice" : "");
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
    for (int p = 0; p < ma->n_parts; p++) {
      const swp_h5info *info = swp_h5in_info(in[p]);
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
        for (int p = 0; p < ma->n_parts && !present; p++)
          present = swp_h5in_info(in[p])->slice_index == k;
        if (present) continue;
        if (n_absent < 16 && used < sizeof absent)
          used += (size_t)snprintf(absent + used, sizeof absent - used, "%s%lld/%lld",
                                   n_absent ? ", " : "", (long long)k, (long long)n_slices);
        n_absent++;
        owner_pick pk = {owner, NULL, -1, replicates, k, n_slices};
        explained += runs_describe(n_runs, pick_owner, &pk, list, sizeof list);
      }
      if (n_absent)
        fprintf(stderr, "stormsweep merge: missing slice%s %s%s (no part given is %s)\n",
                n_absent == 1 ? "" : "s", absent, n_absent > 16 ? " and more" : "",
                n_absent == 1 ? "that slice" : "those slices");
      for (int p = 0; p < ma->n_parts; p++) {
        const swp_h5info *info = swp_h5in_info(in[p]);
        owner_pick pk = {owner, NULL, -1, replicates, info->slice_index, info->slice_count};
        int64_t n = runs_describe(n_runs, pick_owner, &pk, list, sizeof list);
        if (!n) continue;
        explained += n;
        fprintf(stderr,
                "stormsweep merge: %s (slice %lld/%lld) lacks %lld of its runs (%s): it was "
                "interrupted; finish it with: %s --resume\n",
                ma->parts[p], (long long)info->slice_index, (long long)info->slice_count,
                (long long)n, list,
                info->command_line && info->command_line[0] ? info->command_line
                                                            : "the same 'stormsweep run'");
      }
    }
    if (explained < missing) {
      owner_pick pk = {owner, NULL, -1, replicates, 0, 0};
      runs_describe(n_runs, pick_owner, &pk, list, sizeof list);
      fprintf(stderr, "stormsweep merge: %lld of the sweep's %lld runs are in no part: %s\n",
              (long long)missing, (long long)n_runs, list);
    }
    problems++;
  }
  return problems ? -1 : 0;
}

/* Free space for about `need` bytes in the directory of path. */
static int merge_space_check(const char *path, double need) {
  char *copy = strdup(path);
  struct statvfs vfs;
  int rc = 0;
  const char *dir = copy ? dirname(copy) : NULL;
  if (dir && statvfs(dir, &vfs) == 0) {
    double avail = (double)vfs.f_bavail * (double)vfs.f_frsize;
    if (need > avail) {
      fprintf(stderr,
              "stormsweep merge: not enough disk space for %s (in %s): the merged file needs "
              "about %.1f MB and %.1f MB is free (--no-space-check skips this check)\n",
              path, dir, need / 1e6, avail / 1e6);
      rc = -1;
    }
  }
  free(copy);
  return rc;
}

/* Copies every run from its owner part. Returns 0, 1 (writing failed) or 2
 * (a part could not be read). */
static int copy_runs(swp_h5in **in, const merge_args *ma, const int32_t *owner, int64_t n_runs,
                     swp_h5out *out, char *err, size_t errlen) {
  int64_t *runs = malloc(MERGE_BLOCK * sizeof *runs);
  swp_run_record *recs = malloc(MERGE_BLOCK * sizeof *recs);
  uint8_t *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  if (!runs || !recs) {
    swp_seterr(err, errlen, "out of memory");
    rc = 1;
  }
  for (int64_t r0 = 0; r0 < n_runs && !rc; r0 += MERGE_BLOCK) {
    int64_t r1 = r0 + MERGE_BLOCK < n_runs ? r0 + MERGE_BLOCK : n_runs;
    for (int p = 0; p < ma->n_parts && !rc; p++) {
      size_t n = 0;
      for (int64_t r = r0; r < r1; r++)
        if (owner[r] == p) runs[n++] = r;
      if (!n) continue;
      if (swp_h5in_read_records(in[p], runs, n, recs, err, errlen)) {
        rc = 2;
        break;
      }
      for (size_t i = 0; i < n && !rc; i++) {
        if (swp_h5in_read_chunks(in[p], runs[i], &buf, &cap, &recs[i], err, errlen)) rc = 2;
        else if (swp_h5out_write_run(out, &recs[i], err, errlen)) rc = 1;
      }
    }
  }
  free(runs);
  free(recs);
  free(buf);
  return rc;
}

int cmd_merge(int argc, char **argv) {
  H5dont_atexit(); /* as in cmd_run: a failed output is abandoned, not flushed */
  merge_args ma;
  int rc = merge_args_parse(argc, argv, &ma);
  if (rc || ma.help) {
    if (ma.help) merge_usage(stdout);
    free(ma.parts);
    return rc;
  }
  /* Messages are ours: no HDF5 error-stack dumps for hostile parts. */
  H5E_auto2_t old_func;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

  swp_h5in **in = calloc((size_t)ma.n_parts, sizeof *in);
  int32_t *owner = NULL;
  uint8_t *done = NULL;
  swp_sweep sw;
  swp_sweep_init(&sw);
  char *tmp = NULL;
  swp_h5out *out = NULL;
  swp_wlock *lock = NULL;
  char err[1024];
  rc = 2;
  if (!in) {
    fprintf(stderr, "stormsweep merge: out of memory\n");
    goto done;
  }

  /* ---- the parts: readable, of one sweep, not the same file twice ---- */
  struct stat out_st;
  int out_exists = stat(ma.output, &out_st) == 0;
  for (int p = 0; p < ma.n_parts; p++) {
    struct stat ps;
    if (stat(ma.parts[p], &ps) == 0) {
      if (out_exists && ps.st_dev == out_st.st_dev && ps.st_ino == out_st.st_ino) {
        fprintf(stderr, "stormsweep merge: %s is one of the parts; choose another -o\n",
                ma.output);
        goto done;
      }
      for (int q = 0; q < p; q++) {
        struct stat qs;
        if (stat(ma.parts[q], &qs) == 0 && qs.st_dev == ps.st_dev && qs.st_ino == ps.st_ino) {
          fprintf(stderr, "stormsweep merge: %s and %s are the same file, given twice\n",
                  ma.parts[q], ma.parts[p]);
          goto done;
        }
      }
    }
    if (swp_h5in_open(&in[p], ma.parts[p], err, sizeof err)) {
      fprintf(stderr, "stormsweep merge: %s\n", err);
      goto done;
    }
    const swp_h5info *ip = swp_h5in_info(in[p]);
    if (ip->n_runs != ip->n_points * ip->replicates) {
      /* Rows appended by refine: merge joins the slices of one sweep. */
      fprintf(stderr, "stormsweep merge: %s holds %lld runs appended by refine; merge joins "
                      "slices of a sweep before refine (refine the merged file)\n",
              ma.parts[p], (long long)(ip->n_runs - ip->n_points * ip->replicates));
      goto done;
    }
    if (p && parts_consistent(in, &ma, p)) goto done;
  }
  const swp_h5info *i0 = swp_h5in_info(in[0]);

  /* ---- the sweep, re-derived from its text ---- */
  char source[512];
  snprintf(source, sizeof source, "%s (its sweep_text)", ma.parts[0]);
  if (swp_sweep_parse_string(&sw, i0->sweep_text, source, err, sizeof err) ||
      swp_sweep_check(&sw, err, sizeof err)) {
    fprintf(stderr, "stormsweep merge: %s\n", err);
    goto done;
  }
  char *text = swp_sweep_format(&sw);
  int same = text && !strcmp(text, i0->sweep_text);
  free(text);
  if (!same || swp_sweep_runs(&sw) != i0->n_runs || sw.ticks != i0->ticks ||
      sw.seed != i0->master_seed) {
    fprintf(stderr,
            "stormsweep merge: %s: its sweep_text does not describe its own shape (%lld runs x "
            "%d ticks, seed %llu): damaged or from another tool\n",
            ma.parts[0], (long long)i0->n_runs, i0->ticks, (unsigned long long)i0->master_seed);
    goto done;
  }
  /* The merged file names the sweep's origin as the parts do. */
  free(sw.source);
  free(sw.source_text);
  sw.source = strdup(i0->sweep_source ? i0->sweep_source : "");
  sw.source_text = i0->sweep_source_text && i0->sweep_source_text[0]
                       ? strdup(i0->sweep_source_text)
                       : NULL;

  /* ---- coverage ---- */
  /* The analysis reader's bound, before anything is allocated: what is
   * held per run must fit in a quarter of memory (the parts' /runs were
   * checked to store every row they declare). */
  {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
    double need = (double)i0->n_runs * (double)(sizeof *owner + 1);
    if (phys > 0 && need > phys / 4) {
      fprintf(stderr,
              "stormsweep merge: %s: %lld runs need about %.1f GB to merge, more than a quarter "
              "of this machine's %.1f GB\n",
              ma.parts[0], (long long)i0->n_runs, need / (1024.0 * 1024.0 * 1024.0),
              phys / (1024.0 * 1024.0 * 1024.0));
      goto done;
    }
  }
  owner = malloc((size_t)i0->n_runs * sizeof *owner);
  done = malloc((size_t)i0->n_runs);
  if (!owner || !done) {
    fprintf(stderr, "stormsweep merge: out of memory for %lld runs\n", (long long)i0->n_runs);
    goto done;
  }
  if (coverage_check(in, &ma, owner, done)) {
    fprintf(stderr, "stormsweep merge: nothing written\n");
    goto done;
  }

  /* ---- the output ---- */
  if (out_exists && !ma.force) {
    fprintf(stderr, "stormsweep merge: %s: already exists (use --force to overwrite)\n",
            ma.output);
    goto done;
  }
  if (out_exists && S_ISDIR(out_st.st_mode)) {
    fprintf(stderr, "stormsweep merge: %s: is a directory\n", ma.output);
    goto done;
  }
  if (!ma.no_space_check) {
    double need = 1024.0 * 1024.0 + 300.0 * (double)i0->n_runs;
    for (int p = 0; p < ma.n_parts; p++) need += swp_h5in_ticks_bytes(in[p]);
    if (merge_space_check(ma.output, need)) goto done;
  }
  if (swp_wlock_acquire(&lock, ma.output, err, sizeof err)) {
    fprintf(stderr, "stormsweep merge: %s\n", err);
    rc = 1;
    goto done;
  }
  tmp = malloc(strlen(ma.output) + 32);
  if (!tmp) goto done;
  sprintf(tmp, "%s.partial-XXXXXX", ma.output);
  if (strlen(tmp) >= sizeof partial_path) {
    fprintf(stderr, "stormsweep merge: %s: name too long\n", ma.output);
    goto done;
  }
  struct stat tmp_st;
  {
    /* The handler must know the name before the file exists. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_merge_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int fd = mkstemp(tmp);
    if (fd >= 0) {
      memcpy(partial_path, tmp, strlen(tmp) + 1);
      partial_armed = 1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
      fprintf(stderr, "stormsweep merge: cannot create a temporary file beside %s: %s\n",
              ma.output, strerror(errno));
      free(tmp);
      tmp = NULL;
      rc = 1;
      goto done;
    }
    /* The merged file gets the mode a plain create would give it. */
    mode_t mask = umask(0);
    umask(mask);
    int bad = fchmod(fd, 0666 & ~mask) != 0 || fstat(fd, &tmp_st) != 0;
    close(fd);
    if (bad) {
      fprintf(stderr, "stormsweep merge: %s: %s\n", tmp, strerror(errno));
      unlink(tmp);
      rc = 1;
      goto done;
    }
  }
  char *cmdline = NULL;
  {
    size_t len = 32;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    cmdline = malloc(len);
    if (cmdline) {
      strcpy(cmdline, "stormsweep");
      for (int i = 0; i < argc; i++) strcat(strcat(cmdline, " "), argv[i]);
    }
  }
  /* Truncating is safe: the name is ours, random, and only just created. */
  int crc = swp_h5out_create_flags(&out, tmp, &sw, cmdline ? cmdline : "",
                                   SWP_H5OUT_FORCE | SWP_H5OUT_NO_JOURNAL | SWP_H5OUT_NO_LOCK |
                                       SWP_H5OUT_IN_PLACE,
                                   err, sizeof err);
  free(cmdline);
  if (crc) {
    fprintf(stderr, "stormsweep merge: %s\n", err);
    unlink(tmp);
    rc = 1;
    goto done;
  }
  struct stat now_st;
  if (lstat(tmp, &now_st) != 0 || now_st.st_dev != tmp_st.st_dev ||
      now_st.st_ino != tmp_st.st_ino) {
    fprintf(stderr, "stormsweep merge: %s: replaced by someone else while merging; stopped\n",
            tmp);
    swp_h5out_close(out, NULL, NULL, 0);
    out = NULL;
    rc = 1;
    goto done;
  }
  char started[32];
  swp_time_iso8601(started, sizeof started);
  int copy_rc = copy_runs(in, &ma, owner, i0->n_runs, out, err, sizeof err);
  if (copy_rc) {
    fprintf(stderr, "stormsweep merge: %s\n", err);
    swp_h5out_close(out, NULL, NULL, 0);
    out = NULL;
    unlink(tmp);
    fprintf(stderr, "stormsweep merge: nothing written\n");
    rc = copy_rc;
    goto done;
  }
  /* /timing of the merged file: the parts' sums (CPU-like totals). */
  swp_timing t;
  memset(&t, 0, sizeof t);
  const char *first = NULL, *last = NULL;
  for (int p = 0; p < ma.n_parts; p++) {
    const swp_h5info *info = swp_h5in_info(in[p]);
    t.wall_s += info->wall_s;
    t.simulate_s += info->simulate_s;
    t.encode_s += info->encode_s;
    t.write_s += info->write_s;
    if (info->threads > t.threads) t.threads = info->threads;
    if (info->started && (!first || strcmp(info->started, first) < 0)) first = info->started;
    if (info->finished && (!last || strcmp(info->finished, last) > 0)) last = info->finished;
  }
  t.runs_done = i0->n_runs;
  t.started = first ? first : started;
  t.finished = last ? last : started;
  t.sessions = ma.n_parts;
  int close_rc = swp_h5out_close(out, &t, err, sizeof err);
  out = NULL;
  if (close_rc) {
    fprintf(stderr, "stormsweep merge: %s\n", err);
    unlink(tmp);
    rc = 1;
    goto done;
  }
  /* close synced the file; the rename syncs the directory. */
  if (swp_rename_into_place(tmp, ma.output, 1)) {
    fprintf(stderr, "stormsweep merge: renaming %s to %s: %s\n", tmp, ma.output, strerror(errno));
    unlink(tmp);
    rc = 1;
    goto done;
  }
  partial_armed = 0;
  swp_journal_remove(ma.output);
  if (!ma.quiet) {
    fprintf(stderr, "stormsweep merge: %d part%s, %lld runs -> %s\n", ma.n_parts,
            ma.n_parts == 1 ? "" : "s", (long long)i0->n_runs, ma.output);
  }
  rc = 0;
done:
  if (out) {
    swp_h5out_close(out, NULL, NULL, 0);
    if (tmp) unlink(tmp);
  }
  partial_armed = 0;
  swp_wlock_release(lock);
  for (int p = 0; in && p < ma.n_parts; p++) swp_h5in_close(in[p]);
  free(in);
  free(owner);
  free(done);
  free(tmp);
  swp_sweep_free(&sw);
  free(ma.parts);
  H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
  return rc;
}
