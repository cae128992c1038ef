/*
 * test_sweep_h5.c — the result file and the driver (format/chunk.c,
 * format/, driver/): pre-encoded chunks are byte-identical to HDF5's own
 * shuffle+deflate pipeline; the writer's layout read back through the HDF5
 * API (shapes, types, fill values of unwritten runs, refuse-to-overwrite); a
 * small sweep whose every run equals a direct eng_run_simulate of its point
 * and seed; and 1 vs 2 threads giving identical result datasets.
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
#include <hdf5_hl.h>
#include <math.h>
#include <fcntl.h>
#include <unistd.h>

#include "swp.h"
#include "drv_internal.h"
#include "testutil.h"

static char tmpdir[256];

static int setup_dir(void **state) {
  (void)state;
  return tu_tmpdir_make(tmpdir, sizeof tmpdir, "test_sweep_h5");
}

static int teardown_dir(void **state) {
  (void)state;
  return tu_tmpdir_remove(tmpdir);
}

static void tmp_path(char *buf, size_t len, const char *name) { tu_path(buf, len, tmpdir, name); }

/* A small, fast sweep: 2 points x 2 replicates of a 4-shard cluster. */
static const char *small_sweep = "[sweep]\n"
                                 "name = small\n"
                                 "replicates = 2\n"
                                 "seed = 7\n"
                                 "[scenario]\n"
                                 "shards = 4\n"
                                 "horizon_ms = 3000\n"
                                 "surge = 1000+300\n"
                                 "brownout = 1000+300\n"
                                 "[grid]\n"
                                 "capacity_factor = 1.25, inf\n";

static int64_t attr_int(hid_t obj, const char *name) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  assert_true(a >= 0);
  int64_t v = 0;
  assert_true(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
  H5Aclose(a);
  return v;
}

static void attr_text(hid_t obj, const char *name, char *buf, size_t len) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  assert_true(a >= 0);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  char *s = NULL;
  assert_true(H5Aread(a, t, &s) >= 0);
  snprintf(buf, len, "%s", s);
  H5free_memory(s);
  H5Tclose(t);
  H5Aclose(a);
}

/* The /runs columns the tests look at, read by name. */
typedef struct run_view {
  int64_t run, point;
  int32_t replicate, ticks;
  uint64_t seed;
  int8_t done, outcome, passed_slo;
  double recovery_ms, peak_queue, amplification, goodput_after;
  int64_t events, attempts;
} run_view;

static run_view *read_runs(hid_t f, int64_t *n_out) {
  hid_t ds = H5Dopen2(f, "runs", H5P_DEFAULT);
  assert_true(ds >= 0);
  hid_t sp = H5Dget_space(ds);
  hsize_t n;
  assert_int_equal(H5Sget_simple_extent_ndims(sp), 1);
  H5Sget_simple_extent_dims(sp, &n, NULL);
  hid_t oc = H5Tenum_create(H5T_NATIVE_INT8);
  const char *names[] = {"recovered", "slow", "metastable", "collapsed", "undetermined"};
  for (int8_t v = 0; v < 5; v++) H5Tenum_insert(oc, names[v], &v);
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(run_view));
  H5Tinsert(t, "run", offsetof(run_view, run), H5T_NATIVE_INT64);
  H5Tinsert(t, "point", offsetof(run_view, point), H5T_NATIVE_INT64);
  H5Tinsert(t, "replicate", offsetof(run_view, replicate), H5T_NATIVE_INT32);
  H5Tinsert(t, "ticks", offsetof(run_view, ticks), H5T_NATIVE_INT32);
  H5Tinsert(t, "seed", offsetof(run_view, seed), H5T_NATIVE_UINT64);
  H5Tinsert(t, "done", offsetof(run_view, done), H5T_NATIVE_INT8);
  H5Tinsert(t, "outcome", offsetof(run_view, outcome), oc);
  H5Tinsert(t, "passed_slo", offsetof(run_view, passed_slo), H5T_NATIVE_INT8);
  H5Tinsert(t, "recovery_ms", offsetof(run_view, recovery_ms), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "peak_queue", offsetof(run_view, peak_queue), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "amplification", offsetof(run_view, amplification), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "goodput_after", offsetof(run_view, goodput_after), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "events", offsetof(run_view, events), H5T_NATIVE_INT64);
  H5Tinsert(t, "attempts", offsetof(run_view, attempts), H5T_NATIVE_INT64);
  run_view *v = calloc(n ? n : 1, sizeof *v);
  assert_non_null(v);
  assert_true(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  H5Tclose(t);
  H5Tclose(oc);
  H5Sclose(sp);
  H5Dclose(ds);
  *n_out = (int64_t)n;
  return v;
}

