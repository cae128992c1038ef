/*
 * cmd_merge.c — `stormsweep merge PART.h5... -o FILE`: joins the result
 * files of a sweep's slices into the file one run of the whole sweep would
 * have written (format/merge.c does the work and says what it checks).
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt.h"

static void merge_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep merge PART.h5... -o FILE [--force] [--no-space-check] [--quiet]\n\n"
          "Joins the result files of one sweep's slices ('stormsweep run --slice K/N') into\n"
          "FILE, the file a single run of the whole sweep would have written: its result\n"
          "datasets (/runs, /points, /points_text, /axes, /ticks) compare equal under\n"
          "h5diff. /ticks chunks are copied still compressed.\n\n"
          "The parts must hold the same sweep (effective sweep text, master seed, version)\n"
          "and together every run exactly once: a missing, duplicated or unfinished slice is\n"
          "named, and nothing is written. Any result files of one sweep whose done runs\n"
          "partition it can be merged, not only slices.\n\n"
          "  -o, --output FILE    the merged file (required); never overwritten unless --force\n"
          "  -f, --force          overwrite an existing FILE (only once the merge succeeded)\n"
          "  --no-space-check     skip the check that FILE's file system has room\n"
          "  -q, --quiet          no summary line\n"
          "  -h, --help           this help\n\n"
          "Exit status: 0 merged, 1 writing FILE failed, 2 bad usage or parts, 130/143\n"
          "interrupted (nothing written).\n"
          "Example (a batch array of 8 tasks, then one merge):\n"
          "  stormsweep run sweep.ini --slice $TASK/8 -o part-$TASK.h5   # TASK = 0..7\n"
          "  stormsweep merge part-*.h5 -o sweep.h5\n");
}

static void say(void *user, const char *line) { cli_error_text((const char *)user, line); }

/* Parses argv (a copy: getopt reorders it) into o. -1 to go on, or the exit status. */
static int merge_parse(int argc, char **av, fmt_merge_opts *o, int *quiet) {
  enum { O_NO_SPACE = 256 };
  static const struct option longopts[] = {
      {"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
      {"quiet", no_argument, NULL, 'q'},        {"no-space-check", no_argument, NULL, O_NO_SPACE},
      {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
  int c;
  cli_opts_begin(argc, av);
  while ((c = cli_getopt("merge", argc, av, ":o:fqh", longopts)) != -1) {
    switch (c) {
    case 'o': o->output = optarg; break;
    case 'f': o->force = 1; break;
    case 'q': *quiet = 1; break;
    case O_NO_SPACE: o->no_space_check = 1; break;
    case 'h': merge_usage(stdout); return CLI_EXIT_OK;
    default: return CLI_EXIT_USAGE;
    }
  }
  o->parts = (const char *const *)av + optind;
  o->n_parts = argc - optind;
  if (!o->n_parts) {
    cli_error("merge", "no part files given (see 'stormsweep merge --help')");
    return CLI_EXIT_USAGE;
  }
  if (!o->output || !o->output[0]) {
    cli_error("merge", "-o FILE is required (the merged result file)");
    return CLI_EXIT_USAGE;
  }
  return -1;
}

int cmd_merge(int argc, char **argv) {
  H5dont_atexit(); /* as in cmd_run: a failed output is abandoned, not flushed */
  fmt_merge_opts o = {0};
  o.say = say;
  o.user = "merge";
  int quiet = 0;
  char **av = cli_argv_copy(argc, argv);
  char *cmdline = cli_command_line(argc, argv);
  int rc = av && cmdline ? merge_parse(argc, av, &o, &quiet) : CLI_EXIT_FAIL;
  if (rc >= 0) {
    free(av);
    free(cmdline);
    return rc;
  }
  int64_t runs = 0;
  o.command_line = cmdline;
  o.runs_merged = &runs;
  o.stop = cli_stop_install();
  int stopped = 0;
  char err[1024];
  rc = fmt_merge(&o, &stopped, err, sizeof err);
  cli_stop_restore();
  if (stopped) {
    int sig = cli_stop_signal();
    cli_error("merge", "interrupted (%s): nothing written", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    rc = CLI_EXIT_SIGNAL + (sig ? sig : SIGINT);
  } else if (rc == 0 && !quiet) {
    cli_error("merge", "%d part%s, %lld runs -> %s", o.n_parts, o.n_parts == 1 ? "" : "s",
              (long long)runs, o.output);
  }
  free(av);
  free(cmdline);
  return rc;
}
