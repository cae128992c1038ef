/*
 * cmd_boundary.c — `stormsweep boundary`: where along one numeric axis a
 * cluster tips into metastability, and where P(pass) falls below its target,
 * with confidence intervals, for every combination of the sweep's other axes.
 *
 * The statistics (fit, interval, design, uniform-grid equivalent) live in
 * analysis/boundary.c; this file drives the engine for each batch the design
 * asks for (OpenMP, one eng_run per thread), prints the table, writes the
 * /boundary group of an HDF5 file and a gnuplot plot per combination.
 * Run k of combination c has seed eng_seed_derive(master, c, k): the batch
 * positions depend only on earlier results, so the output is identical for
 * any thread count.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boundary.h"
#include "cli.h"
#include "eng.h"
#include "swp.h"

#define MAX_COMBOS_PLOTTED 8

typedef struct brun {
  int64_t combination, index;
  double x;
  uint64_t seed;
  int8_t outcome, passed;
  double recovery_ms;
  int8_t y[ANA_BND_MAX_RESP];
} brun;

typedef struct bctx {
  const swp_sweep *sw;
  const char *key;
  int is_int;
  double goodput_below; /* > 0: the response is "success ratio below this" */
  int64_t combination;
  eng_config cfg;       /* the combination's configuration */
  eng_run **runs;       /* one per thread */
  int threads;
  brun *rec;            /* every run of every combination, in order */
  int64_t n_rec, cap_rec;
} bctx;

static void usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep boundary [SWEEP.ini] --axis KEY --range LO:HI [--log] [--level P]\n"
          "                           [--min-pass P] [--slo-ms MS] [--set KEY=VALUE]...\n"
          "                           [--max-runs N] [--width W] [--batch N] [-j N] [-o FILE]\n"
          "                           [--seed S] [--force] [--no-plot] [--quiet]\n"
          "\n"
          "Finds, for each combination of the sweep's other axes (without SWEEP.ini: the\n"
          "built-in seed study's scenario, its grid dropped), the value of the numeric setting\n"
          "KEY at which P(metastable) crosses P and the edge where P(pass) falls below the\n"
          "target, each with a 95%% profile-likelihood interval from a logistic fit. Runs are\n"
          "placed adaptively near the current crossing; it reports the runs spent and what a\n"
          "uniform grid of equal precision would cost (README: Boundary search).\n"
          "\n"
          "  --axis KEY           numeric setting to search along (any engine setting)\n"
          "  --range LO:HI        search interval of KEY\n"
          "  --log                fit and place runs on ln KEY (LO > 0)\n"
          "  --level P            P(metastable) level to locate (default 0.5)\n"
          "  --min-pass P         P(pass) target whose edge to locate (default 0.9)\n"
          "  --slo-ms MS          recovery SLO for pass (default: the scenario's slo_ms)\n"
          "  --set KEY=VALUE      fix a setting (removes its axis; also seed=, name=)\n"
          "  --max-runs N         run budget per combination (default 2000)\n"
          "  --width W            stop when each interval is narrower than W x the range\n"
          "                       width (on ln KEY with --log; default 0.05)\n"
          "  --batch N            runs per design step (default 32)\n"
          "  --goodput-below F    instead: locate where P(success ratio < F) crosses --level\n"
          "                       (a response with closed-form edges; README validation)\n"
          "  -j, --threads N      OpenMP threads (default: all)\n"
          "  -o, --output FILE    HDF5 file with a /boundary group (default boundary.h5);\n"
          "                       plots go to FILE without .h5 plus -cK.png\n"
          "  --seed S             master seed (default: the sweep's)\n"
          "  -f, --force          overwrite FILE\n"
          "  --no-plot            skip gnuplot\n"
          "  -q, --quiet          no progress lines\n"
          "\n"
          "Exit status: 0 done, 1 a run, the file or gnuplot failed, 2 bad usage.\n");
}

static int parse_double(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return s == end || *end || errno ? -1 : 0;
}

static int parse_i64(const char *s, int64_t lo, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (s == end || *end || errno || x < lo) return -1;
  *v = x;
  return 0;
}

static int rec_push(bctx *c, const brun *r) {
  if (c->n_rec == c->cap_rec) {
    int64_t cap = c->cap_rec ? 2 * c->cap_rec : 1024;
    brun *n = realloc(c->rec, (size_t)cap * sizeof *n);
    if (!n) return -1;
    c->rec = n;
    c->cap_rec = cap;
  }
  c->rec[c->n_rec++] = *r;
  return 0;
}

