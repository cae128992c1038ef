/*
 * testutil.c — the helpers of testutil.h. The fixture builder goes through
 * the format library's public API only (fmt.h), as the driver does: a run's
 * metrics are padded to the file's ticks with -1, encoded with
 * fmt_chunk_encode and handed to fmt_out_write_run with the summary, so the
 * file it makes is one `stormsweep run` could have written (journal and
 * lock included) and every reader and checker treats it as such.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eng_config.h"

/* ---- assertions ---- */

void tu_assert_near(double actual, double expected, double tol, const char *what,
                    const char *file, int line) {
  if (fabs(actual - expected) <= tol) return;
  print_error("%s = %.17g, expected %.17g (tolerance %g)\n", what, actual, expected, tol);
  _fail(file, line);
}

void tu_assert_contains(const char *haystack, const char *needle, const char *file, int line) {
  if (haystack && strstr(haystack, needle)) return;
  print_error("expected to find \"%s\" in:\n%s\n", needle, haystack ? haystack : "(null)");
  _fail(file, line);
}

/* ---- temporary files ---- */

int tu_tmpdir_make(char *dir, size_t len, const char *tag) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  int n = snprintf(dir, len, "%s/stormsweep_%s.XXXXXX", base, tag);
  if (n < 0 || (size_t)n >= len) {
    fprintf(stderr, "tu_tmpdir_make: %s/stormsweep_%s.XXXXXX is too long\n", base, tag);
    return -1;
  }
  if (!mkdtemp(dir)) {
    fprintf(stderr, "tu_tmpdir_make: %s: %s\n", dir, strerror(errno));
    return -1;
  }
  return 0;
}

int tu_tmpdir_remove(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (n < 0 || (size_t)n >= sizeof path || lstat(path, &st)) {
      rc = -1;
      continue;
    }
    if (S_ISDIR(st.st_mode) ? tu_tmpdir_remove(path) : unlink(path)) rc = -1;
  }
  closedir(d);
  if (rmdir(dir)) rc = -1;
  if (rc) fprintf(stderr, "tu_tmpdir_remove: could not remove all of %s\n", dir);
  return rc;
}

void tu_path(char *buf, size_t len, const char *dir, const char *name) {
  int n = snprintf(buf, len, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= len) fail_msg("path %s/%s does not fit %zu bytes", dir, name, len);
  unlink(buf);
}

/* ---- sweeps ---- */

void tu_config_apply(eng_config *c, const char *sets) {
  char buf[4096], err[512];
  if (strlen(sets) >= sizeof buf) fail_msg("tu_config_apply: %zu bytes of settings", strlen(sets));
  snprintf(buf, sizeof buf, "%s", sets);
  char *save = NULL;
  for (char *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) fail_msg("tu_config_apply: '%s' is not KEY=VALUE", kv);
    *eq = 0;
    if (eng_config_set(c, kv, eq + 1, err, sizeof err)) fail_msg("%s: %s", kv, err);
  }
  if (eng_config_validate(c, err, sizeof err)) fail_msg("%s: %s", sets, err);
}

void tu_sweep_load(swp_sweep *sw, const char *text) {
  char err[1024] = "";
  swp_sweep_init(sw);
  int rc = swp_sweep_parse_string(sw, text, "t.ini", err, sizeof err);
  if (!rc) rc = swp_sweep_check(sw, err, sizeof err);
  if (rc) print_error("%s\n", err);
  assert_int_equal(rc, 0);
}

/* ---- the fixture builder ---- */

struct tu_file {
  swp_sweep sw;
  fmt_out *out;
  size_t ticks;           /* the file's ticks (sw.ticks) */
  size_t bound;           /* fmt_chunk_bound(ticks) */
  fmt_chunk_encoder *encoder;
  int32_t *values;        /* one metric of one run, ticks long */
  uint8_t *chunks;        /* ENG_M_COUNT x bound */
  int64_t written;
};

