/*
 * recommend_explain.h — why the recommendation is what it is
 * (recommend_explain.c): the cost rule, the safe set by axis, the axes that
 * do and do not change the answer at the chosen point, grid-edge warnings
 * and --prefer. Used by recommend.c's ana_reco_answer.
 */
#ifndef STORMSWEEP_RECOMMEND_EXPLAIN_H
#define STORMSWEEP_RECOMMEND_EXPLAIN_H

#include <stdio.h>

#include "ana.h"

/* Prints the explanation of rec into f. base is the point index the answer
 * names (-1: none; proven: refine proved it for the targets asked); the
 * preferences of o may choose another point of the safe set. Returns the
 * point index explained (the chosen one), or -1. */
long ana_reco_explain(FILE *f, const ana_reco *rec, const fmt_results *r, const ana_summary *s,
                      const ana_reco_opts *o, const ana_answer_opts *ao, long base,
                      int proven);

#endif