/* Row r of /ticks/<metric> into buf (ticks values). */
static void read_tick_row(hid_t f, const char *metric, int64_t r, int32_t *buf, hsize_t ticks) {
  char path[128];
  snprintf(path, sizeof path, "ticks/%s", metric);
  hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
  assert_true(ds >= 0);
  hid_t fs = H5Dget_space(ds);
  hsize_t start[2] = {(hsize_t)r, 0}, count[2] = {1, ticks};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
  hid_t ms = H5Screate_simple(2, count, NULL);
  assert_true(H5Dread(ds, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, buf) >= 0);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
}

/* ---- chunks ---- */

/* Our encoder against HDF5's pipeline on the same data. */
static void check_chunk_identity(const int32_t *data, size_t n) {
  char path[512];
  tmp_path(path, sizeof path, "chunk.h5");
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {1, n};
  hid_t sp = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, dims);
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, FMT_DEFLATE_LEVEL);
  hid_t ds = H5Dcreate2(f, "x", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  assert_true(H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  H5Dflush(ds);
  hsize_t offset[2] = {0, 0}, stored = 0;
  assert_true(H5Dget_chunk_storage_size(ds, offset, &stored) >= 0);
  uint8_t *theirs = malloc(stored), *ours = malloc(fmt_chunk_bound(n));
  fmt_chunk_encoder *e = fmt_chunk_encoder_create(n);
  /* Encode other data first: state left from one chunk must not leak into the next. */
  int32_t *other = malloc(n * sizeof *other);
  for (size_t i = 0; i < n; i++) other[i] = (int32_t)(i * 2654435761u);
  assert_true(fmt_chunk_encode(e, other, ours, fmt_chunk_bound(n)) > 0);
  free(other);
  uint32_t mask = 99;
  assert_true(H5Dread_chunk(ds, H5P_DEFAULT, offset, &mask, theirs) >= 0);
  assert_int_equal(mask, 0);
  size_t len = fmt_chunk_encode(e, data, ours, fmt_chunk_bound(n));
  /* The encoder's state carries over between chunks without changing bytes. */
  size_t len2 = fmt_chunk_encode(e, data, ours, fmt_chunk_bound(n));
  assert_int_equal(len, len2);
  if (len != stored) print_error("n=%zu: encoded %zu bytes, HDF5 stored %llu\n", n, len, (unsigned long long)stored);
  assert_int_equal(len, stored);
  assert_memory_equal(ours, theirs, len);
  free(theirs);
  free(ours);
  fmt_chunk_encoder_destroy(e);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(sp);
  H5Fclose(f);
}

static void test_chunk_matches_hdf5_filters(void **state) {
  (void)state;
  size_t n = 10000;
  int32_t *data = malloc(n * sizeof *data);
  /* A queue-like trace: flat, a burst, a slow drain, with noise. */
  uint64_t x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int32_t noise = (int32_t)((x >> 33) % 7);
    data[i] = (i < 2000 ? 5 : i < 2500 ? (int32_t)(i - 2000) * 8 : i < 6000 ? 4000 - (int32_t)(i - 2500) : 5) + noise;
  }
  check_chunk_identity(data, n);
  for (size_t i = 0; i < n; i++) data[i] = -1;
  check_chunk_identity(data, n);
  data[0] = 42;
  check_chunk_identity(data, 1);
  check_chunk_identity(data, 3);
  free(data);
}

/* ---- writer ---- */

/* The known per-tick values of the fake run below. */
static int32_t fake_series(void *user, int64_t point, int32_t replicate, eng_metric m,
                           int32_t t) {
  (void)user;
  (void)point;
  (void)replicate;
  return (int32_t)(m * 1000 + (int)(t % 17));
}

