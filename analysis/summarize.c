/*
 * summarize.c — the per-point table and the parameter effects of `analyze`,
 * computed from the rows of /runs already in memory.
 *
 * Per point: outcome counts, P(bad) (decision.h: metastable, collapsed or
 * undetermined) and P(pass SLO) with 95% Wilson
 * and exact intervals, Kaplan–Meier quantiles of the recovery time (runs that
 * did not recover are censored at the point's horizon minus its fault
 * clearance: all we know is that they took longer than that), and t
 * intervals of the mean retry amplification, goodput and peak queue.
 *
 * Effects: for each axis, runs are pooled by the value of that axis over all
 * other axes (a main effect, marginalised by pooling runs — on a full grid
 * with equal replicates that is the unweighted mean over the other axes).
 * The effect size of an axis is max - min of the pooled probability across
 * its values, for P(bad) and for P(pass); axes are ranked by the
 * larger of the two, because an axis may leave metastability untouched and
 * still decide whether the SLO is met (or the reverse).
 *
 * Everything is pure computation on an fmt_results, so tests can drive it
 * with synthetic files, and the cost is O(runs log runs).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "eng_config.h"
#include "textsafe.h"

/* ------------------------------------------------------------------------ */
/* Formatting helpers                                                        */
/* ------------------------------------------------------------------------ */

void ana_value_format(const char *axis, double v, char *buf, size_t len) {
  const eng_setting *st = axis ? eng_settings_find(axis) : NULL;
  if (st && (st->type == ENG_SET_ENUM || st->type == ENG_SET_PRESET) && st->names && v >= 0 &&
      v == floor(v)) {
    size_t count = 0;
    while (st->names[count]) count++;
    if ((size_t)v < count) {
      snprintf(buf, len, "%s", st->names[(size_t)v]);
      return;
    }
  }
  if (isnan(v))
    snprintf(buf, len, "?");
  else if (isinf(v))
    snprintf(buf, len, v > 0 ? "inf" : "-inf");
  else
    snprintf(buf, len, "%g", v);
}

void ana_value_label(const fmt_results *r, size_t axis, size_t point_index, char *buf,
                     size_t len) {
  if (r->labels && r->labels[axis] && r->labels[axis][point_index]) {
    ana_text_copy(buf, len, r->labels[axis][point_index]);
    return;
  }
  ana_value_format(r->axes[axis], r->values[point_index * r->n_axes + axis], buf, len);
}

/* The description goes into the recommendation text, which is printed,
 * stored and shown as it is: names and labels are escaped here, so no file
 * can put a line break or a terminal control into it. */
void ana_point_describe(const fmt_results *r, size_t point_index, char *buf, size_t len) {
  ana_point_describe_role(r, point_index, -1, buf, len);
}

void ana_point_describe_role(const fmt_results *r, size_t point_index, int scenario, char *buf,
                             size_t len) {
  size_t used = 0;
  int any = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < r->n_axes && used + 1 < len; a++) {
    if (scenario >= 0 && fmt_axis_is_scenario(r, a) != scenario) continue;
    char v[64], name[256], value[256];
    ana_value_label(r, a, point_index, v, sizeof v);
    ana_term_text(name, sizeof name, r->axes[a]);
    ana_term_text(value, sizeof value, v);
    char piece[520];
    snprintf(piece, sizeof piece, "%s%s=%s", any ? " " : "", name, value);
    any = 1;
    size_t w = ana_utf8_cut(piece, len - 1 - used);
    memcpy(buf + used, piece, w);
    buf[used + w] = '\0';
    if (w < strlen(piece)) break;
    used += w;
  }
  if (!any) snprintf(buf, len, scenario == 1 ? "(no scenario axes)" : scenario == 0 ? "(no tunable axes)" : "(no grid axes)");
}

void ana_ms_format(double ms, double censor_ms, char *buf, size_t len) {
  if (isnan(ms))
    snprintf(buf, len, "-");
  else if (isinf(ms)) {
    if (isfinite(censor_ms))
      snprintf(buf, len, ">%.0f", censor_ms);
    else
      snprintf(buf, len, ">horizon");
  } else
    snprintf(buf, len, "%.0f", ms);
}

/* ------------------------------------------------------------------------ */
/* Grouping runs by point                                                    */
/* ------------------------------------------------------------------------ */

static int run_is_valid(const fmt_run *run) {
  return run->outcome >= ENG_OUTCOME_RECOVERED && run->outcome < ENG_OUTCOME_COUNT;
}

static int run_passes(const fmt_results *r, const fmt_run *run, double slo_ms) {
  return ana_run_passes(&r->user_slo, run->outcome, run->recovery_ms, run->user_recovery_ms,
                        slo_ms);
}

/* CSR grouping of the valid runs by point index: runs of point p are
 * idx[start[p] .. start[p + 1]). */
static int group_runs(const fmt_results *r, size_t **start_out, size_t **idx_out) {
  size_t *start = calloc(r->n_points + 1, sizeof *start);
  size_t *idx = malloc((r->n_runs ? r->n_runs : 1) * sizeof *idx);
  if (!start || !idx) {
    free(start);
    free(idx);
    return -1;
  }
  for (size_t i = 0; i < r->n_runs; i++)
    if (run_is_valid(&r->runs[i])) start[r->point_of_run[i] + 1]++;
  for (size_t p = 0; p < r->n_points; p++) start[p + 1] += start[p];
  size_t *fill = malloc((r->n_points + 1) * sizeof *fill);
  if (!fill) {
    free(start);
    free(idx);
    return -1;
  }
  memcpy(fill, start, (r->n_points + 1) * sizeof *fill);
  for (size_t i = 0; i < r->n_runs; i++)
    if (run_is_valid(&r->runs[i])) idx[fill[r->point_of_run[i]]++] = i;
  free(fill);
  *start_out = start;
  *idx_out = idx;
  return 0;
}

size_t ana_point_samples(const fmt_results *r, size_t point_index, double censor_ms, double *time,
                       unsigned char *event) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_runs; i++) {
    const fmt_run *run = &r->runs[i];
    if (r->point_of_run[i] != point_index || !run_is_valid(run)) continue;
    int recovered = run->outcome == ENG_OUTCOME_RECOVERED && !isnan(run->recovery_ms);
    time[n] = recovered ? run->recovery_ms : censor_ms;
    event[n] = (unsigned char)recovered;
    n++;
  }
  return n;
}

