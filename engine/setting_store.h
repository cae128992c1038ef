/*
 * setting_store.h — config.c's settings below the public interface
 * (settings.c): one setting's value parsed into, printed from or read as a
 * number out of its storage, wherever that storage is (eng_config, or a
 * service's or call's record in a call graph, graph_config.c), and the
 * plain keys of the settings table.
 */
#ifndef STORMSWEEP_SETTING_STORE_H
#define STORMSWEEP_SETTING_STORE_H

#include <stddef.h>

#include "eng_config.h"

int eng__setting_parse(const eng_setting *s, const char *key, void *field, const char *value,
                       char *err, size_t errlen);
void eng__setting_format(const eng_setting *s, const void *field, char *buf, size_t len);
double eng__setting_number(const eng_setting *s, const void *field);

/* The table's own keys ("workers"), without the graph's NAME.key. */
const eng_setting *eng__settings_find_plain(const char *key);
int eng__config_set_plain(eng_config *c, const char *key, const char *value, char *err,
                          size_t errlen);
int eng__config_get_plain(const eng_config *c, const char *key, char *buf, size_t len);
double eng__config_number_plain(const eng_config *c, const char *key);

#endif
