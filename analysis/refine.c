/*
 * refine.c — the refine procedure (refine.h): after a sweep screened every
 * grid point with R0 replicates, confirm the cheapest candidates on fresh
 * replicates appended to the same file until the cheapest candidate not
 * refuted is proven, every candidate is refuted, or max_runs new runs are
 * spent (the decisions: refine_plan.h; what is stored: fmt_store.h).
 *
 * Every decision is a function of the file's committed rows, so the
 * procedure is deterministic (same file for any thread count, or after
 * slices + merge), repeatable (a decided file is left as it is) and
 * resumable: an interrupted round's rows exist with done = 0, and the next
 * refine runs them first. New replicates get their seeds like every run,
 * from (master seed, point, replicate). The file's writer lock is held for
 * the whole session, so no other writer comes in between two rounds.
 */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "decision.h"
#include "drv.h"
#include "fmt_store.h"
#include "refine.h"
#include "refine_eval.h"
#include "refine_plan.h"

void ana_refine_opts_init(ana_refine_opts *o) {
  memset(o, 0, sizeof *o);
  o->d.min_pass = ANA_DEFAULT_MIN_PASS;
  o->d.max_meta = ANA_DEFAULT_MAX_META;
  o->d.alpha = ANA_SEQ_ALPHA;
  o->d.beta = ANA_SEQ_BETA;
  o->d.ratio = ANA_SEQ_RATIO;
  o->max_runs = ANA_REFINE_MAX_RUNS;
  o->k = ANA_REFINE_K;
}

static void say(const ana_refine_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const ana_refine_opts *o, const char *fmt, ...) {
  if (!o->say) return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  o->say(o->user, line);
}

/* ---- the file's sweep ---- */

/* Loads the sweep stored in the file and checks the file can be refined. */
static int sweep_of_file(const char *path, swp_sweep *sw, int64_t *rows, char *err,
                         size_t errlen) {
  swp_sweep_init(sw);
  fmt_in *in = NULL;
  if (fmt_in_open(&in, path, err, errlen)) return -1;
  const fmt_info *info = fmt_in_info(in);
  int rc = -1;
  if (info->slice_count) {
    snprintf(err, errlen, "%s: holds one slice of a sweep: merge the slices first "
             "('stormsweep merge'), then refine the merged file", path);
  } else if (!fmt_in_sweep(in, sw, err, errlen)) {
    *rows = info->n_runs;
    rc = 0;
  }
  fmt_in_close(in);
  return rc;
}

/* ---- evaluation: the file's data through the plan (refine_eval.h) ---- */

typedef struct evaluation {
  fmt_results r;
  ana_rf_eval x;
} evaluation;

static void evaluation_free(evaluation *e) {
  ana_rf_eval_free(&e->x);
  fmt_results_free(&e->r);
}

static int evaluate(evaluation *e, const char *path, const swp_sweep *sw,
                    const ana_refine_opts *o, char *err, size_t errlen) {
  memset(e, 0, sizeof *e);
  if (fmt_results_read(&e->r, path, err, errlen)) return -1;
  if (ana_judge_user_slo(&e->r, &o->user_slo, err, errlen)) {
    fmt_results_free(&e->r);
    return -1;
  }
  int rc = ana_rf_evaluate(&e->x, &e->r, &o->d, o->k, sw->replicates, -1, err, errlen);
  if (rc == -2) {
    size_t used = strlen(err);
    snprintf(err + used, errlen - used, " (finish it with 'stormsweep run --resume' first)");
  }
  if (rc) fmt_results_free(&e->r);
  return rc ? -1 : 0;
}

/* ---- /refine: design and state ---- */

/* Checks the design against the file's (a refined file keeps its design:
 * changing targets after seeing its confirmation runs would void the
 * error bound). Options not given take the file's values. The record is
 * checked against the runs first (refine_eval.h): a damaged one is refused,
 * not continued. */
