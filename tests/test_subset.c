/*
 * test_subset.c — running part of a sweep (driver/, format/,
 * merge.c): the slice rule (known answers, a partition, balance where plain
 * striding fails), --slice parsing, run lists; three slices merged equal to
 * one run, byte for byte in every result dataset; a sweep stopped part-way
 * and resumed equals one run; resume refuses another sweep, seed or slice;
 * a run marked done without its chunks is run again; the reader refuses
 * hostile files (not HDF5, truncated, wrong layout, absurd dimensions,
 * inconsistent rows) with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hdf5.h>
#include <math.h>
#include <unistd.h>

#include "swp_internal.h"
#include "drv_internal.h"
#include "testutil.h"

static char tmpdir[256];

static int setup_dir(void **state) {
  (void)state;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return tu_tmpdir_make(tmpdir, sizeof tmpdir, "test_subset");
}

static int teardown_dir(void **state) {
  (void)state;
  return tu_tmpdir_remove(tmpdir);
}

static void tmp_path(char *buf, size_t len, const char *name) { tu_path(buf, len, tmpdir, name); }

/* 3 points x 3 replicates of a small cluster; horizon_ms as an axis also
 * exercises runs shorter than the file's time axis. */
static const char *small_sweep = "[sweep]\n"
                                 "name = subset\n"
                                 "replicates = 3\n"
                                 "seed = 21\n"
                                 "[scenario]\n"
                                 "shards = 4\n"
                                 "surge = 1000+300\n"
                                 "brownout = 1000+300\n"
                                 "[grid]\n"
                                 "horizon_ms = 2500, 2000\n"
                                 "budget_ratio = 0.1, inf\n";

/* ---- the slice rule ---- */

static void test_slice_rule_known_answers(void **state) {
  (void)state;
  /* The rule is part of the file format of slice files: pin it. */
  const int64_t want_2_3[12] = {0, 1, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1};
  for (int64_t r = 0; r < 12; r++) {
    int64_t got = swp_slice_of(2, 3, r);
    if (got != want_2_3[r])
      print_error("run %lld: slice %lld, want %lld\n", (long long)r, (long long)got,
                  (long long)want_2_3[r]);
    assert_int_equal(got, want_2_3[r]);
  }
  const int64_t want_20_40[5] = {0, 7, 14, 25, 32}; /* runs 0, 7, 14, 21, 28 */
  for (int i = 0; i < 5; i++) assert_int_equal(swp_slice_of(20, 40, 7 * i), want_20_40[i]);
  assert_int_equal(swp_slice_of(5, 1, 17), 0);
  assert_int_equal(swp_slice_of(5, 0, 17), 0);
}

/* Cost model of the seed study: the last axis (4 values) has one expensive
 * value, the one before (5 values) too. */
static double seed_cost(int64_t r, int64_t reps) {
  int64_t p = r / reps;
  return (p % 4 == 0 ? 2.5 : 1.0) * ((p / 4) % 5 == 4 ? 1.5 : 1.0);
}

static void test_slices_partition_and_balance(void **state) {
  (void)state;
  const int64_t reps = 20, n = 240 * reps;
  const int64_t counts[] = {2, 3, 7, 16, 40, 80};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    int64_t N = counts[c];
    double *cost = calloc((size_t)N, sizeof *cost), *stride = calloc((size_t)N, sizeof *stride);
    int64_t *size = calloc((size_t)N, sizeof *size);
    for (int64_t r = 0; r < n; r++) {
      int64_t k = swp_slice_of(reps, N, r);
      assert_in_range(k, 0, N - 1);
      cost[k] += seed_cost(r, reps);
      size[k]++;
      stride[r % N] += seed_cost(r, reps);
    }
    double total = 0, worst = 0, worst_stride = 0;
    int64_t smin = n, smax = 0;
    for (int64_t k = 0; k < N; k++) {
      total += cost[k];
      if (cost[k] > worst) worst = cost[k];
      if (stride[k] > worst_stride) worst_stride = stride[k];
      if (size[k] < smin) smin = size[k];
      if (size[k] > smax) smax = size[k];
    }
    double mean = total / (double)N, ratio = worst / mean;
    if (ratio > 1.10)
      print_error("N=%lld: costliest slice %.3f x the mean (plain striding %.3f)\n", (long long)N,
                  ratio, worst_stride / mean);
    assert_true(ratio <= 1.10);
    /* Sizes stay close to n/N (a few runs apart). */
    if (smax - smin > 8)
      print_error("N=%lld: sizes %lld..%lld\n", (long long)N, (long long)smin, (long long)smax);
    assert_true(smax - smin <= 8);
    if (N == 40 || N == 80) assert_true(worst_stride / mean > 1.2); /* the case we fix */
    free(cost);
    free(stride);
    free(size);
  }
}

