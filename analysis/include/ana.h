/*
 * ana.h — public API of the stormsweep analysis library: reading a
 * result file, per-point statistics, parameter effects, the tuning
 * recommendation and the plots of `report`.
 *
 * Layers, bottom up:
 *   stats.c      pure statistics (intervals, Kaplan–Meier, histograms, means)
 *   reader.c     the only module that knows the HDF5 layout of a result file;
 *                reads /points and /runs whole (one small row per run) and
 *                /ticks/<metric> one point at a time in tick blocks
 *   store.c      writes what analyze computed back under /analysis
 *   summarize.c  per-point table and main effects (pure, on fmt_results)
 *   recommend.c  the recommendation rule and its text
 *   report.c     gnuplot images and index.html
 *   cmd_analyze.c  the `analyze`, `recommend` and `report` commands
 *   textsafe.c   (textsafe.h) escaping of text from a file for each sink:
 *                gnuplot, CSV, JSON, terminal; every output goes through it
 *
 * Nothing here has mutable global state; every function works on what it is
 * given. Errors: functions return 0 / -1 and write a one-line message into a
 * caller-supplied buffer.
 */
#ifndef STORMSWEEP_ANA_H
#define STORMSWEEP_ANA_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include <jansson.h>

#include "decision.h"
#include "fmt_results.h"

#define ANA_Z95 1.959963984540054 /* standard normal 97.5% quantile */
#define ANA_CONF 0.95             /* every interval in the analysis is 95% */

/* ======================================================================== */
/* Statistics (stats.c)                                                      */
/* ======================================================================== */

typedef struct ana_interval {
  double lo, hi;
} ana_interval;

typedef enum ana_method { ANA_INTERVAL_WILSON, ANA_INTERVAL_EXACT } ana_method;

const char *ana_method_name(ana_method m);

/* Regularized incomplete beta I_x(a, b) and its inverse in x (bisection). */
double ana_beta_inc(double a, double b, double x);
double ana_beta_inc_inv(double a, double b, double p);

/* Intervals for a binomial proportion k/n; NaN bounds when n <= 0. */
ana_interval ana_wilson(int64_t k, int64_t n, double z);
ana_interval ana_clopper_pearson(int64_t k, int64_t n, double conf); /* two-sided */
ana_interval ana_proportion_interval(ana_method m, int64_t k, int64_t n); /* 95% */

/* Smallest number of runs per point for which a perfect point (0 metastable,
 * all passing) has exact two-sided bounds meeting both targets; -1 if none. */
int64_t ana_runs_needed(double max_meta, double min_pass, double conf);

/* Student t quantile (p in (0,1), df > 0). */
double ana_t_quantile(double p, double df);

/* Mean of the non-NaN values with a 95% Student t interval. With one value
 * the interval collapses to it and sd is NaN; with none everything is NaN. */
typedef struct ana_mean {
  size_t n;
  double mean, sd;
  ana_interval ci;
} ana_mean;

ana_mean ana_mean_compute(const double *x, size_t n);
/* A positive time's 95% interval on the log scale from its mean and the
 * half-width of its interval on the time (delta method): [mean / f,
 * mean x f], f = exp(half / mean), never below 0. */
ana_interval ana_log_scale_interval(double mean, double half);

/* Sample quantile of sorted data by linear interpolation (Hyndman–Fan 7). */
void ana_sort_doubles(double *x, size_t n);
double ana_quantile_sorted(const double *x, size_t n, double q);

/* Kaplan–Meier survival estimate with right censoring. One step per distinct
 * time; surv is S(t) just after t. Events at a time come before censorings
 * at the same time (the censored ones are still at risk there). */
typedef struct ana_km_step {
  double t, surv;
  int64_t at_risk, events, censored;
} ana_km_step;

typedef struct ana_km {
  size_t n_obs, n_events, n_steps;
  ana_km_step *steps;
  double censor_max; /* largest censoring time (0 when none) */
} ana_km;

/* time[i] is the event or censoring time, event[i] 1 for an event. NaN times
 * are skipped. Allocates km->steps; returns -1 when out of memory. */
int ana_km_compute(ana_km *km, const double *time, const unsigned char *event, size_t n);
void ana_km_free(ana_km *km);
double ana_km_survival(const ana_km *km, double t);
/* First time S(t) <= 1 - q; +INFINITY when the curve never gets there
 * ("not reached", reported as ">horizon"); NaN without observations. */
double ana_km_quantile(const ana_km *km, double q);
/* Restricted mean: the area under the curve from 0 to tau, the mean of
 * min(T, tau); *se (may be NULL) gets its Greenwood-type standard error
 * (Klein & Moeschberger 4.5). NaN without observations. */
double ana_km_rmst(const ana_km *km, double tau, double *se);

