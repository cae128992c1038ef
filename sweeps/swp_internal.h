/*
 * swp_internal.h — helpers shared by the files of the sweeps library; not
 * part of its public API (swp.h).
 */
#ifndef STORMSWEEP_SWP_INTERNAL_H
#define STORMSWEEP_SWP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "swp.h"

/* Expands an axis list ("10, lin(1, 5, 3), inf") for setting key into
 * ax->values / ax->count and stores the normalised spec. ax->key must be set.
 * other_points is the product of the other axes' counts: an axis that would
 * take the grid past SWP_MAX_POINTS is refused before its values are made
 * (returns -2 for that, -1 for any other problem).
 * Messages carry no file or line; the caller prefixes them. */
int swp_axis_expand(swp_axis *ax, const char *spec, int64_t other_points, char *err,
                    size_t errlen);
/* How many values swp_axis_expand would make of spec, counted without
 * making them (a range that does not parse counts as one value). */
int64_t swp_axis_count(const char *key, const char *spec);
void swp_axis_clear(swp_axis *ax);

/* ---- sweeptext.c: the grammar's line rules, shared with the parser ---- */

/* Whether a continuation line's text reads as "key = value" (it would then
 * start a new entry, so a value must not wrap onto it). */
int swp__looks_like_assignment(const char *v);
/* Whether key = value fits the grammar's lines once wrapped (list: its items
 * may wrap at the commas between them). */
int swp__wrapped_fits(const char *key, const char *value, int list);

/* ---- digest.c ---- */

/* Hashes every telemetry file the sweep names (in [scenario] or as an
 * axis's values) into sw->telemetry_digests, replacing what the text said.
 * 0, or -1 with a message (a file that cannot be read). */
int swp__telemetry_digests(swp_sweep *sw, char *err, size_t errlen);

#endif
