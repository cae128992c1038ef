/*
 * report.c — `report`: image files a person can open (SPEC §5) and an
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
 *   heatmap_metastable  P(metastable) over two axes, runs of the other axes
 *                       pooled; each cell labelled with P and metastable/runs
 *   recovery_survival   Kaplan–Meier: fraction of runs not yet recovered vs
 *                       ms after fault clearance (censored at the horizon)
 *   recovery_histogram  recovery times of the recovered runs
 *   queue_depth, open_breakers, goodput
 *                       per-tick metric across replicates: median line and
 *                       5–95% band, each replicate first averaged over bins
 *                       of ticks (ana_band_read: one run row at a time)
 *
 * The data files stay in the directory so a plot can be redrawn or restyled
 * by editing plots.gp and running gnuplot on it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ana.h"
#include "refine.h"

enum { MAX_CURVE_POINTS = 8, BAND_BINS = 1000 };

typedef struct band_metric {
  const char *metric, *file, *title, *ylabel;
} band_metric;

static const band_metric band_metrics[] = {
    {"queue_depth", "queue_depth", "Total queue depth across replicates (median, 5-95% band)",
     "attempts queued (bin mean)"},
    {"open_breakers", "open_breakers",
     "Open circuit breakers across replicates (median, 5-95% band)",
     "open or half-open breakers (bin mean)"},
    {"successes", "goodput", "Goodput across replicates (median, 5-95% band)",
     "successes per tick (bin mean)"},
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

static FILE *file_open(const char *dir, const char *name, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
  return f;
}

static int file_close(FILE *f, const char *dir, const char *name, char *err, size_t errlen) {
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad) snprintf(err, errlen, "%s/%s: write failed", dir, name);
  return bad ? -1 : 0;
}

/* Text for a single-quoted gnuplot string: it cannot hold a quote. */
static void gp_text(const char *in, char *out, size_t len) {
  size_t j = 0;
  for (size_t i = 0; in[i] && j + 1 < len; i++) out[j++] = in[i] == '\'' ? '`' : in[i];
  out[j] = '\0';
}

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

