/*
 * latency_export.c — a run's latency histogram as buckets in ms, for
 * `stormsweep export` (eng.h, eng_run_latency_export): the engine's
 * log-linear buckets (latency_hist.h) of the phases sim.c keeps.
 */
#include <stdlib.h>

#include "eng.h"
#include "latency_hist.h"

/* h's buckets into out in ms (eng.h says how they are drawn). */
static void export_hist(const eng_lat_hist *h, double tick_ms, eng_lat_export *out) {
  out->n = 0;
  out->sum_ms = 0;
  out->total = (double)h->n;
  int32_t prev = -2; /* the last full bucket written */
  for (int32_t b = h->lo; b <= h->hi && out->n + 2 <= ENG_LAT_EXPORT_MAX; b++) {
    if (!h->count[b]) continue;
    double lo = (double)eng_lh_bucket_low((uint32_t)b);
    double hi = lo + (double)eng_lh_bucket_width((uint32_t)b) - 1;
    /* the empty buckets before this one, as one (none before tick 0) */
    if (b != prev + 1 && lo > 0) {
      out->le_ms[out->n] = (lo - 0.5) * tick_ms;
      out->count[out->n++] = 0;
    }
    out->le_ms[out->n] = (hi + 0.5) * tick_ms;
    out->count[out->n++] = h->count[b];
    out->sum_ms += h->count[b] * 0.5 * (lo + hi) * tick_ms;
    prev = b;
  }
}

int eng_run_latency_export(const eng_run *run, int phase, eng_lat_export *out) {
  const eng_config *c = eng_run_config(run);
  if (!c || phase < 0 || phase > ENG_PHASE_COUNT) return -1;
  if (phase < ENG_PHASE_COUNT) {
    const eng_lat_hist *h = eng_run_phase_hist(run, phase);
    if (!h) return -1;
    export_hist(h, c->tick_ms, out);
    return 0;
  }
  /* every phase: their sum, once per export (13 KB) */
  eng_lat_hist *all = malloc(sizeof *all);
  if (!all) return -1;
  eng_lh_init(all);
  for (int k = 0; k < ENG_PHASE_COUNT; k++) {
    const eng_lat_hist *h = eng_run_phase_hist(run, k);
    if (h) eng_lh_merge(all, h);
  }
  export_hist(all, c->tick_ms, out);
  free(all);
  return 0;
}
