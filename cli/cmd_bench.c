/*
 * cmd_bench.c — `stormsweep bench`: how fast the engine and the sweep
 * driver are on this machine, measured in one invocation so that figures
 * can be compared as ratios (these machines are noisy; absolute times vary
 * from one minute to the next, ratios measured side by side much less).
 *
 * Engine: single-thread wall time per run of the seed study's guarded and
 * naive policies (median and 10–90% spread over --runs seeds), nanoseconds
 * per simulated attempt and engine events per second. Sweep: the built-in
 * seed study (its replicates cut to --replicates) at 1 thread and at all
 * threads with output on, the share of wall time the HDF5 writer held the
 * writing lock, bytes per run in the file, and the peak memory of each sweep
 * (run in a child process, so its peak is its own) for two sweep sizes: it
 * must not grow with the number of runs. Decision (unless --no-decision: it
 * takes minutes): the whole seed study from nothing to a proven
 * recommendation (`run --refine`, then `recommend`) against today's fixed
 * sweep (`run`), both as child processes of this binary, side by side.
 */
/* wait4() (a child's own peak RSS) is a BSD/GNU call */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "commands.h"
#include "eng.h"
#include "options.h"
#include "swp.h"
#include "textsafe.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double quantile(double *v, int n, double q) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double pos = q * (n - 1);
  int i = (int)pos;
  return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[n - 1];
}

typedef struct engine_figures {
  double median_ms, p10_ms, p90_ms;
  double ns_per_attempt, events_per_s, attempts_per_run;
} engine_figures;

/* --set overrides for the engine part, applied after the policy. */
typedef struct overrides {
  int n;
  char **kv;
} overrides;

static int apply_overrides(eng_config *c, const overrides *o, char *err, size_t errlen) {
  for (int i = 0; i < o->n; i++) {
    const char *eq = strchr(o->kv[i], '=');
    char key[128];
    if (!eq || eq == o->kv[i]) {
      snprintf(err, errlen, "--set: expected KEY=VALUE, got '%s'", o->kv[i]);
      return -1;
    }
    snprintf(key, sizeof key, "%.*s", (int)(eq - o->kv[i]), o->kv[i]);
    if (eng_config_set(c, key, eq + 1, err, errlen)) return -1;
  }
  return eng_config_validate(c, err, errlen);
}

static int bench_engine(const char *policy, const overrides *o, int runs, engine_figures *f,
                        char *err, size_t errlen) {
  eng_config c;
  eng_config_defaults(&c);
  if (eng_config_set(&c, "policy", policy, err, errlen) || apply_overrides(&c, o, err, errlen))
    return -1;
  eng_run *r = eng_run_create();
  if (!r) return -1;
  double *ms = malloc((size_t)runs * sizeof *ms);
  double total_s = 0, attempts = 0, events = 0;
  eng_summary s;
  /* one warm-up run sizes the buffers, as in a sweep */
  eng_run_simulate(r, &c, 999, &s, err, errlen);
  for (int i = 0; i < runs; i++) {
    double t0 = now_s();
    if (eng_run_simulate(r, &c, (uint64_t)i + 1, &s, err, errlen)) {
      free(ms);
      eng_run_destroy(r);
      return -1;
    }
    double dt = now_s() - t0;
    ms[i] = dt * 1e3;
    total_s += dt;
    attempts += (double)s.attempts;
    events += (double)s.events;
  }
  f->ns_per_attempt = total_s * 1e9 / attempts;
  f->events_per_s = events / total_s;
  f->attempts_per_run = attempts / runs;
  f->median_ms = quantile(ms, runs, 0.5);
  f->p10_ms = quantile(ms, runs, 0.1);
  f->p90_ms = quantile(ms, runs, 0.9);
  free(ms);
  eng_run_destroy(r);
  return 0;
}

typedef struct sweep_figures {
  int threads;
  int64_t runs;
  double wall_s, runs_per_s, write_share, bytes_per_run;
  long peak_kb;
} sweep_figures;

/* Runs the seed study in a child process and reports through a pipe, so
 * the child's peak RSS is the sweep's own. */
