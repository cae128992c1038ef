/*
 * boundary.h — where a binary outcome's probability crosses a level along one
 * numeric axis (`stormsweep boundary`, docs/reference.md "Boundary search").
 *
 * Model: the outcome y of a run at axis value x is Bernoulli with
 *
 *   logit P(y = 1 | x) = a + b t,   t = x, or t = ln x with a log axis,
 *
 * fitted by maximum likelihood (Newton–Raphson). The crossing of level P is
 * t* = (logit P - a) / b. Its interval is the profile-likelihood interval
 *
 *   { t* : 2 (l_max - l_p(t*)) <= z^2 },  l_p(t*) = max over b of
 *        sum_i y_i eta_i - ln(1 + e^eta_i),  eta_i = logit P + b (t_i - t*),
 *
 * with b held to the fitted direction (the response is taken as monotone in x)
 * and |b| <= ANA_BND_SLOPE_CAP / (range width), so that completely separated
 * data (a deterministic step, where the MLE is at infinity) still give a
 * finite interval: the gap between the two classes, widened by the few
 * runs' worth of likelihood the cap allows. Endpoints beyond the searched
 * range are clipped to it and flagged open.
 *
 * The sequential design (ana_bnd_search_run) starts with a batch spread
 * evenly over the range, then places each batch evenly (at golden-ratio
 * offsets) over every unresolved crossing's current interval widened by
 * its width on each side, until each interval is narrower than the target
 * width or the run budget is spent. Everything here is pure: the runs come
 * from a caller-supplied oracle (the engine in cmd_boundary.c, synthetic
 * curves in tests/test_boundary.c).
 */
#ifndef STORMSWEEP_BOUNDARY_H
#define STORMSWEEP_BOUNDARY_H

#include <stddef.h>
#include <stdint.h>

#define ANA_BND_MAX_RESP 2        /* responses searched at once (metastable, pass) */
#define ANA_BND_SLOPE_CAP 1000.0  /* |b| <= this / range width */

/* Maximum-likelihood logistic fit of y on t. */
typedef struct ana_bnd_fit {
  double a, b;        /* logit p = a + b t; for separated data, a step's limit */
  double cov[3];      /* inverse information: var a, cov(a,b), var b (NaN when separated) */
  double loglik;      /* maximum (supremum for separated data) */
  int direction;      /* +1: p rises with t, -1: falls, 0: no data or one class only */
  int separated;      /* 1: the classes do not overlap in t (MLE slope infinite) */
  double gap_lo, gap_hi; /* separated: the t interval between the classes */
  int64_t n, n_pos;
} ana_bnd_fit;

int ana_bnd_fit_logistic(const double *t, const uint8_t *y, size_t n, ana_bnd_fit *fit);

/* Crossing of one level, in t. */
typedef enum ana_bnd_status {
  ANA_BND_NONE = 0,   /* not computed yet */
  ANA_BND_FOUND,      /* estimate inside the range */
  ANA_BND_BELOW,      /* estimate below the range start: P is past the level everywhere */
  ANA_BND_ABOVE,      /* estimate beyond the range end */
  ANA_BND_ABSENT,     /* every run had the same outcome: no crossing to locate */
  ANA_BND_NONMONOTONE /* the binned response falls and rises (or rises and falls): the
                         monotone model does not hold, so there is no one crossing */
} ana_bnd_status;

const char *ana_bnd_status_name(ana_bnd_status s);

typedef struct ana_bnd_crossing {
  double level;
  ana_bnd_status status;
  double est, lo, hi;  /* t*, and its profile-likelihood interval (clipped to the range) */
  int lo_open, hi_open; /* the interval reaches the range end on that side */
  double se_delta;     /* delta-method standard error of t* (NaN when separated) */
  /* ANA_BND_NONMONOTONE: three bins of runs (sorted by t, equal counts) whose
   * proportions go down then up (or up then down), each pair's 99.9% Wilson
   * intervals apart: the bins' median t and observed proportion. */
  double nm_t[3], nm_p[3];
} ana_bnd_crossing;

/* Crossing of level (0 < level < 1) with interval at confidence conf, the
 * range [rlo, rhi] in t. Cost: O(n) per likelihood evaluation, about 40
 * evaluations per interval end. */
int ana_bnd_crossing_compute(const double *t, const uint8_t *y, size_t n, const ana_bnd_fit *fit,
                             double level, double conf, double rlo, double rhi,
                             ana_bnd_crossing *c);

