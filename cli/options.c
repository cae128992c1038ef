/*
 * options.c — the one option grammar of every command (cli.h): glibc's
 * getopt_long, so "--opt value" and "--opt=value" both work and options and
 * operands mix, with three rules of ours on top: a long option is spelled in
 * full (getopt's prefix matching would take "--min-pas" for --min-pass, and
 * a later option could silently change what an old abbreviation means), an
 * unknown option gets a "did you mean", and the values several commands take
 * (threads, seeds, probabilities, counts) have one parser each, so they mean
 * the same everywhere. "stormsweep COMMAND --list-options" prints the
 * command's option table.
 */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eng_config.h"
#include "swp.h"

void cli_opts_begin(int argc, char **argv) {
  (void)argc;
  (void)argv;
  optind = 1;
  opterr = 0;
}

char **cli_argv_copy(int argc, char **argv) {
  char **v = malloc(((size_t)argc + 1) * sizeof *v);
  if (!v) return NULL;
  memcpy(v, argv, (size_t)argc * sizeof *v);
  v[argc] = NULL;
  return v;
}

/* The long option argv names, for "did you mean". */
static const char *nearest_option(const char *name, size_t len, const struct option *longopts) {
  const char *names[256];
  size_t n = 0;
  for (const struct option *o = longopts; o->name && n < 255; o++) names[n++] = o->name;
  names[n] = NULL;
  char word[128];
  snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word - 1 ? len : sizeof word - 1), name);
  return eng_suggest(word, names, n);
}

/* "--capacity-factor 2" to a command that takes --set: settings are not
 * options, so say how to give it ("--set capacity_factor=2"), or the
 * nearest setting when the name is a misspelt one and no option is near.
 * arg is the unknown option (len: its name's end); its value is after '='
 * or, when it does not look like an option, the next argument. 1 when it
 * reported. */
static int setting_hint(const char *cmd, const char *arg, size_t len, int argc, char **argv,
                        const struct option *longopts) {
  int has_set = 0;
  for (const struct option *o = longopts; o->name; o++)
    if (!strcmp(o->name, "set")) has_set = 1;
  if (!has_set || len < 3 || len - 2 >= 64) return 0;
  char key[64];
  for (size_t i = 0; i < len - 2; i++) key[i] = arg[2 + i] == '-' ? '_' : arg[2 + i];
  key[len - 2] = 0;
  const char *name = eng_settings_find(key) ? key : NULL;
  if (!name && !nearest_option(arg + 2, len - 2, longopts)) name = eng_settings_suggest(key);
  if (!name) return 0;
  const char *value = arg[len] == '=' ? arg + len + 1
                      : optind < argc && argv[optind][0] != '-' ? argv[optind]
                                                                : "VALUE";
  if (name == key)
    cli_error(cmd, "unknown option '%.*s': %s is a setting (did you mean --set %s=%s?)", (int)len,
              arg, name, name, value);
  else
    cli_error(cmd, "unknown option '%.*s' (did you mean the setting --set %s=%s?)", (int)len, arg,
              name, value);
  return 1;
}