static int design_reconcile(ana_refine_opts *o, int64_t r0, char *err, size_t errlen) {
  eng_slo terms;
  int rc = ana_refined_user_slo(o->path, &terms, err, errlen);
  if (rc < 0) return -1;
  if (rc == 0 && !ana_slo_same(&terms, &o->user_slo)) {
    if (o->given_user_slo) {
      char was[256], asked[256];
      ana_slo_format(&terms, was, sizeof was);
      ana_slo_format(&o->user_slo, asked, sizeof asked);
      snprintf(err, errlen,
               "%s: was refined judging runs by %s%s; --slo %s differs, and changing the design "
               "after seeing its confirmation runs would void the error bound (refine a fresh "
               "copy of the sweep instead)",
               o->path, terms.n ? "the SLO terms " : "the queue-recovery check",
               terms.n ? was : "", asked);
      return -1;
    }
    o->user_slo = terms;
  }
  fmt_results r;
  if (fmt_results_read(&r, o->path, err, errlen)) return -1;
  if (ana_judge_user_slo(&r, &o->user_slo, err, errlen)) {
    fmt_results_free(&r);
    return -1;
  }
  ana_refined v;
  rc = ana_refined_load(&v, &r, err, errlen);
  fmt_results_free(&r);
  if (rc < 0) return -1;
  if (rc == 1) return 0;
  fmt_refine_design d = v.design;
  ana_refined_free(&v);
  const char *bad = NULL;
  if (o->given_pass && o->d.min_pass != d.min_pass) bad = "--min-pass";
  else if (o->given_meta && o->d.max_meta != d.max_meta) bad = "--max-metastable";
  else if (o->given_alpha && o->d.alpha != d.alpha) bad = "--alpha";
  else if (o->given_k && o->k != d.k) bad = "--parallel-candidates";
  else if (d.r0 != r0) bad = "the screening replicates";
  if (bad) {
    snprintf(err, errlen,
             "%s: was refined with min_pass %g, max_metastable %g, alpha %g, %d candidates per "
             "round; %s differs, and changing the design after seeing its confirmation runs would "
             "void the error bound (refine a fresh copy of the sweep instead)",
             o->path, d.min_pass, d.max_meta, d.alpha, d.k, bad);
    return -1;
  }
  o->d.min_pass = d.min_pass;
  o->d.max_meta = d.max_meta;
  o->d.alpha = d.alpha;
  o->d.beta = d.beta;
  o->d.ratio = d.ratio;
  o->k = d.k;
  return 0;
}

static int state_store(const char *path, fmt_lock *lock, const ana_rf_eval *e,
                       const ana_refine_opts *o, int64_t rounds, double slo_ms, char *err,
                       size_t errlen) {
  size_t nc = e->rp.n_cand;
  fmt_refine_info ri;
  memset(&ri, 0, sizeof ri);
  ri.cand = calloc(nc ? nc : 1, sizeof *ri.cand);
  if (!ri.cand) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  ri.n_cand = nc;
  for (size_t c = 0; c < nc; c++) {
    const ana_rp_cand *cd = &e->rp.cand[c];
    const ana_rp_point *p = &e->pts[cd->point];
    fmt_refine_cand *row = &ri.cand[c];
    row->rank = (int32_t)cd->rank; /* shared by a robust candidate's scenario values */
    row->point = p->id;
    row->alpha = cd->alpha;
    row->state = (int8_t)cd->seq.state;
    row->runs = cd->seq.n;
    row->not_passing = cd->seq.pass.bad;
    row->metastable = cd->seq.meta.bad;
    row->llr_pass = cd->seq.pass.llr;
    row->llr_meta = cd->seq.meta.llr;
    row->screen_runs = p->n;
    row->screen_pass = p->n_pass;
    row->screen_meta = p->n_meta;
    row->amplification = p->amp;
    row->goodput_lost = p->lost;
  }
  /* runs are judged by their passed_slo, or by the SLO terms */
  ri.d = (fmt_refine_design){o->d.min_pass, o->d.max_meta, o->d.alpha, o->d.beta, o->d.ratio,
                             o->k, e->r0, slo_ms, {0}};
  ana_slo_format(&o->user_slo, ri.d.user_slo, sizeof ri.d.user_slo);
  snprintf(ri.status, sizeof ri.status, "%s", ana_rp_status_name(e->st.status));
  ri.decided_point = e->st.decided >= 0 ? e->pts[e->rp.cand[e->st.decided].point].id : -1;
  ri.decided_rank = e->st.decided >= 0 ? e->rp.cand[e->st.decided].rank : -1;
  ri.closest_point = e->st.closest >= 0 ? e->pts[e->rp.cand[e->st.closest].point].id : -1;
  ri.runs_appended = e->appended;
  ri.rounds = rounds;
  int rc = fmt_refine_write(path, lock, &ri, err, errlen);
  fmt_refine_info_free(&ri);
  return rc;
}