/* ------------------------------------------------------------------------ */
/* Levels of an axis                                                         */
/* ------------------------------------------------------------------------ */

static int cmp_level_value(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b); /* NaN last, NaNs equal */
  return (a > b) - (a < b);
}

/* Value order, then the first point with the value. */
static int cmp_levels_first(const void *x, const void *y) {
  const ana_level *a = x, *b = y;
  int c = cmp_level_value(a->value, b->value);
  return c ? c : (a->example > b->example) - (a->example < b->example);
}

/* Distinct values of axis a over the points, sorted, each with the first
 * point that has it; returns the count. levels holds n_points entries.
 * Sort, then dedupe: O(P log P), so a file of a million points cannot make
 * this quadratic. */
static size_t axis_levels(const fmt_results *r, size_t a, ana_level *levels) {
  if (r->n_points == 0) return 0;
  for (size_t p = 0; p < r->n_points; p++) {
    memset(&levels[p], 0, sizeof levels[p]);
    levels[p].value = r->values[p * r->n_axes + a];
    levels[p].example = p;
  }
  qsort(levels, r->n_points, sizeof *levels, cmp_levels_first);
  size_t n = 1;
  for (size_t p = 1; p < r->n_points; p++)
    if (cmp_level_value(levels[p].value, levels[n - 1].value) != 0) levels[n++] = levels[p];
  return n;
}

static size_t level_find(const ana_level *levels, size_t n, double v) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = cmp_level_value(levels[mid].value, v);
    if (c == 0) return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return n;
}

static void level_finish(ana_level *l, ana_method m) {
  l->p_bad = l->n ? (double)l->n_bad / (double)l->n : NAN;
  l->p_pass = l->n ? (double)l->n_pass / (double)l->n : NAN;
  l->bad_ci = ana_proportion_interval(m, l->n_bad, l->n);
  l->p_coll = l->n ? (double)l->n_coll / (double)l->n : NAN;
  l->coll_ci = ana_proportion_interval(m, l->n_coll, l->n);
  l->pass_ci = ana_proportion_interval(m, l->n_pass, l->n);
  l->p_rec = l->n ? (double)l->n_rec / (double)l->n : NAN;
  l->p_slow = l->n ? (double)l->n_slow / (double)l->n : NAN;
  l->rec_ci = ana_proportion_interval(m, l->n_rec, l->n);
  l->slow_ci = ana_proportion_interval(m, l->n_slow, l->n);
}

static void level_add(ana_level *l, const ana_point_stats *ps) {
  l->n += ps->n_pooled;
  l->n_meta += ps->n_pooled_meta;
  l->n_bad += ps->n_pooled_bad;
  l->n_pass += ps->n_pooled_pass;
  l->n_rec += ps->n_pooled_rec;
  l->n_slow += ps->n_pooled_slow;
  l->n_coll += ps->n_pooled_coll;
  l->n_undet += ps->n_pooled_undet;
}

static int effect_compute(ana_axis_effect *e, const fmt_results *r, const ana_summary *s,
                          size_t a) {
  e->axis = a;
  e->levels = malloc((r->n_points ? r->n_points : 1) * sizeof *e->levels);
  if (!e->levels) return -1;
  e->n_levels = axis_levels(r, a, e->levels);
  for (size_t p = 0; p < s->n_points; p++) {
    size_t l = level_find(e->levels, e->n_levels, r->values[p * r->n_axes + a]);
    if (l < e->n_levels) level_add(&e->levels[l], &s->points[p]);
  }
  double mmin = INFINITY, mmax = -INFINITY, pmin = INFINITY, pmax = -INFINITY;
  double rmin = INFINITY, rmax = -INFINITY, smin = INFINITY, smax = -INFINITY;
  for (size_t l = 0; l < e->n_levels; l++) {
    level_finish(&e->levels[l], s->method);
    if (e->levels[l].n == 0) continue;
    rmin = fmin(rmin, e->levels[l].p_rec);
    rmax = fmax(rmax, e->levels[l].p_rec);
    smin = fmin(smin, e->levels[l].p_slow);
    smax = fmax(smax, e->levels[l].p_slow);
    mmin = fmin(mmin, e->levels[l].p_bad);
    mmax = fmax(mmax, e->levels[l].p_bad);
    pmin = fmin(pmin, e->levels[l].p_pass);
    pmax = fmax(pmax, e->levels[l].p_pass);
  }
  e->effect_bad = mmax >= mmin ? mmax - mmin : 0.0;
  e->effect_pass = pmax >= pmin ? pmax - pmin : 0.0;
  e->effect_rec = rmax >= rmin ? rmax - rmin : 0.0;
  e->effect_slow = smax >= smin ? smax - smin : 0.0;
  e->effect = fmax(e->effect_bad, e->effect_pass);
  return 0;
}

static int cmp_effects(const void *x, const void *y) {
  const ana_axis_effect *a = x, *b = y;
  if (a->effect != b->effect) return a->effect < b->effect ? 1 : -1;
  return (a->axis > b->axis) - (a->axis < b->axis);
}

/* ------------------------------------------------------------------------ */
/* Display order                                                             */
/* ------------------------------------------------------------------------ */

typedef struct order_key {
  double p_bad, p_pass, p90;
  int64_t id;
  size_t index;
} order_key;

