/*
 * refine_plan.c — candidates, alpha spending, stopping rule and batch sizes
 * of `refine` (the design is in refine_plan.h; README "Refine"). Pure.
 */
#include "refine_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"

/* Screening against the targets with exact two-sided 95% bounds, tested
 * without inverting the beta function: the Clopper–Pearson upper bound u
 * of P(pass) from k of n solves P(X <= k | u) = 0.025 and P(X <= k | p)
 * falls as p grows, so u >= min_pass exactly when P(X <= k | min_pass) >=
 * 0.025; likewise the lower bound of P(metastable) from m of n is <=
 * max_meta exactly when P(X >= m | max_meta) >= 0.025. */
int ana_rp_screen_ok(const ana_rp_point *p, const ana_seq_design *d) {
  const double tail = (1.0 - ANA_CONF) / 2.0;
  if (p->n <= 0 || p->n_collapsed > 0) return 0;
  if (d->min_pass > 0 && p->n_pass < p->n) {
    /* P(X <= k | n, q) = I_{1-q}(n - k, k + 1) */
    double cdf = ana_beta_inc((double)(p->n - p->n_pass), (double)p->n_pass + 1.0,
                              1.0 - d->min_pass);
    if (d->min_pass >= 1 || cdf < tail) return 0;
  }
  if (d->max_meta < 1 && p->n_meta > 0) {
    /* P(X >= m | n, q) = I_q(m, n - m + 1) */
    double sf = d->max_meta <= 0 ? 0.0
                                 : ana_beta_inc((double)p->n_meta,
                                                (double)(p->n - p->n_meta) + 1.0, d->max_meta);
    if (sf < tail) return 0;
  }
  return 1;
}

int ana_rp_init(ana_rp *rp, const ana_rp_point *pts, size_t n, const ana_seq_design *d,
                char *err, unsigned long errlen) {
  memset(rp, 0, sizeof *rp);
  rp->d = *d;
  if (ana_seq_design_check(&rp->d, err, errlen)) return -1;
  ana_cost_key *keys = malloc((n ? n : 1) * sizeof *keys);
  rp->cand = malloc((n ? n : 1) * sizeof *rp->cand);
  if (!keys || !rp->cand) {
    free(keys);
    free(rp->cand);
    rp->cand = NULL;
    if (err) snprintf(err, errlen, "out of memory for %zu candidates", n);
    return -1;
  }
  size_t nc = 0;
  for (size_t i = 0; i < n; i++) {
    if (!ana_rp_screen_ok(&pts[i], &rp->d)) continue;
    /* recommend's cost order, so refine's rank 1 is what recommend would pick */
    keys[nc++] = ana_cost_key_make(pts[i].amp, pts[i].lost, pts[i].vnodes, pts[i].id, i);
  }
  qsort(keys, nc, sizeof *keys, ana_cost_compare);
  rp->n_cand = nc;
  for (size_t i = 0; i < nc; i++) {
    ana_rp_cand *c = &rp->cand[i];
    c->point = keys[i].index;
    /* alpha / 2^(i+1); ldexp underflows to 0 only past rank ~1070, where a
     * test could never prove anything anyway: keep it positive. */
    c->alpha = ldexp(rp->d.alpha, -(int)(i < 1000 ? i + 1 : 1000));
    /* seqtest proves at ln(1 / alpha_i): Ville's inequality bounds the
     * false-proof rate by alpha_i exactly (the likelihood ratio is a
     * nonnegative supermartingale for any bad rate >= q0). */
    ana_seq_design di = rp->d;
    di.alpha = c->alpha;
    ana_seq_init(&c->seq, &di);
  }
  free(keys);
  return 0;
}

void ana_rp_free(ana_rp *rp) {
  free(rp->cand);
  memset(rp, 0, sizeof *rp);
}

static int64_t sprt_to_go(const ana_sprt *t) {
  if (!t->enabled || t->state != ANA_SEQ_OPEN) return 0;
  double need = (t->upper - t->llr) / t->step_good;
  return need > 0 ? (int64_t)ceil(need - 1e-9) : 0;
}

int64_t ana_rp_runs_to_go(const ana_seq *s) {
  if (s->state != ANA_SEQ_OPEN) return 0;
  int64_t a = sprt_to_go(&s->pass), b = sprt_to_go(&s->meta);
  return a > b ? a : b;
}

/* How close a refuted candidate came (for "closest"): the share of its
 * confirmation runs that passed (screening's when it has none). */
static double progress(const ana_seq *s) {
  if (s->n <= 0) return -1.0;
  int64_t bad = s->pass.enabled ? s->pass.bad : s->meta.bad;
  return 1.0 - (double)bad / (double)s->n;
}

ana_rp_step ana_rp_decide(const ana_rp *rp, int k, int64_t *batch) {
  ana_rp_step st;
  memset(&st, 0, sizeof st);
  st.decided = st.closest = -1;
  if (k < 1) k = 1;
  if (batch) memset(batch, 0, (rp->n_cand ? rp->n_cand : 1) * sizeof *batch);
  for (size_t i = 0; i < rp->n_cand; i++) {
    ana_seq_state s = rp->cand[i].seq.state;
    if (s == ANA_SEQ_OPEN) st.n_open++;
    else if (s == ANA_SEQ_PROVEN) st.n_proven++;
    else st.n_refuted++;
  }
  /* The cheapest candidate not refuted decides. */
  for (size_t i = 0; i < rp->n_cand; i++) {
    ana_seq_state s = rp->cand[i].seq.state;
    if (s == ANA_SEQ_REFUTED) continue;
    if (s == ANA_SEQ_PROVEN) {
      st.status = ANA_RP_PROVEN;
      st.decided = (long)i;
      return st;
    }
    break;
  }
  if (st.n_open == 0) {
    st.status = ANA_RP_NONE;
    double best = -INFINITY;
    for (size_t i = 0; i < rp->n_cand; i++) {
      double p = progress(&rp->cand[i].seq);
      if (p > best) {
        best = p;
        st.closest = (long)i;
      }
    }
    return st;
  }
  st.status = ANA_RP_OPEN;
  int given = 0;
  for (size_t i = 0; i < rp->n_cand && given < k; i++) {
    if (rp->cand[i].seq.state != ANA_SEQ_OPEN) continue;
    int64_t b = ana_rp_runs_to_go(&rp->cand[i].seq);
    if (b < ANA_REFINE_MIN_BATCH) b = ANA_REFINE_MIN_BATCH;
    if (batch) batch[i] = b;
    st.batch_total += b;
    given++;
  }
  return st;
}
