/*
 * report.c — `report`: image files a person can open and an
 * index.html that shows them with the tables and the recommendation.
 *
 * How: every plot's data goes into small text files in the output directory
 * (*.dat), one gnuplot script (plots.gp) draws each plot twice — PNG and SVG
 * — and gnuplot runs once, in that directory, with its messages kept in
 * gnuplot.log. The script picks pngcairo when this gnuplot has it and the
 * libgd "png" terminal otherwise (gnuplot-nox builds may lack cairo), and
 * uses noenhanced text so setting keys like budget_ratio print as written.
 *
 * Plots:
 *   heatmap_bad         P(bad) (decision.h: metastable, collapsed or
 *                       undetermined) over two axes, runs of the other axes
 *                       pooled; each cell labelled with its outcomes, a cell
 *                       whose runs all collapsed labelled COLLAPSED
 *   heatmap_pass, heatmap_recovered  P(pass) and P(recovered) likewise
 *                       (docs/decisions.md); all from heatmap.dat
 *   recovery_survival   Kaplan–Meier: fraction of runs not yet recovered vs
 *                       ms after fault clearance (censored at the horizon)
 *   recovery_histogram  recovery times of the recovered runs, as shares of
 *                       each point's runs (a refined point's many fresh runs
 *                       do not make its curve taller)
 *   queue_depth, open_breakers, goodput
 *                       per-tick metric across replicates: median line and
 *                       5–95% band, each replicate first averaged over bins
 *                       of ticks (ana_band_read: one run row at a time)
 *
 * The data files stay in the directory so a plot can be redrawn or restyled
 * by editing plots.gp and running gnuplot on it again.
 *
 * Safety (the result file and the output's surroundings may be someone
 * else's): every string from the file reaches plots.gp only through
 * ana_gp_text, so it cannot leave its quotes; the whole report is built in a
 * fresh private directory (fmt_outdir: mkdtemp next to DIR, files created
 * O_EXCL | O_NOFOLLOW) where gnuplot also runs (plot.h), and is installed
 * only when complete. An existing DIR is replaced only when it is ours, not
 * writable by others, not a symbolic link, and empty or an earlier report;
 * the swap is atomic (RENAME_EXCHANGE), so an interrupted report leaves the
 * old one whole. The stop flag (Ctrl-C) is polled between plots and while
 * gnuplot runs: gnuplot is then killed and reaped and the private directory
 * removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ana.h"
#include "fmt_outfile.h"
#include "plot.h"
#include "refine.h"
#include "refine_eval.h"
#include "textsafe.h"

enum { MAX_CURVE_POINTS = 8, BAND_BINS = 1000 };

typedef struct band_metric {
  const char *metric, *file, *title, *ylabel;
  int overlay_input; /* the input rate (new requests/s) on the right axis */
} band_metric;

static const band_metric band_metrics[] = {
    {"queue_depth", "queue_depth", "Total queue depth across replicates (median, 5-95% band)",
     "attempts queued (bin mean)", 0},
    {"open_breakers", "open_breakers",
     "Open circuit breakers across replicates (median, 5-95% band)",
     "open or half-open breakers (bin mean)", 0},
    {"successes", "goodput", "Goodput across replicates (median, 5-95% band)",
     "successes per tick (bin mean)", 0},
    /* what users see: the latency windows' values (files from before them
     * have none: the plot is left out) */
    {"latency_p99_us", "latency_p99",
     "p99 request latency across replicates (median, 5-95% band)",
     "p99 latency of the window, us (bin mean)", 1},
    {"error_rate_ppm", "error_rate", "Request error rate across replicates (median, 5-95% band)",
     "failed / ended requests, ppm (bin mean)", 1},
};
/* What the user-view plots overlay: the offered traffic, so a reader sees
 * which part of it the errors and the latency came with. */
static const band_metric input_band = {"new_requests", "input", "", "", 0};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

static void html_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<')
      fputs("&lt;", f);
    else if (*s == '>')
      fputs("&gt;", f);
    else if (*s == '&')
      fputs("&amp;", f);
    else if (*s == '"')
      fputs("&quot;", f);
    else
      fputc(*s, f);
  }
}

/* An existing DIR may be replaced when it is an earlier report: its
 * plots.gp, a regular file, says so. */
static int is_old_report(const char *dir) {
  return ana_gp_dir_is_ours(dir, "plots.gp", "report");
}

static int stopped(const volatile sig_atomic_t *stop) { return stop ? (int)*stop : 0; }

/* ------------------------------------------------------------------------ */
/* Choosing what to plot                                                     */
/* ------------------------------------------------------------------------ */

static int has_index(const size_t *list, size_t n, size_t v) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == v) return 1;
  return 0;
}

/* Worst point: the last in the display order that has runs. */
static long worst_point(const ana_summary *s) {
  for (size_t k = s->n_points; k-- > 0;)
    if (s->points[s->order[k]].n > 0) return (long)s->order[k];
  return -1;
}

/* The points whose curves are drawn: the user's, or the recommended (else
 * the closest) point and the worst one. Returns the count. */
static size_t curve_points(const fmt_results *r, const ana_summary *s, const ana_report_opts *o,
                           const ana_reco *rec, size_t *out) {
  size_t n = 0;
  if (o->points) {
    for (size_t i = 0; i < o->n_points && n < MAX_CURVE_POINTS; i++) {
      long p = fmt_results_point_index(r, o->points[i]);
      if (p >= 0 && !has_index(out, n, (size_t)p)) out[n++] = (size_t)p;
    }
    return n;
  }
  long first = rec->best >= 0 ? rec->best : rec->closest;
  if (first >= 0) out[n++] = (size_t)first;
  long worst = worst_point(s);
  if (worst >= 0 && !has_index(out, n, (size_t)worst)) out[n++] = (size_t)worst;
  return n;
}

/* Points for the recovery-time plots: the curve points plus a spread over
 * the display order (best, quartiles, worst), at most MAX_CURVE_POINTS. */
