/*
 * main.c — entry point of the stormsweep command-line tool: dispatches to
 * one function per subcommand (commands.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "eng_config.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"sim", cmd_sim, "simulate one run and print its summary"},
    {"route", cmd_route, "route keys through a bounded-load consistent-hash ring"},
    {"run", cmd_run, "run a sweep (default: the built-in seed study) into one HDF5 file"},
    {"list", cmd_list, "list a sweep's axes, grid points and run count without running"},
    {"refine", cmd_refine, "append runs to a result file until the cheapest candidate is proven"},
    {"merge", cmd_merge, "join the result files of a sweep's slices (run --slice K/N) into one"},
    {"analyze", cmd_analyze, "summarise a result file: per-point table, effects, recommendation"},
    {"recommend", cmd_recommend, "name the cheapest setting that provably meets the targets"},
    {"report", cmd_report, "write plots (PNG, SVG) and index.html for a result file"},
    {"verify", cmd_verify, "prove one configuration meets the targets (or not): a CI gate"},
    {"bench", cmd_bench, "measure engine and sweep speed on this machine"},
    {"export", cmd_export, "write a run's request-latency histogram (Prometheus text format)"},
    {"replay", cmd_replay, "replay an incident under today's client and candidates"},
    {"boundary", cmd_boundary, "locate where P(metastable) / P(pass) cross a level along one axis"},
};

/* One spelling rule for every command: a long option may be written with
 * underscores, as settings are ("--min_pass=0.5" is "--min-pass=0.5"), so
 * each command's parser only knows the hyphen form. Only the name is
 * respelled, never the value after '=', and nothing after a bare "--". */
static void respell_long_options(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (strncmp(a, "--", 2)) continue;
    if (!a[2]) return;
    for (char *c = a + 2; *c && *c != '='; c++)
      if (*c == '_') *c = '-';
  }
}

static void usage(FILE *out) {
  fprintf(out,
          "stormsweep %s — Monte Carlo sweeps of retry storms in sharded clusters\n\n"
          "usage: stormsweep COMMAND [OPTIONS]\n\ncommands:\n",
          STORMSWEEP_VERSION);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\n'stormsweep COMMAND --help' describes a command. Every command takes\n"
               "\"--opt value\" and \"--opt=value\", and --some_opt for --some-opt;\n"
               "'stormsweep COMMAND --list-options' lists its options (for completion).\n");
}

int main(int argc, char **argv) {
  /* First: from here on, whatever anyone prints is escaped (termout.c). */
  if (cli_term_install()) {
    fprintf(stderr, "stormsweep: out of memory\n");
    return 1;
  }
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("stormsweep %s\n", STORMSWEEP_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) {
      respell_long_options(argc - 1, argv + 1);
      return commands[i].run(argc - 1, argv + 1);
    }
  const char *names[sizeof commands / sizeof commands[0]];
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[i] = commands[i].name;
  const char *sug = argv[1][0] == '-' ? NULL
                                      : eng_suggest(argv[1], names, sizeof names / sizeof *names);
  if (sug)
    fprintf(stderr, "stormsweep: unknown command '%s' (did you mean '%s'?)\n", argv[1], sug);
  else
    fprintf(stderr, "stormsweep: unknown command '%s' (see 'stormsweep --help')\n", argv[1]);
  return 2;
}
