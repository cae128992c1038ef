/*
 * refine_eval.c — a refined file's decision recomputed from its runs
 * (refine_eval.h): the screening and fresh runs through refine_plan.h, and
 * the check of /refine's record against that recomputation.
 *
 * Why recompute: /refine is written by refine but read from files anybody
 * may have written. A verdict taken from it would let a planted group print
 * "proven on 500 fresh runs" for a file holding none. So the record is
 * believed for nothing but the question (the design); every answer comes
 * from the rows, through the same functions refine decides with.
 *
 * Which rows the record describes: refine stores its record after each
 * evaluation and only then appends the next round (round_start gets the
 * round's first row in the same commit as the rows). So a record of
 * `rounds` rounds describes the rows below round_start[rounds] when the file
 * has more rounds than that (refine was stopped in the next round), and all
 * rows otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "decision.h"
#include "refine_eval.h"

/* ---- the evaluation ---- */

void ana_rf_tally_describe(const ana_rf_tally *t, char *buf, size_t len) {
  char bad[192];
  ana_outcome_bad_describe(t->by, bad, sizeof bad);
  snprintf(buf, len, "%lld not passing, %s", (long long)(t->n - t->pass), bad);
}

typedef struct conf_run {
  size_t pi;
  int64_t rep;
  int pass, meta, outcome;
} conf_run;

static int cmp_conf(const void *x, const void *y) {
  const conf_run *a = x, *b = y;
  if (a->pi != b->pi) return a->pi < b->pi ? -1 : 1;
  return (a->rep > b->rep) - (a->rep < b->rep);
}

void ana_rf_eval_free(ana_rf_eval *e) {
  ana_rp_free(&e->rp);
  free(e->pts);
  free(e->screen);
  free(e->fresh);
  free(e->next_rep);
  free(e->screen_next);
  free(e->cand_of);
  free(e->batch);
  memset(e, 0, sizeof *e);
}

static void tally_add(ana_rf_tally *t, int outcome, int pass) {
  t->n++;
  t->pass += pass;
  if (outcome >= ENG_OUTCOME_RECOVERED && outcome < ENG_OUTCOME_COUNT) t->by[outcome]++;
}

/* Adds one screening run to point pi's summary. */
static void screen_add(ana_rf_eval *e, size_t pi, const fmt_run *run, int pass, int meta,
                       double *amp_n, double *gp_n) {
  ana_rp_point *p = &e->pts[pi];
  p->n++;
  p->n_pass += pass;
  p->n_meta += meta;
  p->n_collapsed += run->outcome >= ENG_OUTCOME_COLLAPSED;
  tally_add(&e->screen[pi], run->outcome, pass);
  if (!isnan(run->amplification)) p->amp += run->amplification, amp_n[pi]++;
  if (!isnan(run->goodput_during)) p->lost += run->goodput_during, gp_n[pi]++;
}

/* Sequential screening: which points get stage 2 (screen_next[i] = r0;
 * else -1), from their stage-1 runs alone (ana_rp_stage2). Returns 0, or -1
 * when out of memory. */
static int stage2_choose(ana_rf_eval *e, size_t np, const double *amp_n, const double *gp_n) {
  ana_rp_point *tmp = malloc((np ? np : 1) * sizeof *tmp);
  unsigned char *more = malloc(np ? np : 1);
  if (!tmp || !more) {
    free(tmp);
    free(more);
    return -1;
  }
  for (size_t i = 0; i < np; i++) {
    tmp[i] = e->pts[i];
    tmp[i].amp = amp_n[i] > 0 ? tmp[i].amp / amp_n[i] : NAN;
    tmp[i].lost = gp_n[i] > 0 ? 1.0 - tmp[i].lost / gp_n[i] : NAN;
    if (tmp[i].n != e->r0) tmp[i].n = 0; /* incomplete: reported below, never extended */
  }
  ana_rp_stage2(tmp, np, &e->d, more);
  for (size_t i = 0; i < np; i++) {
    e->screen_next[i] = more[i] ? e->r0 : -1;
    e->screen_open += more[i];
  }
  free(tmp);
  free(more);
  return 0;
}

/* Screening summaries and the fresh runs (conf, *n_conf) of the rows below
 * row_limit: stage 1 (replicates below r0) first; under sequential
 * screening the stage-2 replicates (r0 .. r_fresh-1) of the points stage 1
 * left open (refine_plan.h) next. Returns 0, or -1 (no memory) / -2 (a
 * point without its r0 screening runs) with a message. */
