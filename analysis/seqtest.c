/*
 * seqtest.c — Wald's sequential probability ratio test for the two targets
 * of a claim (see seqtest.h for the hypotheses and the error bounds).
 *
 * The log-likelihood ratio is recomputed from the counts (k bad of n) at
 * every step instead of being accumulated, so it carries no rounding drift
 * and ana_seq_runs_to_prove() predicts exactly the step at which add()
 * proves a clean point.
 */
#include "seqtest.h"

#include <math.h>
#include <stdio.h>

static int in_open_unit(double x) { return x > 0.0 && x < 1.0; }

int ana_seq_design_check(ana_seq_design *d, char *err, unsigned long errlen) {
  if (d->alpha == 0.0) d->alpha = ANA_SEQ_ALPHA;
  if (d->beta == 0.0) d->beta = ANA_SEQ_BETA;
  if (d->ratio == 0.0) d->ratio = ANA_SEQ_RATIO;
  const char *bad = NULL;
  if (!(d->alpha > 0.0 && d->alpha < 0.5)) bad = "alpha must be in (0, 0.5)";
  else if (!(d->beta > 0.0 && d->beta < 0.5)) bad = "beta must be in (0, 0.5)";
  else if (!(d->ratio > 1.0) || isinf(d->ratio)) bad = "ratio must be a finite number > 1";
  else if (isnan(d->min_pass) || (d->min_pass > 0.0 && !in_open_unit(d->min_pass)))
    bad = "min_pass must be below 1 (<= 0 disables the target)";
  else if (isnan(d->max_meta) || (d->max_meta < 1.0 && !in_open_unit(d->max_meta)))
    bad = "max_metastable must be above 0 (>= 1 disables the target)";
  if (bad) {
    if (err && errlen) snprintf(err, errlen, "%s", bad);
    return -1;
  }
  return 0;
}

/* One target: q0 is the bad rate at the boundary of the target. */
static void sprt_init(ana_sprt *t, int enabled, double q0, const ana_seq_design *d) {
  *t = (ana_sprt){0};
  t->enabled = enabled;
  t->upper = log(1.0 / d->alpha); /* Ville: P(ever crossing | H0) <= alpha, exactly */
  t->lower = log(d->beta / (1.0 - d->alpha));
  if (!enabled) {
    t->state = ANA_SEQ_PROVEN;
    return;
  }
  t->q0 = q0;
  t->q1 = q0 / d->ratio;
  t->step_bad = log(t->q1 / t->q0);
  t->step_good = log1p(-t->q1) - log1p(-t->q0);
  t->state = ANA_SEQ_OPEN;
}

static double sprt_llr(const ana_sprt *t, int64_t n, int64_t bad) {
  return (double)bad * t->step_bad + (double)(n - bad) * t->step_good;
}

static void sprt_add(ana_sprt *t, int is_bad) {
  if (!t->enabled || t->state != ANA_SEQ_OPEN) return;
  t->n++;
  t->bad += is_bad ? 1 : 0;
  t->llr = sprt_llr(t, t->n, t->bad);
  if (t->llr >= t->upper) t->state = ANA_SEQ_PROVEN;
  else if (t->llr <= t->lower) t->state = ANA_SEQ_REFUTED;
  if (t->state != ANA_SEQ_OPEN) t->decided_at = t->n;
}

void ana_seq_init(ana_seq *s, const ana_seq_design *d) {
  *s = (ana_seq){0};
  s->d = *d;
  sprt_init(&s->pass, d->min_pass > 0.0, 1.0 - d->min_pass, d);
  sprt_init(&s->meta, d->max_meta < 1.0, d->max_meta, d);
  s->state = (s->pass.state == ANA_SEQ_PROVEN && s->meta.state == ANA_SEQ_PROVEN)
                 ? ANA_SEQ_PROVEN
                 : ANA_SEQ_OPEN;
}

