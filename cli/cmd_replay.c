/*
 * cmd_replay.c — `stormsweep replay INCIDENT.ini`: an incident's measured
 * traffic and service times (rate_profile, service_histogram) run through
 * the cluster under the client a team has and under candidates, with what
 * users saw over the incident window for each: outcome shares, latency
 * quantiles and error rate during the faults and after, with 95% intervals
 * over replicates and each candidate's paired difference from today's.
 *
 * Every candidate is a sweep built as `run` builds one (cli_sweep_load):
 * today's is the scenario with --policy / --client; each --compare-policy
 * NAME is the scenario with that preset instead, each --compare-client
 * FILE the scenario with that client file. --set and --grid apply to
 * all of them, so a --grid multiplies the candidates. Replicates share
 * their seeds across candidates (crn = on): replicate r of every candidate
 * sees the same arrivals, which is what makes the paired difference sharp.
 * The runs go through the driver without a result file; with --plot DIR
 * replicate 0 of each candidate is simulated again for its curves.
 */
#include <getopt.h>
#include <libgen.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "cli.h"
#include "client_import.h"
#include "drv.h"
#include "replay_plot.h"
#include "textsafe.h"

#define REPLAY_DEFAULT_REPLICATES 20
#define REPLAY_MAX_CANDIDATES 64

typedef struct replay_args {
  const char *scenario, *policy, *client, *plot_dir;
  unsigned client_flags;
  const char **overrides; /* "--set"/"--grid", value, ... in command-line order */
  int n_overrides;
  const char **compare; /* --compare-policy names and --compare-client files */
  uint8_t *compare_is_client;
  int n_compare;
  int64_t replicates;
  int threads, json, quiet, have_seed, allow_dead;
  uint64_t seed;
  eng_slo slo;
} replay_args;

/* One client under test: a point of one of the sweeps. */
typedef struct candidate {
  size_t sweep;
  int64_t point;
  char label[256];
  eng_summary *runs; /* by replicate */
  uint8_t *have;
  int64_t n;
} candidate;

typedef struct replay_state {
  replay_args a;
  swp_sweep *sw; /* today's, then one per --compare-* */
  size_t n_sweeps;
  candidate *cand;
  size_t n_cand;
  size_t first; /* the first candidate of the sweep being run */
  const volatile sig_atomic_t *stop;
} replay_state;

static void usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep replay INCIDENT.ini [--policy NAME] [--client FILE]\n"
          "                         [--client-lenient] [--compare-policy NAME[,NAME...]]...\n"
          "                         [--compare-client FILE]...\n"
          "                         [--set KEY=VALUE]... [--grid KEY=V1,V2,...]...\n"
          "                         [-n REPLICATES] [--slo TERMS] [--seed S] [-j N]\n"
          "                         [--json] [--plot DIR] [--allow-dead-axes] [-q]\n\n"
          "Replays an incident: its scenario's traffic (rate_profile) and service times\n"
          "(service = empirical) under today's client and under candidates, and prints what\n"
          "users saw during the faults (the incident window) and after, for each: the\n"
          "share of runs that recovered, latency p50 and p99, the error rate, and the\n"
          "difference from today's client, all with 95%% intervals over replicates. Every\n"
          "candidate's replicate r has the same seed (the same arrivals), so differences\n"
          "are paired.\n\n"
          "  --policy NAME          today's client is this preset (applied first)\n"
          "  --client FILE          today's client: the retry policy you ship (gRPC service\n"
          "                         config or Envoy retry_policy), after --policy\n"
          "  --client-lenient       an unknown field in the --client file is a note\n"
          "  --compare-policy NAME  also replay under this preset instead of today's client\n"
          "                         (repeatable; NAME,NAME... lists several):\n");
  cli_help_presets(out, 25);
  fprintf(out,
          "  --compare-client FILE  also replay under this client file instead of today's\n"
          "                         (repeatable; --client-lenient applies to it too)\n"
          "  --set KEY=VALUE        change a setting of every candidate (repeatable)\n"
          "  --grid KEY=V1,V2,...   replay every candidate at each value (repeatable)\n"
          "  -n, --replicates N     runs per candidate (default %d)\n"
          "  --slo TERMS            also judge each run by these terms on what users see,\n"
          "                         e.g. \"p99<=500ms,errors<=1%%\": the share that passes\n"
          "                         (holds again within slo_ms of the clearance)\n"
          "  --seed S               master seed (default: the file's); replicate r has\n"
          "                         seed eng_seed_derive(S, 0, r), as `sim --seed` takes it\n"
          "  -j, --threads N        OpenMP threads (default: all cores); results do not\n"
          "                         depend on it\n"
          "  --json                 the comparison as JSON on standard output\n"
          "  --plot DIR             write DIR/replay.png and .svg: the input rate with each\n"
          "                         candidate's p99 latency and error rate over time\n"
          "                         (replicate 0's curves); DIR is created, or replaced if\n"
          "                         it holds an earlier replay plot\n"
          "  -q, --quiet            no progress line and no client mapping\n\n"
          "Exit status: 0 done, 1 a failure while working, 2 bad usage or input, 130\n"
          "interrupted.\n",
          REPLAY_DEFAULT_REPLICATES);
}