static int engine_oracle(void *user, int64_t first, size_t m, const double *x, uint8_t *const *y,
                         char *err, size_t errlen) {
  bctx *c = user;
  brun *batch = calloc(m, sizeof *batch);
  if (!batch) {
    snprintf(err, errlen, "boundary: out of memory");
    return -1;
  }
  int failed = 0;
  char first_err[512] = "";
#pragma omp parallel for schedule(dynamic, 1) num_threads(c->threads)
  for (size_t i = 0; i < m; i++) {
    brun *b = &batch[i];
    eng_config cfg = c->cfg;
    char val[64], msg[256];
    double xv = c->is_int ? round(x[i]) : x[i];
    snprintf(val, sizeof val, c->is_int ? "%.0f" : "%.17g", xv);
    b->combination = c->combination;
    b->index = first + (int64_t)i;
    b->x = xv;
    b->seed = eng_seed_derive(c->sw->seed, (uint64_t)c->combination, (uint64_t)b->index);
    eng_summary s;
    int rc = eng_config_set(&cfg, c->key, val, msg, sizeof msg);
    if (!rc) rc = eng_run_simulate(c->runs[omp_get_thread_num()], &cfg, b->seed, &s, msg, sizeof msg);
    if (rc) {
#pragma omp critical(boundary_err)
      if (!failed++) snprintf(first_err, sizeof first_err, "%s", msg);
      continue;
    }
    b->outcome = (int8_t)s.outcome;
    b->passed = (int8_t)s.passed_slo;
    b->recovery_ms = s.recovery_ms;
    if (c->goodput_below > 0) {
      double ratio = s.new_requests > 0 ? (double)s.successes / (double)s.new_requests : 1;
      b->y[0] = ratio < c->goodput_below;
    } else {
      b->y[0] = s.outcome == ENG_OUTCOME_METASTABLE;
      b->y[1] = !s.passed_slo; /* the crossing of P(pass) = target is that of P(fail) = 1 - target */
    }
  }
  int rc = 0;
  if (failed) {
    snprintf(err, errlen, "boundary: a run at %s failed: %s", c->key, first_err);
    rc = -1;
  }
  for (size_t i = 0; i < m && !rc; i++) {
    y[0][i] = (uint8_t)batch[i].y[0];
    if (c->goodput_below <= 0) y[1][i] = (uint8_t)batch[i].y[1];
    if (rec_push(c, &batch[i])) {
      snprintf(err, errlen, "boundary: out of memory");
      rc = -1;
    }
  }
  free(batch);
  return rc;
}

/* ---- text ---- */

static void fmt_x(double v, char *buf, size_t len) { snprintf(buf, len, "%.4g", v); }

static void crossing_text(const ana_bnd_opts *o, const ana_bnd_crossing *c, char *buf,
                          size_t len) {
  char e[32], lo[32], hi[32];
  fmt_x(ana_bnd_x_of_t(o, c->est), e, sizeof e);
  fmt_x(ana_bnd_x_of_t(o, c->lo), lo, sizeof lo);
  fmt_x(ana_bnd_x_of_t(o, c->hi), hi, sizeof hi);
  switch (c->status) {
  case ANA_BND_FOUND:
    snprintf(buf, len, "%-10s [%s%s, %s%s]", e, c->lo_open ? "<=" : "", lo, hi,
             c->hi_open ? "+" : "");
    break;
  case ANA_BND_BELOW:
    snprintf(buf, len, "below range (< %s), interval [%s, %s]", lo, lo, hi);
    break;
  case ANA_BND_ABOVE:
    snprintf(buf, len, "above range (> %s), interval [%s, %s]", hi, lo, hi);
    break;
  case ANA_BND_ABSENT:
    snprintf(buf, len, "none in range (every run had the same outcome)");
    break;
  default:
    snprintf(buf, len, "-");
  }
}

/* ---- HDF5 ---- */

static int h5_attr_str(hid_t obj, const char *name, const char *v) {
  return H5LTset_attribute_string(obj, ".", name, v ? v : "") < 0 ? -1 : 0;
}

static int h5_write_d(hid_t g, const char *name, int rank, const hsize_t *dims, const double *v) {
  return H5LTmake_dataset_double(g, name, rank, dims, v) < 0 ? -1 : 0;
}

static int h5_write_i64(hid_t g, const char *name, int rank, const hsize_t *dims, const int64_t *v) {
  return H5LTmake_dataset(g, name, rank, dims, H5T_NATIVE_INT64, v) < 0 ? -1 : 0;
}

typedef struct bresult {
  ana_bnd_fit fit[ANA_BND_MAX_RESP];
  ana_bnd_crossing cross[ANA_BND_MAX_RESP];
  int64_t runs, uniform[ANA_BND_MAX_RESP], uniform_levels[ANA_BND_MAX_RESP],
      uniform_reps[ANA_BND_MAX_RESP];
} bresult;