static void test_writer_layout_and_fill(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  char path[512], err[1024];
  tmp_path(path, sizeof path, "fake.h5");

  /* One fake run (run 2 = point 1, replicate 0) with known values, written
   * by the fixture builder (fmt_out_create, fmt_out_write_run, close). */
  size_t T = (size_t)sw.ticks;
  int32_t *vals = malloc(T * sizeof *vals);
  tu_file *fx = tu_file_create(path, small_sweep, "stormsweep run test");
  tu_run fake = {.point = 1, .replicate = 0, .series = fake_series};
  memset(&fake.summary, 0, sizeof fake.summary);
  fake.summary.seed = 777;
  fake.summary.outcome = ENG_OUTCOME_METASTABLE;
  fake.summary.recovery_ms = NAN;
  fake.summary.peak_queue = 123.5;
  fake.summary.events = 99;
  tu_file_write_run(fx, &fake);
  tu_file_close(fx);

  /* Refuses to overwrite, unless forced. */
  fmt_out *o;
  int rc = fmt_out_create(&o, path, &sw, "x", 0, err, sizeof err);
  assert_int_equal(rc, -1);
  assert_non_null(strstr(err, "already exists (use --force to overwrite)"));
  assert_null(o);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  char text[4096];
  attr_text(f, "format", text, sizeof text);
  assert_string_equal(text, "stormsweep-results");
  assert_int_equal(attr_int(f, "format_version"), FMT_FORMAT_VERSION);
  assert_int_equal(attr_int(f, "n_runs"), 4);
  assert_int_equal(attr_int(f, "n_points"), 2);
  assert_int_equal(attr_int(f, "replicates"), 2);
  assert_int_equal(attr_int(f, "ticks"), 3000);
  assert_int_equal(attr_int(f, "master_seed"), 7);
  assert_int_equal(attr_int(f, "complete"), 0); /* 1 of 4 runs written */
  attr_text(f, "command_line", text, sizeof text);
  assert_string_equal(text, "stormsweep run test");
  attr_text(f, "sweep_text", text, sizeof text);
  assert_non_null(strstr(text, "capacity_factor = 1.25, inf"));
  attr_text(f, "created", text, sizeof text);
  assert_int_equal(strlen(text), 20);
  assert_int_equal(text[19], 'Z');

  int64_t n;
  run_view *rv = read_runs(f, &n);
  assert_int_equal(n, 4);
  assert_int_equal(rv[2].done, 1);
  assert_int_equal(rv[2].run, 2);
  assert_int_equal(rv[2].point, 1);
  assert_int_equal(rv[2].seed, 777);
  assert_int_equal(rv[2].outcome, ENG_OUTCOME_METASTABLE);
  assert_true(isnan(rv[2].recovery_ms));
  assert_true(rv[2].peak_queue == 123.5);
  assert_int_equal(rv[2].events, 99);
  for (int r = 0; r < 4; r++)
    if (r != 2) {
      assert_int_equal(rv[r].done, 0); /* unwritten rows read as fill */
      assert_int_equal(rv[r].ticks, -1);
    }
  free(rv);

  /* The run-indexed coordinates of /ticks: outcome -1 until written. */
  {
    int32_t oc[4], rep[4];
    int64_t pt[4];
    double cf[4];
    hid_t d = H5Dopen2(f, "ticks/outcome", H5P_DEFAULT);
    assert_true(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, oc) >= 0);
    H5Dclose(d);
    d = H5Dopen2(f, "ticks/point", H5P_DEFAULT);
    assert_true(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, pt) >= 0);
    H5Dclose(d);
    d = H5Dopen2(f, "ticks/replicate", H5P_DEFAULT);
    assert_true(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, rep) >= 0);
    H5Dclose(d);
    d = H5Dopen2(f, "ticks/capacity_factor", H5P_DEFAULT);
    assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, cf) >= 0);
    H5Dclose(d);
    for (int r = 0; r < 4; r++) {
      assert_int_equal(oc[r], r == 2 ? ENG_OUTCOME_METASTABLE : -1);
      assert_int_equal(pt[r], r / 2);
      assert_int_equal(rep[r], r % 2);
      assert_true(cf[r] == (r < 2 ? 1.25 : INFINITY));
    }
  }

  for (int m = 0; m < ENG_M_COUNT; m++) {
    const char *name = eng_metric_get_info((eng_metric)m)->name;
    read_tick_row(f, name, 2, vals, T);
    for (size_t t = 0; t < T; t++)
      if (vals[t] != (int32_t)(m * 1000 + (int)(t % 17))) {
        print_error("%s[2][%zu] = %d, want %d\n", name, t, vals[t], m * 1000 + (int)(t % 17));
        fail();
      }
    read_tick_row(f, name, 3, vals, T);
    for (size_t t = 0; t < T; t++) assert_int_equal(vals[t], -1);
    /* 2-D, int32, with the run and time scales attached. */
    char p[128];
    snprintf(p, sizeof p, "ticks/%s", name);
    hid_t ds = H5Dopen2(f, p, H5P_DEFAULT);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[2];
    assert_int_equal(H5Sget_simple_extent_dims(sp, dims, NULL), 2);
    assert_int_equal(dims[0], 4);
    assert_int_equal(dims[1], 3000);
    hid_t t = H5Dget_type(ds);
    assert_true(H5Tequal(t, H5T_STD_I32LE) > 0);
    hid_t run_ds = H5Dopen2(f, "ticks/run", H5P_DEFAULT),
          time_ds = H5Dopen2(f, "ticks/time_ms", H5P_DEFAULT);
    /* Format 2: no _FillValue attribute (xarray would decode to float64),
     * CF units and long_name, and the run coordinates named. */
    assert_int_equal(H5Aexists(ds, "_FillValue"), 0);
    assert_int_equal(H5Aexists(ds, "units"), 1);
    assert_int_equal(H5Aexists(ds, "long_name"), 1);
    attr_text(ds, "coordinates", text, sizeof text);
    assert_string_equal(text, "point replicate seed outcome capacity_factor");
    assert_true(H5DSis_attached(ds, run_ds, 0) > 0);
    assert_true(H5DSis_attached(ds, time_ds, 1) > 0);
    H5Dclose(run_ds);
    H5Dclose(time_ds);
    H5Tclose(t);
    H5Sclose(sp);
    H5Dclose(ds);
  }
  H5Fclose(f);

  rc = fmt_out_create(&o, path, &sw, "x", 1, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(fmt_out_close(o, NULL, err, sizeof err), 0);
  free(vals);
  swp_sweep_free(&sw);
}

