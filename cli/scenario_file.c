/*
 * scenario_file.c — [scenario] sections for `stormsweep sim`, parsed with
 * libinih. The handler stops at the first bad line; inih then returns that
 * line number, which goes into the message with the file name and key.
 * inih does not tell the handler its line, so the reader counts lines for
 * the hook (sim --show-settings names FILE:LINE for every setting).
 */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>

#include "scenario_file.h"

typedef struct load_ctx {
  eng_config *cfg;
  FILE *f;
  int line; /* lines read so far: the line of the entry being handled */
  eng_scenario_hook hook;
  void *user;
  eng_scenario_skipped *skipped;
  char msg[400];
} load_ctx;

static char *read_line(char *buf, int size, void *stream) {
  load_ctx *ctx = stream;
  char *s = fgets(buf, size, ctx->f);
  if (s) ctx->line++;
  return s;
}

static int on_entry(void *user, const char *section, const char *key, const char *value) {
  load_ctx *ctx = user;
  if (!strcmp(section, "grid") || !strcmp(section, "sweep")) {
    int *first = !strcmp(section, "grid") ? &ctx->skipped->grid_line : &ctx->skipped->sweep_line;
    if (!*first) *first = ctx->line;
    return 1;
  }
  if (strcmp(section, "scenario")) {
    snprintf(ctx->msg, sizeof ctx->msg, "%s: unknown section [%s] (expected [scenario])", key,
             section);
    return 0;
  }
  if (eng_config_set(ctx->cfg, key, value, ctx->msg, sizeof ctx->msg)) return 0;
  if (ctx->hook) ctx->hook(ctx->user, key, ctx->line);
  return 1;
}

/* HDF5's superblock signature sits at byte 0, or at 512, 1024, 2048, ...
 * after a user block. */
static int is_hdf5(FILE *f) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char buf[8];
  int found = 0;
  for (long off = 0; off <= 65536 && !found; off = off ? 2 * off : 512) {
    if (fseek(f, off, SEEK_SET) || fread(buf, 1, sizeof buf, f) != sizeof buf) break;
    found = !memcmp(buf, sig, sizeof sig);
  }
  rewind(f);
  return found;
}

int eng_scenario_load_traced(eng_config *cfg, const char *path, eng_scenario_hook hook,
                             void *user, eng_scenario_skipped *skipped, char *err,
                             size_t errlen) {
  eng_scenario_skipped none;
  load_ctx ctx = {.cfg = cfg, .hook = hook, .user = user, .skipped = skipped ? skipped : &none};
  memset(ctx.skipped, 0, sizeof *ctx.skipped);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  if (is_hdf5(f)) {
    fclose(f);
    snprintf(err, errlen,
             "%s: an HDF5 result file, not a scenario (INI) file; read it with 'stormsweep "
             "analyze %s'",
             path, path);
    return -1;
  }
  ctx.f = f;
  int line = ini_parse_stream(read_line, &ctx, on_entry, &ctx);
  fclose(f);
  if (line == 0) return 0;
  if (ctx.msg[0])
    snprintf(err, errlen, "%s:%d: %s", path, line, ctx.msg);
  else
    snprintf(err, errlen, "%s:%d: not a valid INI line (expected key = value or [section])", path,
             line);
  return -1;
}

int eng_scenario_load(eng_config *cfg, const char *path, char *err, size_t errlen) {
  return eng_scenario_load_traced(cfg, path, NULL, NULL, NULL, err, errlen);
}
