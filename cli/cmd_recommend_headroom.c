/*
 * cmd_recommend_headroom.c — the headroom of `recommend`: for the chosen
 * setting, the load (and, when the file sweeps one, the fault size) at which
 * it stops passing, located by the boundary search (analysis/boundary.h) on
 * fresh runs of the file's own sweep at that point, nothing else changed.
 *
 * The response is "the run did not pass" (decision.h's rule, at the SLO
 * asked) and the level 1 - min_pass: where P(pass) falls below the target.
 * Bounded: at most max_runs runs per search, in batches of 32; nothing is
 * written. Run k of a search has seed eng_seed_derive(master ^ salt, point,
 * k): fixed, so the same file gives the same text on any thread count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary.h"
#include "cli.h"
#include "decision.h"
#include "drv.h"
#include "textsafe.h"

/* Keys along which a bigger value is a bigger fault: searched when the
 * file sweeps them (upper end: twice the largest value swept, capped). */
static const struct {
  const char *key;
  double cap;
} fault_keys[] = {{"surge_factor", 1e6}, {"hot_key_share", 1.0}};

typedef struct hctx {
  eng_config cfg;
  const char *key;
  int is_int;
  double slo_ms;
  uint64_t master, point;
  const volatile sig_atomic_t *stop;
  int threads;
  const double *x;
  int64_t first;
  uint8_t *y;
} hctx;

static void h_job(void *user, int64_t j, drv_job *job) {
  const hctx *c = user;
  job->run = c->first + j;
  job->point = -1;
  job->replicate = 0;
  job->seed = eng_seed_derive(c->master, c->point, (uint64_t)job->run);
}

static int h_config(void *user, int64_t j, const drv_job *job, eng_config *cfg, char *msg,
                    size_t msglen) {
  (void)job;
  const hctx *c = user;
  return cli_axis_config(&c->cfg, c->key, c->is_int, c->x[j], cfg, msg, msglen);
}

static int h_record(void *user, const fmt_run_record *rec, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  hctx *c = user;
  const eng_summary *s = &rec->summary;
  c->y[rec->run - c->first] =
      !ana_run_passes(&c->cfg.user_slo, s->outcome, s->recovery_ms, s->user_recovery_ms, c->slo_ms);
  return 0;
}

static int h_oracle(void *user, int64_t first, size_t m, const double *x, uint8_t *const *y,
                    char *err, size_t errlen) {
  hctx *c = user;
  c->first = first;
  c->x = x;
  c->y = y[0];
  eng_memory most = {0}, one;
  for (size_t i = 0; i < m; i++) {
    eng_config cfg;
    char msg[256];
    if (h_config(c, (int64_t)i, NULL, &cfg, msg, sizeof msg)) continue;
    eng_run_memory(&cfg, 0, &one);
    eng_memory_max(&most, &one);
  }
  drv_source src = {(int64_t)m, h_job, h_config, 0, {0}, c, &most, NULL};
  drv_sink sink = {h_record, NULL, c};
  drv_options opt = {.threads = c->threads, .stop = c->stop};
  drv_result res;
  if (drv_execute(&src, &sink, &opt, &res)) {
    snprintf(err, errlen, "%s", res.stopped ? "interrupted" : res.first_error);
    return -1;
  }
  return 0;
}