static size_t recovery_points(const ana_summary *s, const size_t *curve, size_t n_curve,
                              size_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < n_curve; i++) out[n++] = curve[i];
  size_t with_runs = 0;
  for (size_t k = 0; k < s->n_points; k++)
    if (s->points[s->order[k]].n > 0) with_runs++;
  if (with_runs == 0) return n;
  const double q[] = {0.0, 0.25, 0.5, 0.75, 1.0};
  for (size_t i = 0; i < 5 && n < 6; i++) {
    size_t k = (size_t)llround(q[i] * (double)(with_runs - 1));
    size_t p = s->order[k];
    if (!has_index(out, n, p)) out[n++] = p;
  }
  return n;
}

static void axes_choose(const ana_summary *s, const ana_report_opts *o, long *ax, long *ay) {
  *ax = o->x_axis;
  *ay = o->y_axis;
  for (size_t k = 0; k < s->n_axes && (*ax < 0 || *ay < 0); k++) {
    long a = (long)s->effects[k].axis;
    if (a == *ax || a == *ay) continue;
    if (*ax < 0)
      *ax = a;
    else
      *ay = a;
  }
}

/* ------------------------------------------------------------------------ */
/* Data files                                                                */
/* ------------------------------------------------------------------------ */

static int heatmap_write(const fmt_results *r, const ana_summary *s, long ax, long ay,
                         const char *dir, ana_grid2 *g, char *err, size_t errlen) {
  if (ay >= 0) {
    if (ana_grid2_compute(g, r, s, (size_t)ax, (size_t)ay) != 0) goto oom;
  } else {
    /* One axis: a single row, the axis's pooled levels. */
    const ana_axis_effect *e = NULL;
    for (size_t k = 0; k < s->n_axes; k++)
      if ((long)s->effects[k].axis == ax) e = &s->effects[k];
    memset(g, 0, sizeof *g);
    if (!e) goto oom;
    g->ax = g->ay = (size_t)ax;
    g->nx = e->n_levels;
    g->ny = 1;
    g->xv = malloc((g->nx ? g->nx : 1) * sizeof *g->xv);
    g->yv = malloc(sizeof *g->yv);
    g->cells = malloc((g->nx ? g->nx : 1) * sizeof *g->cells);
    g->xex = malloc((g->nx ? g->nx : 1) * sizeof *g->xex);
    g->yex = calloc(1, sizeof *g->yex);
    if (!g->xv || !g->yv || !g->xex || !g->yex || !g->cells) goto oom;
    g->yv[0] = NAN;
    for (size_t i = 0; i < g->nx; i++) {
      g->xv[i] = e->levels[i].value;
      g->xex[i] = e->levels[i].example;
      g->cells[i] = e->levels[i];
    }
  }
  FILE *f = fmt_dir_file_create(dir, "heatmap.dat", err, errlen);
  if (!f) return -1;
  /* One file for the three heat maps (bad, pass, recovered): every outcome
   * of a cell, so a cell with no bad run but most runs slow, or one whose
   * runs all collapsed, is visible as such. */
  fprintf(f, "# x_index y_index p_bad runs bad p_pass passed p_recovered recovered slow "
             "collapsed undetermined metastable p_collapsed (runs of the other axes pooled; "
             ANA_BAD_MEANING ")\n");
  for (size_t i = 0; i < g->nx; i++) {
    for (size_t j = 0; j < g->ny; j++) {
      const ana_level *c = &g->cells[i * g->ny + j];
      if (c->n > 0)
        fprintf(f, "%zu %zu %.6f %lld %lld %.6f %lld %.6f %lld %lld %lld %lld %lld %.6f\n", i, j,
                c->p_bad, (long long)c->n, (long long)c->n_bad, c->p_pass, (long long)c->n_pass,
                c->p_rec, (long long)c->n_rec, (long long)c->n_slow, (long long)c->n_coll,
                (long long)c->n_undet, (long long)c->n_meta, c->p_coll);
      else
        fprintf(f, "%zu %zu NaN 0 0 NaN 0 NaN 0 0 0 0 0 NaN\n", i, j);
    }
    fprintf(f, "\n");
  }
  return fmt_dir_file_close(f, dir, "heatmap.dat", err, errlen);
oom:
  snprintf(err, errlen, "out of memory for the heat map");
  return -1;
}

