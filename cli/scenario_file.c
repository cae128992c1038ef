/*
 * scenario_file.c — [scenario] sections for `stormsweep sim`. The file is
 * read by the one sweep-file reader (sweeps/sweepfile.c), so a scenario
 * means in sim what it means in run, list and verify: the same grammar
 * (continuation lines, inline comments, the line limit), the same "did you
 * mean" for a misspelt key or section, and a key given twice in a section
 * is an error naming both lines. Its [scenario] settings are then applied
 * in file order, each reported to the hook with its line (sim
 * --show-settings names FILE:LINE for every setting); [grid] and [sweep]
 * are read (and checked) but not applied.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "scenario_file.h"
#include "swp.h"

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
  return found;
}

int eng_scenario_load_traced(eng_config *cfg, const char *path, eng_scenario_hook hook,
                             void *user, eng_scenario_skipped *skipped, char *err,
                             size_t errlen) {
  eng_scenario_skipped none;
  if (!skipped) skipped = &none;
  memset(skipped, 0, sizeof *skipped);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  int hdf5 = is_hdf5(f);
  fclose(f);
  if (hdf5) {
    snprintf(err, errlen,
             "%s: an HDF5 result file, not a scenario (INI) file; read it with 'stormsweep "
             "analyze %s'",
             path, path);
    return -1;
  }
  swp_sweep sw;
  swp_sweep_init(&sw);
  int rc = swp_sweep_parse_file(&sw, path, err, errlen);
  for (size_t i = 0; !rc && i < sw.n_settings; i++) {
    const swp_setting *s = &sw.settings[i];
    char msg[400];
    if (eng_config_set(cfg, s->key, s->value, msg, sizeof msg)) {
      snprintf(err, errlen, "%s:%d: %s", path, s->line, msg);
      rc = -1;
    } else if (hook) {
      hook(user, s->key, s->line);
    }
  }
  if (!rc) {
    for (size_t a = 0; a < sw.n_axes; a++)
      if (sw.axes[a].line && (!skipped->grid_line || sw.axes[a].line < skipped->grid_line))
        skipped->grid_line = sw.axes[a].line;
    skipped->sweep_line = sw.sweep_line;
  }
  swp_sweep_free(&sw);
  return rc ? -1 : 0;
}

int eng_scenario_load(eng_config *cfg, const char *path, char *err, size_t errlen) {
  return eng_scenario_load_traced(cfg, path, NULL, NULL, NULL, err, errlen);
}
