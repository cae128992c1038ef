/*
 * scenario_file.c — [scenario] sections for `stormsweep sim`, parsed with
 * libinih. The handler stops at the first bad line; inih then returns that
 * line number, which goes into the message with the file name and key.
 */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>

#include "scenario_file.h"

typedef struct load_ctx {
  eng_config *cfg;
  char msg[400];
} load_ctx;

static int on_entry(void *user, const char *section, const char *key, const char *value) {
  load_ctx *ctx = user;
  if (!strcmp(section, "grid") || !strcmp(section, "sweep")) return 1;
  if (strcmp(section, "scenario")) {
    snprintf(ctx->msg, sizeof ctx->msg, "%s: unknown section [%s] (expected [scenario])", key,
             section);
    return 0;
  }
  return eng_config_set(ctx->cfg, key, value, ctx->msg, sizeof ctx->msg) == 0;
}

int eng_scenario_load(eng_config *cfg, const char *path, char *err, size_t errlen) {
  load_ctx ctx = {.cfg = cfg};
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  int line = ini_parse_file(f, on_entry, &ctx);
  fclose(f);
  if (line == 0) return 0;
  if (ctx.msg[0])
    snprintf(err, errlen, "%s:%d: %s", path, line, ctx.msg);
  else
    snprintf(err, errlen, "%s:%d: not a valid INI line (expected key = value or [section])", path,
             line);
  return -1;
}
