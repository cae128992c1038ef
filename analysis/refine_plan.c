/*
 * refine_plan.c — candidates, alpha spending, stopping rule and batch sizes
 * of `refine` (the design is in refine_plan.h; docs/reference.md "Refine"). Pure.
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
 * 0.025; likewise the lower bound of P(bad) from m of n is <=
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

int ana_rp_screen_more(const ana_rp_point *p, const ana_seq_design *d) {
  if (!ana_rp_screen_ok(p, d)) return 0; /* clearly refuted: screened out */
  /* Clearly a candidate: its point estimates meet both targets. */
  int pass_met = d->min_pass <= 0 || (double)p->n_pass >= d->min_pass * (double)p->n;
  int meta_met = d->max_meta >= 1 || (double)p->n_meta <= d->max_meta * (double)p->n;
  return !(pass_met && meta_met);
}

void ana_rp_stage2(const ana_rp_point *pts, size_t n, const ana_seq_design *d,
                   unsigned char *more) {
  ana_cost_key *keys = malloc((n ? n : 1) * sizeof *keys);
  size_t nk = 0;
  for (size_t i = 0; i < n; i++) {
    more[i] = (unsigned char)ana_rp_screen_more(&pts[i], d);
    if (!more[i] && ana_rp_screen_ok(&pts[i], d) && keys)
      keys[nk++] = ana_cost_key_make(pts[i].amp, pts[i].lost, pts[i].vnodes, pts[i].id, i);
  }
  if (!keys) { /* no memory for the order: every clear candidate gets stage 2 */
    for (size_t i = 0; i < n; i++) more[i] |= (unsigned char)ana_rp_screen_ok(&pts[i], d);
    return;
  }
  qsort(keys, nk, sizeof *keys, ana_cost_compare);
  for (size_t k = 0; k < nk && k < ANA_SCREEN_TOP; k++) more[keys[k].index] = 1;
  free(keys);
}

int ana_rp_init(ana_rp *rp, const ana_rp_point *pts, size_t n, const ana_seq_design *d,
                char *err, unsigned long errlen) {
  return ana_rp_init_grouped(rp, pts, n, NULL, d, err, errlen);
}