static int h5_write(const char *path, int force, const swp_sweep *sw, const ana_bnd_opts *o,
                    const char *key, const char **resp_names, const bresult *res, int64_t nc,
                    const bctx *c, const char *cmdline, char *err, size_t errlen) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fcreate(path, force ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    snprintf(err, errlen, "%s: cannot create the file", path);
    return -1;
  }
  hid_t g = H5Gcreate2(f, "/boundary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  size_t R = o->n_resp, C = (size_t)nc;
  int rc = g < 0;
  char *text = swp_sweep_format(sw);
  uint64_t seed = sw->seed;
  int32_t logs = o->log_scale;
  rc = rc || h5_attr_str(f, "format", "stormsweep-boundary") ||
       h5_attr_str(f, "tool_version", STORMSWEEP_VERSION) || h5_attr_str(f, "command_line", cmdline) ||
       h5_attr_str(f, "sweep_text", text) || h5_attr_str(g, "axis", key) ||
       H5LTset_attribute_int(g, ".", "log_scale", &logs, 1) < 0 ||
       H5LTset_attribute_double(g, ".", "range", (double[]){o->lo, o->hi}, 2) < 0 ||
       H5LTset_attribute_double(g, ".", "levels", o->level, R) < 0 ||
       H5LTset_attribute_double(g, ".", "conf", &o->conf, 1) < 0 ||
       H5LTset_attribute_double(g, ".", "width", &o->width, 1) < 0 ||
       H5LTset_attribute_long_long(g, ".", "max_runs", (const long long *)&o->max_runs, 1) < 0 ||
       H5LTset_attribute_long_long(g, ".", "batch", (const long long *)&o->batch, 1) < 0 ||
       H5LTset_attribute_ulong(g, ".", "master_seed", (const unsigned long *)&seed, 1) < 0 ||
       h5_attr_str(g, "interval", "profile likelihood") ||
       h5_attr_str(g, "model", "logit P = a + b t, t = x (or ln x when log_scale = 1)");
  free(text);
  /* response names as one comma-separated attribute */
  char names[128] = "";
  for (size_t r = 0; r < R; r++) {
    strncat(names, resp_names[r], sizeof names - strlen(names) - 2);
    if (r + 1 < R) strcat(names, ",");
  }
  rc = rc || h5_attr_str(g, "responses", names);
  double *est = malloc(C * R * sizeof *est), *lo = malloc(C * R * sizeof *lo),
         *hi = malloc(C * R * sizeof *hi), *coef = malloc(C * R * 2 * sizeof *coef);
  int64_t *status = malloc(C * R * sizeof *status), *open = malloc(C * R * 2 * sizeof *open),
          *unif = malloc(C * R * 3 * sizeof *unif), *spent = malloc(C * sizeof *spent);
  rc = rc || !est || !lo || !hi || !coef || !status || !open || !unif || !spent;
  for (size_t i = 0; !rc && i < C; i++) {
    spent[i] = res[i].runs;
    for (size_t r = 0; r < R; r++) {
      const ana_bnd_crossing *cr = &res[i].cross[r];
      size_t k = i * R + r;
      int ok = cr->status != ANA_BND_ABSENT && cr->status != ANA_BND_NONE;
      est[k] = ok ? ana_bnd_x_of_t(o, cr->est) : NAN;
      lo[k] = ok ? ana_bnd_x_of_t(o, cr->lo) : NAN;
      hi[k] = ok ? ana_bnd_x_of_t(o, cr->hi) : NAN;
      status[k] = cr->status;
      open[2 * k] = cr->lo_open;
      open[2 * k + 1] = cr->hi_open;
      coef[2 * k] = res[i].fit[r].a;
      coef[2 * k + 1] = res[i].fit[r].b;
      unif[3 * k] = res[i].uniform[r];
      unif[3 * k + 1] = res[i].uniform_levels[r];
      unif[3 * k + 2] = res[i].uniform_reps[r];
    }
  }
  hsize_t d2[2] = {C, R}, d3[3] = {C, R, 2}, d3u[3] = {C, R, 3}, d1[1] = {C};
  rc = rc || h5_write_d(g, "crossing", 2, d2, est) || h5_write_d(g, "interval_lo", 2, d2, lo) ||
       h5_write_d(g, "interval_hi", 2, d2, hi) || h5_write_i64(g, "status", 2, d2, status) ||
       h5_write_i64(g, "interval_open", 3, d3, open) || h5_write_d(g, "coef", 3, d3, coef) ||
       h5_write_i64(g, "runs_spent", 1, d1, spent) || h5_write_i64(g, "uniform_equivalent", 3, d3u, unif);
  /* combination labels */
  if (!rc) {
    char **labels = calloc(C, sizeof *labels);
    rc = !labels;
    for (size_t i = 0; !rc && i < C; i++) {
      labels[i] = malloc(1024);
      if (!labels[i]) {
        rc = 1;
        break;
      }
      if (sw->n_axes)
        swp_sweep_point_describe(sw, (int64_t)i, labels[i], 1024);
      else
        snprintf(labels[i], 1024, "(the scenario)");
    }
    if (!rc) {
      hid_t st = H5Tcopy(H5T_C_S1);
      H5Tset_size(st, H5T_VARIABLE);
      hid_t sp = H5Screate_simple(1, d1, NULL);
      hid_t ds = H5Dcreate2(g, "combinations", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      rc = ds < 0 || H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels) < 0;
      if (ds >= 0) H5Dclose(ds);
      H5Sclose(sp);
      H5Tclose(st);
    }
    for (size_t i = 0; labels && i < C; i++) free(labels[i]);
    free(labels);
  }
  /* per-run table */
  if (!rc) {
    typedef struct row {
      int64_t combination, run;
      double x;
      uint64_t seed;
      int8_t outcome, passed;
      double recovery_ms;
      int8_t response[ANA_BND_MAX_RESP];
    } row;
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(row));
    hsize_t rd[1] = {R};
    hid_t arr = H5Tarray_create2(H5T_NATIVE_INT8, 1, rd);
    H5Tinsert(t, "combination", HOFFSET(row, combination), H5T_NATIVE_INT64);
    H5Tinsert(t, "run", HOFFSET(row, run), H5T_NATIVE_INT64);
    H5Tinsert(t, "x", HOFFSET(row, x), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "seed", HOFFSET(row, seed), H5T_NATIVE_UINT64);
    H5Tinsert(t, "outcome", HOFFSET(row, outcome), H5T_NATIVE_INT8);
    H5Tinsert(t, "passed", HOFFSET(row, passed), H5T_NATIVE_INT8);
    H5Tinsert(t, "recovery_ms", HOFFSET(row, recovery_ms), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "response", HOFFSET(row, response), arr);
    row *rows = calloc((size_t)c->n_rec + 1, sizeof *rows);
    rc = !rows;
    for (int64_t i = 0; !rc && i < c->n_rec; i++) {
      const brun *b = &c->rec[i];
      rows[i] = (row){b->combination, b->index, b->x, b->seed, b->outcome, b->passed,
                      b->recovery_ms, {b->y[0], b->y[1]}};
    }
    hsize_t dn[1] = {(hsize_t)c->n_rec};
    hid_t sp = H5Screate_simple(1, dn, NULL);
    hid_t ds = rc ? -1 : H5Dcreate2(g, "runs", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc = rc || ds < 0 || H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0 ||
         h5_attr_str(ds, "columns",
                     "combination: index into combinations; run: index within the combination; "
                     "x: axis value; seed: eng_seed_derive(master_seed, combination, run); "
                     "outcome: 0 recovered, 1 slow, 2 metastable; passed: met the SLO; "
                     "recovery_ms: NaN unless recovered; response: the 0/1 outcome fitted for each "
                     "of the responses");
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(arr);
    H5Tclose(t);
    free(rows);
  }
  free(est), free(lo), free(hi), free(coef), free(status), free(open), free(unif), free(spent);
  if (g >= 0) H5Gclose(g);
  if (H5Fclose(f) < 0) rc = 1;
  if (rc) {
    snprintf(err, errlen, "%s: writing /boundary failed", path);
    return -1;
  }
  return 0;
}