static int bench_sweep(int threads, int replicates, const char *dir, sweep_figures *f) {
  int fd[2];
  if (pipe(fd)) return -1;
  char path[512];
  snprintf(path, sizeof path, "%s/bench-j%d-r%d.h5", dir, threads, replicates);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fd[0]);
    sweep_figures out = {.threads = threads};
    char err[512];
    swp_sweep sw;
    swp_sweep_init(&sw);
    char rep[64];
    snprintf(rep, sizeof rep, "replicates=%d", replicates);
    int rc = swp_sweep_parse_seed_study(&sw, err, sizeof err) ||
             swp_sweep_override_set(&sw, rep, err, sizeof err) ||
             swp_sweep_check(&sw, err, sizeof err);
    swp_h5out *o = NULL;
    if (!rc) rc = swp_h5out_create(&o, path, &sw, "stormsweep bench", 1, err, sizeof err);
    swp_driver_options opt = {.threads = threads};
    swp_driver_result res;
    if (!rc) rc = swp_sweep_execute(&sw, o, &opt, &res);
    if (o) {
      swp_timing tm = {.wall_s = res.wall_s, .threads = threads, .runs_done = res.totals.done,
                       .started = "", .finished = ""};
      swp_h5out_close(o, &tm, err, sizeof err);
    }
    if (!rc) {
      struct stat st;
      out.runs = res.totals.done;
      out.wall_s = res.wall_s;
      out.runs_per_s = res.totals.done / res.wall_s;
      out.write_share = res.write_s / res.wall_s;
      out.bytes_per_run = stat(path, &st) ? NAN : (double)st.st_size / (double)res.totals.done;
    } else {
      fprintf(stderr, "stormsweep bench: sweep failed: %s\n", rc ? err : res.first_error);
    }
    unlink(path);
    swp_sweep_free(&sw);
    ssize_t w = write(fd[1], &out, sizeof out);
    _exit(rc || w != (ssize_t)sizeof out ? 1 : 0);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], f, sizeof *f);
  close(fd[0]);
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) return -1;
  f->peak_kb = ru.ru_maxrss;
  return got == (ssize_t)sizeof *f && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* A figure rounded as the text table shows it (decimals places). */
static json_t *figure(double v, int decimals) {
  double scale = pow(10, decimals);
  return ana_json_number(isfinite(v) ? round(v * scale) / scale : v);
}

static json_t *engine_json(const engine_figures *f) {
  return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "median_ms", figure(f->median_ms, 4), "p10_ms",
                   figure(f->p10_ms, 4), "p90_ms", figure(f->p90_ms, 4), "ns_per_attempt",
                   figure(f->ns_per_attempt, 2), "events_per_s", figure(f->events_per_s, 0),
                   "attempts_per_run", figure(f->attempts_per_run, 0));
}

static json_t *engine_section(const engine_figures *g, const engine_figures *n, int runs) {
  return json_pack("{s:o,s:o,s:i}", "guarded", engine_json(g), "naive", engine_json(n),
                   "runs_per_policy", runs);
}

static void print_engine(const engine_figures *g, const engine_figures *n, int runs) {
  printf("engine, 1 thread, seed study, %d seeds each:\n", runs);
  printf("  %-8s %9s %17s %12s %14s %12s\n", "policy", "median", "10-90%", "ns/attempt",
         "events/s", "attempts");
  printf("  %-8s %7.2f ms %7.2f-%6.2f ms %12.1f %14.3g %12.0f\n", "guarded", g->median_ms,
         g->p10_ms, g->p90_ms, g->ns_per_attempt, g->events_per_s, g->attempts_per_run);
  printf("  %-8s %7.2f ms %7.2f-%6.2f ms %12.1f %14.3g %12.0f\n", "naive", n->median_ms,
         n->p10_ms, n->p90_ms, n->ns_per_attempt, n->events_per_s, n->attempts_per_run);
  printf("  naive / guarded time per run: %.2fx (attempts: %.2fx)\n",
         n->median_ms / g->median_ms, n->attempts_per_run / g->attempts_per_run);
}

/* Runs this binary with args (stdout to out_path, or /dev/null), timing it.
 * Returns its exit status, or -1. */
static int time_self(char *const args[], const char *out_path, double *wall_s) {
  double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, STDOUT_FILENO);
    if (null >= 0) dup2(null, STDERR_FILENO);
    execv("/proc/self/exe", args);
    _exit(127);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return -1;
  *wall_s = now_s() - t0;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

typedef struct decision_figures {
  double fixed_s, decision_s;
  int proven;
} decision_figures;