static void test_writer_bad_path(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  char err[1024];
  fmt_out *o;
  assert_int_equal(fmt_out_create(&o, "/nonexistent-dir/x.h5", &sw, "", 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "/nonexistent-dir/x.h5: cannot create"));
  swp_sweep_free(&sw);
}

/* ---- running ---- */

static void run_sweep(const swp_sweep *sw, const char *path, int threads) {
  char err[1024];
  fmt_out *o;
  int rc = fmt_out_create(&o, path, sw, "test", 1, err, sizeof err);
  if (rc) print_error("%s\n", err);
  assert_int_equal(rc, 0);
  drv_options opt = {0};
  opt.threads = threads;
  drv_result res;
  rc = drv_sweep_execute(sw, o, &opt, &res);
  if (rc) print_error("execute: %s\n", res.first_error);
  assert_int_equal(rc, 0);
  assert_int_equal(res.totals.done, swp_sweep_runs(sw));
  assert_int_equal(res.totals.failed, 0);
  assert_int_equal(res.threads, threads);
  assert_int_equal(res.totals.outcomes[0] + res.totals.outcomes[1] + res.totals.outcomes[2],
                   swp_sweep_runs(sw));
  fmt_timing t = {.wall_s = res.wall_s, .threads = res.threads, .runs_done = res.totals.done,
                  .started = "a", .finished = "b"};
  assert_int_equal(fmt_out_close(o, &t, err, sizeof err), 0);
}