static void test_slice_parse(void **state) {
  (void)state;
  int64_t k = -1, n = -1;
  char err[256];
  assert_int_equal(swp_slice_parse("0/4", &k, &n, err, sizeof err), 0);
  assert_int_equal(k, 0);
  assert_int_equal(n, 4);
  assert_int_equal(swp_slice_parse("3/4", &k, &n, err, sizeof err), 0);
  assert_int_equal(k, 3);
  assert_int_equal(swp_slice_parse("4/4", &k, &n, err, sizeof err), -1);
  assert_non_null(strstr(err, "numbered from 0 to N-1 (here 0 to 3)"));
  assert_int_equal(swp_slice_parse("1/0", &k, &n, err, sizeof err), -1);
  assert_non_null(strstr(err, "slice count N must be from 1"));
  const char *bad[] = {"", "3", "/4", "1/", "a/4", "1/b", "-1/4", "1/-4", "1/4x", "1.5/4", "+1/4"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (!swp_slice_parse(bad[i], &k, &n, err, sizeof err))
      print_error("'%s' was accepted\n", bad[i]);
    assert_int_equal(swp_slice_parse(bad[i], &k, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "expected K/N"));
  }
}

static void test_runlist(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  int64_t n = swp_sweep_runs(&sw);
  assert_int_equal(n, 12);
  uint8_t done[12] = {0};
  done[0] = done[5] = done[11] = 1;
  int64_t seen[12] = {0};
  for (int64_t k = 0; k < 3; k++) {
    swp_subset s = {k, 3, done};
    drv_options opt = {.subset = &s};
    drv_sweep_jobs js;
    drv_source src;
    drv_sink sink;
    assert_int_equal(drv_sweep_jobs_init(&js, &sw, NULL, &opt, 0, &src, &sink), 0);
    int64_t prev = -1;
    for (int64_t i = 0; i < src.n; i++) {
      drv_job job;
      src.job(src.user, i, &job);
      int64_t r = job.run;
      assert_int_equal(swp_slice_of(3, 3, r), k);
      assert_int_equal(done[r], 0);
      assert_int_equal(job.point, r / sw.replicates);
      assert_true(r > prev);
      prev = r;
      seen[r]++;
    }
    drv_sweep_jobs_free(&js);
  }
  for (int64_t r = 0; r < n; r++) assert_int_equal(seen[r], done[r] ? 0 : 1);
  drv_options opt = {0};
  drv_sweep_jobs js;
  drv_source src;
  drv_sink sink;
  assert_int_equal(drv_sweep_jobs_init(&js, &sw, NULL, &opt, 0, &src, &sink), 0);
  assert_int_equal(src.n, 12);
  drv_sweep_jobs_free(&js);
  swp_sweep_free(&sw);
}

/* ---- running subsets ---- */

typedef struct stop_after {
  volatile sig_atomic_t stop;
  int64_t after;
} stop_after;

static void stop_progress(void *user, const drv_progress *p) {
  stop_after *s = user;
  if (p->done >= s->after)
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED); /* read by other threads */
}

/* Runs subset (NULL: all) of sw into path (created, or resumed). Returns
 * the runs done. */
static int64_t run_into(const swp_sweep *sw, const char *path, const swp_subset *subset,
                        int resume, int64_t stop_after_runs) {
  char err[1024];
  fmt_out *o;
  int rc = resume ? fmt_out_open_resume(&o, path, sw, subset ? subset->slice_index : 0,
                                          subset ? subset->slice_count : 0, err, sizeof err)
                  : fmt_out_create(&o, path, sw, "test", 1, err, sizeof err);
  if (!rc && !resume && subset && subset->slice_count > 1)
    rc = fmt_out_set_slice(o, subset->slice_index, subset->slice_count, err, sizeof err);
  if (rc) print_error("%s\n", err);
  assert_int_equal(rc, 0);
  swp_subset s = subset ? *subset : (swp_subset){0, 0, NULL};
  if (resume) s.done = fmt_out_done(o);
  stop_after st = {0, stop_after_runs};
  drv_options opt = {0};
  opt.threads = 2;
  opt.subset = &s;
  if (stop_after_runs > 0) {
    opt.stop = &st.stop;
    opt.progress = stop_progress;
    opt.progress_user = &st;
  }
  drv_result res;
  rc = drv_sweep_execute(sw, o, &opt, &res);
  if (stop_after_runs <= 0 && rc) print_error("execute: %s\n", res.first_error);
  if (stop_after_runs <= 0) assert_int_equal(rc, 0);
  assert_int_equal(res.totals.failed, 0);
  fmt_timing t = {.wall_s = res.wall_s, .threads = res.threads, .runs_done = res.totals.done,
                  .started = "a", .finished = "b"};
  assert_int_equal(fmt_out_close(o, &t, err, sizeof err), 0);
  return res.totals.done;
}

