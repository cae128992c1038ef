/*
 * plot.h — running gnuplot on a script stormsweep wrote, for report and
 * boundary: the one way a plot is drawn.
 */
#ifndef STORMSWEEP_PLOT_H
#define STORMSWEEP_PLOT_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

/* Runs `program script` (program NULL: "gnuplot") with dir as its working
 * directory — a private directory holding only files stormsweep created
 * (fmt_outdir), so a script refers to its data by bare names and no planted
 * file can be run — its output going to dir/gnuplot.log. Returns 0; -1 on
 * failure (err says why, with gnuplot's last message); or the signal of the
 * stop flag, when it was raised meanwhile (gnuplot is then killed and
 * reaped). */
int ana_gnuplot_run(const char *program, const char *dir, const char *script,
                    const volatile sig_atomic_t *stop, char *err, size_t errlen);

/* The head of a script stormsweep writes (names the command, so a later
 * run knows the directory is its own): the PNG and SVG terminals at
 * width x height, NaN as missing data, a light grid. */
void ana_gp_preamble(FILE *f, const char *command, const char *script, int width, int height);
/* Whether dir holds an earlier output of stormsweep COMMAND: its script, a
 * regular file opened without following links, starts with the line
 * ana_gp_preamble wrote. What fmt_outdir_begin asks before replacing dir. */
int ana_gp_dir_is_ours(const char *dir, const char *script, const char *command);
/* The commands that draw one image, body, as name.png and name.svg. */
void ana_gp_both(FILE *f, const char *name, const char *body);

#endif
