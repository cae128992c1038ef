/*
 * cmd_verify.c — `stormsweep verify`: a CI gate for one configuration.
 * It runs seeds of the configuration until the sequential test of
 * analysis/seqtest.h proves the targets met (exit 0) or missed (exit 1), or
 * --max-runs is spent (exit 3, undecided, with intervals).
 *
 * Verify is a one-point sweep with replicates = --max-runs: run r is
 * replicate r of point 0, seed eng_seed_derive(master, 0, r), simulated by
 * the driver (drv.h) in parallel batches. The
 * test is fed in replicate order, so the verdict and the run count are the
 * same for any thread count: runs of a batch beyond the deciding one are
 * ignored. Batches grow geometrically (a storm is refuted by its first run;
 * a clean point needs ~332) but never past the runs the test could still
 * need before it can prove.
 *
 * With scenario values (a [grid] or --grid over scenario axes, or both),
 * each value is verified in turn as its own configuration and the verdict
 * is the intersection of theirs (verify_across).
 *
 * With -o FILE the runs go through the sweep writer (fmt.h), one
 * commit per batch, so an interrupted verify keeps every finished run and
 * `--resume` reads them back and continues without rerunning any.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ana.h"
#include "client_import.h"
#include "cli.h"
#include "cmd_verify_junit.h"
#include "fmt_outfile.h"
#include "seqtest.h"
#include "textsafe.h"
#include "drv.h"

#define VERIFY_DEFAULT_MAX_RUNS 2000
#define VERIFY_MAX_BATCH 512
#define VERIFY_MAX_LISTED 10 /* failing runs named in the evidence */

typedef struct verify_args {
  const char *scenario; /* NULL: the seed study's scenario */
  const char *policy;
  const char *client; /* --client FILE */
  unsigned client_flags; /* --client-lenient: SWP_CLIENT_LENIENT */
  const char **sets;
  int n_sets;
  const char **grids; /* --grid KEY=V1,V2: scenario values to check across */
  int n_grids;
  int across;         /* set internally: one scenario value of several */
  int allow_dead;     /* --allow-dead-axes: a dead scenario axis is a warning */
  double min_pass, max_meta, alpha;
  int64_t max_runs;
  int threads;
  const char *junit, *output;
  const char *record; /* --record MODE: what -o FILE stores per run (default summary) */
  int resume, force, quiet, have_seed;
  uint64_t seed;
  eng_slo slo; /* --slo: terms on what users see (none: the queue-recovery check) */
} verify_args;

/* What verify keeps of one run. */
typedef struct verify_run {
  uint8_t have, passed, meta;
  int32_t outcome;
  uint64_t seed;
  double recovery_ms;
} verify_run;

typedef struct verify_state {
  verify_args a;
  swp_sweep sw;
  fmt_out *out;
  ana_seq seq;
  verify_run *runs; /* max_runs entries, by replicate */
  int64_t have;     /* runs held (fed or not) */
  int64_t resumed;  /* of them, read back from the file */
  int64_t simulated;
  int threads;
  double wall_s;
  const volatile sig_atomic_t *stop;
  char label[512]; /* the configuration, for messages and the JUnit suite */
} verify_state;

static void usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep verify [SCENARIO.ini] [--policy NAME] [--client FILE]\n"
          "                         [--client-lenient] [--set KEY=VALUE]... [--grid KEY=V1,V2,...]...\n"
          "                         [--min-pass P] [--max-metastable P] [--max-runs N]\n"
          "                         [--alpha A] [-j N] [--junit FILE] [-o FILE [--resume]]\n"
          "                         [--seed S] [--quiet] [--allow-dead-axes]\n\n"
          "A CI gate for one configuration: runs seeds of it until a sequential test (Wald's\n"
          "SPRT per target) proves the targets met or missed. Without SCENARIO.ini the\n"
          "configuration is the built-in seed study's scenario (its grid dropped). A sweep\n"
          "file is accepted when its grid, after --set, varies only scenario axes (traffic,\n"
          "faults, time; [sweep] scenario_axes overrides): then every scenario value is\n"
          "verified in turn, each at --alpha, and the configuration is proven only when every\n"
          "value is, refuted when any is (the overall false-proof rate stays <= alpha;\n"
          "docs/decisions.md).\n\n"
          "  --policy NAME         a preset of several settings (applied before --set):\n");
  cli_help_presets(out, 24);
  fprintf(out,
          "  --client FILE         the retry policy you ship (gRPC service config or Envoy\n"
          "                        retry_policy; docs/client-import.md), after --policy;\n"
          "                        A->B=FILE: the call edge A->B's (docs/call-graphs.md)\n"
          "  --client-lenient      an unknown field in the --client file is a note, not an\n"
          "                        error\n"
          "  --set KEY=VALUE       change one setting (repeatable, applied in order)\n"
          "  --grid KEY=V1,V2,...  check across these scenario values (repeatable)\n"
          "  --allow-dead-axes     check across a scenario axis that cannot change any run\n"
          "                        (a warning instead of the refusal)\n"
          "  --min-pass P          claim P(pass the recovery SLO) >= P (default 0.99; 0: off)\n"
          "  --max-metastable P    claim P(bad) <= P (default 0.01; 1: off; bad = metastable,\n"
          "                        collapsed or undetermined)\n"
          "  --slo TERMS           judge a run by what its users see: it passes when every\n"
          "                        term holds again, for recovery_hold_ms, within slo_ms of\n"
          "                        the clearance (user recovery time), e.g.\n"
          "                        \"p99<=500ms,errors<=1%%\" (latency quantiles p50, p90, p99,\n"
          "                        p99.9 over latency_window_ms windows, and the error rate);\n"
          "                        default: the queue-recovery check\n"
          "  --max-runs N          give up undecided after N runs (default %d)\n"
          "  --alpha A             chance of proving a configuration that misses a target\n"
          "                        (default 0.05; beta 0.1 and ratio 10 as in refine)\n"
          "  -j, --threads N       OpenMP threads (default: all cores); the verdict and the\n"
          "                        run count do not depend on it\n"
          "  --junit FILE          also write the verdict as a JUnit XML report (\"-\":\n"
          "                        standard output)\n"
          "  -o, --output FILE     keep every run in a result file (as 'run' writes); an\n"
          "                        interrupted verify then continues with --resume\n"
          "  --resume              continue FILE (same arguments), rerunning nothing\n"
          "  --record MODE         what -o FILE stores per run: summary (default: the\n"
          "                        /runs rows, no per-tick rows), every=MS or full\n"
          "  -f, --force           replace an existing -o FILE or --junit FILE\n"
          "  --seed S              master seed (default: the file's, 1 for the seed study);\n"
          "                        run r has seed eng_seed_derive(S, 0, r), like 'run'\n"
          "  -q, --quiet           print only the verdict line\n\n"
          "Exit status: 0 proven met, 1 proven missed (or a failure while working),\n"
          "2 bad usage, 3 undecided after --max-runs, 130 interrupted.\n",
          VERIFY_DEFAULT_MAX_RUNS);
}