/* NaN sorts after everything (points without runs go last). */
static int cmp_asc(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

/* Best first: fewest bad runs, then most passing, then fastest p90. */
static int cmp_order(const void *x, const void *y) {
  const order_key *a = x, *b = y;
  int c = cmp_asc(a->p_bad, b->p_bad);
  if (c) return c;
  c = cmp_asc(-a->p_pass, -b->p_pass);
  if (c) return c;
  c = cmp_asc(a->p90, b->p90);
  if (c) return c;
  return (a->id > b->id) - (a->id < b->id);
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                   */
/* ------------------------------------------------------------------------ */

/* A time's interval on the log scale (delta method: half-width h on the
 * time is h / mean on its log), so it never reaches below 0: [mean / f,
 * mean x f], f = exp(h / mean). A mean of 0 (never healthy) stays [0, 0]. */
ana_interval ana_log_scale_interval(double mean, double half) {
  if (!(mean > 0)) return (ana_interval){mean, mean};
  if (!isfinite(half)) return (ana_interval){NAN, NAN};
  double f = exp(half / mean);
  return (ana_interval){mean / f, mean * f};
}

/* P(collapsed) and the time to collapse of one point (see ana.h). */
static void collapse_stats(ana_point_stats *ps, const fmt_results *r, const size_t *runs,
                           size_t n, double *buf, unsigned char *ev) {
  ps->p_coll = n ? (double)ps->n_coll / (double)n : NAN;
  ps->coll_wilson = ana_wilson(ps->n_coll, ps->n, ANA_Z95);
  ps->coll_exact = ana_clopper_pearson(ps->n_coll, ps->n, ANA_CONF);
  ps->coll_p50 = ps->coll_mean = ps->coll_tau = NAN;
  ps->coll_ci = (ana_interval){NAN, NAN};
  ps->coll_restricted = 0;
  size_t events = 0;
  double tau = 0;
  for (size_t i = 0; i < n; i++) {
    const fmt_run *run = &r->runs[runs[i]];
    int hit = run->outcome == ENG_OUTCOME_COLLAPSED && !isnan(run->collapse_ms);
    buf[i] = hit ? run->collapse_ms : run->collapse_watch_ms; /* NaN: skipped */
    ev[i] = (unsigned char)hit;
    events += (size_t)hit;
    if (buf[i] > tau) tau = buf[i];
  }
  ana_km km;
  if (ana_km_compute(&km, buf, ev, n) != 0) return;
  ps->coll_p50 = ana_km_quantile(&km, 0.50);
  if (events > 0 && km.n_events == km.n_obs) {
    ana_mean m = ana_mean_compute(buf, n);
    ps->coll_mean = m.mean;
    ps->coll_ci = ana_log_scale_interval(m.mean, m.ci.hi - m.mean);
  } else if (events > 0) {
    double se;
    ps->coll_tau = tau;
    ps->coll_mean = ana_km_rmst(&km, tau, &se);
    ps->coll_ci = ana_log_scale_interval(ps->coll_mean, ANA_Z95 * se);
    ps->coll_restricted = 1;
  }
  ana_km_free(&km);
}

static void point_stats_compute(ana_point_stats *ps, const fmt_results *r, size_t p,
                                const size_t *runs, size_t n, double slo_ms, double *buf,
                                unsigned char *ev) {
  ps->index = p;
  ps->point = r->point_ids[p];
  ps->n = (int64_t)n;
  ps->censor_ms = r->times ? r->times[p].censor_ms : NAN;
  if (isnan(ps->censor_ms)) ps->censor_ms = INFINITY; /* unknown: "> horizon" */
  double rec_sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    const fmt_run *run = &r->runs[runs[i]];
    if (run->outcome == ENG_OUTCOME_METASTABLE) ps->n_meta++;
    if (run->outcome == ENG_OUTCOME_SLOW) ps->n_slow++;
    if (run->outcome == ENG_OUTCOME_COLLAPSED) ps->n_coll++;
    if (run->outcome == ENG_OUTCOME_UNDETERMINED) ps->n_undet++;
    if (run->outcome == ENG_OUTCOME_RECOVERED && !isnan(run->recovery_ms)) {
      ps->n_recovered++;
      rec_sum += run->recovery_ms;
    }
    if (run_passes(r, run, slo_ms)) ps->n_pass++;
    ps->n_bad += ana_outcome_is_bad(run->outcome);
    if (ana_run_is_screening(r, run)) {
      ps->n_pooled++;
      ps->n_pooled_meta += run->outcome == ENG_OUTCOME_METASTABLE;
      ps->n_pooled_bad += ana_outcome_is_bad(run->outcome);
      ps->n_pooled_pass += run_passes(r, run, slo_ms);
      ps->n_pooled_rec += run->outcome == ENG_OUTCOME_RECOVERED;
      ps->n_pooled_slow += run->outcome == ENG_OUTCOME_SLOW;
      ps->n_pooled_coll += run->outcome == ENG_OUTCOME_COLLAPSED;
      ps->n_pooled_undet += run->outcome == ENG_OUTCOME_UNDETERMINED;
    }
  }
  ps->n_fresh = ps->n - ps->n_pooled;
  ps->p_meta = n ? (double)ps->n_meta / (double)n : NAN;
  ps->p_bad = n ? (double)ps->n_bad / (double)n : NAN;
  ps->p_pass = n ? (double)ps->n_pass / (double)n : NAN;
  ps->bad_wilson = ana_wilson(ps->n_bad, ps->n, ANA_Z95);
  ps->bad_exact = ana_clopper_pearson(ps->n_bad, ps->n, ANA_CONF);
  ps->pass_wilson = ana_wilson(ps->n_pass, ps->n, ANA_Z95);
  ps->pass_exact = ana_clopper_pearson(ps->n_pass, ps->n, ANA_CONF);
  ps->rec_mean_recovered = ps->n_recovered ? rec_sum / (double)ps->n_recovered : NAN;

  for (size_t i = 0; i < n; i++) {
    const fmt_run *run = &r->runs[runs[i]];
    int recovered = run->outcome == ENG_OUTCOME_RECOVERED && !isnan(run->recovery_ms);
    buf[i] = recovered ? run->recovery_ms : ps->censor_ms;
    ev[i] = (unsigned char)recovered;
  }
  ana_km km;
  if (ana_km_compute(&km, buf, ev, n) == 0) {
    ps->rec_p50 = ana_km_quantile(&km, 0.50);
    ps->rec_p90 = ana_km_quantile(&km, 0.90);
    ps->rec_p99 = ana_km_quantile(&km, 0.99);
    ana_km_free(&km);
  } else {
    ps->rec_p50 = ps->rec_p90 = ps->rec_p99 = NAN;
  }

  collapse_stats(ps, r, runs, n, buf, ev);

  for (size_t i = 0; i < n; i++) buf[i] = r->runs[runs[i]].amplification;
  ps->amp = ana_mean_compute(buf, n);
  for (size_t i = 0; i < n; i++) buf[i] = r->runs[runs[i]].goodput_during;
  ps->gp_during = ana_mean_compute(buf, n);
  for (size_t i = 0; i < n; i++) buf[i] = r->runs[runs[i]].goodput_after;
  ps->gp_after = ana_mean_compute(buf, n);
  for (size_t i = 0; i < n; i++) buf[i] = r->runs[runs[i]].peak_queue;
  ps->peak_queue = ana_mean_compute(buf, n);
}

int ana_summary_compute(ana_summary *s, const fmt_results *r, double slo_ms, ana_method method,
                        char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  s->slo_ms = slo_ms;
  s->method = method;
  size_t *start = NULL, *idx = NULL;
  double *buf = NULL;
  unsigned char *ev = NULL;
  order_key *keys = NULL;
  if (group_runs(r, &start, &idx) != 0) goto fail_oom;
  size_t most = 1;
  for (size_t p = 0; p < r->n_points; p++)
    if (start[p + 1] - start[p] > most) most = start[p + 1] - start[p];
  buf = malloc(most * sizeof *buf);
  ev = malloc(most);
  s->n_points = r->n_points;
  s->points = calloc(r->n_points ? r->n_points : 1, sizeof *s->points);
  s->order = malloc((r->n_points ? r->n_points : 1) * sizeof *s->order);
  s->n_axes = r->n_axes;
  s->effects = calloc(r->n_axes ? r->n_axes : 1, sizeof *s->effects);
  keys = malloc((r->n_points ? r->n_points : 1) * sizeof *keys);
  if (!buf || !ev || !s->points || !s->order || !s->effects || !keys) goto fail_oom;

  for (size_t p = 0; p < r->n_points; p++)
    point_stats_compute(&s->points[p], r, p, idx + start[p], start[p + 1] - start[p], slo_ms, buf,
                        ev);
  for (size_t a = 0; a < r->n_axes; a++)
    if (effect_compute(&s->effects[a], r, s, a) != 0) goto fail_oom;
  qsort(s->effects, s->n_axes, sizeof *s->effects, cmp_effects);

  for (size_t p = 0; p < r->n_points; p++) {
    const ana_point_stats *ps = &s->points[p];
    keys[p] = (order_key){ps->p_bad, ps->p_pass, ps->rec_p90, ps->point, p};
  }
  qsort(keys, r->n_points, sizeof *keys, cmp_order);
  for (size_t p = 0; p < r->n_points; p++) s->order[p] = keys[p].index;

  free(keys);
  free(buf);
  free(ev);
  free(start);
  free(idx);
  return 0;

fail_oom:
  free(keys);
  free(buf);
  free(ev);
  free(start);
  free(idx);
  ana_summary_free(s);
  snprintf(err, errlen, "out of memory summarising %zu runs", r->n_runs);
  return -1;
}

void ana_summary_free(ana_summary *s) {
  if (s->effects)
    for (size_t a = 0; a < s->n_axes; a++) free(s->effects[a].levels);
  free(s->effects);
  free(s->points);
  free(s->order);
  memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------ */
/* Two-axis grid                                                             */
/* ------------------------------------------------------------------------ */

int ana_grid2_compute(ana_grid2 *g, const fmt_results *r, const ana_summary *s, size_t ax,
                      size_t ay) {
  memset(g, 0, sizeof *g);
  g->ax = ax;
  g->ay = ay;
  size_t np = r->n_points ? r->n_points : 1;
  ana_level *lx = malloc(np * sizeof *lx), *ly = malloc(np * sizeof *ly);
  if (!lx || !ly) goto fail;
  g->nx = axis_levels(r, ax, lx);
  g->ny = axis_levels(r, ay, ly);
  /* A grid's two axes have at most as many value pairs as it has points;
   * pairs far past that (values that never repeat) are no grid to draw. */
  if (g->nx && g->ny > (np + 64) / g->nx) goto fail;
  g->xv = malloc((g->nx ? g->nx : 1) * sizeof *g->xv);
  g->yv = malloc((g->ny ? g->ny : 1) * sizeof *g->yv);
  g->xex = malloc((g->nx ? g->nx : 1) * sizeof *g->xex);
  g->yex = malloc((g->ny ? g->ny : 1) * sizeof *g->yex);
  size_t ncells = g->nx * g->ny;
  g->cells = calloc(ncells ? ncells : 1, sizeof *g->cells);
  if (!g->xv || !g->yv || !g->xex || !g->yex || !g->cells) goto fail;
  for (size_t i = 0; i < g->nx; i++) {
    g->xv[i] = lx[i].value;
    g->xex[i] = lx[i].example;
  }
  for (size_t j = 0; j < g->ny; j++) {
    g->yv[j] = ly[j].value;
    g->yex[j] = ly[j].example;
  }
  for (size_t i = 0; i < g->nx; i++)
    for (size_t j = 0; j < g->ny; j++) {
      g->cells[i * g->ny + j].value = NAN;
      g->cells[i * g->ny + j].example = lx[i].example;
    }
  for (size_t p = 0; p < s->n_points; p++) {
    size_t i = level_find(lx, g->nx, r->values[p * r->n_axes + ax]);
    size_t j = level_find(ly, g->ny, r->values[p * r->n_axes + ay]);
    if (i < g->nx && j < g->ny) {
      level_add(&g->cells[i * g->ny + j], &s->points[p]);
      g->cells[i * g->ny + j].example = p;
    }
  }
  for (size_t c = 0; c < g->nx * g->ny; c++) level_finish(&g->cells[c], s->method);
  free(lx);
  free(ly);
  return 0;
fail:
  free(lx);
  free(ly);
  ana_grid2_free(g);
  return -1;
}

void ana_grid2_free(ana_grid2 *g) {
  free(g->xv);
  free(g->yv);
  free(g->xex);
  free(g->yex);
  free(g->cells);
  memset(g, 0, sizeof *g);
}

/* ------------------------------------------------------------------------ */
/* Terminal table                                                            */
/* ------------------------------------------------------------------------ */

static void prob_format(double p, ana_interval ci, char *buf, size_t len) {
  if (isnan(p))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.3f [%.3f,%.3f]", p, ci.lo, ci.hi);
}

static void num_format(double v, char *buf, size_t len) {
  if (isnan(v))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.3f", v);
}

static ana_interval bad_ci(const ana_summary *s, const ana_point_stats *ps) {
  return s->method == ANA_INTERVAL_EXACT ? ps->bad_exact : ps->bad_wilson;
}

static ana_interval coll_ci(const ana_summary *s, const ana_point_stats *ps) {
  return s->method == ANA_INTERVAL_EXACT ? ps->coll_exact : ps->coll_wilson;
}

/* "1234 [1100, 1370]" (or "1234*" for a restricted mean), "-" when none. */
static void coll_time_format(const ana_point_stats *ps, char *buf, size_t len) {
  if (isnan(ps->coll_mean))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.0f%s [%.0f, %.0f]", ps->coll_mean, ps->coll_restricted ? "*" : "",
             ps->coll_ci.lo, ps->coll_ci.hi);
}

static ana_interval pass_ci(const ana_summary *s, const ana_point_stats *ps) {
  return s->method == ANA_INTERVAL_EXACT ? ps->pass_exact : ps->pass_wilson;
}

/* A value label as the terminal may show it (escaped, so up to 4x longer). */
static void term_label(const fmt_results *r, size_t axis, size_t point_index, char *buf,
                       size_t len) {
  char v[64];
  ana_value_label(r, axis, point_index, v, sizeof v);
  ana_term_text(buf, len, v);
}

void ana_summary_print_table(FILE *out, const fmt_results *r, const ana_summary *s) {
  int *w = calloc(r->n_axes ? r->n_axes : 1, sizeof *w);
  if (!w) return;
  for (size_t a = 0; a < r->n_axes; a++) {
    char name[256];
    ana_term_text(name, sizeof name, r->axes[a]);
    w[a] = (int)strlen(name);
    for (size_t p = 0; p < r->n_points; p++) {
      char v[256];
      term_label(r, a, p, v, sizeof v);
      if ((int)strlen(v) > w[a]) w[a] = (int)strlen(v);
    }
  }
  fprintf(out,
          "Per grid point (%zu points; SLO %.0f ms; intervals: 95%% %s; recovery quantiles: "
          "Kaplan-Meier, not-recovered runs censored at horizon - clearance, \">T\" = not "
          "reached within T ms):\n",
          r->n_points, s->slo_ms, ana_method_name(s->method));
  ana_user_slo_note(out, r, s->slo_ms);
  int any_fresh = 0;
  for (size_t p = 0; p < s->n_points; p++) any_fresh |= s->points[p].n_fresh > 0;
  fprintf(out, "%6s", "point");
  for (size_t a = 0; a < r->n_axes; a++) {
    char name[256];
    ana_term_text(name, sizeof name, r->axes[a]);
    fprintf(out, "  %*s", w[a], name);
  }
  if (any_fresh) fprintf(out, "  %5s", "fresh");
  fprintf(out, "  %5s  %-15s  %-21s  %-21s  %7s  %7s  %7s  %6s  %6s  %6s  %-21s  %s\n", "runs",
          "rec/slw/met/col", "P(bad)", "P(pass SLO)", "rec p50", "p90", "p99", "amp",
          "gp_dur", "gp_aft", "P(collapsed)", "t_collapse ms");
  for (size_t k = 0; k < s->n_points; k++) {
    const ana_point_stats *ps = &s->points[s->order[k]];
    fprintf(out, "%6lld", (long long)ps->point);
    for (size_t a = 0; a < r->n_axes; a++) {
      char v[256];
      term_label(r, a, ps->index, v, sizeof v);
      fprintf(out, "  %*s", w[a], v);
    }
    char counts[80], pm[48], pp[48], q50[32], q90[32], q99[32], amp[32], gd[32], ga[32];
    char pc[48], tc[96];
    snprintf(counts, sizeof counts, "%lld/%lld/%lld/%lld", (long long)ps->n_recovered,
             (long long)ps->n_slow, (long long)ps->n_meta, (long long)ps->n_coll);
    if (ps->n_undet)
      snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "+%lldu",
               (long long)ps->n_undet);
    prob_format(ps->p_coll, coll_ci(s, ps), pc, sizeof pc);
    coll_time_format(ps, tc, sizeof tc);
    prob_format(ps->p_bad, bad_ci(s, ps), pm, sizeof pm);
    prob_format(ps->p_pass, pass_ci(s, ps), pp, sizeof pp);
    ana_ms_format(ps->rec_p50, ps->censor_ms, q50, sizeof q50);
    ana_ms_format(ps->rec_p90, ps->censor_ms, q90, sizeof q90);
    ana_ms_format(ps->rec_p99, ps->censor_ms, q99, sizeof q99);
    num_format(ps->amp.mean, amp, sizeof amp);
    num_format(ps->gp_during.mean, gd, sizeof gd);
    num_format(ps->gp_after.mean, ga, sizeof ga);
    if (any_fresh) fprintf(out, "  %5lld", (long long)ps->n_fresh);
    fprintf(out, "  %5lld  %-15s  %-21s  %-21s  %7s  %7s  %7s  %6s  %6s  %6s  %-21s  %s\n",
            (long long)ps->n, counts, pm, pp, q50, q90, q99, amp, gd, ga, pc, tc);
  }
  fprintf(out,
          "(rec/slw/met/col = runs recovered / slow / metastable / collapsed without a fault, "
          "+Nu = N undetermined (too little time after clearance); P(bad) = the share of runs "
          "metastable, collapsed or undetermined, what the --max-metastable target bounds; "
          "amp = mean attempts per "
          "request; gp_dur, gp_aft = mean goodput during the faults and after clearance, "
          "relative to baseline; t_collapse = mean time to collapse from an empty start with a "
          "95%% interval (on the log scale, so never below 0), * = Kaplan-Meier restricted mean up to the longest watch when some "
          "runs never collapsed)\n");
  if (any_fresh)
    fprintf(out, "(runs = every finished run of the point, screening and fresh; fresh = the runs "
                 "refine appended, of which a point's test may have used fewer; parameter effects "
                 "and heat maps pool the screening runs only, so every point weighs the same)\n");
  free(w);
}