static int km_write(const fmt_results *r, const ana_summary *s, size_t p, const char *dir,
                    char *err, size_t errlen) {
  const ana_point_stats *ps = &s->points[p];
  size_t n = (size_t)ps->n;
  double *t = malloc((n ? n : 1) * sizeof *t);
  unsigned char *ev = malloc(n ? n : 1);
  ana_km km = {0};
  if (!t || !ev) {
    free(t);
    free(ev);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  n = ana_point_samples(r, p, ps->censor_ms, t, ev);
  int rc = ana_km_compute(&km, t, ev, n);
  free(t);
  free(ev);
  if (rc != 0) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  char name[64];
  snprintf(name, sizeof name, "km_%lld.dat", (long long)ps->point);
  FILE *f = fmt_dir_file_create(dir, name, err, errlen);
  if (!f) {
    ana_km_free(&km);
    return -1;
  }
  fprintf(f, "# ms_after_clearance fraction_not_recovered (Kaplan-Meier)\n0 1\n");
  double last = 1.0, end = 0.0;
  for (size_t i = 0; i < km.n_steps; i++) {
    if (!isfinite(km.steps[i].t)) continue;
    fprintf(f, "%.6g %.6g\n", km.steps[i].t, km.steps[i].surv);
    last = km.steps[i].surv;
    end = km.steps[i].t;
  }
  if (isfinite(ps->censor_ms) && ps->censor_ms > end)
    fprintf(f, "%.6g %.6g\n", ps->censor_ms, last);
  ana_km_free(&km);
  return fmt_dir_file_close(f, dir, name, err, errlen);
}

static int hist_write(const fmt_results *r, const size_t *pts, size_t n,
                      double hhi, const char *dir, char *err, size_t errlen) {
  FILE *f = fmt_dir_file_create(dir, "recovery_histogram.dat", err, errlen);
  if (!f) return -1;
  ana_histogram *h = calloc(n ? n : 1, sizeof *h);
  if (!h) {
    fclose(f);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) ana_point_histogram(&h[i], r, pts[i], hhi, ANA_HISTOGRAM_BINS);
  /* Shares of each point's runs, so every point weighs the same: a refined
   * point's hundreds of fresh runs do not dwarf a 20-run point. */
  fprintf(f, "# bin_centre_ms then, per plotted point, the share of its runs (all of them, "
             "screening and fresh) that recovered in the bin\n");
  for (size_t b = 0; b < ANA_HISTOGRAM_BINS; b++) {
    fprintf(f, "%.6g", (b + 0.5) * hhi / ANA_HISTOGRAM_BINS);
    for (size_t i = 0; i < n; i++) {
      int64_t total = h[i].under + h[i].over + h[i].missing;
      for (size_t k = 0; h[i].counts && k < ANA_HISTOGRAM_BINS; k++) total += h[i].counts[k];
      fprintf(f, " %.6g", h[i].counts && total ? (double)h[i].counts[b] / (double)total : 0.0);
    }
    fprintf(f, "\n");
  }
  for (size_t i = 0; i < n; i++) ana_histogram_free(&h[i]);
  free(h);
  return fmt_dir_file_close(f, dir, "recovery_histogram.dat", err, errlen);
}

/* Writes band_<file>_<id>.dat; returns 1 written, 0 metric absent, -1 error. */
static int band_write(const fmt_results *r, const band_metric *m, size_t p, const char *dir,
                      char *err, size_t errlen) {
  ana_band b;
  if (ana_band_read(&b, r, m->metric, p, BAND_BINS, err, errlen) != 0) return -1;
  char name[128];
  snprintf(name, sizeof name, "band_%s_%lld.dat", m->file, (long long)r->point_ids[p]);
  FILE *f = fmt_dir_file_create(dir, name, err, errlen);
  if (!f) {
    ana_band_free(&b);
    return -1;
  }
  /* A bin holds stored rows; a decimated file's row spans row_ticks ticks. */
  long long per_bin = (long long)b.ticks_per_bin * (r->row_ticks > 1 ? r->row_ticks : 1);
  fprintf(f, "# %s of point %lld over %zu runs, %lld ticks per bin\n# t_ms p05 p50 p95 mean\n",
          m->metric, (long long)r->point_ids[p], b.n_runs, per_bin);
  for (size_t k = 0; k < b.nbins; k++)
    fprintf(f, "%.6g %.6g %.6g %.6g %.6g\n", b.t_ms[k], b.p05[k], b.p50[k], b.p95[k], b.mean[k]);
  ana_band_free(&b);
  return fmt_dir_file_close(f, dir, name, err, errlen) == 0 ? 1 : -1;
}

/* ------------------------------------------------------------------------ */
/* gnuplot script                                                            */
/* ------------------------------------------------------------------------ */

static void point_title(const fmt_results *r, size_t p, char *buf, size_t len) {
  char where[900], raw[1024];
  ana_point_describe(r, p, where, sizeof where);
  snprintf(raw, sizeof raw, "point %lld: %s", (long long)r->point_ids[p], where);
  ana_gp_text(buf, len, raw);
}


static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

/* The heat maps' commands (P(pass), P(recovered), P(bad)). */
static int script_heatmaps(FILE *f, const fmt_results *r, long ax, long ay, const ana_grid2 *g) {
  char *body = NULL;
  size_t blen = 0;
  /* Heat maps: P(pass) and P(recovered) (green = good) and P(bad) (green =
   * none), each labelled with every outcome; a cell whose runs all
   * collapsed is red on every map and labelled COLLAPSED; on the bad map,
   * cells where most runs were slow are hatched, so "no bad run" is never
   * read as "healthy". */
  static const struct {
    const char *name, *what, *label, *palette;
    int column;
  } maps[] = {
      {"heatmap_pass", "P(pass SLO)",
       "sprintf('%.2f\\n%d/%d pass\\n%d slow, %d bad', $6, $7, $4, $10, $5)",
       "set palette defined (0 '#d73027', 0.5 '#fee08b', 1 '#1a9850')", 6},
      {"heatmap_recovered", "P(recovered)",
       "sprintf('%.2f\\n%d rec/%d slow\\n%d bad of %d', $8, $9, $10, $5, $4)",
       "set palette defined (0 '#d73027', 0.5 '#fee08b', 1 '#1a9850')", 8},
      {"heatmap_bad", "P(bad)",
       "sprintf('%.2f\\n%d/%d bad\\n%d met/%d col/%d und\\n%d slow', $3, $5, $4, $13, $11, "
       "$12, $10)",
       "set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')", 3},
  };
  for (size_t m = 0; ax >= 0 && m < sizeof maps / sizeof maps[0]; m++) {
    FILE *b = open_memstream(&body, &blen);
    if (!b) return -1;
    char xn[128], yn[128];
    ana_gp_text(xn, sizeof xn, r->axes[ax]);
    ana_gp_text(yn, sizeof yn, ay >= 0 ? r->axes[ay] : "(all points)");
    /* two lines: one would run past the edge of the image */
    fprintf(b, "reset\nset title '%s by %s and %s' . \"\\n\" . '(other axes pooled; outcomes of "
               "the runs in each cell%s)'\n", maps[m].what, xn, yn,
            maps[m].column == 3 ? "; hatched: most runs slow, not recovered in time" : "");
    fprintf(b, "set xlabel '%s'\nset ylabel '%s'\n", xn, yn);
    fprintf(b, "%s\nset cbrange [0:1]\nset cblabel '%s%s'\n", maps[m].palette, maps[m].what,
            maps[m].column == 3 ? " (" ANA_BAD_MEANING ")" : "");
    fprintf(b, "set xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\n", g->nx - 1, g->ny - 1);
    fprintf(b, "set xtics (");
    for (size_t i = 0; i < g->nx; i++) {
      char v[64], t[64];
      ana_value_label(r, (size_t)ax, g->xex[i], v, sizeof v);
      ana_gp_text(t, sizeof t, v);
      fprintf(b, "%s'%s' %zu", i ? ", " : "", t, i);
    }
    fprintf(b, ")\nset ytics (");
    if (ay >= 0) {
      for (size_t j = 0; j < g->ny; j++) {
        char v[64], t[64];
        ana_value_label(r, (size_t)ay, g->yex[j], v, sizeof v);
        ana_gp_text(t, sizeof t, v);
        fprintf(b, "%s'%s' %zu", j ? ", " : "", t, j);
      }
    } else {
      fprintf(b, "'all' 0");
    }
    /* Each cell a filled box coloured by the palette ("with image" draws
     * nothing when the grid has a single row or column). */
    fprintf(b, ")\nunset grid\nset tics scale 0\n"
               "plot 'heatmap.dat' using 1:2:(0.5):(0.5):%d with boxxyerror fs solid 1.0 "
               "noborder lc palette notitle, \\\n",
            maps[m].column);
    if (maps[m].column == 3)
      fprintf(b, "     '' using 1:($4 > 0 && $10 * 2 > $4 ? $2 : NaN):(0.5):(0.5) with "
                 "boxxyerror fs transparent pattern 4 noborder lc rgb '#7f3b08' notitle, \\\n");
    /* A cell whose runs all collapsed says so, on every map. */
    fprintf(b, "     '' using 1:2:($4 > 0 && $11 == $4 ? sprintf('COLLAPSED\\n%%d/%%d runs', "
               "$11, $4) : %s) with labels font ',8' notitle\n",
            maps[m].label);
    fclose(b);
    ana_gp_both(f, maps[m].name, body);
    free(body);
    body = NULL;
  }

  return 0;
}

/* The recovery survival curves and histogram. */
static int script_recovery(FILE *f, const fmt_results *r, const ana_summary *s, const size_t *rpts, size_t n_rpts) {
  char *body = NULL;
  size_t blen = 0;
  /* Recovery survival curves. */
  if (n_rpts == 0) return 0;
  {
    FILE *b = open_memstream(&body, &blen);
    if (!b) return -1;
    fprintf(b, "reset\nset title 'Recovery after fault clearance (Kaplan-Meier; runs that never "
               "recover are censored at the horizon)'\n"
               "set xlabel 'ms after fault clearance'\nset ylabel 'fraction of runs not yet "
               "recovered'\nset yrange [0:1.05]\nset xrange [0:*]\n"
               "set key outside below Left reverse\nset grid\n");
    fprintf(b, "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb '#555555'\n"
               "set label 'SLO %.0f ms' at %g, graph 0.97 offset 0.5,0 font ',9'\n",
            s->slo_ms, s->slo_ms, s->slo_ms, s->slo_ms);
    fprintf(b, "plot ");
    for (size_t i = 0; i < n_rpts; i++) {
      char t[1024];
      point_title(r, rpts[i], t, sizeof t);
      fprintf(b, "%s'km_%lld.dat' using 1:2 with steps lw 2 lc rgb '%s' title '%s'",
              i ? ", \\\n     " : "", (long long)r->point_ids[rpts[i]], colours[i % 8], t);
    }
    fprintf(b, "\n");
    fclose(b);
    ana_gp_both(f, "recovery_survival", body);
    free(body);
    body = NULL;

    b = open_memstream(&body, &blen);
    if (!b) return -1;
    fprintf(b, "reset\nset title 'Recovery times of the runs that recovered (as shares of the "
               "runs of each point: every point weighs the same)'\n"
               "set xlabel 'ms after fault clearance'\n"
               "set ylabel 'share of the runs of the point'\n"
               "set yrange [0:*]\n"
               "set key outside below Left reverse\nset grid\n");
    fprintf(b, "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb '#555555'\n"
               "set label 'SLO %.0f ms' at %g, graph 0.97 offset 0.5,0 font ',9'\n",
            s->slo_ms, s->slo_ms, s->slo_ms, s->slo_ms);
    fprintf(b, "plot ");
    for (size_t i = 0; i < n_rpts; i++) {
      char t[1024], raw[1100], t2[1100];
      const ana_point_stats *ps = &s->points[rpts[i]];
      point_title(r, rpts[i], t, sizeof t);
      snprintf(raw, sizeof raw, "%s (%lld runs, %lld not recovered)", t, (long long)ps->n,
               (long long)(ps->n - ps->n_recovered));
      ana_gp_text(t2, sizeof t2, raw);
      fprintf(b, "%s'recovery_histogram.dat' using 1:%zu with histeps lw 2 lc rgb '%s' title '%s'",
              i ? ", \\\n     " : "", i + 2, colours[i % 8], t2);
    }
    fprintf(b, "\n");
    fclose(b);
    ana_gp_both(f, "recovery_histogram", body);
    free(body);
    body = NULL;
  }

  return 0;
}

/* The per-tick bands of each metric. */
static int script_bands(FILE *f, const fmt_results *r, const size_t *curve, size_t n_curve,
                        const int *band_ok, int input_ok) {
  char *body = NULL;
  size_t blen = 0;
  /* Per-tick bands. */
  for (size_t m = 0; m < sizeof band_metrics / sizeof band_metrics[0]; m++) {
    if (!band_ok[m] || n_curve == 0) continue;
    FILE *b = open_memstream(&body, &blen);
    if (!b) return -1;
    const fmt_point_times *pt = &r->times[curve[0]];
    char title[256], xlabel[64], ylabel[256];
    ana_gp_text(title, sizeof title, band_metrics[m].title);
    ana_gp_text(xlabel, sizeof xlabel, isfinite(r->tick_ms) ? "time (ms)" : "tick");
    ana_gp_text(ylabel, sizeof ylabel, band_metrics[m].ylabel);
    fprintf(b, "reset\nset title '%s'\nset xlabel '%s'\nset ylabel '%s'\nset yrange [0:*]\n"
               "set key outside below Left reverse\nset grid\nset style fill transparent solid "
               "0.2 noborder\n",
            title, xlabel, ylabel);
    if (input_ok && band_metrics[m].overlay_input)
      fprintf(b, "set y2label 'input rate (requests/s)'\nset y2range [0:*]\nset y2tics\n"
                 "set ytics nomirror\n");
    if (isfinite(pt->fault_start_ms) && isfinite(pt->fault_clear_ms) && pt->fault_clear_ms > 0)
      fprintf(b,
              "set object 1 rect from %g, graph 0 to %g, graph 1 fc rgb '#bbbbbb' fs solid 0.25 "
              "noborder behind\nset label 'fault' at %g, graph 0.97 offset 0.3,0 font ',9'\n",
              pt->fault_start_ms, pt->fault_clear_ms, pt->fault_start_ms);
    fprintf(b, "plot ");
    for (size_t i = 0; i < n_curve; i++) {
      char t[1024];
      point_title(r, curve[i], t, sizeof t);
      long long id = (long long)r->point_ids[curve[i]];
      fprintf(b,
              "%s'band_%s_%lld.dat' using 1:2:4 with filledcurves lc rgb '%s' notitle, \\\n"
              "     '' using 1:3 with lines lw 2 lc rgb '%s' title '%s'",
              i ? ", \\\n     " : "", band_metrics[m].file, id, colours[i % 8], colours[i % 8], t);
    }
    if (input_ok && band_metrics[m].overlay_input)
      fprintf(b,
              ", \\\n     'band_input_%lld.dat' using 1:($3*%.17g) axes x1y2 with lines lw 1 dt 2 "
              "lc rgb '#666666' title 'input rate, requests/s (right axis; median, point %lld)'",
              (long long)r->point_ids[curve[0]], 1000.0 / r->tick_ms,
              (long long)r->point_ids[curve[0]]);
    fprintf(b, "\n");
    fclose(b);
    ana_gp_both(f, band_metrics[m].file, body);
    free(body);
    body = NULL;
  }
  return 0;
}

static int script_write(const fmt_results *r, const ana_summary *s, const char *dir, long ax,
                        long ay, const ana_grid2 *g, const size_t *curve, size_t n_curve,
                        const size_t *rpts, size_t n_rpts, const int *band_ok, int input_ok,
                        char *err, size_t errlen) {
  FILE *f = fmt_dir_file_create(dir, "plots.gp", err, errlen);
  if (!f) return -1;
  ana_gp_preamble(f, "report", "plots.gp", 1000, 650);

  if (script_heatmaps(f, r, ax, ay, g) || script_recovery(f, r, s, rpts, n_rpts) ||
      script_bands(f, r, curve, n_curve, band_ok, input_ok)) {
    fclose(f);
    snprintf(err, errlen, "out of memory writing plots.gp");
    return -1;
  }
  return fmt_dir_file_close(f, dir, "plots.gp", err, errlen);
}

/* ------------------------------------------------------------------------ */
/* Effect plots: P(bad), P(pass) and the outcomes against each axis, others pooled */
/* ------------------------------------------------------------------------ */

/* Writes effect_A.dat for every axis A (its index in the file) and appends to
 * plots.gp the commands that draw effect_A.png/.svg: both probabilities
 * against the axis's levels with their 95% intervals (s->method), the runs
 * of every other axis pooled (ana_axis_effect). Labels are the axis key and
 * the level labels, through ana_gp_text. */
static int effects_plot_write(const fmt_results *r, const ana_summary *s, const char *dir,
                              char *err, size_t errlen) {
  FILE *gp = NULL;
  char name[64];
  for (size_t k = 0; k < s->n_axes; k++) {
    const ana_axis_effect *e = &s->effects[k];
    snprintf(name, sizeof name, "effect_%zu.dat", e->axis);
    FILE *f = fmt_dir_file_create(dir, name, err, errlen);
    if (!f) goto fail;
    fprintf(f, "# level_index p_bad lo hi p_pass lo hi runs p_recovered lo hi p_slow lo hi "
               "p_collapsed lo hi (other axes pooled; %s; 95%% %s)\n",
            ANA_BAD_MEANING, ana_method_name(s->method));
    for (size_t l = 0; l < e->n_levels; l++) {
      const ana_level *lv = &e->levels[l];
      fprintf(f,
              "%zu %.6f %.6f %.6f %.6f %.6f %.6f %lld %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f "
              "%.6f\n",
              l, lv->p_bad, lv->bad_ci.lo, lv->bad_ci.hi, lv->p_pass, lv->pass_ci.lo,
              lv->pass_ci.hi, (long long)lv->n, lv->p_rec, lv->rec_ci.lo, lv->rec_ci.hi,
              lv->p_slow, lv->slow_ci.lo, lv->slow_ci.hi, lv->p_coll, lv->coll_ci.lo,
              lv->coll_ci.hi);
    }
    if (fmt_dir_file_close(f, dir, name, err, errlen) != 0) goto fail;
  }
  char path[4096];
  int w = snprintf(path, sizeof path, "%s/plots.gp", dir);
  if (w < 0 || (size_t)w >= sizeof path) {
    snprintf(err, errlen, "report directory name too long");
    goto fail;
  }
  /* plots.gp is ours, in the private directory: appended to, never followed. */
  int gfd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  gp = gfd >= 0 ? fdopen(gfd, "a") : NULL;
  if (!gp && gfd >= 0) close(gfd);
  if (!gp) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    goto fail;
  }
  for (size_t k = 0; k < s->n_axes; k++) {
    const ana_axis_effect *e = &s->effects[k];
    char *body = NULL, an[128];
    size_t blen = 0;
    FILE *b = open_memstream(&body, &blen);
    if (!b) {
      snprintf(err, errlen, "out of memory for the effect plots");
      goto fail;
    }
    ana_gp_text(an, sizeof an, r->axes[e->axis]);
    fprintf(b, "reset\nset title 'P(pass), P(recovered), P(slow), P(bad), P(collapsed) by %s "
               "(other axes pooled; " ANA_BAD_MEANING "; 95%% intervals)'\nset xlabel '%s'\nset ylabel 'probability'\n"
               "set yrange [-0.02:1.02]\nset xrange [-0.5:%zu.5]\nset key outside below\n"
               "set grid\nset xtics (",
            an, an, e->n_levels ? e->n_levels - 1 : 0);
    for (size_t l = 0; l < e->n_levels; l++) {
      char v[64], t[64];
      ana_value_label(r, e->axis, e->levels[l].example, v, sizeof v);
      ana_gp_text(t, sizeof t, v);
      fprintf(b, "%s'%s' %zu", l ? ", " : "", t, l);
    }
    fprintf(b, ")\nplot 'effect_%zu.dat' using ($1-0.06):2:3:4 with yerrorlines pt 7 lw 2 "
               "lc rgb '#d62728' title 'P(bad)', \\\n     '' using ($1+0.06):5:6:7 "
               "with yerrorlines pt 5 lw 2 lc rgb '#1f77b4' title 'P(pass)', \\\n     '' using "
               "($1+0.02):9:10:11 with yerrorlines pt 9 lw 2 lc rgb '#2ca02c' title "
               "'P(recovered)', \\\n     '' using ($1-0.02):12:13:14 with yerrorlines pt 11 lw 2 "
               "lc rgb '#ff7f0e' title 'P(slow)', \\\n     '' using ($1):15:16:17 with "
               "yerrorlines pt 13 lw 2 dt 2 lc rgb '#000000' title 'P(collapsed)'\n",
            e->axis);
    fclose(b);
    snprintf(name, sizeof name, "effect_%zu", e->axis);
    ana_gp_both(gp, name, body);
    free(body);
  }
  if (fclose(gp) != 0) {
    gp = NULL;
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    goto fail;
  }
  return 0;
fail:
  if (gp) fclose(gp);
  return -1;
}

