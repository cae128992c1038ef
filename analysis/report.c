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
 *   heatmap_pass, heatmap_recovered  P(pass) and P(recovered) likewise, every
 *                       cell labelled with its outcomes (docs/decisions.md)
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
 *
 * Safety (the result file and the output's surroundings may be someone
 * else's): every string from the file reaches plots.gp only through
 * ana_gp_text, so it cannot leave its quotes; the whole report is built in a
 * fresh private directory (mkdtemp next to DIR, files created O_EXCL |
 * O_NOFOLLOW) where gnuplot also runs, and is renamed into place only when
 * complete. An existing DIR is replaced only when it is ours, not writable
 * by others, not a symbolic link, and empty or an earlier report; the swap
 * is atomic (RENAME_EXCHANGE), so an interrupted report leaves the old one
 * whole. SIGINT and SIGTERM are held while the report is built: on one,
 * gnuplot is killed and reaped and the private directory removed.
 */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ana.h"
#include "textsafe.h"
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

/* Files are new in the private directory: never reuse or follow one. */
static FILE *file_open(const char *dir, const char *name, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
  }
  return f;
}

static int file_close(FILE *f, const char *dir, const char *name, char *err, size_t errlen) {
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad) snprintf(err, errlen, "%s/%s: write failed", dir, name);
  return bad ? -1 : 0;
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

/* ------------------------------------------------------------------------ */
/* The output directory                                                      */
/* ------------------------------------------------------------------------ */

/* Where the report is built and where it goes. */
typedef struct out_dir {
  char final[4096];  /* DIR as given, without trailing slashes */
  char parent[4096]; /* its directory */
  char base[1024];   /* its last component */
  char tmp[4096];    /* the private build directory ("" until made) */
  int replace;       /* DIR exists (an earlier report or empty) */
} out_dir;

/* Removes the directory tree at name under dirfd without following any
 * symbolic link (a link is removed, never its target). */
static void tree_remove_at(int at, const char *name, int depth) {
  if (unlinkat(at, name, 0) == 0 || errno == ENOENT || depth > 16) return;
  int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    tree_remove_at(dirfd(d), e->d_name, depth + 1);
  }
  closedir(d);
  unlinkat(at, name, AT_REMOVEDIR);
}

static void tree_remove(const char *path) {
  if (path[0]) tree_remove_at(AT_FDCWD, path, 0);
}

/* An existing DIR may be replaced when it is empty or an earlier report
 * (its plots.gp, a regular file, says so): never a directory of other work. */
static int is_old_report(const char *dir) {
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) return 0;
  int fd = openat(dfd, "plots.gp", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    DIR *d = fdopendir(dfd);
    if (!d) {
      close(dfd);
      return 0;
    }
    int empty = 1;
    struct dirent *e;
    while (empty && (e = readdir(d)) != NULL)
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty;
  }
  close(dfd);
  struct stat st;
  char head[64] = {0};
  int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, sizeof head - 1) > 0 &&
           !strncmp(head, "# Generated by stormsweep report", 32);
  close(fd);
  return ok;
}

