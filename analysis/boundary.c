/*
 * boundary.c — logistic fit, profile-likelihood interval of a crossing, the
 * uniform-grid equivalent and the sequential design of `stormsweep boundary`
 * (the model and the interval are described in boundary.h and the README).
 *
 * Why profile likelihood rather than the delta method or Fieller: near a
 * sharp edge the sampling distribution of t* = (logit P - a)/b is skewed and
 * the delta-method interval is symmetric, and for separated data (a
 * deterministic step) the delta method and Fieller have no information
 * matrix to work with at all, while the profile still bounds the step by
 * the gap between the classes. tests/test_boundary.c measures its coverage
 * on synthetic curves through the whole sequential design.
 */
#include "boundary.h"

#include "ana.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void seterr(char *err, size_t len, const char *msg) {
  if (err && len) {
    strncpy(err, msg, len - 1);
    err[len - 1] = 0;
  }
}

/* ln(1 + e^x) without overflow. */
static double log1pexp(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

static double expit(double x) {
  if (x >= 0) return 1 / (1 + exp(-x));
  double e = exp(x);
  return e / (1 + e);
}

static double logit(double p) { return log(p / (1 - p)); }

double ana_bnd_z(double conf) {
  double target = (1 - conf) / 2, lo = 0, hi = 40;
  for (int i = 0; i < 200; i++) {
    double mid = (lo + hi) / 2;
    if (0.5 * erfc(mid / sqrt(2.0)) > target)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

const char *ana_bnd_status_name(ana_bnd_status s) {
  switch (s) {
  case ANA_BND_FOUND: return "found";
  case ANA_BND_BELOW: return "below-range";
  case ANA_BND_ABOVE: return "above-range";
  case ANA_BND_ABSENT: return "absent";
  case ANA_BND_NONMONOTONE: return "non-monotone";
  default: return "none";
  }
}

double ana_bnd_x_of_t(const ana_bnd_opts *o, double t) { return o->log_scale ? exp(t) : t; }
double ana_bnd_t_of_x(const ana_bnd_opts *o, double x) { return o->log_scale ? log(x) : x; }

/* ---- fit ---- */

/* Log-likelihood of a binomial sample at its own proportion (0 when pure). */
static double binom_sup(int64_t k, int64_t m) {
  if (k <= 0 || k >= m) return 0;
  double p = (double)k / (double)m;
  return (double)k * log(p) + (double)(m - k) * log1p(-p);
}

int ana_bnd_fit_logistic(const double *t, const uint8_t *y, size_t n, ana_bnd_fit *fit) {
  memset(fit, 0, sizeof *fit);
  fit->cov[0] = fit->cov[1] = fit->cov[2] = NAN;
  fit->gap_lo = fit->gap_hi = NAN;
  fit->n = (int64_t)n;
  double max0 = -INFINITY, min0 = INFINITY, max1 = -INFINITY, min1 = INFINITY, mean = 0;
  for (size_t i = 0; i < n; i++) {
    mean += t[i];
    if (y[i]) {
      fit->n_pos++;
      max1 = fmax(max1, t[i]);
      min1 = fmin(min1, t[i]);
    } else {
      max0 = fmax(max0, t[i]);
      min0 = fmin(min0, t[i]);
    }
  }
  if (n == 0 || fit->n_pos == 0 || fit->n_pos == (int64_t)n) {
    fit->a = n ? (fit->n_pos ? INFINITY : -INFINITY) : NAN;
    fit->b = 0;
    fit->loglik = 0;
    return 0;
  }
  mean /= (double)n;
  /* (Quasi-)complete separation: the classes meet at most at one t value,
   * where the supremum leaves that value's own proportion. */
  if (max0 <= min1 || max1 <= min0) {
    fit->separated = 1;
    fit->direction = max0 <= min1 ? 1 : -1;
    fit->gap_lo = fit->direction > 0 ? max0 : max1;
    fit->gap_hi = fit->direction > 0 ? min1 : min0;
    if (fit->gap_lo == fit->gap_hi) {
      int64_t k = 0, m = 0;
      for (size_t i = 0; i < n; i++)
        if (t[i] == fit->gap_lo) {
          m++;
          k += y[i] != 0;
        }
      fit->loglik = binom_sup(k, m);
    }
    fit->b = fit->direction * INFINITY;
    fit->a = NAN;
    return 0;
  }
  /* Newton-Raphson on centred t, with step halving. */
  double a = logit((double)fit->n_pos / (double)n), b = 0;
  double l = 0;
  for (size_t i = 0; i < n; i++) l += (y[i] ? a : 0) - log1pexp(a);
  double h00 = 0, h01 = 0, h11 = 0;
  for (int it = 0; it < 200; it++) {
    double g0 = 0, g1 = 0;
    h00 = h01 = h11 = 0;
    for (size_t i = 0; i < n; i++) {
      double tc = t[i] - mean, p = expit(a + b * tc), w = p * (1 - p);
      g0 += y[i] - p;
      g1 += (y[i] - p) * tc;
      h00 += w;
      h01 += w * tc;
      h11 += w * tc * tc;
    }
    double det = h00 * h11 - h01 * h01;
    if (!(det > 0)) break;
    double da = (h11 * g0 - h01 * g1) / det, db = (h00 * g1 - h01 * g0) / det;
    double step = 1, ln = -INFINITY;
    for (int k = 0; k < 40; k++, step /= 2) {
      double na = a + step * da, nb = b + step * db;
      ln = 0;
      for (size_t i = 0; i < n; i++) {
        double eta = na + nb * (t[i] - mean);
        ln += (y[i] ? eta : 0) - log1pexp(eta);
      }
      if (ln >= l - 1e-12) break;
    }
    a += step * da;
    b += step * db;
    double change = fabs(ln - l);
    l = ln;
    if (change < 1e-10 && fabs(step * db) < 1e-9 * (1 + fabs(b))) break;
  }
  /* Covariance of (a_uncentred, b) from the centred information matrix. */
  double det = h00 * h11 - h01 * h01;
  if (det > 0) {
    double vac = h11 / det, vb = h00 / det, cab = -h01 / det;
    /* a_unc = a_c - b * mean */
    fit->cov[0] = vac - 2 * mean * cab + mean * mean * vb;
    fit->cov[1] = cab - mean * vb;
    fit->cov[2] = vb;
  }
  fit->a = a - b * mean;
  fit->b = b;
  fit->loglik = l;
  fit->direction = b > 0 ? 1 : (b < 0 ? -1 : 0);
  return 0;
}

/* ---- profile likelihood of the crossing ---- */

/* max over u in [0, ucap] of sum y eta - ln(1 + e^eta), eta = L + u s (t - tc). */
static double profile_at(const double *t, const uint8_t *y, size_t n, double L, int s, double tc,
                         double ucap) {
  double lo = 0, hi = ucap;
  /* derivative at a slope u */
#define DERIV(u, d, h)                                        \
  do {                                                        \
    d = 0;                                                    \
    h = 0;                                                    \
    for (size_t i_ = 0; i_ < n; i_++) {                       \
      double z_ = s * (t[i_] - tc), p_ = expit(L + (u) * z_); \
      d += (y[i_] - p_) * z_;                                 \
      h += p_ * (1 - p_) * z_ * z_;                           \
    }                                                         \
  } while (0)
  double d, h, u;
  DERIV(0.0, d, h);
  if (d <= 0) {
    u = 0;
  } else {
    DERIV(ucap, d, h);
    if (d >= 0) {
      u = ucap;
    } else {
      /* Safeguarded Newton on the bracket [lo, hi] where the derivative changes sign. */
      u = ucap / 1e3;
      for (int it = 0; it < 100; it++) {
        DERIV(u, d, h);
        if (d > 0)
          lo = u;
        else
          hi = u;
        double nu = h > 0 ? u + d / h : -1;
        if (!(nu > lo && nu < hi)) nu = (lo + hi) / 2;
        if (fabs(nu - u) <= 1e-10 * (1 + u) || hi - lo <= 1e-12 * (1 + hi)) {
          u = nu;
          break;
        }
        u = nu;
      }
    }
  }
#undef DERIV
  double l = 0;
  for (size_t i = 0; i < n; i++) {
    double eta = L + u * s * (t[i] - tc);
    l += (y[i] ? eta : 0) - log1pexp(eta);
  }
  return l;
}

int ana_bnd_crossing_compute(const double *t, const uint8_t *y, size_t n, const ana_bnd_fit *fit,
                             double level, double conf, double rlo, double rhi,
                             ana_bnd_crossing *c) {
  memset(c, 0, sizeof *c);
  c->level = level;
  c->est = c->lo = c->hi = c->se_delta = NAN;
  if (!(level > 0 && level < 1) || !(rhi > rlo)) return -1;
  if (n == 0) return 0;
  if (fit->direction == 0) {
    c->status = ANA_BND_ABSENT;
    c->lo = rlo;
    c->hi = rhi;
    c->lo_open = c->hi_open = 1;
    return 0;
  }
  double L = logit(level), z = ana_bnd_z(conf), crit = z * z;
  int s = fit->direction;
  double ucap = ANA_BND_SLOPE_CAP / (rhi - rlo);
  double lmax = fit->loglik;
  if (fit->separated) {
    c->est = (fit->gap_lo + fit->gap_hi) / 2;
  } else {
    c->est = (L - fit->a) / fit->b;
    double g0 = -1 / fit->b, g1 = -c->est / fit->b;
    double v = g0 * g0 * fit->cov[0] + 2 * g0 * g1 * fit->cov[1] + g1 * g1 * fit->cov[2];
    c->se_delta = v >= 0 ? sqrt(v) : NAN;
  }
  /* Start the outward searches from a point inside the interval. */
  double start = fmin(fmax(c->est, rlo), rhi);
  double lstart = profile_at(t, y, n, L, s, start, ucap);
  /* Separated data: the supremum is out of reach of the capped slope, so the
   * interval is taken relative to the best the cap allows. */
  if (fit->separated || lstart > lmax) lmax = lstart;
  for (int side = 0; side < 2; side++) {
    double edge = side ? rhi : rlo;
    double dv = 2 * (lmax - profile_at(t, y, n, L, s, edge, ucap));
    double *out = side ? &c->hi : &c->lo;
    if (dv <= crit) {
      *out = edge;
      if (side)
        c->hi_open = 1;
      else
        c->lo_open = 1;
      continue;
    }
    double in = start, outp = edge;
    for (int it = 0; it < 60 && fabs(outp - in) > 1e-5 * (rhi - rlo); it++) {
      double mid = (in + outp) / 2;
      if (2 * (lmax - profile_at(t, y, n, L, s, mid, ucap)) <= crit)
        in = mid;
      else
        outp = mid;
    }
    *out = (in + outp) / 2;
  }
  if (ana_bnd_monotone_check(t, y, n, c))
    c->status = ANA_BND_NONMONOTONE;
  else if (c->est < rlo)
    c->status = ANA_BND_BELOW;
  else if (c->est > rhi)
    c->status = ANA_BND_ABOVE;
  else
    c->status = ANA_BND_FOUND;
  return 0;
}

/* ---- text ---- */

static void fmt_x(double v, char *buf, size_t len) { snprintf(buf, len, "%.4g", v); }

void ana_bnd_crossing_text(const ana_bnd_opts *o, const ana_bnd_crossing *c, int pass,
                           char *buf, size_t len) {
  char e[32], lo[32], hi[32], rlo[32], rhi[32];
  fmt_x(ana_bnd_x_of_t(o, c->est), e, sizeof e);
  fmt_x(ana_bnd_x_of_t(o, c->lo), lo, sizeof lo);
  fmt_x(ana_bnd_x_of_t(o, c->hi), hi, sizeof hi);
  fmt_x(o->lo, rlo, sizeof rlo);
  fmt_x(o->hi, rhi, sizeof rhi);
  /* An interval clipped to one end of the range down to nothing: the
   * profile rejects even that end, so the interval lies wholly beyond it. */
  double tlo = ana_bnd_t_of_x(o, o->lo), thi = ana_bnd_t_of_x(o, o->hi);
  double tiny = 1e-3 * (thi - tlo);
  switch (c->status) {
  case ANA_BND_FOUND:
    snprintf(buf, len, "%-10s [%s%s, %s%s]", e, c->lo_open ? "<=" : "", lo, hi,
             c->hi_open ? "+" : "");
    break;
  case ANA_BND_BELOW:
    if (c->hi - tlo <= tiny)
      snprintf(buf, len, "below range (< %s): its 95%% interval lies below the range too", rlo);
    else
      snprintf(buf, len, "below range (< %s); its 95%% interval reaches up to %s", rlo, hi);
    break;
  case ANA_BND_ABOVE:
    if (thi - c->lo <= tiny)
      snprintf(buf, len, "above range (> %s): its 95%% interval lies above the range too", rhi);
    else
      snprintf(buf, len, "above range (> %s); its 95%% interval reaches down to %s", rhi, lo);
    break;
  case ANA_BND_ABSENT:
    snprintf(buf, len, "none in range (every run had the same outcome)");
    break;
  case ANA_BND_NONMONOTONE: {
    char x[3][32];
    double p[3];
    for (int j = 0; j < 3; j++) {
      fmt_x(ana_bnd_x_of_t(o, c->nm_t[j]), x[j], sizeof x[j]);
      p[j] = pass ? 1 - c->nm_p[j] : c->nm_p[j];
    }
    int down = p[1] < p[0];
    snprintf(buf, len,
             "none: non-monotone between %s and %s (binned runs: %.2f near %s, %s to %.2f near "
             "%s, %s to %.2f near %s; 99.9%% intervals apart), so no single crossing",
             x[0], x[2], p[0], x[0], down ? "down" : "up", p[1], x[1], down ? "up" : "down", p[2],
             x[2]);
    break;
  }
  default:
    snprintf(buf, len, "-");
  }
}

/* ---- monotonicity ---- */

static const double *sort_t; /* qsort's comparison has no user pointer */
static int cmp_index_t(const void *x, const void *y) {
  double a = sort_t[*(const size_t *)x], b = sort_t[*(const size_t *)y];
  return (a > b) - (a < b);
}

#define NM_MAX_BINS 12
#define NM_RUNS_PER_BIN 25
#define NM_Z 3.2905 /* 99.9% two-sided */

int ana_bnd_monotone_check(const double *t, const uint8_t *y, size_t n, ana_bnd_crossing *c) {
  size_t nb = n / NM_RUNS_PER_BIN;
  if (nb > NM_MAX_BINS) nb = NM_MAX_BINS;
  if (nb < 3) return 0;
  size_t *ix = malloc(n * sizeof *ix);
  if (!ix) return 0;
  for (size_t i = 0; i < n; i++) ix[i] = i;
  sort_t = t;
  qsort(ix, n, sizeof *ix, cmp_index_t);
  int64_t k[NM_MAX_BINS] = {0}, m[NM_MAX_BINS] = {0};
  double med[NM_MAX_BINS];
  size_t bins = 0, first = 0;
  for (size_t i = 0; i < n && bins < nb; i++) {
    k[bins] += y[ix[i]] != 0;
    m[bins]++;
    /* close the bin at its share, never between equal t */
    int last = i + 1 == n;
    if (last || ((size_t)m[bins] >= n / nb && t[ix[i + 1]] != t[ix[i]] && bins + 1 < nb)) {
      med[bins] = t[ix[first + (i - first) / 2]];
      bins++;
      first = i + 1;
    }
  }
  free(ix);
  ana_interval w[NM_MAX_BINS];
  for (size_t b = 0; b < bins; b++) w[b] = ana_wilson(k[b], m[b], NM_Z);
  double best = 0;
  int found = 0;
  for (size_t b = 1; b + 1 < bins; b++)
    for (size_t a = 0; a < b; a++)
      for (size_t d = b + 1; d < bins; d++) {
        /* a valley at b, then a peak at b: the margin by which the intervals part */
        double valley = fmin(w[a].lo - w[b].hi, w[d].lo - w[b].hi);
        double peak = fmin(w[b].lo - w[a].hi, w[b].lo - w[d].hi);
        double g = fmax(valley, peak);
        if (g > best) {
          best = g;
          found = 1;
          size_t sel[3] = {a, b, d};
          for (int j = 0; j < 3; j++) {
            c->nm_t[j] = med[sel[j]];
            c->nm_p[j] = (double)k[sel[j]] / (double)m[sel[j]];
          }
        }
      }
  return found;
}

/* ---- uniform-grid equivalent ---- */

/* Var(t*) by the delta method from the expected information of design points
 * t[0..n) (each weight reps) under the curve (a, b). */
static double var_tstar(const double *t, size_t n, double reps, double a, double b, double L) {
  double h00 = 0, h01 = 0, h11 = 0;
  for (size_t i = 0; i < n; i++) {
    double p = expit(a + b * t[i]), w = reps * p * (1 - p);
    h00 += w;
    h01 += w * t[i];
    h11 += w * t[i] * t[i];
  }
  double det = h00 * h11 - h01 * h01;
  if (!(det > 0)) return INFINITY;
  double ts = (L - a) / b, g0 = -1 / b, g1 = -ts / b;
  return (g0 * g0 * h11 - 2 * g0 * g1 * h01 + g1 * g1 * h00) / det;
}

int64_t ana_bnd_uniform_equivalent(const double *t, size_t n, const ana_bnd_fit *fit,
                                   const ana_bnd_crossing *c, double rlo, double rhi,
                                   int64_t *levels, int64_t *replicates) {
  *levels = *replicates = 0;
  if (c->status != ANA_BND_FOUND || !(c->hi > c->lo)) return -1;
  double span = rhi - rlo, width = c->hi - c->lo;
  if (span / width > 100000) return -1;
  int64_t g = (int64_t)ceil(span / width - 1e-9) + 1;
  if (g < 5) g = 5;
  *levels = g;
  if (fit->separated) {
    *replicates = 1;
    return g;
  }
  double L = logit(c->level);
  double v_ad = var_tstar(t, n, 1, fit->a, fit->b, L);
  double *grid = malloc((size_t)g * sizeof *grid);
  if (!grid) return -1;
  for (int64_t i = 0; i < g; i++) grid[i] = rlo + span * (double)i / (double)(g - 1);
  double v_u1 = var_tstar(grid, (size_t)g, 1, fit->a, fit->b, L);
  free(grid);
  if (!isfinite(v_ad) || !(v_ad > 0) || !isfinite(v_u1)) return -1;
  double r = ceil(v_u1 / v_ad - 1e-9);
  if (r < 1) r = 1;
  if (r > 1e12) return -1;
  *replicates = (int64_t)r;
  return g * (int64_t)r;
}

/* ---- the sequential search ---- */

int ana_bnd_opts_check(const ana_bnd_opts *o, char *err, size_t errlen) {
  if (!(isfinite(o->lo) && isfinite(o->hi) && o->lo < o->hi)) {
    seterr(err, errlen, "--range: expected LO:HI with LO < HI, both finite");
    return -1;
  }
  if (o->log_scale && !(o->lo > 0)) {
    seterr(err, errlen, "--range: a --log range must be positive");
    return -1;
  }
  if (o->n_resp < 1 || o->n_resp > ANA_BND_MAX_RESP) {
    seterr(err, errlen, "boundary: 1 or 2 responses");
    return -1;
  }
  for (size_t r = 0; r < o->n_resp; r++)
    if (!(o->level[r] > 0 && o->level[r] < 1)) {
      seterr(err, errlen, "--level/--min-pass: a probability strictly between 0 and 1");
      return -1;
    }
  if (!(o->conf > 0.5 && o->conf < 1)) {
    seterr(err, errlen, "--conf: expected a confidence between 0.5 and 1");
    return -1;
  }
  if (!(o->width > 0 && o->width <= 1)) {
    seterr(err, errlen, "--width: expected a fraction of the range in (0, 1]");
    return -1;
  }
  if (o->batch < 2 || o->max_runs < o->batch) {
    seterr(err, errlen, "--batch/--max-runs: need batch >= 2 and max-runs >= batch");
    return -1;
  }
  return 0;
}

void ana_bnd_search_free(ana_bnd_search *s) {
  free(s->x);
  free(s->t);
  for (size_t r = 0; r < ANA_BND_MAX_RESP; r++) free(s->y[r]);
  memset(s, 0, sizeof *s);
}

int ana_bnd_search_update(ana_bnd_search *s) {
  double rlo = ana_bnd_t_of_x(&s->o, s->o.lo), rhi = ana_bnd_t_of_x(&s->o, s->o.hi);
  for (size_t r = 0; r < s->o.n_resp; r++) {
    if (ana_bnd_fit_logistic(s->t, s->y[r], (size_t)s->n, &s->fit[r])) return -1;
    if (ana_bnd_crossing_compute(s->t, s->y[r], (size_t)s->n, &s->fit[r], s->o.level[r],
                                 s->o.conf, rlo, rhi, &s->cross[r]))
      return -1;
    const ana_bnd_crossing *c = &s->cross[r];
    /* One class only after two batches: nothing to locate in this range. */
    int64_t min_runs = s->o.min_runs > 0 ? s->o.min_runs : 10 * s->o.batch;
    int narrow = c->hi - c->lo <= s->o.width * (rhi - rlo);
    /* Non-monotone: no one crossing to narrow down; the search stops once
     * it has its minimum of runs. */
    s->resolved[r] = c->status == ANA_BND_ABSENT        ? s->batches >= 2
                     : c->status == ANA_BND_NONMONOTONE ? s->n >= min_runs
                                                        : s->n >= min_runs && narrow && s->narrow[r];
    s->narrow[r] = narrow;
  }
  return 0;
}

static int grow(ana_bnd_search *s, int64_t need) {
  if (need <= s->cap) return 0;
  int64_t cap = s->cap ? s->cap : 64;
  while (cap < need) cap *= 2;
  double *x = realloc(s->x, (size_t)cap * sizeof *x);
  if (!x) return -1;
  s->x = x;
  double *t = realloc(s->t, (size_t)cap * sizeof *t);
  if (!t) return -1;
  s->t = t;
  for (size_t r = 0; r < s->o.n_resp; r++) {
    uint8_t *y = realloc(s->y[r], (size_t)cap);
    if (!y) return -1;
    s->y[r] = y;
  }
  s->cap = cap;
  return 0;
}

int ana_bnd_search_run(ana_bnd_search *s, const ana_bnd_opts *o, ana_bnd_oracle oracle,
                       void *user, char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  if (ana_bnd_opts_check(o, err, errlen)) return -1;
  s->o = *o;
  double rlo = ana_bnd_t_of_x(o, o->lo), rhi = ana_bnd_t_of_x(o, o->hi);
  const double golden = 0.6180339887498949;
  while (s->n < o->max_runs) {
    int64_t m = o->batch;
    if (m > o->max_runs - s->n) m = o->max_runs - s->n;
    if (grow(s, s->n + m)) {
      seterr(err, errlen, "boundary: out of memory");
      return -1;
    }
    double *tb = s->t + s->n;
    double off = fmod((double)s->batches * golden, 1.0);
    if (s->batches == 0) {
      for (int64_t i = 0; i < m; i++) tb[i] = rlo + (rhi - rlo) * ((double)i + 0.5) / (double)m;
    } else {
      /* Share the batch among the unresolved crossings, evenly over each
       * one's interval widened by its width on each side (narrower
       * spreads cost coverage: tests/test_boundary.c). */
      size_t open[ANA_BND_MAX_RESP], k = 0;
      for (size_t r = 0; r < o->n_resp; r++)
        if (!s->resolved[r] && s->cross[r].status != ANA_BND_ABSENT) open[k++] = r;
      if (k == 0)
        for (size_t r = 0; r < o->n_resp; r++)
          if (!s->resolved[r]) open[k++] = r;
      int64_t i = 0;
      for (size_t j = 0; j < k; j++) {
        const ana_bnd_crossing *c = &s->cross[open[j]];
        int64_t share = m / (int64_t)k + ((int64_t)j < m % (int64_t)k ? 1 : 0);
        double lo = c->lo, hi = c->hi;
        if (c->status == ANA_BND_ABSENT || c->status == ANA_BND_NONMONOTONE || !(hi > lo)) {
          lo = rlo;
          hi = rhi;
        }
        double wden = (hi - lo) * 1.0;
        lo = fmax(rlo, lo - wden);
        hi = fmin(rhi, hi + wden);
        for (int64_t q = 0; q < share; q++, i++)
          tb[i] = lo + (hi - lo) * fmod(((double)q + off) / (double)share, 1.0);
      }
    }
    for (int64_t i = 0; i < m; i++) {
      double x = ana_bnd_x_of_t(o, tb[i]);
      /* exp(ln x) may step a hair outside the range */
      s->x[s->n + i] = fmin(fmax(x, o->lo), o->hi);
    }
    uint8_t *ys[ANA_BND_MAX_RESP];
    for (size_t r = 0; r < o->n_resp; r++) ys[r] = s->y[r] + s->n;
    if (oracle(user, s->n, (size_t)m, s->x + s->n, ys, err, errlen)) return -1;
    s->n += m;
    s->batches++;
    if (ana_bnd_search_update(s)) {
      seterr(err, errlen, "boundary: fit failed");
      return -1;
    }
    int done = 1;
    for (size_t r = 0; r < o->n_resp; r++) done &= s->resolved[r];
    if (done) break;
  }
  return 0;
}