/* One search along key from the point's value to hi; prints one line. */
static int search_one(FILE *out, hctx *c, const char *key, double from, double hi,
                      double min_pass, int64_t max_runs, int64_t *spent) {
  const eng_setting *st = eng_settings_find(key);
  c->key = key;
  c->is_int = st && (st->type == ENG_SET_INT || st->type == ENG_SET_INT64);
  ana_bnd_opts o = {.lo = from, .hi = hi, .n_resp = 1, .level = {1.0 - min_pass},
                    .conf = 0.95, .width = 0.05, .max_runs = max_runs, .batch = 32};
  char err[512];
  if (!(hi > from) || ana_bnd_opts_check(&o, err, sizeof err)) {
    fprintf(out, "  %s: no headroom search (the setting's %s = %g is already at the top of "
                 "what can be searched)\n", key, key, from);
    return 0;
  }
  ana_bnd_search bs;
  int rc = ana_bnd_search_run(&bs, &o, h_oracle, c, err, sizeof err);
  *spent += bs.n;
  if (rc) {
    fprintf(out, "  %s: the headroom search stopped: ", key);
    ana_term_fputs(out, err, 0);
    fputc('\n', out);
    ana_bnd_search_free(&bs);
    return -1;
  }
  const ana_bnd_crossing *x = &bs.cross[0];
  double e = ana_bnd_x_of_t(&o, x->est), lo = ana_bnd_x_of_t(&o, x->lo),
         hi_x = ana_bnd_x_of_t(&o, x->hi);
  switch (x->status) {
  case ANA_BND_FOUND:
    fprintf(out, "  passes up to %s %.3g [%s%.3g, %.3g%s] (P(pass) falls below %g there; the "
                 "setting's own %s is %g) — %lld runs%s\n",
            key, e, x->lo_open ? "<=" : "", lo, hi_x, x->hi_open ? "+" : "", min_pass, key, from,
            (long long)bs.n, bs.resolved[0] ? "" : ", interval not resolved within the budget");
    break;
  case ANA_BND_BELOW:
    fprintf(out, "  %s: P(pass) is already below %g at the setting's own %s = %g on these "
                 "fresh runs: no headroom (%lld runs)\n",
            key, min_pass, key, from, (long long)bs.n);
    break;
  case ANA_BND_ABOVE:
  case ANA_BND_ABSENT:
    fprintf(out, "  passes beyond %s %.3g, the top of the search (from %g; %lld runs%s)\n", key,
            hi, from, (long long)bs.n,
            x->status == ANA_BND_ABSENT ? ", every run had the same outcome" : "");
    break;
  default:
    fprintf(out, "  %s: no crossing computed (%lld runs)\n", key, (long long)bs.n);
  }
  ana_bnd_search_free(&bs);
  return 0;
}

int cli_headroom_print(FILE *out, const fmt_results *r, size_t point_index, double min_pass,
                       double slo_ms, int64_t max_runs, int threads) {
  char err[1024];
  fmt_in *in = NULL;
  swp_sweep sw;
  swp_sweep_init(&sw);
  fprintf(out, "Headroom (fresh runs of point %lld, not stored; --no-headroom skips it):\n",
          (long long)r->point_ids[point_index]);
  if (fmt_in_open(&in, r->path, err, sizeof err) || fmt_in_sweep(in, &sw, err, sizeof err)) {
    fprintf(out, "  cannot run: the file's sweep cannot be read back (");
    ana_term_fputs(out, err, 0);
    fprintf(out, ")\n");
    if (in) fmt_in_close(in);
    swp_sweep_free(&sw);
    return 0;
  }
  fmt_in_close(in);
  hctx c;
  memset(&c, 0, sizeof c);
  c.slo_ms = slo_ms;
  c.threads = threads;
  c.master = sw.seed ^ 0x68656164726f6f6dull; /* "headroom": apart from the sweep's seeds */
  c.point = (uint64_t)r->point_ids[point_index];
  if (swp_sweep_point_config(&sw, r->point_ids[point_index], &c.cfg, err, sizeof err)) {
    fprintf(out, "  cannot run: ");
    ana_term_fputs(out, err, 0);
    fputc('\n', out);
    swp_sweep_free(&sw);
    return 0;
  }
  c.stop = cli_stop_install();
  int64_t spent = 0;
  int rc = 0;
  double load = eng_config_get_number(&c.cfg, "load");
  if (!isnan(load))
    rc = search_one(out, &c, "load", load, fmax(1.0, load), min_pass, max_runs, &spent);
  for (size_t k = 0; !rc && k < sizeof fault_keys / sizeof fault_keys[0]; k++) {
    long a = -1;
    for (size_t i = 0; i < r->n_axes; i++)
      if (!strcmp(r->axes[i], fault_keys[k].key)) a = (long)i;
    if (a < 0) continue;
    double v = eng_config_get_number(&c.cfg, fault_keys[k].key), top = v;
    for (size_t p = 0; p < r->n_points; p++) top = fmax(top, r->values[p * r->n_axes + a]);
    rc = search_one(out, &c, fault_keys[k].key, v, fmin(fault_keys[k].cap, 2 * top), min_pass,
                    max_runs, &spent);
  }
  int sig = cli_stop_signal();
  cli_stop_restore();
  swp_sweep_free(&sw);
  if (sig) return CLI_EXIT_SIGNAL + sig;
  return 0;
}
