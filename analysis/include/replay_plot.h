/*
 * replay_plot.h — the plot of `stormsweep replay --plot DIR`: the incident's
 * input rate with each candidate client's p99 latency and error rate over
 * time, drawn as replay.png and replay.svg (plot.h runs gnuplot).
 */
#ifndef STORMSWEEP_REPLAY_PLOT_H
#define STORMSWEEP_REPLAY_PLOT_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

/* One candidate's curves, per latency window (NaN: no request ended). */
typedef struct ana_replay_series {
  const char *label;
  const double *p99_ms, *error_rate;
} ana_replay_series;

typedef struct ana_replay_plot {
  const char *dir;                   /* created, or replaced when it holds an earlier one */
  const char *gnuplot;               /* NULL: "gnuplot" */
  const volatile sig_atomic_t *stop; /* may be NULL */
  const char *title;
  double window_ms;
  size_t n_windows;
  const double *rate_rps; /* the input: new requests per second, per window */
  double fault_start_ms, fault_clear_ms;
  const ana_replay_series *series;
  size_t n_series;
} ana_replay_plot;

/* Writes p->dir (atomically, as report does). 0 with "Wrote ..." on log;
 * -1 with a message; or the signal of the stop flag. */
int ana_replay_plot_write(const ana_replay_plot *p, FILE *log, char *err, size_t errlen);

#endif