static void test_runs_equal_direct_simulation(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  char path[512];
  tmp_path(path, sizeof path, "small.h5");
  run_sweep(&sw, path, 2);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_int_equal(attr_int(f, "complete"), 1);
  int64_t n;
  run_view *rv = read_runs(f, &n);
  assert_int_equal(n, 4);
  eng_run *run = eng_run_create();
  size_t T = (size_t)sw.ticks;
  int32_t *row = malloc(T * sizeof *row);
  for (int64_t r = 0; r < n; r++) {
    int64_t point = r / 2;
    int32_t rep = (int32_t)(r % 2);
    assert_int_equal(rv[r].run, r);
    assert_int_equal(rv[r].point, point);
    assert_int_equal(rv[r].replicate, rep);
    assert_int_equal(rv[r].done, 1);
    assert_int_equal(rv[r].ticks, 3000);
    assert_in_range(rv[r].outcome, 0, 2);
    uint64_t seed = eng_seed_derive(7, (uint64_t)point, (uint64_t)rep);
    assert_int_equal(rv[r].seed, seed);
    eng_config cfg;
    assert_int_equal(swp_sweep_point_config(&sw, point, &cfg, NULL, 0), 0);
    eng_summary s;
    char err[256];
    assert_int_equal(eng_run_simulate(run, &cfg, seed, &s, err, sizeof err), 0);
    assert_int_equal(rv[r].outcome, s.outcome);
    assert_int_equal(rv[r].passed_slo, s.passed_slo);
    assert_int_equal(rv[r].events, s.events);
    assert_int_equal(rv[r].attempts, s.attempts);
    assert_true(rv[r].peak_queue == s.peak_queue);
    assert_true(rv[r].amplification == s.amplification);
    assert_true(isnan(rv[r].recovery_ms) ? isnan(s.recovery_ms) : rv[r].recovery_ms == s.recovery_ms);
    assert_true(isnan(rv[r].goodput_after) ? isnan(s.goodput_after) : rv[r].goodput_after == s.goodput_after);
    for (int m = 0; m < ENG_M_COUNT; m++) {
      const char *name = eng_metric_get_info((eng_metric)m)->name;
      read_tick_row(f, name, r, row, T);
      const int32_t *want = eng_run_metric(run, (eng_metric)m);
      for (size_t t = 0; t < T; t++)
        if (row[t] != want[t]) {
          print_error("run %lld %s[%zu]: file %d, direct %d\n", (long long)r, name, t, row[t], want[t]);
          fail();
        }
    }
  }
  /* /points carries the axis values; /points_text the strings. */
  hid_t ds = H5Dopen2(f, "points", H5P_DEFAULT);
  typedef struct {
    int64_t point;
    double cf;
  } prow;
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(prow));
  H5Tinsert(t, "point", offsetof(prow, point), H5T_NATIVE_INT64);
  H5Tinsert(t, "capacity_factor", offsetof(prow, cf), H5T_NATIVE_DOUBLE);
  prow pr[2];
  assert_true(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, pr) >= 0);
  assert_int_equal(pr[1].point, 1);
  assert_true(pr[0].cf == 1.25);
  assert_true(isinf(pr[1].cf));
  H5Tclose(t);
  H5Dclose(ds);
  ds = H5Dopen2(f, "points_text", H5P_DEFAULT);
  typedef struct {
    int64_t point;
    char cf[16];
  } ptrow;
  t = H5Tcreate(H5T_COMPOUND, sizeof(ptrow));
  H5Tinsert(t, "point", offsetof(ptrow, point), H5T_NATIVE_INT64);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, 16);
  H5Tinsert(t, "capacity_factor", offsetof(ptrow, cf), st);
  ptrow ptr[2];
  assert_true(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptr) >= 0);
  assert_string_equal(ptr[0].cf, "1.25");
  assert_string_equal(ptr[1].cf, "inf");
  H5Tclose(st);
  H5Tclose(t);
  H5Dclose(ds);
  free(row);
  free(rv);
  eng_run_destroy(run);
  H5Fclose(f);
  swp_sweep_free(&sw);
}

