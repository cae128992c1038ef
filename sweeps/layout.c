/*
 * layout.c — the names of the result file's /ticks coordinates (format 2),
 * shared by the writer and the readers; layout.h says what each version holds.
 */
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "swp.h"

const char *const swp_run_coord_names[SWP_RUN_COORDS] = {"point", "replicate", "seed", "outcome"};

int swp_layout_is_fixed_coord(const char *name) {
  if (!strcmp(name, SWP_COORD_RUN) || !strcmp(name, SWP_COORD_TIME) ||
      !strcmp(name, SWP_COORD_SHARD) || !strcmp(name, SWP_TICKS_SHARD_QUEUES))
    return 1;
  for (int i = 0; i < SWP_RUN_COORDS; i++)
    if (!strcmp(name, swp_run_coord_names[i])) return 1;
  return 0;
}

const char *swp_layout_axis_coord(const char *key, char *buf, size_t len) {
  int taken = swp_layout_is_fixed_coord(key);
  for (int m = 0; m < ENG_M_COUNT && !taken; m++)
    taken = !strcmp(key, eng_metric_get_info((eng_metric)m)->name);
  snprintf(buf, len, "%s%s", taken ? "axis_" : "", key);
  return buf;
}