static uint8_t *read_raw(hid_t f, const char *path, size_t *len) {
  hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
  if (ds < 0) print_error("cannot open %s\n", path);
  assert_true(ds >= 0);
  hid_t t = H5Dget_type(ds), sp = H5Dget_space(ds);
  *len = (size_t)H5Sget_simple_extent_npoints(sp) * H5Tget_size(t);
  uint8_t *buf = malloc(*len ? *len : 1);
  assert_true(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  H5Sclose(sp);
  H5Tclose(t);
  H5Dclose(ds);
  return buf;
}

/* Every result dataset of a and b holds the same bytes. */
static void assert_same_results(const char *pa, const char *pb) {
  hid_t a = H5Fopen(pa, H5F_ACC_RDONLY, H5P_DEFAULT), b = H5Fopen(pb, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(a >= 0 && b >= 0);
  const char *fixed[] = {"runs",        "points",          "points_text",
                         "ticks/run",   "ticks/time_ms",   "ticks/point",
                         "ticks/replicate", "ticks/seed",  "ticks/outcome"};
  enum { N_FIXED = sizeof fixed / sizeof fixed[0] };
  char paths[N_FIXED + ENG_M_COUNT][96];
  size_t n = 0;
  for (size_t i = 0; i < N_FIXED; i++) snprintf(paths[n++], sizeof paths[0], "%s", fixed[i]);
  for (int m = 0; m < ENG_M_COUNT; m++)
    snprintf(paths[n++], sizeof paths[0], "ticks/%s", eng_metric_get_info((eng_metric)m)->name);
  for (size_t i = 0; i < n; i++) {
    size_t la, lb;
    uint8_t *x = read_raw(a, paths[i], &la), *y = read_raw(b, paths[i], &lb);
    assert_int_equal(la, lb);
    if (memcmp(x, y, la)) print_error("%s differs between %s and %s\n", paths[i], pa, pb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
  }
  H5Fclose(a);
  H5Fclose(b);
}

static int64_t attr_int(const char *path, const char *name) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  assert_true(a >= 0);
  int64_t v = 0;
  assert_true(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
  H5Aclose(a);
  H5Fclose(f);
  return v;
}

static void read_done(const char *path, uint8_t *done, int64_t n) {
  fmt_in *in;
  char err[1024];
  int rc = fmt_in_open(&in, path, err, sizeof err);
  if (rc) print_error("%s\n", err);
  assert_int_equal(rc, 0);
  assert_int_equal(fmt_in_info(in)->n_runs, n);
  assert_int_equal(fmt_in_read_done(in, done, err, sizeof err), 0);
  fmt_in_close(in);
}

static void test_slices_merge_equal_one_run(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  int64_t n = swp_sweep_runs(&sw);
  char full[512], parts[3][512], merged[512];
  tmp_path(full, sizeof full, "full.h5");
  tmp_path(merged, sizeof merged, "merged.h5");
  assert_int_equal(run_into(&sw, full, NULL, 0, 0), n);
  int64_t total = 0;
  uint8_t done[64];
  for (int k = 0; k < 3; k++) {
    char name[32];
    snprintf(name, sizeof name, "part-%d.h5", k);
    tmp_path(parts[k], sizeof parts[k], name);
    swp_subset s = {k, 3, NULL};
    total += run_into(&sw, parts[k], &s, 0, 0);
    /* A part has the full shape; exactly its slice is done. */
    read_done(parts[k], done, n);
    for (int64_t r = 0; r < n; r++) assert_int_equal(done[r], swp_slice_of(3, 3, r) == k);
    assert_int_equal(attr_int(parts[k], "slice_index"), k);
    assert_int_equal(attr_int(parts[k], "slice_count"), 3);
    assert_int_equal(attr_int(parts[k], "complete"), 0);
  }
  assert_int_equal(total, n);
  const char *order[] = {parts[2], parts[0], parts[1]};
  fmt_merge_opts mo = {.parts = order, .n_parts = 3, .output = merged};
  int stopped = 0;
  char err[512];
  assert_int_equal(fmt_merge(&mo, &stopped, err, sizeof err), 0);
  assert_int_equal(attr_int(merged, "complete"), 1);
  assert_same_results(full, merged);
  /* A missing slice: refused, nothing written. */
  char again[512];
  tmp_path(again, sizeof again, "again.h5");
  const char *two[] = {parts[0], parts[1]};
  fmt_merge_opts mo2 = {.parts = two, .n_parts = 2, .output = again};
  assert_int_equal(fmt_merge(&mo2, &stopped, err, sizeof err), 2);
  assert_int_equal(access(again, F_OK), -1);
  swp_sweep_free(&sw);
}

static void test_stop_then_resume_equals_one_run(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  int64_t n = swp_sweep_runs(&sw);
  char full[512], part[512];
  tmp_path(full, sizeof full, "full2.h5");
  tmp_path(part, sizeof part, "stopped.h5");
  assert_int_equal(run_into(&sw, full, NULL, 0, 0), n);
  int64_t first = run_into(&sw, part, NULL, 0, 4);
  assert_true(first >= 4 && first < n);
  uint8_t done[64];
  read_done(part, done, n);
  int64_t marked = 0;
  for (int64_t r = 0; r < n; r++) marked += done[r];
  assert_int_equal(marked, first);
  assert_int_equal(attr_int(part, "complete"), 0);
  int64_t second = run_into(&sw, part, NULL, 1, 0);
  assert_int_equal(first + second, n);
  assert_int_equal(attr_int(part, "complete"), 1);
  assert_same_results(full, part);
  /* Resuming a slice file resumes that slice only. */
  char sl[512];
  tmp_path(sl, sizeof sl, "slice.h5");
  swp_subset s = {1, 2, NULL};
  int64_t a = run_into(&sw, sl, &s, 0, 2);
  int64_t b = run_into(&sw, sl, &s, 1, 0);
  int64_t in_slice = 0;
  for (int64_t r = 0; r < n; r++) in_slice += swp_slice_of(3, 2, r) == 1;
  assert_int_equal(a + b, in_slice);
  swp_sweep_free(&sw);
}

static void test_resume_refuses_other_sweeps(void **state) {
  (void)state;
  swp_sweep sw, seed, text;
  tu_sweep_load(&sw, small_sweep);
  char path[512], err[1024];
  tmp_path(path, sizeof path, "mine.h5");
  run_into(&sw, path, NULL, 0, 3);
  /* Another seed. */
  char *t = malloc(strlen(small_sweep) + 64);
  strcpy(t, small_sweep);
  memcpy(strstr(t, "seed = 21"), "seed = 22", 9);
  tu_sweep_load(&seed, t);
  fmt_out *o = NULL;
  assert_int_equal(fmt_out_open_resume(&o, path, &seed, 0, 0, err, sizeof err), -1);
  assert_null(o);
  if (!strstr(err, "master seed is 21, this sweep's is 22")) print_error("%s\n", err);
  assert_non_null(strstr(err, "master seed is 21, this sweep's is 22"));
  /* Another setting: the message names the line. */
  strcpy(t, small_sweep);
  memcpy(strstr(t, "shards = 4"), "shards = 5", 10);
  tu_sweep_load(&text, t);
  assert_int_equal(fmt_out_open_resume(&o, path, &text, 0, 0, err, sizeof err), -1);
  if (!strstr(err, "shards = 5")) print_error("%s\n", err);
  assert_non_null(strstr(err, "belongs to another sweep definition"));
  assert_non_null(strstr(err, "shards = 5"));
  /* Another slice. */
  assert_int_equal(fmt_out_open_resume(&o, path, &sw, 1, 4, err, sizeof err), -1);
  assert_non_null(strstr(err, "holds the whole sweep, but this command runs slice 1/4"));
  /* No file. */
  char none[512];
  tmp_path(none, sizeof none, "none.h5");
  assert_int_equal(fmt_out_open_resume(&o, none, &sw, 0, 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "does not exist"));
  /* The refusals changed nothing: it still resumes. */
  run_into(&sw, path, NULL, 1, 0);
  assert_int_equal(attr_int(path, "complete"), 1);
  free(t);
  swp_sweep_free(&seed);
  swp_sweep_free(&text);
  swp_sweep_free(&sw);
}

/* A row marked done whose chunks are missing (as after a cut in the middle
 * of a commit in an older layout) is run again, not trusted. */
static void test_resume_reruns_done_without_chunks(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  char path[512], full[512], err[1024];
  tmp_path(path, sizeof path, "forged.h5");
  tmp_path(full, sizeof full, "full3.h5");
  run_into(&sw, full, NULL, 0, 0);
  run_into(&sw, path, NULL, 0, 2);
  uint8_t done[64];
  int64_t n = swp_sweep_runs(&sw), victim = -1;
  read_done(path, done, n);
  for (int64_t r = n - 1; r >= 0 && victim < 0; r--)
    if (!done[r]) victim = r;
  assert_true(victim >= 0);
  /* Forge done = 1 in the victim's row, without chunks. */
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "runs", H5P_DEFAULT);
  hid_t mt = H5Tcreate(H5T_COMPOUND, 1);
  H5Tinsert(mt, "done", 0, H5T_NATIVE_INT8);
  hid_t fs = H5Dget_space(ds);
  hsize_t at = (hsize_t)victim, one = 1;
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &one, NULL);
  hid_t ms = H5Screate_simple(1, &one, NULL);
  int8_t yes = 1;
  assert_true(H5Dwrite(ds, mt, ms, fs, H5P_DEFAULT, &yes) >= 0);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Tclose(mt);
  H5Dclose(ds);
  H5Fclose(f);
  fmt_out *o;
  int rc = fmt_out_open_resume(&o, path, &sw, 0, 0, err, sizeof err);
  if (rc) print_error("%s\n", err);
  assert_int_equal(rc, 0);
  assert_int_equal(fmt_out_done(o)[victim], 0);
  assert_int_equal(fmt_out_close(o, NULL, err, sizeof err), 0);
  run_into(&sw, path, NULL, 1, 0);
  assert_same_results(full, path);
  swp_sweep_free(&sw);
}

/* ---- hostile files ---- */

static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  assert_non_null(a);
  assert_non_null(b);
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, a)) > 0) assert_int_equal(fwrite(buf, 1, k, b), k);
  fclose(a);
  fclose(b);
}