/* Reads a whole dataset as raw file-type bytes. */
static uint8_t *read_raw(hid_t f, const char *path, size_t *len) {
  hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
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

static void assert_same_dataset(hid_t a, hid_t b, const char *path) {
  size_t la, lb;
  uint8_t *x = read_raw(a, path, &la), *y = read_raw(b, path, &lb);
  assert_int_equal(la, lb);
  if (memcmp(x, y, la)) print_error("%s differs between the two files\n", path);
  assert_memory_equal(x, y, la);
  free(x);
  free(y);
}

static void test_thread_count_does_not_matter(void **state) {
  (void)state;
  swp_sweep sw;
  /* horizon_ms as an axis also exercises padding of shorter runs. */
  tu_sweep_load(&sw, "[sweep]\nreplicates = 3\nseed = 11\n"
                  "[scenario]\nshards = 4\nsurge = 1000+300\nbrownout = 1000+300\n"
                  "[grid]\nhorizon_ms = 3000, 2500\nbudget_ratio = 0.1, inf\n");
  char p1[512], p2[512];
  tmp_path(p1, sizeof p1, "j1.h5");
  tmp_path(p2, sizeof p2, "j2.h5");
  run_sweep(&sw, p1, 1);
  run_sweep(&sw, p2, 2);
  hid_t a = H5Fopen(p1, H5F_ACC_RDONLY, H5P_DEFAULT), b = H5Fopen(p2, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(a >= 0 && b >= 0);
  assert_same_dataset(a, b, "runs");
  assert_same_dataset(a, b, "points");
  assert_same_dataset(a, b, "points_text");
  static const char *const coords[] = {"ticks/run", "ticks/time_ms", "ticks/point",
                                       "ticks/replicate", "ticks/seed", "ticks/outcome",
                                       "ticks/horizon_ms", "ticks/budget_ratio"};
  for (size_t i = 0; i < sizeof coords / sizeof coords[0]; i++)
    assert_same_dataset(a, b, coords[i]);
  for (int m = 0; m < ENG_M_COUNT; m++) {
    char path[128];
    snprintf(path, sizeof path, "ticks/%s", eng_metric_get_info((eng_metric)m)->name);
    assert_same_dataset(a, b, path);
  }
  /* Runs of the 2500 ms points end in fill values; ticks says so. */
  int64_t n;
  run_view *rv = read_runs(a, &n);
  assert_int_equal(n, 12);
  assert_int_equal(rv[0].ticks, 3000);
  assert_int_equal(rv[6].ticks, 2500);
  int32_t *row = malloc(3000 * sizeof *row);
  read_tick_row(a, "new_requests", 6, row, 3000);
  assert_true(row[2499] >= 0);
  for (int t = 2500; t < 3000; t++) assert_int_equal(row[t], -1);
  free(row);
  free(rv);
  H5Fclose(a);
  H5Fclose(b);
  swp_sweep_free(&sw);
}

static void test_stop_flag_leaves_readable_file(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  char path[512], err[1024];
  tmp_path(path, sizeof path, "stopped.h5");
  fmt_out *o;
  assert_int_equal(fmt_out_create(&o, path, &sw, "", 0, err, sizeof err), 0);
  volatile sig_atomic_t stop = 1;
  drv_options opt = {0};
  opt.threads = 2;
  opt.stop = &stop;
  drv_result res;
  assert_int_equal(drv_sweep_execute(&sw, o, &opt, &res), -1);
  assert_int_equal(res.stopped, 1);
  assert_int_equal(res.totals.done, 0);
  assert_int_equal(fmt_out_close(o, NULL, err, sizeof err), 0);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_int_equal(attr_int(f, "complete"), 0);
  int64_t n;
  run_view *rv = read_runs(f, &n);
  for (int64_t r = 0; r < n; r++) assert_int_equal(rv[r].done, 0);
  free(rv);
  H5Fclose(f);
  swp_sweep_free(&sw);
}


/* A resumed file damaged after the checks at open (as when HDF5, in a file
 * a power cut left with pages of two versions, places new chunks over old
 * ones it still indexes) is not made complete as it is: close finds the
 * run that no longer matches its journal record, rebuilds the file from
 * the journal and says so; the result equals an uninterrupted run. */
static void test_damage_while_resuming_is_rebuilt(void **state) {
  (void)state;
  swp_sweep sw;
  tu_sweep_load(&sw, small_sweep);
  char ref[512], path[512], err[1024];
  tmp_path(ref, sizeof ref, "dmg_ref.h5");
  tmp_path(path, sizeof path, "dmg.h5");
  run_sweep(&sw, ref, 1);
  hid_t rf = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
  int64_t n;
  run_view *rv = read_runs(rf, &n);
  H5Fclose(rf);
  fmt_run_ref first[2] = {{rv[0].run, rv[0].point, rv[0].replicate},
                          {rv[1].run, rv[1].point, rv[1].replicate}};
  free(rv);

  /* Interrupted after two runs: the file and its journal hold them. */
  fmt_out *o;
  assert_int_equal(fmt_out_create(&o, path, &sw, "test", 1, err, sizeof err), 0);
  drv_options opt = {0};
  opt.threads = 1;
  opt.runs = first;
  opt.n_runs = 2;
  drv_result res;
  assert_int_equal(drv_sweep_execute(&sw, o, &opt, &res), 0);
  assert_int_equal(fmt_out_close(o, NULL, err, sizeof err), 0);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "ticks/attempts", H5P_DEFAULT);
  hsize_t at[2] = {0, 0}, size = 0;
  haddr_t addr = 0;
  unsigned mask = 0;
  assert_true(H5Dget_chunk_info_by_coord(ds, at, &mask, &addr, &size) >= 0);
  H5Dclose(ds);
  H5Fclose(f);

  assert_int_equal(fmt_out_open_resume(&o, path, &sw, 0, 0, err, sizeof err), 0);
  /* Run 0's chunk is overwritten behind the writer's back. */
  int fd = open(path, O_WRONLY);
  assert_true(fd >= 0);
  uint8_t *junk = malloc(size);
  memset(junk, 0xab, size);
  assert_int_equal(pwrite(fd, junk, size, (off_t)addr), (ssize_t)size);
  close(fd);
  free(junk);
  swp_subset rest = {.done = fmt_out_done(o)};
  drv_options ropt = {0};
  ropt.threads = 2;
  ropt.subset = &rest;
  assert_int_equal(drv_sweep_execute(&sw, o, &ropt, &res), 0);
  assert_int_equal(res.totals.done, swp_sweep_runs(&sw) - 2);
  err[0] = 0;
  assert_int_equal(fmt_out_close(o, NULL, err, sizeof err), 0);
  if (!strstr(err, "damaged while resuming")) print_error("close said: '%s'\n", err);
  assert_non_null(strstr(err, "damaged while resuming"));
  assert_non_null(strstr(err, "run 0's /ticks/attempts chunk"));

  hid_t a = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT), b = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(a >= 0 && b >= 0);
  assert_int_equal(attr_int(b, "complete"), 1);
  assert_same_dataset(a, b, "ticks/outcome");
  for (int m = 0; m < ENG_M_COUNT; m++) {
    char name[128];
    snprintf(name, sizeof name, "ticks/%s", eng_metric_get_info((eng_metric)m)->name);
    assert_same_dataset(a, b, name);
  }
  H5Fclose(a);
  H5Fclose(b);
  char journal[600];
  snprintf(journal, sizeof journal, "%s.journal", path);
  assert_int_equal(access(journal, F_OK), -1);
  swp_sweep_free(&sw);
}