/* Histogram over [lo, hi] in nbins equal bins (hi falls in the last bin). */
typedef struct ana_histogram {
  double lo, hi;
  size_t nbins;
  int64_t *counts;
  int64_t under, over, missing;
} ana_histogram;

int ana_histogram_fill(ana_histogram *h, const double *x, size_t n, double lo, double hi,
                       size_t nbins);
void ana_histogram_free(ana_histogram *h);

/* ======================================================================== */
/* Values and bands (summarize.c, band.c): the file is read by fmt_results.h */
/* ======================================================================== */

/* Human-readable value of an axis ("inf", enum names, "%g"). */
void ana_value_format(const char *axis, double v, char *buf, size_t len);
/* The value of axis at a point as the sweep wrote it when known, else
 * ana_value_format of the number. */
void ana_value_label(const fmt_results *r, size_t axis, size_t point_index, char *buf,
                     size_t len);

/* Per-tick quantile band of one metric across the replicates of one point,
 * binned in time so a curve has at most max_bins points: each replicate is
 * averaged over a bin, then the 5/50/95% quantiles and mean are taken across
 * replicates. Reads only that point's rows (fmt_bins_read). */
typedef struct ana_band {
  size_t nbins, n_runs;
  int64_t ticks_per_bin;
  double *t_ms;  /* bin centre in ms (ticks when tick_ms unknown) */
  double *p05, *p50, *p95, *mean;
} ana_band;

int ana_band_read(ana_band *b, const fmt_results *r, const char *metric, size_t point_index,
                  size_t max_bins, char *err, size_t errlen);
void ana_band_free(ana_band *b);

/* ======================================================================== */
/* Summaries (summarize.c)                                                   */
/* ======================================================================== */

typedef struct ana_point_stats {
  size_t index;  /* into fmt_results points */
  int64_t point; /* point id */
  int64_t n, n_recovered, n_slow, n_meta, n_pass;
  int64_t n_bad; /* runs metastable, collapsed or undetermined (ana_outcome_is_bad) */
  /* The sweep's own replicates only (all runs when the file does not say):
   * what effects and heat maps pool, so the fresh runs refine adds to a few
   * points do not make those points weigh more than the others. */
  int64_t n_pooled, n_pooled_meta, n_pooled_pass, n_pooled_bad;
  int64_t n_fresh; /* n - n_pooled: runs refine appended (ana_point_runs_of counts alike) */
  int64_t n_pooled_rec, n_pooled_slow, n_pooled_coll, n_pooled_undet; /* the other outcomes */
  double p_bad, p_pass; /* P(bad): the bad runs' share, what the --max-metastable target bounds */
  ana_interval bad_wilson, bad_exact, pass_wilson, pass_exact;
  double p_meta; /* the share of runs that ended metastable (not collapsed): shown beside */
  double censor_ms;  /* where not-recovered runs are censored (horizon - clearance) */
  double rec_p50, rec_p90, rec_p99; /* KM; +inf = not reached, NaN = no runs */
  double rec_mean_recovered;        /* mean over recovered runs only */
  ana_mean amp, gp_during, gp_after, peak_queue;
  /* Collapse without a fault (docs/model.md "Collapse without a fault"): counts, P(collapsed), and
   * the time to collapse, Kaplan–Meier with runs that never collapsed
   * censored where watching stopped (first fault or horizon). coll_mean is
   * the plain mean with a t interval when every run collapsed, else the
   * restricted mean up to coll_tau (the longest watch) with a normal
   * interval (coll_restricted = 1); either interval is taken on the log
   * scale (never below 0); NaN when no run collapsed. */
  int64_t n_coll, n_undet;
  double p_coll;
  ana_interval coll_wilson, coll_exact;
  double coll_p50, coll_mean, coll_tau;
  ana_interval coll_ci;
  int coll_restricted;
} ana_point_stats;

typedef struct ana_level {
  double value;
  size_t example; /* a point index with this value (for its label) */
  int64_t n, n_meta, n_pass, n_bad;
  double p_bad, p_pass; /* P(bad) as for a point */
  ana_interval bad_ci, pass_ci;
  /* Every outcome, so a level with no metastable run but most runs slow
   * does not read as healthy: recovered, slow, collapsed,
   * undetermined; n_rec + n_slow + n_meta + n_coll + n_undet = n. */
  int64_t n_rec, n_slow, n_coll, n_undet;
  double p_rec, p_slow, p_coll;
  ana_interval rec_ci, slow_ci, coll_ci;
} ana_level;

typedef struct ana_axis_effect {
  size_t axis;
  size_t n_levels;
  ana_level *levels; /* sorted by value */
  double effect_bad, effect_pass; /* max - min of the level probabilities */
  double effect_rec, effect_slow;  /* the same for P(recovered) and P(slow): shown, not ranked */
  double effect;                   /* max of the two: the ranking key */
} ana_axis_effect;