/* Adds each name of a NAME,NAME... list. Returns 0 or 2 (printed). */
static int add_compare(replay_args *a, char *list) {
  for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    if (!eng_preset_settings("policy", name)) {
      cli_error("replay", "--compare-policy: '%s' is not a policy preset (see --help)", name);
      return 2;
    }
    if (a->n_compare >= REPLAY_MAX_CANDIDATES - 1) {
      cli_error("replay", "--compare-policy: at most %d candidates", REPLAY_MAX_CANDIDATES - 1);
      return 2;
    }
    a->compare[a->n_compare++] = name;
  }
  return 0;
}

static int add_compare_client(replay_args *a, const char *path) {
  if (a->n_compare >= REPLAY_MAX_CANDIDATES - 1) {
    cli_error("replay", "--compare-client: at most %d candidates", REPLAY_MAX_CANDIDATES - 1);
    return 2;
  }
  a->compare_is_client[a->n_compare] = 1;
  a->compare[a->n_compare++] = path;
  return 0;
}

/* Returns -1 to go on, or the exit status. */
static int parse_args(replay_args *a, int argc, char **argv) {
  enum { O_POLICY = 256, O_CLIENT, O_LENIENT, O_COMPARE, O_COMPARE_CLIENT, O_SET, O_GRID, O_SLO, O_SEED, O_JSON,
         O_PLOT, O_ALLOW_DEAD };
  static const struct option longopts[] = {
      {"policy", required_argument, NULL, O_POLICY},
      {"client", required_argument, NULL, O_CLIENT},
      {"client-lenient", no_argument, NULL, O_LENIENT},
      {"compare-policy", required_argument, NULL, O_COMPARE},
      {"compare-client", required_argument, NULL, O_COMPARE_CLIENT},
      {"set", required_argument, NULL, O_SET},
      {"grid", required_argument, NULL, O_GRID},
      {"replicates", required_argument, NULL, 'n'},
      {"slo", required_argument, NULL, O_SLO},
      {"seed", required_argument, NULL, O_SEED},
      {"threads", required_argument, NULL, 'j'},
      {"json", no_argument, NULL, O_JSON},
      {"plot", required_argument, NULL, O_PLOT},
      {"allow-dead-axes", no_argument, NULL, O_ALLOW_DEAD},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  a->replicates = REPLAY_DEFAULT_REPLICATES;
  a->overrides = calloc((size_t)argc * 2 + 1, sizeof *a->overrides);
  a->compare = calloc(REPLAY_MAX_CANDIDATES, sizeof *a->compare);
  a->compare_is_client = calloc(REPLAY_MAX_CANDIDATES, 1);
  if (!a->overrides || !a->compare || !a->compare_is_client) {
    cli_error("replay", "out of memory");
    return 1;
  }
  cli_opts_begin(argc, argv);
  int c;
  long long n;
  char err[256];
  while ((c = cli_getopt("replay", argc, argv, ":n:j:qh", longopts)) != -1) {
    switch (c) {
    case O_POLICY: a->policy = optarg; break;
    case O_CLIENT: a->client = optarg; break;
    case O_LENIENT: a->client_flags |= SWP_CLIENT_LENIENT; break;
    case O_COMPARE:
      if (add_compare(a, optarg)) return 2;
      break;
    case O_COMPARE_CLIENT:
      if (add_compare_client(a, optarg)) return 2;
      break;
    case O_SET:
    case O_GRID:
      if (!strchr(optarg, '=')) {
        cli_error("replay", "%s: expected KEY=%s, got '%s'", c == O_SET ? "--set" : "--grid",
                  c == O_SET ? "VALUE" : "V1,V2,...", optarg);
        return 2;
      }
      a->overrides[a->n_overrides++] = c == O_SET ? "--set" : "--grid";
      a->overrides[a->n_overrides++] = optarg;
      break;
    case 'n':
      if (cli_parse_count("replay", "--replicates", optarg, 1, 100000, &n)) return 2;
      a->replicates = n;
      break;
    case O_SLO:
      if (ana_slo_parse(optarg, &a->slo, err, sizeof err)) {
        cli_error("replay", "--slo: %s", err);
        return 2;
      }
      break;
    case O_SEED:
      if (cli_parse_seed("replay", "--seed", optarg, &a->seed)) return 2;
      a->have_seed = 1;
      break;
    case 'j':
      if (cli_parse_threads("replay", "-j", optarg, &a->threads)) return 2;
      break;
    case O_JSON: a->json = 1; break;
    case O_PLOT: a->plot_dir = optarg; break;
    case O_ALLOW_DEAD: a->allow_dead = 1; break;
    case 'q': a->quiet = 1; break;
    case 'h': usage(stdout); return 0;
    default: return 2;
    }
  }
  if (optind >= argc) {
    cli_error("replay", "expected INCIDENT.ini (a scenario with rate_profile and the incident's "
                        "faults; see --help)");
    return 2;
  }
  a->scenario = argv[optind++];
  if (optind < argc) {
    cli_error("replay", "unexpected argument '%s' (one INCIDENT.ini)", argv[optind]);
    return 2;
  }
  if (a->client_flags && !a->client) {
    cli_error("replay", "--client-lenient goes with --client FILE");
    return 2;
  }
  return -1;
}

/* The sweep of today's client (policy and client given) or of preset
 * policy, with the replay's own settings after the user's overrides. */
static int build_one(replay_state *st, swp_sweep *sw, const char *policy, const char *client) {
  const replay_args *a = &st->a;
  char rep[64], seed[64];
  snprintf(rep, sizeof rep, "replicates=%lld", (long long)a->replicates);
  snprintf(seed, sizeof seed, "seed=%llu", (unsigned long long)a->seed);
  const char **ov = calloc((size_t)a->n_overrides + 7, sizeof *ov);
  if (!ov) {
    cli_error("replay", "out of memory");
    return 1;
  }
  int n = 0;
  for (int i = 0; i < a->n_overrides; i++) ov[n++] = a->overrides[i];
  ov[n++] = "--set", ov[n++] = rep, ov[n++] = "--set", ov[n++] = "crn=on";
  if (a->have_seed) ov[n++] = "--set", ov[n++] = seed;
  cli_sweep_spec spec = {.path = a->scenario,
                         .policy = policy,
                         .client = client,
                         .client_flags = a->client_flags,
                         .loud = client && !a->quiet && !a->json,
                         .overrides = ov,
                         .n_overrides = n,
                         .allow_dead = a->allow_dead};
  int rc = cli_sweep_load("replay", &spec, sw);
  free(ov);
  if (!rc) sw->base.user_slo = a->slo; /* every run's config is a copy of the base */
  return rc;
}

/* Builds every sweep and lists the candidates. Returns 0 or the exit status. */
static int build(replay_state *st) {
  const replay_args *a = &st->a;
  if (!(st->sw = calloc((size_t)a->n_compare + 1, sizeof *st->sw))) {
    cli_error("replay", "out of memory");
    return 1;
  }
  st->n_sweeps = 1; /* counted before it is built: state_free frees a half-built one */
  int rc = build_one(st, &st->sw[0], a->policy, a->client);
  for (int i = 0; !rc && i < a->n_compare; i++) {
    const char *c = a->compare[i];
    st->n_sweeps++;
    rc = build_one(st, &st->sw[st->n_sweeps - 1], a->compare_is_client[i] ? NULL : c,
                   a->compare_is_client[i] ? c : NULL);
  }
  if (rc) return rc;
  const eng_config *c = &st->sw[0].base;
  if (!(eng_config_fault_clear_ms(c) > 0)) {
    cli_error("replay", "%s has no fault: the incident window is the faults' span (mark it, "
                        "e.g. surge = START+LENGTH with surge_factor = 1 when the rate profile "
                        "is the surge)",
              a->scenario);
    return 2;
  }
  size_t total = 0;
  for (size_t s = 0; s < st->n_sweeps; s++) total += (size_t)st->sw[s].n_points;
  if (total > REPLAY_MAX_CANDIDATES) {
    cli_error("replay", "%zu candidates (clients x --grid points): at most %d", total,
              REPLAY_MAX_CANDIDATES);
    return 2;
  }
  st->cand = calloc(total, sizeof *st->cand);
  if (!st->cand) return 1;
  for (size_t s = 0; s < st->n_sweeps; s++)
    for (int64_t p = 0; p < st->sw[s].n_points; p++) {
      candidate *k = &st->cand[st->n_cand++];
      k->sweep = s;
      k->point = p;
      k->runs = calloc((size_t)a->replicates, sizeof *k->runs);
      k->have = calloc((size_t)a->replicates, 1);
      if (!k->runs || !k->have) return 1;
      char where[200] = "";
      if (st->sw[s].n_points > 1) swp_sweep_point_describe(&st->sw[s], p, where, sizeof where);
      const char *who = s ? a->compare[s - 1] : NULL;
      char today[160];
      snprintf(today, sizeof today, "today%s%s%s%s%s", a->policy || a->client ? " (" : "",
               a->policy ? a->policy : "", a->policy && a->client ? ", " : "",
               a->client ? a->client : "", a->policy || a->client ? ")" : "");
      char base[160];
      if (who && a->compare_is_client[s - 1]) { /* a file: its name says which */
        snprintf(base, sizeof base, "%s", who);
        who = basename(base);
      }
      snprintf(k->label, sizeof k->label, "%s%s%s", who ? who : today, *where ? " " : "", where);
    }
  return 0;
}

static void on_record(void *user, const fmt_run_record *rec) {
  replay_state *st = user;
  candidate *k = &st->cand[st->first + (size_t)rec->point];
  if (rec->replicate < 0 || rec->replicate >= st->a.replicates || k->have[rec->replicate]) return;
  k->have[rec->replicate] = 1;
  k->runs[rec->replicate] = rec->summary;
  k->n++;
}

/* Runs every sweep. Returns 0, or the exit status after a message. */
static int run_all(replay_state *st, double *wall_s) {
  *wall_s = 0;
  for (size_t s = 0, first = 0; s < st->n_sweeps; first += (size_t)st->sw[s].n_points, s++) {
    st->first = first;
    drv_options opt = {0};
    opt.threads = st->a.threads;
    opt.stop = st->stop;
    opt.on_record = on_record;
    opt.on_record_user = st;
    if (cli_progress_wanted(st->a.quiet || st->a.json)) {
      opt.progress = cli_progress;
      opt.progress_interval_s = 0.5;
    }
    drv_result res;
    drv_sweep_execute(&st->sw[s], NULL, &opt, &res);
    if (opt.progress) cli_progress_end();
    *wall_s += res.wall_s;
    if (res.stopped || *st->stop) return CLI_EXIT_SIGNAL + cli_stop_signal();
    if (res.first_error[0]) {
      cli_error_text("replay", res.first_error);
      return CLI_EXIT_FAIL;
    }
  }
  return 0;
}

/* ---- what each candidate's users saw ---- */

enum { PH_DURING = 1, PH_AFTER = 2 };
enum { Q_P50, Q_P99, Q_ERR, Q_COUNT };

typedef struct view {
  int64_t n, n_rec, n_bad, n_pass;
  ana_interval rec_ci, bad_ci, pass_ci;
  ana_mean q[2][Q_COUNT]; /* [during, after] */
  ana_mean d[2][Q_COUNT]; /* paired difference from today's (candidate 0) */
  ana_mean amp_after, user_rec_ms;
} view;

static double phase_value(const eng_summary *s, int phase, int q) {
  const struct eng_user_phase *u = &s->user[phase];
  return q == Q_P50 ? u->p50_ms : q == Q_P99 ? u->p99_ms : u->error_rate;
}

static void view_compute(const replay_state *st, const candidate *k, view *v) {
  const candidate *today = &st->cand[0];
  const size_t R = (size_t)st->a.replicates;
  double *x = malloc(R * sizeof *x), *y = malloc(R * sizeof *y);
  memset(v, 0, sizeof *v);
  if (!x || !y) goto done;
  for (size_t r = 0; r < R; r++) {
    if (!k->have[r]) continue;
    const eng_summary *s = &k->runs[r];
    v->n++;
    v->n_rec += s->outcome == ENG_OUTCOME_RECOVERED;
    v->n_bad += ana_outcome_is_bad(s->outcome);
    v->n_pass += s->passed_slo && !ana_outcome_is_bad(s->outcome);
  }
  v->rec_ci = ana_wilson(v->n_rec, v->n, ANA_Z95);
  v->bad_ci = ana_wilson(v->n_bad, v->n, ANA_Z95);
  v->pass_ci = ana_wilson(v->n_pass, v->n, ANA_Z95);
  for (int ph = 0; ph < 2; ph++)
    for (int q = 0; q < Q_COUNT; q++) {
      for (size_t r = 0; r < R; r++) {
        x[r] = k->have[r] ? phase_value(&k->runs[r], PH_DURING + ph, q) : NAN;
        y[r] = k->have[r] && today->have[r]
                   ? x[r] - phase_value(&today->runs[r], PH_DURING + ph, q)
                   : NAN;
      }
      v->q[ph][q] = ana_mean_compute(x, R);
      v->d[ph][q] = ana_mean_compute(y, R);
    }
  for (size_t r = 0; r < R; r++) x[r] = k->have[r] ? k->runs[r].amplification_after : NAN;
  v->amp_after = ana_mean_compute(x, R);
  for (size_t r = 0; r < R; r++) x[r] = k->have[r] ? k->runs[r].user_recovery_ms : NAN;
  v->user_rec_ms = ana_mean_compute(x, R);
done:
  free(x);
  free(y);
}

/* "300 [298, 302]" for a time in ms, "98.5% [98.1, 98.9]" for a share. */
static void mean_text(char *buf, size_t len, const ana_mean *m, int share) {
  if (isnan(m->mean)) {
    snprintf(buf, len, "-");
    return;
  }
  double f = share ? 100 : 1;
  const char *u = share ? "%" : "";
  int d = share ? 1 : m->mean * f < 10 ? 1 : 0;
  if (m->n < 2 || isnan(m->ci.lo))
    snprintf(buf, len, "%.*f%s", d, m->mean * f, u);
  else
    snprintf(buf, len, "%.*f%s [%.*f, %.*f]", d, m->mean * f, u, d, m->ci.lo * f, d,
             m->ci.hi * f);
}

static void diff_text(char *buf, size_t len, const ana_mean *m, int share) {
  if (isnan(m->mean) || m->n < 2) {
    snprintf(buf, len, "-");
    return;
  }
  double f = share ? 100 : 1;
  snprintf(buf, len, "%+.1f%s [%+.1f, %+.1f]", m->mean * f, share ? " pts" : " ms", m->ci.lo * f,
           m->ci.hi * f);
}

static void print_text(const replay_state *st, const view *v, double wall_s) {
  const eng_config *c = &st->sw[0].base;
  int lw = 6; /* "client" */
  for (size_t i = 0; i < st->n_cand; i++) {
    char label[128];
    ana_term_text(label, sizeof label, st->cand[i].label);
    if ((int)strlen(label) > lw) lw = (int)strlen(label);
  }
  double t0 = eng_config_fault_start_ms(c) / 1000, t1 = eng_config_fault_clear_ms(c) / 1000;
  printf("Replayed %s: %zu candidate%s x %lld replicates (shared seeds) in %.1f s\n",
         st->a.scenario, st->n_cand, st->n_cand == 1 ? "" : "s", (long long)st->a.replicates,
         wall_s);
  printf("Incident window: the faults, %.1f s to %.1f s; after: %.1f s to the horizon, %.1f s.\n"
         "Means over replicates with 95%% intervals; \"vs today\" is the paired difference.\n\n",
         t0, t1, t1, c->horizon_ms / 1000);
  for (int ph = 0; ph < 2; ph++) {
    printf("%s\n", ph ? "After the incident" : "During the incident");
    printf("  %-*s %-10s %-22s %-22s %-26s %s\n", lw, "client", "recovered", "p99 (ms)", "errors",
           "p99 vs today", "errors vs today");
    for (size_t i = 0; i < st->n_cand; i++) {
      const view *w = &v[i];
      char rec[32], p99[64], err[64], dp[64], de[64], label[128];
      snprintf(rec, sizeof rec, "%lld/%lld", (long long)w->n_rec, (long long)w->n);
      mean_text(p99, sizeof p99, &w->q[ph][Q_P99], 0);
      mean_text(err, sizeof err, &w->q[ph][Q_ERR], 1);
      if (i) {
        diff_text(dp, sizeof dp, &w->d[ph][Q_P99], 0);
        diff_text(de, sizeof de, &w->d[ph][Q_ERR], 1);
      } else {
        snprintf(dp, sizeof dp, "-");
        snprintf(de, sizeof de, "-");
      }
      ana_term_text(label, sizeof label, st->cand[i].label);
      printf("  %-*s %-10s %-22s %-22s %-26s %s\n", lw, label, rec, p99, err, dp, de);
    }
    printf("\n");
  }
  if (st->a.slo.n) {
    char terms[256];
    ana_slo_format(&st->a.slo, terms, sizeof terms);
    printf("SLO %s: a run passes when it holds again within %.0f ms of the clearance\n",
           terms, c->slo_ms);
    for (size_t i = 0; i < st->n_cand; i++) {
      char label[128];
      ana_term_text(label, sizeof label, st->cand[i].label);
      char urec[128];
      const ana_mean *u = &v[i].user_rec_ms;
      int64_t held = (int64_t)u->n;
      if (!held)
        snprintf(urec, sizeof urec, "never held again");
      else
        snprintf(urec, sizeof urec, "held again %.0f ms [%.0f, %.0f] after the clearance%s",
                 u->mean, held > 1 ? u->ci.lo : u->mean, held > 1 ? u->ci.hi : u->mean,
                 held < v[i].n ? " in the runs where it did" : "");
      printf("  %-*s %lld/%lld runs pass [%.0f%%, %.0f%%]; %s (%lld of %lld runs)\n", lw, label,
             (long long)v[i].n_pass, (long long)v[i].n, 100 * v[i].pass_ci.lo,
             100 * v[i].pass_ci.hi, urec, (long long)(held ? held : v[i].n), (long long)v[i].n);
    }
  }
}

static json_t *json_mean(const ana_mean *m) {
  return json_pack("{s:o,s:[o,o],s:I}", "mean", ana_json_number(m->mean), "ci95",
                   ana_json_number(m->ci.lo), ana_json_number(m->ci.hi), "n", (json_int_t)m->n);
}

static json_t *json_share(int64_t k, int64_t n, ana_interval ci) {
  return json_pack("{s:I,s:I,s:o,s:[o,o]}", "runs", (json_int_t)k, "of", (json_int_t)n, "p",
                   ana_json_number(n ? (double)k / (double)n : NAN), "ci95",
                   ana_json_number(ci.lo), ana_json_number(ci.hi));
}

static json_t *json_phase(const view *w, int ph, int paired) {
  static const char *const names[Q_COUNT] = {"p50_ms", "p99_ms", "error_rate"};
  json_t *o = json_object();
  for (int q = 0; q < Q_COUNT; q++) {
    json_object_set_new(o, names[q], json_mean(&w->q[ph][q]));
    if (paired) {
      char key[64];
      snprintf(key, sizeof key, "%s_vs_today", names[q]);
      json_object_set_new(o, key, json_mean(&w->d[ph][q]));
    }
  }
  return o;
}

static int print_json(const replay_state *st, const view *v, double wall_s) {
  const eng_config *c = &st->sw[0].base;
  json_t *list = json_array();
  for (size_t i = 0; i < st->n_cand; i++) {
    const view *w = &v[i];
    json_t *o = json_pack("{s:s,s:o,s:o,s:o,s:o,s:o}", "client", st->cand[i].label, "recovered",
                          json_share(w->n_rec, w->n, w->rec_ci), "bad",
                          json_share(w->n_bad, w->n, w->bad_ci), "during",
                          json_phase(w, 0, i > 0), "after", json_phase(w, 1, i > 0),
                          "amplification_after", json_mean(&w->amp_after));
    if (st->a.slo.n) {
      json_object_set_new(o, "passed_slo", json_share(w->n_pass, w->n, w->pass_ci));
      json_object_set_new(o, "user_recovery_ms", json_mean(&w->user_rec_ms));
    }
    json_array_append_new(list, o);
  }
  char terms[256] = "";
  if (st->a.slo.n) ana_slo_format(&st->a.slo, terms, sizeof terms);
  json_t *root = json_pack(
      "{s:s,s:I,s:o,s:o,s:o,s:s?,s:o,s:o}", "scenario", st->a.scenario, "replicates",
      (json_int_t)st->a.replicates, "incident_ms",
      json_pack("[o,o]", ana_json_number(eng_config_fault_start_ms(c)),
                ana_json_number(eng_config_fault_clear_ms(c))),
      "horizon_ms", ana_json_number(c->horizon_ms), "slo_ms", ana_json_number(c->slo_ms), "slo",
      st->a.slo.n ? terms : NULL, "wall_s", ana_json_number(wall_s), "candidates", list);
  if (!root) return -1;
  int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII) ? -1 : 0;
  printf("\n");
  json_decref(root);
  return rc;
}

