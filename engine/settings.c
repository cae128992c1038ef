/*
 * settings.c — the one interface to settings by key (eng_config.h): a
 * plain key ("workers") is a row of the settings table (config.c), a
 * service's "NAME.key" or a call's "A->B.key" goes to the call graph's
 * settings (graph_config.c), which store them with the same rows' parsers.
 */
#include <math.h>

#include "eng_config.h"
#include "graph_config.h"
#include "setting_store.h"

const eng_setting *eng_settings_find(const char *key) {
  return eng__graph_key(key) ? eng__graph_setting(key) : eng__settings_find_plain(key);
}

eng_setting_role eng_setting_role_find(const char *key) {
  return eng_setting_role_of(eng_settings_find(key));
}

int eng_config_set(eng_config *c, const char *key, const char *value, char *err, size_t errlen) {
  if (eng__graph_key(key)) return eng__graph_set(c, key, value, err, errlen);
  return eng__config_set_plain(c, key, value, err, errlen);
}

int eng_config_get(const eng_config *c, const char *key, char *buf, size_t len) {
  if (eng__graph_key(key)) return eng__graph_get(c, key, buf, len);
  return eng__config_get_plain(c, key, buf, len);
}

double eng_config_get_number(const eng_config *c, const char *key) {
  if (!eng__graph_key(key)) return eng__config_number_plain(c, key);
  const eng_setting *s = NULL;
  const void *field = eng__graph_field(c, key, &s);
  return field ? eng__setting_number(s, field) : NAN;
}