static int screen(ana_rf_eval *e, const fmt_results *r, int64_t row_limit, conf_run *conf,
                  size_t *n_conf, char *err, size_t errlen) {
  size_t np = r->n_points;
  double *amp_n = calloc(np ? np : 1, sizeof *amp_n), *gp_n = calloc(np ? np : 1, sizeof *gp_n);
  if (!amp_n || !gp_n) {
    free(amp_n);
    free(gp_n);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  long vn = -1;
  for (size_t a = 0; a < r->n_axes; a++)
    if (!strcmp(r->axes[a], "vnodes")) vn = (long)a;
  for (size_t i = 0; i < np; i++) {
    e->pts[i].id = r->point_ids[i];
    e->next_rep[i] = e->r_fresh;
    e->pts[i].vnodes = vn >= 0 ? r->values[i * r->n_axes + (size_t)vn] : 0.0;
  }
  *n_conf = 0;
  for (int stage = 1; stage <= (e->screen_next ? 2 : 1); stage++) {
    for (size_t j = 0; j < r->n_runs; j++) {
      const fmt_run *run = &r->runs[j];
      if (row_limit >= 0 && run->run >= row_limit) continue;
      size_t pi = r->point_of_run[j];
      int meta = ana_outcome_is_bad(run->outcome);
      /* The sweep's SLO as each run was judged (passed_slo), or by what its
       * users saw when r is judged by SLO terms (ana_judge_user_slo). */
      int pass = r->user_slo.n ? ana_run_passes(&r->user_slo, run->outcome, run->recovery_ms,
                                                run->user_recovery_ms, r->slo_ms)
                               : run->outcome == ENG_OUTCOME_RECOVERED && run->passed_slo;
      if (run->replicate < e->r0) {
        if (stage == 1) screen_add(e, pi, run, pass, meta, amp_n, gp_n);
      } else if (run->replicate < e->r_fresh) {
        /* stage 2: counted only for a point stage 1 left open, in order */
        if (stage == 2 && run->replicate == e->screen_next[pi]) {
          screen_add(e, pi, run, pass, meta, amp_n, gp_n);
          e->screen_next[pi]++;
          e->screen_added++;
        }
      } else if (stage == 1) {
        conf[(*n_conf)++] = (conf_run){pi, run->replicate, pass, meta, run->outcome};
        if (run->replicate + 1 > e->next_rep[pi]) e->next_rep[pi] = run->replicate + 1;
      }
    }
    if (stage == 1 && e->screen_next && stage2_choose(e, np, amp_n, gp_n)) {
      free(amp_n);
      free(gp_n);
      snprintf(err, errlen, "out of memory");
      return -1;
    }
  }
  int rc = 0;
  for (size_t i = 0; i < np && !rc; i++) {
    ana_rp_point *p = &e->pts[i];
    int64_t want = e->screen_next && e->screen_next[i] >= 0 ? e->r_fresh : e->r0;
    if (e->screen_next && e->screen_next[i] >= 0)
      e->screen_missing += e->r_fresh - e->screen_next[i];
    if (p->n < e->r0 || p->n > want) {
      snprintf(err, errlen,
               "%s: point %lld has %lld of its %lld screening runs: the sweep is not complete",
               r->path, (long long)p->id, (long long)p->n, (long long)e->r0);
      rc = -2;
    }
    p->amp = amp_n[i] > 0 ? p->amp / amp_n[i] : NAN;
    p->lost = gp_n[i] > 0 ? 1.0 - p->lost / gp_n[i] : NAN;
  }
  free(amp_n);
  free(gp_n);
  return rc;
}

/* The candidates (a tunable setting over all its scenario values when the
 * grid has scenario axes: docs/decisions.md), each test fed its fresh runs
 * in replicate order, without gaps. */
static int confirm(ana_rf_eval *e, const fmt_results *r, conf_run *conf, size_t n_conf,
                   const ana_seq_design *d, char *err, size_t errlen) {
  size_t np = r->n_points;
  ana_split split;
  if (ana_split_compute(&split, r)) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int irc = ana_rp_init_grouped(&e->rp, e->pts, np, split.n_tun ? split.tun_of : NULL, d, err,
                                errlen);
  ana_split_free(&split);
  if (irc) return -1;
  for (size_t i = 0; i < np; i++) e->cand_of[i] = -1;
  for (size_t c = 0; c < e->rp.n_cand; c++) e->cand_of[e->rp.cand[c].point] = (long)c;
  qsort(conf, n_conf, sizeof *conf, cmp_conf);
  for (size_t j = 0; j < n_conf; j++) {
    long c = e->cand_of[conf[j].pi];
    if (c < 0) continue;
    ana_seq *s = &e->rp.cand[c].seq;
    if (conf[j].rep != e->r_fresh + s->n) continue; /* a gap: later runs wait for it */
    if (s->state == ANA_SEQ_OPEN) tally_add(&e->fresh[conf[j].pi], conf[j].outcome, conf[j].pass);
    ana_seq_add(s, conf[j].pass, conf[j].meta);
  }
  return 0;
}

int ana_rf_evaluate(ana_rf_eval *e, const fmt_results *r, const ana_seq_design *d, int k,
                    int64_t r0, int64_t row_limit, char *err, size_t errlen) {
  memset(e, 0, sizeof *e);
  e->d = *d;
  e->r0 = r0;
  e->r_fresh = fmt_screening_replicates(r0, r->screen_up_to);
  size_t np = r->n_points, m = np ? np : 1;
  e->pts = calloc(m, sizeof *e->pts);
  e->screen = calloc(m, sizeof *e->screen);
  e->fresh = calloc(m, sizeof *e->fresh);
  e->next_rep = calloc(m, sizeof *e->next_rep);
  e->cand_of = calloc(m, sizeof *e->cand_of);
  conf_run *conf = malloc((r->n_runs ? r->n_runs : 1) * sizeof *conf);
  size_t n_conf = 0;
  int rc = -1;
  if (e->r_fresh > r0) e->screen_next = calloc(m, sizeof *e->screen_next);
  if (!e->pts || !e->screen || !e->fresh || !e->next_rep || !e->cand_of || !conf ||
      (e->r_fresh > r0 && !e->screen_next)) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if ((rc = screen(e, r, row_limit, conf, &n_conf, err, errlen)) != 0) goto out;
  rc = -1;
  /* Candidates only once the screening is complete (stage 2 included). */
  if (e->screen_missing > 0) {
    for (size_t i = 0; i < np; i++) e->cand_of[i] = -1;
    e->rp.d = *d;
  } else if (confirm(e, r, conf, n_conf, d, err, errlen)) {
    goto out;
  }
  e->batch = calloc(e->rp.n_cand ? e->rp.n_cand : 1, sizeof *e->batch);
  if (!e->batch) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if (e->screen_missing > 0)
    e->st = (ana_rp_step){.status = ANA_RP_OPEN, .decided = -1, .closest = -1,
                          .batch_total = e->screen_missing};
  else
    e->st = ana_rp_decide(&e->rp, k, e->batch);
  int64_t rows = row_limit >= 0 ? row_limit : (int64_t)(r->n_runs + r->n_skipped);
  e->appended = rows - (int64_t)np * r0;
  rc = 0;
out:
  free(conf);
  if (rc) ana_rf_eval_free(e);
  return rc;
}

/* ---- the record against the evaluation ---- */

/* The first claim of the record the evaluation does not give, in what. */
typedef struct mismatch {
  char what[512];
  int found;
} mismatch;

static void differ_int(mismatch *m, const char *where, const char *field, int64_t stored,
                       int64_t got) {
  if (m->found || stored == got) return;
  snprintf(m->what, sizeof m->what, "%s%s is %lld, the file's runs give %lld", where, field,
           (long long)stored, (long long)got);
  m->found = 1;
}

/* Equal but for the last bits (a record written by a build that summed in
 * another order is still the same record); NaN equals NaN. */
static void differ_real(mismatch *m, const char *where, const char *field, double stored,
                        double got) {
  if (m->found || (isnan(stored) && isnan(got))) return;
  double scale = fmax(1.0, fmax(fabs(stored), fabs(got)));
  if (fabs(stored - got) <= 1e-9 * scale) return;
  snprintf(m->what, sizeof m->what, "%s%s is %.17g, the file's runs give %.17g", where, field,
           stored, got);
  m->found = 1;
}

/* The point id of candidate c of e, or -1. */
static int64_t cand_point(const ana_rf_eval *e, long c) {
  return c >= 0 ? e->pts[e->rp.cand[c].point].id : -1;
}

static void record_compare(mismatch *m, const fmt_refine_info *ri, const ana_rf_eval *e) {
  const ana_rp_step *st = &e->st;
  if (strcmp(ri->status, ana_rp_status_name(st->status))) {
    snprintf(m->what, sizeof m->what, "status is '%s', the file's runs give '%s'", ri->status,
             ana_rp_status_name(st->status));
    m->found = 1;
  }
  differ_int(m, "", "decided_point", ri->decided_point, cand_point(e, st->decided));
  differ_int(m, "", "decided_rank", ri->decided_rank,
             st->decided >= 0 ? e->rp.cand[st->decided].rank : -1);
  differ_int(m, "", "closest_point", ri->closest_point, cand_point(e, st->closest));
  differ_int(m, "", "the number of candidates", (int64_t)ri->n_cand, (int64_t)e->rp.n_cand);
  for (size_t c = 0; c < ri->n_cand && c < e->rp.n_cand && !m->found; c++) {
    const fmt_refine_cand *s = &ri->cand[c];
    const ana_rp_cand *cd = &e->rp.cand[c];
    const ana_rp_point *p = &e->pts[cd->point];
    char where[96];
    snprintf(where, sizeof where, "candidates row %zu (point %lld): ", c, (long long)s->point);
    differ_int(m, where, "point", s->point, p->id);
    differ_int(m, where, "rank", s->rank, cd->rank);
    differ_real(m, where, "alpha", s->alpha, cd->alpha);
    differ_int(m, where, "state", s->state, (int64_t)cd->seq.state);
    differ_int(m, where, "runs", s->runs, cd->seq.n);
    differ_int(m, where, "not_passing", s->not_passing, cd->seq.pass.bad);
    differ_int(m, where, "metastable", s->metastable, cd->seq.meta.bad);
    differ_real(m, where, "llr_pass", s->llr_pass, cd->seq.pass.llr);
    differ_real(m, where, "llr_meta", s->llr_meta, cd->seq.meta.llr);
    differ_int(m, where, "screen_runs", s->screen_runs, p->n);
    differ_int(m, where, "screen_pass", s->screen_pass, p->n_pass);
    differ_int(m, where, "screen_meta", s->screen_meta, p->n_meta);
    differ_real(m, where, "amplification", s->amplification, p->amp);
    differ_real(m, where, "goodput_lost", s->goodput_lost, p->lost);
  }
  differ_int(m, "", "runs_appended", ri->runs_appended, e->appended);
}

/* The stored design as the sequential test's (and its SLO terms, *terms),
 * checked: a design the tests
 * would refuse (or silently default) is damage, not a question. */
static int design_of(const fmt_refine_info *ri, const fmt_results *r, ana_seq_design *d,
                     eng_slo *terms, char *why, size_t len) {
  memset(terms, 0, sizeof *terms);
  const fmt_refine_design *s = &ri->d;
  *d = (ana_seq_design){s->min_pass, s->max_meta, s->alpha, s->beta, s->ratio};
  char err[256];
  if (s->alpha == 0.0 || s->beta == 0.0 || s->ratio == 0.0) {
    snprintf(why, len, "its design has alpha %g, beta %g, ratio %g", s->alpha, s->beta,
             s->ratio);
    return -1;
  }
  if (ana_seq_design_check(d, err, sizeof err)) {
    snprintf(why, len, "its design is invalid: %s", err);
    return -1;
  }
  if (s->k < 1 || s->k > 1000) {
    snprintf(why, len, "its design has k = %d candidates per round", (int)s->k);
    return -1;
  }
  if (s->r0 < 1 || (r->replicates > 0 && s->r0 != r->replicates)) {
    snprintf(why, len, "its design has r0 = %lld screening replicates, the file %lld",
             (long long)s->r0, (long long)r->replicates);
    return -1;
  }
  /* The proofs judged each run by its passed_slo, i.e. by the sweep's SLO. */
  if (!isnan(s->slo_ms) && !(s->slo_ms == r->slo_ms)) {
    snprintf(why, len, "its design has slo_ms %g, the sweep %g", s->slo_ms, r->slo_ms);
    return -1;
  }
  if (s->user_slo[0] && ana_slo_parse(s->user_slo, terms, err, sizeof err)) {
    snprintf(why, len, "its design's user_slo '%s' is not SLO terms: %s", s->user_slo, err);
    return -1;
  }
  if (ri->rounds < 0 || ri->rounds > (int64_t)r->n_rounds) {
    snprintf(why, len, "it records %lld rounds, the file holds %zu", (long long)ri->rounds,
             r->n_rounds);
    return -1;
  }
  return 0;
}

void ana_refined_free(ana_refined *v) {
  ana_rf_eval_free(&v->now);
  memset(v, 0, sizeof *v);
}

static int damaged(const fmt_results *r, const char *why, char *err, size_t errlen) {
  snprintf(err, errlen,
           "%s: /refine is damaged: %s (every verdict is recomputed from the runs; a stored "
           "claim that disagrees with them is damage, not a result)",
           r->path, why);
  return -1;
}

static int design_terms(const fmt_refine_design *d, eng_slo *slo, char *why, size_t len) {
  memset(slo, 0, sizeof *slo);
  return d->user_slo[0] ? ana_slo_parse(d->user_slo, slo, why, len) : 0;
}

int ana_refined_user_slo(const char *path, eng_slo *slo, char *err, size_t errlen) {
  memset(slo, 0, sizeof *slo);
  fmt_refine_info ri;
  char why[768];
  int rc = fmt_refine_read(path, &ri, why, sizeof why);
  if (rc) {
    if (rc < 0) snprintf(err, errlen, "%s", why);
    return rc;
  }
  rc = design_terms(&ri.d, slo, why, sizeof why);
  if (rc)
    snprintf(err, errlen, "%s: /refine is damaged: its design's user_slo '%s' is not SLO terms: %s",
             path, ri.d.user_slo, why);
  fmt_refine_info_free(&ri);
  return rc ? -1 : 0;
}

/* The verdict of r (judged by the design's terms) and the record's check;
 * frees *rip. */
static int refined_evaluate(ana_refined *v, const fmt_results *r, fmt_refine_info *rip,
                            const ana_seq_design *d, char *err, size_t errlen) {
  const fmt_refine_info *ri = rip;
  char why[768];
  int rc;
  /* The rows the record describes: below the first round it does not know. */
  int64_t limit = ri->rounds < (int64_t)r->n_rounds ? r->round_start[ri->rounds] : -1;
  v->interrupted = limit >= 0 || r->n_skipped > 0;
  v->pending = (int64_t)r->n_skipped;
  ana_rf_eval then;
  rc = ana_rf_evaluate(&v->now, r, d, ri->d.k, ri->d.r0, -1, why, sizeof why);
  if (!rc && limit >= 0) rc = ana_rf_evaluate(&then, r, d, ri->d.k, ri->d.r0, limit, why,
                                              sizeof why);
  if (rc) {
    fmt_refine_info_free(rip);
    ana_refined_free(v);
    return damaged(r, why, err, errlen);
  }
  mismatch m = {{0}, 0};
  record_compare(&m, ri, limit >= 0 ? &then : &v->now);
  if (limit >= 0) ana_rf_eval_free(&then);
  fmt_refine_info_free(rip);
  if (m.found) {
    ana_refined_free(v);
    return damaged(r, m.what, err, errlen);
  }
  return 0;
}

int ana_refined_load(ana_refined *v, const fmt_results *r, char *err, size_t errlen) {
  memset(v, 0, sizeof *v);
  fmt_refine_info ri;
  char why[768];
  int rc = fmt_refine_read(r->path, &ri, why, sizeof why);
  if (rc > 0) return 1;
  if (rc < 0) {
    snprintf(err, errlen, "%s", why); /* "FILE: /refine is damaged: ..." */
    return -1;
  }
  ana_seq_design d;
  if (design_of(&ri, r, &d, &v->user_slo, why, sizeof why)) {
    fmt_refine_info_free(&ri);
    return damaged(r, why, err, errlen);
  }
  v->design = ri.d;
  /* A file refined before the SLO was recorded: its runs were judged by the
   * sweep's own (their passed_slo), so that is the SLO of its proofs. */
  if (isnan(v->design.slo_ms)) v->design.slo_ms = r->slo_ms;
  /* The proofs judged the runs by the design's terms: r judged by others
   * (recommend --slo asking another question) is evaluated from a copy
   * judged by the design's. */
  fmt_results own;
  const fmt_results *judged = r;
  if (!ana_slo_same(&v->user_slo, &r->user_slo)) {
    if (fmt_results_read(&own, r->path, err, errlen)) {
      fmt_refine_info_free(&ri);
      memset(v, 0, sizeof *v);
      return -1;
    }
    if (ana_judge_user_slo(&own, &v->user_slo, err, errlen)) {
      fmt_results_free(&own);
      fmt_refine_info_free(&ri);
      memset(v, 0, sizeof *v);
      return -1;
    }
    judged = &own;
  }
  rc = refined_evaluate(v, judged, &ri, &d, err, errlen);
  if (judged != r) fmt_results_free(&own);
  return rc;
}
