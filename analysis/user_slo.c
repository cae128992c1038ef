/*
 * user_slo.c — judging a result file's runs by SLO terms on what users see
 * (--slo "p99<=200ms,errors<=0.1%"): each run's user recovery time is
 * recomputed from its stored user-view /ticks rows (latency_*_us,
 * error_rate_ppm) by the engine's own rule, eng_user_recovery_ms, so a file
 * judged later gives the answer its runs would have given under those terms
 * (a file of record = every=MS too, when its windows are whole rows). Runs
 * that store no rows (refine's confirmation runs, unless refined by terms or
 * with --ticks) cannot be judged and leave the judged file (n_unjudged).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"

typedef struct run_ref {
  int64_t id;
  size_t index;
} run_ref;

static int cmp_run_ref(const void *a, const void *b) {
  const run_ref *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static int32_t ms_ticks(double ms, double tick_ms) { return (int32_t)floor(ms / tick_ms + 0.5); }

/* The runs of point p, in run-id order (the order fmt_bins_read fills). */
static size_t point_runs(const fmt_results *r, size_t p, run_ref *out) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->point_of_run[i] == p) out[n++] = (run_ref){r->runs[i].run, i};
  qsort(out, n, sizeof *out, cmp_run_ref);
  return n;
}

static int judge_point(fmt_results *r, size_t p, const eng_slo *slo, run_ref *refs,
                       int32_t **rows, size_t *rows_cap, unsigned char *keep, size_t *left_out,
                       char *err, size_t errlen) {
  size_t n = point_runs(r, p, refs);
  if (!n) return 0;
  fmt_bins b[ENG_M_USER_COUNT];
  memset(b, 0, sizeof b);
  int rc = -1;
  for (int k = 0; k < ENG_M_USER_COUNT; k++) {
    const char *name = eng_metric_get_info((eng_metric)(ENG_M_USER_FIRST + k))->name;
    if (fmt_bins_read(&b[k], r, name, p, SIZE_MAX, err, errlen)) goto done;
    if (b[k].n_runs != b[0].n_runs ||
        memcmp(b[k].runs, b[0].runs, b[0].n_runs * sizeof *b[0].runs)) {
      snprintf(err, errlen, "%s: point %lld: the user-view /ticks rows are stored for "
               "different runs", r->path, (long long)r->point_ids[p]);
      goto done;
    }
    if (b[k].ticks_per_bin != 1) {
      snprintf(err, errlen,
               "%s: point %lld: %zu runs x %zu ticks are too many to judge by --slo at once",
               r->path, (long long)r->point_ids[p], n, b[k].nbins * (size_t)b[k].ticks_per_bin);
      goto done;
    }
  }
  /* Stored rows (every=MS: one per row_ticks ticks, each holding its last
   * tick's value) widen back to ticks; exact when every latency window is
   * whole rows (checked per run below), since a row's ticks then share one
   * window and so one value. */
  /* Runs with no rows (refine's confirmation runs by default store their
   * summary row alone) cannot be judged: they leave the judged file. */
  size_t in = 0;
  for (size_t i = 0; i < n; i++) {
    if (in < b[0].n_runs && b[0].runs[in] == refs[i].id) {
      refs[in++] = refs[i];
    } else {
      keep[refs[i].index] = 0;
      (*left_out)++;
    }
  }
  if (in != b[0].n_runs) {
    snprintf(err, errlen, "%s: point %lld: its user-view /ticks rows name runs it does not have",
             r->path, (long long)r->point_ids[p]);
    goto done;
  }
  n = in;
  const size_t R = b[0].nbins, step = (size_t)r->row_ticks, T = R * step;
  if (T > *rows_cap) {
    for (int k = 0; k < ENG_M_USER_COUNT; k++) {
      int32_t *v = realloc(rows[k], T * sizeof *v);
      if (!v) {
        snprintf(err, errlen, "%s: out of memory judging --slo", r->path);
        goto done;
      }
      rows[k] = v;
    }
    *rows_cap = T;
  }
  for (size_t i = 0; i < n; i++) {
    fmt_run *run = &r->runs[refs[i].index];
    double w = run->latency_window_ms, hold = run->user_hold_ms, clear = run->clear_ms;
    if (isnan(w) || isnan(hold) || isnan(clear) || !(w > 0)) {
      snprintf(err, errlen, "%s: run %lld has no user-view window, hold or clearance columns",
               r->path, (long long)run->run);
      goto done;
    }
    if (step > 1 && ms_ticks(w, r->tick_ms) % (int32_t)step) {
      snprintf(err, errlen,
               "%s: run %lld: its latency window (%g ms) is not a whole number of the stored "
               "rows (record = %s), so its per-tick user view cannot be read back exactly: "
               "judge --slo on a file with record = full, or every= a divisor of the window",
               r->path, (long long)run->run, w, r->record);
      goto done;
    }
    int32_t ticks = run->ticks > 0 && (size_t)run->ticks < T ? (int32_t)run->ticks : (int32_t)T;
    for (int k = 0; k < ENG_M_USER_COUNT; k++)
      for (int32_t t = 0; t < ticks; t++)
        rows[k][t] = (int32_t)b[k].cell[i * R + (size_t)t / step];
    const int32_t *const *cr = (const int32_t *const *)rows;
    run->user_recovery_ms =
        eng_user_recovery_ms(slo, cr, ticks, ms_ticks(w, r->tick_ms), ms_ticks(clear, r->tick_ms),
                             ms_ticks(hold, r->tick_ms), r->tick_ms);
  }
  rc = 0;
done:
  for (int k = 0; k < ENG_M_USER_COUNT; k++) fmt_bins_free(&b[k]);
  return rc;
}

