/*
 * msg.c — how a command says what went wrong: one line on stderr, prefixed
 * with the command, its text escaped for the terminal (textsafe.h), because
 * messages quote sweep files, client configs and result files that someone
 * else may have written. Also the one description of the policy presets in
 * help texts, generated from the settings table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "eng_config.h"
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

void cli_help_presets(FILE *out, int indent) {
  const eng_setting *s = eng_settings_find("policy");
  for (int i = 0; s && s->names[i]; i++) {
    const char *const *sets = eng_preset_settings("policy", s->names[i]);
    int col = fprintf(out, "%*s%-8s ", indent, "", s->names[i]);
    for (int k = 0; sets && sets[k]; k++) {
      int w = (int)strlen(sets[k]) + 1, wrap = k && col + w > 86;
      if (wrap) col = fprintf(out, "\n%*s", indent + 9, "") - 1;
      col += fprintf(out, "%s%s", k && !wrap ? " " : "", sets[k]);
    }
    fputc('\n', out);
  }
}
