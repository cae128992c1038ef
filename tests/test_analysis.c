/*
 * test_analysis.c — the analysis library on synthetic result files with
 * outcomes chosen so every number below is known by hand. The main file is
 * built with the fixture builder (tests/lib/testutil.h: the format
 * library's own writer); the variants the writer no longer makes (format
 * version 1, an int32 outcome column, no /points_text, no sweep text) and
 * the files that are not result files are written here with the HDF5 API
 * (write_legacy_file).
 *
 *   grid budget_ratio = 0.1, inf (slowest) x backoff_cap_ms = 0, 1000;
 *   20 replicates; run = point * 20 + replicate; the seed study's times
 *   (horizon 10 s, faults clear at 2.5 s) in 100 ticks of 100 ms.
 *   point 0 (0.1, 0):     20 recovered at 100 + 10 r ms, amplification 1.10
 *   point 1 (0.1, 1000):  20 recovered at  50 +  5 r ms, amplification 1.05
 *   point 2 (inf, 0):     20 metastable,                 amplification 3.00
 *   point 3 (inf, 1000):  10 metastable, 5 slow, 5 recovered at 2000 ms
 *   /ticks/queue_depth of run (p, r) is 100 p + r at every tick.
 *
 * It checks the per-point table, effects and their ranking, the
 * recommendation rule (qualifying, runner-up, "no point qualifies" with the
 * closest point and the replicate count), /analysis round trip, the
 * replicate band, incomplete files, column-type variants, and the one-line
 * errors for files that are not result files.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hdf5.h>

#include "ana.h"
#include "services.h"
#include "testutil.h"

enum { REPS = 20, POINTS = 4, TICKS = 100 };

static char tmpdir[256];

/* ------------------------------------------------------------------------ */
/* Writing synthetic files                                                   */
/* ------------------------------------------------------------------------ */

/* The file every fixture test reads, through the fixture builder: the
 * sweep below, each run's summary from fill_run, /ticks/queue_depth of run
 * (p, r) 100 p + r at every tick and every other metric 0. */
static const char *const good_sweep =
    "[sweep]\nreplicates = 20\nseed = 7\n[scenario]\ntick_ms = 100\n[grid]\n"
    "budget_ratio = 0.1, inf\nbackoff_cap_ms = 0, 1000\n";

static int32_t queue_series(void *user, int64_t point, int32_t replicate, eng_metric m,
                            int32_t t) {
  (void)user;
  (void)t;
  return m == ENG_M_QUEUE_DEPTH ? (int32_t)(100 * point + replicate) : 0;
}

/* Version-1 layouts and files that are no result file at all, which the
 * writer cannot make, written with the HDF5 API in the layout of
 * format/layout.h. */
typedef struct file_spec {
  const char *format;  /* NULL: no format attribute */
  int version;
  int outcome_enum;    /* 1: HDF5 enum on int8 (as the writer does); 0: int32 */
  int points_text;     /* write /points_text */
  int sweep_text;      /* write a parseable sweep_text */
  int undone;          /* last `undone` rows have done = 0 (an interrupted sweep) */
  int with_runs;       /* 0: leave /runs out (a wrong layout) */
} file_spec;

static const file_spec legacy = {"stormsweep-results", 1, 1, 1, 1, 0, 1};

typedef struct run_row {
  int64_t run, point;
  int32_t replicate;
  uint64_t seed;
  int8_t done;
  int8_t outcome8;
  int32_t outcome32;
  int8_t passed_slo;
  double recovery_ms, amplification, goodput_during, goodput_after, peak_queue;
  int32_t ticks;
  double extra; /* a column the reader does not know */
} run_row;

static void put_str_attr(hid_t obj, const char *name, const char *value) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, &value);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

static void put_num_attr(hid_t obj, const char *name, hid_t ft, hid_t mt, const void *v) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, mt, v);
  H5Aclose(a);
  H5Sclose(sp);
}

static const double budget_values[2] = {0.1, INFINITY};
static const double cap_values[2] = {0, 1000};
static const char *const budget_text[2] = {"0.1", "inf"};
static const char *const cap_text[2] = {"0", "1000"};

static void fill_run(run_row *w, int p, int r) {
  memset(w, 0, sizeof *w);
  w->run = p * REPS + r;
  w->point = p;
  w->replicate = r;
  w->seed = swp_run_seed(7, 0, p, r); /* the file's master_seed is 7 */
  w->done = 1;
  w->recovery_ms = NAN;
  w->goodput_during = 0.5;
  w->goodput_after = 1.0;
  w->peak_queue = 100.0 * p;
  w->ticks = TICKS;
  w->extra = 42;
  int outcome = ENG_OUTCOME_RECOVERED;
  switch (p) {
  case 0:
    w->recovery_ms = 100 + 10 * r;
    w->amplification = 1.10;
    w->goodput_during = 0.60;
    break;
  case 1:
    w->recovery_ms = 50 + 5 * r;
    w->amplification = 1.05;
    w->goodput_during = 0.70;
    break;
  case 2:
    outcome = ENG_OUTCOME_METASTABLE;
    w->amplification = 3.0;
    w->goodput_after = 0.1;
    break;
  default:
    if (r < 10) {
      outcome = ENG_OUTCOME_METASTABLE;
    } else if (r < 15) {
      outcome = ENG_OUTCOME_SLOW;
    } else {
      w->recovery_ms = 2000;
    }
    w->amplification = 2.0;
    break;
  }
  w->outcome8 = (int8_t)outcome;
  w->outcome32 = outcome;
  w->passed_slo = outcome == ENG_OUTCOME_RECOVERED && w->recovery_ms <= 1500;
}