/* ---- running rows ---- */

typedef struct session {
  const ana_refine_opts *o;
  const swp_sweep *sw;
  fmt_lock *lock; /* held for the whole session: no other writer between rounds */
  int64_t done, wall_runs;
  double wall_s;
  int stopped, sig;
} session;

/* Opens the file for appending; runs its pending rows, then (when n > 0)
 * appends n rows and runs them; closes. Returns 0, or an exit status. */
static int run_rows(session *ss, int64_t n, const int64_t *point, const int32_t *rep) {
  const ana_refine_opts *o = ss->o;
  char err[1024];
  fmt_out *out;
  if (fmt_out_open_append(&out, o->path, ss->sw, ss->lock, err, sizeof err)) {
    say(o, "%s", err);
    return 2;
  }
  if (fmt_out_note(out)[0]) say(o, "%s", fmt_out_note(out));
  fmt_run_ref *refs = NULL;
  int64_t np = 0;
  int64_t first = 0;
  int rc = 0;
  if (n > 0 && fmt_out_append(out, n, point, rep, &first, err, sizeof err)) rc = 1;
  if (!rc && fmt_out_pending(out, &refs, &np, err, sizeof err)) rc = 1;
  int64_t base = ss->sw->n_points * ss->sw->replicates;
  for (int64_t i = 0; !rc && i < np; i++)
    if (refs[i].run < base) {
      snprintf(err, sizeof err,
               "%s: the sweep is not complete (run %lld is missing): finish it with 'stormsweep "
               "run --resume' first",
               o->path, (long long)refs[i].run);
      rc = 2;
    }
  if (rc) {
    say(o, "%s", err);
    free(refs);
    fmt_out_close(out, NULL, NULL, 0);
    return rc;
  }
  drv_result res;
  memset(&res, 0, sizeof res);
  char started[32], finished[32];
  fmt_time_iso8601(started, sizeof started);
  if (np > 0) {
    drv_options opt;
    memset(&opt, 0, sizeof opt);
    opt.threads = o->threads;
    opt.stop = o->stop;
    opt.runs = refs;
    opt.n_runs = np;
    /* Confirmation runs are read by their summary rows (refine_eval.c)
     * unless SLO terms judge them by their user-view rows; sequential
     * screening's are screening and keep the file's rows. */
    opt.runs_summary = !o->keep_ticks && !o->user_slo.n;
    opt.summary_from = fmt_screening_replicates(ss->sw->replicates, ss->sw->screen_up_to);
    opt.flush_interval_s = 2.0;
    if (drv_sweep_execute(ss->sw, out, &opt, &res) && !res.stopped) rc = 1;
  }
  fmt_time_iso8601(finished, sizeof finished);
  fmt_timing timing = {.wall_s = res.wall_s,
                       .threads = res.threads,
                       .ranks = 1,
                       .runs_done = res.totals.done,
                       .started = started,
                       .finished = finished,
                       .simulate_s = res.simulate_s,
                       .encode_s = res.encode_s,
                       .write_s = res.write_s};
  if (fmt_out_close(out, np > 0 ? &timing : NULL, err, sizeof err)) {
    say(o, "%s", err);
    rc = 1;
  }
  if (res.first_error[0]) say(o, "%s", res.first_error);
  ss->done += res.totals.done;
  ss->wall_s += res.wall_s;
  if (res.stopped) {
    ss->stopped = 1;
    ss->sig = o->stop ? (int)*o->stop : 0;
  }
  free(refs);
  return rc;
}