/* ------------------------------------------------------------------------ */
/* index.html                                                                */
/* ------------------------------------------------------------------------ */

static void html_image(FILE *f, const char *dir, const char *name, const char *caption) {
  char png[4096];
  snprintf(png, sizeof png, "%s/%s.png", dir, name);
  if (access(png, R_OK) != 0) return;
  fprintf(f, "<figure><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", name, name);
  html_text(f, caption);
  fprintf(f, "\"></a><figcaption>");
  html_text(f, caption);
  fprintf(f, " (<a href=\"%s.svg\">SVG</a>)</figcaption></figure>\n", name);
}

/* The effect plots, in the order of the effect ranking, beside the heat map. */
static void effects_html(FILE *f, const fmt_results *r, const ana_summary *s, const char *dir) {
  for (size_t k = 0; k < s->n_axes; k++) {
    char name[64], cap[256];
    snprintf(name, sizeof name, "effect_%zu", s->effects[k].axis);
    snprintf(cap, sizeof cap,
             "P(pass), P(recovered), P(slow), P(bad) and P(collapsed) by %s, other axes pooled "
             "(95%% %s)",
             r->axes[s->effects[k].axis], ana_method_name(s->method));
    fprintf(f, "<div style=\"display:inline-block;width:49%%;vertical-align:top\">");
    html_image(f, dir, name, cap);
    fprintf(f, "</div>\n");
  }
}