tu_file *tu_file_create(const char *path, const char *sweep_text, const char *command_line) {
  tu_file *f = calloc(1, sizeof *f);
  assert_non_null(f);
  tu_sweep_load(&f->sw, sweep_text);
  if (f->sw.shard_queues > 0 || f->sw.services > 0)
    fail_msg("tu_file_create: sweeps with record_shard_queues = on or services are not supported");
  char err[1024] = "";
  int rc = fmt_out_create(&f->out, path, &f->sw, command_line ? command_line : "stormsweep test",
                          1, err, sizeof err);
  if (rc) print_error("tu_file_create: %s\n", err);
  assert_int_equal(rc, 0);
  f->ticks = (size_t)f->sw.ticks;
  f->bound = fmt_chunk_bound(f->ticks);
  f->encoder = fmt_chunk_encoder_create(f->ticks);
  f->values = malloc(f->ticks * sizeof *f->values);
  f->chunks = malloc(ENG_M_COUNT * f->bound);
  assert_true(f->encoder && f->values && f->chunks);
  return f;
}

const swp_sweep *tu_file_sweep(const tu_file *f) { return &f->sw; }

void tu_file_write_run(tu_file *f, const tu_run *run) {
  const swp_sweep *sw = &f->sw;
  if (run->point < 0 || run->point >= sw->n_points || run->replicate < 0 ||
      run->replicate >= sw->replicates)
    fail_msg("tu_file_write_run: no run (point %lld, replicate %d) in a sweep of %lld x %lld",
             (long long)run->point, run->replicate, (long long)sw->n_points,
             (long long)sw->replicates);
  char err[1024] = "";
  int32_t ticks = run->ticks;
  if (ticks == 0) {
    eng_config cfg;
    assert_int_equal(swp_sweep_point_config(sw, run->point, &cfg, err, sizeof err), 0);
    ticks = eng_config_ticks(&cfg);
  }
  assert_in_range(ticks, 1, f->ticks);
  fmt_run_record rec;
  memset(&rec, 0, sizeof rec);
  rec.point = run->point;
  rec.replicate = run->replicate;
  rec.run = run->point * sw->replicates + run->replicate;
  rec.ticks = ticks;
  rec.summary = run->summary;
  if (rec.summary.seed == 0)
    rec.summary.seed = swp_run_seed(sw->seed, sw->crn, run->point, run->replicate);
  for (int m = 0; m < ENG_M_COUNT; m++) {
    for (size_t t = 0; t < f->ticks; t++) {
      int32_t v = -1; /* past the run's own ticks: the storage fill value */
      if (t < (size_t)ticks)
        v = run->series ? run->series(run->user, run->point, run->replicate, (eng_metric)m,
                                      (int32_t)t)
                        : 0;
      f->values[t] = v;
    }
    uint8_t *dst = f->chunks + (size_t)m * f->bound;
    rec.chunk[m] = dst;
    rec.chunk_size[m] = fmt_chunk_encode(f->encoder, f->values, dst, f->bound);
    assert_true(rec.chunk_size[m] > 0);
  }
  rec.wall_s = 0.001;
  int rc = fmt_out_write_run(f->out, &rec, err, sizeof err);
  if (rc) print_error("tu_file_write_run: %s\n", err);
  assert_int_equal(rc, 0);
  f->written++;
}

void tu_file_close(tu_file *f) {
  fmt_timing timing = {.wall_s = 0.001 * (double)f->written, .threads = 1,
                       .runs_done = f->written, .started = "2024-01-01T00:00:00Z",
                       .finished = "2024-01-01T00:00:01Z"};
  char err[1024] = "";
  int rc = fmt_out_close(f->out, &timing, err, sizeof err);
  if (rc) print_error("tu_file_close: %s\n", err);
  fmt_chunk_encoder_destroy(f->encoder);
  free(f->values);
  free(f->chunks);
  swp_sweep_free(&f->sw);
  free(f);
  assert_int_equal(rc, 0);
}

eng_summary tu_summary(int32_t outcome, int32_t passed_slo, double recovery_ms,
                       double amplification, double goodput_during, double goodput_after) {
  eng_summary s;
  memset(&s, 0, sizeof s);
  s.outcome = outcome;
  s.passed_slo = passed_slo;
  s.recovery_ms = recovery_ms;
  s.amplification = s.amplification_after = amplification;
  s.goodput_during = goodput_during;
  s.goodput_after = goodput_after;
  s.goodput_baseline = s.baseline_goodput_ratio = s.late_goodput = 1;
  s.baseline_amplification = s.late_amplification = 1;
  s.collapse_ms = s.collapse_watch_ms = s.return_ms = s.drain_ms = NAN;
  return s;
}
