/*
 * msg.c — how a command says what went wrong: one line on stderr, prefixed
 * with the command, its text escaped for the terminal (textsafe.h), because
 * messages quote sweep files, client configs and result files that someone
 * else may have written.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"
#include "textsafe.h"

void cli_error_text(const char *cmd, const char *text) {
  fprintf(stderr, "stormsweep %s: ", cmd);
  ana_term_fputs(stderr, text, 0);
  fputc('\n', stderr);
}

void cli_error(const char *cmd, const char *fmt, ...) {
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  cli_error_text(cmd, line);
}