void ana_summary_print_effects(FILE *out, const fmt_results *r, const ana_summary *s) {
  fprintf(out,
          "\nParameter effects (each axis's values pooled over all other axes; effect = max - "
          "min across its values; ranked by the larger of the effects on P(pass) and "
          "P(bad), " ANA_BAD_MEANING "; a value with no bad run can still be mostly slow: "
          "read P(recovered) and P(slow) too):\n");
  if (s->n_axes == 0) {
    fprintf(out, "  (the file has no grid axes)\n");
    return;
  }
  for (size_t k = 0; k < s->n_axes; k++) {
    const ana_axis_effect *e = &s->effects[k];
    char name[256];
    ana_term_text(name, sizeof name, r->axes[e->axis]);
    fprintf(out,
            "%2zu. %-20s effect on P(pass) %.3f, on P(recovered) %.3f, on P(slow) %.3f, on "
            "P(bad) %.3f\n",
            k + 1, name, e->effect_pass, e->effect_rec, e->effect_slow, e->effect_bad);
    for (size_t l = 0; l < e->n_levels; l++) {
      const ana_level *lv = &e->levels[l];
      char v[256], pm[48], pp[48], pr[48], psl[48], counts[96];
      term_label(r, e->axis, lv->example, v, sizeof v);
      prob_format(lv->p_bad, lv->bad_ci, pm, sizeof pm);
      prob_format(lv->p_pass, lv->pass_ci, pp, sizeof pp);
      prob_format(lv->p_rec, lv->rec_ci, pr, sizeof pr);
      prob_format(lv->p_slow, lv->slow_ci, psl, sizeof psl);
      snprintf(counts, sizeof counts, "%lld/%lld/%lld/%lld", (long long)lv->n_rec,
               (long long)lv->n_slow, (long long)lv->n_meta, (long long)lv->n_coll);
      if (lv->n_undet)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "+%lldu",
                 (long long)lv->n_undet);
      fprintf(out,
              "      %-14s runs %6lld  rec/slw/met/col %-15s  P(pass) %-21s  P(recovered) %-21s  "
              "P(slow) %-21s  P(bad) %s\n",
              v, (long long)lv->n, counts, pp, pr, psl, pm);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* CSV and JSON                                                              */
/* ------------------------------------------------------------------------ */

static void csv_num(FILE *f, double v) {
  if (isnan(v))
    fputs(",", f);
  else if (isinf(v))
    fputs(v > 0 ? ",inf" : ",-inf", f);
  else
    fprintf(f, ",%.10g", v);
}

void ana_summary_print_csv(FILE *f, const fmt_results *r, const ana_summary *s) {
  fputs("point", f);
  for (size_t a = 0; a < r->n_axes; a++) {
    fputc(',', f);
    ana_csv_cell(f, r->axes[a]);
  }
  fputs(",runs,recovered,slow,metastable,passed,p_metastable,p_metastable_wilson_lo,"
        "p_metastable_wilson_hi,p_metastable_exact_lo,p_metastable_exact_hi,p_pass,"
        "p_pass_wilson_lo,p_pass_wilson_hi,p_pass_exact_lo,p_pass_exact_hi,censor_ms,"
        "recovery_p50_ms,recovery_p90_ms,recovery_p99_ms,amplification_mean,"
        "amplification_lo,amplification_hi,goodput_during_mean,goodput_during_lo,"
        "goodput_during_hi,goodput_after_mean,goodput_after_lo,goodput_after_hi,"
        "peak_queue_mean,slo_ms,collapsed,undetermined,p_collapsed,p_collapsed_lo,"
        "p_collapsed_hi,collapse_p50_ms,collapse_mean_ms,collapse_mean_lo,collapse_mean_hi,"
        "collapse_tau_ms,bad,p_bad,p_bad_wilson_lo,p_bad_wilson_hi,p_bad_exact_lo,"
        "p_bad_exact_hi,screening_runs,fresh_runs\n",
        f);
  for (size_t k = 0; k < s->n_points; k++) {
    const ana_point_stats *ps = &s->points[s->order[k]];
    fprintf(f, "%lld", (long long)ps->point);
    for (size_t a = 0; a < r->n_axes; a++) {
      char v[64];
      ana_value_label(r, a, ps->index, v, sizeof v);
      fputc(',', f);
      ana_csv_cell(f, v);
    }
    fprintf(f, ",%lld,%lld,%lld,%lld,%lld", (long long)ps->n, (long long)ps->n_recovered,
            (long long)ps->n_slow, (long long)ps->n_meta, (long long)ps->n_pass);
    ana_interval mw = ana_wilson(ps->n_meta, ps->n, ANA_Z95);
    ana_interval me = ana_clopper_pearson(ps->n_meta, ps->n, ANA_CONF);
    double cols[] = {ps->p_meta,         mw.lo,              mw.hi,
                     me.lo,              me.hi,              ps->p_pass,
                     ps->pass_wilson.lo, ps->pass_wilson.hi, ps->pass_exact.lo,
                     ps->pass_exact.hi,  ps->censor_ms,      ps->rec_p50,
                     ps->rec_p90,        ps->rec_p99,        ps->amp.mean,
                     ps->amp.ci.lo,      ps->amp.ci.hi,      ps->gp_during.mean,
                     ps->gp_during.ci.lo, ps->gp_during.ci.hi, ps->gp_after.mean,
                     ps->gp_after.ci.lo, ps->gp_after.ci.hi, ps->peak_queue.mean,
                     s->slo_ms};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) csv_num(f, cols[c]);
    /* collapse columns, appended so older readers keep their positions */
    ana_interval cc = coll_ci(s, ps);
    fprintf(f, ",%lld,%lld", (long long)ps->n_coll, (long long)ps->n_undet);
    double ccols[] = {ps->p_coll, cc.lo, cc.hi, ps->coll_p50, ps->coll_mean,
                      ps->coll_ci.lo, ps->coll_ci.hi, ps->coll_tau};
    for (size_t c = 0; c < sizeof ccols / sizeof ccols[0]; c++) csv_num(f, ccols[c]);
    /* P(bad), the share the targets bound, appended likewise */
    fprintf(f, ",%lld", (long long)ps->n_bad);
    double bcols[] = {ps->p_bad, ps->bad_wilson.lo, ps->bad_wilson.hi, ps->bad_exact.lo,
                      ps->bad_exact.hi};
    for (size_t c = 0; c < sizeof bcols / sizeof bcols[0]; c++) csv_num(f, bcols[c]);
    fprintf(f, ",%lld,%lld", (long long)ps->n_pooled, (long long)ps->n_fresh);
    fputc('\n', f);
  }
}

/* JSON has no NaN or infinity: both become null (the schema says what a
 * null means for each field). */
static json_t *json_interval(ana_interval i) {
  return json_pack("[o,o]", ana_json_number(i.lo), ana_json_number(i.hi));
}

static json_t *json_mean(const ana_mean *m) {
  return json_pack("{s:o,s:o,s:I}", "mean", ana_json_number(m->mean), "ci95",
                   json_interval(m->ci), "n", (json_int_t)m->n);
}

double ana_histogram_range(const fmt_results *r) {
  double hi = 0.0;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->runs[i].outcome == ENG_OUTCOME_RECOVERED && r->runs[i].recovery_ms > hi)
      hi = r->runs[i].recovery_ms;
  return hi > 0 ? hi : 1.0;
}

