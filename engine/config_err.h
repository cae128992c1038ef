/*
 * config_err.h — the one formatter of a settings error message, shared by
 * the settings table (config.c) and the whole-configuration checks
 * (config_validate.c).
 */
#ifndef STORMSWEEP_CONFIG_ERR_H
#define STORMSWEEP_CONFIG_ERR_H

#include <stdarg.h>
#include <stdio.h>

static inline __attribute__((format(printf, 3, 4))) void seterr(char *err, size_t errlen,
                                                                const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

#endif