typedef struct ana_summary {
  double slo_ms;
  ana_method method; /* interval shown in tables and effects */
  size_t n_points;
  ana_point_stats *points; /* in file order */
  size_t n_axes;
  ana_axis_effect *effects; /* ranked: largest effect first */
  size_t *order;            /* n_points: display order (best first) */
} ana_summary;

/* Judges r's runs by SLO terms on what users see from here on (every
 * P(pass) and recommendation): each run's user recovery time recomputed
 * from its stored user-view /ticks rows (user_slo.c). No terms: the queue
 * check, as read. -1 with a one-line message for a file without those rows. */
int ana_judge_user_slo(fmt_results *r, const eng_slo *slo, char *err, size_t errlen);

/* Computes per-point stats with the SLO rule "recovered and recovery_ms <=
 * slo_ms" (recomputed from recovery_ms, whatever the run's own SLO was). */
int ana_summary_compute(ana_summary *s, const fmt_results *r, double slo_ms, ana_method method,
                        char *err, size_t errlen);
void ana_summary_free(ana_summary *s);

/* Recovery-time samples of one point for Kaplan–Meier: time[i] is the run's
 * recovery_ms, or censor_ms for a run that did not recover (event[i] = 0).
 * The arrays need room for the point's runs; returns how many were filled. */
size_t ana_point_samples(const fmt_results *r, size_t point_index, double censor_ms,
                         double *time, unsigned char *event);

/* Recovery-time histogram of one point over [0, hi] (recovered runs only;
 * h->missing counts the runs that did not recover). ana_histogram_range is
 * the common hi of a file: its largest recovery time. */
#define ANA_HISTOGRAM_BINS 20
double ana_histogram_range(const fmt_results *r);
int ana_point_histogram(ana_histogram *h, const fmt_results *r, size_t point_index, double hi,
                        size_t nbins);

/* Marginal P(bad), P(pass) and every outcome over two axes (others pooled): cells[ix * ny + iy]
 * for the level values of the two axes. */
typedef struct ana_grid2 {
  size_t ax, ay, nx, ny;
  double *xv, *yv;
  size_t *xex, *yex; /* a point index having each x / y value (for labels) */
  ana_level *cells;
} ana_grid2;

int ana_grid2_compute(ana_grid2 *g, const fmt_results *r, const ana_summary *s, size_t ax,
                      size_t ay);
void ana_grid2_free(ana_grid2 *g);

/* Printing (summarize.c). */
void ana_summary_print_table(FILE *out, const fmt_results *r, const ana_summary *s);
void ana_summary_print_effects(FILE *out, const fmt_results *r, const ana_summary *s);
/* The per-point table as CSV, one row per point, best first. */
void ana_summary_print_csv(FILE *out, const fmt_results *r, const ana_summary *s);
void ana_summary_print_json(FILE *out, const fmt_results *r, const ana_summary *s,
                            const char *recommendation);
/* The same as a JSON object, for a caller that adds to it (NULL: out of memory). */
json_t *ana_summary_json(const fmt_results *r, const ana_summary *s, const char *recommendation);
/* "vnodes=16 capacity_factor=1.25 ..." */
void ana_point_describe(const fmt_results *r, size_t point_index, char *buf, size_t len);
/* The same for the tunable (scenario = 0) or scenario (1) axes only; -1 = all. */
void ana_point_describe_role(const fmt_results *r, size_t point_index, int scenario, char *buf,
                             size_t len);
/* "1234", ">8000" (not reached, with the censoring time) or "-" */
void ana_ms_format(double ms, double censor_ms, char *buf, size_t len);

/* ======================================================================== */
/* Recommendation (recommend.c)                                              */
/* ======================================================================== */

/* A preference among settings that meet the targets (recommend --prefer
 * KEY=VALUE): axis and the value's index in it. */
typedef struct ana_prefer {
  size_t axis;
  double value;
} ana_prefer;

typedef struct ana_reco_opts {
  double max_meta; /* exact upper bound of P(bad) must be <= this */
  double min_pass; /* exact lower bound of P(pass) must be >= this */
} ana_reco_opts;

/* What the answer is asked beyond the targets (recommend's options). */
typedef struct ana_answer_opts {
  int given_slo;            /* --slo-ms given (the SLO itself is the summary's) */
  const ana_prefer *prefer; /* --prefer, in order of importance */
  size_t n_prefer;
} ana_answer_opts;

#define ANA_RECO_CANDIDATES 5