static int make_dir(const char *dir, char *err, size_t errlen) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    snprintf(err, errlen, "%s: exists and is not a directory", dir);
    return -1;
  }
  if (mkdir(dir, 0777) != 0) {
    snprintf(err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
    return -1;
  }
  return 0;
}

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
static size_t curve_points(const ana_results *r, const ana_summary *s, const ana_report_opts *o,
                           const ana_reco *rec, size_t *out) {
  size_t n = 0;
  if (o->points) {
    for (size_t i = 0; i < o->n_points && n < MAX_CURVE_POINTS; i++) {
      long p = ana_results_point_index(r, o->points[i]);
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

static int heatmap_write(const ana_results *r, const ana_summary *s, long ax, long ay,
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
  FILE *f = file_open(dir, "heatmap_metastable.dat", err, errlen);
  if (!f) return -1;
  fprintf(f, "# x_index y_index p_metastable runs metastable (runs of the other axes pooled)\n");
  for (size_t i = 0; i < g->nx; i++) {
    for (size_t j = 0; j < g->ny; j++) {
      const ana_level *c = &g->cells[i * g->ny + j];
      if (c->n > 0)
        fprintf(f, "%zu %zu %.6f %lld %lld\n", i, j, c->p_meta, (long long)c->n,
                (long long)c->n_meta);
      else
        fprintf(f, "%zu %zu NaN 0 0\n", i, j);
    }
    fprintf(f, "\n");
  }
  return file_close(f, dir, "heatmap_metastable.dat", err, errlen);
oom:
  snprintf(err, errlen, "out of memory for the heat map");
  return -1;
}

static int km_write(const ana_results *r, const ana_summary *s, size_t p, const char *dir,
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
  FILE *f = file_open(dir, name, err, errlen);
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
  return file_close(f, dir, name, err, errlen);
}

static int hist_write(const ana_results *r, const size_t *pts, size_t n,
                      double hhi, const char *dir, char *err, size_t errlen) {
  FILE *f = file_open(dir, "recovery_histogram.dat", err, errlen);
  if (!f) return -1;
  ana_histogram *h = calloc(n ? n : 1, sizeof *h);
  if (!h) {
    fclose(f);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) ana_point_histogram(&h[i], r, pts[i], hhi, ANA_HISTOGRAM_BINS);
  fprintf(f, "# bin_centre_ms then, per plotted point, recovered runs in the bin\n");
  for (size_t b = 0; b < ANA_HISTOGRAM_BINS; b++) {
    fprintf(f, "%.6g", (b + 0.5) * hhi / ANA_HISTOGRAM_BINS);
    for (size_t i = 0; i < n; i++)
      fprintf(f, " %lld", h[i].counts ? (long long)h[i].counts[b] : 0LL);
    fprintf(f, "\n");
  }
  for (size_t i = 0; i < n; i++) ana_histogram_free(&h[i]);
  free(h);
  return file_close(f, dir, "recovery_histogram.dat", err, errlen);
}

/* Writes band_<file>_<id>.dat; returns 1 written, 0 metric absent, -1 error. */
static int band_write(const ana_results *r, const band_metric *m, size_t p, const char *dir,
                      char *err, size_t errlen) {
  ana_band b;
  if (ana_band_read(&b, r, m->metric, p, BAND_BINS, err, errlen) != 0) return -1;
  char name[128];
  snprintf(name, sizeof name, "band_%s_%lld.dat", m->file, (long long)r->point_ids[p]);
  FILE *f = file_open(dir, name, err, errlen);
  if (!f) {
    ana_band_free(&b);
    return -1;
  }
  fprintf(f, "# %s of point %lld over %zu runs, %lld ticks per bin\n# t_ms p05 p50 p95 mean\n",
          m->metric, (long long)r->point_ids[p], b.n_runs, (long long)b.ticks_per_bin);
  for (size_t k = 0; k < b.nbins; k++)
    fprintf(f, "%.6g %.6g %.6g %.6g %.6g\n", b.t_ms[k], b.p05[k], b.p50[k], b.p95[k], b.mean[k]);
  ana_band_free(&b);
  return file_close(f, dir, name, err, errlen) == 0 ? 1 : -1;
}

/* ------------------------------------------------------------------------ */
/* gnuplot script                                                            */
/* ------------------------------------------------------------------------ */

static void point_title(const ana_results *r, size_t p, char *buf, size_t len) {
  char where[900], raw[1024];
  ana_point_describe(r, p, where, sizeof where);
  snprintf(raw, sizeof raw, "point %lld: %s", (long long)r->point_ids[p], where);
  gp_text(raw, buf, len);
}

/* Emits the commands that draw one image as name.png and name.svg. */
static void gp_both(FILE *f, const char *name, const char *body) {
  fprintf(f, "@PNG\nset output '%s.png'\n%s\n@SVG\nset output '%s.svg'\nreplot\nunset output\n\n",
          name, body, name);
}

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

static int script_write(const ana_results *r, const ana_summary *s, const char *dir, long ax,
                        long ay, const ana_grid2 *g, const size_t *curve, size_t n_curve,
                        const size_t *rpts, size_t n_rpts, const int *band_ok, char *err,
                        size_t errlen) {
  FILE *f = file_open(dir, "plots.gp", err, errlen);
  if (!f) return -1;
  char *body = NULL;
  size_t blen = 0;
  fprintf(f,
          "# Generated by stormsweep report: draws every plot as PNG and SVG.\n"
          "# Run again with: gnuplot plots.gp (in this directory).\n"
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  PNG = \"set terminal pngcairo noenhanced size 1000,650 font 'sans,10'\"\n"
          "} else {\n"
          "  PNG = \"set terminal png truecolor noenhanced size 1000,650\"\n"
          "}\n"
          "SVG = \"set terminal svg noenhanced size 1000,650 dynamic font 'sans,11'\"\n"
          "set datafile missing 'NaN'\n"
          "set grid lc rgb '#dddddd'\n\n");

  /* Heat map. */
  if (ax >= 0) {
    FILE *b = open_memstream(&body, &blen);
    if (!b) goto oom;
    char xn[128], yn[128];
    gp_text(r->axes[ax], xn, sizeof xn);
    gp_text(ay >= 0 ? r->axes[ay] : "(all points)", yn, sizeof yn);
    fprintf(b, "reset\nset title 'P(metastable) by %s and %s (other axes pooled; label: P, "
               "metastable/runs)'\n", xn, yn);
    fprintf(b, "set xlabel '%s'\nset ylabel '%s'\n", xn, yn);
    fprintf(b, "set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')\n"
               "set cbrange [0:1]\nset cblabel 'P(metastable)'\n");
    fprintf(b, "set xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\n", g->nx - 1, g->ny - 1);
    fprintf(b, "set xtics (");
    for (size_t i = 0; i < g->nx; i++) {
      char v[64], t[64];
      ana_value_label(r, (size_t)ax, g->xex[i], v, sizeof v);
      gp_text(v, t, sizeof t);
      fprintf(b, "%s'%s' %zu", i ? ", " : "", t, i);
    }
    fprintf(b, ")\nset ytics (");
    if (ay >= 0) {
      for (size_t j = 0; j < g->ny; j++) {
        char v[64], t[64];
        ana_value_label(r, (size_t)ay, g->yex[j], v, sizeof v);
        gp_text(v, t, sizeof t);
        fprintf(b, "%s'%s' %zu", j ? ", " : "", t, j);
      }
    } else {
      fprintf(b, "'all' 0");
    }
    fprintf(b, ")\nunset grid\nset tics scale 0\n"
               "plot 'heatmap_metastable.dat' using 1:2:3 with image notitle, \\\n"
               "     '' using 1:2:(sprintf('%%.2f\\n%%d/%%d', $3, $5, $4)) with labels "
               "font ',9' notitle\n");
    fclose(b);
    gp_both(f, "heatmap_metastable", body);
    free(body);
    body = NULL;
  }

  /* Recovery survival curves. */
  if (n_rpts > 0) {
    FILE *b = open_memstream(&body, &blen);
    if (!b) goto oom;
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
    gp_both(f, "recovery_survival", body);
    free(body);
    body = NULL;

    b = open_memstream(&body, &blen);
    if (!b) goto oom;
    fprintf(b, "reset\nset title 'Recovery times of the runs that recovered'\n"
               "set xlabel 'ms after fault clearance'\nset ylabel 'runs'\nset yrange [0:*]\n"
               "set key outside below Left reverse\nset grid\n");
    fprintf(b, "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb '#555555'\n"
               "set label 'SLO %.0f ms' at %g, graph 0.97 offset 0.5,0 font ',9'\n",
            s->slo_ms, s->slo_ms, s->slo_ms, s->slo_ms);
    fprintf(b, "plot ");
    for (size_t i = 0; i < n_rpts; i++) {
      char t[1024], t2[1100];
      const ana_point_stats *ps = &s->points[rpts[i]];
      point_title(r, rpts[i], t, sizeof t);
      snprintf(t2, sizeof t2, "%s (%lld of %lld not recovered)", t,
               (long long)(ps->n - ps->n_recovered), (long long)ps->n);
      fprintf(b, "%s'recovery_histogram.dat' using 1:%zu with histeps lw 2 lc rgb '%s' title '%s'",
              i ? ", \\\n     " : "", i + 2, colours[i % 8], t2);
    }
    fprintf(b, "\n");
    fclose(b);
    gp_both(f, "recovery_histogram", body);
    free(body);
    body = NULL;
  }

  /* Per-tick bands. */
  for (size_t m = 0; m < sizeof band_metrics / sizeof band_metrics[0]; m++) {
    if (!band_ok[m] || n_curve == 0) continue;
    FILE *b = open_memstream(&body, &blen);
    if (!b) goto oom;
    const ana_point_times *pt = &r->times[curve[0]];
    fprintf(b, "reset\nset title '%s'\nset xlabel '%s'\nset ylabel '%s'\nset yrange [0:*]\n"
               "set key outside below Left reverse\nset grid\nset style fill transparent solid "
               "0.2 noborder\n",
            band_metrics[m].title, isfinite(r->tick_ms) ? "time (ms)" : "tick",
            band_metrics[m].ylabel);
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
    fprintf(b, "\n");
    fclose(b);
    gp_both(f, band_metrics[m].file, body);
    free(body);
    body = NULL;
  }
  return file_close(f, dir, "plots.gp", err, errlen);
oom:
  fclose(f);
  snprintf(err, errlen, "out of memory writing plots.gp");
  return -1;
}

/* Runs `gnuplot plots.gp` in dir, its output going to dir/gnuplot.log. */
static int gnuplot_run(const char *program, const char *dir, char *err, size_t errlen) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, errlen, "cannot start %s: %s", program, strerror(errno));
    return -1;
  }
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(126);
    int fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execlp(program, program, "plots.gp", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      snprintf(err, errlen, "waiting for %s: %s", program, strerror(errno));
      return -1;
    }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    snprintf(err, errlen, "cannot run '%s' (is gnuplot installed and on PATH?)", program);
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(err, errlen, "%s failed on %s/plots.gp (see %s/gnuplot.log)", program, dir, dir);
    return -1;
  }
  return 0;
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

