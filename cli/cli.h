/*
 * cli.h — what every command of the stormsweep tool shares: the commands
 * themselves (one cmd_*.c each), the exit codes, the option grammar and the
 * parsers of its common values (options.c), the stop flag of SIGINT/SIGTERM
 * (stop.c), messages (msg.c) and the progress line (progress.c).
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

/* ---- the commands: argv[0] is the command name ---- */

int cmd_sim(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_run(int argc, char **argv); /* run, and run --refine */
int cmd_list(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_boundary(int argc, char **argv);
int cmd_refine(int argc, char **argv);
/* `run` without --refine (cmd_run.c); cmd_run adds the refine. */
int cli_run_sweep(int argc, char **argv);

/* The option at argv[*i] when it is lng or shrt: its value from "--opt V",
 * "--opt=V" or "-oV", *i advanced past it (cmd_analyze.c). */
const char *ana_opt_value(int argc, char **argv, int *i, const char *lng, const char *shrt,
                          int *matched);

/* ---- exit codes (every command; README "Exit status") ---- */

enum {
  CLI_EXIT_OK = 0,        /* done (also: an answer such as "no point qualifies") */
  CLI_EXIT_FAIL = 1,      /* a failure while working: a write, a run, a refuted verify */
  CLI_EXIT_USAGE = 2,     /* bad usage or an unusable input file */
  CLI_EXIT_UNDECIDED = 3, /* verify: --max-runs spent without a verdict */
  CLI_EXIT_SIGNAL = 128   /* + the signal: interrupted by SIGINT (130) or SIGTERM (143) */
};

/* ---- options (options.c) ---- */

/* Call once before parsing argv: resets getopt_long (opterr off) for a fresh
 * parse. '_' and '-' are the same in long option names (main.c respells). */
void cli_opts_begin(int argc, char **argv);
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

/* ---- messages (msg.c) ---- */

/* "stormsweep CMD: MESSAGE" on stderr, one line; the message goes through
 * the terminal escaper (textsafe.h), since it may quote a file's text. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a message already formatted. */
void cli_error_text(const char *cmd, const char *text);

#endif
