/*
 * test_hostile.c — damaged, foreign and hand-made result files never crash
 * the analysis: `analyze`, `recommend` and `report` refuse them
 * with one clear line and exit 2, allocate nothing absurd, and a file that
 * is odd but consistent is analysed to the end.
 *
 * The files start from a genuine tiny sweep (written by `stormsweep run`,
 * 4 points x 2 replicates, 3000 ticks) and are then damaged with the HDF5
 * API: truncated, layout objects removed or replaced by ones of the wrong
 * kind, root attributes that lie, absurd shapes (10^15 rows, 10^9 ticks),
 * rows pointing outside the tables. Each case is checked twice: through
 * fmt_results_read (the exact message) and through the CLI (exit status 2
 * and that same message as the only line on stderr, for all three
 * commands). Files that open are also pushed through every analysis step
 * (summary, tables, JSON, effects, recommendation, bands, heat-map grids).
 *
 * Under ASan (STORMSWEEP_SANITIZE) an allocation above 1 GB aborts, in this
 * program and in the CLI it starts, so "no huge allocation" is checked, not
 * assumed. cli_hostile.sh covers files that are not HDF5 at all through
 * the shell.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hdf5.h>

#include "ana.h"
#include "services.h"
#include "testutil.h"

/* ASan reads this at start-up (ignored without ASan). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "max_allocation_size_mb=1024"; }

static char dir[64];
static char base[128];

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

static void copy_bytes(const char *from, const char *to, long limit) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  assert_non_null(in);
  assert_non_null(out);
  char buf[65536];
  long done = 0;
  size_t n;
  while ((limit < 0 || done < limit) && (n = fread(buf, 1, sizeof buf, in)) > 0) {
    if (limit >= 0 && done + (long)n > limit) n = (size_t)(limit - done);
    assert_int_equal(fwrite(buf, 1, n, out), n);
    done += (long)n;
  }
  fclose(in);
  assert_int_equal(fclose(out), 0);
}

static long file_size(const char *path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return (long)st.st_size;
}

/* A fresh copy of the base file, open read-write. */
static hid_t damage_begin(const char *name, char *path, size_t len) {
  snprintf(path, len, "%s/%s.h5", dir, name);
  copy_bytes(base, path, -1);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  return f;
}

static void damage_end(hid_t f) { assert_true(H5Fclose(f) >= 0); }

static void attr_replace(hid_t obj, const char *name, hid_t ft, hid_t mt, const void *v) {
  if (H5Aexists(obj, name) > 0) assert_true(H5Adelete(obj, name) >= 0);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(a >= 0);
  assert_true(H5Awrite(a, mt, v) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
}

static void attr_replace_string(hid_t obj, const char *name, const char *value) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  attr_replace(obj, name, t, t, &value);
  H5Tclose(t);
}

/* Replaces the object at name by a dataset of type with the given shape
 * (chunked and never written when maxdims is big: no storage at all). */
