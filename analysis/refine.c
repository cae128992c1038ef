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

/* ---- evaluation: the file's data through the plan ---- */

typedef struct conf_run {
  size_t pi;
  int64_t rep;
  int pass, meta;
} conf_run;

static int cmp_conf(const void *x, const void *y) {
  const conf_run *a = x, *b = y;
  if (a->pi != b->pi) return a->pi < b->pi ? -1 : 1;
  return (a->rep > b->rep) - (a->rep < b->rep);
}

typedef struct evaluation {
  fmt_results r;
  ana_rp rp;
  ana_rp_point *pts;
  int64_t *next_rep;   /* per point index: next replicate to append */
  long *cand_of;       /* per point index: candidate index or -1 */
  int64_t *batch;      /* per candidate */
  ana_rp_step st;
} evaluation;

static void evaluation_free(evaluation *e) {
  ana_rp_free(&e->rp);
  free(e->pts);
  free(e->next_rep);
  free(e->cand_of);
  free(e->batch);
  fmt_results_free(&e->r);
  memset(e, 0, sizeof *e);
}

static int evaluate(evaluation *e, const char *path, const swp_sweep *sw,
                    const ana_seq_design *d, int k, char *err, size_t errlen) {
  memset(e, 0, sizeof *e);
  if (fmt_results_read(&e->r, path, err, errlen)) return -1;
  fmt_results *r = &e->r;
  size_t np = r->n_points;
  int64_t r0 = sw->replicates;
  e->pts = calloc(np ? np : 1, sizeof *e->pts);
  e->next_rep = calloc(np ? np : 1, sizeof *e->next_rep);
  e->cand_of = calloc(np ? np : 1, sizeof *e->cand_of);
  double *amp_n = calloc(np ? np : 1, sizeof *amp_n), *gp_n = calloc(np ? np : 1, sizeof *gp_n);
  conf_run *conf = malloc((r->n_runs ? r->n_runs : 1) * sizeof *conf);
  size_t n_conf = 0;
  int rc = -1;
  if (!e->pts || !e->next_rep || !e->cand_of || !amp_n || !gp_n || !conf) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  long vn = -1;
  for (size_t a = 0; a < r->n_axes; a++)
    if (!strcmp(r->axes[a], "vnodes")) vn = (long)a;
  for (size_t i = 0; i < np; i++) {
    e->pts[i].id = r->point_ids[i];
    e->next_rep[i] = r0;
    e->pts[i].vnodes = vn >= 0 ? r->values[i * r->n_axes + (size_t)vn] : 0.0;
  }
  for (size_t j = 0; j < r->n_runs; j++) {
    const fmt_run *run = &r->runs[j];
    size_t pi = r->point_of_run[j];
    int meta = ana_outcome_counts_metastable(run->outcome);
    int pass = run->outcome == ENG_OUTCOME_RECOVERED && run->passed_slo;
    if (run->replicate < r0) {
      ana_rp_point *p = &e->pts[pi];
      p->n++;
      p->n_pass += pass;
      p->n_meta += meta;
      p->n_collapsed += run->outcome >= ENG_OUTCOME_COLLAPSED;
      if (!isnan(run->amplification)) p->amp += run->amplification, amp_n[pi]++;
      if (!isnan(run->goodput_during)) p->lost += run->goodput_during, gp_n[pi]++;
    } else {
      conf[n_conf++] = (conf_run){pi, run->replicate, pass, meta};
      if (run->replicate + 1 > e->next_rep[pi]) e->next_rep[pi] = run->replicate + 1;
    }
  }
  for (size_t i = 0; i < np; i++) {
    ana_rp_point *p = &e->pts[i];
    if (p->n != r0) {
      snprintf(err, errlen,
               "%s: point %lld has %lld of its %lld screening runs: the sweep is not complete "
               "(finish it with 'stormsweep run --resume' first)",
               path, (long long)p->id, (long long)p->n, (long long)r0);
      goto out;
    }
    p->amp = amp_n[i] > 0 ? p->amp / amp_n[i] : NAN;
    p->lost = gp_n[i] > 0 ? 1.0 - p->lost / gp_n[i] : NAN;
  }
  /* With scenario axes a candidate is a tunable setting over all its
   * scenario values (docs/decisions.md). */
  ana_split split;
  if (ana_split_compute(&split, r)) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  int irc = ana_rp_init_grouped(&e->rp, e->pts, np, split.n_tun ? split.tun_of : NULL, d, err,
                                errlen);
  ana_split_free(&split);
  if (irc) goto out;
  for (size_t i = 0; i < np; i++) e->cand_of[i] = -1;
  for (size_t c = 0; c < e->rp.n_cand; c++) e->cand_of[e->rp.cand[c].point] = (long)c;
  /* Each candidate's fresh runs in replicate order, without gaps. */
  qsort(conf, n_conf, sizeof *conf, cmp_conf);
  for (size_t j = 0; j < n_conf; j++) {
    long c = e->cand_of[conf[j].pi];
    if (c < 0) continue;
    ana_seq *s = &e->rp.cand[c].seq;
    if (conf[j].rep != r0 + s->n) continue; /* a gap: later runs wait for it */
    ana_seq_add(s, conf[j].pass, conf[j].meta);
  }
  e->batch = calloc(e->rp.n_cand ? e->rp.n_cand : 1, sizeof *e->batch);
  if (!e->batch) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  e->st = ana_rp_decide(&e->rp, k, e->batch);
  rc = 0;
out:
  free(amp_n);
  free(gp_n);
  free(conf);
  if (rc) evaluation_free(e);
  return rc;
}

