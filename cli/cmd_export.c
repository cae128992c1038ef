/*
 * cmd_export.c — `stormsweep export --prometheus FILE.h5 RUN`: one run's
 * request-latency histogram in the Prometheus text exposition format, so a
 * simulated run can be loaded into a team's dashboards and read back as
 * `service = empirical` (the round trip tests/test_export.c checks).
 *
 * A result file stores each run's per-window quantiles, not its histogram,
 * so the run is simulated again from the file's own sweep and the run's
 * seed (a run depends on nothing else) and the new summary is checked
 * against the stored row: a file whose run does not come out the same (a
 * scenario file it names has changed, another version of stormsweep) is
 * refused rather than exported wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eng.h"
#include "fmt.h"
#include "fmt_outfile.h"
#include "tel.h"

#define EXPORT_METRIC "stormsweep_request_duration_seconds"
#define EXPORT_DEFAULT_PER_DOUBLING 8

static void usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep export --prometheus FILE.h5 RUN [-o OUT] [-f]\n"
          "                         [--phase all|baseline|during|after] [--buckets B]\n"
          "                         [--metric NAME]\n\n"
          "Writes run RUN's request-latency histogram (each request's latency from its\n"
          "first send to its final answer, failed requests included) as a Prometheus\n"
          "classic histogram in seconds: HELP and TYPE lines, cumulative _bucket{le}\n"
          "samples, _sum and _count, labelled with the run, point, replicate, seed,\n"
          "policy and phase. The file keeps no histogram: the run is simulated again from\n"
          "the file's sweep and the run's seed, and refused unless it reproduces the\n"
          "stored summary. docs/telemetry.md \"Exporting a run\".\n\n"
          "  --prometheus     the Prometheus text exposition format (the only one yet)\n"
          "  RUN              the run's id (its /runs row, as 'analyze' and 'verify' name runs)\n"
          "  -o, --output OUT write to OUT (default: standard output); an existing OUT only\n"
          "                   with --force\n"
          "  -f, --force      replace an existing OUT (atomically)\n"
          "  --phase P        the requests that ended in phase P: baseline (before the first\n"
          "                   fault), during (the faults), after (from clearance), or all\n"
          "                   three (default; from warmup_ms on)\n"
          "  --buckets B      the bucket bounds: N (default %d) = 2^(k/N) ms, N per doubling,\n"
          "                   over the latencies seen; engine = the engine's own buckets\n"
          "                   (exact, up to thousands); or a list of bounds in seconds,\n"
          "                   e.g. 0.005,0.01,0.025,0.05,0.1,0.25,0.5,1\n"
          "  --metric NAME    the metric's name (default " EXPORT_METRIC ")\n",
          EXPORT_DEFAULT_PER_DOUBLING);
}

/* A Prometheus metric name: [a-zA-Z_:][a-zA-Z0-9_:]*. */
static int metric_name_ok(const char *s) {
  if (!*s || strlen(s) > 200) return 0;
  for (const char *c = s; *c; c++) {
    int alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || *c == ':';
    if (!alpha && !(c > s && *c >= '0' && *c <= '9')) return 0;
  }
  return 1;
}

/* The bounds --buckets asks for, in ms, over the fine histogram's range. */
static int export_bounds(const char *spec, const tel_hist *fine, double **b, size_t *n) {
  *b = NULL;
  *n = 0;
  if (!strcmp(spec, "engine")) {
    *b = malloc((fine->n ? fine->n : 1) * sizeof **b);
    if (!*b) return -1;
    memcpy(*b, fine->le, fine->n * sizeof **b);
    *n = fine->n;
    return 0;
  }
  if (!strchr(spec, ',') && !strchr(spec, '.')) {
    char *end;
    long per = strtol(spec, &end, 10);
    if (*end || per < 1 || per > 128) return -2;
    if (!fine->n) return 0;
    double lo = fine->le[0] > 0 ? fine->le[0] : fine->n > 1 ? fine->le[1] : 1;
    return tel_ladder_log(lo > 0 ? lo : 1e-3, fine->le[fine->n - 1], (int)per, b, n);
  }
  size_t cap = 1;
  for (const char *c = spec; *c; c++) cap += *c == ',';
  if (cap > TEL_MAX_BUCKETS) return -2;
  double *v = malloc(cap * sizeof *v);
  if (!v) return -1;
  const char *p = spec;
  for (size_t i = 0; i < cap; i++) {
    char *end;
    v[i] = strtod(p, &end) * 1000;
    if (end == p || (*end && *end != ',') || !isfinite(v[i]) || v[i] < 0 ||
        (i && !(v[i] > v[i - 1]))) {
      free(v);
      return -2;
    }
    p = end + 1;
  }
  *b = v;
  *n = cap;
  return 0;
}