ana_seq_state ana_seq_add(ana_seq *s, int passed, int metastable) {
  if (s->state != ANA_SEQ_OPEN) return s->state;
  s->n++;
  /* A metastable (or collapsed) run did not recover, so it cannot pass,
   * whatever the caller's flag says. */
  sprt_add(&s->pass, !passed || metastable);
  sprt_add(&s->meta, metastable != 0);
  if (s->pass.state == ANA_SEQ_REFUTED || s->meta.state == ANA_SEQ_REFUTED)
    s->state = ANA_SEQ_REFUTED;
  else if (s->pass.state == ANA_SEQ_PROVEN && s->meta.state == ANA_SEQ_PROVEN)
    s->state = ANA_SEQ_PROVEN;
  if (s->state != ANA_SEQ_OPEN) s->decided_at = s->n;
  return s->state;
}

/* Smallest n with n good runs reaching the upper boundary, computed with the
 * same expression sprt_add() evaluates. */
static int64_t sprt_runs_to_prove(const ana_sprt *t) {
  if (!t->enabled) return 0;
  int64_t n = (int64_t)ceil(t->upper / t->step_good);
  if (n < 1) n = 1;
  while (n > 1 && sprt_llr(t, n - 1, 0) >= t->upper) n--;
  while (sprt_llr(t, n, 0) < t->upper) n++;
  return n;
}

int64_t ana_seq_runs_to_prove(const ana_seq_design *d) {
  ana_seq s;
  ana_seq_init(&s, d);
  int64_t a = sprt_runs_to_prove(&s.pass), b = sprt_runs_to_prove(&s.meta);
  return a > b ? a : b;
}

void ana_seq_describe(const ana_seq_design *d, char *buf, unsigned long len) {
  if (!buf || !len) return;
  ana_seq s;
  ana_seq_init(&s, d);
  int64_t n = ana_seq_runs_to_prove(d);
  if (!s.pass.enabled && !s.meta.enabled) {
    snprintf(buf, len, "no target: proven without runs");
    return;
  }
  /* Both targets share the same q0 when min_pass = 1 - max_meta (the
   * defaults): one line then says it once. */
  char targets[160];
  if (s.pass.enabled && s.meta.enabled && fabs(s.pass.q0 - s.meta.q0) < 1e-12)
    snprintf(targets, sizeof targets, "q0=%g vs q1=%g for P(not pass) and P(bad)", s.pass.q0,
             s.pass.q1);
  else if (s.pass.enabled && s.meta.enabled)
    snprintf(targets, sizeof targets, "q0=%g vs q1=%g for P(not pass), q0=%g vs q1=%g for P(bad)",
             s.pass.q0, s.pass.q1, s.meta.q0, s.meta.q1);
  else if (s.pass.enabled)
    snprintf(targets, sizeof targets, "q0=%g vs q1=%g for P(not pass)", s.pass.q0, s.pass.q1);
  else
    snprintf(targets, sizeof targets, "q0=%g vs q1=%g for P(bad)", s.meta.q0, s.meta.q1);
  snprintf(buf, len, "SPRT %s, alpha=%g, beta=%g: proven after %lld runs without a failure", targets,
           d->alpha, d->beta, (long long)n);
}

void ana_seq_target_name(const ana_seq_design *d, int pass, char *buf, unsigned long len) {
  if (!buf || !len) return;
  if (pass) snprintf(buf, len, "P(pass) >= %g", d->min_pass);
  else snprintf(buf, len, "P(bad) <= %g", d->max_meta);
}

void ana_seq_claim(const ana_seq_design *d, char *buf, unsigned long len) {
  if (!buf || !len) return;
  char p[64], m[64];
  ana_seq_target_name(d, 1, p, sizeof p);
  ana_seq_target_name(d, 0, m, sizeof m);
  int on_p = d->min_pass > 0.0, on_m = d->max_meta < 1.0;
  if (on_p && on_m) snprintf(buf, len, "%s and %s", p, m);
  else if (on_p || on_m) snprintf(buf, len, "%s", on_p ? p : m);
  else snprintf(buf, len, "no target");
}