/* ---- /refine: design and state ---- */

/* Checks the design against the file's (a refined file keeps its design:
 * changing targets after seeing its confirmation runs would void the
 * error bound). Options not given take the file's values. */
static int design_reconcile(ana_refine_opts *o, int64_t r0, char *err, size_t errlen) {
  fmt_refine_info ri;
  int rc = fmt_refine_read(o->path, &ri, err, errlen);
  if (rc < 0) return -1;
  if (rc == 1) return 0;
  const char *bad = NULL;
  if (o->given_pass && o->d.min_pass != ri.d.min_pass) bad = "--min-pass";
  else if (o->given_meta && o->d.max_meta != ri.d.max_meta) bad = "--max-metastable";
  else if (o->given_alpha && o->d.alpha != ri.d.alpha) bad = "--alpha";
  else if (o->given_k && o->k != ri.d.k) bad = "--parallel-candidates";
  else if (ri.d.r0 != r0) bad = "the screening replicates";
  if (bad) {
    snprintf(err, errlen,
             "%s: was refined with min_pass %g, max_metastable %g, alpha %g, %d candidates per "
             "round; %s differs, and changing the design after seeing its confirmation runs would "
             "void the error bound (refine a fresh copy of the sweep instead)",
             o->path, ri.d.min_pass, ri.d.max_meta, ri.d.alpha, ri.d.k, bad);
    fmt_refine_info_free(&ri);
    return -1;
  }
  o->d.min_pass = ri.d.min_pass;
  o->d.max_meta = ri.d.max_meta;
  o->d.alpha = ri.d.alpha;
  o->d.beta = ri.d.beta;
  o->d.ratio = ri.d.ratio;
  o->k = ri.d.k;
  fmt_refine_info_free(&ri);
  return 0;
}