/* Checks DIR and makes the private build directory next to it. */
static int out_dir_prepare(out_dir *od, const char *dir, char *err, size_t errlen) {
  memset(od, 0, sizeof *od);
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 0 || n >= sizeof od->final) {
    snprintf(err, errlen, "-o: '%s' is not a usable directory name", dir);
    return -1;
  }
  memcpy(od->final, dir, n);
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s", od->final);
  snprintf(b, sizeof b, "%s", od->final);
  snprintf(od->parent, sizeof od->parent, "%s", dirname(a));
  snprintf(od->base, sizeof od->base, "%s", basename(b));
  if (!strcmp(od->base, ".") || !strcmp(od->base, "..") || !strcmp(od->base, "/")) {
    snprintf(err, errlen, "%s: name the report directory itself (not . or .. or /)", dir);
    return -1;
  }
  struct stat st;
  if (lstat(od->final, &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      snprintf(err, errlen, "%s: is a symbolic link; refusing to write through it", dir);
      return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
      snprintf(err, errlen, "%s: exists and is not a directory", dir);
      return -1;
    }
    if (st.st_uid != geteuid()) {
      snprintf(err, errlen, "%s: belongs to another user; refusing to replace it", dir);
      return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
      snprintf(err, errlen, "%s: others can write to it; refusing to use it", dir);
      return -1;
    }
    if (!is_old_report(od->final)) {
      snprintf(err, errlen,
               "%s: holds files that are not a stormsweep report; refusing to replace it", dir);
      return -1;
    }
    od->replace = 1;
  } else if (errno != ENOENT) {
    snprintf(err, errlen, "%s: %s", dir, strerror(errno));
    return -1;
  }
  int w = snprintf(od->tmp, sizeof od->tmp, "%s/.%s.tmp-XXXXXX", od->parent, od->base);
  if (w < 0 || (size_t)w >= sizeof od->tmp) {
    snprintf(err, errlen, "-o: '%s' is too long a name", dir);
    od->tmp[0] = '\0';
    return -1;
  }
  if (!mkdtemp(od->tmp)) {
    snprintf(err, errlen, "%s: cannot create a directory there: %s", od->parent,
             strerror(errno));
    od->tmp[0] = '\0';
    return -1;
  }
  return 0;
}

/* Moves the finished report to DIR: a plain rename, or an atomic exchange
 * with the earlier report, which is then removed. */
static int out_dir_install(out_dir *od, char *err, size_t errlen) {
  mode_t mask = umask(0);
  umask(mask);
  if (chmod(od->tmp, 0777 & ~mask) != 0) {
    snprintf(err, errlen, "%s: %s", od->tmp, strerror(errno));
    return -1;
  }
  if (!od->replace) {
    if (rename(od->tmp, od->final) != 0) {
      snprintf(err, errlen, "%s: cannot create: %s", od->final, strerror(errno));
      return -1;
    }
    od->tmp[0] = '\0';
    return 0;
  }
  if (renameat2(AT_FDCWD, od->tmp, AT_FDCWD, od->final, RENAME_EXCHANGE) == 0) {
    tree_remove(od->tmp); /* now the earlier report */
    od->tmp[0] = '\0';
    return 0;
  }
  if (errno != EINVAL && errno != ENOSYS) {
    snprintf(err, errlen, "%s: cannot replace: %s", od->final, strerror(errno));
    return -1;
  }
  /* No exchange on this file system: move the old one aside, then in. */
  char old[4096];
  int w = snprintf(old, sizeof old, "%s/.%s.old-XXXXXX", od->parent, od->base);
  if (w < 0 || (size_t)w >= sizeof old || !mkdtemp(old) || rename(od->final, old) != 0) {
    snprintf(err, errlen, "%s: cannot replace: %s", od->final, strerror(errno));
    return -1;
  }
  if (rename(od->tmp, od->final) != 0) {
    snprintf(err, errlen, "%s: cannot replace: %s", od->final, strerror(errno));
    rename(old, od->final);
    return -1;
  }
  od->tmp[0] = '\0';
  tree_remove(old);
  return 0;
}

