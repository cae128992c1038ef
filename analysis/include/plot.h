/*
 * plot.h — running gnuplot on a script stormsweep wrote, for report and
 * boundary: the one way a plot is drawn.
 */
#ifndef STORMSWEEP_PLOT_H
#define STORMSWEEP_PLOT_H

#include <signal.h>
#include <stddef.h>

/* Runs `program script` (program NULL: "gnuplot") with dir as its working
 * directory — a private directory holding only files stormsweep created
 * (fmt_outdir), so a script refers to its data by bare names and no planted
 * file can be run — its output going to dir/gnuplot.log. Returns 0; -1 on
 * failure (err says why, with gnuplot's last message); or the signal of the
 * stop flag, when it was raised meanwhile (gnuplot is then killed and
 * reaped). */
int ana_gnuplot_run(const char *program, const char *dir, const char *script,
                    const volatile sig_atomic_t *stop, char *err, size_t errlen);

#endif