int ana_point_histogram(ana_histogram *h, const fmt_results *r, size_t point_index, double hi,
                        size_t nbins) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->point_of_run[i] == point_index) n++;
  double *t = malloc((n ? n : 1) * sizeof *t);
  unsigned char *ev = malloc(n ? n : 1);
  int rc = -1;
  if (t && ev) {
    n = ana_point_samples(r, point_index, NAN, t, ev);
    for (size_t i = 0; i < n; i++)
      if (!ev[i]) t[i] = NAN; /* not recovered: counted in h->missing */
    rc = ana_histogram_fill(h, t, n, 0.0, hi, nbins);
  }
  free(t);
  free(ev);
  return rc;
}

/* An axis value: the number when its label is the plain number, else the
 * label ("inf", an enum name, a window list). */
/* Whether every value of axis a is a number: its label is the plain number,
 * or it is infinite ("inf"). An enum axis ("full", "off") is not. */
static int axis_numeric(const fmt_results *r, size_t a) {
  for (size_t p = 0; p < r->n_points; p++) {
    char v[64], plain[64];
    double x = r->values[p * r->n_axes + a];
    if (isinf(x)) continue;
    ana_value_label(r, a, p, v, sizeof v);
    snprintf(plain, sizeof plain, "%g", x);
    if (!isfinite(x) || strcmp(plain, v)) return 0;
  }
  return 1;
}