int ana_judge_user_slo(fmt_results *r, const eng_slo *slo, char *err, size_t errlen) {
  memset(&r->user_slo, 0, sizeof r->user_slo);
  if (!slo->n) return 0;
  char why[256];
  if (eng_slo_check(slo, why, sizeof why)) {
    snprintf(err, errlen, "--slo: %s", why);
    return -1;
  }
  if (r->row_ticks < 1) {
    /* The rule reads the user-view windows' rows (sweeps/record.c). */
    snprintf(err, errlen, "%s: stores record = %s, no per-tick rows: --slo judges runs by their "
             "user-view rows; run the sweep with record = full or every=MS to judge it by --slo",
             r->path, r->record);
    return -1;
  }
  int has = fmt_metric_exists(r, eng_metric_get_info(ENG_M_USER_FIRST)->name);
  if (has <= 0) {
    snprintf(err, errlen,
             "%s: no user-view series (latency_p50_us ... error_rate_ppm): the file was written "
             "before stormsweep 0.3.0; run its sweep again to judge it by --slo",
             r->path);
    return -1;
  }
  if (!(r->tick_ms > 0)) {
    snprintf(err, errlen, "%s: no tick_ms attribute: cannot judge --slo", r->path);
    return -1;
  }
  run_ref *refs = malloc((r->n_runs ? r->n_runs : 1) * sizeof *refs);
  int32_t *rows[ENG_M_USER_COUNT] = {0};
  size_t cap = 0;
  unsigned char *keep = malloc(r->n_runs ? r->n_runs : 1);
  size_t left_out = 0;
  int rc = refs && keep ? 0 : -1;
  if (rc) snprintf(err, errlen, "%s: out of memory judging --slo", r->path);
  else memset(keep, 1, r->n_runs);
  for (size_t p = 0; p < r->n_points && !rc; p++)
    rc = judge_point(r, p, slo, refs, rows, &cap, keep, &left_out, err, errlen);
  if (!rc && left_out) {
    size_t j = 0;
    for (size_t i = 0; i < r->n_runs; i++)
      if (keep[i]) {
        r->runs[j] = r->runs[i];
        r->point_of_run[j++] = r->point_of_run[i];
      }
    r->n_runs = j;
  }
  for (int k = 0; k < ENG_M_USER_COUNT; k++) free(rows[k]);
  free(refs);
  free(keep);
  if (!rc) {
    r->user_slo = *slo;
    r->n_unjudged = left_out;
  }
  return rc;
}
