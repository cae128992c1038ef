/*
 * record_check.c — whether a run record is the run it claims to be, before
 * it is written into a result file from anywhere the writer did not compute
 * it (a journal being restored or rebuilt from) or handed on from a file
 * (merge, verify --resume): the one place these rules live.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "writer.h"

fmt_record_rules fmt__out_rules(const fmt_out *o) {
  fmt_record_rules k = {o->master_seed, o->sw ? o->sw->crn : 0, o->replicates, o->base_runs,
                        o->n_runs, o->sw ? o->sw->ticks : o->ticks_n, {0}, o->stored, o->ticks_n};
  for (int w = 0; w < FMT_WIDE_COUNT; w++) k.wide[w] = o->wide[w] >= 0 ? o->wide_n[w] : 0;
  return k;
}

int fmt__record_check(const fmt_record_rules *k, const fmt_run_record *rec, int64_t point,
                      int32_t replicate, int decode, char *why, size_t whylen) {
  int64_t r = rec->run;
  if (r < 0 || r >= k->rows) {
    snprintf(why, whylen, "run %lld is not a row of the file (0 to %lld)", (long long)r,
             (long long)k->rows - 1);
    return -1;
  }
  if (r < k->base_runs) {
    point = r / k->replicates;
    replicate = (int32_t)(r % k->replicates);
  }
  uint64_t seed = swp_run_seed(k->master_seed, k->crn, point, replicate);
  const char *bad = NULL;
  if (rec->point != point || rec->replicate != replicate) bad = "point and replicate";
  else if (rec->summary.seed != seed) bad = "seed";
  else if (rec->summary.outcome < ENG_OUTCOME_RECOVERED ||
           rec->summary.outcome >= ENG_OUTCOME_COUNT)
    bad = "outcome";
  else if (rec->ticks < 0 || rec->ticks > k->ticks) bad = "tick count";
  else if (rec->summary.outcome == ENG_OUTCOME_RECOVERED &&
           !(rec->summary.recovery_ms >= 0 && isfinite(rec->summary.recovery_ms)))
    bad = "recovery time";
  if (bad) {
    snprintf(why, whylen,
             "run %lld's record has the wrong %s (point %lld, replicate %d, seed %llu, outcome "
             "%d, ticks %d; row %lld is point %lld, replicate %d, seed %llu)",
             (long long)r, bad, (long long)rec->point, rec->replicate,
             (unsigned long long)rec->summary.seed, rec->summary.outcome, rec->ticks,
             (long long)r, (long long)point, replicate, (unsigned long long)seed);
    return -1;
  }
  if (!decode) return 0;
  /* refine's confirmation runs may store no /ticks rows at all (summary
   * rows only): all of a run's chunks or none, and none only past the
   * sweep's own rows */
  if (r >= k->base_runs && !fmt__record_has_rows(rec)) return 0;
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (!(k->stored >> m & 1u) ? rec->chunk_size[m] != 0 : !rec->chunk[m] || fmt_chunk_check(rec->chunk[m], rec->chunk_size[m], (size_t)k->stored_rows)) {
      snprintf(why, whylen, "run %lld's /ticks/%s chunk does not decode to %d ticks",
               (long long)r, eng_metric_get_info((eng_metric)m)->name, k->stored_rows);
      return -1;
    }
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if ((rec->wide_chunk_size[w] != 0) != (k->wide[w] != 0) ||
        (k->wide[w] && fmt_chunk_check(rec->wide_chunk[w], rec->wide_chunk_size[w],
                                       (size_t)fmt_wide_rows((fmt_wide)w, k->stored_rows) *
                                           (size_t)k->wide[w]))) {
      snprintf(why, whylen, "run %lld's /ticks/%s chunk does not decode to %d rows x %d %ss",
               (long long)r, fmt_wide_name((fmt_wide)w), fmt_wide_rows((fmt_wide)w, k->stored_rows),
               k->wide[w], fmt_layout_wide_scale((fmt_wide)w));
      return -1;
    }
  return 0;
}

int fmt__row_coords(fmt_out *o, int64_t r, int64_t *point, int32_t *replicate) {
  if (r < o->base_runs) {
    *point = r / o->replicates;
    *replicate = (int32_t)(r % o->replicates);
    return 0;
  }
  run_row row;
  if (fmt__out_row_read(o, r, &row)) return -1;
  *point = row.point;
  *replicate = row.replicate;
  return 0;
}