/* A point's value of axis a in JSON: one type per axis, so a column of a
 * data frame sorts. A numeric axis gives numbers, and null for infinity
 * (JSON has no infinity; "settings_text" keeps the label "inf"); any other
 * axis gives its labels. */
static json_t *axis_value(const fmt_results *r, size_t a, size_t point_index) {
  double x = r->values[point_index * r->n_axes + a];
  if (axis_numeric(r, a)) return ana_json_number(x);
  char v[64];
  ana_value_label(r, a, point_index, v, sizeof v);
  return ana_json_text(v);
}

static json_t *axis_label(const fmt_results *r, size_t a, size_t point_index) {
  char v[64];
  ana_value_label(r, a, point_index, v, sizeof v);
  return ana_json_text(v);
}

static json_t *point_json(const fmt_results *r, const ana_summary *s, const ana_point_stats *ps,
                          double hhi, size_t nbins) {
  json_t *o = json_object();
  json_t *settings = json_object();
  json_object_set_new(o, "point", json_integer((json_int_t)ps->point));
  json_t *labels = json_object();
  for (size_t a = 0; a < r->n_axes; a++) {
    ana_json_set(settings, r->axes[a], axis_value(r, a, ps->index));
    ana_json_set(labels, r->axes[a], axis_label(r, a, ps->index));
  }
  json_object_set_new(o, "settings", settings);
  json_object_set_new(o, "settings_text", labels);
  json_object_set_new(o, "runs", json_integer((json_int_t)ps->n));
  json_object_set_new(o, "screening_runs", json_integer((json_int_t)ps->n_pooled));
  json_object_set_new(o, "fresh_runs", json_integer((json_int_t)ps->n_fresh));
  json_object_set_new(o, "recovered", json_integer((json_int_t)ps->n_recovered));
  json_object_set_new(o, "slow", json_integer((json_int_t)ps->n_slow));
  json_object_set_new(o, "metastable", json_integer((json_int_t)ps->n_meta));
  json_object_set_new(o, "passed", json_integer((json_int_t)ps->n_pass));
  json_object_set_new(o, "bad", json_integer((json_int_t)ps->n_bad));
  json_object_set_new(o, "p_bad", ana_json_number(ps->p_bad));
  json_object_set_new(o, "p_bad_wilson", json_interval(ps->bad_wilson));
  json_object_set_new(o, "p_bad_exact", json_interval(ps->bad_exact));
  /* The metastable runs alone (collapsed and undetermined are not in it). */
  json_object_set_new(o, "p_metastable", ana_json_number(ps->p_meta));
  json_object_set_new(o, "p_metastable_wilson",
                      json_interval(ana_wilson(ps->n_meta, ps->n, ANA_Z95)));
  json_object_set_new(o, "p_metastable_exact",
                      json_interval(ana_clopper_pearson(ps->n_meta, ps->n, ANA_CONF)));
  json_object_set_new(o, "p_pass", ana_json_number(ps->p_pass));
  json_object_set_new(o, "p_pass_wilson", json_interval(ps->pass_wilson));
  json_object_set_new(o, "p_pass_exact", json_interval(ps->pass_exact));
  json_object_set_new(o, "censor_ms", ana_json_number(ps->censor_ms));
  json_object_set_new(o, "recovery_p50_ms", ana_json_number(ps->rec_p50));
  json_object_set_new(o, "recovery_p90_ms", ana_json_number(ps->rec_p90));
  json_object_set_new(o, "recovery_p99_ms", ana_json_number(ps->rec_p99));
  ana_histogram h;
  if (ana_point_histogram(&h, r, ps->index, hhi, nbins) == 0) {
    json_t *counts = json_array();
    for (size_t b = 0; b < nbins; b++) json_array_append_new(counts, json_integer(h.counts[b]));
    json_object_set_new(o, "recovery_histogram",
                        json_pack("{s:i,s:o,s:o,s:I}", "lo_ms", 0,
                                  "bin_ms", ana_json_number(hhi / (double)nbins), "counts",
                                  counts, "not_recovered", (json_int_t)h.missing));
    ana_histogram_free(&h);
  }
  json_object_set_new(o, "amplification", json_mean(&ps->amp));
  json_object_set_new(o, "goodput_during", json_mean(&ps->gp_during));
  json_object_set_new(o, "goodput_after", json_mean(&ps->gp_after));
  json_object_set_new(o, "peak_queue", json_mean(&ps->peak_queue));
  json_object_set_new(o, "collapsed", json_integer((json_int_t)ps->n_coll));
  json_object_set_new(o, "undetermined", json_integer((json_int_t)ps->n_undet));
  json_object_set_new(o, "p_collapsed", ana_json_number(ps->p_coll));
  json_object_set_new(o, "p_collapsed_wilson", json_interval(ps->coll_wilson));
  json_object_set_new(o, "p_collapsed_exact", json_interval(ps->coll_exact));
  json_object_set_new(o, "collapse_p50_ms", ana_json_number(ps->coll_p50));
  json_object_set_new(o, "collapse_mean_ms", ana_json_number(ps->coll_mean));
  json_object_set_new(o, "collapse_mean_ci", json_interval(ps->coll_ci));
  json_object_set_new(o, "collapse_mean_restricted", json_boolean(ps->coll_restricted));
  json_object_set_new(o, "collapse_tau_ms", ana_json_number(ps->coll_tau));
  /* Each axis value again under its own name at the top of the point, so
   * pandas.DataFrame(d["points"]) has a column per axis without
   * flattening "settings"; skipped if it would shadow a statistic. */
  for (size_t a = 0; a < r->n_axes; a++) {
    json_t *k = ana_json_text(r->axes[a]);
    if (k && !json_object_get(o, json_string_value(k)))
      json_object_set_new(o, json_string_value(k), axis_value(r, a, ps->index));
    json_decref(k);
  }
  (void)s;
  return o;
}

