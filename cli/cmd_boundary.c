/*
 * cmd_boundary.c — `stormsweep boundary`: where along one numeric axis a
 * cluster tips into metastability, and where P(pass) falls below its target,
 * with confidence intervals, for every combination of the sweep's other axes.
 *
 * The statistics (fit, interval, design, uniform-grid equivalent) live in
 * analysis/boundary.c; this file feeds it runs through the driver (each
 * batch the design asks for is one drv_execute), prints the table, and
 * writes the /boundary group (fmt_file_write) and a plot per combination
 * (built privately, drawn by plot.h's gnuplot runner, installed as
 * BASE-cK.png/.gp/.dat). Run k of combination c has seed
 * eng_seed_derive(master, c, k): the batch positions depend only on earlier
 * results, so the output is identical for any thread count.
 */
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "boundary.h"
#include "cli.h"
#include "decision.h"
#include "drv.h"
#include "fmt_outfile.h"
#include "fmt_store.h"
#include "plot.h"

#define MAX_COMBOS_PLOTTED 8

typedef struct brun {
  int64_t combination, index;
  double x;
  uint64_t seed;
  int8_t outcome, passed;
  double recovery_ms;
  int8_t y[ANA_BND_MAX_RESP];
} brun;

typedef struct bargs {
  const char *axis, *range, *out_path, *seed_s, *sweep_path;
  double level, min_pass, slo_ms, goodput_below, width;
  long long max_runs, batch;
  int threads, log_scale, force, no_plot, quiet;
  int allow_dead; /* --allow-dead-axes: a dead axis is a warning, not an error */
  eng_slo user_slo; /* --slo: pass judged by what users saw (none: the queue check) */
  const char **sets;
  size_t n_sets;
} bargs;

typedef struct bctx {
  const swp_sweep *sw;
  const char *key;
  int is_int;
  double goodput_below; /* > 0: the response is "success ratio below this" */
  int64_t combination;
  eng_config cfg;       /* the combination's configuration */
  eng_slo user_slo;     /* --slo terms every run is judged by (passed_slo) */
  int threads;
  const volatile sig_atomic_t *stop;
  int64_t first;        /* the batch being run: its first index and values */
  const double *x;
  brun *batch;
  brun *rec;            /* every run of every combination, in order */
  int64_t n_rec, cap_rec;
} bctx;

typedef struct bresult {
  ana_bnd_fit fit[ANA_BND_MAX_RESP];
  ana_bnd_crossing cross[ANA_BND_MAX_RESP];
  int64_t runs, uniform[ANA_BND_MAX_RESP], uniform_levels[ANA_BND_MAX_RESP],
      uniform_reps[ANA_BND_MAX_RESP];
} bresult;

static void usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep boundary [SWEEP.ini] --axis KEY --range LO:HI [--log] [--level P]\n"
          "                           [--min-pass P] [--slo-ms MS] [--slo TERMS]\n"
          "                           [--set KEY=VALUE]...\n"
          "                           [--max-runs N] [--width W] [--batch N] [-j N] [-o FILE]\n"
          "                           [--seed S] [--force] [--no-plot] [--quiet]\n"
          "                           [--allow-dead-axes]\n"
          "\n"
          "Finds, for each combination of the sweep's other axes (without SWEEP.ini: the\n"
          "built-in seed study's scenario, its grid dropped), the value of the numeric setting\n"
          "KEY at which P(bad) crosses P and the edge where P(pass) falls below the\n"
          "target, each with a 95%% profile-likelihood interval from a logistic fit. Runs are\n"
          "placed adaptively near the current crossing; it reports the runs spent and what a\n"
          "uniform grid of equal precision would cost (docs/reference.md \"Boundary search\").\n"
          "P(bad) is the share of runs metastable, collapsed or undetermined, as in every\n"
          "other command; a response that falls again is reported as non-monotone.\n"
          "\n"
          "  --axis KEY           numeric setting to search along (any engine setting)\n"
          "  --range LO:HI        search interval of KEY\n"
          "  --log                fit and place runs on ln KEY (LO > 0)\n"
          "  --level P            P(bad) level to locate (default 0.5)\n"
          "  --min-pass P         P(pass) target whose edge to locate (default 0.9)\n"
          "  --slo-ms MS          recovery SLO for pass (default: the scenario's slo_ms)\n"
          "  --slo TERMS          judge pass by what users saw, e.g. \"p99<=500ms,errors<=1%%\":\n"
          "                       every term holds again within slo_ms of clearance\n"
          "                       (default: the queue-recovery check)\n"
          "  --set KEY=VALUE      fix a setting (removes its axis; also seed=, name=)\n"
          "  --max-runs N         run budget per combination (default 2000)\n"
          "  --width W            stop when each interval is narrower than W x the range\n"
          "                       width (on ln KEY with --log; default 0.05)\n"
          "  --batch N            runs per design step (default 32)\n"
          "  --allow-dead-axes    search anyway when KEY, or an axis of the sweep, cannot\n"
          "                       change any run under the other settings (a warning\n"
          "                       instead of the refusal; docs/reference.md \"Dead axes\")\n"
          "  --goodput-below F    instead: locate where P(success ratio < F) crosses --level\n"
          "                       (closed-form edges; docs/reference.md \"Boundary search\")\n"
          "  -j, --threads N      OpenMP threads (default: all)\n"
          "  -o, --output FILE    HDF5 file with a /boundary group (default boundary.h5);\n"
          "                       plots go to FILE without .h5 plus -cK.png (with the\n"
          "                       -cK.gp script and -cK.dat data that draw it)\n"
          "  --seed S             master seed (default: the sweep's)\n"
          "  -f, --force          overwrite FILE and its plots\n"
          "  --no-plot            skip gnuplot\n"
          "  -q, --quiet          no progress lines\n"
          "\n"
          "Exit status: 0 done, 1 a run, the file or gnuplot failed, 2 bad usage, 130/143\n"
          "interrupted (nothing written).\n");
}