/* The refined points of a file `refine` worked on: one row per candidate,
 * cheapest first, with its test's state, all recomputed from the runs
 * (refine_eval.h); nothing for other files. */
static void html_refine_section(FILE *f, const fmt_results *r, const ana_refined *v) {
  if (!v) return;
  const ana_rf_eval *x = &v->now;
  ana_refine_counts n = ana_refine_counts_of(x, r);
  char counts[160];
  ana_refine_counts_text(&n, counts, sizeof counts);
  fprintf(f, "<h2>Refined points</h2>\n<p>refine: ");
  html_text(f, counts);
  fprintf(f, " after %lld screening replicates each; %lld fresh runs in %zu rounds; status: %s%s",
          (long long)n.screening, (long long)n.fresh, n.rounds,
          ana_rp_status_name(x->st.status), v->interrupted ? " (refine was interrupted)" : "");
  fprintf(f, ". Targets P(pass) &ge; %g, P(bad) &le; %g; rank i tested at alpha/2^i, "
             "family alpha %g. Recomputed from the runs.</p>\n",
          v->design.min_pass, v->design.max_meta, v->design.alpha);
  fprintf(f, "<table><tr><th>rank</th><th>point</th><th>settings</th><th>alpha_i</th>"
             "<th>fresh runs its test used</th>"
             "<th>not passing, metastable, collapsed, undetermined</th>"
             "<th>state</th><th>screening pass</th><th>amplification</th></tr>\n");
  for (size_t i = 0; i < x->rp.n_cand; i++) {
    const ana_rp_cand *c = &x->rp.cand[i];
    const ana_rp_point *p = &x->pts[c->point];
    char where[1024], bad[256], used[96];
    ana_point_describe(r, c->point, where, sizeof where);
    ana_rf_tally_describe(&x->fresh[c->point], bad, sizeof bad);
    ana_tested_runs_text(r, c->point, c->seq.n, used, sizeof used);
    int decided = x->st.status == ANA_RP_PROVEN && c->rank == x->rp.cand[x->st.decided].rank;
    fprintf(f, "<tr%s><td>%d</td><td>%lld</td><td style=\"text-align:left\">",
            decided ? " style=\"background:#dfd\"" : "", c->rank, (long long)p->id);
    html_text(f, where);
    fprintf(f, "</td><td>%.3g</td><td>%s</td><td>%s</td><td>%s%s</td>"
               "<td>%lld/%lld</td><td>%.3f</td></tr>\n",
            c->alpha, used, bad, ana_seq_state_name(c->seq.state),
            decided ? " (recommended)" : "", (long long)p->n_pass, (long long)p->n, p->amp);
  }
  fprintf(f, "</table>\n");
}

