/*
 * testutil.h — what every test program shares (tests/lib/testutil.c,
 * linked into each tests/test_*.c by tests/CMakeLists.txt):
 *
 *   assertions   assert_near (both values printed on failure), its
 *                labelled form assert_near_msg, and assert_contains;
 *   files        a private temporary directory per test program and paths
 *                in it, removed without a shell;
 *   configs      tu_config_apply: "KEY=VALUE;..." set and validated, or fail;
 *   sweeps       tu_sweep_load: parse + check a sweep text or fail;
 *   result files the fixture builder: a synthetic, valid result file
 *                written through the format library's public API
 *                (fmt_out_create, fmt_out_write_run, fmt_out_close) with
 *                the summaries and per-tick series the test chooses.
 *
 * The builder writes only what the writer itself can write. Files that are
 * meant to be damaged, foreign or written by an older version are made
 * with the HDF5 API by the tests that need them (tests/README.md says
 * which and why).
 *
 * Every helper fails the calling test (cmocka's fail) on an error, with a
 * message; none returns an error code except the two setup helpers, which
 * cmocka's group setup and teardown functions return as they are.
 */
#ifndef STORMSWEEP_TESTUTIL_H
#define STORMSWEEP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "eng.h"
#include "fmt.h"
#include "swp.h"

/* ---- assertions ---- */

/* Fails unless |actual - expected| <= tol (a NaN on either side fails),
 * printing the expression, both values and the tolerance. */
#define assert_near(actual, expected, tol) \
  tu_assert_near((double)(actual), (double)(expected), (double)(tol), #actual, __FILE__, __LINE__)
/* The same with a label of the caller's instead of the expression. */
#define assert_near_msg(actual, expected, tol, what) \
  tu_assert_near((double)(actual), (double)(expected), (double)(tol), (what), __FILE__, __LINE__)
/* Fails unless needle occurs in haystack (NULL fails), printing both. */
#define assert_contains(haystack, needle) \
  tu_assert_contains((haystack), (needle), __FILE__, __LINE__)

void tu_assert_near(double actual, double expected, double tol, const char *what,
                    const char *file, int line);
void tu_assert_contains(const char *haystack, const char *needle, const char *file, int line);

/* ---- temporary files ---- */

/* Makes a new private directory $TMPDIR/stormsweep_TAG.XXXXXX (/tmp when
 * TMPDIR is unset) and puts its path in dir. Returns 0, or -1 (with a
 * message on stderr) so that a cmocka setup function can return it. */
int tu_tmpdir_make(char *dir, size_t len, const char *tag);
/* Removes dir and everything in it (no shell, links not followed).
 * Returns 0 or -1, for a teardown function. */
int tu_tmpdir_remove(const char *dir);
/* dir/name into buf, any file already there removed. */
void tu_path(char *buf, size_t len, const char *dir, const char *name);

/* ---- configurations ---- */

/* Applies "KEY=VALUE;KEY=VALUE..." to c in order with eng_config_set, then
 * eng_config_validate; fails the test naming the key or the whole text. */
void tu_config_apply(eng_config *c, const char *sets);

/* ---- sweeps ---- */

/* Parses text (named "t.ini" in messages) into sw and checks it; fails the
 * test with the parser's message when either step fails. Free with
 * swp_sweep_free. */
void tu_sweep_load(swp_sweep *sw, const char *text);

/* ---- the fixture builder: synthetic valid result files ---- */

typedef struct tu_file tu_file;

/* Per-tick value of metric m at tick t (0 <= t < the run's ticks) of the
 * run (point, replicate). */
typedef int32_t (*tu_series_fn)(void *user, int64_t point, int32_t replicate, eng_metric m,
                                int32_t t);

/* One run to write. */
typedef struct tu_run {
  int64_t point;
  int32_t replicate;        /* < the sweep's replicates: the row is point x replicates + replicate */
  eng_summary summary;      /* stored as given; summary.seed 0 stores the run's own seed */
  int32_t ticks;            /* the run's own tick count; 0: its point's (eng_config_ticks) */
  tu_series_fn series;      /* NULL: every metric 0 at every tick */
  void *user;               /* passed to series */
} tu_run;

/* Parses and checks sweep_text and creates a result file of that sweep at
 * path (replacing a file there), every run not written yet. command_line
 * NULL stores "stormsweep test". Sweeps that record per-shard queues
 * (record_shard_queues = on) are not supported. */
tu_file *tu_file_create(const char *path, const char *sweep_text, const char *command_line);
/* The checked sweep the file was created from (valid until tu_file_close). */
const swp_sweep *tu_file_sweep(const tu_file *f);
/* Writes one run: its /runs row and its /ticks chunks, each metric's
 * series encoded with fmt_chunk_encode and padded with -1 past the run's
 * ticks, as the driver does. */
void tu_file_write_run(tu_file *f, const tu_run *run);
/* Commits and closes the file (complete = 1 once every run is written) and
 * frees f. */
void tu_file_close(tu_file *f);

/* A summary of a finished run with that outcome: recovery_ms as given
 * (NaN unless recovered), passed_slo, amplification (also after the
 * faults), goodput during and after the faults; goodput_baseline and the
 * outcome rule's baseline and late goodput and amplification 1;
 * collapse_ms, collapse_watch_ms, return_ms and drain_ms NaN (no collapse
 * seen or watched); every count and every other figure 0; seed 0, which
 * tu_file_write_run replaces by the run's own. */
eng_summary tu_summary(int32_t outcome, int32_t passed_slo, double recovery_ms,
                       double amplification, double goodput_during, double goodput_after);

#endif
