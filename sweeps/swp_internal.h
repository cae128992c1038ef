/*
 * swp_internal.h — helpers shared by the files of the sweeps library; not
 * part of its public API (swp.h).
 */
#ifndef STORMSWEEP_SWP_INTERNAL_H
#define STORMSWEEP_SWP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "swp.h"

/* snprintf into err (no-op when err is NULL). */
void swp_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Expands an axis list ("10, lin(1, 5, 3), inf") for setting key into
 * ax->values / ax->count and stores the normalised spec. ax->key must be set.
 * Messages carry no file or line; the caller prefixes them. */
int swp_axis_expand(swp_axis *ax, const char *spec, char *err, size_t errlen);
void swp_axis_clear(swp_axis *ax);

#endif