static void dataset_replace(hid_t f, const char *name, hid_t type, int rank, const hsize_t *dims,
                            const void *data) {
  if (H5Lexists(f, name, H5P_DEFAULT) > 0) assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
  hid_t sp = H5Screate_simple(rank, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (!data) {
    hsize_t chunk[2] = {1, 1};
    H5Pset_chunk(dcpl, rank, chunk);
  }
  hid_t ds = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  assert_true(ds >= 0);
  if (data) assert_true(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(sp);
}

/* Writes one member of a compound table's row (the other members stay). */
static void cell_write(hid_t f, const char *table, hsize_t row, const char *member, hid_t type,
                       const void *value) {
  hid_t ds = H5Dopen2(f, table, H5P_DEFAULT);
  assert_true(ds >= 0);
  hid_t mt = H5Tcreate(H5T_COMPOUND, H5Tget_size(type));
  assert_true(H5Tinsert(mt, member, 0, type) >= 0);
  hid_t fsp = H5Dget_space(ds);
  hsize_t one = 1;
  assert_true(H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &row, NULL, &one, NULL) >= 0);
  hid_t msp = H5Screate_simple(1, &one, NULL);
  assert_true(H5Dwrite(ds, mt, msp, fsp, H5P_DEFAULT, value) >= 0);
  H5Sclose(msp);
  H5Sclose(fsp);
  H5Tclose(mt);
  H5Dclose(ds);
}

/* The file type of a compound member (to write an enum raw). */
static hid_t member_type(hid_t f, const char *table, const char *member) {
  hid_t ds = H5Dopen2(f, table, H5P_DEFAULT);
  hid_t ft = H5Dget_type(ds);
  int i = H5Tget_member_index(ft, member);
  assert_true(i >= 0);
  hid_t t = H5Tget_member_type(ft, (unsigned)i);
  H5Tclose(ft);
  H5Dclose(ds);
  return t;
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                    */
/* ------------------------------------------------------------------------ */

/* Runs `stormsweep CMD path`; returns the exit status, stderr in errbuf. */
static int cli_run(const char *cmd, const char *path, char *errbuf, size_t len) {
  char errfile[128], outdir[128], line[1024];
  snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
  snprintf(outdir, sizeof outdir, "%s/report_out", dir);
  if (!strcmp(cmd, "report"))
    snprintf(line, sizeof line,
             "ASAN_OPTIONS=max_allocation_size_mb=1024:detect_leaks=1 '%s' report '%s' -o '%s' "
             ">/dev/null 2>'%s'",
             STORMSWEEP_BIN, path, outdir, errfile);
  else
    snprintf(line, sizeof line,
             "ASAN_OPTIONS=max_allocation_size_mb=1024:detect_leaks=1 '%s' %s '%s' >/dev/null "
             "2>'%s'",
             STORMSWEEP_BIN, cmd, path, errfile);
  int st = system(line);
  errbuf[0] = 0;
  FILE *e = fopen(errfile, "r");
  if (e) {
    size_t n = fread(errbuf, 1, len - 1, e);
    errbuf[n] = 0;
    fclose(e);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* fmt_results_read must fail with head...tail (tail may be ""), and every
 * command must exit 2 with "stormsweep CMD: " + that message as its only
 * stderr line. */
static void expect_refused(const char *path, const char *head, const char *tail) {
  fmt_results r;
  char err[2048] = "";
  int rc = fmt_results_read(&r, path, err, sizeof err);
  if (rc != -1) {
    fmt_results_free(&r);
    fail_msg("%s: read succeeded, expected \"%s...%s\"", path, head, tail);
  }
  size_t n = strlen(err), h = strlen(head), t = strlen(tail);
  if (n < h + t || strncmp(err, head, h) || strcmp(err + n - t, tail))
    fail_msg("%s:\n  got      \"%s\"\n  expected \"%s...%s\"", path, err, head, tail);
  if (strchr(err, '\n')) fail_msg("message is not one line: \"%s\"", err);
  static const char *const cmds[] = {"analyze", "recommend", "report"};
  for (size_t i = 0; i < 3; i++) {
    char out[4096], want[2200];
    int status = cli_run(cmds[i], path, out, sizeof out);
    snprintf(want, sizeof want, "stormsweep %s: %s\n", cmds[i], err);
    if (status != 2 || strcmp(out, want))
      fail_msg("stormsweep %s %s: exit %d (expected 2), stderr:\n%s\nexpected:\n%s", cmds[i],
               path, status, out, want);
  }
}

static void expect_refused_exact(const char *path, const char *msg) {
  expect_refused(path, msg, "");
}

/* Runs every analysis step on a file that reads; none may fail or crash. */
static void analyse_fully(const char *path) {
  fmt_results r;
  ana_summary s;
  char err[1024];
  if (fmt_results_read(&r, path, err, sizeof err)) fail_msg("%s: %s", path, err);
  if (ana_summary_compute(&s, &r, 1500, ANA_INTERVAL_WILSON, err, sizeof err))
    fail_msg("%s: summary: %s", path, err);
  FILE *null = fopen("/dev/null", "w");
  assert_non_null(null);
  ana_summary_print_table(null, &r, &s);
  ana_summary_print_effects(null, &r, &s);
  ana_services svc;
  if (ana_services_compute(&svc, &r, &s, err, sizeof err) == 0) {
    ana_services_print_table(null, &r, &s, &svc);
    json_decref(ana_services_json(&r, &s, &svc));
    ana_services_free(&svc);
  }
  ana_reco rec;
  ana_reco_opts ro = {0.01, 0.99};
  assert_int_equal(ana_recommend(&rec, &r, &s, &ro), 0);
  char *text = ana_reco_text(&rec, &r, &s, &ro);
  assert_non_null(text);
  ana_summary_print_json(null, &r, &s, text);
  free(text);
  fclose(null);
  for (size_t p = 0; p < r.n_points; p++) {
    ana_band b;
    if (ana_band_read(&b, &r, "queue_depth", p, 50, err, sizeof err) == 0) ana_band_free(&b);
  }
  for (size_t x = 0; x < r.n_axes; x++)
    for (size_t y = 0; y < r.n_axes; y++) {
      ana_grid2 g;
      if (ana_grid2_compute(&g, &r, &s, x, y) == 0) ana_grid2_free(&g);
    }
  ana_summary_free(&s);
  fmt_results_free(&r);
  static const char *const cmds[] = {"analyze", "recommend"};
  for (size_t i = 0; i < 2; i++) {
    char out[4096];
    int status = cli_run(cmds[i], path, out, sizeof out);
    if (status != 0) fail_msg("stormsweep %s %s: exit %d, stderr:\n%s", cmds[i], path, status, out);
  }
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

static int setup(void **state) {
  (void)state;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (tu_tmpdir_make(dir, sizeof dir, "hostile")) return -1;
  snprintf(base, sizeof base, "%s/base.h5", dir);
  char cmd[1024], ini[128];
  snprintf(ini, sizeof ini, "%s/tiny.ini", dir);
  FILE *f = fopen(ini, "w");
  if (!f) return -1;
  fputs("[sweep]\nname = hostile base\nreplicates = 2\n[scenario]\nhorizon_ms = 3000\n"
        "[grid]\nbudget_ratio = 0.1, inf\nbackoff = none, full\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' run '%s' -o '%s' -q -j 1 >'%s/run.log' 2>&1", STORMSWEEP_BIN,
           ini, base, dir);
  if (system(cmd) != 0) {
    fprintf(stderr, "test_hostile: could not make the base file: %s\n", cmd);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tu_tmpdir_remove(dir);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void test_base_file_is_fine(void **state) {
  (void)state;
  analyse_fully(base);
}

static void test_truncated(void **state) {
  (void)state;
  char path[256], head[512];
  long size = file_size(base);
  long cuts[] = {100, 5000, size / 2, size - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    snprintf(path, sizeof path, "%s/trunc_%ld.h5", dir, cuts[i]);
    copy_bytes(base, path, cuts[i]);
    snprintf(head, sizeof head,
             "%s: cannot open HDF5 file: truncated or damaged? (HDF5: truncated file: eof = %ld",
             path, cuts[i]);
    expect_refused(path, head, ")");
  }
  /* Too short to hold an HDF5 signature at all. */
  snprintf(path, sizeof path, "%s/trunc_4.h5", dir);
  copy_bytes(base, path, 4);
  snprintf(head, sizeof head, "%s: not an HDF5 file (expected a stormsweep result file)", path);
  expect_refused_exact(path, head);
}

static void test_not_hdf5(void **state) {
  (void)state;
  char path[256], want[512];
  snprintf(path, sizeof path, "%s/text.h5", dir);
  FILE *f = fopen(path, "w");
  fputs("point,vnodes\n0,10\n", f);
  fclose(f);
  snprintf(want, sizeof want, "%s: not an HDF5 file (expected a stormsweep result file)", path);
  expect_refused_exact(path, want);
  snprintf(path, sizeof path, "%s/empty.h5", dir);
  fclose(fopen(path, "w"));
  snprintf(want, sizeof want, "%s: not an HDF5 file (expected a stormsweep result file)", path);
  expect_refused_exact(path, want);
  expect_refused_exact("/dev/null",
                       "/dev/null: not a regular file (expected a stormsweep result file)");
  snprintf(want, sizeof want, "%s: is a directory, not a stormsweep result file", dir);
  expect_refused_exact(dir, want);
  snprintf(path, sizeof path, "%s/missing.h5", dir);
  snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
  expect_refused_exact(path, want);
  snprintf(path, sizeof path, "%s/fifo.h5", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  snprintf(want, sizeof want, "%s: not a regular file (expected a stormsweep result file)", path);
  expect_refused_exact(path, want);
}

static void test_wrong_format_attributes(void **state) {
  (void)state;
  char path[256], want[512];
  hid_t f = damage_begin("format_other", path, sizeof path);
  attr_replace_string(f, "format", "netcdf-results");
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (format is 'netcdf-results', expected "
           "'stormsweep-results')",
           path);
  expect_refused_exact(path, want);

  f = damage_begin("format_int", path, sizeof path);
  int32_t one = 1;
  attr_replace(f, "format", H5T_STD_I32LE, H5T_NATIVE_INT32, &one);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (its 'format' attribute is not a string)", path);
  expect_refused_exact(path, want);

  f = damage_begin("format_none", path, sizeof path);
  H5Adelete(f, "format");
  damage_end(f);
  snprintf(want, sizeof want, "%s: not a stormsweep result file (no 'format' attribute)", path);
  expect_refused_exact(path, want);

  f = damage_begin("version_newer", path, sizeof path);
  int32_t three = 4;
  attr_replace(f, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT32, &three);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: format_version 4 is newer than this stormsweep understands (3); use a newer "
           "stormsweep",
           path);
  expect_refused_exact(path, want);

  f = damage_begin("version_huge", path, sizeof path);
  double huge = 1e300;
  attr_replace(f, "format_version", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &huge);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: format_version 1e+300 is newer than this stormsweep understands (3); use a newer "
           "stormsweep",
           path);
  expect_refused_exact(path, want);

  static const double bad_versions[] = {0, 1.5, -3};
  for (size_t i = 0; i < 3; i++) {
    f = damage_begin("version_bad", path, sizeof path);
    attr_replace(f, "format_version", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &bad_versions[i]);
    damage_end(f);
    snprintf(want, sizeof want,
             "%s: not a stormsweep result file (missing or invalid 'format_version')", path);
    expect_refused_exact(path, want);
  }
  f = damage_begin("version_string", path, sizeof path);
  attr_replace_string(f, "format_version", "1");
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (missing or invalid 'format_version')", path);
  expect_refused_exact(path, want);
}

static void test_wrong_layout(void **state) {
  (void)state;
  char path[256], want[512];
  hid_t f = damage_begin("no_runs", path, sizeof path);
  H5Ldelete(f, "/runs", H5P_DEFAULT);
  damage_end(f);
  snprintf(want, sizeof want, "%s: not a stormsweep result file (no /runs table)", path);
  expect_refused_exact(path, want);

  f = damage_begin("no_points", path, sizeof path);
  H5Ldelete(f, "/points", H5P_DEFAULT);
  damage_end(f);
  snprintf(want, sizeof want, "%s: not a stormsweep result file (no /points table)", path);
  expect_refused_exact(path, want);

  /* /runs of the wrong type: plain integers, a 2-D table, a group. */
  int32_t ints[8] = {0};
  hsize_t eight = 8, two_d[2] = {4, 2};
  f = damage_begin("runs_ints", path, sizeof path);
  dataset_replace(f, "/runs", H5T_NATIVE_INT32, 1, &eight, ints);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (/runs is not a 1-D table of rows)", path);
  expect_refused_exact(path, want);
  f = damage_begin("runs_2d", path, sizeof path);
  dataset_replace(f, "/runs", H5T_NATIVE_INT32, 2, two_d, ints);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (/runs is not a 1-D table of rows)", path);
  expect_refused_exact(path, want);
  f = damage_begin("runs_group", path, sizeof path);
  H5Ldelete(f, "/runs", H5P_DEFAULT);
  H5Gclose(H5Gcreate2(f, "/runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (/runs is not a 1-D table of rows)", path);
  expect_refused_exact(path, want);

  /* /runs without an outcome column, and with a 'point' of strings. */
  f = damage_begin("runs_no_outcome", path, sizeof path);
  {
    typedef struct {
      int64_t point;
      double recovery_ms;
    } row;
    row rows[2] = {{0, 1.0}, {1, 2.0}};
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(row));
    H5Tinsert(t, "point", offsetof(row, point), H5T_NATIVE_INT64);
    H5Tinsert(t, "recovery_ms", offsetof(row, recovery_ms), H5T_NATIVE_DOUBLE);
    hsize_t n = 2;
    dataset_replace(f, "/runs", t, 1, &n, rows);
    H5Tclose(t);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (/runs has no numeric 'outcome' column)", path);
  expect_refused_exact(path, want);

  f = damage_begin("runs_string_point", path, sizeof path);
  {
    typedef struct {
      char point[8];
      int32_t outcome;
      double recovery_ms;
    } row;
    row rows[1] = {{"zero", 0, 1.0}};
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 8);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(row));
    H5Tinsert(t, "point", offsetof(row, point), str);
    H5Tinsert(t, "outcome", offsetof(row, outcome), H5T_NATIVE_INT32);
    H5Tinsert(t, "recovery_ms", offsetof(row, recovery_ms), H5T_NATIVE_DOUBLE);
    hsize_t n = 1;
    dataset_replace(f, "/runs", t, 1, &n, rows);
    H5Tclose(t);
    H5Tclose(str);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (/runs has no numeric 'point' column)", path);
  expect_refused_exact(path, want);

  /* An outcome enum on a 32-byte integer: wider than any value buffer. */
  f = damage_begin("runs_wide_enum", path, sizeof path);
  {
    hid_t wide = H5Tcopy(H5T_STD_I64LE);
    assert_true(H5Tset_size(wide, 32) >= 0);
    hid_t en = H5Tenum_create(wide);
    unsigned char v[32] = {0};
    H5Tenum_insert(en, "recovered", v);
    v[0] = 2;
    H5Tenum_insert(en, "metastable", v);
    size_t size = 8 + 32 + 8;
    hid_t t = H5Tcreate(H5T_COMPOUND, size);
    H5Tinsert(t, "point", 0, H5T_NATIVE_INT64);
    H5Tinsert(t, "outcome", 8, en);
    H5Tinsert(t, "recovery_ms", 40, H5T_NATIVE_DOUBLE);
    unsigned char rowbuf[48] = {0};
    hsize_t n = 1;
    dataset_replace(f, "/runs", t, 1, &n, rowbuf);
    H5Tclose(t);
    H5Tclose(en);
    H5Tclose(wide);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (/runs has no numeric 'outcome' column)", path);
  expect_refused_exact(path, want);
}

static void test_ticks_layout(void **state) {
  (void)state;
  char path[256], want[512];
  int32_t ints[8] = {0};
  double dbl[8 * 4] = {0};
  hsize_t eight = 8, shape[2] = {8, 4};

  hid_t f = damage_begin("ticks_rank1", path, sizeof path);
  dataset_replace(f, "/ticks/queue_depth", H5T_NATIVE_INT32, 1, &eight, ints);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /ticks/queue_depth is not a 2-D (runs x ticks) dataset (rank 1)", path);
  expect_refused_exact(path, want);

  f = damage_begin("ticks_float", path, sizeof path);
  dataset_replace(f, "/ticks/queue_depth", H5T_NATIVE_DOUBLE, 2, shape, dbl);
  damage_end(f);
  snprintf(want, sizeof want, "%s: /ticks/queue_depth is not an integer dataset", path);
  expect_refused_exact(path, want);

  f = damage_begin("ticks_group_member", path, sizeof path);
  H5Gclose(H5Gcreate2(f, "/ticks/zz_extra", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  damage_end(f);
  snprintf(want, sizeof want, "%s: /ticks/zz_extra is not a dataset", path);
  expect_refused_exact(path, want);

  f = damage_begin("ticks_dataset", path, sizeof path);
  H5Ldelete(f, "/ticks", H5P_DEFAULT);
  dataset_replace(f, "/ticks", H5T_NATIVE_INT32, 1, &eight, ints);
  damage_end(f);
  snprintf(want, sizeof want, "%s: /ticks is not a group of datasets", path);
  expect_refused_exact(path, want);

  /* rows not matching /runs (8 runs), ticks not matching the others */
  hsize_t few[2] = {2, 3000};
  int32_t *zeros = calloc(2 * 3000, sizeof *zeros);
  f = damage_begin("ticks_rows", path, sizeof path);
  dataset_replace(f, "/ticks/queue_depth", H5T_NATIVE_INT32, 2, few, zeros);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /ticks/queue_depth does not have one row per run (2 rows, /runs has 8)", path);
  expect_refused_exact(path, want);
  free(zeros);

  hsize_t other[2] = {8, 100};
  int32_t *z2 = calloc(8 * 100, sizeof *z2);
  f = damage_begin("ticks_cols", path, sizeof path);
  dataset_replace(f, "/ticks/zz_last", H5T_NATIVE_INT32, 2, other, z2);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /ticks/zz_last has a different number of ticks than the other metrics (100, not "
           "3000)",
           path);
  expect_refused_exact(path, want);
  free(z2);

  /* a billion ticks, declared and never stored */
  hsize_t absurd[2] = {8, 1000000000};
  f = damage_begin("ticks_absurd", path, sizeof path);
  dataset_replace(f, "/ticks/queue_depth", H5T_NATIVE_INT32, 2, absurd, NULL);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /ticks/queue_depth has an impossible number of ticks (1000000000; at most "
           "100000000)",
           path);
  expect_refused_exact(path, want);

  /* no /ticks at all: analyze and recommend still work */
  f = damage_begin("ticks_none", path, sizeof path);
  H5Ldelete(f, "/ticks", H5P_DEFAULT);
  damage_end(f);
  analyse_fully(path);
}

static void test_absurd_dimensions(void **state) {
  (void)state;
  char path[256], want[512];
  hid_t f = damage_begin("n_runs_attr", path, sizeof path);
  int64_t big = 1000000000000000LL;
  attr_replace(f, "n_runs", H5T_STD_I64LE, H5T_NATIVE_INT64, &big);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: the 'n_runs' attribute says 1e+15 but /runs has 8; the file is damaged", path);
  expect_refused_exact(path, want);

  f = damage_begin("n_points_attr", path, sizeof path);
  int64_t three = 3;
  attr_replace(f, "n_points", H5T_STD_I64LE, H5T_NATIVE_INT64, &three);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: the 'n_points' attribute says 3 but /points has 4; the file is damaged", path);
  expect_refused_exact(path, want);

  f = damage_begin("ticks_attr", path, sizeof path);
  int32_t t = 7;
  attr_replace(f, "ticks", H5T_STD_I32LE, H5T_NATIVE_INT32, &t);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: the 'ticks' attribute says 7 but /ticks has 3000; the file is damaged", path);
  expect_refused_exact(path, want);

  /* /runs declaring 10^15 rows (and 5 * 10^8, which no memory here holds) */
  hid_t rt;
  f = damage_begin("runs_1e15", path, sizeof path);
  {
    hid_t ds = H5Dopen2(f, "/runs", H5P_DEFAULT);
    rt = H5Dget_type(ds);
    H5Dclose(ds);
    hsize_t n = 1000000000000000ULL;
    dataset_replace(f, "/runs", rt, 1, &n, NULL);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /runs has 1000000000000000 rows, more than any sweep has (1000000000); the file "
           "is damaged",
           path);
  expect_refused_exact(path, want);

  f = damage_begin("runs_5e8", path, sizeof path);
  {
    hsize_t n = 500000000ULL;
    dataset_replace(f, "/runs", rt, 1, &n, NULL);
  }
  damage_end(f);
  snprintf(want, sizeof want, "%s: /runs has 500000000 rows; reading them needs about ", path);
  expect_refused(path, want, " GB");
  H5Tclose(rt);

  /* /points with no rows, and with 10^15 */
  f = damage_begin("points_empty", path, sizeof path);
  {
    hid_t ds = H5Dopen2(f, "/points", H5P_DEFAULT);
    hid_t pt = H5Dget_type(ds);
    H5Dclose(ds);
    hsize_t zero = 0;
    hid_t sp = H5Screate_simple(1, &zero, NULL);
    H5Ldelete(f, "/points", H5P_DEFAULT);
    H5Dclose(H5Dcreate2(f, "/points", pt, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(sp);
    H5Tclose(pt);
  }
  damage_end(f);
  snprintf(want, sizeof want, "%s: /points has no rows (a sweep has at least one grid point)",
           path);
  expect_refused_exact(path, want);

  f = damage_begin("points_1e15", path, sizeof path);
  {
    hid_t ds = H5Dopen2(f, "/points", H5P_DEFAULT);
    hid_t pt = H5Dget_type(ds);
    H5Dclose(ds);
    hsize_t n = 1000000000000000ULL;
    dataset_replace(f, "/points", pt, 1, &n, NULL);
    H5Tclose(pt);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /points has 1000000000000000 rows, more than any sweep has (10000000); the "
           "file is damaged",
           path);
  expect_refused_exact(path, want);
}

static void test_rows_out_of_range(void **state) {
  (void)state;
  char path[256], want[512];
  int64_t v64;
  double d;

  hid_t f = damage_begin("run_point_99", path, sizeof path);
  v64 = 99;
  cell_write(f, "/runs", 5, "point", H5T_NATIVE_INT64, &v64);
  damage_end(f);
  snprintf(want, sizeof want, "%s: /runs row 5: point 99 is not in /points", path);
  expect_refused_exact(path, want);

  f = damage_begin("run_point_negative", path, sizeof path);
  v64 = -1;
  cell_write(f, "/runs", 0, "point", H5T_NATIVE_INT64, &v64);
  damage_end(f);
  snprintf(want, sizeof want, "%s: /runs row 0: point -1 is not in /points", path);
  expect_refused_exact(path, want);

  f = damage_begin("run_outcome_7", path, sizeof path);
  {
    hid_t et = member_type(f, "/runs", "outcome");
    int8_t raw = 7; /* not a member of the enum */
    cell_write(f, "/runs", 3, "outcome", et, &raw);
    H5Tclose(et);
  }
  damage_end(f);
  snprintf(want, sizeof want, "%s: /runs row 3: outcome ", path);
  expect_refused(path, want, " is not an outcome code (0 to 4)");

  f = damage_begin("run_recovery_nan", path, sizeof path);
  {
    hid_t et = member_type(f, "/runs", "outcome");
    int8_t raw = 0; /* recovered */
    cell_write(f, "/runs", 2, "outcome", et, &raw);
    H5Tclose(et);
    d = NAN;
    cell_write(f, "/runs", 2, "recovery_ms", H5T_NATIVE_DOUBLE, &d);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /runs row 2: a recovered run needs a recovery_ms >= 0, got nan", path);
  expect_refused_exact(path, want);

  f = damage_begin("run_id_negative", path, sizeof path);
  v64 = -5;
  cell_write(f, "/runs", 1, "run", H5T_NATIVE_INT64, &v64);
  damage_end(f);
  snprintf(want, sizeof want, "%s: /runs row 1: run id -5 is out of range", path);
  expect_refused_exact(path, want);

  /* a run id past /ticks (a row /ticks does not have) */
  f = damage_begin("run_id_past_ticks", path, sizeof path);
  v64 = 100;
  cell_write(f, "/runs", 1, "run", H5T_NATIVE_INT64, &v64);
  damage_end(f);
  snprintf(want, sizeof want, "%s: /ticks/", path);
  expect_refused(path, want, " does not have one row per run (8 rows, /runs has 8)");

  f = damage_begin("point_id_nan", path, sizeof path);
  v64 = 0;
  {
    /* /points "point" is int64 in the writer: make it a float NaN by rewriting the table */
    hid_t ds = H5Dopen2(f, "/points", H5P_DEFAULT);
    hid_t pt = H5Dget_type(ds);
    H5Dclose(ds);
    hid_t nt = H5Tcreate(H5T_COMPOUND, H5Tget_size(pt) + 8);
    int nm = H5Tget_nmembers(pt);
    size_t off = 0;
    for (int i = 0; i < nm; i++) {
      char *name = H5Tget_member_name(pt, (unsigned)i);
      H5Tinsert(nt, name, off, H5T_NATIVE_DOUBLE);
      off += 8;
      H5free_memory(name);
    }
    double rows[4][8];
    memset(rows, 0, sizeof rows);
    for (int p = 0; p < 4; p++) rows[p][0] = p;
    rows[1][0] = NAN;
    hid_t nt2 = H5Tcreate(H5T_COMPOUND, 8 * (size_t)nm);
    off = 0;
    for (int i = 0; i < nm; i++) {
      char *name = H5Tget_member_name(pt, (unsigned)i);
      H5Tinsert(nt2, name, off, H5T_NATIVE_DOUBLE);
      off += 8;
      H5free_memory(name);
    }
    double flat[4 * 8];
    for (int p = 0; p < 4; p++)
      for (int i = 0; i < nm; i++) flat[p * nm + i] = rows[p][i];
    hsize_t n = 4;
    dataset_replace(f, "/points", nt2, 1, &n, flat);
    H5Tclose(nt);
    H5Tclose(nt2);
    H5Tclose(pt);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /points row 1: point id nan is not a whole number from 0 to 1000000000", path);
  expect_refused_exact(path, want);

  /* A replicate far past any sweep, stored as a float (no master_seed to
   * catch it first): rejected by range, not by an overflowing run id. */
  f = damage_begin("run_replicate_huge", path, sizeof path);
  {
    hid_t ds = H5Dopen2(f, "/runs", H5P_DEFAULT);
    hid_t rt = H5Dget_type(ds);
    hid_t fs = H5Dget_space(ds);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(fs, &n, NULL);
    int nm = H5Tget_nmembers(rt);
    hid_t dt = H5Tcreate(H5T_COMPOUND, 8 * (size_t)nm);
    int rep = -1;
    for (int i = 0; i < nm; i++) {
      char *name = H5Tget_member_name(rt, (unsigned)i);
      H5Tinsert(dt, name, 8 * (size_t)i, H5T_NATIVE_DOUBLE);
      if (strcmp(name, "replicate") == 0) rep = i;
      H5free_memory(name);
    }
    assert_true(rep >= 0 && n >= 2);
    double *flat = calloc(n * (size_t)nm, sizeof *flat);
    assert_non_null(flat);
    assert_true(H5Dread(ds, dt, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat) >= 0);
    H5Sclose(fs);
    H5Tclose(rt);
    H5Dclose(ds);
    flat[2 * (size_t)nm + (size_t)rep] = 1e30;
    dataset_replace(f, "/runs", dt, 1, &n, flat);
    free(flat);
    H5Tclose(dt);
    assert_true(H5Adelete(f, "master_seed") >= 0);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /runs row 2: run 2 is not point 1 replicate 9223372036854775807 of a sweep of "
           "2 replicates", path);
  expect_refused_exact(path, want);

  f = damage_begin("point_id_twice", path, sizeof path);
  v64 = 0;
  cell_write(f, "/points", 2, "point", H5T_NATIVE_INT64, &v64);
  damage_end(f);
  snprintf(want, sizeof want, "%s: /points: point id 0 appears twice", path);
  expect_refused_exact(path, want);

  f = damage_begin("enum_axis_huge", path, sizeof path);
  d = 1e300;
  cell_write(f, "/points", 1, "backoff", H5T_NATIVE_DOUBLE, &d);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /points row 1: backoff = 1e+300 is not the index of one of its 6 names", path);
  expect_refused_exact(path, want);
}

/* Odd but consistent files are analysed to the end. */
static void test_odd_but_readable(void **state) {
  (void)state;
  char path[256];
  double d;
  /* Non-finite summary values and axis values. */
  hid_t f = damage_begin("odd_values", path, sizeof path);
  d = INFINITY;
  cell_write(f, "/runs", 0, "amplification", H5T_NATIVE_DOUBLE, &d);
  d = NAN;
  cell_write(f, "/runs", 1, "goodput_after", H5T_NATIVE_DOUBLE, &d);
  d = -INFINITY;
  cell_write(f, "/runs", 2, "peak_queue", H5T_NATIVE_DOUBLE, &d);
  d = NAN;
  cell_write(f, "/points", 0, "budget_ratio", H5T_NATIVE_DOUBLE, &d);
  d = 1e308;
  cell_write(f, "/points", 3, "budget_ratio", H5T_NATIVE_DOUBLE, &d);
  {
    hid_t et = member_type(f, "/runs", "outcome");
    int8_t raw = 0;
    cell_write(f, "/runs", 4, "outcome", et, &raw);
    H5Tclose(et);
    d = 1e308;
    cell_write(f, "/runs", 4, "recovery_ms", H5T_NATIVE_DOUBLE, &d);
  }
  damage_end(f);
  analyse_fully(path);

  /* A stored sweep text that is garbage, or a grid of ten million points:
   * ignored or evaluated only at the table's points. */
  f = damage_begin("odd_sweep_text", path, sizeof path);
  attr_replace_string(f, "sweep_text", "[grid]\nvnodes = lin(1, 1000, 1000)\n"
                                       "load = lin(0.1, 1, 10000)\n");
  attr_replace_string(f, "tool_version", "");
  damage_end(f);
  analyse_fully(path);
  f = damage_begin("odd_sweep_text2", path, sizeof path);
  attr_replace_string(f, "sweep_text", "\x01\x02 not a sweep [[[");
  H5Adelete(f, "tick_ms");
  H5Adelete(f, "n_runs");
  damage_end(f);
  analyse_fully(path);

  /* Every row not written yet (an interrupted sweep's first seconds). */
  f = damage_begin("odd_unwritten", path, sizeof path);
  for (hsize_t row = 0; row < 8; row++) {
    int8_t zero = 0;
    cell_write(f, "/runs", row, "done", H5T_NATIVE_INT8, &zero);
  }
  damage_end(f);
  fmt_results r;
  char err[512];
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
  assert_int_equal(r.n_runs, 0);
  assert_int_equal(r.n_skipped, 8);
  fmt_results_free(&r);
}


/* ------------------------------------------------------------------------ */
/* Untrusted files: fake evidence, lying labels, strings, costs   */
/* ------------------------------------------------------------------------ */

/* Rewrites /points with the column old renamed to new (values kept). */
static void points_rename(hid_t f, const char *old, const char *new) {
  hid_t ds = H5Dopen2(f, "/points", H5P_DEFAULT);
  hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(sp, &n, NULL);
  size_t size = H5Tget_size(ft);
  char *buf = malloc(n * size);
  assert_non_null(buf);
  assert_true(H5Dread(ds, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  hid_t nt = H5Tcreate(H5T_COMPOUND, size);
  for (int i = 0; i < H5Tget_nmembers(ft); i++) {
    char *name = H5Tget_member_name(ft, (unsigned)i);
    hid_t mt = H5Tget_member_type(ft, (unsigned)i);
    assert_true(H5Tinsert(nt, strcmp(name, old) ? name : new, H5Tget_member_offset(ft, (unsigned)i),
                          mt) >= 0);
    H5Tclose(mt);
    H5free_memory(name);
  }
  H5Dclose(ds);
  H5Sclose(sp);
  dataset_replace(f, "/points", nt, 1, &n, buf);
  free(buf);
  H5Tclose(nt);
  H5Tclose(ft);
}

/* Writes a fixed-length string cell of a compound table. */
static void text_cell_write(hid_t f, const char *table, hsize_t row, const char *member,
                            const char *text) {
  hid_t st = member_type(f, table, member);
  char buf[256] = {0};
  assert_true(H5Tget_size(st) <= sizeof buf);
  memcpy(buf, text, strlen(text) < H5Tget_size(st) ? strlen(text) : H5Tget_size(st));
  cell_write(f, table, row, member, st, buf);
  H5Tclose(st);
}

static void attr_replace_i64(hid_t obj, const char *name, int64_t v) {
  attr_replace(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

/* Item 5: a run counted twice, or more runs per point than declared. */
static void test_duplicate_runs(void **state) {
  (void)state;
  char path[256], want[512];
  int64_t v64;
  hid_t f = damage_begin("dup_run_id", path, sizeof path);
  v64 = 0;
  cell_write(f, "/runs", 1, "run", H5T_NATIVE_INT64, &v64);
  damage_end(f);
  /* Caught before the duplicate check: a sweep's row names its own run. */
  snprintf(want, sizeof want,
           "%s: /runs row 1: run 0 is not point 0 replicate 1 of a sweep of 2 replicates", path);
  expect_refused_exact(path, want);

  f = damage_begin("dup_replicate", path, sizeof path);
  int32_t v32 = 0;
  cell_write(f, "/runs", 1, "replicate", H5T_NATIVE_INT32, &v32);
  damage_end(f);
  /* Caught before the duplicate check: the row keeps replicate 1's seed. */
  expect_refused(path, "", "/runs row 1: seed 9076314268368536738 is not the seed of point 0 "
                 "replicate 0 (derived from master_seed): the row is a copy of another run, or "
                 "damaged");

  /* One run copied 400 times, the copies numbered as other runs and
   * replicates, in a file that declares one replicate. */
  f = damage_begin("dup_400", path, sizeof path);
  {
    hid_t ds = H5Dopen2(f, "/runs", H5P_DEFAULT);
    hid_t ft = H5Dget_type(ds);
    size_t size = H5Tget_size(ft);
    char *rows = malloc(400 * size);
    assert_non_null(rows);
    hsize_t zero = 0, one = 1;
    hid_t fsp = H5Dget_space(ds), msp = H5Screate_simple(1, &one, NULL);
    H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &zero, NULL, &one, NULL);
    assert_true(H5Dread(ds, ft, msp, fsp, H5P_DEFAULT, rows) >= 0);
    H5Sclose(msp);
    H5Sclose(fsp);
    H5Dclose(ds);
    for (int i = 1; i < 400; i++) memcpy(rows + (size_t)i * size, rows, size);
    hsize_t n = 400;
    dataset_replace(f, "/runs", ft, 1, &n, rows);
    free(rows);
    /* distinct run ids and replicates, each with its own seed: only the
     * count per point is wrong */
    uint64_t master = 0;
    hid_t a = H5Aopen(f, "master_seed", H5P_DEFAULT);
    assert_true(a >= 0 && H5Aread(a, H5T_NATIVE_UINT64, &master) >= 0);
    H5Aclose(a);
    for (hsize_t i = 0; i < 400; i++) {
      int64_t id = (int64_t)i;
      int32_t rep = (int32_t)i;
      uint64_t seed = swp_run_seed(master, 0, 0, rep);
      cell_write(f, "/runs", i, "run", H5T_NATIVE_INT64, &id);
      cell_write(f, "/runs", i, "replicate", H5T_NATIVE_INT32, &rep);
      cell_write(f, "/runs", i, "seed", H5T_NATIVE_UINT64, &seed);
    }
    H5Tclose(ft);
    H5Ldelete(f, "/ticks", H5P_DEFAULT);
    attr_replace_i64(f, "replicates", 1);
    attr_replace_i64(f, "n_runs", 400);
  }
  damage_end(f);
  /* The copies' coordinates disagree with their run ids before any count
   * does: a sweep's row r is point r / replicates. */
  snprintf(want, sizeof want,
           "%s: /runs row 1: run 1 is not point 0 replicate 1 of a sweep of 1 replicates", path);
  expect_refused_exact(path, want);
}

/* Item 6: a fill value of finished runs and one stored chunk. */
static void test_fill_value_runs(void **state) {
  (void)state;
  char path[256], want[512];
  hid_t f = damage_begin("fill_done", path, sizeof path);
  {
    hid_t ds = H5Dopen2(f, "/runs", H5P_DEFAULT);
    hid_t ft = H5Dget_type(ds);
    size_t size = H5Tget_size(ft);
    char *rows = malloc(8 * size);
    assert_non_null(rows);
    assert_true(H5Dread(ds, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
    H5Dclose(ds);
    H5Ldelete(f, "/runs", H5P_DEFAULT);
    hsize_t n = 1000000, chunk = 8, eight = 8, zero = 0;
    hid_t sp = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    assert_true(H5Pset_fill_value(dcpl, ft, rows) >= 0); /* row 0: done, a finished run */
    ds = H5Dcreate2(f, "/runs", ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t msp = H5Screate_simple(1, &eight, NULL);
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, &zero, NULL, &eight, NULL);
    assert_true(H5Dwrite(ds, ft, msp, sp, H5P_DEFAULT, rows) >= 0);
    H5Sclose(msp);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(ft);
    free(rows);
    H5Ldelete(f, "/ticks", H5P_DEFAULT);
    H5Adelete(f, "replicates");
    attr_replace_i64(f, "n_runs", 1000000);
  }
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /runs has a fill value with done = 1: rows never written would count as "
           "finished runs; the file is damaged",
           path);
  expect_refused_exact(path, want);
}

/* Item 7: a label that says another value than /points is not shown. */
static void test_lying_labels(void **state) {
  (void)state;
  char path[256], err[512], label[64];
  fmt_results r;
  /* /points row 0 has budget_ratio = 0.1; its /points_text label says inf. */
  hid_t f = damage_begin("label_lies", path, sizeof path);
  text_cell_write(f, "/points_text", 0, "budget_ratio", "inf");
  text_cell_write(f, "/points_text", 1, "backoff", "\xe2\x80\xae" "x"); /* RLO: not printable */
  damage_end(f);
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
  ana_value_label(&r, 0, 0, label, sizeof label);
  assert_string_equal(label, "0.1");
  ana_value_label(&r, 1, 1, label, sizeof label);
  assert_string_equal(label, "full");
  ana_value_label(&r, 0, 2, label, sizeof label); /* untouched labels stay */
  assert_string_equal(label, "inf");
  fmt_results_free(&r);

  /* The same through the sweep text when there is no /points_text. */
  f = damage_begin("label_lies_sweep", path, sizeof path);
  H5Ldelete(f, "/points_text", H5P_DEFAULT);
  attr_replace_string(f, "sweep_text", "[sweep]\nreplicates = 2\n[scenario]\nhorizon_ms = 3000\n"
                                       "[grid]\nbudget_ratio = 5, inf\nbackoff = none, full\n");
  damage_end(f);
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
  ana_value_label(&r, 0, 0, label, sizeof label);
  assert_string_equal(label, "0.1");
  fmt_results_free(&r);
}

/* Strings: names that reach tables and plots must be printable text. */
static void test_strings(void **state) {
  (void)state;
  char path[256], want[512], err[512];
  hid_t f = damage_begin("name_newline", path, sizeof path);
  points_rename(f, "budget_ratio", "budget_ratio\nsystem(\"touch /tmp/x\")\n#");
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /points column 1: its name holds a control character (at most 128 bytes of "
           "printable UTF-8)",
           path);
  expect_refused_exact(path, want);

  f = damage_begin("name_bad_utf8", path, sizeof path);
  points_rename(f, "backoff", "back\xc3off");
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /points column 2: its name is not valid UTF-8 (at most 128 bytes of printable "
           "UTF-8)",
           path);
  expect_refused_exact(path, want);

  f = damage_begin("ticks_name_esc", path, sizeof path);
  assert_true(H5Lmove(f, "/ticks/queue_depth", f, "/ticks/\x1b[2Jqueue", H5P_DEFAULT,
                      H5P_DEFAULT) >= 0);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: a member name of /ticks holds a control character (at most 128 bytes of "
           "printable UTF-8)",
           path);
  expect_refused_exact(path, want);

  f = damage_begin("format_esc", path, sizeof path);
  attr_replace_string(f, "format", "\x1b[2Jstormsweep-results");
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: not a stormsweep result file (its 'format' attribute holds a control character)",
           path);
  expect_refused_exact(path, want);

  /* Decoration that is not text is dropped, the file still read. */
  f = damage_begin("version_esc", path, sizeof path);
  attr_replace_string(f, "tool_version", "1.0\x1b]0;pwned\x07");
  damage_end(f);
  fmt_results r;
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
  assert_null(r.tool_version);
  fmt_results_free(&r);
}

/* Item 8: one huge compressed /ticks chunk under runs of 3000 ticks. */
static void test_huge_chunks(void **state) {
  (void)state;
  char path[256], want[512];
  hid_t f = damage_begin("ticks_huge_chunk", path, sizeof path);
  H5Ldelete(f, "/ticks", H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "/ticks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {8, 100000000}, chunk[2] = {1, 100000000};
  hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 9);
  hid_t ds = H5Dcreate2(g, "queue_depth", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  assert_true(ds >= 0);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(sp);
  H5Gclose(g);
  int32_t ticks = 100000000;
  attr_replace(f, "ticks", H5T_STD_I32LE, H5T_NATIVE_INT32, &ticks);
  damage_end(f);
  snprintf(want, sizeof want,
           "%s: /ticks is stored in chunks so large that plotting point 0 would decompress 0.7 "
           "GB for 23 KB of ticks; the file is damaged",
           path);
  expect_refused_exact(path, want);
}

/* Item 9: a million points (distinct values on every axis) are analysed in
 * O(P log P); the old quadratic levels took about ten minutes here. */
static void test_many_points(void **state) {
  (void)state;
  char path[256];
  hid_t f = damage_begin("million_points", path, sizeof path);
  {
    hid_t ds = H5Dopen2(f, "/points", H5P_DEFAULT);
    hid_t ft = H5Dget_type(ds);
    H5Dclose(ds);
    const size_t n = 1000000;
    hid_t mt = H5Tcreate(H5T_COMPOUND, 3 * sizeof(double));
    H5Tinsert(mt, "point", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "budget_ratio", 8, H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "backoff", 16, H5T_NATIVE_DOUBLE);
    double *rows = malloc(n * 3 * sizeof *rows);
    assert_non_null(rows);
    for (size_t p = 0; p < n; p++) {
      rows[3 * p] = (double)p;
      rows[3 * p + 1] = (double)p / 8.0;
      rows[3 * p + 2] = (double)(p % 4);
    }
    H5Ldelete(f, "/points", H5P_DEFAULT);
    H5Ldelete(f, "/points_text", H5P_DEFAULT);
    hsize_t dn = n, chunk = 65536;
    hid_t sp = H5Screate_simple(1, &dn, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 9);
    ds = H5Dcreate2(f, "/points", ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    assert_true(ds >= 0);
    assert_true(H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(mt);
    H5Tclose(ft);
    free(rows);
    attr_replace_i64(f, "n_points", (int64_t)n);
    H5Adelete(f, "n_runs");
  }
  damage_end(f);
  fmt_results r;
  ana_summary s;
  char err[512];
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
  assert_int_equal(r.n_points, 1000000);
  assert_int_equal(ana_summary_compute(&s, &r, 1500, ANA_INTERVAL_WILSON, err, sizeof err), 0);
  ana_grid2 g;
  if (ana_grid2_compute(&g, &r, &s, 0, 1) == 0) ana_grid2_free(&g);
  ana_summary_free(&s);
  fmt_results_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_base_file_is_fine), cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_not_hdf5),          cmocka_unit_test(test_wrong_format_attributes),
      cmocka_unit_test(test_wrong_layout),      cmocka_unit_test(test_ticks_layout),
      cmocka_unit_test(test_absurd_dimensions), cmocka_unit_test(test_rows_out_of_range),
      cmocka_unit_test(test_odd_but_readable),
      cmocka_unit_test(test_duplicate_runs),    cmocka_unit_test(test_fill_value_runs),
      cmocka_unit_test(test_lying_labels),      cmocka_unit_test(test_strings),
      cmocka_unit_test(test_huge_chunks),       cmocka_unit_test(test_many_points),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