/* Refine's appends: rows allocated not done (with point, replicate and
 * seed), listed as pending until run, then the same data as the same
 * replicate in a sweep that had it from the start. */
static void test_append_rows(void **state) {
  (void)state;
  swp_sweep sw, big;
  tu_sweep_load(&sw, small_sweep);
  char path[512], bigpath[512], err[1024];
  tmp_path(path, sizeof path, "append.h5");
  tmp_path(bigpath, sizeof bigpath, "append_big.h5");
  run_sweep(&sw, path, 1);
  fmt_out *o;
  assert_int_equal(fmt_out_open_append(&o, path, &sw, NULL, err, sizeof err), 0);
  int64_t pts[3] = {1, 0, 1}, first = -1;
  int32_t reps[3] = {2, 2, 3};
  assert_int_equal(fmt_out_append(o, 3, pts, reps, &first, err, sizeof err), 0);
  assert_int_equal(first, 4);
  assert_int_equal(fmt_out_rows(o), 7);
  assert_int_equal(fmt_out_close(o, NULL, err, sizeof err), 0); /* "interrupted" */

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_int_equal(attr_int(f, "n_runs"), 7);
  assert_int_equal(attr_int(f, "complete"), 0);
  int64_t n;
  run_view *v = read_runs(f, &n);
  assert_int_equal(n, 7);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(v[4 + i].run, 4 + i);
    assert_int_equal(v[4 + i].point, pts[i]);
    assert_int_equal(v[4 + i].replicate, reps[i]);
    assert_int_equal(v[4 + i].done, 0);
    assert_true(v[4 + i].seed == eng_seed_derive(sw.seed, (uint64_t)pts[i], (uint64_t)reps[i]));
  }
  free(v);
  H5Fclose(f);
  /* run --resume refuses it; refine's open lists the rows and runs them. */
  assert_int_equal(fmt_out_open_resume(&o, path, &sw, 0, 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "refine"));
  assert_int_equal(fmt_out_open_append(&o, path, &sw, NULL, err, sizeof err), 0);
  fmt_run_ref *refs = NULL;
  int64_t np = 0;
  assert_int_equal(fmt_out_pending(o, &refs, &np, err, sizeof err), 0);
  assert_int_equal(np, 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(refs[i].run, 4 + i);
    assert_int_equal(refs[i].point, pts[i]);
    assert_int_equal(refs[i].replicate, reps[i]);
  }
  drv_options opt = {0};
  opt.threads = 2;
  opt.runs = refs;
  opt.n_runs = np;
  drv_result res;
  assert_int_equal(drv_sweep_execute(&sw, o, &opt, &res), 0);
  assert_int_equal(res.totals.done, 3);
  assert_int_equal(fmt_out_close(o, NULL, err, sizeof err), 0);
  free(refs);

  /* The same replicates in a sweep of 4 replicates per point. */
  tu_sweep_load(&big, small_sweep);
  big.replicates = 4;
  run_sweep(&big, bigpath, 1);
  hid_t a = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), b = H5Fopen(bigpath, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_int_equal(attr_int(a, "complete"), 1);
  int64_t na, nb;
  run_view *va = read_runs(a, &na), *vb = read_runs(b, &nb);
  hsize_t ticks = (hsize_t)attr_int(a, "ticks");
  int32_t *ra = malloc(ticks * sizeof *ra), *rb = malloc(ticks * sizeof *rb);
  for (int i = 0; i < 3; i++) {
    const run_view *x = &va[4 + i], *y = &vb[pts[i] * 4 + reps[i]];
    assert_int_equal(x->done, 1);
    assert_true(x->seed == y->seed);
    assert_int_equal(x->events, y->events);
    assert_int_equal(x->attempts, y->attempts);
    assert_int_equal(x->outcome, y->outcome);
    read_tick_row(a, "queue_depth", 4 + i, ra, ticks);
    read_tick_row(b, "queue_depth", pts[i] * 4 + reps[i], rb, ticks);
    assert_memory_equal(ra, rb, ticks * sizeof *ra);
  }
  free(ra);
  free(rb);
  free(va);
  free(vb);
  H5Fclose(a);
  H5Fclose(b);
  swp_sweep_free(&big);
  swp_sweep_free(&sw);
}