void ana_seq_target_status(const ana_seq *s, int pass, char *buf, unsigned long len) {
  if (!buf || !len) return;
  const ana_sprt *t = pass ? &s->pass : &s->meta;
  buf[0] = '\0';
  if (!t->enabled) return;
  char name[64], design[160];
  ana_seq_target_name(&s->d, pass, name, sizeof name);
  snprintf(design, sizeof design, "alpha %g, beta %g; H0 %s rate %g, H1 %g", s->d.alpha,
           s->d.beta, pass ? "not-pass" : "bad", t->q0, t->q1);
  if (t->state == ANA_SEQ_PROVEN)
    snprintf(buf, len, "%s proven: SPRT crossed the accept bound, LLR %.3f >= %.3f (%s)", name,
             t->llr, t->upper, design);
  else if (t->state == ANA_SEQ_REFUTED)
    snprintf(buf, len, "%s refuted: SPRT crossed the reject bound, LLR %.3f <= %.3f (%s)", name,
             t->llr, t->lower, design);
  else
    snprintf(buf, len, "%s open: LLR %.3f, between the reject bound %.3f and the accept bound "
             "%.3f (%s)", name, t->llr, t->lower, t->upper, design);
}

void ana_seq_status(const ana_seq *s, char *buf, unsigned long len) {
  if (!buf || !len) return;
  char p[320], m[320];
  ana_seq_target_status(s, 1, p, sizeof p);
  ana_seq_target_status(s, 0, m, sizeof m);
  snprintf(buf, len, "%s%s%s", p, p[0] && m[0] ? "; " : "", m);
  if (!p[0] && !m[0]) snprintf(buf, len, "no target");
}

void ana_seq_verdict(const ana_seq *s, char *buf, unsigned long len) {
  if (!buf || !len) return;
  char claim[160], p[64], m[64];
  ana_seq_claim(&s->d, claim, sizeof claim);
  ana_seq_target_name(&s->d, 1, p, sizeof p);
  ana_seq_target_name(&s->d, 0, m, sizeof m);
  int both = s->pass.enabled && s->meta.enabled;
  if (!s->pass.enabled && !s->meta.enabled) {
    snprintf(buf, len, "no target to prove");
  } else if (s->state == ANA_SEQ_PROVEN) {
    char llr[64];
    if (both) snprintf(llr, sizeof llr, "LLR %.3f and %.3f", s->pass.llr, s->meta.llr);
    else snprintf(llr, sizeof llr, "LLR %.3f", s->pass.enabled ? s->pass.llr : s->meta.llr);
    snprintf(buf, len, "%s, %s SPRT crossing the accept bound: %s >= ln(1/alpha) = %.3f", claim,
             both ? "each by its" : "by its", llr,
             s->pass.enabled ? s->pass.upper : s->meta.upper);
  } else if (s->state == ANA_SEQ_REFUTED) {
    int rp = s->pass.state == ANA_SEQ_REFUTED, rm = s->meta.state == ANA_SEQ_REFUTED;
    char llr[64];
    if (rp && rm) snprintf(llr, sizeof llr, "LLR %.3f and %.3f", s->pass.llr, s->meta.llr);
    else snprintf(llr, sizeof llr, "LLR %.3f", rp ? s->pass.llr : s->meta.llr);
    snprintf(buf, len, "%s%s%s missed: %s SPRT crossed the reject bound: %s <= ln(beta/(1 - "
             "alpha)) = %.3f", rp ? p : "", rp && rm ? " and " : "", rm ? m : "",
             rp && rm ? "each one's" : "its", llr, rp ? s->pass.lower : s->meta.lower);
  } else {
    snprintf(buf, len, "no target's SPRT has crossed a bound yet");
  }
}

const char *ana_seq_state_name(ana_seq_state s) {
  switch (s) {
  case ANA_SEQ_OPEN: return "open";
  case ANA_SEQ_PROVEN: return "proven";
  case ANA_SEQ_REFUTED: return "refuted";
  }
  return "?";
}