/* ---- plot ---- */

static double expit(double v) { return 1 / (1 + exp(-v)); }

/* Data file and script for combination ci; labels hold only our own numbers
 * and the setting key as the engine's table spells it. */
static int plot_write(const char *base, int64_t ci, const ana_bnd_opts *o, const char *key,
                      const char **resp_names, const bresult *res, const bctx *c, char *png,
                      size_t pnglen, char *gp, size_t gplen) {
  char dat[4096];
  snprintf(dat, sizeof dat, "%s-c%lld.dat", base, (long long)ci);
  snprintf(gp, gplen, "%s-c%lld.gp", base, (long long)ci);
  snprintf(png, pnglen, "%s-c%lld.png", base, (long long)ci);
  FILE *f = fopen(dat, "w");
  if (!f) return -1;
  double rlo = ana_bnd_t_of_x(o, o->lo), rhi = ana_bnd_t_of_x(o, o->hi);
  /* block r*2: fitted curve with band; block r*2+1: binned proportions */
  for (size_t r = 0; r < o->n_resp; r++) {
    const ana_bnd_fit *ft = &res->fit[r];
    int flip = c->goodput_below <= 0 && r == 1; /* plot P(pass), fitted as P(fail) */
    fprintf(f, "# response %zu curve: x p lo hi\n", r);
    for (int i = 0; i <= 200; i++) {
      double t = rlo + (rhi - rlo) * i / 200.0, p, pl, ph;
      if (ft->separated) {
        int up = ft->direction > 0 ? t >= (ft->gap_lo + ft->gap_hi) / 2
                                   : t < (ft->gap_lo + ft->gap_hi) / 2;
        p = pl = ph = up;
      } else if (ft->direction == 0) {
        p = pl = ph = ft->n_pos ? 1 : 0;
      } else {
        double eta = ft->a + ft->b * t;
        double v = ft->cov[0] + 2 * t * ft->cov[1] + t * t * ft->cov[2];
        double se = v > 0 ? sqrt(v) : 0;
        p = expit(eta);
        pl = expit(eta - 1.959964 * se);
        ph = expit(eta + 1.959964 * se);
      }
      if (flip) {
        double q = 1 - pl;
        pl = 1 - ph;
        ph = q;
        p = 1 - p;
      }
      fprintf(f, "%.9g %.6f %.6f %.6f\n", ana_bnd_x_of_t(o, t), p, pl, ph);
    }
    fprintf(f, "\n\n# response %zu bins: x p lo hi n\n", r);
    enum { NB = 16 };
    int64_t k[NB] = {0}, n[NB] = {0};
    double sx[NB] = {0};
    for (int64_t i = 0; i < c->n_rec; i++) {
      const brun *b = &c->rec[i];
      if (b->combination != ci) continue;
      double t = ana_bnd_t_of_x(o, b->x);
      int bin = (int)floor((t - rlo) / (rhi - rlo) * NB);
      bin = bin < 0 ? 0 : bin >= NB ? NB - 1 : bin;
      n[bin]++;
      k[bin] += flip ? !b->y[r] : b->y[r];
      sx[bin] += t;
    }
    for (int b = 0; b < NB; b++) {
      if (!n[b]) continue;
      double p = (double)k[b] / (double)n[b], z = 1.959964, nn = (double)n[b];
      double den = 1 + z * z / nn, mid = (p + z * z / (2 * nn)) / den;
      double hw = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / den;
      fprintf(f, "%.9g %.6f %.6f %.6f %lld\n", ana_bnd_x_of_t(o, sx[b] / nn), p, mid - hw,
              mid + hw, (long long)n[b]);
    }
    fprintf(f, "\n\n");
  }
  if (fclose(f)) return -1;
  FILE *g = fopen(gp, "w");
  if (!g) return -1;
  char lo[32], hi[32];
  snprintf(lo, sizeof lo, "%.9g", o->lo);
  snprintf(hi, sizeof hi, "%.9g", o->hi);
  fprintf(g,
          "# stormsweep boundary plot; run again with: gnuplot %s\n"
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 900,560 } "
          "else { set terminal png size 900,560 }\n"
          "set termoption noenhanced\nset output '%s'\nset key outside right\nset grid\nset yrange [-0.02:1.02]\n"
          "set xrange [%s:%s]\n%s"
          "set xlabel '%s'\nset ylabel 'probability'\n"
          "set title 'combination %lld: fitted curve, 95%% band, crossing and its 95%% interval'\n",
          gp, png, lo, hi, o->log_scale ? "set logscale x\n" : "", key, (long long)ci);
  const char *colors[2] = {"#c0392b", "#2471a3"};
  for (size_t r = 0; r < o->n_resp; r++) {
    const ana_bnd_crossing *cr = &res->cross[r];
    if (cr->status == ANA_BND_FOUND) {
      fprintf(g,
              "set object %zu rect from %.9g, graph 0 to %.9g, graph 1 fc rgb '%s' "
              "fs transparent solid 0.12 noborder behind\n",
              r + 1, ana_bnd_x_of_t(o, cr->lo), ana_bnd_x_of_t(o, cr->hi), colors[r]);
      fprintf(g, "set arrow %zu from %.9g, graph 0 to %.9g, graph 1 nohead lc rgb '%s' dt 2\n",
              r + 1, ana_bnd_x_of_t(o, cr->est), ana_bnd_x_of_t(o, cr->est), colors[r]);
    }
  }
  fprintf(g, "plot ");
  for (size_t r = 0; r < o->n_resp; r++) {
    int flip = c->goodput_below <= 0 && r == 1;
    double level = flip ? 1 - o->level[r] : o->level[r];
    fprintf(g,
            "%s'%s' index %zu using 1:3:4 with filledcurves fc rgb '%s' fs transparent solid 0.2 "
            "notitle, '' index %zu using 1:2 with lines lw 2 lc rgb '%s' title '%s fit', "
            "'' index %zu using 1:2:3:4 with yerrorbars pt 7 lc rgb '%s' title '%s observed', "
            "%.6f with lines dt 3 lc rgb '%s' title 'level %.3g'",
            r ? ", " : "", dat, 2 * r, colors[r], 2 * r, colors[r], resp_names[r], 2 * r + 1,
            colors[r], resp_names[r], level, colors[r], level);
  }
  fprintf(g, "\n");
  return fclose(g) ? -1 : 0;
}