/* The fixed 4,800-run seed study, then the seed study to a decision. */
static int bench_decision(int threads, const char *dir, decision_figures *d) {
  char fixed[600], dec[600], out[600], j[16];
  snprintf(fixed, sizeof fixed, "%s/fixed.h5", dir);
  snprintf(dec, sizeof dec, "%s/decision.h5", dir);
  snprintf(out, sizeof out, "%s/recommend.txt", dir);
  snprintf(j, sizeof j, "%d", threads);
  char *run_fixed[] = {"stormsweep", "run", "-o", fixed, "-j", j, "-q", NULL};
  char *run_dec[] = {"stormsweep", "run", "-o", dec, "-j", j, "-q", "--refine", NULL};
  char *reco[] = {"stormsweep", "recommend", dec, NULL};
  double reco_s = 0;
  int rc = time_self(run_fixed, NULL, &d->fixed_s) != 0 ||
           time_self(run_dec, NULL, &d->decision_s) != 0 ||
           time_self(reco, out, &reco_s) != 0;
  d->decision_s += reco_s;
  d->proven = 0;
  FILE *f = fopen(out, "r");
  if (f) {
    char line[4096];
    while (fgets(line, sizeof line, f))
      if (strstr(line, "RECOMMENDED (proven)")) d->proven = 1;
    fclose(f);
  }
  unlink(fixed);
  unlink(dec);
  unlink(out);
  return rc ? -1 : 0;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep bench [--runs N] [--replicates R] [--threads N] [--json]\n"
          "                        [--engine-only] [--no-decision] [--set KEY=VALUE]...\n\n"
          "Measures, in one invocation, on the built-in seed study:\n"
          "  engine  wall time per run (1 thread) for the guarded and naive policies, median\n"
          "          and 10-90%% spread over N seeds (default 30); ns per simulated attempt;\n"
          "          engine events per second\n"
          "  sweep   the seed study with R replicates per point (default 4: 960 runs) at 1\n"
          "          thread and at N threads (default: all cores), output on: runs/s and\n"
          "          their ratio, share of wall time spent writing HDF5, bytes per run in\n"
          "          the file, peak memory; and the same at 4R replicates, to show peak\n"
          "          memory does not grow with the number of runs\n"
          "  decision the whole seed study from nothing to a proven recommendation (run\n"
          "          --refine, recommend: decision_s) and today's fixed 4,800-run sweep\n"
          "          (fixed_sweep_s), at N threads, side by side (minutes)\n"
          "Options take --opt VALUE or --opt=VALUE.\n"
          "  --engine-only        skip the sweeps\n"
          "  --no-decision        skip the decision timing\n"
          "  --set KEY=VALUE      change an engine setting for the engine part (repeatable),\n"
          "                       e.g. horizon_ms=100000 or load=2.8 for scaling checks\n"
          "Compare ratios measured in the same invocation: absolute times on a shared\n"
          "machine move from one minute to the next.\n");
}

