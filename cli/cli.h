/*
 * cli.h — what every command of the stormsweep tool shares: the commands
 * themselves (one cmd_*.c each), the exit codes, the option grammar and the
 * parsers of its common values (options.c), the stop flag of SIGINT/SIGTERM
 * (stop.c), messages (msg.c), the escaped terminal streams (termout.c) and
 * the progress line (progress.c).
 *
 * Only the commands print, read options, install signal handlers or decide
 * exit codes; the libraries below them return codes and messages and report
 * progress through callbacks.
 */
#ifndef STORMSWEEP_CLI_H
#define STORMSWEEP_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "eng_config.h"

/* ---- the commands: argv[0] is the command name ---- */

int cmd_sim(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_run(int argc, char **argv); /* run, and run --refine */
int cmd_list(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
/* recommend's headroom (cmd_recommend_headroom.c): prints where the setting
 * of point_index stops passing along load (and a swept fault size), from at
 * most max_runs fresh runs per search. 0, or 128 + the signal. */
struct fmt_results;
int cli_headroom_print(FILE *out, const struct fmt_results *r, size_t point_index,
                       double min_pass, double slo_ms, int64_t max_runs, int threads);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* bench --writer N (cmd_bench_writer.c): the single writer fed synthetic runs. */
int cli_bench_writer(int64_t runs, int json);
int cmd_verify(int argc, char **argv);
int cmd_boundary(int argc, char **argv);
/* cfg = base with the numeric setting key at x (rounded when is_int): the
 * run of a search along one axis (boundary, recommend's headroom). */
int cli_axis_config(const eng_config *base, const char *key, int is_int, double x,
                    eng_config *cfg, char *msg, size_t msglen);
int cmd_refine(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_replay(int argc, char **argv);
/* A grid axis no value of which changes a run (its setting is dead under
 * the others at every point, swp_sweep_dead_axes) only repeats runs: list,
 * run and boundary refuse it with the reason, or with allow
 * (--allow-dead-axes) warn. Returns 0 or 2 (sweep_load.c). */
struct swp_sweep;
int cli_dead_axes(const char *cmd, const struct swp_sweep *sw, int allow);

/* What a command was told to build its sweep from (sweep_load.c): the file
 * (NULL: the built-in seed study), a policy preset (NULL: none), the
 * --client file (its mapping printed when loud), then overrides —
 * "--set", VALUE, "--grid", VALUE, ... in command-line order. */
typedef struct cli_sweep_spec {
  const char *path, *policy, *client;
  unsigned client_flags; /* SWP_CLIENT_LENIENT */
  int loud;
  const char *const *overrides;
  int n_overrides;
  int allow_dead; /* --allow-dead-axes: a dead axis is a warning */
} cli_sweep_spec;
/* Builds and checks sw as spec says; 0, or 2 after printing the reason. */
int cli_sweep_load(const char *cmd, const cli_sweep_spec *spec, struct swp_sweep *sw);

/* ---- the refine options refine and run --refine share (cmd_refine.c) ---- */

struct ana_refine_opts;
enum {
  CLI_O_MIN_PASS = 1000,
  CLI_O_MAX_META,
  CLI_O_ALPHA,
  CLI_O_MAX_RUNS,
  CLI_O_PARALLEL,
  CLI_O_USER_SLO,
  CLI_O_TICKS
};
#define CLI_REFINE_LONGOPTS                                                                 \
  {"min-pass", required_argument, NULL, CLI_O_MIN_PASS},                                    \
      {"max-metastable", required_argument, NULL, CLI_O_MAX_META},                          \
      {"alpha", required_argument, NULL, CLI_O_ALPHA},                                      \
      {"max-runs", required_argument, NULL, CLI_O_MAX_RUNS},                                \
      {"parallel-candidates", required_argument, NULL, CLI_O_PARALLEL},                     \
      {"slo", required_argument, NULL, CLI_O_USER_SLO},                                     \
      {"ticks", no_argument, NULL, CLI_O_TICKS}
/* Takes option c of CLI_REFINE_LONGOPTS into o: 1 taken, 0 not one of
 * them, -1 a bad value (printed). */
int cli_refine_opt(const char *cmd, int c, const char *arg, struct ana_refine_opts *o);
/* Refines o->path (messages to stderr, the decision to stdout, Ctrl-C
 * finishes the runs in flight); returns the exit status. */
int cli_refine_run(struct ana_refine_opts *o);

/* ---- exit codes (every command; README "A tour of the commands") ---- */

enum {
  CLI_EXIT_OK = 0,        /* done (also: an answer such as "no point qualifies") */
  CLI_EXIT_FAIL = 1,      /* a failure while working: a write, a run, a refuted verify */
  CLI_EXIT_USAGE = 2,     /* bad usage or an unusable input file */
  CLI_EXIT_UNDECIDED = 3, /* verify: --max-runs spent without a verdict */
  CLI_EXIT_SIGNAL = 128   /* + the signal: interrupted by SIGINT (130) or SIGTERM (143) */
};

/* ---- options (options.c) ---- */

/* Call once before parsing argv: resets getopt_long (opterr off) for a fresh
 * parse. '_' and '-' are the same in long option names (main.c respells).
 * getopt_long reorders the array it parses (operands last): a command that
 * stores or prints its command line parses a copy (cli_argv_copy). */
void cli_opts_begin(int argc, char **argv);
/* A copy of argv[0..argc) and its NULL, to parse (malloc'd; NULL: out of memory). */
char **cli_argv_copy(int argc, char **argv);
/* getopt_long with stormsweep's rules: shortopts must start with ':'; a long
 * option is taken only when spelled in full (no abbreviations: "--min-pas" is
 * not --min-pass); a problem (unknown option, with a "did you mean"; a
 * missing value; a value given to a flag) is printed on one line as
 * "stormsweep CMD: ..." and '?' returned. */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);

/* The parsers of the values several commands take; each prints
 * "stormsweep CMD: OPT: expected ..., got 'TEXT'" and returns -1 on a bad
 * value, 0 otherwise. */
#define CLI_MAX_THREADS 4096
int cli_parse_threads(const char *cmd, const char *opt, const char *text, int *out);
int cli_parse_seed(const char *cmd, const char *opt, const char *text, uint64_t *out);
int cli_parse_prob(const char *cmd, const char *opt, const char *text, double *out);
int cli_parse_count(const char *cmd, const char *opt, const char *text, long long lo,
                    long long hi, long long *out);
int cli_parse_number(const char *cmd, const char *opt, const char *text, double lo, double hi,
                     double *out);

/* "stormsweep a 'b c'": the command line as a shell would need it typed
 * again (malloc'd; NULL entries of argv left out). */
char *cli_command_line(int argc, char **argv);

/* ---- the stop flag (stop.c) ---- */

/* SIGINT and SIGTERM set the flag and nothing else (the first one; a second
 * kills at once, as the default does); SIGXFSZ is ignored so a file-size
 * limit fails a write instead of killing the process. Returns the flag,
 * which the libraries poll. */
const volatile sig_atomic_t *cli_stop_install(void);
/* The signal that set the flag (0: none). */
int cli_stop_signal(void);
/* The handlers as they were before cli_stop_install. */
void cli_stop_restore(void);

/* ---- the progress line (progress.c) ---- */

struct drv_progress;
/* Whether to draw it: not quiet and stderr is a terminal. */
int cli_progress_wanted(int quiet);
/* A drv_progress_fn: redraws the line. */
void cli_progress(void *user, const struct drv_progress *p);
/* Clears the line. */
void cli_progress_end(void);
/* "1:02:03" / "2:03" for seconds; "12.3 MB" for bytes. */
void cli_duration_text(double s, char *buf, size_t len);
void cli_bytes_text(double b, char *buf, size_t len);

/* ---- a command's output file (output.c) ---- */

struct fmt_outfile;
/* Opens path for writing as an fmt_outfile (force: replace an existing
 * file, atomically; "-": standard output). NULL after a message. */
FILE *cli_out_open(struct fmt_outfile *f, const char *cmd, const char *opt, const char *path,
                   int force);
/* Puts the file in place; -1 after a message (nothing replaced then). */
int cli_out_close(struct fmt_outfile *f, const char *cmd, const char *opt);

/* ---- the terminal (termout.c) ---- */

/* Replaces stdout and stderr by streams that write every byte through the
 * terminal escaper (textsafe.h): no raw control character from any input
 * reaches the screen, while UTF-8 and newlines pass. main calls it
 * first; -1 when out of memory (the streams are unchanged then). */
int cli_term_install(void);
/* Writes the program's own control sequence s (the progress line's) to
 * standard error as it is, after what stderr holds. */
void cli_term_control(const char *s);

/* ---- messages (msg.c) ---- */

/* "stormsweep CMD: MESSAGE" on stderr, one line; the message goes through
 * the terminal escaper (textsafe.h), since it may quote a file's text. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a message already formatted. */
void cli_error_text(const char *cmd, const char *text);
/* The policy presets and what each sets, one per line indented by indent
 * (from the settings table, so help texts cannot drift from it). */
void cli_help_presets(FILE *out, int indent);

#endif
