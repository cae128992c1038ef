/*
 * scenario_file.h — loading the [scenario] section of an INI file into an
 * eng_config (for `sim`; sweep files carry more sections, which are skipped).
 */
#ifndef STORMSWEEP_SCENARIO_FILE_H
#define STORMSWEEP_SCENARIO_FILE_H

#include <stddef.h>

#include "eng_config.h"

/* Applies every key of [scenario] in file order. Returns 0, or -1 with
 * "FILE:LINE: KEY: message" in err. */
int eng_scenario_load(eng_config *cfg, const char *path, char *err, size_t errlen);

#endif
