/*
 * scenario_file.h — loading the [scenario] section of an INI file into an
 * eng_config (for `sim`; sweep files carry more sections, which are skipped).
 */
#ifndef STORMSWEEP_SCENARIO_FILE_H
#define STORMSWEEP_SCENARIO_FILE_H

#include <stddef.h>

#include "eng_config.h"

/* Called after each [scenario] key is applied, with its line in the file. */
typedef void (*eng_scenario_hook)(void *user, const char *key, int line);

/* What the load skipped: the first line of a [grid] and of a [sweep] entry
 * (0: none), so that sim can say it ignores them. */
typedef struct eng_scenario_skipped {
  int grid_line, sweep_line;
} eng_scenario_skipped;

/* Applies every key of [scenario] in file order. Returns 0, or -1 with
 * "FILE:LINE: KEY: message" in err. An HDF5 file (a result file given by
 * mistake) is refused by its signature before any parsing. */
int eng_scenario_load(eng_config *cfg, const char *path, char *err, size_t errlen);

/* The same, calling hook (may be NULL) per applied key and filling skipped
 * (may be NULL). */
int eng_scenario_load_traced(eng_config *cfg, const char *path, eng_scenario_hook hook,
                             void *user, eng_scenario_skipped *skipped, char *err,
                             size_t errlen);

#endif
