/*
 * replay_plot.c — see replay_plot.h. Two panels share the time axis: p99
 * latency (log scale: a storm's p99 is the timeout, a calm one a few ms)
 * and the error rate, each candidate one colour, with the input rate on the
 * right axis of both so a reader sees which part of the traffic each
 * client failed, and the incident window shaded.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt_outfile.h"
#include "plot.h"
#include "replay_plot.h"
#include "textsafe.h"

static const char *const colours[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

/* An earlier replay plot: its replay.gp, a regular file, says so. */
static int is_old_plot(const char *dir) {
  return ana_gp_dir_is_ours(dir, "replay.gp", "replay");
}

/* replay.dat: time (s), input rate, then p99 (ms) and error rate (%) per
 * candidate. */
static int data_write(const ana_replay_plot *p, const char *dir, char *err, size_t errlen) {
  FILE *f = fmt_dir_file_create(dir, "replay.dat", err, errlen);
  if (!f) return -1;
  fprintf(f, "# time_s input_rps");
  for (size_t i = 0; i < p->n_series; i++) fprintf(f, " p99_ms_%zu error_pct_%zu", i, i);
  fprintf(f, "\n");
  for (size_t w = 0; w < p->n_windows; w++) {
    fprintf(f, "%.6g %.6g", (w + 0.5) * p->window_ms / 1000, p->rate_rps[w]);
    for (size_t i = 0; i < p->n_series; i++) {
      double l = p->series[i].p99_ms[w], e = p->series[i].error_rate[w];
      /* A zero p99 (a request answered within the tick) has no place on a log axis. */
      fprintf(f, " %.6g %.6g", l > 0 ? l : NAN, 100 * e);
    }
    fprintf(f, "\n");
  }
  return fmt_dir_file_close(f, dir, "replay.dat", err, errlen);
}

static void panel(FILE *b, const ana_replay_plot *p, int latency) {
  fprintf(b, "set ylabel '%s'\n%s", latency ? "p99 latency (ms)" : "error rate (%)",
          latency ? "set logscale y\nset yrange [*:*]\n" : "unset logscale y\nset yrange [0:100]\n");
  fprintf(b, "plot 'replay.dat' using 1:2 axes x1y2 with filledcurves x1 lc rgb '#cccccc' "
             "fs transparent solid 0.5 noborder title 'input rate (req/s, right axis)'");
  for (size_t i = 0; i < p->n_series; i++) {
    char t[512];
    ana_gp_text(t, sizeof t, p->series[i].label);
    fprintf(b, ", \\\n     '' using 1:%zu with lines lw 2 lc rgb '%s' title '%s'",
            3 + 2 * i + (latency ? 0 : 1), colours[i % 8], t);
  }
  fprintf(b, "\n");
}

static int script_write(const ana_replay_plot *p, const char *dir, char *err, size_t errlen) {
  FILE *f = fmt_dir_file_create(dir, "replay.gp", err, errlen);
  if (!f) return -1;
  ana_gp_preamble(f, "replay", "replay.gp", 1000, 800);
  char *body = NULL, title[512];
  size_t blen = 0;
  FILE *b = open_memstream(&body, &blen);
  if (!b) {
    fclose(f);
    snprintf(err, errlen, "out of memory writing replay.gp");
    return -1;
  }
  ana_gp_text(title, sizeof title, p->title ? p->title : "replay");
  fprintf(b,
          "reset\nset multiplot layout 2,1 title 'Replay of %s: what users saw (replicate 0 of "
          "each client)'\nset xlabel 'time (s)'\nset y2label 'input rate (req/s)'\n"
          "set y2range [0:*]\nset y2tics\nset ytics nomirror\nset grid\n"
          "set key outside below Left reverse\n",
          title);
  if (isfinite(p->fault_start_ms) && p->fault_clear_ms > p->fault_start_ms)
    fprintf(b,
            "set object 1 rect from %g, graph 0 to %g, graph 1 fc rgb '#f4d0d0' fs solid 0.3 "
            "noborder behind\n",
            p->fault_start_ms / 1000, p->fault_clear_ms / 1000);
  panel(b, p, 1);
  panel(b, p, 0);
  fprintf(b, "unset multiplot\n");
  fclose(b);
  ana_gp_both(f, "replay", body);
  free(body);
  return fmt_dir_file_close(f, dir, "replay.gp", err, errlen);
}

int ana_replay_plot_write(const ana_replay_plot *p, FILE *log, char *err, size_t errlen) {
  fmt_outdir od;
  memset(&od, 0, sizeof od);
  int rc = -1;
  if (fmt_outdir_begin(&od, p->dir, is_old_plot, err, errlen) != 0) goto done;
  if (data_write(p, od.tmp, err, errlen) || script_write(p, od.tmp, err, errlen)) goto done;
  if ((rc = ana_gnuplot_run(p->gnuplot, od.tmp, "replay.gp", p->stop, err, errlen)) != 0)
    goto done;
  rc = -1;
  if (fmt_outdir_install(&od, err, errlen) != 0) goto done;
  if (log) fprintf(log, "Wrote %s/replay.png and replay.svg\n", od.final);
  rc = 0;
done:
  if (rc > 0) snprintf(err, errlen, "interrupted by signal %d; %s left as it was", rc, p->dir);
  fmt_outdir_abandon(&od);
  return rc;
}