int cmd_bench(int argc, char **argv) {
  int runs = 30, replicates = 4, threads = omp_get_max_threads(), json = 0, engine_only = 0,
      decision = 1;
  overrides ov = {0, NULL};
  char **kv = calloc((size_t)argc + 1, sizeof *kv);
  if (!kv) return 1;
  ov.kv = kv;
  enum { O_RUNS = 256, O_REPLICATES, O_THREADS, O_JSON, O_ENGINE_ONLY, O_NO_DECISION, O_SET };
  static const struct option longopts[] = {
      {"runs", required_argument, NULL, O_RUNS},
      {"replicates", required_argument, NULL, O_REPLICATES},
      {"threads", required_argument, NULL, O_THREADS},
      {"json", no_argument, NULL, O_JSON},
      {"engine-only", no_argument, NULL, O_ENGINE_ONLY},
      {"no-decision", no_argument, NULL, O_NO_DECISION},
      {"set", required_argument, NULL, O_SET},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int c;
  cli_opts_begin(argc, argv);
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
    case 'h': usage(stdout); free(kv); return 0;
    case O_JSON: json = 1; break;
    case O_ENGINE_ONLY: engine_only = 1; break;
    case O_NO_DECISION: decision = 0; break;
    case O_SET:
      if (!strchr(optarg, '=') || optarg[0] == '=') {
        fprintf(stderr, "stormsweep bench: --set needs KEY=VALUE, got '%s'\n", optarg);
        free(kv);
        return 2;
      }
      kv[ov.n++] = optarg;
      break;
    case O_RUNS:
    case O_REPLICATES:
    case O_THREADS: {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (!*optarg || *end || v < 1 || v > 100000) {
        fprintf(stderr, "stormsweep bench: --%s needs a whole number from 1 to 100000, got '%s'\n",
                c == O_RUNS ? "runs" : c == O_REPLICATES ? "replicates" : "threads", optarg);
        free(kv);
        return 2;
      }
      if (c == O_RUNS) runs = (int)v;
      else if (c == O_REPLICATES) replicates = (int)v;
      else threads = (int)v;
      break;
    }
    default: free(kv); return cli_opt_error("bench", c, argv, longopts);
    }
  }
  if (optind < argc) {
    fprintf(stderr, "stormsweep bench: unexpected argument '%s' (see 'stormsweep bench --help')\n",
            argv[optind]);
    free(kv);
    return 2;
  }
  engine_figures g, n;
  char err[512];
  if (!json) fprintf(stderr, "bench: engine, %d runs per policy...\n", runs);
  if (bench_engine("guarded", &ov, runs, &g, err, sizeof err) ||
      bench_engine("naive", &ov, runs, &n, err, sizeof err)) {
    fprintf(stderr, "stormsweep bench: %s\n", err);
    free(kv);
    return 2;
  }
  free(kv);
  if (engine_only) {
    if (json)
      ana_json_print(stdout, json_pack("{s:o}", "engine", engine_section(&g, &n, runs)), 2);
    else
      print_engine(&g, &n, runs);
    return 0;
  }
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char dir[512];
  snprintf(dir, sizeof dir, "%s/stormsweep-bench-XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    perror("stormsweep bench: mkdtemp");
    return 1;
  }
  sweep_figures s1, sn, sbig;
  if (!json) fprintf(stderr, "bench: sweeps of %d replicates at 1 and %d threads...\n", replicates, threads);
  int rc = bench_sweep(1, replicates, dir, &s1) || bench_sweep(threads, replicates, dir, &sn);
  if (!rc && !json) fprintf(stderr, "bench: a sweep of %d replicates for peak memory...\n", 4 * replicates);
  if (!rc) rc = bench_sweep(threads, 4 * replicates, dir, &sbig);
  decision_figures dec = {0, 0, 0};
  if (!rc && decision) {
    if (!json)
      fprintf(stderr, "bench: the fixed seed study, then the seed study to a decision...\n");
    rc = bench_decision(threads, dir, &dec);
  }
  rmdir(dir);
  if (rc) {
    fprintf(stderr, "stormsweep bench: sweep failed\n");
    return 1;
  }
  double speedup = sn.runs_per_s / s1.runs_per_s;
  if (json) {
    json_t *root = json_object();
    json_object_set_new(root, "engine", engine_section(&g, &n, runs));
    json_object_set_new(
        root, "sweep",
        json_pack("{s:I,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I}", "runs", (json_int_t)s1.runs,
                  "threads", threads, "runs_per_s_1_thread", figure(s1.runs_per_s, 2),
                  "runs_per_s_all_threads", figure(sn.runs_per_s, 2), "speedup",
                  figure(speedup, 3), "hdf5_write_share_1_thread", figure(s1.write_share, 4),
                  "hdf5_write_share_all_threads", figure(sn.write_share, 4), "bytes_per_run",
                  figure(sn.bytes_per_run, 0), "peak_rss_kb", (json_int_t)sn.peak_kb,
                  "peak_rss_kb_4x_runs", (json_int_t)sbig.peak_kb, "runs_4x",
                  (json_int_t)sbig.runs));
    if (decision) {
      json_object_set_new(root, "decision_s", figure(dec.decision_s, 2));
      json_object_set_new(root, "fixed_sweep_s", figure(dec.fixed_s, 2));
      json_object_set_new(root, "decision_ratio",
                          figure(dec.fixed_s > 0 ? dec.decision_s / dec.fixed_s : 0, 3));
      json_object_set_new(root, "decision_proven", json_boolean(dec.proven));
    }
    ana_json_print(stdout, root, 2);
    return 0;
  }
  printf("stormsweep bench (%d cores available)\n\n", omp_get_num_procs());
  print_engine(&g, &n, runs);
  printf("\n");
  printf("sweep: built-in seed study, %d replicates = %lld runs, output on:\n", replicates,
         (long long)s1.runs);
  printf("  %-10s %10s %10s %14s %14s %12s\n", "threads", "wall", "runs/s", "HDF5 write", "bytes/run",
         "peak RSS");
  printf("  %-10d %8.2f s %10.1f %13.1f%% %14.0f %9.1f MB\n", 1, s1.wall_s, s1.runs_per_s,
         100 * s1.write_share, s1.bytes_per_run, s1.peak_kb / 1024.0);
  printf("  %-10d %8.2f s %10.1f %13.1f%% %14.0f %9.1f MB\n", threads, sn.wall_s, sn.runs_per_s,
         100 * sn.write_share, sn.bytes_per_run, sn.peak_kb / 1024.0);
  printf("  speedup %d threads / 1 thread: %.2fx\n", threads, speedup);
  printf("  peak RSS at %lld runs: %.1f MB (%.2fx the %lld-run sweep's)\n", (long long)sbig.runs,
         sbig.peak_kb / 1024.0, (double)sbig.peak_kb / (double)sn.peak_kb, (long long)sn.runs);
  if (decision)
    printf("\ndecision: seed study from nothing to %s: %.1f s; the fixed sweep: %.1f s (%.2fx)\n",
           dec.proven ? "a proven recommendation" : "refine's answer (no point proven)",
           dec.decision_s, dec.fixed_s, dec.fixed_s > 0 ? dec.decision_s / dec.fixed_s : 0);
  return 0;
}