/* SIGINT or SIGTERM received while they were held: the signal, else 0. */
static int interrupted(const sigset_t *held) {
  struct timespec now = {0, 0};
  int sig = sigtimedwait(held, NULL, &now);
  return sig > 0 ? sig : 0;
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
  FILE *f = file_open(dir, "heatmap_metastable.dat", err, errlen);
  if (!f) return -1;
  /* One file for the three heat maps (metastable, pass, recovered): every
   * outcome of a cell, so a cell with no metastable run but most runs slow
   * is visible as such (issue 17). */
  fprintf(f, "# x_index y_index p_metastable runs metastable p_pass passed p_recovered "
             "recovered slow collapsed undetermined (runs of the other axes pooled)\n");
  for (size_t i = 0; i < g->nx; i++) {
    for (size_t j = 0; j < g->ny; j++) {
      const ana_level *c = &g->cells[i * g->ny + j];
      if (c->n > 0)
        fprintf(f, "%zu %zu %.6f %lld %lld %.6f %lld %.6f %lld %lld %lld %lld\n", i, j, c->p_meta,
                (long long)c->n, (long long)c->n_meta, c->p_pass, (long long)c->n_pass,
                c->p_rec, (long long)c->n_rec, (long long)c->n_slow, (long long)c->n_coll,
                (long long)c->n_undet);
      else
        fprintf(f, "%zu %zu NaN 0 0 NaN 0 NaN 0 0 0 0\n", i, j);
    }
    fprintf(f, "\n");
  }
  return file_close(f, dir, "heatmap_metastable.dat", err, errlen);
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

static int hist_write(const fmt_results *r, const size_t *pts, size_t n,
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
static int band_write(const fmt_results *r, const band_metric *m, size_t p, const char *dir,
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

static void point_title(const fmt_results *r, size_t p, char *buf, size_t len) {
  char where[900], raw[1024];
  ana_point_describe(r, p, where, sizeof where);
  snprintf(raw, sizeof raw, "point %lld: %s", (long long)r->point_ids[p], where);
  ana_gp_text(buf, len, raw);
}

/* Emits the commands that draw one image as name.png and name.svg. */
static void gp_both(FILE *f, const char *name, const char *body) {
  fprintf(f, "@PNG\nset output '%s.png'\n%s\n@SVG\nset output '%s.svg'\nreplot\nunset output\n\n",
          name, body, name);
}

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

static int script_write(const fmt_results *r, const ana_summary *s, const char *dir, long ax,
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

  /* Heat maps: P(pass) and P(recovered) (green = good) and P(metastable)
   * (green = none), each labelled with every outcome; on the metastable
   * map, cells where most runs were slow are hatched, so "no metastable
   * run" is never read as "healthy". */
  static const struct {
    const char *name, *what, *label, *palette;
    int column;
  } maps[] = {
      {"heatmap_pass", "P(pass SLO)",
       "sprintf('%.2f\\n%d/%d pass\\n%d slow', $6, $7, $4, $10)",
       "set palette defined (0 '#d73027', 0.5 '#fee08b', 1 '#1a9850')", 6},
      {"heatmap_recovered", "P(recovered)",
       "sprintf('%.2f\\n%d rec/%d slow\\n%d met of %d', $8, $9, $10, $5, $4)",
       "set palette defined (0 '#d73027', 0.5 '#fee08b', 1 '#1a9850')", 8},
      {"heatmap_metastable", "P(metastable)",
       "sprintf('%.2f\\n%d/%d met\\n%d slow', $3, $5, $4, $10)",
       "set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')", 3},
  };
  for (size_t m = 0; ax >= 0 && m < sizeof maps / sizeof maps[0]; m++) {
    FILE *b = open_memstream(&body, &blen);
    if (!b) goto oom;
    char xn[128], yn[128];
    ana_gp_text(xn, sizeof xn, r->axes[ax]);
    ana_gp_text(yn, sizeof yn, ay >= 0 ? r->axes[ay] : "(all points)");
    fprintf(b, "reset\nset title '%s by %s and %s (other axes pooled; outcomes of the runs in "
               "each cell%s)'\n", maps[m].what, xn, yn,
            maps[m].column == 3 ? "; hatched: most runs slow, not recovered in time" : "");
    fprintf(b, "set xlabel '%s'\nset ylabel '%s'\n", xn, yn);
    fprintf(b, "%s\nset cbrange [0:1]\nset cblabel '%s'\n", maps[m].palette, maps[m].what);
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
    fprintf(b, ")\nunset grid\nset tics scale 0\n"
               "plot 'heatmap_metastable.dat' using 1:2:%d with image notitle, \\\n",
            maps[m].column);
    if (maps[m].column == 3)
      fprintf(b, "     '' using 1:($4 > 0 && $10 * 2 > $4 ? $2 : NaN):(0.5):(0.5) with "
                 "boxxyerror fs transparent pattern 4 noborder lc rgb '#7f3b08' notitle, \\\n");
    fprintf(b, "     '' using 1:2:(%s) with labels font ',8' notitle\n", maps[m].label);
    fclose(b);
    gp_both(f, maps[m].name, body);
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
      char t[1024], raw[1100], t2[1100];
      const ana_point_stats *ps = &s->points[rpts[i]];
      point_title(r, rpts[i], t, sizeof t);
      snprintf(raw, sizeof raw, "%s (%lld of %lld not recovered)", t,
               (long long)(ps->n - ps->n_recovered), (long long)ps->n);
      ana_gp_text(t2, sizeof t2, raw);
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
    const fmt_point_times *pt = &r->times[curve[0]];
    char title[256], xlabel[64], ylabel[256];
    ana_gp_text(title, sizeof title, band_metrics[m].title);
    ana_gp_text(xlabel, sizeof xlabel, isfinite(r->tick_ms) ? "time (ms)" : "tick");
    ana_gp_text(ylabel, sizeof ylabel, band_metrics[m].ylabel);
    fprintf(b, "reset\nset title '%s'\nset xlabel '%s'\nset ylabel '%s'\nset yrange [0:*]\n"
               "set key outside below Left reverse\nset grid\nset style fill transparent solid "
               "0.2 noborder\n",
            title, xlabel, ylabel);
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

/* The last non-empty line of dir/gnuplot.log, escaped, for the message. */
static void log_last_line(const char *dir, char *buf, size_t len) {
  char path[4096], line[512], last[512] = "";
  int w = snprintf(path, sizeof path, "%s/gnuplot.log", dir);
  int fd = w > 0 && (size_t)w < sizeof path ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (!f && fd >= 0) close(fd);
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[strspn(line, " \t^")]) snprintf(last, sizeof last, "%s", line);
  }
  if (f) fclose(f);
  ana_term_text(buf, len, last[0] ? last : "(no message)");
}

/* Runs `gnuplot plots.gp` in dir, its output going to dir/gnuplot.log.
 * held (SIGINT, SIGTERM, SIGCHLD) is blocked; the child gets old_mask back.
 * Returns 0, -1 on failure, or the signal that interrupted it (gnuplot is
 * then killed and reaped first). */
static int gnuplot_run(const char *program, const char *dir, const sigset_t *held,
                       const sigset_t *old_mask, char *err, size_t errlen) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, errlen, "cannot start %s: %s", program, strerror(errno));
    return -1;
  }
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    if (chdir(dir) != 0) _exit(126);
    int fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execlp(program, program, "plots.gp", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  for (;;) {
    int sig = sigwaitinfo(held, NULL);
    if (sig < 0) {
      if (errno == EINTR) continue;
      snprintf(err, errlen, "waiting for %s: %s", program, strerror(errno));
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    if (sig == SIGINT || sig == SIGTERM) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return sig;
    }
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      snprintf(err, errlen, "waiting for %s: %s", program, strerror(errno));
      return -1;
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    snprintf(err, errlen, "cannot run '%s' (is gnuplot installed and on PATH?)", program);
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char last[600];
    log_last_line(dir, last, sizeof last);
    snprintf(err, errlen, "%s failed on plots.gp: %s", program, last);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Effect plots: P(metastable) and P(pass) against each axis, others pooled  */
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
    FILE *f = file_open(dir, name, err, errlen);
    if (!f) goto fail;
    fprintf(f, "# level_index p_metastable lo hi p_pass lo hi runs p_recovered lo hi p_slow lo "
               "hi (other axes pooled; 95%% %s)\n",
            ana_method_name(s->method));
    for (size_t l = 0; l < e->n_levels; l++) {
      const ana_level *lv = &e->levels[l];
      fprintf(f, "%zu %.6f %.6f %.6f %.6f %.6f %.6f %lld %.6f %.6f %.6f %.6f %.6f %.6f\n", l,
              lv->p_meta, lv->meta_ci.lo, lv->meta_ci.hi, lv->p_pass, lv->pass_ci.lo,
              lv->pass_ci.hi, (long long)lv->n, lv->p_rec, lv->rec_ci.lo, lv->rec_ci.hi,
              lv->p_slow, lv->slow_ci.lo, lv->slow_ci.hi);
    }
    if (file_close(f, dir, name, err, errlen) != 0) goto fail;
  }
  char path[4096];
  int w = snprintf(path, sizeof path, "%s/plots.gp", dir);
  if (w < 0 || (size_t)w >= sizeof path) {
    snprintf(err, errlen, "report directory name too long");
    goto fail;
  }
  gp = fopen(path, "a");
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
    fprintf(b, "reset\nset title 'P(pass), P(recovered), P(slow), P(metastable) by %s (other "
               "axes pooled; 95%% "
               "intervals)'\nset xlabel '%s'\nset ylabel 'probability'\n"
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
               "lc rgb '#d62728' title 'P(metastable)', \\\n     '' using ($1+0.06):5:6:7 "
               "with yerrorlines pt 5 lw 2 lc rgb '#1f77b4' title 'P(pass)', \\\n     '' using "
               "($1+0.02):9:10:11 with yerrorlines pt 9 lw 2 lc rgb '#2ca02c' title "
               "'P(recovered)', \\\n     '' using ($1-0.02):12:13:14 with yerrorlines pt 11 lw 2 "
               "lc rgb '#ff7f0e' title 'P(slow)'\n",
            e->axis);
    fclose(b);
    snprintf(name, sizeof name, "effect_%zu", e->axis);
    gp_both(gp, name, body);
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
             "P(pass), P(recovered), P(slow) and P(metastable) by %s, other axes pooled (95%% %s)",
             r->axes[s->effects[k].axis], ana_method_name(s->method));
    fprintf(f, "<div style=\"display:inline-block;width:49%%;vertical-align:top\">");
    html_image(f, dir, name, cap);
    fprintf(f, "</div>\n");
  }
}