static int state_store(const char *path, fmt_lock *lock, const evaluation *e,
                       const ana_refine_opts *o, int64_t r0, int64_t appended, char *err,
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
  ri.d = (fmt_refine_design){o->d.min_pass, o->d.max_meta, o->d.alpha, o->d.beta, o->d.ratio,
                             o->k, r0};
  snprintf(ri.status, sizeof ri.status, "%s",
           e->st.status == ANA_RP_PROVEN ? "proven" : e->st.status == ANA_RP_NONE ? "none" : "open");
  ri.decided_point = e->st.decided >= 0 ? e->pts[e->rp.cand[e->st.decided].point].id : -1;
  ri.decided_rank = e->st.decided >= 0 ? e->rp.cand[e->st.decided].rank : -1;
  ri.closest_point = e->st.closest >= 0 ? e->pts[e->rp.cand[e->st.closest].point].id : -1;
  ri.runs_appended = appended;
  ri.rounds = (int64_t)e->r.n_rounds;
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

static void print_point(FILE *f, const evaluation *e, size_t pi, const swp_sweep *sw) {
  char desc[512];
  swp_sweep_point_describe(sw, e->pts[pi].id, desc, sizeof desc);
  fprintf(f, "point %lld (%s)", (long long)e->pts[pi].id, desc);
}

static void print_decision(const evaluation *e, const ana_refine_opts *o, const swp_sweep *sw,
                           int64_t appended, int budget_spent) {
  const ana_rp_step *st = &e->st;
  fprintf(o->out, "refine: %zu candidates of %zu points (screening: %lld replicates each); %lld fresh "
         "runs appended; %zu proven, %zu refuted, %zu open\n",
         e->rp.n_cand, e->r.n_points, (long long)sw->replicates, (long long)appended,
         st->n_proven, st->n_refuted, st->n_open);
  if (st->status == ANA_RP_PROVEN) {
    size_t end = (size_t)st->decided + 1;
    while (end < e->rp.n_cand && e->rp.cand[end].rank == e->rp.cand[st->decided].rank) end++;
    if (end - (size_t)st->decided > 1)
      fprintf(o->out, "PROVEN (robust: at each of its %zu scenario values, every one proven):\n",
             end - (size_t)st->decided);
    for (size_t i = (size_t)st->decided; i < end; i++) {
      const ana_rp_cand *c = &e->rp.cand[i];
      fprintf(o->out, end - (size_t)st->decided > 1 ? "  " : "PROVEN: ");
      print_point(o->out, e, c->point, sw);
      fprintf(o->out, "\n  P(pass) >= %g and P(metastable) <= %g proven by SPRT on %lld fresh runs (%lld "
             "not passing, %lld metastable), alpha_%d = %.3g (rank %d of %zu candidates; family "
             "alpha = %g)\n",
             o->d.min_pass, o->d.max_meta, (long long)c->seq.n, (long long)c->seq.pass.bad,
             (long long)c->seq.meta.bad, c->rank, c->alpha, c->rank, e->rp.n_groups,
             o->d.alpha);
    }
  } else if (st->status == ANA_RP_NONE && e->rp.n_cand == 0) {
    /* Screening already rules every point out: name the nearest. */
    size_t best = 0;
    for (size_t i = 1; i < e->r.n_points; i++) {
      const ana_rp_point *a = &e->pts[i], *b = &e->pts[best];
      if (a->n_collapsed < b->n_collapsed ||
          (a->n_collapsed == b->n_collapsed &&
           (a->n_pass > b->n_pass || (a->n_pass == b->n_pass && a->n_meta < b->n_meta))))
        best = i;
    }
    fprintf(o->out, "NO POINT QUALIFIES: no point's screening runs are consistent with P(pass) >= %g and "
           "P(metastable) <= %g (exact 95%% bounds), so there is nothing to confirm",
           o->d.min_pass, o->d.max_meta);
    if (e->r.n_points) {
      fprintf(o->out, "; closest: ");
      print_point(o->out, e, best, sw);
      fprintf(o->out, ", %lld of %lld screening runs passing, %lld metastable",
             (long long)e->pts[best].n_pass, (long long)e->pts[best].n, (long long)e->pts[best].n_meta);
    }
    fprintf(o->out, "\n");
  } else if (st->status == ANA_RP_NONE) {
    fprintf(o->out, "NO POINT QUALIFIES: every candidate was refuted");
    if (st->closest >= 0) {
      const ana_rp_cand *c = &e->rp.cand[st->closest];
      fprintf(o->out, "; closest: ");
      print_point(o->out, e, c->point, sw);
      fprintf(o->out, ", %lld of %lld fresh runs not passing, %lld metastable", (long long)c->seq.pass.bad,
             (long long)c->seq.n, (long long)c->seq.meta.bad);
    }
    fprintf(o->out, "\n");
  } else if (budget_spent) {
    fprintf(o->out, "UNDECIDED: --max-runs %lld spent; still open:\n", (long long)o->max_runs);
    int shown = 0;
    for (size_t c = 0; c < e->rp.n_cand && shown < 5; c++) {
      const ana_rp_cand *cd = &e->rp.cand[c];
      if (cd->seq.state != ANA_SEQ_OPEN) continue;
      fprintf(o->out, "  rank %d: ", cd->rank);
      print_point(o->out, e, cd->point, sw);
      fprintf(o->out, ": %lld fresh runs, %lld not passing, %lld more would prove a perfect point\n",
             (long long)cd->seq.n, (long long)cd->seq.pass.bad,
             (long long)ana_rp_runs_to_go(&cd->seq));
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
  int64_t base = sw.n_points * sw.replicates;
  if (ana_seq_design_check(&o->d, err, sizeof err) || design_reconcile(o, sw.replicates, err,
                                                                       sizeof err)) {
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
  double t0 = omp_get_wtime();
  int rc = 0, round = 0;
  /* Rows of an interrupted round first. */
  rc = run_rows(&ss, 0, NULL, NULL);
  while (!rc && !ss.stopped) {
    evaluation e;
    if (evaluate(&e, o->path, &sw, &o->d, o->k, err, sizeof err)) {
      say(o, "%s", err);
      rc = 2;
      break;
    }
    int64_t appended = (int64_t)e.r.n_runs + (int64_t)e.r.n_skipped - base;
    if (state_store(o->path, ss.lock, &e, o, sw.replicates, appended, err, sizeof err)) {
      say(o, "%s", err);
      evaluation_free(&e);
      rc = 1;
      break;
    }
    int64_t left = o->max_runs - appended;
    if (e.st.status != ANA_RP_OPEN || left <= 0) {
      print_decision(&e, o, &sw, appended, e.st.status == ANA_RP_OPEN);
      evaluation_free(&e);
      break;
    }
    /* The next round: the K cheapest open candidates, in rank order, each
     * its next replicates; trimmed to what the budget leaves. */
    int64_t n = e.st.batch_total < left ? e.st.batch_total : left;
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
    for (size_t c = 0; c < e.rp.n_cand && m < n; c++) {
      size_t pi = e.rp.cand[c].point;
      for (int64_t j = 0; j < e.batch[c] && m < n; j++) {
        pt[m] = e.pts[pi].id;
        rp[m] = (int32_t)(e.next_rep[pi] + j);
        m++;
      }
    }
    round++;
    if (!o->quiet) {
      size_t given = 0;
      for (size_t c = 0; c < e.rp.n_cand; c++) given += e.batch[c] > 0;
      say(o, "round: %zu candidate%s, %lld runs (open %zu, proven %zu, "
              "refuted %zu of %zu; %lld of --max-runs %lld spent)",
              given, given == 1 ? "" : "s", (long long)m, e.st.n_open, e.st.n_proven,
              e.st.n_refuted, e.rp.n_cand, (long long)appended, (long long)o->max_runs);
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