/* The refined points of a file `refine` worked on: one row per candidate,
 * cheapest first, with its test's state; nothing for other files. */
static void html_refine_section(FILE *f, const ana_results *r) {
  ana_refine_info ri;
  char err[512];
  if (ana_refine_info_read(r->path, &ri, err, sizeof err) != 0) return;
  fprintf(f, "<h2>Refined points</h2>\n<p>refine: %zu candidates of %zu points after %lld "
             "screening replicates each; %lld fresh runs in %lld rounds; status: ",
          ri.n_cand, r->n_points, (long long)ri.r0, (long long)ri.runs_appended,
          (long long)ri.rounds);
  html_text(f, ri.status);
  fprintf(f, ". Targets P(pass) &ge; %g, P(metastable) &le; %g; rank i tested at alpha/2^i, "
             "family alpha %g.</p>\n",
          ri.d.min_pass, ri.d.max_meta, ri.d.alpha);
  fprintf(f, "<table><tr><th>rank</th><th>point</th><th>settings</th><th>alpha_i</th>"
             "<th>fresh runs</th><th>not passing</th><th>metastable</th><th>state</th>"
             "<th>screening pass</th><th>amplification</th></tr>\n");
  static const char *const states[] = {"open", "proven", "refuted"};
  for (size_t i = 0; i < ri.n_cand; i++) {
    const ana_refine_cand *c = &ri.cand[i];
    long li = ana_results_point_index(r, c->point);
    char where[1024] = "";
    if (li >= 0) ana_point_describe(r, (size_t)li, where, sizeof where);
    int decided = c->point == ri.decided_point && !strcmp(ri.status, "proven");
    fprintf(f, "<tr%s><td>%d</td><td>%lld</td><td style=\"text-align:left\">",
            decided ? " style=\"background:#dfd\"" : "", c->rank, (long long)c->point);
    html_text(f, where);
    fprintf(f, "</td><td>%.3g</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%s%s</td>"
               "<td>%lld/%lld</td><td>%.3f</td></tr>\n",
            c->alpha, (long long)c->runs, (long long)c->not_passing, (long long)c->metastable,
            c->state >= 0 && c->state <= 2 ? states[c->state] : "?",
            decided ? " (recommended)" : "", (long long)c->screen_pass,
            (long long)c->screen_runs, c->amplification);
  }
  fprintf(f, "</table>\n");
  ana_refine_info_free(&ri);
}