/* The refined points of a file `refine` worked on: one row per candidate,
 * cheapest first, with its test's state; nothing for other files. */
static void html_refine_section(FILE *f, const fmt_results *r) {
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
    long li = fmt_results_point_index(r, c->point);
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

static int html_write(const fmt_results *r, const ana_summary *s, const char *dir,
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
  html_image(f, dir, "heatmap_pass", "P(pass SLO) over two axes, the others pooled");
  html_image(f, dir, "heatmap_recovered",
             "P(recovered) over two axes, the others pooled: the runs back within the horizon");
  html_image(f, dir, "heatmap_metastable",
             "P(metastable) over two axes, the others pooled (hatched: most runs slow)");
  effects_html(f, r, s, dir);
  html_image(f, dir, "recovery_survival", "Recovery after clearance: Kaplan-Meier curves");
  html_image(f, dir, "recovery_histogram", "Recovery-time histogram");
  html_image(f, dir, "queue_depth", "Queue depth: median and 5-95% band across replicates");
  html_image(f, dir, "open_breakers", "Open breakers: median and 5-95% band");
  html_image(f, dir, "goodput", "Goodput: median and 5-95% band");

  fprintf(f, "<h2>Parameter effects</h2>\n<table><tr><th>rank</th><th>axis</th><th>value</th>"
             "<th>runs</th><th>recovered/slow/metastable/collapsed</th><th>P(pass)</th>"
             "<th>95%% CI</th><th>P(recovered)</th><th>P(slow)</th><th>P(metastable)</th>"
             "<th>95%% CI</th><th>effect (pass / recovered / slow / meta)</th></tr>\n");
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
              lv->pass_ci.hi, lv->p_rec, lv->p_slow, lv->p_meta, lv->meta_ci.lo, lv->meta_ci.hi,
              e->effect_pass, e->effect_rec, e->effect_slow, e->effect_meta);
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
  fprintf(f, "<th>runs</th><th>rec/slow/meta/collapsed</th><th>P(metastable)</th><th>95%% CI</th>"
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
    fprintf(f, "<td>%lld</td><td>%lld/%lld/%lld/%lld</td><td>%.3f</td><td>%.3f&ndash;%.3f</td>"
               "<td>%.3f</td><td>%.3f&ndash;%.3f</td><td>",
            (long long)ps->n, (long long)ps->n_recovered, (long long)ps->n_slow,
            (long long)ps->n_meta, (long long)ps->n_coll, ps->p_meta, mc.lo, mc.hi, ps->p_pass,
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
  return file_close(f, dir, "index.html", err, errlen);
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
  out_dir od;
  sigset_t held, old_mask;
  sigemptyset(&held);
  sigaddset(&held, SIGINT);
  sigaddset(&held, SIGTERM);
  sigaddset(&held, SIGCHLD);
  sigprocmask(SIG_BLOCK, &held, &old_mask);
  if (out_dir_prepare(&od, o->dir, err, errlen) != 0) goto done;
  const char *dir = od.tmp;
  if (ana_recommend(&rec, r, s, &o->reco) != 0 || !(text = ana_reco_text(&rec, r, s, &o->reco))) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  char *refined = ana_reco_refined_text(r, s); /* a refined file: its proof */
  if (refined) {
    free(text);
    text = refined;
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
  if ((rc = interrupted(&held)) != 0) goto done;
  rc = -1;

  int band_ok[sizeof band_metrics / sizeof band_metrics[0]] = {0};
  for (size_t m = 0; m < sizeof band_metrics / sizeof band_metrics[0]; m++) {
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
      if ((rc = interrupted(&held)) != 0) goto done;
      rc = -1;
    }
  }
  if (script_write(r, s, dir, ax, ay, &g, curve, n_curve, rpts, n_rpts, band_ok, err,
                   errlen) != 0)
    goto done;
  if (effects_plot_write(r, s, dir, err, errlen) != 0) goto done;
  if ((rc = gnuplot_run(o->gnuplot ? o->gnuplot : "gnuplot", dir, &held, &old_mask, err,
                        errlen)) != 0)
    goto done;
  rc = -1;
  if (html_write(r, s, dir, text, err, errlen) != 0) goto done;
  static const char *const names[] = {"heatmap_metastable", "heatmap_pass", "heatmap_recovered",
                                      "recovery_survival",
                                      "recovery_histogram", "queue_depth", "open_breakers",
                                      "goodput"};
  int drawn[sizeof names / sizeof names[0]] = {0};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char png[4096];
    int w = snprintf(png, sizeof png, "%s/%s.png", dir, names[i]);
    drawn[i] = w > 0 && (size_t)w < sizeof png && access(png, R_OK) == 0;
  }
  if ((rc = interrupted(&held)) != 0) goto done;
  rc = -1;
  if (out_dir_install(&od, err, errlen) != 0) goto done;
  if (log) {
    fprintf(log, "Wrote %s/index.html with:", od.final);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (drawn[i]) fprintf(log, " %s.png/.svg", names[i]);
    fprintf(log, "\n");
  }
  rc = 0;
done:
  if (rc > 0) snprintf(err, errlen, "interrupted by signal %d; %s left as it was", rc, o->dir);
  tree_remove(od.tmp);
  /* A signal that came after the last check acts now, as it would have. */
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  ana_grid2_free(&g);
  ana_reco_free(&rec);
  free(text);
  return rc;
}
