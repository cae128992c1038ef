/*
 * output.c — a command's single output file (--csv, --ticks-csv, --junit,
 * --dump-ring) as an fmt_outfile: built beside its place, renamed into it
 * whole, never through a link or over a file without --force; "-" is
 * standard output. Errors are printed as "stormsweep CMD: OPT: ...".
 */
#include <stdio.h>

#include "cli.h"
#include "fmt_outfile.h"

FILE *cli_out_open(fmt_outfile *f, const char *cmd, const char *opt, const char *path,
                   int force) {
  char err[1024];
  if (fmt_outfile_begin(f, path, force ? FMT_OUTFILE_FORCE : 0, err, sizeof err)) {
    cli_error(cmd, "%s: %s", opt, err);
    return NULL;
  }
  FILE *s = fmt_outfile_stream(f);
  if (!s) {
    cli_error(cmd, "%s: %s: out of memory", opt, path);
    fmt_outfile_abandon(f);
  }
  return s;
}

int cli_out_close(fmt_outfile *f, const char *cmd, const char *opt) {
  char err[1024];
  if (fmt_outfile_commit(f, err, sizeof err)) {
    cli_error(cmd, "%s: %s", opt, err);
    return -1;
  }
  return 0;
}