/* ---- the plot: replicate 0 of each candidate again, for its curves ---- */

static int plot(replay_state *st) {
  int rc = CLI_EXIT_FAIL;
  char err[1024];
  eng_run *run = eng_run_create();
  size_t W = 0;
  double window_ms = NAN;
  double *rate = NULL, *buf = NULL;
  ana_replay_series *ser = calloc(st->n_cand, sizeof *ser);
  if (!run || !ser) goto oom;
  for (size_t i = 0; i < st->n_cand; i++) {
    const candidate *k = &st->cand[i];
    const swp_sweep *sw = &st->sw[k->sweep];
    eng_config cfg;
    if (swp_sweep_point_config(sw, k->point, &cfg, err, sizeof err)) goto fail;
    eng_summary s;
    uint64_t seed = swp_run_seed(sw->seed, sw->crn, k->point, 0);
    if (eng_run_simulate(run, &cfg, seed, &s, err, sizeof err)) goto fail;
    if (!W) {
      W = (size_t)eng_run_latency_windows(run);
      window_ms = eng_run_latency_window_ms(run);
      if (!W) {
        snprintf(err, sizeof err, "the runs keep no latency windows (latency_window_ms)");
        goto fail;
      }
      rate = calloc(W, sizeof *rate);
      buf = calloc(2 * W * st->n_cand, sizeof *buf);
      if (!rate || !buf) goto oom;
      const int32_t *newr = eng_run_metric(run, ENG_M_NEW_REQUESTS);
      int32_t T = eng_run_ticks(run), per = (int32_t)(window_ms / cfg.tick_ms + 0.5);
      for (int32_t t = 0; t < T; t++)
        if (per > 0 && (size_t)(t / per) < W) rate[t / per] += newr[t];
      for (size_t w = 0; w < W; w++) rate[w] *= 1000.0 / window_ms;
    }
    size_t n = (size_t)eng_run_latency_windows(run) < W ? (size_t)eng_run_latency_windows(run) : W;
    double *p99 = buf + 2 * W * i, *er = p99 + W;
    for (size_t w = 0; w < W; w++) p99[w] = er[w] = NAN;
    memcpy(p99, eng_run_latency(run, ENG_L_P99), n * sizeof *p99);
    memcpy(er, eng_run_latency(run, ENG_L_ERROR_RATE), n * sizeof *er);
    ser[i] = (ana_replay_series){k->label, p99, er};
  }
  const eng_config *c = &st->sw[0].base;
  ana_replay_plot p = {.dir = st->a.plot_dir,
                       .stop = st->stop,
                       .window_ms = window_ms,
                       .n_windows = W,
                       .rate_rps = rate,
                       .fault_start_ms = eng_config_fault_start_ms(c),
                       .fault_clear_ms = eng_config_fault_clear_ms(c),
                       .series = ser,
                       .n_series = st->n_cand,
                       .title = st->a.scenario};
  int r = ana_replay_plot_write(&p, st->a.json ? stderr : stdout, err, sizeof err);
  if (r > 0) rc = CLI_EXIT_SIGNAL + r;
  else if (r < 0) goto fail;
  else rc = 0;
  goto done;
oom:
  snprintf(err, sizeof err, "out of memory");
fail:
  cli_error("replay", "--plot: %s", err);
done:
  eng_run_destroy(run);
  free(rate);
  free(buf);
  free(ser);
  return rc;
}