static void set_attr_i64(hid_t f, const char *name, const int64_t *v, hsize_t n) {
  if (H5Aexists(f, name) > 0) H5Adelete(f, name);
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
  hid_t a = H5Acreate2(f, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(a >= 0);
  assert_true(H5Awrite(a, H5T_NATIVE_INT64, v) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
}

/* Copies good into a new file, lets damage() change it, and expects
 * fmt_in_open to refuse it with a message containing want. */
typedef void (*damage_fn)(hid_t f);

static void expect_refused(const char *good, const char *name, damage_fn damage, const char *want) {
  char path[512], err[1024] = "";
  tmp_path(path, sizeof path, name);
  copy_file(good, path);
  if (damage) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    damage(f);
    assert_true(H5Fclose(f) >= 0);
  }
  fmt_in *in = NULL;
  int rc = fmt_in_open(&in, path, err, sizeof err);
  if (rc != -1 || !strstr(err, want))
    print_error("%s: got rc %d, '%s'; want '%s'\n", name, rc, err, want);
  assert_int_equal(rc, -1);
  assert_null(in);
  assert_non_null(strstr(err, want));
}

static void no_format(hid_t f) { H5Adelete(f, "format"); }
static void huge_runs(hid_t f) {
  int64_t v = 1000000000000000LL;
  set_attr_i64(f, "n_runs", &v, 1);
}
static void array_runs(hid_t f) {
  int64_t v[3] = {12, 12, 12};
  set_attr_i64(f, "n_runs", v, 3);
}
static void wrong_points(hid_t f) {
  int64_t v = 5; /* 5 x 3 != 12 */
  set_attr_i64(f, "n_points", &v, 1);
}
static void version_3(hid_t f) {
  int64_t v = 4;
  set_attr_i64(f, "format_version", &v, 1);
}
static void zero_ticks(hid_t f) {
  int64_t v = 0;
  set_attr_i64(f, "ticks", &v, 1);
}
static void no_hops(hid_t f) { assert_true(H5Ldelete(f, "ticks/hops", H5P_DEFAULT) >= 0); }
static void runs_int(hid_t f) {
  H5Ldelete(f, "runs", H5P_DEFAULT);
  hsize_t n = 12;
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t ds = H5Dcreate2(f, "runs", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dclose(ds);
  H5Sclose(sp);
}

static void test_reader_refuses_hostile_files(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  char good[512], err[1024];
  tmp_path(good, sizeof good, "good.h5");
  run_into(&sw, good, NULL, 0, 0);
  expect_refused(good, "no_format.h5", no_format,
                 "not a stormsweep result file (no 'format' attribute)");
  expect_refused(good, "huge.h5", huge_runs, "impossible dimensions: n_runs 1000000000000000");
  expect_refused(good, "array.h5", array_runs, "malformed root attribute 'n_runs'");
  expect_refused(good, "points.h5", wrong_points, "impossible dimensions");
  expect_refused(good, "v3.h5", version_3, "result file format_version 4; this stormsweep");
  expect_refused(good, "ticks0.h5", zero_ticks, "impossible time axis");
  expect_refused(good, "nohops.h5", no_hops, "no /ticks/hops dataset");
  expect_refused(good, "runsint.h5", runs_int, "/runs has another row layout");

  /* Not HDF5 at all; truncated; an empty HDF5 file; missing. */
  char path[512];
  tmp_path(path, sizeof path, "text.h5");
  FILE *t = fopen(path, "w");
  fputs("just some text\n", t);
  fclose(t);
  fmt_in *in = NULL;
  assert_int_equal(fmt_in_open(&in, path, err, sizeof err), -1);
  assert_non_null(strstr(err, "not an HDF5 file"));
  tmp_path(path, sizeof path, "trunc.h5");
  FILE *a = fopen(good, "rb"), *b = fopen(path, "wb");
  char buf[3000];
  size_t k = fread(buf, 1, sizeof buf, a);
  fwrite(buf, 1, k, b);
  fclose(a);
  fclose(b);
  assert_int_equal(fmt_in_open(&in, path, err, sizeof err), -1);
  if (!strstr(err, "truncated") && !strstr(err, "not an HDF5")) print_error("%s\n", err);
  assert_true(strstr(err, "truncated") || strstr(err, "not an HDF5"));
  tmp_path(path, sizeof path, "empty.h5");
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);
  assert_int_equal(fmt_in_open(&in, path, err, sizeof err), -1);
  assert_non_null(strstr(err, "no 'format' attribute"));
  tmp_path(path, sizeof path, "missing.h5");
  assert_int_equal(fmt_in_open(&in, path, err, sizeof err), -1);
  assert_non_null(strstr(err, "cannot read"));

  /* A row that is not the run it claims to be. */
  tmp_path(path, sizeof path, "badrow.h5");
  copy_file(good, path);
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "runs", H5P_DEFAULT);
  hid_t mt = H5Tcreate(H5T_COMPOUND, 8);
  H5Tinsert(mt, "seed", 0, H5T_NATIVE_UINT64);
  hid_t fs = H5Dget_space(ds);
  hsize_t at = 4, one = 1;
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &one, NULL);
  hid_t ms = H5Screate_simple(1, &one, NULL);
  uint64_t forged = 12345;
  assert_true(H5Dwrite(ds, mt, ms, fs, H5P_DEFAULT, &forged) >= 0);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Tclose(mt);
  H5Dclose(ds);
  H5Fclose(f);
  assert_int_equal(fmt_in_open(&in, path, err, sizeof err), 0);
  int64_t runs[2] = {3, 4};
  fmt_run_record recs[2];
  assert_int_equal(fmt_in_read_records(in, runs, 2, recs, err, sizeof err), -1);
  assert_non_null(strstr(err, "the /runs row of run 4 is inconsistent"));
  assert_non_null(strstr(err, "seed 12345"));
  /* Its chunks still read raw. */
  uint8_t *cb = NULL;
  size_t cap = 0;
  assert_int_equal(fmt_in_read_chunks(in, 3, &cb, &cap, &recs[0], err, sizeof err), 0);
  for (int m = 0; m < ENG_M_COUNT; m++) assert_true(recs[0].chunk_size[m] > 0);
  free(cb);
  fmt_in_close(in);
  swp_sweep_free(&sw);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slice_rule_known_answers),
      cmocka_unit_test(test_slices_partition_and_balance),
      cmocka_unit_test(test_slice_parse),
      cmocka_unit_test(test_runlist),
      cmocka_unit_test(test_slices_merge_equal_one_run),
      cmocka_unit_test(test_stop_then_resume_equals_one_run),
      cmocka_unit_test(test_resume_refuses_other_sweeps),
      cmocka_unit_test(test_resume_reruns_done_without_chunks),
      cmocka_unit_test(test_reader_refuses_hostile_files),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