/* Whether two summaries are the same run. */
static int same_run(const eng_summary *a, const eng_summary *b) {
  int same_rec = (isnan(a->recovery_ms) && isnan(b->recovery_ms)) || a->recovery_ms == b->recovery_ms;
  return a->seed == b->seed && a->outcome == b->outcome && a->new_requests == b->new_requests &&
         a->attempts == b->attempts && a->successes == b->successes &&
         a->failed_requests == b->failed_requests && a->events == b->events && same_rec;
}

typedef struct export_args {
  const char *file, *run_text, *out, *phase_text, *buckets, *metric;
  int prometheus, force;
} export_args;

/* Simulates run id of file again into *lat (after checking it against its
 * row); *cfg its configuration, *rec its row. Returns 0 or the exit status. */
static int rerun(const export_args *a, int64_t id, int phase, eng_config *cfg,
                 fmt_run_record *rec, eng_lat_export *lat) {
  char err[1024];
  fmt_in *in;
  if (fmt_in_open(&in, a->file, err, sizeof err)) {
    cli_error_text("export", err);
    return 2;
  }
  const fmt_info *info = fmt_in_info(in);
  int rc = 2;
  uint8_t *done = calloc((size_t)(info->n_runs > 0 ? info->n_runs : 1), 1);
  swp_sweep sw;
  swp_sweep_init(&sw);
  if (!done) {
    cli_error("export", "out of memory");
    rc = 1;
    goto out;
  }
  if (id < 0 || id >= info->n_runs) {
    cli_error("export", "%s: no run %lld (the file holds runs 0 to %lld)", a->file,
              (long long)id, (long long)info->n_runs - 1);
    goto out;
  }
  if (fmt_in_read_done(in, done, err, sizeof err) || !done[id]) {
    if (done[id] == 0 && !err[0])
      cli_error("export", "%s: run %lld was not run (an interrupted or sliced sweep)", a->file,
                (long long)id);
    else cli_error_text("export", err);
    goto out;
  }
  memset(rec, 0, sizeof *rec);
  if (fmt_in_read_records(in, &id, 1, rec, err, sizeof err) ||
      fmt_in_sweep(in, &sw, err, sizeof err) ||
      swp_sweep_point_config(&sw, rec->point, cfg, err, sizeof err)) {
    cli_error_text("export", err);
    goto out;
  }
  eng_run *run = eng_run_create();
  eng_summary s;
  if (!run) {
    cli_error("export", "out of memory");
    rc = 1;
    goto out;
  }
  if (eng_run_simulate(run, cfg, rec->summary.seed, &s, err, sizeof err)) {
    cli_error("export", "%s: run %lld: %s", a->file, (long long)id, err);
  } else if (!same_run(&s, &rec->summary)) {
    cli_error("export",
              "%s: run %lld (seed %llu) does not come out as stored (%s, %lld requests, %lld "
              "events stored; %s, %lld, %lld now): a file it names (service_histogram, "
              "rate_profile) changed, or another stormsweep version wrote it; refusing to "
              "export a histogram that is not this run's",
              a->file, (long long)id, (unsigned long long)rec->summary.seed,
              eng_outcome_name((eng_outcome)rec->summary.outcome),
              (long long)rec->summary.new_requests, (long long)rec->summary.events,
              eng_outcome_name((eng_outcome)s.outcome), (long long)s.new_requests,
              (long long)s.events);
  } else if (eng_run_latency_export(run, phase, lat)) {
    cli_error("export", "%s: run %lld: no latency histogram", a->file, (long long)id);
  } else {
    rc = 0;
  }
  eng_run_destroy(run);
out:
  free(done);
  swp_sweep_free(&sw);
  fmt_in_close(in);
  return rc;
}