/* ---- the procedure ---- */

static void print_point(FILE *f, const ana_rf_eval *x, size_t pi, const swp_sweep *sw) {
  char desc[512];
  swp_sweep_point_describe(sw, x->pts[pi].id, desc, sizeof desc);
  fprintf(f, "point %lld (%s)", (long long)x->pts[pi].id, desc);
}

/* Screening already rules every point out: the nearest (fewest runs that
 * cannot be judged or collapsed, then most passing, then fewest bad). */
static size_t nearest_screened_out(const ana_rf_eval *x, size_t n_points) {
  size_t best = 0;
  for (size_t i = 1; i < n_points; i++) {
    const ana_rp_point *a = &x->pts[i], *b = &x->pts[best];
    if (a->n_collapsed < b->n_collapsed ||
        (a->n_collapsed == b->n_collapsed &&
         (a->n_pass > b->n_pass || (a->n_pass == b->n_pass && a->n_meta < b->n_meta))))
      best = i;
  }
  return best;
}

static void print_decision(const evaluation *e, const ana_refine_opts *o, const swp_sweep *sw,
                           int budget_spent) {
  const ana_rf_eval *x = &e->x;
  const ana_rp_step *st = &x->st;
  char bad[256], counts[160], used[96];
  FILE *f = o->out;
  ana_refine_counts n = ana_refine_counts_of(x, &e->r);
  ana_refine_counts_text(&n, counts, sizeof counts);
  char scr[160];
  if (x->screen_next)
    snprintf(scr, sizeof scr, "%lld replicates each, up to %lld for %zu points by the "
             "sequential rule", (long long)sw->replicates, (long long)x->r_fresh,
             x->screen_open);
  else
    snprintf(scr, sizeof scr, "%lld replicates each", (long long)sw->replicates);
  fprintf(f, "refine: %s (screening: %s); %lld fresh runs appended; of the points under test "
          "%zu proven, %zu refuted, %zu open\n",
          counts, scr, (long long)(x->appended - x->screen_added), st->n_proven, st->n_refuted,
          st->n_open);
  ana_user_slo_note(f, &e->r, e->r.slo_ms);
  if (st->status == ANA_RP_PROVEN) {
    size_t end = (size_t)st->decided + 1;
    while (end < x->rp.n_cand && x->rp.cand[end].rank == x->rp.cand[st->decided].rank) end++;
    if (end - (size_t)st->decided > 1)
      fprintf(f, "PROVEN (robust: at each of its %zu scenario values, every one proven):\n",
              end - (size_t)st->decided);
    for (size_t i = (size_t)st->decided; i < end; i++) {
      const ana_rp_cand *c = &x->rp.cand[i];
      fprintf(f, end - (size_t)st->decided > 1 ? "  " : "PROVEN: ");
      print_point(f, x, c->point, sw);
      ana_rf_tally_describe(&x->fresh[c->point], bad, sizeof bad);
      ana_tested_runs_text(&e->r, c->point, c->seq.n, used, sizeof used);
      char proof[320];
      ana_seq_verdict(&c->seq, proof, sizeof proof);
      fprintf(f, "\n  proven on %s (%s): %s, at alpha_%d = %.3g (rank %d of %zu candidates; "
              "family alpha = %g)\n",
              used, bad, proof, c->rank, c->alpha, c->rank, n.candidates, o->d.alpha);
    }
  } else if (st->status == ANA_RP_NONE && x->rp.n_cand == 0) {
    fprintf(f, "NO POINT QUALIFIES: no point's screening runs are consistent with P(pass) >= %g "
            "and P(bad) <= %g (exact 95%% bounds), so there is nothing to confirm",
            o->d.min_pass, o->d.max_meta);
    if (e->r.n_points) {
      size_t best = nearest_screened_out(x, e->r.n_points);
      const ana_rf_tally *t = &x->screen[best];
      ana_outcome_bad_describe(t->by, bad, sizeof bad);
      fprintf(f, "; closest: ");
      print_point(f, x, best, sw);
      fprintf(f, ", %lld of %lld screening runs passing, %s", (long long)t->pass,
              (long long)t->n, bad);
    }
    fprintf(f, "\n");
  } else if (st->status == ANA_RP_NONE) {
    fprintf(f, "NO POINT QUALIFIES: every candidate was refuted");
    if (st->closest >= 0) {
      const ana_rp_cand *c = &x->rp.cand[st->closest];
      ana_rf_tally_describe(&x->fresh[c->point], bad, sizeof bad);
      fprintf(f, "; closest: ");
      print_point(f, x, c->point, sw);
      ana_tested_runs_text(&e->r, c->point, c->seq.n, used, sizeof used);
      fprintf(f, ", %s: %s", used, bad);
    }
    fprintf(f, "\n");
  } else if (budget_spent) {
    fprintf(f, "UNDECIDED: --max-runs %lld spent; still open:\n", (long long)o->max_runs);
    int shown = 0;
    for (size_t c = 0; c < x->rp.n_cand && shown < 5; c++) {
      const ana_rp_cand *cd = &x->rp.cand[c];
      if (cd->seq.state != ANA_SEQ_OPEN) continue;
      ana_rf_tally_describe(&x->fresh[cd->point], bad, sizeof bad);
      ana_tested_runs_text(&e->r, cd->point, cd->seq.n, used, sizeof used);
      fprintf(f, "  rank %d: ", cd->rank);
      print_point(f, x, cd->point, sw);
      fprintf(f, ": %s (%s), %lld more would prove a perfect point\n",
              used, bad, (long long)ana_rp_runs_to_go(&cd->seq));
      shown++;
    }
  }
}

