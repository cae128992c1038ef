/*
 * stats.c — the pure statistics behind `analyze`, `recommend` and `report`:
 * binomial confidence intervals, Kaplan–Meier survival with right
 * censoring and its quantiles, histograms, sample quantiles and t intervals
 * for means.
 *
 * Everything here is a pure function of its arguments (no globals, no I/O),
 * so it is safe from any thread and tested on its own against known answers
 * (tests/test_stats.c).
 *
 * The exact (Clopper–Pearson) interval and the Student t quantile both come
 * from the regularized incomplete beta function I_x(a, b), evaluated with the
 * Lentz continued fraction and inverted by bisection: I_x is monotone in x,
 * so 200 halvings of [0, 1] pin the root to the last bit without any
 * convergence worries, and the cost (a few hundred microseconds per interval)
 * is irrelevant next to reading the file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"

/* ------------------------------------------------------------------------ */
/* Incomplete beta                                                           */
/* ------------------------------------------------------------------------ */

/* Continued fraction for I_x(a, b) (modified Lentz); converges quickly for
 * x < (a + 1) / (a + b + 2), which the caller arranges by symmetry. */
static double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-16;
  double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0, d = 1.0 - qab * x / qap;
  if (fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 10000; m++) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1.0) < eps) break;
  }
  return h;
}

double ana_beta_inc(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || isnan(x)) return NAN;
  if (x <= 0) return 0.0;
  if (x >= 1) return 1.0;
  /* lgamma is only called with positive arguments, where it needs no sign. */
  double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  double bt = exp(lbt);
  if (x < (a + 1.0) / (a + b + 2.0)) return bt * beta_cf(a, b, x) / a;
  return 1.0 - bt * beta_cf(b, a, 1.0 - x) / b;
}

