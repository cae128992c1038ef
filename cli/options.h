/*
 * options.h — the one option grammar of sim, route and bench: glibc's
 * getopt_long (so "--opt value" and "--opt=value" both work, options and
 * operands mix), with '_' and '-' interchangeable in long option names
 * because settings are spelled with underscores (capacity_factor) and
 * options with hyphens (--capacity-factor).
 */
#ifndef STORMSWEEP_CLI_OPTIONS_H
#define STORMSWEEP_CLI_OPTIONS_H

#include <getopt.h>

/* Rewrites '_' to '-' in the name part of every "--long_option[=value]"
 * argument up to a "--" terminator, in place, and resets getopt_long for a
 * fresh parse (opterr off: callers report through cli_opt_error). Call it
 * before the first getopt_long; use an optstring starting with ':'. */
void cli_opts_begin(int argc, char **argv);

/* Reports getopt_long's ':' (missing value) or '?' (unknown option, or a
 * value given to an option that takes none) for `stormsweep CMD` on one
 * stderr line. Returns 2, the exit status of bad usage. */
int cli_opt_error(const char *cmd, int c, char **argv, const struct option *longopts);

#endif