static void state_free(replay_state *st) {
  for (size_t i = 0; i < st->n_cand; i++) {
    free(st->cand[i].runs);
    free(st->cand[i].have);
  }
  free(st->cand);
  for (size_t s = 0; s < st->n_sweeps; s++) swp_sweep_free(&st->sw[s]);
  free(st->sw);
  free(st->a.overrides);
  free(st->a.compare);
  free(st->a.compare_is_client);
}

int cmd_replay(int argc, char **argv) {
  replay_state st;
  memset(&st, 0, sizeof st);
  int rc = parse_args(&st.a, argc, argv);
  view *v = NULL;
  if (rc >= 0) goto done;
  if ((rc = build(&st))) goto done;
  st.stop = cli_stop_install();
  double wall_s;
  if ((rc = run_all(&st, &wall_s))) goto done;
  if (!(v = calloc(st.n_cand, sizeof *v))) {
    cli_error("replay", "out of memory");
    rc = CLI_EXIT_FAIL;
    goto done;
  }
  for (size_t i = 0; i < st.n_cand; i++) view_compute(&st, &st.cand[i], &v[i]);
  if (st.a.json) {
    if (print_json(&st, v, wall_s)) {
      cli_error("replay", "out of memory");
      rc = CLI_EXIT_FAIL;
      goto done;
    }
  } else {
    print_text(&st, v, wall_s);
  }
  fflush(stdout);
  if (st.a.plot_dir) rc = plot(&st);
done:
  free(v);
  state_free(&st);
  return rc;
}