typedef struct ana_reco {
  size_t n_qualifying;
  long best;      /* index into s->points, -1 when none qualifies */
  long runner_up; /* second-cheapest qualifying point, -1 when none */
  long closest;   /* when none qualifies: the nearest miss */
  double miss_meta, miss_pass; /* how far closest misses each target (0 = meets) */
  size_t n_reject_meta, n_reject_pass; /* points failing each test */
  size_t n_refuted;  /* non-qualifying points whose 95% interval lies wholly outside a target */
  size_t n_unproven; /* non-qualifying points consistent with the targets (need more runs) */
  size_t n_collapsed_points; /* points with a run that collapsed without a fault (refuted) */
  size_t n_candidates;
  long candidates[ANA_RECO_CANDIDATES]; /* unproven points, nearest miss first */
  int64_t min_runs, max_runs;  /* runs per point in the file */
  int64_t runs_needed;         /* per point, for a perfect point to qualify */
  /* Tunable vs scenario axes (docs/decisions.md): filled when the file has
   * a scenario axis; then best/runner_up/closest above name the worst
   * scenario cell of the robust choice / runner-up / nearest miss. */
  ana_split split;             /* n_tun = 0 when the file has no scenario axis */
  long robust, robust_runner_up; /* tunable combinations qualifying at every scenario value */
  long robust_closest;         /* when none does: the one qualifying at most scenario values */
  size_t robust_qualifying;    /* tunable combinations qualifying everywhere */
  size_t robust_closest_cells; /* scenario values where robust_closest qualifies */
  long *scen_best;             /* n_scen: point index of the cheapest qualifying point there */
  long *scen_closest;          /* n_scen: its nearest miss when none qualifies (-1: no runs) */
} ana_reco;

/* Frees what ana_recommend allocated (safe on a zeroed struct). */
void ana_reco_free(ana_reco *rec);

int ana_recommend(ana_reco *out, const fmt_results *r, const ana_summary *s,
                  const ana_reco_opts *o);
/* The recommendation as text (several lines). Returns a malloc'd string. */
char *ana_reco_text(const ana_reco *rec, const fmt_results *r, const ana_summary *s,
                    const ana_reco_opts *o);

/* The recommendation of a file `refine` worked on: the proven point with its
 * SPRT evidence (or why none qualifies, or what is still open), from v, the
 * verdict recomputed from the file's runs (refine_eval.h: ana_refined_load).
 * Returns a malloc'd string, NULL when out of memory. */
struct ana_refined;
char *ana_reco_refined_text(const struct ana_refined *v, const fmt_results *r,
                            const ana_summary *s);

/* The whole answer: for a file without refine, ana_reco_text; for a refined
 * one, its proof when the design's targets are at least as strict as those
 * asked (o, s->slo_ms), else the answer judged again from the runs, never
 * called proven; then why (recommend_explain.c): the cost rule, the safe set
 * (every point meeting the targets on the evidence) by axis, which axes
 * change the answer at the chosen point, grid-edge warnings and the
 * preferences. *chosen is the point index explained (-1: none). Returns a
 * malloc'd string, NULL when out of memory. */
char *ana_reco_answer(const ana_reco *rec, const fmt_results *r, const ana_summary *s,
                      const ana_reco_opts *o, const ana_answer_opts *ao,
                      const struct ana_refined *v, long *chosen);
/* Meets the targets on the evidence: runs, none collapsed, and the observed
 * P(pass) (undetermined runs do not pass) and P(bad) meet them (not
 * a proof). */
int ana_reco_on_evidence(const ana_point_stats *ps, const ana_reco_opts *o);
/* Parses "KEY=VALUE" into p: KEY an axis of r, VALUE one of its values (as
 * a label or a number). 0, or -1 with a message. */
int ana_prefer_parse(const fmt_results *r, const char *arg, ana_prefer *p, char *err,
                     size_t errlen);

/* Writes /analysis (replacing an existing one); opens the file read-write. */
int ana_analysis_store(const char *path, const fmt_results *r, const ana_summary *s,
                       const char *recommendation, char *err, size_t errlen);

/* ======================================================================== */
/* Report (report.c)                                                         */
/* ======================================================================== */

typedef struct ana_report_opts {
  const char *dir;
  long x_axis, y_axis;     /* -1 = choose by effect */
  const int64_t *points;   /* point ids for curves; NULL = recommended + worst */
  size_t n_points;
  ana_reco_opts reco;
  ana_answer_opts answer;
  const struct ana_refined *refined; /* a refined file's recomputed verdict, or NULL */
  const char *gnuplot;     /* program name, default "gnuplot" */
  const volatile sig_atomic_t *stop; /* raised: stop, leaving an earlier report as it was */
} ana_report_opts;

int ana_report_write(const fmt_results *r, const ana_summary *s, const ana_report_opts *o,
                     FILE *log, char *err, size_t errlen);

#endif