static void write_legacy_file(const char *path, const file_spec *spec) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(f >= 0);
  if (spec->format) put_str_attr(f, "format", spec->format);
  int32_t version = spec->version;
  put_num_attr(f, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version);
  put_str_attr(f, "tool_version", "test");
  uint64_t seed = 7;
  put_num_attr(f, "master_seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &seed);
  double tick_ms = 1.0;
  put_num_attr(f, "tick_ms", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &tick_ms);
  int32_t complete = spec->undone ? 0 : 1;
  put_num_attr(f, "complete", H5T_STD_I32LE, H5T_NATIVE_INT32, &complete);
  if (spec->sweep_text)
    put_str_attr(f, "sweep_text",
                 "[sweep]\nreplicates = 20\nseed = 7\n[grid]\nbudget_ratio = 0.1, inf\n"
                 "backoff_cap_ms = 0, 1000\n");

  /* /points */
  typedef struct {
    int64_t point;
    double budget, cap;
  } point_row;
  point_row pts[POINTS];
  for (int p = 0; p < POINTS; p++) pts[p] = (point_row){p, budget_values[p / 2], cap_values[p % 2]};
  hid_t pt = H5Tcreate(H5T_COMPOUND, sizeof(point_row));
  H5Tinsert(pt, "point", offsetof(point_row, point), H5T_NATIVE_INT64);
  H5Tinsert(pt, "budget_ratio", offsetof(point_row, budget), H5T_NATIVE_DOUBLE);
  H5Tinsert(pt, "backoff_cap_ms", offsetof(point_row, cap), H5T_NATIVE_DOUBLE);
  hsize_t np = POINTS;
  hid_t sp = H5Screate_simple(1, &np, NULL);
  hid_t ds = H5Dcreate2(f, "/points", pt, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, pt, H5S_ALL, H5S_ALL, H5P_DEFAULT, pts);
  H5Dclose(ds);
  H5Tclose(pt);

  if (spec->points_text) {
    typedef struct {
      int64_t point;
      char budget[16], cap[16];
    } text_row;
    text_row tr[POINTS];
    memset(tr, 0, sizeof tr);
    for (int p = 0; p < POINTS; p++) {
      tr[p].point = p;
      snprintf(tr[p].budget, sizeof tr[p].budget, "%s", budget_text[p / 2]);
      snprintf(tr[p].cap, sizeof tr[p].cap, "%s", cap_text[p % 2]);
    }
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 16);
    hid_t tt = H5Tcreate(H5T_COMPOUND, sizeof(text_row));
    H5Tinsert(tt, "point", offsetof(text_row, point), H5T_NATIVE_INT64);
    H5Tinsert(tt, "budget_ratio", offsetof(text_row, budget), str);
    H5Tinsert(tt, "backoff_cap_ms", offsetof(text_row, cap), str);
    ds = H5Dcreate2(f, "/points_text", tt, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, tt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tr);
    H5Dclose(ds);
    H5Tclose(tt);
    H5Tclose(str);
  }
  H5Sclose(sp);

  /* /runs, with the outcome as the writer stores it (enum on int8). */
  if (spec->with_runs) {
    run_row rows[POINTS * REPS];
    for (int p = 0; p < POINTS; p++)
      for (int r = 0; r < REPS; r++) fill_run(&rows[p * REPS + r], p, r);
    for (int i = 0; i < spec->undone; i++) {
      run_row *w = &rows[POINTS * REPS - 1 - i];
      memset(w, 0, sizeof *w); /* what the writer's fill value gives */
      w->recovery_ms = NAN;
      w->ticks = -1;
    }
    hid_t rt = H5Tcreate(H5T_COMPOUND, sizeof(run_row));
    H5Tinsert(rt, "run", offsetof(run_row, run), H5T_NATIVE_INT64);
    H5Tinsert(rt, "point", offsetof(run_row, point), H5T_NATIVE_INT64);
    H5Tinsert(rt, "replicate", offsetof(run_row, replicate), H5T_NATIVE_INT32);
    H5Tinsert(rt, "seed", offsetof(run_row, seed), H5T_NATIVE_UINT64);
    H5Tinsert(rt, "done", offsetof(run_row, done), H5T_NATIVE_INT8);
    hid_t en = -1;
    if (spec->outcome_enum) {
      en = H5Tenum_create(H5T_NATIVE_INT8);
      int8_t v = 0;
      H5Tenum_insert(en, "recovered", &v);
      v = 1;
      H5Tenum_insert(en, "slow", &v);
      v = 2;
      H5Tenum_insert(en, "metastable", &v);
      H5Tinsert(rt, "outcome", offsetof(run_row, outcome8), en);
    } else {
      H5Tinsert(rt, "outcome", offsetof(run_row, outcome32), H5T_NATIVE_INT32);
    }
    H5Tinsert(rt, "passed_slo", offsetof(run_row, passed_slo), H5T_NATIVE_INT8);
    H5Tinsert(rt, "recovery_ms", offsetof(run_row, recovery_ms), H5T_NATIVE_DOUBLE);
    H5Tinsert(rt, "extra_column", offsetof(run_row, extra), H5T_NATIVE_DOUBLE);
    H5Tinsert(rt, "amplification", offsetof(run_row, amplification), H5T_NATIVE_DOUBLE);
    H5Tinsert(rt, "goodput_during", offsetof(run_row, goodput_during), H5T_NATIVE_DOUBLE);
    H5Tinsert(rt, "goodput_after", offsetof(run_row, goodput_after), H5T_NATIVE_DOUBLE);
    H5Tinsert(rt, "peak_queue", offsetof(run_row, peak_queue), H5T_NATIVE_DOUBLE);
    H5Tinsert(rt, "ticks", offsetof(run_row, ticks), H5T_NATIVE_INT32);
    hsize_t nr = POINTS * REPS;
    sp = H5Screate_simple(1, &nr, NULL);
    ds = H5Dcreate2(f, "/runs", rt, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(ds, rt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(rt);
    if (en >= 0) H5Tclose(en);
  }

  /* /ticks/queue_depth (runs x ticks), chunked by run like the writer's. */
  hid_t g = H5Gcreate2(f, "/ticks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {POINTS * REPS, TICKS}, chunk[2] = {1, TICKS};
  sp = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, 4);
  ds = H5Dcreate2(g, "queue_depth", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  int32_t *qd = malloc(sizeof(int32_t) * POINTS * REPS * TICKS);
  for (int run = 0; run < POINTS * REPS; run++)
    for (int t = 0; t < TICKS; t++) qd[run * TICKS + t] = 100 * (run / REPS) + run % REPS;
  H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, qd);
  free(qd);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(sp);
  H5Gclose(g);
  H5Fclose(f);
}

static void write_good_file(const char *path) {
  tu_file *f = tu_file_create(path, good_sweep, NULL);
  for (int p = 0; p < POINTS; p++)
    for (int r = 0; r < REPS; r++) {
      run_row w;
      fill_run(&w, p, r);
      tu_run run = {.point = p, .replicate = r, .series = queue_series};
      run.summary = tu_summary(w.outcome32, w.passed_slo, w.recovery_ms, w.amplification,
                               w.goodput_during, w.goodput_after);
      run.summary.peak_queue = w.peak_queue;
      tu_file_write_run(f, &run);
    }
  tu_file_close(f);
}

/* A path in this program's directory per test. */
static void temp_path(char *buf, size_t len, const char *tag) {
  char name[64];
  snprintf(name, sizeof name, "%s.h5", tag);
  tu_path(buf, len, tmpdir, name);
}

static int group_setup(void **state) {
  (void)state;
  return tu_tmpdir_make(tmpdir, sizeof tmpdir, "test_analysis");
}

static int group_teardown(void **state) {
  (void)state;
  return tu_tmpdir_remove(tmpdir);
}

typedef struct fixture {
  char path[256];
  fmt_results r;
  ana_summary s;
} fixture;

static int setup_good(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  temp_path(fx->path, sizeof fx->path, "good");
  write_good_file(fx->path);
  char err[512];
  if (fmt_results_read(&fx->r, fx->path, err, sizeof err) != 0) {
    print_error("read failed: %s\n", err);
    return -1;
  }
  if (ana_summary_compute(&fx->s, &fx->r, 1500, ANA_INTERVAL_WILSON, err, sizeof err) != 0)
    return -1;
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  ana_summary_free(&fx->s);
  fmt_results_free(&fx->r);
  unlink(fx->path);
  free(fx);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_read_layout(void **state) {
  fixture *fx = *state;
  const fmt_results *r = &fx->r;
  /* The current writer's (version 1 is read in test_incomplete_and_variants). */
  assert_int_equal(r->format_version, FMT_FORMAT_VERSION);
  assert_string_equal(r->tool_version, STORMSWEEP_VERSION);
  assert_int_equal(r->master_seed, 7);
  assert_int_equal(r->n_axes, 2);
  assert_string_equal(r->axes[0], "budget_ratio");
  assert_string_equal(r->axes[1], "backoff_cap_ms");
  assert_int_equal(r->n_points, POINTS);
  assert_int_equal(r->n_runs, POINTS * REPS);
  assert_int_equal(r->n_skipped, 0);
  assert_int_equal(r->complete, 1);
  assert_int_equal(r->n_ticks, TICKS);
  assert_true(isinf(r->values[2 * 2 + 0]));
  /* Times from the stored sweep: seed-study horizon 10 s, faults clear at 2.5 s. */
  assert_near(r->times[0].horizon_ms, 10000, 0);
  assert_near(r->times[0].fault_clear_ms, 2500, 0);
  assert_near(r->times[0].censor_ms, 7500, 0);
  assert_near(r->slo_ms, 1500, 0);
  char v[64];
  ana_value_label(r, 0, 3, v, sizeof v);
  assert_string_equal(v, "inf");
  char where[256];
  ana_point_describe(r, 1, where, sizeof where);
  assert_string_equal(where, "budget_ratio=0.1 backoff_cap_ms=1000");
  /* Outcomes came through the enum column. */
  assert_int_equal(r->runs[2 * REPS].outcome, ENG_OUTCOME_METASTABLE);
  assert_int_equal(r->runs[3 * REPS + 12].outcome, ENG_OUTCOME_SLOW);
}

static void test_point_table(void **state) {
  fixture *fx = *state;
  const ana_summary *s = &fx->s;
  const ana_point_stats *p0 = &s->points[0], *p1 = &s->points[1], *p2 = &s->points[2],
                        *p3 = &s->points[3];
  assert_int_equal(p0->n, REPS);
  assert_int_equal(p0->n_pass, REPS);
  assert_near(p0->p_meta, 0, 0);
  assert_near(p0->bad_exact.hi, 0.16843, 5e-5);
  assert_near(p0->pass_exact.lo, 0.83157, 5e-5);
  assert_near(p0->bad_wilson.hi, 0.16113, 5e-5);
  /* KM without censoring: 10th of 100..290 is 190, 18th 270, 20th 290. */
  assert_near(p0->rec_p50, 190, 0);
  assert_near(p0->rec_p90, 270, 0);
  assert_near(p0->rec_p99, 290, 0);
  assert_near(p0->amp.mean, 1.10, 1e-12);
  assert_near(p0->amp.ci.lo, 1.10, 1e-9);
  assert_near(p0->gp_during.mean, 0.60, 1e-12);
  assert_near(p1->rec_p50, 95, 0);
  assert_int_equal(p2->n_meta, REPS);
  assert_near(p2->p_meta, 1, 0);
  assert_true(isinf(p2->rec_p50));
  assert_near(p2->censor_ms, 7500, 0);
  assert_int_equal(p3->n_meta, 10);
  assert_int_equal(p3->n_slow, 5);
  assert_int_equal(p3->n_recovered, 5);
  assert_int_equal(p3->n_pass, 0); /* recovered at 2000 ms > 1500 ms SLO */
  assert_near(p3->p_meta, 0.5, 0);
  assert_near(p3->bad_exact.lo, 0.27196, 5e-5);
  assert_near(p3->bad_exact.hi, 0.72804, 5e-5);
  assert_true(isinf(p3->rec_p50)); /* S stays at 0.75 after 2000 ms */
  char buf[32];
  ana_ms_format(p3->rec_p50, p3->censor_ms, buf, sizeof buf);
  assert_string_equal(buf, ">7500");
  /* Display order: no metastability first, then by pass, then p90. */
  assert_int_equal(s->order[0], 1);
  assert_int_equal(s->order[1], 0);
  assert_int_equal(s->order[2], 3);
  assert_int_equal(s->order[3], 2);
}

static void test_slo_recomputed(void **state) {
  fixture *fx = *state;
  ana_summary s;
  char err[256];
  assert_int_equal(ana_summary_compute(&s, &fx->r, 2500, ANA_INTERVAL_EXACT, err, sizeof err), 0);
  assert_int_equal(s.points[3].n_pass, 5);
  assert_near(s.points[3].p_pass, 0.25, 0);
  ana_summary_free(&s);
  assert_int_equal(ana_summary_compute(&s, &fx->r, 150, ANA_INTERVAL_EXACT, err, sizeof err), 0);
  assert_int_equal(s.points[0].n_pass, 6); /* 100..150 */
  assert_int_equal(s.points[1].n_pass, 20);
  ana_summary_free(&s);
}

static void test_effects(void **state) {
  fixture *fx = *state;
  const ana_summary *s = &fx->s;
  assert_int_equal(s->n_axes, 2);
  const ana_axis_effect *first = &s->effects[0], *second = &s->effects[1];
  assert_int_equal(first->axis, 0); /* budget_ratio */
  assert_near(first->effect_bad, 0.75, 1e-12);
  assert_near(first->effect_pass, 1.0, 1e-12);
  assert_near(first->effect, 1.0, 1e-12);
  assert_int_equal(first->n_levels, 2);
  assert_near(first->levels[0].value, 0.1, 0);
  assert_int_equal(first->levels[0].n, 40);
  assert_int_equal(first->levels[1].n_meta, 30);
  assert_near(first->levels[1].p_bad, 0.75, 1e-12);
  assert_int_equal(second->axis, 1); /* backoff_cap_ms */
  assert_near(second->levels[0].p_bad, 0.5, 1e-12);
  assert_near(second->levels[1].p_bad, 0.25, 1e-12);
  assert_near(second->effect_bad, 0.25, 1e-12);
  assert_near(second->effect_pass, 0.0, 1e-12);
  /* The level interval is the pooled one: 30/40 with Wilson. */
  ana_interval w = ana_wilson(30, 40, ANA_Z95);
  assert_near(first->levels[1].bad_ci.lo, w.lo, 1e-12);
  /* Every outcome per level: budget inf has 5 recovered, 5
   * slow, 30 metastable of 40; its P(recovered) and P(slow) effects. */
  assert_int_equal(first->levels[1].n_rec, 5);
  assert_int_equal(first->levels[1].n_slow, 5);
  assert_int_equal(first->levels[0].n_rec, 40);
  assert_near(first->levels[1].p_rec, 5.0 / 40, 1e-12);
  assert_near(first->levels[1].p_slow, 5.0 / 40, 1e-12);
  assert_near(first->effect_rec, 1.0 - 5.0 / 40, 1e-12);
  assert_near(first->effect_slow, 5.0 / 40, 1e-12);
  char *txt = NULL;
  size_t txt_len = 0;
  FILE *mf = open_memstream(&txt, &txt_len);
  ana_summary_print_effects(mf, &fx->r, s);
  fclose(mf);
  assert_non_null(strstr(txt, "effect on P(pass) 1.000, on P(recovered) 0.875, on P(slow) 0.125, on P(bad) 0.750"));
  assert_non_null(strstr(txt, "rec/slw/met/col 5/5/30/0"));
  free(txt);

  ana_grid2 g;
  assert_int_equal(ana_grid2_compute(&g, &fx->r, s, 0, 1), 0);
  assert_int_equal(g.nx, 2);
  assert_int_equal(g.ny, 2);
  assert_near(g.cells[0 * 2 + 0].p_bad, 0, 0);
  assert_near(g.cells[1 * 2 + 0].p_bad, 1, 0);
  assert_near(g.cells[1 * 2 + 1].p_bad, 0.5, 0);
  assert_int_equal(g.cells[1 * 2 + 1].n_slow, 5);
  assert_int_equal(g.cells[1 * 2 + 1].n_rec, 5);
  assert_near(g.cells[1 * 2 + 1].p_rec, 0.25, 0);
  assert_int_equal(g.cells[1 * 2 + 1].n, 20);
  ana_grid2_free(&g);
}

static void test_recommend_qualifying(void **state) {
  fixture *fx = *state;
  ana_reco_opts o = {0.2, 0.8};
  ana_reco rec;
  assert_int_equal(ana_recommend(&rec, &fx->r, &fx->s, &o), 0);
  assert_int_equal(rec.n_qualifying, 2);
  assert_int_equal(rec.best, 1);      /* amplification 1.05 beats 1.10 */
  assert_int_equal(rec.runner_up, 0);
  assert_int_equal(rec.n_refuted, 2);
  char *text = ana_reco_text(&rec, &fx->r, &fx->s, &o);
  assert_contains(text, "RECOMMENDED: point 1: budget_ratio=0.1 backoff_cap_ms=1000");
  assert_contains(text, "Runner-up: point 0: budget_ratio=0.1 backoff_cap_ms=0");
  assert_contains(text, "20 runs: 20 recovered, 0 slow, 0 metastable, 0 collapsed without a fault; 20 passed");
  assert_contains(text, "p50 95 ms");
  assert_contains(text, "2 of 4 points qualify");
  free(text);
}

static void test_recommend_none_qualifies(void **state) {
  fixture *fx = *state;
  ana_reco_opts o = {0.01, 0.99};
  ana_reco rec;
  assert_int_equal(ana_recommend(&rec, &fx->r, &fx->s, &o), 0);
  assert_int_equal(rec.n_qualifying, 0);
  assert_int_equal(rec.best, -1);
  assert_int_equal(rec.closest, 1); /* tied bounds with point 0, cheaper */
  assert_near(rec.miss_pass, 0.99 - 0.83157, 5e-5);
  assert_near(rec.miss_meta, 0.16843 - 0.01, 5e-5);
  assert_int_equal(rec.runs_needed, 368);
  assert_int_equal(rec.max_runs, 20);
  assert_int_equal(rec.n_refuted, 2);  /* the no-budget points */
  assert_int_equal(rec.n_unproven, 2);
  assert_int_equal(rec.n_candidates, 2);
  assert_int_equal(rec.candidates[0], 1);
  assert_int_equal(rec.candidates[1], 0);
  char *text = ana_reco_text(&rec, &fx->r, &fx->s, &o);
  assert_contains(text, "NO POINT QUALIFIES");
  assert_contains(text, "Rejected by the data (95% interval wholly above 0.01 for P(bad) or below 0.99 for P(pass)): 2; consistent with the targets but not proven: 2.");
  assert_contains(text, "(or only the candidate points named below)");
  assert_contains(text, "at least 368 runs per point");
  assert_contains(text, "Closest (not proven to meet the targets): point 1: budget_ratio=0.1");
  assert_contains(text, "short by 0.1584");
  assert_contains(text, "over by 0.1584");
  assert_contains(text, "point 0: budget_ratio=0.1 backoff_cap_ms=0 (20/20 passed");
  free(text);
}

static void test_recommend_nothing_close(void **state) {
  fixture *fx = *state;
  /* Only the metastable points: refuted, no candidates, closest is the
   * least bad (point 3: lower P(pass) bound 0 ties, lower meta bound). */
  fmt_results r = fx->r;
  ana_summary s = fx->s;
  ana_point_stats only[2] = {fx->s.points[2], fx->s.points[3]};
  s.points = only;
  s.n_points = 2;
  ana_reco_opts o = {0.01, 0.99};
  ana_reco rec;
  assert_int_equal(ana_recommend(&rec, &r, &s, &o), 0);
  assert_int_equal(rec.best, -1);
  assert_int_equal(rec.closest, 1);
  assert_int_equal(rec.n_candidates, 0);
  assert_int_equal(rec.n_refuted, 2);
}

static void test_band(void **state) {
  fixture *fx = *state;
  ana_band b;
  char err[256];
  assert_int_equal(ana_band_read(&b, &fx->r, "queue_depth", 1, 10, err, sizeof err), 0);
  assert_int_equal(b.nbins, 10);
  assert_int_equal(b.ticks_per_bin, 10);
  assert_int_equal(b.n_runs, REPS);
  assert_near(b.t_ms[0], 500, 1e-12); /* the middle of ticks 0-9 of 100 ms */
  for (size_t k = 0; k < b.nbins; k++) {
    assert_near(b.p50[k], 109.5, 1e-9);
    assert_near(b.p05[k], 100.95, 1e-9);
    assert_near(b.p95[k], 118.05, 1e-9);
    assert_near(b.mean[k], 109.5, 1e-9);
  }
  ana_band_free(&b);
  assert_int_equal(ana_band_read(&b, &fx->r, "no_such_metric", 1, 10, err, sizeof err), -1);
  assert_contains(err, "no /ticks/no_such_metric");
  assert_int_equal(fmt_metric_exists(&fx->r, "queue_depth"), 1);
  assert_int_equal(fmt_metric_exists(&fx->r, "open_breakers"), 1); /* the writer writes all */
  assert_int_equal(fmt_metric_exists(&fx->r, "no_such_metric"), 0);
}

static void test_store_roundtrip(void **state) {
  fixture *fx = *state;
  char err[256];
  /* Twice: the second replaces the first. */
  assert_int_equal(ana_analysis_store(fx->path, &fx->r, &fx->s, "first", err, sizeof err), 0);
  assert_int_equal(ana_analysis_store(fx->path, &fx->r, &fx->s, "second", err, sizeof err), 0);
  hid_t f = H5Fopen(fx->path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t ds = H5Dopen2(f, "/analysis/points", H5P_DEFAULT);
  assert_true(ds >= 0);
  typedef struct {
    long long point, runs, metastable;
    double p_meta, hi;
  } row;
  hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(row));
  H5Tinsert(mt, "point", offsetof(row, point), H5T_NATIVE_LLONG);
  H5Tinsert(mt, "runs", offsetof(row, runs), H5T_NATIVE_LLONG);
  H5Tinsert(mt, "metastable", offsetof(row, metastable), H5T_NATIVE_LLONG);
  H5Tinsert(mt, "p_metastable", offsetof(row, p_meta), H5T_NATIVE_DOUBLE);
  H5Tinsert(mt, "p_metastable_exact_hi", offsetof(row, hi), H5T_NATIVE_DOUBLE);
  row rows[POINTS];
  assert_true(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
  assert_int_equal(rows[3].point, 3);
  assert_int_equal(rows[3].metastable, 10);
  assert_near(rows[2].p_meta, 1.0, 0);
  assert_near(rows[0].hi, 0.16843, 5e-5);
  H5Tclose(mt);
  H5Dclose(ds);
  hid_t g = H5Gopen2(f, "/analysis", H5P_DEFAULT);
  double slo = 0;
  hid_t a = H5Aopen(g, "slo_ms", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_DOUBLE, &slo);
  H5Aclose(a);
  assert_near(slo, 1500, 0);
  a = H5Aopen(g, "recommendation", H5P_DEFAULT);
  hid_t t = H5Aget_type(a);
  char *text = NULL;
  hid_t vt = H5Tcopy(H5T_C_S1);
  H5Tset_size(vt, H5T_VARIABLE);
  H5Tset_cset(vt, H5T_CSET_UTF8);
  assert_true(H5Aread(a, vt, &text) >= 0);
  assert_string_equal(text, "second");
  H5free_memory(text);
  H5Tclose(vt);
  H5Tclose(t);
  H5Aclose(a);
  assert_true(H5Lexists(g, "effects", H5P_DEFAULT) > 0);
  assert_true(H5Lexists(g, "recovery_histogram", H5P_DEFAULT) > 0);
  H5Gclose(g);
  H5Fclose(f);
  /* The file still reads as a result file afterwards. */
  fmt_results again;
  assert_int_equal(fmt_results_read(&again, fx->path, err, sizeof err), 0);
  assert_int_equal(again.n_runs, POINTS * REPS);
  fmt_results_free(&again);
}

static void test_json_and_csv(void **state) {
  fixture *fx = *state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ana_summary_print_json(f, &fx->r, &fx->s, "reco \"quoted\"");
  fclose(f);
  assert_contains(buf, "\"axes\":[\"budget_ratio\",\"backoff_cap_ms\"]");
  /* a numeric axis: numbers, null for infinity; its labels in settings_text */
  assert_contains(buf, "\"settings\":{\"budget_ratio\":null,\"backoff_cap_ms\":0}");
  assert_contains(buf, "\"settings_text\":{\"budget_ratio\":\"inf\",\"backoff_cap_ms\":\"0\"}");
  assert_contains(buf, "\"recovery_p50_ms\":null");
  assert_contains(buf, "\"recommendation\":\"reco \\\"quoted\\\"\"");
  free(buf);
  buf = NULL;
  f = open_memstream(&buf, &len);
  ana_summary_print_csv(f, &fx->r, &fx->s);
  fclose(f);
  char *second = strchr(buf, '\n');
  assert_non_null(second);
  assert_contains(buf, "point,budget_ratio,backoff_cap_ms,runs,recovered,slow,metastable");
  assert_true(!strncmp(second + 1, "1,0.1,1000,20,20,0,0,20,0,", 26)); /* best point first */
  free(buf);
  /* The terminal table names values and marks unreached quantiles. */
  buf = NULL;
  f = open_memstream(&buf, &len);
  ana_summary_print_table(f, &fx->r, &fx->s);
  ana_summary_print_effects(f, &fx->r, &fx->s);
  fclose(f);
  assert_contains(buf, ">7500");
  assert_contains(buf, " 1. budget_ratio");
  assert_contains(buf, " 2. backoff_cap_ms");
  free(buf);
}

static void test_incomplete_and_variants(void **state) {
  (void)state;
  char path[256], err[512];
  temp_path(path, sizeof path, "variant");
  /* int32 outcome, no /points_text, no sweep text, 7 rows not written. */
  file_spec spec = legacy;
  spec.outcome_enum = 0;
  spec.points_text = 0;
  spec.sweep_text = 0;
  spec.undone = 7;
  write_legacy_file(path, &spec);
  fmt_results r;
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
  assert_int_equal(r.format_version, 1);
  assert_string_equal(r.tool_version, "test");
  /* A file with only some metrics (this one has queue_depth alone). */
  assert_int_equal(fmt_metric_exists(&r, "queue_depth"), 1);
  assert_int_equal(fmt_metric_exists(&r, "open_breakers"), 0);
  assert_int_equal(r.n_runs, POINTS * REPS - 7);
  assert_int_equal(r.n_skipped, 7);
  assert_int_equal(r.complete, 0);
  assert_true(isnan(r.times[0].censor_ms));
  char v[64];
  ana_value_label(&r, 0, 2, v, sizeof v); /* no labels: formatted from the number */
  assert_string_equal(v, "inf");
  ana_summary s;
  assert_int_equal(ana_summary_compute(&s, &r, 1500, ANA_INTERVAL_WILSON, err, sizeof err), 0);
  assert_int_equal(s.points[3].n, REPS - 7);
  assert_int_equal(s.points[3].n_meta, 10);
  assert_true(isinf(s.points[3].censor_ms)); /* unknown horizon */
  char buf[32];
  ana_ms_format(s.points[3].rec_p50, s.points[3].censor_ms, buf, sizeof buf);
  assert_string_equal(buf, ">horizon");
  ana_summary_free(&s);
  fmt_results_free(&r);

  /* No /points_text but a sweep text: labels and times come from the sweep. */
  spec = legacy;
  spec.points_text = 0;
  write_legacy_file(path, &spec);
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), 0);
  assert_non_null(r.labels);
  ana_value_label(&r, 0, 2, v, sizeof v);
  assert_string_equal(v, "inf");
  ana_value_label(&r, 1, 3, v, sizeof v);
  assert_string_equal(v, "1000");
  assert_near(r.times[3].censor_ms, 7500, 0);
  fmt_results_free(&r);
  unlink(path);
}

static void expect_read_error(const char *path, const char *needle) {
  fmt_results r;
  char err[512] = "";
  assert_int_equal(fmt_results_read(&r, path, err, sizeof err), -1);
  assert_contains(err, needle);
  assert_null(strchr(err, '\n')); /* one line */
}

static void test_bad_files(void **state) {
  (void)state;
  char path[256];
  temp_path(path, sizeof path, "bad");
  FILE *f = fopen(path, "w");
  fputs("vnodes,capacity_factor\n1,2\n", f);
  fclose(f);
  expect_read_error(path, "not an HDF5 file");
  char err[512];
  fmt_results r0 = {0};
  ana_summary s0 = {0};
  assert_int_equal(ana_analysis_store(path, &r0, &s0, "", err, sizeof err), -1);
  assert_contains(err, "not an HDF5 file");

  file_spec spec = legacy;
  spec.format = NULL;
  write_legacy_file(path, &spec);
  expect_read_error(path, "not a stormsweep result file (no 'format' attribute)");
  spec.format = "something-else";
  write_legacy_file(path, &spec);
  expect_read_error(path, "format is 'something-else'");
  spec = legacy;
  spec.version = 4;
  write_legacy_file(path, &spec);
  expect_read_error(path, "format_version 4 is newer than this stormsweep understands (3)");
  spec = legacy;
  spec.with_runs = 0;
  write_legacy_file(path, &spec);
  expect_read_error(path, "no /runs table");
  unlink(path);
  expect_read_error("/nonexistent/stormsweep.h5", "cannot open");
}

/* The per-service figures' stated 95% (services.c) is a true 95% on
 * synthetic points where the truth is known: 2000 points of 40 runs, the
 * second service ending bad with p = 0.1 in each run and sending 1000 +
 * 100 x Binomial(4, 1/2) attempts per 1000 front calls (a chain link of
 * exactly 1.2). The P(bad) interval covers 0.1 in 92.5-97.5% of the points
 * with Wilson's and at least 94.5% with the exact one; the chain's t
 * interval covers 1.2 in 93-97%. */
static void test_service_intervals_cover(void **state) {
  (void)state;
  enum { P = 2000, N = 40, K = 2 };
  fmt_results r;
  memset(&r, 0, sizeof r);
  r.path = (char *)"synthetic";
  r.services = K;
  r.n_points = P;
  r.n_runs = (size_t)P * N;
  r.point_of_run = malloc(r.n_runs * sizeof *r.point_of_run);
  int32_t *cell = malloc(r.n_runs * ANA_SERVICE_FIELDS * K * sizeof *cell);
  assert_non_null(r.point_of_run);
  assert_non_null(cell);
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < r.n_runs; i++) {
    r.point_of_run[i] = i / N;
    int32_t *c = cell + i * ANA_SERVICE_FIELDS * K; /* [field][service]: outcome attempts calls */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int bad = (double)(x >> 11) / 9007199254740992.0 < 0.1;
    int b = __builtin_popcountll(x & 0xF);
    c[0 * K + 0] = ENG_OUTCOME_RECOVERED;
    c[0 * K + 1] = bad ? ENG_OUTCOME_METASTABLE : ENG_OUTCOME_RECOVERED;
    c[1 * K + 0] = 1000;
    c[1 * K + 1] = 1000 + 100 * b;
    c[2 * K + 0] = 1000;
    c[2 * K + 1] = 1000;
  }
  fmt_service_runs sr = {K, ANA_SERVICE_FIELDS, r.n_runs, cell};
  for (int method = 0; method < 2; method++) {
    ana_summary s;
    memset(&s, 0, sizeof s);
    s.method = method ? ANA_INTERVAL_EXACT : ANA_INTERVAL_WILSON;
    s.n_points = P;
    s.points = calloc(P, sizeof *s.points);
    s.order = malloc(P * sizeof *s.order);
    assert_non_null(s.points);
    assert_non_null(s.order);
    for (size_t p = 0; p < P; p++) s.points[p].point = (int64_t)p, s.order[p] = p;
    ana_services v;
    char err[256];
    assert_int_equal(ana_services_from(&v, &r, &s, &sr, err, sizeof err), 0);
    int cover_bad = 0, cover_amp = 0;
    for (size_t p = 0; p < P; p++) {
      const ana_service_stats *st = &v.stats[p * K + 1];
      assert_int_equal(st->n, N);
      cover_bad += st->bad_ci.lo <= 0.1 && 0.1 <= st->bad_ci.hi;
      cover_amp += st->amp.ci.lo <= 1.2 && 1.2 <= st->amp.ci.hi;
      assert_true(v.stats[p * K].amp.mean == 1 && v.stats[p * K].n_bad == 0);
    }
    double cb = (double)cover_bad / P, ca = (double)cover_amp / P;
    print_message("service intervals (%s): P(bad) coverage %.4f, chain coverage %.4f\n",
                  method ? "exact" : "Wilson", cb, ca);
    if (method ? cb < 0.945 : cb < 0.925 || cb > 0.975) fail_msg("P(bad) coverage %.4f", cb);
    if (ca < 0.93 || ca > 0.97) fail_msg("chain coverage %.4f", ca);
    ana_services_free(&v);
    free(s.points);
    free(s.order);
  }
  free(cell);
  free(r.point_of_run);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_read_layout, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_point_table, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_slo_recomputed, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_effects, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_recommend_qualifying, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_recommend_none_qualifies, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_recommend_nothing_close, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_band, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_store_roundtrip, setup_good, teardown),
      cmocka_unit_test_setup_teardown(test_json_and_csv, setup_good, teardown),
      cmocka_unit_test(test_incomplete_and_variants),
      cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_service_intervals_cover),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