static int html_write(const ana_results *r, const ana_summary *s, const char *dir,
                      const char *reco_text, char *err, size_t errlen) {
  FILE *f = file_open(dir, "index.html", err, errlen);
  if (!f) return -1;
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>stormsweep report: ");
  html_text(f, r->path);
  fprintf(f, "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1400px}"
             "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
             "padding:2px 6px;text-align:right}th{background:#eee}img{max-width:100%%}"
             "pre{background:#f6f6f6;padding:1em;white-space:pre-wrap}figure{margin:1em 0}"
             "</style></head><body>\n<h1>stormsweep report</h1>\n<p>");
  html_text(f, r->path);
  fprintf(f, ": %zu grid points, %zu finished runs", r->n_points, r->n_runs);
  if (r->n_skipped) fprintf(f, " (%zu not written: incomplete sweep)", r->n_skipped);
  fprintf(f, "; SLO %.0f ms; intervals 95%% %s.</p>\n", s->slo_ms, ana_method_name(s->method));
  fprintf(f, "<h2>Recommendation</h2>\n<pre>");
  html_text(f, reco_text ? reco_text : "");
  fprintf(f, "</pre>\n");
  html_refine_section(f, r);
  fprintf(f, "<h2>Plots</h2>\n");
  html_image(f, dir, "heatmap_metastable", "P(metastable) over two axes, the others pooled");
  html_image(f, dir, "recovery_survival", "Recovery after clearance: Kaplan-Meier curves");
  html_image(f, dir, "recovery_histogram", "Recovery-time histogram");
  html_image(f, dir, "queue_depth", "Queue depth: median and 5-95% band across replicates");
  html_image(f, dir, "open_breakers", "Open breakers: median and 5-95% band");
  html_image(f, dir, "goodput", "Goodput: median and 5-95% band");

  fprintf(f, "<h2>Parameter effects</h2>\n<table><tr><th>rank</th><th>axis</th><th>value</th>"
             "<th>runs</th><th>P(metastable)</th><th>95%% CI</th><th>P(pass)</th>"
             "<th>95%% CI</th><th>effect (meta / pass)</th></tr>\n");
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
      fprintf(f, "</td><td>%lld</td><td>%.3f</td><td>%.3f&ndash;%.3f</td><td>%.3f</td>"
                 "<td>%.3f&ndash;%.3f</td><td>%.3f / %.3f</td></tr>\n",
              (long long)lv->n, lv->p_meta, lv->meta_ci.lo, lv->meta_ci.hi, lv->p_pass,
              lv->pass_ci.lo, lv->pass_ci.hi, e->effect_meta, e->effect_pass);
    }
  }
  fprintf(f, "</table>\n<h2>Per grid point</h2>\n<p>Best first. Recovery quantiles are "
             "Kaplan-Meier estimates with runs that did not recover censored at the horizon "
             "(&gt;T: not reached within T ms after clearance).</p>\n<table><tr><th>point</th>");
  for (size_t a = 0; a < r->n_axes; a++) {
    fprintf(f, "<th>");
    html_text(f, r->axes[a]);
    fprintf(f, "</th>");
  }
  fprintf(f, "<th>runs</th><th>rec/slow/meta</th><th>P(metastable)</th><th>95%% CI</th>"
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
    ana_interval mc = s->method == ANA_INTERVAL_EXACT ? ps->meta_exact : ps->meta_wilson;
    ana_interval pc = s->method == ANA_INTERVAL_EXACT ? ps->pass_exact : ps->pass_wilson;
    char q50[32], q90[32], q99[32];
    ana_ms_format(ps->rec_p50, ps->censor_ms, q50, sizeof q50);
    ana_ms_format(ps->rec_p90, ps->censor_ms, q90, sizeof q90);
    ana_ms_format(ps->rec_p99, ps->censor_ms, q99, sizeof q99);
    fprintf(f, "<td>%lld</td><td>%lld/%lld/%lld</td><td>%.3f</td><td>%.3f&ndash;%.3f</td>"
               "<td>%.3f</td><td>%.3f&ndash;%.3f</td><td>",
            (long long)ps->n, (long long)ps->n_recovered, (long long)ps->n_slow,
            (long long)ps->n_meta, ps->p_meta, mc.lo, mc.hi, ps->p_pass, pc.lo, pc.hi);
    html_text(f, q50);
    fprintf(f, "</td><td>");
    html_text(f, q90);
    fprintf(f, "</td><td>");
    html_text(f, q99);
    fprintf(f, "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n", ps->amp.mean,
            ps->gp_during.mean, ps->gp_after.mean);
  }
  fprintf(f, "</table>\n</body></html>\n");
  return file_close(f, dir, "index.html", err, errlen);
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

