/*
 * variates.c — Poisson, Zipf and exponential variates (see variates.h).
 *
 * Poisson: inversion by multiplication below a mean of 10, Hörmann's PTRS
 * transformed rejection above (the method numpy uses); log k! comes from a
 * table and a Stirling series because lgamma() writes the global signgam
 * and is not thread-safe. Zipf: Hörmann & Derflinger's rejection-inversion
 * (as in Apache Commons RNG). Exponential: Marsaglia & Tsang's ziggurat.
 * Empirical: a table of buckets built once, then a binary search per draw.
 */
#include "variates.h"

#include <stdlib.h>
#include <string.h>

static double log_factorial(double k) {
  static const double small[10] = {0,
                                   0,
                                   0.69314718055994531,
                                   1.79175946922805500,
                                   3.17805383034794562,
                                   4.78749174278204599,
                                   6.57925121201010100,
                                   8.52516136106541430,
                                   10.60460290274525023,
                                   12.80182748008146961};
  if (k < 10) return small[(int)k];
  double n = k + 1; /* Stirling series for lgamma(n), error < 1e-10 here */
  return (n - 0.5) * log(n) - n + 0.91893853320467274 + 1 / (12 * n) - 1 / (360 * n * n * n);
}

void eng_poisson_prep(eng_poisson_rate *p, double lam) {
  p->lam = lam;
  p->exp_neg_lam = exp(-lam);
  p->loglam = p->a = p->b = p->invalpha = p->vr = p->log_invalpha = 0;
  if (!(lam >= 10)) return;
  double slam = sqrt(lam);
  p->loglam = log(lam);
  p->b = 0.931 + 2.53 * slam;
  p->a = -0.059 + 0.02483 * p->b;
  p->invalpha = 1.1239 + 1.1328 / (p->b - 3.4);
  p->vr = 0.9277 - 3.6224 / (p->b - 2);
  p->log_invalpha = log(p->invalpha);
}

int64_t eng_poisson_draw(eng_rng *g, const eng_poisson_rate *p) {
  const double lam = p->lam;
  if (!(lam > 0)) return 0;
  if (eng_poisson_by_inversion(p)) return eng_poisson_finish(g, p, eng_rng_uniform(g));
  const double a = p->a, b = p->b;
  for (;;) {
    double U = eng_rng_uniform(g) - 0.5, V = eng_rng_uniform(g);
    double us = 0.5 - fabs(U);
    int64_t k = (int64_t)floor((2 * a / us + b) * U + lam + 0.43);
    if (us >= 0.07 && V <= p->vr) return k;
    if (k < 0 || (us < 0.013 && V > us)) continue;
    if (log(V) + p->log_invalpha - log(a / (us * us) + b) <=
        -lam + (double)k * p->loglam - log_factorial((double)k))
      return k;
  }
}

int64_t eng_poisson(eng_rng *g, double lam, double exp_neg_lam) {
  eng_poisson_rate p;
  eng_poisson_prep(&p, lam);
  p.exp_neg_lam = exp_neg_lam; /* the caller's, as before */
  return eng_poisson_draw(g, &p);
}

static double zipf_helper1(double x) {
  return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}
static double zipf_helper2(double x) {
  return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}
static double zipf_h(double s, double x) { return exp(-s * log(x)); }
static double zipf_hint(double s, double x) {
  double lx = log(x);
  return zipf_helper2((1 - s) * lx) * lx;
}
static double zipf_hinv(double s, double x) {
  double t = x * (1 - s);
  if (t < -1) t = -1;
  return exp(zipf_helper1(t) * x);
}

void eng_zipf_init(eng_zipf *z, double s, double n) {
  z->s = s;
  z->n = n;
  z->hx1 = zipf_hint(s, 1.5) - 1;
  z->hn = zipf_hint(s, n + 0.5);
  z->sv = 2 - zipf_hinv(s, zipf_hint(s, 2.5) - zipf_h(s, 2));
}

uint64_t eng_zipf_draw(const eng_zipf *z, eng_rng *g) {
  for (;;) {
    double u = z->hn + eng_rng_uniform(g) * (z->hx1 - z->hn);
    double x = zipf_hinv(z->s, u);
    double k = floor(x + 0.5);
    if (k < 1) k = 1;
    if (k > z->n) k = z->n;
    if (k - x <= z->sv || u >= zipf_hint(z->s, k + 0.5) - zipf_h(z->s, k)) return (uint64_t)k;
  }
}