void ana_summary_print_json(FILE *out, const fmt_results *r, const ana_summary *s,
                            const char *recommendation) {
  json_t *root = ana_summary_json(r, s, recommendation);
  if (root) ana_json_print(out, root, 0);
}

json_t *ana_summary_json(const fmt_results *r, const ana_summary *s, const char *recommendation) {
  const size_t nbins = ANA_HISTOGRAM_BINS;
  double hhi = ana_histogram_range(r);
  json_t *root = json_object();
  json_object_set_new(root, "file", ana_json_text(r->path));
  json_object_set_new(root, "format_version", json_integer(r->format_version));
  json_object_set_new(root, "slo_ms", ana_json_number(s->slo_ms));
  json_object_set_new(root, "interval", ana_json_text(ana_method_name(s->method)));
  json_object_set_new(root, "confidence", json_real(0.95));
  json_object_set_new(root, "bad_runs", json_string(ANA_BAD_MEANING));
  json_object_set_new(root, "recovery_quantiles",
                      json_string("Kaplan-Meier; not-recovered runs censored at censor_ms "
                                  "(horizon - fault clearance); null = not reached"));
  json_t *axes = json_array();
  for (size_t a = 0; a < r->n_axes; a++) json_array_append_new(axes, ana_json_text(r->axes[a]));
  json_object_set_new(root, "axes", axes);
  json_t *points = json_array();
  for (size_t k = 0; k < s->n_points; k++)
    json_array_append_new(points, point_json(r, s, &s->points[s->order[k]], hhi, nbins));
  json_object_set_new(root, "points", points);
  json_t *effects = json_array();
  for (size_t k = 0; k < s->n_axes; k++) {
    const ana_axis_effect *e = &s->effects[k];
    json_t *levels = json_array();
    for (size_t l = 0; l < e->n_levels; l++) {
      const ana_level *lv = &e->levels[l];
      char v[64];
      ana_value_label(r, e->axis, lv->example, v, sizeof v);
      double pm = lv->n ? (double)lv->n_meta / (double)lv->n : NAN;
      json_t *lj = json_pack("{s:o,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "value", ana_json_text(v),
                             "runs", (json_int_t)lv->n, "metastable", (json_int_t)lv->n_meta,
                             "passed", (json_int_t)lv->n_pass, "p_metastable",
                             ana_json_number(pm), "p_metastable_ci",
                             json_interval(ana_proportion_interval(s->method, lv->n_meta, lv->n)),
                             "p_pass", ana_json_number(lv->p_pass),
                             "p_pass_ci", json_interval(lv->pass_ci));
      json_object_update_new(
          lj, json_pack("{s:I,s:o,s:o,s:o,s:o}", "bad", (json_int_t)lv->n_bad, "p_bad",
                        ana_json_number(lv->p_bad), "p_bad_ci", json_interval(lv->bad_ci),
                        "p_collapsed", ana_json_number(lv->p_coll), "p_collapsed_ci",
                        json_interval(lv->coll_ci)));
      json_object_update_new(
          lj, json_pack("{s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "recovered", (json_int_t)lv->n_rec,
                        "slow", (json_int_t)lv->n_slow, "collapsed", (json_int_t)lv->n_coll,
                        "undetermined", (json_int_t)lv->n_undet, "p_recovered",
                        ana_json_number(lv->p_rec), "p_recovered_ci", json_interval(lv->rec_ci),
                        "p_slow", ana_json_number(lv->p_slow), "p_slow_ci",
                        json_interval(lv->slow_ci)));
      json_array_append_new(levels, lj);
    }
    json_array_append_new(
        effects, json_pack("{s:o,s:I,s:o,s:o,s:o,s:o}", "axis", ana_json_text(r->axes[e->axis]),
                           "rank", (json_int_t)(k + 1), "effect", ana_json_number(e->effect),
                           "effect_bad", ana_json_number(e->effect_bad), "effect_pass",
                           ana_json_number(e->effect_pass), "levels", levels));
    json_t *ej = json_array_get(effects, json_array_size(effects) - 1);
    json_object_set_new(ej, "effect_recovered", ana_json_number(e->effect_rec));
    json_object_set_new(ej, "effect_slow", ana_json_number(e->effect_slow));
  }
  json_object_set_new(root, "effects", effects);
  if (recommendation) json_object_set_new(root, "recommendation", ana_json_text(recommendation));
  return root;
}