/* The monotonicity check behind ANA_BND_NONMONOTONE: the runs sorted by t
 * into equal-count bins (about 25 runs each, 3 to 12 bins, ties kept
 * together); the response is non-monotone when some bins a < b < c have
 * b's 99.9% Wilson interval wholly below (or above) both a's and c's. A
 * monotone curve, however flat or steep, almost never shows that (no false
 * alarm in the 1000 crossings of tests/test_boundary.c's coverage trials).
 * Returns 1 and fills c->nm_t, c->nm_p when non-monotone, else 0. */
int ana_bnd_monotone_check(const double *t, const uint8_t *y, size_t n, ana_bnd_crossing *c);

/* The crossing as boundary prints it, in x: "0.9949     [0.9817, 1.009]";
 * "below range (< LO); its 95% interval reaches up to X" (or "...: its 95%
 * interval lies below the range too" when the profile rejects the range
 * start itself, never a degenerate [LO, LO]), the same above the range;
 * "none in range (...)"; "none: non-monotone between X and Y (...)". pass:
 * the response is "did not pass", its proportions shown as P(pass) = 1 -
 * them. */
struct ana_bnd_opts;
void ana_bnd_crossing_text(const struct ana_bnd_opts *o, const ana_bnd_crossing *c, int pass,
                           char *buf, size_t len);

/* Two-sided standard normal quantile for confidence conf (1.959964 at 0.95). */
double ana_bnd_z(double conf);

/* A uniform grid of equal precision (docs/reference.md "Boundary search"): levels
 * evenly spaced over [rlo, rhi] no farther apart than the crossing's
 * interval is wide, the same replicates at each, enough that the expected
 * Fisher information for t* under the fitted curve matches the adaptive
 * design's. For a separated (step) response one run per level suffices.
 * Returns the runs (levels x replicates), or -1 when it means nothing: no
 * crossing inside the range (absent, beyond either end, non-monotone), or an
 * interval so narrow the grid would need more than 100000 levels. */
int64_t ana_bnd_uniform_equivalent(const double *t, size_t n, const ana_bnd_fit *fit,
                                   const ana_bnd_crossing *c, double rlo, double rhi,
                                   int64_t *levels, int64_t *replicates);

/* ---- the sequential search ---- */

typedef struct ana_bnd_opts {
  double lo, hi;       /* axis range in x (lo < hi; both > 0 with log_scale) */
  int log_scale;       /* t = ln x */
  size_t n_resp;       /* responses (1..ANA_BND_MAX_RESP) */
  double level[ANA_BND_MAX_RESP];
  double conf;         /* interval confidence (0.95) */
  double width;        /* stop when interval width <= width x (range width in t) */
  int64_t max_runs;    /* budget */
  int64_t batch;       /* runs per batch (>= 2) */
  int64_t min_runs;    /* no crossing counts as resolved before this many runs (0: 6 batches) */
} ana_bnd_opts;

/* Evaluates runs first .. first+m-1 at axis values x[0..m) and stores
 * response r of run i in y[r][i] (0/1). Returns 0, or -1 with err set. */
typedef int (*ana_bnd_oracle)(void *user, int64_t first, size_t m, const double *x,
                              uint8_t *const *y, char *err, size_t errlen);

typedef struct ana_bnd_search {
  ana_bnd_opts o;
  int64_t n, cap;      /* runs done; allocated */
  double *x, *t;
  uint8_t *y[ANA_BND_MAX_RESP];
  ana_bnd_fit fit[ANA_BND_MAX_RESP];
  ana_bnd_crossing cross[ANA_BND_MAX_RESP];
  int resolved[ANA_BND_MAX_RESP];
  int narrow[ANA_BND_MAX_RESP]; /* the interval was narrow enough at the previous look */
  int64_t batches;
} ana_bnd_search;

/* Validates o (-1 with a message naming the option when it is unusable). */
int ana_bnd_opts_check(const ana_bnd_opts *o, char *err, size_t errlen);
/* Runs the sequential design to completion. s is initialised here; free
 * it with ana_bnd_search_free even on error. */
int ana_bnd_search_run(ana_bnd_search *s, const ana_bnd_opts *o, ana_bnd_oracle oracle,
                       void *user, char *err, size_t errlen);
void ana_bnd_search_free(ana_bnd_search *s);
/* Refits and recomputes every crossing from the runs held (search_run does). */
int ana_bnd_search_update(ana_bnd_search *s);

/* Axis value of t and back. */
double ana_bnd_x_of_t(const ana_bnd_opts *o, double t);
double ana_bnd_t_of_x(const ana_bnd_opts *o, double x);

#endif