void eng_zig_init(eng_zig *z) {
  const double m2 = 4294967296.0;
  double de = 7.697117470131487, te = de, ve = 3.949659822581572e-3;
  double q = ve / exp(-de);
  z->k[0] = (uint32_t)((de / q) * m2);
  z->k[1] = 0;
  z->w[0] = q / m2;
  z->w[255] = de / m2;
  z->f[0] = 1.0;
  z->f[255] = exp(-de);
  for (int i = 254; i >= 1; i--) {
    de = -log(ve / de + exp(-de));
    z->k[i + 1] = (uint32_t)((de / te) * m2);
    te = de;
    z->f[i] = exp(-de);
    z->w[i] = de / m2;
  }
}

double eng_zig_exp1_slow(const eng_zig *z, eng_rng *g, uint64_t x) {
  uint32_t iz = (uint32_t)x & 255, jz = (uint32_t)(x >> 32);
  for (;;) {
    if (iz == 0) return 7.69711747013104972 - log(eng_rng_uniform_pos(g));
    double v = jz * z->w[iz];
    if (z->f[iz] + eng_rng_uniform(g) * (z->f[iz - 1] - z->f[iz]) < exp(-v)) return v;
    x = eng_rng_next(g);
    iz = (uint32_t)x & 255;
    jz = (uint32_t)(x >> 32);
    if (jz < z->k[iz]) return jz * z->w[iz];
  }
}

void eng_empirical_free(eng_empirical *e) {
  if (!e) return;
  free(e->cdf);
  free(e->lo);
  free(e->w);
  free(e->kind);
  memset(e, 0, sizeof *e);
}

int eng_empirical_build(eng_empirical *e, size_t n, double lower, const double *le,
                        const double *count, double sum) {
  memset(e, 0, sizeof *e);
  double total = 0, finite_sum = 0;
  for (size_t i = 0; i <= n; i++) total += count[i];
  if (!(total > 0)) return -1;
  size_t cap = n + 1;
  e->cdf = malloc(cap * sizeof *e->cdf);
  e->lo = malloc(cap * sizeof *e->lo);
  e->w = malloc(cap * sizeof *e->w);
  e->kind = malloc(cap);
  if (!e->cdf || !e->lo || !e->w || !e->kind) {
    eng_empirical_free(e);
    return -1;
  }
  double acc = 0, mean = 0, prev = lower;
  e->min_ms = -1;
  for (size_t i = 0; i < n; i++) {
    double a = prev, b = le[i], c = count[i];
    prev = b;
    if (!(c > 0)) continue;
    size_t k = e->n++;
    double m;
    if (a > 0 && b > a) {
      e->kind[k] = ENG_EMP_LOG, e->lo[k] = a, e->w[k] = log(b / a);
      m = (b - a) / e->w[k];
    } else {
      e->kind[k] = ENG_EMP_LIN, e->lo[k] = a, e->w[k] = b - a;
      m = 0.5 * (a + b);
    }
    if (e->min_ms < 0) e->min_ms = a;
    e->max_finite_ms = b;
    acc += c;
    e->cdf[k] = acc / total;
    mean += c * m;
    finite_sum += c * m;
  }
  double tail = count[n];
  if (tail > 0) {
    double L = n ? le[n - 1] : lower;
    double tm = isnan(sum) ? L : (sum - finite_sum) / tail;
    size_t k = e->n++;
    if (tm > L) e->kind[k] = ENG_EMP_EXP, e->lo[k] = L, e->w[k] = tm - L;
    else e->kind[k] = ENG_EMP_LIN, e->lo[k] = L, e->w[k] = 0, tm = L;
    if (e->min_ms < 0) e->min_ms = L;
    e->tail_share = tail / total;
    e->tail_mean_ms = tm;
    mean += tail * tm;
    e->cdf[k] = 1;
  }
  e->cdf[e->n - 1] = 1; /* no rounding gap at the top */
  e->mean_ms = mean / total;
  return 0;
}

double eng_empirical_at(const eng_empirical *e, double u) {
  size_t lo = 0, hi = e->n - 1; /* first bucket whose cdf exceeds u */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (e->cdf[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  double c0 = lo ? e->cdf[lo - 1] : 0, v = (u - c0) / (e->cdf[lo] - c0);
  if (!(v >= 0)) v = 0;
  if (v >= 1) v = 0x1.fffffffffffffp-1;
  switch (e->kind[lo]) {
  case ENG_EMP_LOG: return e->lo[lo] * exp(v * e->w[lo]);
  case ENG_EMP_EXP: return e->lo[lo] - e->w[lo] * log1p(-v);
  default: return e->lo[lo] + v * e->w[lo];
  }
}