int ana_rp_init_grouped(ana_rp *rp, const ana_rp_point *pts, size_t n, const size_t *group,
                        const ana_seq_design *d, char *err, unsigned long errlen) {
  memset(rp, 0, sizeof *rp);
  rp->d = *d;
  if (ana_seq_design_check(&rp->d, err, errlen)) return -1;
  size_t m = n ? n : 1;
  ana_cost_key *keys = malloc(m * sizeof *keys);
  unsigned char *bad = calloc(m, 1), *seen = calloc(m, 1);
  rp->cand = malloc(m * sizeof *rp->cand);
  if (!keys || !rp->cand || !bad || !seen) {
    free(keys);
    free(bad);
    free(seen);
    free(rp->cand);
    rp->cand = NULL;
    if (err) snprintf(err, errlen, "out of memory for %zu candidates", n);
    return -1;
  }
#define GROUP(i) (group ? group[i] : (i))
  /* A group (a tunable setting over its scenario values) is a candidate
   * only when every one of its points is: one refuted scenario value
   * refutes the robust claim. */
  for (size_t i = 0; i < n; i++)
    if (GROUP(i) < n && !ana_rp_screen_ok(&pts[i], &rp->d)) bad[GROUP(i)] = 1;
  size_t ng = 0;
  for (size_t i = 0; i < n; i++) {
    size_t g = GROUP(i);
    if (g >= n || bad[g]) continue;
    if (!seen[g]) {
      seen[g] = 1;
      /* recommend's cost order, so refine's rank 1 is what recommend would
       * pick; a group costs what it costs at its worst scenario value. */
      keys[ng++] = ana_cost_key_make(pts[i].amp, pts[i].lost, pts[i].vnodes, pts[i].id, g);
      continue;
    }
    for (size_t k = 0; k < ng; k++) {
      if (keys[k].index != g) continue;
      ana_cost_key c = ana_cost_key_make(pts[i].amp, pts[i].lost, pts[i].vnodes, pts[i].id, g);
      if (c.amp > keys[k].amp || isnan(c.amp)) keys[k].amp = c.amp;
      if (c.lost > keys[k].lost || isnan(c.lost)) keys[k].lost = c.lost;
      if (c.id < keys[k].id) keys[k].id = c.id;
    }
  }
  qsort(keys, ng, sizeof *keys, ana_cost_compare);
  size_t nc = 0;
  for (size_t k = 0; k < ng; k++) {
    /* alpha / 2^rank; ldexp underflows to 0 only past rank ~1070, where a
     * test could never prove anything anyway: keep it positive. */
    double alpha = ldexp(rp->d.alpha, -(int)(k < 1000 ? k + 1 : 1000));
    for (size_t i = 0; i < n; i++) {
      if (GROUP(i) != keys[k].index) continue;
      ana_rp_cand *c = &rp->cand[nc++];
      c->point = i;
      c->rank = (int)k + 1;
      c->alpha = alpha;
      /* seqtest proves at ln(1 / alpha_i): Ville's inequality bounds the
       * false-proof rate by alpha_i exactly (the likelihood ratio is a
       * nonnegative supermartingale for any bad rate >= q0). Every point
       * of a group is tested at the group's alpha_i and the group is
       * proven only when all are (intersection-union): a group that fails
       * at some scenario value is proven only if that value's test errs. */
      ana_seq_design di = rp->d;
      di.alpha = alpha;
      ana_seq_init(&c->seq, &di);
    }
  }
#undef GROUP
  rp->n_cand = nc;
  rp->n_groups = ng;
  free(keys);
  free(bad);
  free(seen);
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

/* The state of the group of candidates [i, j): proven when all are,
 * refuted when any is. */
static ana_seq_state group_state(const ana_rp *rp, size_t i, size_t j) {
  int all_proven = 1;
  for (size_t c = i; c < j; c++) {
    if (rp->cand[c].seq.state == ANA_SEQ_REFUTED) return ANA_SEQ_REFUTED;
    if (rp->cand[c].seq.state != ANA_SEQ_PROVEN) all_proven = 0;
  }
  return all_proven ? ANA_SEQ_PROVEN : ANA_SEQ_OPEN;
}

static size_t group_end(const ana_rp *rp, size_t i) {
  size_t j = i + 1;
  while (j < rp->n_cand && rp->cand[j].rank == rp->cand[i].rank) j++;
  return j;
}

const char *ana_rp_status_name(ana_rp_status s) {
  return s == ANA_RP_PROVEN ? "proven" : s == ANA_RP_NONE ? "none" : "open";
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
  /* The cheapest group not refuted decides. */
  size_t groups_open = 0;
  int first = 1;
  for (size_t i = 0; i < rp->n_cand; i = group_end(rp, i)) {
    ana_seq_state s = group_state(rp, i, group_end(rp, i));
    if (s == ANA_SEQ_OPEN) groups_open++;
    if (!first || s == ANA_SEQ_REFUTED) continue;
    first = 0;
    if (s == ANA_SEQ_PROVEN) {
      st.status = ANA_RP_PROVEN;
      st.decided = (long)i;
      return st;
    }
  }
  if (groups_open == 0) {
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
  for (size_t i = 0; i < rp->n_cand && given < k; i = group_end(rp, i)) {
    size_t j = group_end(rp, i);
    if (group_state(rp, i, j) != ANA_SEQ_OPEN) continue;
    /* Runs go to every open scenario value of the group: the robust
     * question needs them all. */
    for (size_t c = i; c < j; c++) {
      if (rp->cand[c].seq.state != ANA_SEQ_OPEN) continue;
      int64_t b = ana_rp_runs_to_go(&rp->cand[c].seq);
      if (b < ANA_REFINE_MIN_BATCH) b = ANA_REFINE_MIN_BATCH;
      if (batch) batch[c] = b;
      st.batch_total += b;
    }
    given++;
  }
  return st;
}