/* The per-service datasets are named after the metrics they mirror, and
 * a service summary's fields come out as documented (ms rounded, NaN -1,
 * busy share in ppm). */
static void test_service_layout_names(void **state) {
  (void)state;
  for (int q = 0; q < ENG_SV_COUNT; q++) {
    char want[64];
    snprintf(want, sizeof want, "service_%s",
             eng_metric_get_info(eng_service_trace_metric((eng_service_trace)q))->name);
    assert_string_equal(fmt_wide_name((fmt_wide)(FMT_WIDE_SERVICE_FIRST + q)), want);
  }
  eng_service_summary sv = {.outcome = ENG_OUTCOME_SLOW, .recovery_ms = NAN, .calls = 10,
                            .attempts = 30, .retries = 20, .peak_queue = 4.4,
                            .busy_share = 0.25, .wasted = (int64_t)1 << 40};
  int32_t f[FMT_SERVICE_FIELDS];
  fmt_service_fields(&sv, f);
  const struct { const char *name; int32_t v; } want[] = {
      {"outcome", ENG_OUTCOME_SLOW}, {"recovery_ms", -1}, {"calls", 10}, {"attempts", 30},
      {"retries", 20}, {"peak_queue", 4}, {"busy_ppm", 250000}, {"wasted", INT32_MAX}};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    int i = 0;
    while (i < FMT_SERVICE_FIELDS && strcmp(fmt_service_field_name(i), want[k].name)) i++;
    assert_true(i < FMT_SERVICE_FIELDS);
    assert_int_equal(f[i], want[k].v);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chunk_matches_hdf5_filters),
      cmocka_unit_test(test_service_layout_names),
      cmocka_unit_test(test_writer_layout_and_fill),
      cmocka_unit_test(test_writer_bad_path),
      cmocka_unit_test(test_runs_equal_direct_simulation),
      cmocka_unit_test(test_thread_count_does_not_matter),
      cmocka_unit_test(test_stop_flag_leaves_readable_file),
      cmocka_unit_test(test_append_rows),
      cmocka_unit_test(test_damage_while_resuming_is_rebuilt),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
