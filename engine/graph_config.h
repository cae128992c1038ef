/*
 * graph_config.h — settings of call graphs: "NAME.key" for a service and
 * "A->B.key" for the calls from A to B (graph_config.c), reached through
 * the one settings interface (settings.c: eng_config_set / get /
 * eng_settings_find).
 */
#ifndef STORMSWEEP_GRAPH_CONFIG_H
#define STORMSWEEP_GRAPH_CONFIG_H

#include <stddef.h>

#include "eng_config.h"

/* 1 when key addresses a service or an edge (it has a '.'). */
static inline int eng__graph_key(const char *key) {
  for (; *key; key++)
    if (*key == '.') return 1;
  return 0;
}
int eng__graph_set(eng_config *c, const char *key, const char *value, char *err, size_t errlen);
int eng__graph_get(const eng_config *c, const char *key, char *buf, size_t len);
/* The setting a graph key names (its type, bounds, group and help), or NULL. */
const eng_setting *eng__graph_setting(const char *key);
/* The storage key names in c, with its setting in *s; NULL when key names
 * no service or edge of c. */
const void *eng__graph_field(const eng_config *c, const char *key, const eng_setting **s);
/* The graph's checks across settings (eng_config_validate): no cycle, every
 * service called, fault windows inside the horizon. */
int eng__graph_validate(const eng_config *c, char *err, size_t errlen);

#endif