static int html_write(const fmt_results *r, const ana_summary *s, const ana_refined *refined,
                      const char *dir, const char *reco_text, char *err, size_t errlen) {
  FILE *f = fmt_dir_file_create(dir, "index.html", err, errlen);
  if (!f) return -1;
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>stormsweep report: ");
  html_text(f, r->path);
  fprintf(f, "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1400px}"
             "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
             "padding:2px 6px;text-align:right}th{background:#eee}img{max-width:100%%}"
             "pre{background:#f6f6f6;padding:1em;white-space:pre-wrap}figure{margin:1em 0}"
             "</style></head><body>\n<h1>stormsweep report</h1>\n<p>");
  html_text(f, r->path);
  fprintf(f, ": %zu grid points, %zu finished runs", r->n_points, r->n_runs + r->n_unjudged);
  if (r->n_skipped) fprintf(f, " (%zu not written: incomplete sweep)", r->n_skipped);
  fprintf(f, "; SLO %.0f ms; intervals 95%% %s.</p>\n", s->slo_ms, ana_method_name(s->method));
  fprintf(f, "<h2>Recommendation</h2>\n<pre>");
  html_text(f, reco_text ? reco_text : "");
  fprintf(f, "</pre>\n");
  html_refine_section(f, r, refined);
  fprintf(f, "<h2>Plots</h2>\n");
  html_image(f, dir, "heatmap_pass", "P(pass SLO) over two axes, the others pooled");
  html_image(f, dir, "heatmap_recovered",
             "P(recovered) over two axes, the others pooled: the runs back within the horizon");
  html_image(f, dir, "heatmap_bad",
             "P(bad) over two axes, the others pooled (" ANA_BAD_MEANING
             "; hatched: most runs slow; COLLAPSED: every run collapsed)");
  effects_html(f, r, s, dir);
  html_image(f, dir, "recovery_survival", "Recovery after clearance: Kaplan-Meier curves");
  html_image(f, dir, "recovery_histogram",
             "Recovery-time histogram: shares of each point's runs (points weigh the same)");
  html_image(f, dir, "queue_depth", "Queue depth: median and 5-95% band across replicates");
  html_image(f, dir, "open_breakers", "Open breakers: median and 5-95% band");
  html_image(f, dir, "goodput", "Goodput: median and 5-95% band");
  html_image(f, dir, "latency_p99", "p99 request latency: median and 5-95% band");
  html_image(f, dir, "error_rate", "Request error rate: median and 5-95% band");

  fprintf(f, "<h2>Parameter effects</h2>\n<table><tr><th>rank</th><th>axis</th><th>value</th>"
             "<th>runs</th><th>recovered/slow/metastable/collapsed</th><th>P(pass)</th>"
             "<th>95%% CI</th><th>P(recovered)</th><th>P(slow)</th><th>P(bad)</th>"
             "<th>95%% CI</th><th>effect (pass / recovered / slow / bad)</th></tr>\n");
  for (size_t k = 0; k < s->n_axes; k++) {
    const ana_axis_effect *e = &s->effects[k];
    for (size_t l = 0; l < e->n_levels; l++) {
      const ana_level *lv = &e->levels[l];
      char v[64];
      ana_value_label(r, e->axis, lv->example, v, sizeof v);
      fprintf(f, "<tr><td>%zu</td><td>", k + 1);
      html_text(f, r->axes[e->axis]);
      fprintf(f, "</td><td>");
      html_text(f, v);
      fprintf(f, "</td><td>%lld</td><td>%lld/%lld/%lld/%lld</td><td>%.3f</td>"
                 "<td>%.3f&ndash;%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
                 "<td>%.3f&ndash;%.3f</td><td>%.3f / %.3f / %.3f / %.3f</td></tr>\n",
              (long long)lv->n, (long long)lv->n_rec, (long long)lv->n_slow,
              (long long)lv->n_meta, (long long)lv->n_coll, lv->p_pass, lv->pass_ci.lo,
              lv->pass_ci.hi, lv->p_rec, lv->p_slow, lv->p_bad, lv->bad_ci.lo, lv->bad_ci.hi,
              e->effect_pass, e->effect_rec, e->effect_slow, e->effect_bad);
    }
  }
  fprintf(f, "</table>\n<h2>Per grid point</h2>\n<p>Best first. Recovery quantiles are "
             "Kaplan-Meier estimates with runs that did not recover censored at the horizon "
             "(&gt;T: not reached within T ms after clearance). P(bad): the share of runs "
             "metastable, collapsed or undetermined.</p>\n<table><tr><th>point</th>");
  for (size_t a = 0; a < r->n_axes; a++) {
    fprintf(f, "<th>");
    html_text(f, r->axes[a]);
    fprintf(f, "</th>");
  }
  fprintf(f, "<th>runs</th><th>rec/slow/meta/collapsed</th><th>P(bad)</th><th>95%% CI</th>"
             "<th>P(pass)</th><th>95%% CI</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>"
             "<th>amplification</th><th>goodput during</th><th>goodput after</th></tr>\n");
  for (size_t k = 0; k < s->n_points; k++) {
    const ana_point_stats *ps = &s->points[s->order[k]];
    fprintf(f, "<tr><td>%lld</td>", (long long)ps->point);
    for (size_t a = 0; a < r->n_axes; a++) {
      char v[64];
      ana_value_label(r, a, ps->index, v, sizeof v);
      fprintf(f, "<td>");
      html_text(f, v);
      fprintf(f, "</td>");
    }
    ana_interval mc = s->method == ANA_INTERVAL_EXACT ? ps->bad_exact : ps->bad_wilson;
    ana_interval pc = s->method == ANA_INTERVAL_EXACT ? ps->pass_exact : ps->pass_wilson;
    char q50[32], q90[32], q99[32];
    ana_ms_format(ps->rec_p50, ps->censor_ms, q50, sizeof q50);
    ana_ms_format(ps->rec_p90, ps->censor_ms, q90, sizeof q90);
    ana_ms_format(ps->rec_p99, ps->censor_ms, q99, sizeof q99);
    fprintf(f, "<td>%lld", (long long)ps->n);
    if (ps->n_fresh) fprintf(f, " (%lld fresh)", (long long)ps->n_fresh);
    fprintf(f, "</td><td>%lld/%lld/%lld/%lld</td><td>%.3f</td><td>%.3f&ndash;%.3f</td>"
               "<td>%.3f</td><td>%.3f&ndash;%.3f</td><td>", (long long)ps->n_recovered, (long long)ps->n_slow,
            (long long)ps->n_meta, (long long)ps->n_coll, ps->p_bad, mc.lo, mc.hi, ps->p_pass,
            pc.lo, pc.hi);
    html_text(f, q50);
    fprintf(f, "</td><td>");
    html_text(f, q90);
    fprintf(f, "</td><td>");
    html_text(f, q99);
    fprintf(f, "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n", ps->amp.mean,
            ps->gp_during.mean, ps->gp_after.mean);
  }
  fprintf(f, "</table>\n</body></html>\n");
  return fmt_dir_file_close(f, dir, "index.html", err, errlen);
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

int ana_report_write(const fmt_results *r, const ana_summary *s, const ana_report_opts *o,
                     FILE *log, char *err, size_t errlen) {
  int rc = -1;
  char *text = NULL;
  ana_grid2 g = {0};
  ana_reco rec;
  memset(&rec, 0, sizeof rec);
  fmt_outdir od;
  memset(&od, 0, sizeof od);
  if (fmt_outdir_begin(&od, o->dir, is_old_report, err, errlen) != 0) goto done;
  const char *dir = od.tmp;
  /* A refined file: its proof (recomputed) only for the targets it tested. */
  if (ana_recommend(&rec, r, s, &o->reco) != 0 ||
      !(text = ana_reco_answer(&rec, r, s, &o->reco, &o->answer, o->refined, NULL))) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  long ax, ay;
  axes_choose(s, o, &ax, &ay);
  if (ax >= 0 && heatmap_write(r, s, ax, ay, dir, &g, err, errlen) != 0) goto done;

  size_t curve[MAX_CURVE_POINTS], rpts[MAX_CURVE_POINTS];
  size_t n_curve = curve_points(r, s, o, &rec, curve);
  size_t n_rpts = recovery_points(s, curve, n_curve, rpts);
  for (size_t i = 0; i < n_rpts; i++)
    if (km_write(r, s, rpts[i], dir, err, errlen) != 0) goto done;
  if (n_rpts && hist_write(r, rpts, n_rpts, ana_histogram_range(r), dir, err, errlen) != 0)
    goto done;
  if ((rc = stopped(o->stop)) != 0) goto done;
  rc = -1;

  int band_ok[sizeof band_metrics / sizeof band_metrics[0]] = {0};
  /* What /ticks stores (the sweep's record setting): said, never faked. */
  if (log && r->row_ticks == 0)
    fprintf(log, "note: %s stores no curves (record = %s: no per-tick rows); the time-series "
            "plots are left out, everything else is reported\n", r->path, r->record);
  else if (log && r->row_ticks > 1)
    fprintf(log, "note: %s stores one row per %g ms (record = %s): curves at that "
            "resolution\n", r->path, r->row_ms, r->record);
  for (size_t m = 0; m < sizeof band_metrics / sizeof band_metrics[0] && r->row_ticks; m++) {
    int exists = fmt_metric_exists(r, band_metrics[m].metric);
    if (exists < 0) {
      snprintf(err, errlen, "%s: cannot open to read /ticks", r->path);
      goto done;
    }
    if (!exists) {
      if (log) fprintf(log, "note: %s has no /ticks/%s; skipping that plot\n", r->path,
                       band_metrics[m].metric);
      continue;
    }
    band_ok[m] = 1;
    for (size_t i = 0; i < n_curve && band_ok[m]; i++) {
      if (band_write(r, &band_metrics[m], curve[i], dir, err, errlen) < 0) goto done;
      if ((rc = stopped(o->stop)) != 0) goto done;
      rc = -1;
    }
  }
  /* The input rate under the user-view plots: the first curve point's. */
  int input_ok = n_curve && fmt_metric_exists(r, input_band.metric) == 1 && isfinite(r->tick_ms);
  if (input_ok && band_write(r, &input_band, curve[0], dir, err, errlen) < 0) goto done;
  if (script_write(r, s, dir, ax, ay, &g, curve, n_curve, rpts, n_rpts, band_ok, input_ok, err,
                   errlen) != 0)
    goto done;
  if (effects_plot_write(r, s, dir, err, errlen) != 0) goto done;
  if ((rc = ana_gnuplot_run(o->gnuplot, dir, "plots.gp", o->stop, err, errlen)) != 0)
    goto done;
  rc = -1;
  if (html_write(r, s, o->refined, dir, text, err, errlen) != 0) goto done;
  static const char *const names[] = {"heatmap_bad", "heatmap_pass", "heatmap_recovered",
                                      "recovery_survival",
                                      "recovery_histogram", "queue_depth", "open_breakers",
                                      "goodput", "latency_p99", "error_rate"};
  int drawn[sizeof names / sizeof names[0]] = {0};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char png[4096];
    int w = snprintf(png, sizeof png, "%s/%s.png", dir, names[i]);
    drawn[i] = w > 0 && (size_t)w < sizeof png && access(png, R_OK) == 0;
  }
  if ((rc = stopped(o->stop)) != 0) goto done;
  rc = -1;
  if (fmt_outdir_install(&od, err, errlen) != 0) goto done;
  if (log) {
    fprintf(log, "Wrote %s/index.html with:", od.final);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (drawn[i]) fprintf(log, " %s.png/.svg", names[i]);
    fprintf(log, "\n");
  }
  rc = 0;
done:
  if (rc > 0) snprintf(err, errlen, "interrupted by signal %d; %s left as it was", rc, o->dir);
  fmt_outdir_abandon(&od);
  ana_grid2_free(&g);
  ana_reco_free(&rec);
  free(text);
  return rc;
}