static int parse_args(export_args *a, int argc, char **argv) {
  enum { O_PROM = 256, O_PHASE, O_BUCKETS, O_METRIC };
  static const struct option longopts[] = {
      {"prometheus", no_argument, NULL, O_PROM},   {"output", required_argument, NULL, 'o'},
      {"force", no_argument, NULL, 'f'},           {"phase", required_argument, NULL, O_PHASE},
      {"buckets", required_argument, NULL, O_BUCKETS},
      {"metric", required_argument, NULL, O_METRIC}, {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  memset(a, 0, sizeof *a);
  a->out = "-";
  a->phase_text = "all";
  a->buckets = "8";
  a->metric = EXPORT_METRIC;
  cli_opts_begin(argc, argv);
  int c;
  while ((c = cli_getopt("export", argc, argv, ":o:fh", longopts)) != -1) {
    switch (c) {
    case O_PROM: a->prometheus = 1; break;
    case 'o': a->out = optarg; break;
    case 'f': a->force = 1; break;
    case O_PHASE: a->phase_text = optarg; break;
    case O_BUCKETS: a->buckets = optarg; break;
    case O_METRIC: a->metric = optarg; break;
    case 'h': usage(stdout); return 0;
    default: return 2;
    }
  }
  if (optind < argc) a->file = argv[optind++];
  if (optind < argc) a->run_text = argv[optind++];
  if (!a->file || !a->run_text || optind < argc) {
    cli_error("export", "expected FILE.h5 RUN (see 'stormsweep export --help')");
    return 2;
  }
  if (!a->prometheus) {
    cli_error("export", "say the format: --prometheus (the only one yet)");
    return 2;
  }
  if (!metric_name_ok(a->metric)) {
    cli_error("export", "--metric: '%s' is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)",
              a->metric);
    return 2;
  }
  return -1;
}

static int write_prom(const export_args *a, const eng_config *cfg, const fmt_run_record *rec,
                      int64_t id, const tel_hist *h) {
  char run[32], point[32], rep[32], seed[32], pol[64];
  snprintf(run, sizeof run, "%lld", (long long)id);
  snprintf(point, sizeof point, "%lld", (long long)rec->point);
  snprintf(rep, sizeof rep, "%d", rec->replicate);
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)rec->summary.seed);
  eng_config_get(cfg, "policy", pol, sizeof pol);
  const char *names[] = {"run", "point", "replicate", "seed", "policy", "phase"};
  const char *values[] = {run, point, rep, seed, pol, a->phase_text};
  fmt_outfile of;
  FILE *f = cli_out_open(&of, "export", "-o", a->out, a->force);
  if (!f) return 1;
  tel_prom_write(f, a->metric,
                 "Request latency from the first send to the final answer (stormsweep "
                 "simulation, failed requests included).",
                 names, values, 6, h);
  return cli_out_close(&of, "export", "-o") ? 1 : 0;
}

int cmd_export(int argc, char **argv) {
  export_args a;
  int rc = parse_args(&a, argc, argv);
  if (rc >= 0) return rc;
  long long id;
  if (cli_parse_count("export", "RUN", a.run_text, 0, INT64_MAX, &id)) return 2;
  static const char *const phases[] = {"baseline", "during", "after", "all"};
  int phase = -1;
  for (int k = 0; k <= ENG_PHASE_COUNT; k++)
    if (!strcmp(a.phase_text, phases[k])) phase = k;
  if (phase < 0) {
    cli_error("export", "--phase: expected all, baseline, during or after, got '%s'",
              a.phase_text);
    return 2;
  }
  eng_config cfg;
  fmt_run_record rec;
  eng_lat_export *lat = malloc(sizeof *lat);
  if (!lat) {
    cli_error("export", "out of memory");
    return 1;
  }
  if ((rc = rerun(&a, id, phase, &cfg, &rec, lat))) {
    free(lat);
    return rc;
  }
  tel_hist fine = {.n = lat->n, .lower = 0, .le = lat->le_ms, .sum = lat->sum_ms,
                   .total = lat->total};
  double *counts = calloc(lat->n + 1, sizeof *counts), *bounds = NULL;
  size_t nb = 0;
  tel_hist out = {0};
  rc = 1;
  if (!counts) goto oom;
  memcpy(counts, lat->count, lat->n * sizeof *counts);
  fine.count = counts;
  int b = export_bounds(a.buckets, &fine, &bounds, &nb);
  if (b == -2) {
    cli_error("export", "--buckets: expected engine, N (1 to 128 per doubling) or ascending "
                        "bounds in seconds such as 0.005,0.01,0.1, got '%s'", a.buckets);
    rc = 2;
    goto done;
  }
  if (b || tel_hist_rebucket(&fine, bounds, nb, &out)) goto oom;
  rc = write_prom(&a, &cfg, &rec, id, &out);
  goto done;
oom:
  cli_error("export", "out of memory");
done:
  tel_hist_free(&out);
  free(bounds);
  free(counts);
  free(lat);
  return rc;
}