int ana_report_write(const ana_results *r, const ana_summary *s, const ana_report_opts *o,
                     FILE *log, char *err, size_t errlen) {
  int rc = -1;
  char *text = NULL;
  ana_grid2 g = {0};
  if (make_dir(o->dir, err, errlen) != 0) return -1;
  ana_reco rec;
  if (ana_recommend(&rec, r, s, &o->reco) != 0 || !(text = ana_reco_text(&rec, r, s, &o->reco))) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  char *refined = ana_reco_refined_text(r, s); /* a refined file: its proof */
  if (refined) {
    free(text);
    text = refined;
  }
  long ax, ay;
  axes_choose(s, o, &ax, &ay);
  if (ax >= 0 && heatmap_write(r, s, ax, ay, o->dir, &g, err, errlen) != 0) goto done;

  size_t curve[MAX_CURVE_POINTS], rpts[MAX_CURVE_POINTS];
  size_t n_curve = curve_points(r, s, o, &rec, curve);
  size_t n_rpts = recovery_points(s, curve, n_curve, rpts);
  for (size_t i = 0; i < n_rpts; i++)
    if (km_write(r, s, rpts[i], o->dir, err, errlen) != 0) goto done;
  if (n_rpts && hist_write(r, rpts, n_rpts, ana_histogram_range(r), o->dir, err, errlen) != 0)
    goto done;

  int band_ok[sizeof band_metrics / sizeof band_metrics[0]] = {0};
  for (size_t m = 0; m < sizeof band_metrics / sizeof band_metrics[0]; m++) {
    int exists = ana_metric_exists(r, band_metrics[m].metric);
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
    for (size_t i = 0; i < n_curve && band_ok[m]; i++)
      if (band_write(r, &band_metrics[m], curve[i], o->dir, err, errlen) < 0) goto done;
  }
  if (script_write(r, s, o->dir, ax, ay, &g, curve, n_curve, rpts, n_rpts, band_ok, err,
                   errlen) != 0)
    goto done;
  if (gnuplot_run(o->gnuplot ? o->gnuplot : "gnuplot", o->dir, err, errlen) != 0) goto done;
  if (html_write(r, s, o->dir, text, err, errlen) != 0) goto done;
  if (log) {
    fprintf(log, "Wrote %s/index.html with:", o->dir);
    static const char *const names[] = {"heatmap_metastable", "recovery_survival",
                                        "recovery_histogram", "queue_depth", "open_breakers",
                                        "goodput"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      char png[4096];
      snprintf(png, sizeof png, "%s/%s.png", o->dir, names[i]);
      if (access(png, R_OK) == 0) fprintf(log, " %s.png/.svg", names[i]);
    }
    fprintf(log, "\n");
  }
  rc = 0;
done:
  ana_grid2_free(&g);
  free(text);
  return rc;
}
