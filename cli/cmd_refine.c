/*
 * cmd_refine.c — `stormsweep refine FILE`: the refine procedure
 * (analysis/refine.h) from the command line, and the options `run --refine`
 * shares with it (cli_refine_opt, cli_refine_run).
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "decision.h"
#include "refine.h"
#include "refine_plan.h"

static void refine_usage(FILE *f) {
  fprintf(f,
          "usage: stormsweep refine FILE [--min-pass P] [--max-metastable P] [--alpha A]\n"
          "                         [--slo TERMS] [--max-runs N] [--parallel-candidates K]\n"
          "                         [--ticks] [-j N] [--quiet]\n\n"
          "Spends runs only where the decision is open: the sweep's replicates screen every\n"
          "point; points consistent with the targets are candidates, ranked by cost as\n"
          "'recommend' ranks; the candidate of rank i is confirmed by an SPRT at alpha/2^i on\n"
          "fresh replicates appended to FILE (never the screening ones), K candidates per\n"
          "round, until the cheapest candidate not refuted is proven, every candidate is\n"
          "refuted, or --max-runs new runs are spent. The family's error stays <= alpha.\n\n"
          "  --min-pass P           target: P(pass SLO) >= P (default 0.99)\n"
          "  --max-metastable P     target: P(bad) <= P (default 0.01; bad = metastable,\n"
          "                         collapsed or undetermined)\n"
          "  --alpha A              family-wise error of the claim (default %g)\n"
          "  --slo TERMS            judge runs by what their users saw, e.g.\n"
          "                         \"p99<=500ms,errors<=1%%\": a run passes when every term\n"
          "                         holds again within the sweep's slo_ms of clearance\n"
          "                         (default: the queue-recovery check; a refined file\n"
          "                         keeps the terms it was refined by)\n"
          "  --max-runs N           new runs to spend at most, over all sessions (default %d)\n"
          "  --parallel-candidates K  candidates confirmed per round (default %d)\n"
          "  --ticks                the confirmation runs store /ticks rows as FILE's\n"
          "                         record says (default: their /runs summary row alone,\n"
          "                         all the proofs read; with --slo TERMS their rows are\n"
          "                         kept, since the terms are judged from them)\n"
          "  -j, --threads N        OpenMP threads\n"
          "  -q, --quiet            no progress lines\n\n"
          "Deterministic (same file for any -j), repeatable (a decided file is left as it\n"
          "is) and resumable: Ctrl-C finishes the runs in flight and prints the command that\n"
          "continues. The design is stored in FILE's /refine group. Exit status: 0 decided or\n"
          "budget spent, 1 failure, 2 bad usage or file, 130/143 interrupted.\n",
          ANA_SEQ_ALPHA, ANA_REFINE_MAX_RUNS, ANA_REFINE_K);
}

int cli_refine_opt(const char *cmd, int c, const char *arg, ana_refine_opts *o) {
  long long n;
  switch (c) {
  case CLI_O_MIN_PASS:
    o->given_pass = 1;
    return cli_parse_prob(cmd, "--min-pass", arg, &o->d.min_pass) ? -1 : 1;
  case CLI_O_MAX_META:
    o->given_meta = 1;
    return cli_parse_prob(cmd, "--max-metastable", arg, &o->d.max_meta) ? -1 : 1;
  case CLI_O_ALPHA:
    o->given_alpha = 1;
    if (cli_parse_prob(cmd, "--alpha", arg, &o->d.alpha)) return -1;
    if (!(o->d.alpha > 0 && o->d.alpha < 0.5)) {
      cli_error(cmd, "--alpha: expected a level above 0 and below 0.5, got '%s'", arg);
      return -1;
    }
    return 1;
  case CLI_O_MAX_RUNS:
    if (cli_parse_count(cmd, "--max-runs", arg, 0, SWP_MAX_RUNS, &n)) return -1;
    o->max_runs = n;
    return 1;
  case CLI_O_USER_SLO: {
    char err[256];
    if (ana_slo_parse(arg, &o->user_slo, err, sizeof err)) {
      cli_error(cmd, "%s", err);
      return -1;
    }
    o->given_user_slo = 1;
    return 1;
  }
  case CLI_O_TICKS:
    o->keep_ticks = 1;
    return 1;
  case CLI_O_PARALLEL:
    if (cli_parse_count(cmd, "--parallel-candidates", arg, 1, 1000, &n)) return -1;
    o->k = (int)n;
    o->given_k = 1;
    return 1;
  default:
    return 0;
  }
}

static void say(void *user, const char *line) { cli_error_text((const char *)user, line); }

/* The command that continues an interrupted refine. */
static void print_resume(const ana_refine_opts *o, int sig) {
  fprintf(stderr, "stormsweep refine: interrupted (%s); the runs in flight are in %s. Continue "
                  "with:\n  stormsweep refine %s",
          sig == SIGTERM ? "SIGTERM" : "SIGINT", o->path, o->path);
  if (o->given_pass) fprintf(stderr, " --min-pass %g", o->d.min_pass);
  if (o->given_meta) fprintf(stderr, " --max-metastable %g", o->d.max_meta);
  if (o->given_alpha) fprintf(stderr, " --alpha %g", o->d.alpha);
  if (o->given_k) fprintf(stderr, " --parallel-candidates %d", o->k);
  if (o->keep_ticks) fprintf(stderr, " --ticks");
  if (o->given_user_slo) {
    char terms[256];
    ana_slo_format(&o->user_slo, terms, sizeof terms);
    fprintf(stderr, " --slo '%s'", terms);
  }
  if (o->max_runs != ANA_REFINE_MAX_RUNS)
    fprintf(stderr, " --max-runs %lld", (long long)o->max_runs);
  fprintf(stderr, "\n");
}

int cli_refine_run(ana_refine_opts *o) {
  o->say = say;
  o->user = "refine";
  o->out = stdout;
  o->stop = cli_stop_install();
  int stopped = 0;
  int rc = ana_refine_file(o, &stopped);
  int sig = cli_stop_signal();
  cli_stop_restore();
  if (stopped) {
    print_resume(o, sig);
    return CLI_EXIT_SIGNAL + (sig > 0 ? sig : SIGINT);
  }
  return rc;
}

int cmd_refine(int argc, char **argv) {
  H5dont_atexit();
  static const struct option longopts[] = {CLI_REFINE_LONGOPTS,
                                           {"threads", required_argument, NULL, 'j'},
                                           {"quiet", no_argument, NULL, 'q'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  ana_refine_opts o;
  ana_refine_opts_init(&o);
  int c;
  cli_opts_begin(argc, argv);
  while ((c = cli_getopt("refine", argc, argv, ":j:qh", longopts)) != -1) {
    int r = cli_refine_opt("refine", c, optarg, &o);
    if (r < 0) return CLI_EXIT_USAGE;
    if (r) continue;
    switch (c) {
    case 'j':
      if (cli_parse_threads("refine", "-j", optarg, &o.threads)) return CLI_EXIT_USAGE;
      break;
    case 'q': o.quiet = 1; break;
    case 'h': refine_usage(stdout); return CLI_EXIT_OK;
    default: return CLI_EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    refine_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  if (optind + 1 < argc) {
    cli_error("refine", "one FILE only ('%s' and '%s')", argv[optind], argv[optind + 1]);
    return CLI_EXIT_USAGE;
  }
  o.path = argv[optind];
  return cli_refine_run(&o);
}