static int gnuplot_run(const char *script) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
      dup2(fd, 1);
      close(fd);
    }
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* ---- command ---- */

int cmd_boundary(int argc, char **argv) {
  const char *axis = NULL, *range = NULL, *out_path = "boundary.h5", *seed_s = NULL;
  double level = 0.5, min_pass = 0.9, slo_ms = NAN, goodput_below = 0, width = 0.05;
  int64_t max_runs = 2000, batch = 32, threads = 0;
  int log_scale = 0, force = 0, no_plot = 0, quiet = 0;
  char **sets = calloc((size_t)argc + 1, sizeof *sets);
  size_t n_sets = 0;
  if (!sets) return 1;
  enum { O_AXIS = 256, O_RANGE, O_LOG, O_LEVEL, O_MINPASS, O_SLO, O_SET, O_MAXRUNS, O_WIDTH,
         O_BATCH, O_SEED, O_NOPLOT, O_GOODPUT };
  static const struct option opts[] = {
      {"axis", required_argument, 0, O_AXIS},     {"range", required_argument, 0, O_RANGE},
      {"log", no_argument, 0, O_LOG},             {"level", required_argument, 0, O_LEVEL},
      {"min-pass", required_argument, 0, O_MINPASS}, {"slo-ms", required_argument, 0, O_SLO},
      {"set", required_argument, 0, O_SET},       {"max-runs", required_argument, 0, O_MAXRUNS},
      {"width", required_argument, 0, O_WIDTH},   {"batch", required_argument, 0, O_BATCH},
      {"seed", required_argument, 0, O_SEED},     {"no-plot", no_argument, 0, O_NOPLOT},
      {"goodput-below", required_argument, 0, O_GOODPUT},
      {"threads", required_argument, 0, 'j'},     {"output", required_argument, 0, 'o'},
      {"force", no_argument, 0, 'f'},             {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
  int rc = 2, ch;
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "j:o:fqh", opts, NULL)) != -1) {
    int bad = 0;
    switch (ch) {
    case O_AXIS: axis = optarg; break;
    case O_RANGE: range = optarg; break;
    case O_LOG: log_scale = 1; break;
    case O_LEVEL: bad = parse_double(optarg, &level); break;
    case O_MINPASS: bad = parse_double(optarg, &min_pass); break;
    case O_SLO: bad = parse_double(optarg, &slo_ms) || !(slo_ms >= 0); break;
    case O_SET: sets[n_sets++] = optarg; break;
    case O_MAXRUNS: bad = parse_i64(optarg, 2, &max_runs); break;
    case O_WIDTH: bad = parse_double(optarg, &width); break;
    case O_BATCH: bad = parse_i64(optarg, 2, &batch); break;
    case O_SEED: seed_s = optarg; break;
    case O_NOPLOT: no_plot = 1; break;
    case O_GOODPUT:
      bad = parse_double(optarg, &goodput_below) || !(goodput_below > 0 && goodput_below <= 1);
      break;
    case 'j': bad = parse_i64(optarg, 1, &threads); break;
    case 'o': out_path = optarg; break;
    case 'f': force = 1; break;
    case 'q': quiet = 1; break;
    case 'h': usage(stdout); free(sets); return 0;
    default:
      fprintf(stderr, "stormsweep boundary: unknown or incomplete option '%s' (see --help)\n",
              argv[optind - 1]);
      free(sets);
      return 2;
    }
    if (bad) {
      fprintf(stderr, "stormsweep boundary: bad value '%s' for %s\n", optarg, argv[optind - 2]);
      free(sets);
      return 2;
    }
  }
  const char *sweep_path = optind < argc ? argv[optind] : NULL;
  if (optind + 1 < argc) {
    fprintf(stderr, "stormsweep boundary: one sweep file at most ('%s' is extra)\n",
            argv[optind + 1]);
    free(sets);
    return 2;
  }
  if (!axis || !range) {
    fprintf(stderr, "stormsweep boundary: --axis KEY and --range LO:HI are required\n");
    free(sets);
    return 2;
  }
  const eng_setting *st = eng_settings_find(axis);
  if (!st || !(st->type == ENG_SET_INT || st->type == ENG_SET_INT64 || st->type == ENG_SET_DOUBLE ||
               st->type == ENG_SET_DOUBLE_INF)) {
    fprintf(stderr, "stormsweep boundary: --axis %s: %s\n", axis,
            st ? "not a numeric setting" : "unknown setting (stormsweep sim --list-settings)");
    free(sets);
    return 2;
  }
  ana_bnd_opts o = {.log_scale = log_scale, .conf = 0.95, .width = width, .max_runs = max_runs,
                    .batch = batch};
  {
    char rbuf[256];
    snprintf(rbuf, sizeof rbuf, "%s", range);
    char *colon = strchr(rbuf, ':');
    if (!colon) o.lo = NAN;
    else {
      *colon = 0;
      if (parse_double(rbuf, &o.lo) || parse_double(colon + 1, &o.hi)) o.lo = NAN;
    }
  }
  if (goodput_below > 0) {
    o.n_resp = 1;
    o.level[0] = level;
  } else {
    o.n_resp = 2;
    o.level[0] = level;
    o.level[1] = 1 - min_pass; /* P(fail) crosses 1 - target where P(pass) crosses target */
  }
  char err[1024];
  if (ana_bnd_opts_check(&o, err, sizeof err)) {
    fprintf(stderr, "stormsweep boundary: %s (got %s)\n", err, range);
    free(sets);
    return 2;
  }
  swp_sweep sw;
  swp_sweep_init(&sw);
  bctx c = {.sw = &sw, .key = st->key, .is_int = st->type == ENG_SET_INT || st->type == ENG_SET_INT64,
            .goodput_below = goodput_below};
  bresult *res = NULL;
  char *cmdline = NULL;
  if (sweep_path ? swp_sweep_parse_file(&sw, sweep_path, err, sizeof err)
                 : swp_sweep_parse_seed_study(&sw, err, sizeof err)) {
    fprintf(stderr, "stormsweep boundary: %s\n", err);
    goto done;
  }
  if (!sweep_path) /* the seed study's scenario: its grid dropped */
    while (sw.n_axes) {
      char a[256];
      snprintf(a, sizeof a, "%s=%s", sw.axes[0].key, sw.axes[0].values[0]);
      const eng_setting *ax = eng_settings_find(sw.axes[0].key);
      eng_config d;
      eng_config_defaults(&d);
      char dv[128];
      if (ax && !eng_config_get(&d, ax->key, dv, sizeof dv)) snprintf(a, sizeof a, "%s=%s", ax->key, dv);
      if (swp_sweep_override_set(&sw, a, err, sizeof err)) {
        fprintf(stderr, "stormsweep boundary: %s\n", err);
        goto done;
      }
    }
  for (size_t i = 0; i < n_sets; i++)
    if (swp_sweep_override_set(&sw, sets[i], err, sizeof err)) {
      fprintf(stderr, "stormsweep boundary: %s\n", err);
      goto done;
    }
  char a[512];
  snprintf(a, sizeof a, "%s=%.17g", st->key, c.is_int ? round(o.lo) : o.lo);
  if (swp_sweep_override_set(&sw, a, err, sizeof err)) {
    fprintf(stderr, "stormsweep boundary: --range: %s\n", err);
    goto done;
  }
  if (!isnan(slo_ms)) {
    snprintf(a, sizeof a, "slo_ms=%.17g", slo_ms);
    if (swp_sweep_override_set(&sw, a, err, sizeof err)) {
      fprintf(stderr, "stormsweep boundary: --slo-ms: %s\n", err);
      goto done;
    }
  }
  if (seed_s) {
    snprintf(a, sizeof a, "seed=%s", seed_s);
    if (swp_sweep_override_set(&sw, a, err, sizeof err)) {
      fprintf(stderr, "stormsweep boundary: --seed: %s\n", err);
      goto done;
    }
  }
  if (swp_sweep_check(&sw, err, sizeof err)) {
    fprintf(stderr, "stormsweep boundary: %s\n", err);
    goto done;
  }
  /* the far end of the range must be a valid configuration too */
  for (int64_t p = 0; p < sw.n_points; p++) {
    eng_config cfg;
    char v[64];
    snprintf(v, sizeof v, "%.17g", c.is_int ? round(o.hi) : o.hi);
    if (swp_sweep_point_config(&sw, p, &cfg, err, sizeof err) ||
        eng_config_set(&cfg, st->key, v, err, sizeof err) ||
        eng_config_validate(&cfg, err, sizeof err)) {
      fprintf(stderr, "stormsweep boundary: --range %s: %s\n", range, err);
      goto done;
    }
  }
  if (!force && access(out_path, F_OK) == 0) {
    fprintf(stderr, "stormsweep boundary: %s exists (use --force to overwrite)\n", out_path);
    goto done;
  }
  rc = 1;
  c.threads = threads > 0 ? (int)threads : omp_get_max_threads();
  c.runs = calloc((size_t)c.threads, sizeof *c.runs);
  res = calloc((size_t)sw.n_points, sizeof *res);
  if (!c.runs || !res) goto done;
  for (int i = 0; i < c.threads; i++)
    if (!(c.runs[i] = eng_run_create())) goto done;
  {
    size_t len = 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    cmdline = calloc(len + 32, 1);
    if (!cmdline) goto done;
    strcpy(cmdline, "stormsweep");
    for (int i = 0; i < argc; i++) {
      strcat(cmdline, " ");
      strcat(cmdline, argv[i]);
    }
  }
  const char *resp_names[2] = {goodput_below > 0 ? "goodput-below" : "metastable", "pass"};
  char lvl[2][64];
  if (goodput_below > 0)
    snprintf(lvl[0], sizeof lvl[0], "P(success ratio < %.3g) = %.3g", goodput_below, level);
  else {
    snprintf(lvl[0], sizeof lvl[0], "P(metastable) = %.3g", level);
    snprintf(lvl[1], sizeof lvl[1], "P(pass) = %.3g", min_pass);
  }
  printf("boundary of %s over [%.4g, %.4g]%s: %lld combination%s, 95%% profile-likelihood "
         "intervals, target width %.3g of the %srange\n",
         st->key, o.lo, o.hi, o.log_scale ? " (log scale)" : "", (long long)sw.n_points,
         sw.n_points == 1 ? "" : "s", o.width, o.log_scale ? "log " : "");
  int64_t total_runs = 0, total_unif[ANA_BND_MAX_RESP] = {0};
  int64_t n_unif[ANA_BND_MAX_RESP] = {0};
  for (int64_t p = 0; p < sw.n_points; p++) {
    c.combination = p;
    if (swp_sweep_point_config(&sw, p, &c.cfg, err, sizeof err)) {
      fprintf(stderr, "stormsweep boundary: %s\n", err);
      goto done;
    }
    ana_bnd_search s;
    if (ana_bnd_search_run(&s, &o, engine_oracle, &c, err, sizeof err)) {
      fprintf(stderr, "stormsweep boundary: %s\n", err);
      ana_bnd_search_free(&s);
      goto done;
    }
    bresult *br = &res[p];
    br->runs = s.n;
    double rlo = ana_bnd_t_of_x(&o, o.lo), rhi = ana_bnd_t_of_x(&o, o.hi);
    char desc[1024];
    if (sw.n_axes)
      swp_sweep_point_describe(&sw, p, desc, sizeof desc);
    else
      snprintf(desc, sizeof desc, "(the scenario)");
    printf("\n[%lld] %s: %lld runs in %lld batches\n", (long long)p, desc, (long long)s.n,
           (long long)s.batches);
    for (size_t r = 0; r < o.n_resp; r++) {
      br->fit[r] = s.fit[r];
      br->cross[r] = s.cross[r];
      br->uniform[r] = ana_bnd_uniform_equivalent(s.t, (size_t)s.n, &s.fit[r], &s.cross[r], rlo,
                                                  rhi, &br->uniform_levels[r],
                                                  &br->uniform_reps[r]);
      char txt[256], ut[128];
      crossing_text(&o, &s.cross[r], txt, sizeof txt);
      if (br->uniform[r] > 0) {
        snprintf(ut, sizeof ut, "%lld runs (%lld levels x %lld)", (long long)br->uniform[r],
                 (long long)br->uniform_levels[r], (long long)br->uniform_reps[r]);
        total_unif[r] += br->uniform[r];
        n_unif[r]++;
      } else {
        snprintf(ut, sizeof ut, "-");
      }
      printf("  %-32s crossing %s%s\n  %-32s uniform grid of equal precision: %s\n", lvl[r], txt,
             s.resolved[r] ? "" : "  (not resolved: run budget spent)", "", ut);
    }
    total_runs += s.n;
    ana_bnd_search_free(&s);
    if (!quiet) fflush(stdout);
  }
  printf("\nruns spent: %lld; uniform grids of equal precision:", (long long)total_runs);
  for (size_t r = 0; r < o.n_resp; r++) {
    if (n_unif[r])
      printf("%s %s crossing %lld runs (%lld of %lld combinations)", r ? ";" : "", resp_names[r],
             (long long)total_unif[r], (long long)n_unif[r], (long long)sw.n_points);
    else
      printf("%s %s crossing -", r ? ";" : "", resp_names[r]);
  }
  printf("\n");
  if (h5_write(out_path, force, &sw, &o, st->key, resp_names, res, sw.n_points, &c, cmdline, err,
               sizeof err)) {
    fprintf(stderr, "stormsweep boundary: %s\n", err);
    goto done;
  }
  printf("wrote %s (/boundary)\n", out_path);
  if (!no_plot) {
    char base[4096];
    snprintf(base, sizeof base, "%s", out_path);
    size_t bl = strlen(base);
    if (bl > 3 && !strcmp(base + bl - 3, ".h5")) base[bl - 3] = 0;
    for (int64_t p = 0; p < sw.n_points && p < MAX_COMBOS_PLOTTED; p++) {
      char png[4200], gp[4200];
      if (plot_write(base, p, &o, st->key, resp_names, &res[p], &c, png, sizeof png, gp,
                     sizeof gp)) {
        fprintf(stderr, "stormsweep boundary: cannot write the plot files next to %s\n", out_path);
        goto done;
      }
      if (gnuplot_run(gp)) {
        fprintf(stderr, "stormsweep boundary: gnuplot failed on %s\n", gp);
        goto done;
      }
      printf("plot: %s\n", png);
    }
    if (sw.n_points > MAX_COMBOS_PLOTTED)
      printf("(plots for the first %d combinations only)\n", MAX_COMBOS_PLOTTED);
  }
  rc = 0;
done:
  if (c.runs)
    for (int i = 0; i < c.threads; i++)
      if (c.runs[i]) eng_run_destroy(c.runs[i]);
  free(c.runs);
  free(c.rec);
  free(res);
  free(cmdline);
  free(sets);
  swp_sweep_free(&sw);
  return rc;
}
