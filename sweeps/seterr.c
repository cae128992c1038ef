/*
 * seterr.c — swp_seterr, the message convention of every library of
 * stormsweep (swp.h): its own file, since every other file calls it.
 */
#include <stdarg.h>
#include <stdio.h>

#include "swp.h"

void swp_seterr(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}