/* Returns -1 to go on, or the exit status. */
static int parse_args(verify_args *a, int argc, char **argv) {
  enum { O_POLICY = 256, O_CLIENT, O_SET, O_MIN_PASS, O_MAX_META, O_MAX_RUNS, O_ALPHA, O_JUNIT,
         O_RESUME, O_SEED, O_GRID, O_LENIENT, O_SLO, O_ALLOW_DEAD, O_RECORD };
  static const struct option longopts[] = {
      {"policy", required_argument, NULL, O_POLICY},
      {"client", required_argument, NULL, O_CLIENT},
      {"client-lenient", no_argument, NULL, O_LENIENT},
      {"set", required_argument, NULL, O_SET},
      {"grid", required_argument, NULL, O_GRID},
      {"allow-dead-axes", no_argument, NULL, O_ALLOW_DEAD},
      {"min-pass", required_argument, NULL, O_MIN_PASS},
      {"max-metastable", required_argument, NULL, O_MAX_META},
      {"slo", required_argument, NULL, O_SLO},
      {"max-runs", required_argument, NULL, O_MAX_RUNS},
      {"alpha", required_argument, NULL, O_ALPHA},
      {"threads", required_argument, NULL, 'j'},
      {"junit", required_argument, NULL, O_JUNIT},
      {"output", required_argument, NULL, 'o'},
      {"resume", no_argument, NULL, O_RESUME},
      {"record", required_argument, NULL, O_RECORD},
      {"force", no_argument, NULL, 'f'},
      {"seed", required_argument, NULL, O_SEED},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  memset(a, 0, sizeof *a);
  a->min_pass = ANA_DEFAULT_MIN_PASS;
  a->max_meta = ANA_DEFAULT_MAX_META;
  a->alpha = ANA_SEQ_ALPHA;
  a->max_runs = VERIFY_DEFAULT_MAX_RUNS;
  a->sets = calloc((size_t)argc + 1, sizeof *a->sets);
  a->grids = calloc((size_t)argc + 1, sizeof *a->grids);
  if (!a->sets || !a->grids) {
    fprintf(stderr, "stormsweep verify: out of memory\n");
    return 1;
  }
  cli_opts_begin(argc, argv); /* --min_pass as well as --min-pass */
  int c;
  long long n;
  while ((c = cli_getopt("verify", argc, argv, ":j:o:fqh", longopts)) != -1) {
    switch (c) {
    case O_POLICY: a->policy = optarg; break;
    case O_CLIENT: a->client = optarg; break;
    case O_LENIENT: a->client_flags |= SWP_CLIENT_LENIENT; break;
    case O_ALLOW_DEAD: a->allow_dead = 1; break;
    case O_SET:
      if (!strchr(optarg, '=')) {
        fprintf(stderr, "stormsweep verify: --set: expected KEY=VALUE, got '%s'\n", optarg);
        return 2;
      }
      a->sets[a->n_sets++] = optarg;
      break;
    case O_GRID:
      if (!strchr(optarg, '=')) {
        fprintf(stderr, "stormsweep verify: --grid: expected KEY=V1,V2,..., got '%s'\n", optarg);
        return 2;
      }
      a->grids[a->n_grids++] = optarg;
      break;
    case O_MIN_PASS:
      if (cli_parse_prob("verify", "--min-pass", optarg, &a->min_pass)) return 2;
      break;
    case O_MAX_META:
      if (cli_parse_prob("verify", "--max-metastable", optarg, &a->max_meta)) return 2;
      break;
    case O_SLO: {
      char err[256];
      if (ana_slo_parse(optarg, &a->slo, err, sizeof err)) {
        fprintf(stderr, "stormsweep verify: %s\n", err);
        return 2;
      }
      break;
    }
    case O_ALPHA:
      if (cli_parse_prob("verify", "--alpha", optarg, &a->alpha)) return 2;
      break;
    case O_MAX_RUNS:
      if (cli_parse_count("verify", "--max-runs", optarg, 1, 1000000, &n)) return 2;
      a->max_runs = n;
      break;
    case 'j':
      if (cli_parse_threads("verify", "-j", optarg, &a->threads)) return 2;
      break;
    case O_JUNIT: a->junit = optarg; break;
    case 'o': a->output = optarg; break;
    case O_RESUME: a->resume = 1; break;
    case O_RECORD: a->record = optarg; break;
    case 'f': a->force = 1; break;
    case O_SEED:
      if (cli_parse_seed("verify", "--seed", optarg, &a->seed)) return 2;
      a->have_seed = 1;
      break;
    case 'q': a->quiet = 1; break;
    case 'h': usage(stdout); return 0;
    default: return 2;
    }
  }
  if (optind < argc) a->scenario = argv[optind++];
  if (optind < argc) {
    fprintf(stderr, "stormsweep verify: unexpected argument '%s' (one SCENARIO.ini at most)\n",
            argv[optind]);
    return 2;
  }
  if (a->client_flags && !a->client) {
    cli_error("verify", "--client-lenient goes with --client FILE");
    return 2;
  }
  if (a->resume && !a->output) {
    fprintf(stderr, "stormsweep verify: --resume needs -o FILE (the file to continue)\n");
    return 2;
  }
  if (a->resume && a->force) {
    fprintf(stderr, "stormsweep verify: --resume continues the file and --force replaces it: "
                    "choose one\n");
    return 2;
  }
  return -1;
}

/* The seed study's text without its [grid] section: its scenario. */
static char *seed_scenario_text(void) {
  const char *text = swp_seed_study_text();
  char *copy = strdup(text);
  if (!copy) return NULL;
  char *grid = strstr(copy, "\n[grid]");
  if (grid) {
    char *next = strstr(grid + 1, "\n[");
    if (next) memmove(grid + 1, next + 1, strlen(next + 1) + 1);
    else grid[1] = 0;
  }
  return copy;
}

/* Builds the one-point sweep. Returns 0, or the exit status (2: bad input). */
static int build_sweep(verify_state *v) {
  verify_args *a = &v->a;
  char err[1024];
  swp_sweep_init(&v->sw);
  int rc;
  if (a->scenario) {
    rc = swp_sweep_parse_file(&v->sw, a->scenario, err, sizeof err);
  } else {
    char *text = seed_scenario_text();
    if (!text) {
      fprintf(stderr, "stormsweep verify: out of memory\n");
      return 1;
    }
    rc = swp_sweep_parse_string(&v->sw, text, "built-in seed study", err, sizeof err);
    free(text);
  }
  if (rc) goto bad;
  char kv[128];
  if (a->policy) {
    snprintf(kv, sizeof kv, "policy=%s", a->policy);
    if (swp_sweep_override_set(&v->sw, kv, err, sizeof err)) goto bad;
  }
  if (a->client) {
    swp_client_map map;
    if (swp_client_load_target(a->client, a->client_flags, &map, err, sizeof err)) goto bad_client;
    if (!a->quiet) swp_client_print(&map, a->client, stderr, ana_term_fputs);
    if (swp_client_apply_sweep(&map, a->client, &v->sw, err, sizeof err)) goto bad_client;
  }
  /* The confirmation runs' verdict reads /runs only: their per-tick rows
   * are stored only when asked (--record, or --set record=...). */
  if (swp_sweep_override_set(&v->sw, "record=summary", err, sizeof err)) goto bad;
  for (int i = 0; i < a->n_sets; i++)
    if (swp_sweep_override_set(&v->sw, a->sets[i], err, sizeof err)) goto bad;
  for (int i = 0; i < a->n_grids; i++)
    if (swp_sweep_override_grid(&v->sw, a->grids[i], err, sizeof err)) goto bad;
  if (a->record && swp_record_apply(&v->sw, "record", a->record, err, sizeof err)) {
    /* Named as the option typed, not as an override. */
    cli_error("verify", "--record: %s", strncmp(err, "record: ", 8) ? err : err + 8);
    return 2;
  }
  snprintf(kv, sizeof kv, "replicates=%lld", (long long)a->max_runs);
  if (swp_sweep_override_set(&v->sw, kv, err, sizeof err)) goto bad;
  if (a->have_seed) {
    snprintf(kv, sizeof kv, "seed=%llu", (unsigned long long)a->seed);
    if (swp_sweep_override_set(&v->sw, kv, err, sizeof err)) goto bad;
  }
  if (swp_sweep_check(&v->sw, err, sizeof err)) goto bad;
  v->sw.base.user_slo = a->slo; /* every run's config is a copy of the base */
  if (v->sw.n_points != 1) {
    /* Several scenario values are checked one by one (cmd_verify); a
     * tunable with several values is not one configuration. */
    char axes[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < v->sw.n_axes; i++)
      if (v->sw.axes[i].count > 1 && !swp_sweep_axis_is_scenario(&v->sw, v->sw.axes[i].key))
        used += (size_t)snprintf(axes + used, used < sizeof axes ? sizeof axes - used : 0, "%s%s",
                                 used ? ", " : "", v->sw.axes[i].key);
    if (!used) return 0;
    fprintf(stderr,
            "stormsweep verify: %s has %lld grid points (tunable axes %s): verify checks one "
            "configuration, across scenario values if given; fix the axes with --set "
            "KEY=VALUE\n",
            v->sw.source, (long long)v->sw.n_points, axes);
    return 2;
  }
  /* A run that is not back by the horizon needs hold + trend after the
   * clearance to be classed (docs/model.md "The outcome rule"); otherwise it would
   * be undetermined, and a verdict must not guess. */
  const eng_config *c = &v->sw.base;
  double tail = c->horizon_ms - eng_config_fault_clear_ms(c);
  if (eng_config_fault_clear_ms(c) > 0 && tail < c->recovery_hold_ms + c->trend_ms) {
    fprintf(stderr,
            "stormsweep verify: horizon_ms %g leaves %g ms after the last fault clears; a run "
            "not back by then could not be classed (needs recovery_hold_ms + trend_ms = %g ms): "
            "raise horizon_ms\n",
            c->horizon_ms, tail, c->recovery_hold_ms + c->trend_ms);
    return 2;
  }
  /* The label: where the configuration comes from and what changed it. */
  size_t used = (size_t)snprintf(v->label, sizeof v->label, "%s",
                                 a->scenario ? a->scenario : "seed study scenario");
  if (a->policy)
    used += (size_t)snprintf(v->label + used, used < sizeof v->label ? sizeof v->label - used : 0,
                             ", policy %s", a->policy);
  if (a->client)
    used += (size_t)snprintf(v->label + used, used < sizeof v->label ? sizeof v->label - used : 0,
                             ", client %s", a->client);
  for (int i = 0; i < a->n_sets; i++)
    used += (size_t)snprintf(v->label + used, used < sizeof v->label ? sizeof v->label - used : 0,
                             ", %s", a->sets[i]);
  if (a->slo.n) {
    char slo[256];
    ana_slo_format(&a->slo, slo, sizeof slo);
    used += (size_t)snprintf(v->label + used, used < sizeof v->label ? sizeof v->label - used : 0,
                             ", slo %s", slo);
  }
  return 0;
bad:
  fprintf(stderr, "stormsweep verify: %s\n", err);
  return 2;
bad_client:
  cli_error("verify", "--client %s", err);
  return 2;
}

static void keep_run(verify_state *v, const fmt_run_record *rec) {
  verify_run *x = &v->runs[rec->replicate];
  if (x->have) return;
  x->have = 1;
  x->outcome = rec->summary.outcome;
  x->meta = ana_outcome_is_bad(rec->summary.outcome);
  x->passed = rec->summary.passed_slo && !x->meta;
  x->seed = rec->summary.seed;
  x->recovery_ms = rec->summary.recovery_ms;
  v->have++;
}

/* Feeds the test every run it has not seen, in replicate order, up to the
 * first one missing. */
static void feed(verify_state *v) {
  while (v->seq.state == ANA_SEQ_OPEN && v->seq.n < v->a.max_runs && v->runs[v->seq.n].have) {
    const verify_run *x = &v->runs[v->seq.n];
    ana_seq_add(&v->seq, x->passed, x->meta);
  }
}

static void on_record(void *user, const fmt_run_record *rec) { keep_run(user, rec); }

/* Runs the replicates in list through the driver (and the writer with -o,
 * one commit per batch). Returns 0, or -1 with a message printed. */
static int run_batch(verify_state *v, const int64_t *reps, int64_t n) {
  fmt_run_ref *refs = malloc((size_t)(n ? n : 1) * sizeof *refs);
  if (!refs) {
    cli_error("verify", "out of memory");
    return -1;
  }
  for (int64_t i = 0; i < n; i++) refs[i] = (fmt_run_ref){reps[i], 0, (int32_t)reps[i]};
  drv_options opt = {0};
  opt.threads = v->threads;
  opt.stop = v->stop;
  opt.flush_interval_s = 2.0;
  opt.runs = refs;
  opt.n_runs = n;
  opt.on_record = on_record;
  opt.on_record_user = v;
  drv_result res;
  drv_sweep_execute(&v->sw, v->out, &opt, &res);
  free(refs);
  v->simulated += res.totals.done;
  char err[512];
  if (v->out && !res.write_failed && fmt_out_flush(v->out, err, sizeof err)) {
    snprintf(res.first_error, sizeof res.first_error, "%s", err);
    res.write_failed = 1;
  }
  if (res.first_error[0]) {
    cli_error_text("verify", res.first_error);
    return -1;
  }
  return 0;
}

/* Runs the test could still need before it can prove: the larger, over the
 * open targets, of the good runs that lift its LLR to the upper boundary. */
static int64_t runs_to_decide(const ana_seq *s) {
  int64_t need = 1;
  const ana_sprt *t[2] = {&s->pass, &s->meta};
  for (int i = 0; i < 2; i++) {
    if (!t[i]->enabled || t[i]->state != ANA_SEQ_OPEN) continue;
    int64_t k = (int64_t)ceil((t[i]->upper - t[i]->llr) / t[i]->step_good);
    if (k > need) need = k;
  }
  return need;
}

/* Checks, when the interrupted file still reads, that it is a verify of
 * this length: a clearer message than the writer's "another sweep". */
static int check_shape(verify_state *v, const char *path) {
  char err[1024];
  fmt_in *in;
  if (fmt_in_open(&in, path, err, sizeof err)) return 0; /* torn: the writer rebuilds it */
  const fmt_info *info = fmt_in_info(in);
  int rc = 0;
  if (info->n_runs != v->a.max_runs || info->n_points != 1) {
    fprintf(stderr,
            "stormsweep verify: %s holds %lld runs of %lld points, not a verify of %lld runs: "
            "resume with the same --max-runs\n",
            path, (long long)info->n_runs, (long long)info->n_points, (long long)v->a.max_runs);
    rc = -1;
  }
  fmt_in_close(in);
  return rc;
}

/* The runs the reopened file holds (the writer's open has checked it is
 * this sweep and rebuilt it from its journal if it was torn). */
static int read_back(verify_state *v, const char *path) {
  char err[1024];
  const uint8_t *done = fmt_out_done(v->out);
  int64_t rows = fmt_out_rows(v->out);
  int64_t *list = calloc((size_t)(rows > 0 ? rows : 1), sizeof *list);
  size_t n = 0;
  fmt_run_record *recs = NULL;
  int rc = -1;
  if (!list) goto oom;
  for (int64_t r = 0; r < rows; r++)
    if (done[r]) list[n++] = r;
  if (n) {
    recs = calloc(n, sizeof *recs);
    if (!recs) goto oom;
    if (fmt_out_read_records(v->out, list, n, recs, err, sizeof err)) goto fail;
    for (size_t i = 0; i < n; i++) keep_run(v, &recs[i]);
  }
  v->resumed = (int64_t)n;
  rc = 0;
  goto out;
oom:
  snprintf(err, sizeof err, "%s: out of memory", path);
fail:
  fprintf(stderr, "stormsweep verify: %s\n", err);
out:
  free(list);
  free(recs);
  return rc;
}

/* Opens or creates the result file. Returns 0 or the exit status. */
static int open_output(verify_state *v, int argc, char **argv) {
  verify_args *a = &v->a;
  char err[1024];
  struct stat st;
  int exists = stat(a->output, &st) == 0;
  if (a->resume) {
    if (!exists) {
      fprintf(stderr, "stormsweep verify: %s: no such file to resume\n", a->output);
      return 2;
    }
    if (check_shape(v, a->output)) return 1;
    if (fmt_out_open_resume(&v->out, a->output, &v->sw, 0, 0, err, sizeof err)) {
      fprintf(stderr, "stormsweep verify: %s\n", err);
      return 1;
    }
    if (fmt_out_note(v->out)[0])
      fprintf(stderr, "stormsweep verify: %s\n", fmt_out_note(v->out));
    return read_back(v, a->output) ? 1 : 0;
  }
  if (exists && !a->force) {
    fprintf(stderr,
            "stormsweep verify: %s: already exists (use --force to overwrite, --resume to "
            "continue it)\n",
            a->output);
    return 2;
  }
  size_t len = 0;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *cmd = malloc(len + 16);
  if (!cmd) return 1;
  strcpy(cmd, "stormsweep");
  for (int i = 0; i < argc; i++) {
    strcat(cmd, " ");
    strcat(cmd, argv[i]);
  }
  int rc = fmt_out_create(&v->out, a->output, &v->sw, cmd, a->force, err, sizeof err);
  free(cmd);
  if (rc) {
    fprintf(stderr, "stormsweep verify: %s\n", err);
    return 1;
  }
  return 0;
}

/* ---- evidence ---- */

typedef struct verify_evidence {
  int64_t n, passed, meta, slow, recovered;
  double median_ms, max_ms;
  double pass_lo, bad_hi; /* one-sided 95% exact bounds */
  int64_t by[ENG_OUTCOME_COUNT];
  char bad_text[128];     /* "0 metastable", "2 metastable, 1 collapsed" */
} verify_evidence;

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Over the runs the test has seen. */
static verify_evidence gather(const verify_state *v) {
  verify_evidence e = {.n = v->seq.n, .median_ms = NAN, .max_ms = NAN};
  double *rec = malloc(((size_t)e.n + 1) * sizeof *rec);
  for (int64_t r = 0; r < e.n; r++) {
    const verify_run *x = &v->runs[r];
    e.passed += x->passed;
    e.meta += x->meta;
    e.slow += x->outcome == ENG_OUTCOME_SLOW;
    if (x->outcome >= 0 && x->outcome < ENG_OUTCOME_COUNT) e.by[x->outcome]++;
    if (x->outcome == ENG_OUTCOME_RECOVERED && rec) rec[e.recovered++] = x->recovery_ms;
  }
  if (rec && e.recovered) {
    qsort(rec, (size_t)e.recovered, sizeof *rec, cmp_double);
    e.median_ms = e.recovered % 2 ? rec[e.recovered / 2]
                                  : 0.5 * (rec[e.recovered / 2 - 1] + rec[e.recovered / 2]);
    e.max_ms = rec[e.recovered - 1];
  }
  free(rec);
  /* A one-sided 95% bound is the end of the two-sided 90% interval. */
  double conf1 = 1.0 - 2.0 * (1.0 - ANA_CONF);
  e.pass_lo = ana_clopper_pearson(e.passed, e.n, conf1).lo;
  e.bad_hi = ana_clopper_pearson(e.meta, e.n, conf1).hi;
  ana_outcome_bad_describe(e.by, e.bad_text, sizeof e.bad_text);
  return e;
}

static const char *verdict_word(const verify_state *v, int interrupted) {
  if (interrupted) return "INTERRUPTED";
  switch (v->seq.state) {
  case ANA_SEQ_PROVEN: return "PROVEN";
  case ANA_SEQ_REFUTED: return "REFUTED";
  default: return "UNDECIDED";
  }
}

/* The evidence as text (also the body of JUnit failures). */
static void format_evidence(const verify_state *v, int interrupted, char *buf, size_t len) {
  verify_evidence e = gather(v);
  char claim[128], design[320], verdict[320], status[2][320];
  ana_seq_claim(&v->seq.d, claim, sizeof claim);
  ana_seq_describe(&v->seq.d, design, sizeof design);
  ana_seq_verdict(&v->seq, verdict, sizeof verdict);
  ana_seq_target_status(&v->seq, 1, status[0], sizeof status[0]);
  ana_seq_target_status(&v->seq, 0, status[1], sizeof status[1]);
  size_t u = 0;
#define ADD(...) u += (size_t)snprintf(buf + u, u < len ? len - u : 0, __VA_ARGS__)
  ADD("configuration  %s (master seed %llu)\n", v->label, (unsigned long long)v->sw.seed);
  ADD("claim          %s (" ANA_BAD_MEANING ")\n", claim);
  ADD("verdict        %s after %lld run%s", verdict_word(v, interrupted), (long long)e.n,
      e.n == 1 ? "" : "s");
  if (v->seq.state == ANA_SEQ_OPEN && !interrupted)
    ADD(" (--max-runs %lld spent)", (long long)v->a.max_runs);
  ADD(": %s\n", verdict);
  /* Each target's test with the bound its LLR was compared with. */
  for (int i = 0, first = 1; i < 2; i++)
    if (status[i][0]) {
      ADD("%s%s\n", first ? "proof          " : "               ", status[i]);
      first = 0;
    }
  ADD("runs           %lld: %lld passed the SLO, %lld slow, %lld bad (%s)\n", (long long)e.n,
      (long long)e.passed, (long long)e.slow, (long long)e.meta, e.bad_text);
  /* Beside the test, not the test: the one-sided exact bound on the side of
   * each target, so no interval end below a target stands next to PROVEN
   * unnamed. */
  if (e.n) {
    ADD("P(pass)        %.4f (%lld of %lld); one-sided 95%% lower bound %.4f (Clopper-Pearson; "
        "evidence beside the SPRT, which decides)\n",
        (double)e.passed / (double)e.n, (long long)e.passed, (long long)e.n, e.pass_lo);
    ADD("P(bad)         %.4f (%lld of %lld); one-sided 95%% upper bound %.4f (Clopper-Pearson; "
        "evidence beside the SPRT, which decides)\n",
        (double)e.meta / (double)e.n, (long long)e.meta, (long long)e.n, e.bad_hi);
  }
  if (e.recovered)
    ADD("recovery       median %.0f ms, max %.0f ms over %lld recovered runs\n", e.median_ms,
        e.max_ms, (long long)e.recovered);
  ADD("test           %s\n", design);
  int64_t listed = 0, bad = 0;
  for (int64_t r = 0; r < e.n; r++) {
    const verify_run *x = &v->runs[r];
    if (x->passed) continue;
    if (bad++ == 0) ADD("failing runs   (replicate: seed, outcome; 'stormsweep sim --seed S' reruns one)\n");
    if (listed < VERIFY_MAX_LISTED) {
      listed++;
      ADD("  %lld: seed %llu, %s", (long long)r, (unsigned long long)x->seed,
          eng_outcome_name((eng_outcome)x->outcome));
      if (x->outcome == ENG_OUTCOME_RECOVERED) ADD(" in %.0f ms (over the SLO)", x->recovery_ms);
      ADD("\n");
    }
  }
  if (bad > listed) ADD("  ... and %lld more\n", (long long)(bad - listed));
#undef ADD
}

/* ---- the command ---- */

static void state_free(verify_state *v) {
  if (v->out) fmt_out_close(v->out, NULL, NULL, 0);
  swp_sweep_free(&v->sw);
  free(v->runs);
}

/* Verifies the one configuration a describes (with its scenario fixed).
 * Returns the exit status; *state gets the test's verdict, *runs its run
 * count. */
static int verify_config(const verify_args *a, int argc, char **argv, ana_seq_state *state,
                         int64_t *runs) {
  verify_state v;
  memset(&v, 0, sizeof v);
  v.a = *a;
  *state = ANA_SEQ_OPEN;
  *runs = 0;
  int rc;
  if ((rc = build_sweep(&v))) goto done;
  if (v.sw.n_points != 1) {
    fprintf(stderr, "stormsweep verify: %lld scenario values left after fixing them\n",
            (long long)v.sw.n_points);
    rc = 2;
    goto done;
  }
  ana_seq_design d = {.min_pass = v.a.min_pass, .max_meta = v.a.max_meta, .alpha = v.a.alpha};
  char err[1024];
  if (ana_seq_design_check(&d, err, sizeof err)) {
    fprintf(stderr, "stormsweep verify: %s\n", err);
    rc = 2;
    goto done;
  }
  ana_seq_init(&v.seq, &d);
  v.runs = calloc((size_t)v.a.max_runs, sizeof *v.runs);
  int64_t *batch = malloc(VERIFY_MAX_BATCH * sizeof *batch);
  if (!v.runs || !batch) {
    free(batch);
    fprintf(stderr, "stormsweep verify: out of memory\n");
    rc = 1;
    goto done;
  }
  v.threads = v.a.threads > 0 ? v.a.threads : omp_get_max_threads();
  char merr[1024];
  if (drv_sweep_memory_check(&v.sw, v.threads, VERIFY_MAX_BATCH, merr, sizeof merr)) {
    free(batch);
    cli_error_text("verify", merr); /* before -o FILE exists */
    rc = CLI_EXIT_USAGE;
    goto done;
  }
  if (v.a.output && (rc = open_output(&v, argc, argv))) {
    free(batch);
    goto done;
  }

  v.stop = cli_stop_install();
  char started[32], finished[32];
  fmt_time_iso8601(started, sizeof started);
  double t0 = omp_get_wtime();

  int failed = 0;
  int64_t grow = 4 * (int64_t)v.threads;
  feed(&v);
  while (v.seq.state == ANA_SEQ_OPEN && v.seq.n < v.a.max_runs && !*v.stop) {
    int64_t want = runs_to_decide(&v.seq);
    if (want > grow) want = grow;
    if (want < v.threads) want = v.threads;
    if (want > VERIFY_MAX_BATCH) want = VERIFY_MAX_BATCH;
    int64_t n = 0;
    for (int64_t r = v.seq.n; r < v.a.max_runs && n < want; r++)
      if (!v.runs[r].have) batch[n++] = r;
    if (run_batch(&v, batch, n)) {
      failed = 1;
      break;
    }
    feed(&v);
    grow *= 2;
    if (!v.a.quiet && v.seq.state == ANA_SEQ_OPEN && !*v.stop)
      fprintf(stderr, "stormsweep verify: %lld runs, %s\n", (long long)v.seq.n,
              ana_seq_state_name(v.seq.state));
  }
  free(batch);
  v.wall_s = omp_get_wtime() - t0;
  fmt_time_iso8601(finished, sizeof finished);
  int sig = cli_stop_signal();
  cli_stop_restore();
  int interrupted = sig && v.seq.state == ANA_SEQ_OPEN;

  if (v.out) {
    fmt_timing timing = {.wall_s = v.wall_s,
                         .threads = v.threads,
                         .runs_done = v.simulated,
                         .started = started,
                         .finished = finished};
    int close_rc = fmt_out_close(v.out, &timing, err, sizeof err);
    v.out = NULL;
    if (close_rc || err[0]) fprintf(stderr, "stormsweep verify: %s\n", err);
    if (close_rc) failed = 1;
  }
  if (failed) {
    rc = 1;
    goto done;
  }

  char evidence[8192];
  format_evidence(&v, interrupted, evidence, sizeof evidence);
  if (v.a.quiet && v.a.across) {
    /* verify_across prints the per-value verdicts in its table */
  } else if (v.a.quiet) {
    char verdict[320];
    ana_seq_verdict(&v.seq, verdict, sizeof verdict);
    printf("stormsweep verify: %s after %lld run%s: %s\n", verdict_word(&v, interrupted),
           (long long)v.seq.n, v.seq.n == 1 ? "" : "s", verdict);
  } else {
    printf("stormsweep verify: %.1f s, %d thread%s, %lld runs simulated", v.wall_s, v.threads,
           v.threads == 1 ? "" : "s", (long long)v.simulated);
    if (v.resumed) printf(", %lld read back from %s", (long long)v.resumed, v.a.output);
    printf("\n\n%s", evidence);
  }
  cli_verify_verdict verdict = {.seq = &v.seq,
                                .label = v.label,
                                .master_seed = v.sw.seed,
                                .wall_s = v.wall_s,
                                .word = verdict_word(&v, interrupted),
                                .interrupted = interrupted,
                                .evidence = evidence};
  if (v.a.junit && cli_verify_junit(v.a.junit, v.a.force, &verdict)) {
    rc = 1;
    goto done;
  }
  if (interrupted) {
    fprintf(stderr, "stormsweep verify: interrupted (%s)", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    if (v.a.output) fprintf(stderr, "; every finished run is in %s: add --resume to continue", v.a.output);
    fprintf(stderr, "\n");
    rc = 128 + sig;
  } else {
    rc = v.seq.state == ANA_SEQ_PROVEN ? 0 : v.seq.state == ANA_SEQ_REFUTED ? 1 : 3;
  }
  *state = v.seq.state;
  *runs = v.seq.n;
done:
  state_free(&v);
  return rc;
}

/* Across scenario values (docs/decisions.md): each value of the sweep's
 * scenario axes is verified as its own configuration, each test at alpha;
 * the configuration is proven only when every value is (an
 * intersection-union test: a configuration that misses the targets at
 * some value is proven only if that value's test errs, so the overall
 * false-proof rate stays <= alpha), refuted when any value is. */
static int verify_across(const verify_args *a, int argc, char **argv, const swp_sweep *sw) {
  if (a->output || a->junit) {
    fprintf(stderr, "stormsweep verify: %lld scenario values: -o and --junit take one "
                    "configuration; fix the scenario with --set KEY=VALUE, or drop them\n",
            (long long)sw->n_points);
    return 2;
  }
  int64_t np = sw->n_points;
  ana_seq_state *st = calloc((size_t)np, sizeof *st);
  int64_t *runs = calloc((size_t)np, sizeof *runs);
  size_t *idx = calloc(sw->n_axes ? sw->n_axes : 1, sizeof *idx);
  const char **sets = calloc((size_t)a->n_sets + sw->n_axes + 1, sizeof *sets);
  char (*kv)[256] = calloc(sw->n_axes ? sw->n_axes : 1, sizeof *kv);
  int rc = 0, n_proven = 0, n_refuted = 0, interrupted = 0;
  if (!st || !runs || !idx || !sets || !kv) {
    fprintf(stderr, "stormsweep verify: out of memory\n");
    rc = 1;
    goto out;
  }
  for (int64_t p = 0; p < np; p++) {
    verify_args b = *a;
    b.sets = sets;
    b.grids = NULL;
    b.n_grids = 0;
    b.across = 1;
    memcpy(sets, a->sets, (size_t)a->n_sets * sizeof *sets);
    b.n_sets = a->n_sets;
    swp_sweep_point_indexes(sw, p, idx);
    char desc[512];
    swp_sweep_point_describe(sw, p, desc, sizeof desc);
    for (size_t x = 0; x < sw->n_axes; x++) {
      if (sw->axes[x].count < 2) continue;
      snprintf(kv[x], sizeof kv[x], "%s=%s", sw->axes[x].key, sw->axes[x].values[idx[x]]);
      sets[b.n_sets++] = kv[x];
    }
    if (!a->quiet) printf("==== scenario value %lld of %lld: %s\n", (long long)p + 1, (long long)np, desc);
    int r = verify_config(&b, argc, argv, &st[p], &runs[p]);
    if (r == 2 || (r == 1 && st[p] != ANA_SEQ_REFUTED) || r >= 128) {
      rc = r;
      interrupted = r >= 128;
      if (!interrupted) goto out;
      break;
    }
    n_proven += st[p] == ANA_SEQ_PROVEN;
    n_refuted += st[p] == ANA_SEQ_REFUTED;
    if (!a->quiet) printf("\n");
  }
  printf("stormsweep verify: across %lld scenario values (each tested at alpha %g; proven only "
         "if every one is):\n", (long long)np, a->alpha);
  for (int64_t p = 0; p < np; p++) {
    char desc[512];
    swp_sweep_point_describe(sw, p, desc, sizeof desc);
    const char *w = st[p] == ANA_SEQ_PROVEN ? "PROVEN" : st[p] == ANA_SEQ_REFUTED ? "REFUTED"
                                                                                : "UNDECIDED";
    if (interrupted && runs[p] == 0 && st[p] == ANA_SEQ_OPEN) w = "NOT RUN";
    printf("  %-40s %s after %lld run%s\n", desc, w, (long long)runs[p], runs[p] == 1 ? "" : "s");
  }
  if (interrupted) goto out;
  if (n_refuted) {
    printf("overall        REFUTED: misses the targets at %d of %lld scenario values\n", n_refuted,
           (long long)np);
    rc = 1;
  } else if (n_proven == np) {
    printf("overall        PROVEN at every one of the %lld scenario values (false-proof rate "
           "<= alpha = %g for the whole claim)\n", (long long)np, a->alpha);
    rc = 0;
  } else {
    printf("overall        UNDECIDED: proven at %d of %lld scenario values, none refuted\n",
           n_proven, (long long)np);
    rc = 3;
  }
out:
  free(st);
  free(runs);
  free(idx);
  free(sets);
  free(kv);
  return rc;
}

int cmd_verify(int argc, char **argv) {
  verify_args a;
  /* getopt reorders what it parses: the command line stored with -o stays as typed. */
  memset(&a, 0, sizeof a);
  char **av = cli_argv_copy(argc, argv);
  int rc = av ? parse_args(&a, argc, av) : CLI_EXIT_FAIL;
  free(av);
  if (rc >= 0) {
    free(a.sets);
    free(a.grids);
    return rc;
  }
  /* The configuration, to see whether it spans scenario values. */
  verify_state probe;
  memset(&probe, 0, sizeof probe);
  probe.a = a;
  ana_seq_state state;
  int64_t runs;
  if ((rc = build_sweep(&probe)) == 0) {
    if (probe.sw.n_points > 1 && cli_dead_axes("verify", &probe.sw, a.allow_dead))
      rc = CLI_EXIT_USAGE;
    else if (probe.sw.n_points > 1)
      rc = verify_across(&a, argc, argv, &probe.sw);
    else
      rc = verify_config(&a, argc, argv, &state, &runs);
  }
  swp_sweep_free(&probe.sw);
  free(a.sets);
  free(a.grids);
  return rc;
}