/* ---- options ---- */

/* Returns -1 to go on, or the exit status. */
static int parse_args(bargs *b, int argc, char **argv) {
  enum { O_AXIS = 256, O_RANGE, O_LOG, O_LEVEL, O_MINPASS, O_SLO, O_USER_SLO, O_SET, O_MAXRUNS, O_WIDTH,
         O_BATCH, O_SEED, O_NOPLOT, O_GOODPUT, O_ALLOW_DEAD };
  static const struct option opts[] = {
      {"axis", required_argument, 0, O_AXIS},     {"range", required_argument, 0, O_RANGE},
      {"log", no_argument, 0, O_LOG},             {"level", required_argument, 0, O_LEVEL},
      {"min-pass", required_argument, 0, O_MINPASS}, {"slo-ms", required_argument, 0, O_SLO},
      {"slo", required_argument, 0, O_USER_SLO},
      {"set", required_argument, 0, O_SET},       {"max-runs", required_argument, 0, O_MAXRUNS},
      {"width", required_argument, 0, O_WIDTH},   {"batch", required_argument, 0, O_BATCH},
      {"seed", required_argument, 0, O_SEED},     {"no-plot", no_argument, 0, O_NOPLOT},
      {"goodput-below", required_argument, 0, O_GOODPUT},
      {"allow-dead-axes", no_argument, 0, O_ALLOW_DEAD},
      {"threads", required_argument, 0, 'j'},     {"output", required_argument, 0, 'o'},
      {"force", no_argument, 0, 'f'},             {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
  const char *cmd = "boundary";
  memset(b, 0, sizeof *b);
  b->out_path = "boundary.h5";
  b->level = 0.5;
  b->min_pass = 0.9;
  b->slo_ms = NAN;
  b->width = 0.05;
  b->max_runs = 2000;
  b->batch = 32;
  b->sets = calloc((size_t)argc + 1, sizeof *b->sets);
  if (!b->sets) return CLI_EXIT_FAIL;
  uint64_t seed;
  int c;
  cli_opts_begin(argc, argv);
  while ((c = cli_getopt(cmd, argc, argv, ":j:o:fqh", opts)) != -1) {
    int bad = 0;
    switch (c) {
    case O_AXIS: b->axis = optarg; break;
    case O_RANGE: b->range = optarg; break;
    case O_LOG: b->log_scale = 1; break;
    case O_LEVEL: bad = cli_parse_prob(cmd, "--level", optarg, &b->level); break;
    case O_MINPASS: bad = cli_parse_prob(cmd, "--min-pass", optarg, &b->min_pass); break;
    case O_SLO: bad = cli_parse_number(cmd, "--slo-ms", optarg, 0, 1e12, &b->slo_ms); break;
    case O_USER_SLO: {
      char why[256];
      if (ana_slo_parse(optarg, &b->user_slo, why, sizeof why)) {
        cli_error(cmd, "%s", why);
        bad = 1;
      }
      break;
    }
    case O_SET: b->sets[b->n_sets++] = optarg; break;
    case O_MAXRUNS: bad = cli_parse_count(cmd, "--max-runs", optarg, 2, SWP_MAX_RUNS, &b->max_runs); break;
    case O_WIDTH: bad = cli_parse_number(cmd, "--width", optarg, 0, 1e9, &b->width); break;
    case O_BATCH: bad = cli_parse_count(cmd, "--batch", optarg, 2, 1000000, &b->batch); break;
    case O_SEED:
      bad = cli_parse_seed(cmd, "--seed", optarg, &seed);
      b->seed_s = optarg;
      break;
    case O_NOPLOT: b->no_plot = 1; break;
    case O_ALLOW_DEAD: b->allow_dead = 1; break;
    case O_GOODPUT:
      bad = cli_parse_number(cmd, "--goodput-below", optarg, 0, 1, &b->goodput_below) ||
            !(b->goodput_below > 0);
      if (bad && b->goodput_below == 0)
        cli_error(cmd, "--goodput-below: expected a success ratio above 0, got '%s'", optarg);
      break;
    case 'j': bad = cli_parse_threads(cmd, "-j", optarg, &b->threads); break;
    case 'o': b->out_path = optarg; break;
    case 'f': b->force = 1; break;
    case 'q': b->quiet = 1; break;
    case 'h': usage(stdout); return CLI_EXIT_OK;
    default: return CLI_EXIT_USAGE;
    }
    if (bad) return CLI_EXIT_USAGE;
  }
  b->sweep_path = optind < argc ? argv[optind] : NULL;
  if (optind + 1 < argc) {
    cli_error(cmd, "one sweep file at most ('%s' is extra)", argv[optind + 1]);
    return CLI_EXIT_USAGE;
  }
  if (!b->axis || !b->range) {
    cli_error(cmd, "--axis KEY and --range LO:HI are required");
    return CLI_EXIT_USAGE;
  }
  if (b->user_slo.n && b->goodput_below > 0) {
    cli_error(cmd, "--slo judges P(pass), which --goodput-below does not locate");
    return CLI_EXIT_USAGE;
  }
  return -1;
}

/* The search options from the arguments. Returns 0 or the exit status. */
static int search_opts(const bargs *b, ana_bnd_opts *o) {
  *o = (ana_bnd_opts){.log_scale = b->log_scale, .conf = 0.95, .width = b->width,
                      .max_runs = b->max_runs, .batch = b->batch};
  char rbuf[256], *end;
  snprintf(rbuf, sizeof rbuf, "%s", b->range);
  char *colon = strchr(rbuf, ':');
  o->lo = o->hi = NAN;
  if (colon) {
    *colon = 0;
    o->lo = strtod(rbuf, &end);
    if (end == rbuf || *end) o->lo = NAN;
    o->hi = strtod(colon + 1, &end);
    if (end == colon + 1 || *end) o->lo = NAN;
  }
  o->n_resp = b->goodput_below > 0 ? 1 : 2;
  o->level[0] = b->level;
  o->level[1] = 1 - b->min_pass; /* P(fail) crosses 1 - target where P(pass) crosses target */
  char err[512];
  if (ana_bnd_opts_check(o, err, sizeof err)) {
    cli_error("boundary", "%s (got %s)", err, b->range);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

static int set_one(swp_sweep *sw, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int set_one(swp_sweep *sw, const char *what, const char *fmt, ...) {
  char a[512], err[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a, sizeof a, fmt, ap);
  va_end(ap);
  if (!swp_sweep_override_set(sw, a, err, sizeof err)) return 0;
  if (what) cli_error("boundary", "%s: %s", what, err);
  else cli_error_text("boundary", err);
  return -1;
}

/* The sweep: its combinations, the axis at the range's start, the options
 * folded in, both ends of the range valid. Returns 0 or the exit status. */
static int load_sweep(const bargs *b, const eng_setting *st, const ana_bnd_opts *o,
                      swp_sweep *sw) {
  char err[1024];
  int is_int = st->type == ENG_SET_INT || st->type == ENG_SET_INT64;
  if (b->sweep_path ? swp_sweep_parse_file(sw, b->sweep_path, err, sizeof err)
                    : swp_sweep_parse_seed_study(sw, err, sizeof err)) {
    cli_error_text("boundary", err);
    return CLI_EXIT_USAGE;
  }
  if (!b->sweep_path) /* the seed study's scenario: its grid dropped */
    while (sw->n_axes) {
      const eng_setting *ax = eng_settings_find(sw->axes[0].key);
      eng_config d;
      eng_config_defaults(&d);
      char dv[128];
      int rc = ax && !eng_config_get(&d, ax->key, dv, sizeof dv)
                   ? set_one(sw, NULL, "%s=%s", ax->key, dv)
                   : set_one(sw, NULL, "%s=%s", sw->axes[0].key, sw->axes[0].values[0]);
      if (rc) return CLI_EXIT_USAGE;
    }
  for (size_t i = 0; i < b->n_sets; i++)
    if (set_one(sw, NULL, "%s", b->sets[i])) return CLI_EXIT_USAGE;
  if (set_one(sw, "--range", "%s=%.17g", st->key, is_int ? round(o->lo) : o->lo) ||
      (!isnan(b->slo_ms) && set_one(sw, "--slo-ms", "slo_ms=%.17g", b->slo_ms)) ||
      (b->seed_s && set_one(sw, "--seed", "seed=%s", b->seed_s)))
    return CLI_EXIT_USAGE;
  if (swp_sweep_check(sw, err, sizeof err)) {
    cli_error_text("boundary", err);
    return CLI_EXIT_USAGE;
  }
  if (cli_dead_axes("boundary", sw, b->allow_dead)) return CLI_EXIT_USAGE;
  /* The searched setting itself: dead at every combination, every run of
   * the search would repeat the others. */
  int live = 0;
  char why[400] = "";
  for (int64_t p = 0; p < sw->n_points && !live; p++) {
    eng_config cfg;
    if (swp_sweep_point_config(sw, p, &cfg, err, sizeof err)) {
      cli_error_text("boundary", err);
      return CLI_EXIT_USAGE;
    }
    live = eng_setting_live(&cfg, st->key, why, sizeof why);
  }
  if (!live) {
    fprintf(stderr, "stormsweep boundary: %s--axis %s: the axis cannot change any run: %s%s\n",
            b->allow_dead ? "warning: " : "", st->key, why,
            sw->n_points > 1 ? " (at every combination)" : "");
    if (!b->allow_dead) {
      fprintf(stderr, "stormsweep boundary: search another setting, change the one that makes "
              "%s dead, or pass --allow-dead-axes to search anyway (its runs would repeat "
              "each other)\n", st->key);
      return CLI_EXIT_USAGE;
    }
  }
  /* the far end of the range must be a valid configuration too */
  eng_memory most = sw->run_memory, m;
  for (int64_t p = 0; p < sw->n_points; p++) {
    eng_config cfg;
    char v[64];
    snprintf(v, sizeof v, "%.17g", is_int ? round(o->hi) : o->hi);
    if (swp_sweep_point_config(sw, p, &cfg, err, sizeof err) ||
        eng_config_set(&cfg, st->key, v, err, sizeof err) ||
        eng_config_validate(&cfg, err, sizeof err)) {
      cli_error("boundary", "--range %s: %s", b->range, err);
      return CLI_EXIT_USAGE;
    }
    eng_run_memory(&cfg, 0, &m); /* boundary keeps no rows */
    eng_memory_max(&most, &m);
  }
  /* The estimate grows or shrinks with any one setting, so a run between
   * the ends needs no more than the larger end. */
  if (drv_memory_check(&most, 0, NULL, 0, b->threads, err, sizeof err)) {
    cli_error_text("boundary", err);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* ---- the runs: a batch of the design through the driver ---- */

static void batch_job(void *user, int64_t j, drv_job *job) {
  const bctx *c = user;
  job->run = c->first + j;
  job->point = -1; /* every run has its own axis value: no configuration cache */
  job->replicate = 0;
  job->seed = eng_seed_derive(c->sw->seed, (uint64_t)c->combination, (uint64_t)job->run);
}

int cli_axis_config(const eng_config *base, const char *key, int is_int, double x,
                    eng_config *cfg, char *msg, size_t msglen) {
  char val[64];
  *cfg = *base;
  snprintf(val, sizeof val, is_int ? "%.0f" : "%.17g", is_int ? round(x) : x);
  return eng_config_set(cfg, key, val, msg, msglen);
}

static int batch_config(void *user, int64_t j, const drv_job *job, eng_config *cfg, char *msg,
                        size_t msglen) {
  (void)job;
  const bctx *c = user;
  return cli_axis_config(&c->cfg, c->key, c->is_int, c->x[j], cfg, msg, msglen);
}

static int batch_record(void *user, const fmt_run_record *rec, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  bctx *c = user;
  const eng_summary *s = &rec->summary;
  int64_t i = rec->run - c->first;
  brun *b = &c->batch[i];
  b->combination = c->combination;
  b->index = rec->run;
  b->x = c->is_int ? round(c->x[i]) : c->x[i];
  b->seed = s->seed;
  b->outcome = (int8_t)s->outcome;
  b->passed = (int8_t)s->passed_slo;
  b->recovery_ms = s->recovery_ms;
  if (c->goodput_below > 0) {
    double ratio = s->new_requests > 0 ? (double)s->successes / (double)s->new_requests : 1;
    b->y[0] = ratio < c->goodput_below;
  } else {
    b->y[0] = ana_outcome_is_bad(s->outcome); /* the one bad-run rule (decision.h) */
    b->y[1] = !s->passed_slo; /* the crossing of P(pass) = target is that of P(fail) = 1 - target */
  }
  return 0;
}

static int engine_oracle(void *user, int64_t first, size_t m, const double *x, uint8_t *const *y,
                         char *err, size_t errlen) {
  bctx *c = user;
  if (c->n_rec + (int64_t)m > c->cap_rec) {
    int64_t cap = c->cap_rec ? c->cap_rec : 1024;
    while (cap < c->n_rec + (int64_t)m) cap *= 2;
    brun *n = realloc(c->rec, (size_t)cap * sizeof *n);
    if (!n) {
      snprintf(err, errlen, "boundary: out of memory");
      return -1;
    }
    c->rec = n;
    c->cap_rec = cap;
  }
  c->batch = calloc(m ? m : 1, sizeof *c->batch);
  if (!c->batch) {
    snprintf(err, errlen, "boundary: out of memory");
    return -1;
  }
  c->first = first;
  c->x = x;
  eng_memory most = {0}, one;
  for (size_t i = 0; i < m; i++) {
    eng_config cfg;
    char msg[256];
    if (batch_config(c, (int64_t)i, NULL, &cfg, msg, sizeof msg)) continue; /* fails in its run */
    eng_run_memory(&cfg, 0, &one);
    eng_memory_max(&most, &one);
  }
  drv_source src = {(int64_t)m, batch_job, batch_config, 0, {0}, c, &most, NULL};
  drv_sink sink = {batch_record, NULL, c};
  drv_options opt = {.threads = c->threads, .stop = c->stop};
  drv_result res;
  int rc = drv_execute(&src, &sink, &opt, &res);
  if (rc) {
    snprintf(err, errlen, "boundary: %s", res.stopped ? "interrupted" : res.first_error);
  } else {
    for (size_t i = 0; i < m; i++) {
      y[0][i] = (uint8_t)c->batch[i].y[0];
      if (c->goodput_below <= 0) y[1][i] = (uint8_t)c->batch[i].y[1];
      c->rec[c->n_rec++] = c->batch[i];
    }
  }
  free(c->batch);
  c->batch = NULL;
  return rc ? -1 : 0;
}

/* ---- text ---- */

/* One combination's search, printed. 0, or -1 after a message. */
static int run_combination(bctx *c, const ana_bnd_opts *o, const char (*lvl)[64], bresult *br,
                           int64_t *total_unif, int64_t *n_unif) {
  const swp_sweep *sw = c->sw;
  char err[1024];
  if (swp_sweep_point_config(sw, c->combination, &c->cfg, err, sizeof err)) {
    cli_error_text("boundary", err);
    return -1;
  }
  c->cfg.user_slo = c->user_slo; /* the engine judges passed_slo by them */
  ana_bnd_search s;
  if (ana_bnd_search_run(&s, o, engine_oracle, c, err, sizeof err)) {
    cli_error_text("boundary", err);
    ana_bnd_search_free(&s);
    return -1;
  }
  br->runs = s.n;
  double rlo = ana_bnd_t_of_x(o, o->lo), rhi = ana_bnd_t_of_x(o, o->hi);
  char desc[1024];
  if (sw->n_axes)
    swp_sweep_point_describe(sw, c->combination, desc, sizeof desc);
  else
    snprintf(desc, sizeof desc, "(the scenario)");
  printf("\n[%lld] %s: %lld runs in %lld batches\n", (long long)c->combination, desc,
         (long long)s.n, (long long)s.batches);
  for (size_t r = 0; r < o->n_resp; r++) {
    br->fit[r] = s.fit[r];
    br->cross[r] = s.cross[r];
    br->uniform[r] = ana_bnd_uniform_equivalent(s.t, (size_t)s.n, &s.fit[r], &s.cross[r], rlo,
                                                rhi, &br->uniform_levels[r], &br->uniform_reps[r]);
    char txt[512], ut[128];
    ana_bnd_crossing_text(o, &s.cross[r], r == 1, txt, sizeof txt);
    if (br->uniform[r] > 0) {
      snprintf(ut, sizeof ut, "%lld runs (%lld levels x %lld)", (long long)br->uniform[r],
               (long long)br->uniform_levels[r], (long long)br->uniform_reps[r]);
      total_unif[r] += br->uniform[r];
      n_unif[r]++;
    }
    printf("  %-32s crossing %s%s\n", lvl[r], txt,
           s.resolved[r] ? "" : "  (not resolved: run budget spent)");
    /* only for a crossing inside the range that a grid could resolve */
    if (br->uniform[r] > 0) printf("  %-32s uniform grid of equal precision: %s\n", "", ut);
  }
  ana_bnd_search_free(&s);
  return 0;
}

/* ---- the file ---- */

typedef struct brow {
  int64_t combination, run;
  double x;
  uint64_t seed;
  int8_t outcome, passed;
  double recovery_ms;
  int8_t response[ANA_BND_MAX_RESP];
} brow;

/* /boundary through the format library: attributes, one (combination x
 * response) array per figure, the combinations' labels and every run. */
static int write_file(const bargs *b, const swp_sweep *sw, const ana_bnd_opts *o,
                      const char *key, const char **resp_names, const bresult *res,
                      const bctx *c, const char *cmdline, char *err, size_t errlen) {
  size_t R = o->n_resp, C = (size_t)sw->n_points;
  double *est = malloc(C * R * sizeof *est), *lo = malloc(C * R * sizeof *lo),
         *hi = malloc(C * R * sizeof *hi), *coef = malloc(C * R * 2 * sizeof *coef);
  int64_t *status = malloc(C * R * sizeof *status), *open = malloc(C * R * 2 * sizeof *open),
          *unif = malloc(C * R * 3 * sizeof *unif), *spent = malloc(C * sizeof *spent);
  char **labels = calloc(C, sizeof *labels);
  brow *rows = calloc((size_t)c->n_rec + 1, sizeof *rows);
  char *text = swp_sweep_format(sw);
  int rc = -1;
  if (!est || !lo || !hi || !coef || !status || !open || !unif || !spent || !labels || !rows ||
      !text) {
    snprintf(err, errlen, "%s: out of memory", b->out_path);
    goto out;
  }
  for (size_t i = 0; i < C; i++) {
    spent[i] = res[i].runs;
    if (!(labels[i] = malloc(1024))) goto out;
    if (sw->n_axes) swp_sweep_point_describe(sw, (int64_t)i, labels[i], 1024);
    else snprintf(labels[i], 1024, "(the scenario)");
    for (size_t r = 0; r < R; r++) {
      const ana_bnd_crossing *cr = &res[i].cross[r];
      size_t k = i * R + r;
      int ok = cr->status != ANA_BND_ABSENT && cr->status != ANA_BND_NONE &&
               cr->status != ANA_BND_NONMONOTONE;
      est[k] = ok ? ana_bnd_x_of_t(o, cr->est) : NAN;
      lo[k] = ok ? ana_bnd_x_of_t(o, cr->lo) : NAN;
      hi[k] = ok ? ana_bnd_x_of_t(o, cr->hi) : NAN;
      status[k] = cr->status;
      open[2 * k] = cr->lo_open;
      open[2 * k + 1] = cr->hi_open;
      coef[2 * k] = res[i].fit[r].a;
      coef[2 * k + 1] = res[i].fit[r].b;
      unif[3 * k] = res[i].uniform[r];
      unif[3 * k + 1] = res[i].uniform_levels[r];
      unif[3 * k + 2] = res[i].uniform_reps[r];
    }
  }
  for (int64_t i = 0; i < c->n_rec; i++) {
    const brun *x = &c->rec[i];
    rows[i] = (brow){x->combination, x->index, x->x, x->seed, x->outcome, x->passed,
                     x->recovery_ms, {x->y[0], x->y[1]}};
  }
  char names[128] = "";
  for (size_t r = 0; r < R; r++) {
    strncat(names, resp_names[r], sizeof names - strlen(names) - 2);
    if (r + 1 < R) strcat(names, ",");
  }
  int32_t logs = o->log_scale;
  int64_t max_runs = o->max_runs, batch = o->batch;
  uint64_t seed = sw->seed;
  char user_slo[256];
  ana_slo_format(&b->user_slo, user_slo, sizeof user_slo);
  double range[2] = {o->lo, o->hi};
  const char *format = "stormsweep-boundary", *tool = STORMSWEEP_VERSION;
  const char *interval = "profile likelihood";
  const char *model = "logit P = a + b t, t = x (or ln x when log_scale = 1)";
  const char *columns =
      "combination: index into combinations; run: index within the combination; x: axis "
      "value; seed: eng_seed_derive(master_seed, combination, run); outcome: 0 recovered, "
      "1 slow, 2 metastable, 3 collapsed, 4 undetermined; passed: met the SLO; recovery_ms: NaN "
      "unless recovered; response: the 0/1 outcome fitted for each of the responses";
  fmt_value root[] = {
      {"format", FMT_V_TEXT, 0, {0}, format, NULL, 0},
      {"tool_version", FMT_V_TEXT, 0, {0}, tool, NULL, 0},
      {"command_line", FMT_V_TEXT, 0, {0}, cmdline, NULL, 0},
      {"sweep_text", FMT_V_TEXT, 0, {0}, text, NULL, 0},
  };
  fmt_value attrs[] = {
      {"axis", FMT_V_TEXT, 0, {0}, key, NULL, 0},
      {"log_scale", FMT_V_I32, 0, {0}, &logs, NULL, 0},
      {"range", FMT_V_F64, 1, {2}, range, NULL, 0},
      {"levels", FMT_V_F64, 1, {R}, o->level, NULL, 0},
      {"conf", FMT_V_F64, 0, {0}, &o->conf, NULL, 0},
      {"width", FMT_V_F64, 0, {0}, &o->width, NULL, 0},
      {"max_runs", FMT_V_I64, 0, {0}, &max_runs, NULL, 0},
      {"batch", FMT_V_I64, 0, {0}, &batch, NULL, 0},
      {"master_seed", FMT_V_U64, 0, {0}, &seed, NULL, 0},
      {"interval", FMT_V_TEXT, 0, {0}, interval, NULL, 0},
      {"model", FMT_V_TEXT, 0, {0}, model, NULL, 0},
      {"responses", FMT_V_TEXT, 0, {0}, names, NULL, 0},
      {"user_slo", FMT_V_TEXT, 0, {0}, user_slo, NULL, 0},
  };
  fmt_value sets[] = {
      {"crossing", FMT_V_F64, 2, {C, R}, est, NULL, 0},
      {"interval_lo", FMT_V_F64, 2, {C, R}, lo, NULL, 0},
      {"interval_hi", FMT_V_F64, 2, {C, R}, hi, NULL, 0},
      {"status", FMT_V_I64, 2, {C, R}, status, NULL, 0},
      {"interval_open", FMT_V_I64, 3, {C, R, 2}, open, NULL, 0},
      {"coef", FMT_V_F64, 3, {C, R, 2}, coef, NULL, 0},
      {"runs_spent", FMT_V_I64, 1, {C}, spent, NULL, 0},
      {"uniform_equivalent", FMT_V_I64, 3, {C, R, 3}, unif, NULL, 0},
      {"combinations", FMT_V_TEXT, 1, {C}, labels, NULL, 0},
  };
  static const fmt_column cols[] = {
      {"combination", offsetof(brow, combination), FMT_CT_I64, 0},
      {"run", offsetof(brow, run), FMT_CT_I64, 0},
      {"x", offsetof(brow, x), FMT_CT_F64, 0},
      {"seed", offsetof(brow, seed), FMT_CT_U64, 0},
      {"outcome", offsetof(brow, outcome), FMT_CT_I8, 0},
      {"passed", offsetof(brow, passed), FMT_CT_I8, 0},
      {"recovery_ms", offsetof(brow, recovery_ms), FMT_CT_F64, 0},
      {"response", offsetof(brow, response), FMT_CT_I8_ARRAY, 0},
  };
  fmt_column rcols[sizeof cols / sizeof cols[0]];
  memcpy(rcols, cols, sizeof cols);
  rcols[7].len = R;
  fmt_value run_attrs[] = {{"columns", FMT_V_TEXT, 0, {0}, columns, NULL, 0}};
  fmt_table runs = {"runs", rcols, 8, sizeof(brow), rows, (size_t)c->n_rec, run_attrs, 1};
  fmt_group g = {"/boundary", 1, attrs, sizeof attrs / sizeof attrs[0], sets,
                 sizeof sets / sizeof sets[0], &runs, 1};
  rc = fmt_file_write(b->out_path, b->force ? FMT_OUTFILE_FORCE : 0, root,
                      sizeof root / sizeof root[0], &g, 1, err, errlen);
out:
  for (size_t i = 0; labels && i < C; i++) free(labels[i]);
  free(labels);
  free(rows);
  free(text);
  free(est), free(lo), free(hi), free(coef), free(status), free(open), free(unif), free(spent);
  return rc;
}

/* ---- plots ---- */

static double expit(double v) { return 1 / (1 + exp(-v)); }

/* The fitted curve with its band (block 2r) and the binned proportions
 * (block 2r + 1) of each response. */
static void plot_data(FILE *f, int64_t ci, const ana_bnd_opts *o, const bresult *res,
                      const bctx *c) {
  double rlo = ana_bnd_t_of_x(o, o->lo), rhi = ana_bnd_t_of_x(o, o->hi);
  for (size_t r = 0; r < o->n_resp; r++) {
    const ana_bnd_fit *ft = &res->fit[r];
    int flip = c->goodput_below <= 0 && r == 1; /* plot P(pass), fitted as P(fail) */
    fprintf(f, "# response %zu curve: x p lo hi\n", r);
    for (int i = 0; i <= 200; i++) {
      double t = rlo + (rhi - rlo) * i / 200.0, p, pl, ph;
      if (ft->separated) {
        int up = ft->direction > 0 ? t >= (ft->gap_lo + ft->gap_hi) / 2
                                   : t < (ft->gap_lo + ft->gap_hi) / 2;
        p = pl = ph = up;
      } else if (ft->direction == 0) {
        p = pl = ph = ft->n_pos ? 1 : 0;
      } else {
        double eta = ft->a + ft->b * t;
        double v = ft->cov[0] + 2 * t * ft->cov[1] + t * t * ft->cov[2];
        double se = v > 0 ? sqrt(v) : 0;
        p = expit(eta);
        pl = expit(eta - 1.959964 * se);
        ph = expit(eta + 1.959964 * se);
      }
      if (flip) {
        double q = 1 - pl;
        pl = 1 - ph;
        ph = q;
        p = 1 - p;
      }
      fprintf(f, "%.9g %.6f %.6f %.6f\n", ana_bnd_x_of_t(o, t), p, pl, ph);
    }
    fprintf(f, "\n\n# response %zu bins: x p lo hi n\n", r);
    enum { NB = 16 };
    int64_t k[NB] = {0}, n[NB] = {0};
    double sx[NB] = {0};
    for (int64_t i = 0; i < c->n_rec; i++) {
      const brun *b = &c->rec[i];
      if (b->combination != ci) continue;
      double t = ana_bnd_t_of_x(o, b->x);
      int bin = (int)floor((t - rlo) / (rhi - rlo) * NB);
      bin = bin < 0 ? 0 : bin >= NB ? NB - 1 : bin;
      n[bin]++;
      k[bin] += flip ? !b->y[r] : b->y[r];
      sx[bin] += t;
    }
    for (int b = 0; b < NB; b++) {
      if (!n[b]) continue;
      double p = (double)k[b] / (double)n[b], z = 1.959964, nn = (double)n[b];
      double den = 1 + z * z / nn, mid = (p + z * z / (2 * nn)) / den;
      double hw = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / den;
      fprintf(f, "%.9g %.6f %.6f %.6f %lld\n", ana_bnd_x_of_t(o, sx[b] / nn), p, mid - hw,
              mid + hw, (long long)n[b]);
    }
    fprintf(f, "\n\n");
  }
}

/* The script drawing png from dat; names are bare (gnuplot runs beside them)
 * and labels hold only our own numbers and the setting key. */
static void plot_script(FILE *g, const char *gp, const char *dat, const char *png, int64_t ci,
                        const ana_bnd_opts *o, const char *key, const char **resp_names,
                        const bresult *res, const bctx *c) {
  fprintf(g,
          "# stormsweep boundary plot; run again with: gnuplot %s\n"
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 900,560 } "
          "else { set terminal png size 900,560 }\n"
          "set termoption noenhanced\nset output '%s'\nset key outside right\nset grid\n"
          "set yrange [-0.02:1.02]\nset xrange [%.9g:%.9g]\n%s"
          "set xlabel '%s'\nset ylabel 'probability'\n"
          "set title 'combination %lld: fitted curve, 95%% band, crossing and its 95%% interval'\n",
          gp, png, o->lo, o->hi, o->log_scale ? "set logscale x\n" : "", key, (long long)ci);
  const char *colors[2] = {"#c0392b", "#2471a3"};
  for (size_t r = 0; r < o->n_resp; r++) {
    const ana_bnd_crossing *cr = &res->cross[r];
    if (cr->status != ANA_BND_FOUND) continue;
    fprintf(g,
            "set object %zu rect from %.9g, graph 0 to %.9g, graph 1 fc rgb '%s' "
            "fs transparent solid 0.12 noborder behind\n",
            r + 1, ana_bnd_x_of_t(o, cr->lo), ana_bnd_x_of_t(o, cr->hi), colors[r]);
    fprintf(g, "set arrow %zu from %.9g, graph 0 to %.9g, graph 1 nohead lc rgb '%s' dt 2\n",
            r + 1, ana_bnd_x_of_t(o, cr->est), ana_bnd_x_of_t(o, cr->est), colors[r]);
  }
  fprintf(g, "plot ");
  for (size_t r = 0; r < o->n_resp; r++) {
    int flip = c->goodput_below <= 0 && r == 1;
    double level = flip ? 1 - o->level[r] : o->level[r];
    fprintf(g,
            "%s'%s' index %zu using 1:3:4 with filledcurves fc rgb '%s' fs transparent solid 0.2 "
            "notitle, '' index %zu using 1:2 with lines lw 2 lc rgb '%s' title '%s fit', "
            "'' index %zu using 1:2:3:4 with yerrorbars pt 7 lc rgb '%s' title '%s observed', "
            "%.6f with lines dt 3 lc rgb '%s' title 'level %.3g'",
            r ? ", " : "", dat, 2 * r, colors[r], 2 * r, colors[r], resp_names[r], 2 * r + 1,
            colors[r], resp_names[r], level, colors[r], level);
  }
  fprintf(g, "\n");
}

/* Builds and draws the first combinations' plots in a private directory,
 * then puts BASE-cK.png/.gp/.dat beside the output file. 0, or the exit
 * status after a message. */
static int plots_write(const bargs *b, const ana_bnd_opts *o, const char *key,
                       const char **resp_names, const bresult *res, const bctx *c) {
  char base[4096], err[1024];
  snprintf(base, sizeof base, "%s", b->out_path);
  size_t bl = strlen(base);
  if (bl > 3 && !strcmp(base + bl - 3, ".h5")) base[bl - 3] = 0;
  const char *slash = strrchr(base, '/');
  const char *name = slash ? slash + 1 : base;
  fmt_outdir od;
  if (fmt_outdir_private(&od, base, err, sizeof err)) {
    cli_error_text("boundary", err);
    return CLI_EXIT_FAIL;
  }
  int rc = 0;
  int64_t n = c->sw->n_points < MAX_COMBOS_PLOTTED ? c->sw->n_points : MAX_COMBOS_PLOTTED;
  for (int64_t p = 0; p < n && !rc; p++) {
    char file[3][1200], dest[4200];
    static const char *const ext[3] = {"png", "gp", "dat"};
    for (int e = 0; e < 3; e++)
      snprintf(file[e], sizeof file[e], "%s-c%lld.%s", name, (long long)p, ext[e]);
    FILE *dat = fmt_dir_file_create(od.tmp, file[2], err, sizeof err);
    if (dat) plot_data(dat, p, o, &res[p], c);
    FILE *gp = dat && !fmt_dir_file_close(dat, od.tmp, file[2], err, sizeof err)
                   ? fmt_dir_file_create(od.tmp, file[1], err, sizeof err)
                   : NULL;
    if (gp) plot_script(gp, file[1], file[2], file[0], p, o, key, resp_names, &res[p], c);
    if (!gp || fmt_dir_file_close(gp, od.tmp, file[1], err, sizeof err)) {
      cli_error_text("boundary", err);
      rc = CLI_EXIT_FAIL;
      break;
    }
    int g = ana_gnuplot_run(NULL, od.tmp, file[1], c->stop, err, sizeof err);
    if (g) {
      if (g > 0) cli_error("boundary", "interrupted; no plot written");
      else cli_error_text("boundary", err);
      rc = g > 0 ? CLI_EXIT_SIGNAL + g : CLI_EXIT_FAIL;
      break;
    }
    for (int e = 0; e < 3 && !rc; e++) {
      snprintf(dest, sizeof dest, "%.*s%s", (int)(name - base), base, file[e]);
      if (fmt_outdir_install_file(&od, file[e], dest, b->force ? FMT_OUTFILE_FORCE : 0, err,
                                  sizeof err)) {
        cli_error_text("boundary", err);
        rc = CLI_EXIT_FAIL;
      }
    }
    if (!rc) printf("plot: %.*s%s\n", (int)(name - base), base, file[0]);
  }
  fmt_outdir_abandon(&od);
  if (!rc && c->sw->n_points > MAX_COMBOS_PLOTTED)
    printf("(plots for the first %d combinations only)\n", MAX_COMBOS_PLOTTED);
  return rc;
}

/* ---- command ---- */

int cmd_boundary(int argc, char **argv) {
  H5dont_atexit();
  bargs b;
  memset(&b, 0, sizeof b);
  /* getopt reorders what it parses: the command line stored stays as typed. */
  char **av = cli_argv_copy(argc, argv);
  int rc = av ? parse_args(&b, argc, av) : CLI_EXIT_FAIL;
  free(av);
  if (rc >= 0) {
    free(b.sets);
    return rc;
  }
  rc = CLI_EXIT_USAGE;
  const eng_setting *st = eng_settings_find(b.axis);
  ana_bnd_opts o;
  swp_sweep sw;
  swp_sweep_init(&sw);
  bctx c = {.sw = &sw};
  bresult *res = NULL;
  char *cmdline = NULL;
  if (!st || !(st->type == ENG_SET_INT || st->type == ENG_SET_INT64 ||
               st->type == ENG_SET_DOUBLE || st->type == ENG_SET_DOUBLE_INF)) {
    cli_error("boundary", "--axis %s: %s", b.axis,
              st ? "not a numeric setting" : "unknown setting (stormsweep sim --list-settings)");
    goto done;
  }
  if (search_opts(&b, &o) || load_sweep(&b, st, &o, &sw)) goto done;
  struct stat out_st;
  if (!b.force && lstat(b.out_path, &out_st) == 0) {
    cli_error("boundary", "%s exists (use --force to overwrite)", b.out_path);
    goto done;
  }
  rc = CLI_EXIT_FAIL;
  c.key = st->key;
  c.is_int = st->type == ENG_SET_INT || st->type == ENG_SET_INT64;
  c.goodput_below = b.goodput_below;
  c.user_slo = b.user_slo;
  c.threads = b.threads;
  res = calloc((size_t)sw.n_points, sizeof *res);
  cmdline = cli_command_line(argc, argv);
  if (!res || !cmdline) goto done;
  const char *resp_names[2] = {b.goodput_below > 0 ? "goodput-below" : "bad", "pass"};
  char lvl[2][64];
  if (b.goodput_below > 0)
    snprintf(lvl[0], sizeof lvl[0], "P(success ratio < %.3g) = %.3g", b.goodput_below, b.level);
  else {
    snprintf(lvl[0], sizeof lvl[0], "P(bad) = %.3g", b.level);
    snprintf(lvl[1], sizeof lvl[1], "P(pass) = %.3g", b.min_pass);
  }
  printf("boundary of %s over [%.4g, %.4g]%s: %lld combination%s, 95%% profile-likelihood "
         "intervals, target width %.3g of the %srange\n",
         st->key, o.lo, o.hi, o.log_scale ? " (log scale)" : "", (long long)sw.n_points,
         sw.n_points == 1 ? "" : "s", o.width, o.log_scale ? "log " : "");
  if (b.user_slo.n) {
    char terms[256];
    ana_slo_format(&b.user_slo, terms, sizeof terms);
    printf("pass: %s holds again, in every latency window for the hold window, within the "
           "scenario's slo_ms of clearance\n", terms);
  }
  int64_t total_runs = 0, total_unif[ANA_BND_MAX_RESP] = {0}, n_unif[ANA_BND_MAX_RESP] = {0};
  c.stop = cli_stop_install();
  for (int64_t p = 0; p < sw.n_points; p++) {
    c.combination = p;
    if (run_combination(&c, &o, (const char(*)[64])lvl, &res[p], total_unif, n_unif)) {
      if (*c.stop) rc = CLI_EXIT_SIGNAL + cli_stop_signal();
      goto done;
    }
    total_runs += res[p].runs;
    if (!b.quiet) fflush(stdout);
  }
  printf("\nruns spent: %lld; uniform grids of equal precision:", (long long)total_runs);
  for (size_t r = 0; r < o.n_resp; r++) {
    if (n_unif[r])
      printf("%s %s crossing %lld runs (%lld of %lld combinations)", r ? ";" : "", resp_names[r],
             (long long)total_unif[r], (long long)n_unif[r], (long long)sw.n_points);
    else
      printf("%s %s crossing -", r ? ";" : "", resp_names[r]);
  }
  printf("\n");
  char err[1024];
  if (write_file(&b, &sw, &o, st->key, resp_names, res, &c, cmdline, err, sizeof err)) {
    cli_error_text("boundary", err);
    goto done;
  }
  printf("wrote %s (/boundary)\n", b.out_path);
  rc = b.no_plot ? 0 : plots_write(&b, &o, st->key, resp_names, res, &c);
done:
  cli_stop_restore();
  free(c.rec);
  free(res);
  free(cmdline);
  free(b.sets);
  swp_sweep_free(&sw);
  return rc;
}