static int report(const char *cmd, int c, int argc, char **argv,
                  const struct option *longopts) {
  /* getopt_long has consumed the offending argument (and, for a missing
   * value, nothing more), so it is argv[optind - 1]. */
  const char *arg = optind > 0 ? argv[optind - 1] : "";
  size_t len = strcspn(arg, "=");
  if (c == ':') {
    if (arg[0] == '-' && arg[1] != '-' && optopt)
      cli_error(cmd, "-%c needs a value (see 'stormsweep %s --help')", optopt, cmd);
    else
      cli_error(cmd, "%.*s needs a value (see 'stormsweep %s --help')", (int)len, arg, cmd);
    return '?';
  }
  if (arg[0] == '-' && arg[1] == '-' && arg[len] == '=')
    for (const struct option *o = longopts; o->name; o++)
      if (o->has_arg == no_argument && strlen(o->name) == len - 2 &&
          !strncmp(o->name, arg + 2, len - 2)) {
        cli_error(cmd, "--%s takes no value, got '%s'", o->name, arg);
        return '?';
      }
  if (arg[0] == '-' && arg[1] != '-' && optopt) {
    cli_error(cmd, "unknown option '-%c' (see 'stormsweep %s --help')", optopt, cmd);
    return '?';
  }
  if (arg[0] == '-' && arg[1] == '-' && setting_hint(cmd, arg, len, argc, argv, longopts))
    return '?';
  const char *sug = arg[0] == '-' && arg[1] == '-' ? nearest_option(arg + 2, len - 2, longopts)
                                                    : NULL;
  if (sug)
    cli_error(cmd, "unknown option '%.*s' (did you mean --%s?)", (int)len, arg, sug);
  else
    cli_error(cmd, "unknown option '%.*s' (see 'stormsweep %s --help')", (int)len, arg, cmd);
  return '?';
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts) {
  if (optind == 1 && argc == 2 && !strcmp(argv[1], "--list-options")) {
    /* The command's option table itself, one per line (for shell completion
     * and for the test that its --help and the docs name what it takes). */
    for (const struct option *o = longopts; o->name; o++)
      printf("--%s%s\n", o->name, o->has_arg == required_argument ? "=" : "");
    exit(CLI_EXIT_OK);
  }
  int index = -1;
  int c = getopt_long(argc, argv, shortopts, longopts, &index);
  if (c == ':' || c == '?') return report(cmd, c, argc, argv, longopts);
  if (c >= 0 && index >= 0) {
    /* The option is argv[optind - 1], or argv[optind - 2] when its value
     * was the next argument (optarg is then that argument itself). */
    const char *arg = longopts[index].has_arg != no_argument && optind >= 2 &&
                              optarg == argv[optind - 1]
                          ? argv[optind - 2]
                          : argv[optind - 1];
    if (strncmp(arg, "--", 2)) arg = NULL;
    size_t len = arg ? strcspn(arg + 2, "=") : 0;
    if (arg && (len != strlen(longopts[index].name) ||
                strncmp(arg + 2, longopts[index].name, len))) {
      cli_error(cmd, "unknown option '--%.*s' (did you mean --%s? options are spelled in full)",
                (int)len, arg + 2, longopts[index].name);
      return '?';
    }
  }
  return c;
}

int cli_parse_threads(const char *cmd, const char *opt, const char *text, int *out) {
  long long v;
  if (cli_parse_count(cmd, opt, text, 1, CLI_MAX_THREADS, &v)) return -1;
  *out = (int)v;
  return 0;
}

int cli_parse_seed(const char *cmd, const char *opt, const char *text, uint64_t *out) {
  if (!text || swp_parse_seed(text, out)) {
    cli_error(cmd, "%s: expected a whole number from 0 to 18446744073709551615 (or 0x "
              "hexadecimal), got '%s'", opt, text ? text : "");
    return -1;
  }
  return 0;
}

int cli_parse_count(const char *cmd, const char *opt, const char *text, long long lo,
                    long long hi, long long *out) {
  char *end = NULL;
  errno = 0;
  /* Digits only: strtoll alone would take blanks, a '+' and 0x. */
  int digits = text && text[0] && strspn(text + (text[0] == '-'), "0123456789") ==
                                      strlen(text + (text[0] == '-'));
  long long v = digits ? strtoll(text, &end, 10) : 0;
  if (!digits || !end || *end || errno || v < lo || v > hi) {
    cli_error(cmd, "%s: expected a whole number from %lld to %lld, got '%s'", opt, lo, hi,
              text ? text : "");
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_number(const char *cmd, const char *opt, const char *text, double lo, double hi,
                     double *out) {
  char *end = NULL;
  errno = 0;
  double v = text ? strtod(text, &end) : NAN;
  if (!text || end == text || *end || errno || !(v >= lo && v <= hi)) {
    cli_error(cmd, "%s: expected a number from %g to %g, got '%s'", opt, lo, hi,
              text ? text : "");
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_prob(const char *cmd, const char *opt, const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double v = text ? strtod(text, &end) : NAN;
  if (!text || end == text || *end || errno || !(v >= 0 && v <= 1)) {
    cli_error(cmd, "%s: expected a probability from 0 to 1, got '%s'", opt, text ? text : "");
    return -1;
  }
  *out = v;
  return 0;
}

char *cli_command_line(int argc, char **argv) {
  size_t len = 16;
  for (int i = 0; i < argc; i++)
    if (argv[i]) len += 4 * strlen(argv[i]) + 3;
  char *s = malloc(len);
  if (!s) return NULL;
  strcpy(s, "stormsweep");
  char *p = s + strlen(s);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!a) continue;
    int plain = *a != 0;
    for (const char *c = a; *c; c++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+%@", *c))
        plain = 0;
    *p++ = ' ';
    if (plain) {
      strcpy(p, a);
      p += strlen(a);
      continue;
    }
    *p++ = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'') {
        memcpy(p, "'\\''", 4);
        p += 4;
      } else {
        *p++ = *c;
      }
    }
    *p++ = '\'';
  }
  *p = 0;
  return s;
}