int ana_refine_file(ana_refine_opts *o, int *stopped) {
  *stopped = 0;
  char err[1024];
  swp_sweep sw;
  int64_t rows = 0;
  /* A file torn so badly that its sweep cannot be read comes back from its
   * journal first: refine takes everything else from the file. */
  char note[1024];
  int salvaged = fmt_out_salvage(o->path, NULL, note, sizeof note, err, sizeof err);
  if (salvaged < 0) {
    say(o, "%s", err);
    return 2;
  }
  if (salvaged == 0) say(o, "%s", note);
  if (sweep_of_file(o->path, &sw, &rows, err, sizeof err)) {
    say(o, "%s", err);
    swp_sweep_free(&sw);
    return 2;
  }
  if (ana_seq_design_check(&o->d, err, sizeof err)) {
    say(o, "%s", err);
    swp_sweep_free(&sw);
    return 2;
  }
  session ss = {o, &sw, NULL, 0, 0, 0, 0, 0};
  if (fmt_lock_acquire(&ss.lock, o->path, err, sizeof err)) {
    say(o, "%s", err);
    swp_sweep_free(&sw);
    return 1;
  }
  /* Under the lock: the record checked is the one this session continues. */
  if (design_reconcile(o, sw.replicates, err, sizeof err)) {
    say(o, "%s", err);
    fmt_lock_release(ss.lock);
    swp_sweep_free(&sw);
    return 2;
  }
  double t0 = omp_get_wtime();
  int rc = 0, round = 0;
  /* Rows of an interrupted round first. */
  rc = run_rows(&ss, 0, NULL, NULL);
  while (!rc && !ss.stopped) {
    evaluation e;
    if (evaluate(&e, o->path, &sw, o, err, sizeof err)) {
      say(o, "%s", err);
      rc = 2;
      break;
    }
    int64_t appended = e.x.appended;
    if (state_store(o->path, ss.lock, &e.x, o, (int64_t)e.r.n_rounds, e.r.slo_ms, err,
                    sizeof err)) {
      say(o, "%s", err);
      evaluation_free(&e);
      rc = 1;
      break;
    }
    int64_t left = o->max_runs - appended;
    if (e.x.st.status != ANA_RP_OPEN || left <= 0) {
      print_decision(&e, o, &sw, e.x.st.status == ANA_RP_OPEN);
      evaluation_free(&e);
      break;
    }
    /* The next round: the K cheapest open candidates, in rank order, each
     * its next replicates; trimmed to what the budget leaves. */
    int64_t n = e.x.st.batch_total < left ? e.x.st.batch_total : left;
    int64_t *pt = malloc((size_t)n * sizeof *pt);
    int32_t *rp = malloc((size_t)n * sizeof *rp);
    if (!pt || !rp) {
      free(pt);
      free(rp);
      evaluation_free(&e);
      say(o, "out of memory");
      rc = 1;
      break;
    }
    int64_t m = 0;
    for (size_t pi = 0; e.x.screen_missing > 0 && pi < e.r.n_points && m < n; pi++)
      for (int64_t rep = e.x.screen_next[pi]; rep >= 0 && rep < e.x.r_fresh && m < n; rep++) {
        pt[m] = e.x.pts[pi].id; /* sequential screening's stage 2 */
        rp[m] = (int32_t)rep;
        m++;
      }
    for (size_t c = 0; c < e.x.rp.n_cand && m < n; c++) {
      size_t pi = e.x.rp.cand[c].point;
      for (int64_t j = 0; j < e.x.batch[c] && m < n; j++) {
        pt[m] = e.x.pts[pi].id;
        rp[m] = (int32_t)(e.x.next_rep[pi] + j);
        m++;
      }
    }
    round++;
    if (!o->quiet && e.x.screen_missing > 0) {
      say(o, "round: screening stage 2: %lld runs for %zu points, up to %lld replicates each "
              "(those %lld replicates left open, neither refuted nor meeting the targets, and "
              "the %d cheapest that met them)",
              (long long)m, e.x.screen_open, (long long)e.x.r_fresh, (long long)e.x.r0,
              ANA_SCREEN_TOP);
    } else if (!o->quiet) {
      size_t given = 0;
      for (size_t c = 0; c < e.x.rp.n_cand; c++) given += e.x.batch[c] > 0;
      say(o, "round: %zu point%s under test, %lld runs (open %zu, proven %zu, "
              "refuted %zu of %zu points; %lld of --max-runs %lld spent)",
              given, given == 1 ? "" : "s", (long long)m, e.x.st.n_open, e.x.st.n_proven,
              e.x.st.n_refuted, e.x.rp.n_cand, (long long)appended, (long long)o->max_runs);
    }
    evaluation_free(&e);
    rc = run_rows(&ss, m, pt, rp);
    free(pt);
    free(rp);
  }
  if (!o->quiet)
    say(o, "%lld runs in %.1f s this session", (long long)ss.done,
            omp_get_wtime() - t0);
  *stopped = ss.stopped;
  /* Every write of the session closed: the file is durable, its journal
   * no longer needed. After a failure the journal is what saves it. */
  if (!rc && fmt_out_session_end(o->path, err, sizeof err)) {
    say(o, "%s", err);
    rc = 1;
  }
  fmt_lock_release(ss.lock);
  swp_sweep_free(&sw);
  (void)rows;
  return rc;
}