double ana_beta_inc_inv(double a, double b, double p) {
  if (!(a > 0) || !(b > 0) || isnan(p)) return NAN;
  if (p <= 0) return 0.0;
  if (p >= 1) return 1.0;
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 200; i++) {
    double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (ana_beta_inc(a, b, mid) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

/* ------------------------------------------------------------------------ */
/* Binomial proportions                                                      */
/* ------------------------------------------------------------------------ */

const char *ana_method_name(ana_method m) {
  return m == ANA_INTERVAL_EXACT ? "Clopper-Pearson exact" : "Wilson score";
}

ana_interval ana_wilson(int64_t k, int64_t n, double z) {
  ana_interval r = {NAN, NAN};
  if (n <= 0 || k < 0 || k > n) return r;
  double nn = (double)n, p = (double)k / nn, z2 = z * z;
  double denom = 1.0 + z2 / nn;
  double centre = (p + z2 / (2.0 * nn)) / denom;
  double half = z / denom * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
  r.lo = k == 0 ? 0.0 : fmax(0.0, centre - half);
  r.hi = k == n ? 1.0 : fmin(1.0, centre + half);
  return r;
}

ana_interval ana_clopper_pearson(int64_t k, int64_t n, double conf) {
  ana_interval r = {NAN, NAN};
  if (n <= 0 || k < 0 || k > n || !(conf > 0 && conf < 1)) return r;
  double alpha = 1.0 - conf;
  double kk = (double)k, nn = (double)n;
  r.lo = k == 0 ? 0.0 : ana_beta_inc_inv(kk, nn - kk + 1.0, alpha / 2.0);
  r.hi = k == n ? 1.0 : ana_beta_inc_inv(kk + 1.0, nn - kk, 1.0 - alpha / 2.0);
  return r;
}

ana_interval ana_proportion_interval(ana_method m, int64_t k, int64_t n) {
  return m == ANA_INTERVAL_EXACT ? ana_clopper_pearson(k, n, 0.95) : ana_wilson(k, n, ANA_Z95);
}

int64_t ana_runs_needed(double max_meta, double min_pass, double conf) {
  /* The best a point with n runs can show is 0 metastable and n passing;
   * the exact bounds of those only tighten as n grows, so the first n that
   * meets both targets is the answer. */
  for (int64_t n = 1; n <= 100000000; n = n < 1024 ? n + 1 : n + n / 64) {
    ana_interval meta = ana_clopper_pearson(0, n, conf);
    ana_interval pass = ana_clopper_pearson(n, n, conf);
    if (meta.hi <= max_meta && pass.lo >= min_pass) return n;
  }
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Means                                                                     */
/* ------------------------------------------------------------------------ */

double ana_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return NAN;
  if (p == 0.5) return 0.0;
  /* P(|T| > t) = I_{df/(df+t^2)}(df/2, 1/2): solve for the tail mass. */
  double tail = p > 0.5 ? 2.0 * (1.0 - p) : 2.0 * p;
  double x = ana_beta_inc_inv(df / 2.0, 0.5, tail);
  double t = x > 0 ? sqrt(df * (1.0 - x) / x) : INFINITY;
  return p > 0.5 ? t : -t;
}

ana_mean ana_mean_compute(const double *x, size_t n) {
  ana_mean m = {0, NAN, NAN, {NAN, NAN}};
  double sum = 0.0;
  for (size_t i = 0; i < n; i++)
    if (!isnan(x[i])) {
      sum += x[i];
      m.n++;
    }
  if (m.n == 0) return m;
  m.mean = sum / (double)m.n;
  if (!isfinite(m.mean)) return m; /* an inf sample makes spread meaningless */
  double ss = 0.0;
  for (size_t i = 0; i < n; i++)
    if (!isnan(x[i])) ss += (x[i] - m.mean) * (x[i] - m.mean);
  if (m.n < 2) {
    m.sd = NAN;
    m.ci.lo = m.ci.hi = m.mean;
    return m;
  }
  m.sd = sqrt(ss / (double)(m.n - 1));
  double half = ana_t_quantile(0.975, (double)(m.n - 1)) * m.sd / sqrt((double)m.n);
  m.ci.lo = m.mean - half;
  m.ci.hi = m.mean + half;
  return m;
}

/* ------------------------------------------------------------------------ */
/* Sample quantiles                                                          */
/* ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void ana_sort_doubles(double *x, size_t n) { qsort(x, n, sizeof *x, cmp_double); }

double ana_quantile_sorted(const double *x, size_t n, double q) {
  if (n == 0 || isnan(q)) return NAN;
  if (q <= 0) return x[0];
  if (q >= 1) return x[n - 1];
  double h = q * (double)(n - 1);
  size_t i = (size_t)floor(h);
  if (i + 1 >= n) return x[n - 1];
  double frac = h - (double)i;
  return x[i] + frac * (x[i + 1] - x[i]);
}

/* ------------------------------------------------------------------------ */
/* Kaplan–Meier                                                              */
/* ------------------------------------------------------------------------ */

typedef struct km_obs {
  double t;
  int event;
} km_obs;

static int cmp_obs(const void *a, const void *b) {
  const km_obs *x = a, *y = b;
  if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
  return (y->event > x->event) - (y->event < x->event); /* events before censorings */
}

int ana_km_compute(ana_km *km, const double *time, const unsigned char *event, size_t n) {
  memset(km, 0, sizeof *km);
  if (n == 0) return 0;
  km_obs *obs = malloc(n * sizeof *obs);
  km->steps = malloc(n * sizeof *km->steps);
  if (!obs || !km->steps) {
    free(obs);
    free(km->steps);
    km->steps = NULL;
    return -1;
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(time[i])) continue; /* a run without a time carries no information */
    obs[m].t = time[i];
    obs[m].event = event[i] != 0;
    m++;
  }
  qsort(obs, m, sizeof *obs, cmp_obs);
  km->n_obs = m;
  double surv = 1.0;
  int64_t at_risk = (int64_t)m;
  for (size_t i = 0; i < m;) {
    size_t j = i;
    int64_t d = 0, c = 0;
    while (j < m && obs[j].t == obs[i].t) {
      if (obs[j].event)
        d++;
      else
        c++;
      j++;
    }
    /* Censorings at t count as at risk at t (they outlived the events). */
    if (d > 0) surv *= 1.0 - (double)d / (double)at_risk;
    ana_km_step *s = &km->steps[km->n_steps++];
    s->t = obs[i].t;
    s->surv = surv;
    s->at_risk = at_risk;
    s->events = d;
    s->censored = c;
    km->n_events += (size_t)d;
    if (c > 0 && obs[i].t > km->censor_max) km->censor_max = obs[i].t;
    at_risk -= d + c;
    i = j;
  }
  free(obs);
  return 0;
}

void ana_km_free(ana_km *km) {
  free(km->steps);
  memset(km, 0, sizeof *km);
}

double ana_km_survival(const ana_km *km, double t) {
  double s = 1.0;
  for (size_t i = 0; i < km->n_steps && km->steps[i].t <= t; i++) s = km->steps[i].surv;
  return s;
}

double ana_km_quantile(const ana_km *km, double q) {
  if (km->n_obs == 0) return NAN;
  /* The q-quantile is the first time the survival curve reaches 1 - q; the
   * small slack keeps 0.75 * 2/3 "equal to" 0.5 despite rounding. */
  double target = 1.0 - q + 1e-9;
  for (size_t i = 0; i < km->n_steps; i++)
    if (km->steps[i].events > 0 && km->steps[i].surv <= target) return km->steps[i].t;
  return INFINITY;
}

double ana_km_rmst(const ana_km *km, double tau, double *se) {
  if (se) *se = NAN;
  if (km->n_obs == 0 || !(tau >= 0)) return NAN;
  /* area[i] = integral of S from step i's time to tau (S after step i). */
  double total = 0.0, prev_t = 0.0, s = 1.0;
  size_t last = 0;
  for (size_t i = 0; i < km->n_steps && km->steps[i].t <= tau; i++, last = i) {
    total += s * (km->steps[i].t - prev_t);
    prev_t = km->steps[i].t;
    s = km->steps[i].surv;
  }
  total += s * (tau - prev_t);
  if (se) {
    double var = 0.0, tail = 0.0;
    double next_t = tau;
    for (size_t i = last; i-- > 0;) {
      const ana_km_step *st = &km->steps[i];
      tail += st->surv * (next_t - st->t); /* integral of S from t_i to tau */
      next_t = st->t;
      int64_t y = st->at_risk, d = st->events;
      if (d > 0 && y > d) var += tail * tail * (double)d / ((double)y * (double)(y - d));
    }
    *se = sqrt(var);
  }
  return total;
}

/* ------------------------------------------------------------------------ */
/* Histograms                                                                */
/* ------------------------------------------------------------------------ */

int ana_histogram_fill(ana_histogram *h, const double *x, size_t n, double lo, double hi,
                       size_t nbins) {
  memset(h, 0, sizeof *h);
  if (nbins == 0 || !(hi > lo) || !isfinite(lo) || !isfinite(hi)) return -1;
  h->counts = calloc(nbins, sizeof *h->counts);
  if (!h->counts) return -1;
  h->lo = lo;
  h->hi = hi;
  h->nbins = nbins;
  double width = (hi - lo) / (double)nbins;
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    if (isnan(v)) {
      h->missing++;
    } else if (v < lo) {
      h->under++;
    } else if (v > hi) {
      h->over++;
    } else {
      size_t b = (size_t)((v - lo) / width);
      if (b >= nbins) b = nbins - 1; /* v == hi belongs to the last bin */
      h->counts[b]++;
    }
  }
  return 0;
}

void ana_histogram_free(ana_histogram *h) {
  free(h->counts);
  memset(h, 0, sizeof *h);
}
