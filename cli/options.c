/*
 * options.c — see options.h: the getopt_long conventions shared by sim,
 * route and bench, so their options read and fail the same way.
 */
#include <stdio.h>
#include <string.h>

#include "options.h"

void cli_opts_begin(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (a[0] != '-' || a[1] != '-') continue;
    if (a[2] == '\0') break; /* "--": the rest are operands */
    for (char *p = a + 2; *p && *p != '='; p++)
      if (*p == '_') *p = '-';
  }
  optind = 1;
  opterr = 0;
}

int cli_opt_error(const char *cmd, int c, char **argv, const struct option *longopts) {
  /* getopt_long has consumed the offending argument (and, for a missing
   * value, nothing more), so it is argv[optind - 1]. */
  const char *arg = optind > 0 ? argv[optind - 1] : "";
  size_t len = strcspn(arg, "=");
  if (c == ':') {
    fprintf(stderr, "stormsweep %s: %.*s needs a value (see 'stormsweep %s --help')\n", cmd,
            (int)len, arg, cmd);
    return 2;
  }
  if (arg[0] == '-' && arg[1] == '-' && arg[len] == '=')
    for (const struct option *o = longopts; o->name; o++)
      if (o->has_arg == no_argument && strlen(o->name) == len - 2 &&
          !strncmp(o->name, arg + 2, len - 2)) {
        fprintf(stderr, "stormsweep %s: --%s takes no value, got '%s'\n", cmd, o->name, arg);
        return 2;
      }
  if (arg[0] == '-' && arg[1] != '-' && optopt)
    fprintf(stderr, "stormsweep %s: unknown option '-%c' (see 'stormsweep %s --help')\n", cmd,
            optopt, cmd);
  else
    fprintf(stderr, "stormsweep %s: unknown option '%.*s' (see 'stormsweep %s --help')\n", cmd,
            (int)len, arg, cmd);
  return 2;
}
