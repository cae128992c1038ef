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
 * sweep (`run`), both as child processes of this binary, side by side, in
 * seconds and in runs.
 *
 * --compare OLD: the engine part only, this binary against another build
 * (typically the same code before a change), in rounds that alternate the two
 * (old-new, then new-old, ...): each round runs `OLD bench --engine-only
 * --json` as a child and this binary's own measurement, so both see the same
 * machine load. Reported: per policy the median over rounds of each side's
 * median time per run and ns per attempt, and the median (with range) of the
 * per-round ratios old / new.
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

#include "cli.h"
#include "eng.h"
#include "drv.h"
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
  /* one warm-up run sizes the buffers, as in a sweep (not for a single run:
   * scaling rows of 10^6 ticks would take twice as long) */
  if (runs > 1) eng_run_simulate(r, &c, 999, &s, err, errlen);
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
    /* a call graph's attempts at the services behind the front count too */
    for (int32_t k = 1; k < eng_run_services(r); k++) {
      eng_service_summary v;
      eng_run_service(r, k, &v);
      attempts += (double)v.attempts;
    }
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
  double wall_s, runs_per_s, write_share, wait_share, bytes_per_run, cpu_s;
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
    char err[512] = "";
    swp_sweep sw;
    swp_sweep_init(&sw);
    char rep[64];
    snprintf(rep, sizeof rep, "replicates=%d", replicates);
    int rc = swp_sweep_parse_seed_study(&sw, err, sizeof err) ||
             swp_sweep_override_set(&sw, rep, err, sizeof err) ||
             swp_sweep_check(&sw, err, sizeof err);
    fmt_out *o = NULL;
    if (!rc) rc = fmt_out_create(&o, path, &sw, "stormsweep bench", 1, err, sizeof err);
    drv_options opt = {.threads = threads};
    drv_result res = {0};
    int ran = !rc; /* the message is then the driver's (a refused -j, a failed run) */
    if (ran) rc = drv_sweep_execute(&sw, o, &opt, &res);
    if (o) {
      fmt_timing tm = {.wall_s = res.wall_s, .threads = threads, .runs_done = res.totals.done,
                       .started = "", .finished = ""};
      fmt_out_close(o, &tm, err, sizeof err);
    }
    if (!rc) {
      struct stat st;
      out.runs = res.totals.done;
      out.wall_s = res.wall_s;
      out.runs_per_s = res.totals.done / res.wall_s;
      out.write_share = res.write_s / res.wall_s;
      /* share of the threads' time spent queueing for the writer */
      out.wait_share = res.wait_s / (res.wall_s * res.threads);
      struct rusage ru;
      out.cpu_s = getrusage(RUSAGE_SELF, &ru)
                      ? NAN
                      : ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
                            ru.ru_stime.tv_usec * 1e-6;
      out.bytes_per_run = stat(path, &st) ? NAN : (double)st.st_size / (double)res.totals.done;
    } else {
      cli_error("bench", "sweep failed: %s", ran ? res.first_error : err);
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

/* n is NULL under --guarded-only. */
static json_t *engine_section(const engine_figures *g, const engine_figures *n, int runs,
                              long peak_kb) {
  json_t *o = json_pack("{s:o}", "guarded", engine_json(g));
  if (n) json_object_set_new(o, "naive", engine_json(n));
  json_object_set_new(o, "runs_per_policy", json_integer(runs));
  json_object_set_new(o, "peak_rss_kb", json_integer(peak_kb));
  return o;
}

static void print_engine(const engine_figures *g, const engine_figures *n, int runs,
                         long peak_kb) {
  printf("engine, 1 thread, seed study, %d seeds each:\n", runs);
  printf("  %-8s %9s %17s %12s %14s %12s\n", "policy", "median", "10-90%", "ns/attempt",
         "events/s", "attempts");
  printf("  %-8s %7.2f ms %7.2f-%6.2f ms %12.1f %14.3g %12.0f\n", "guarded", g->median_ms,
         g->p10_ms, g->p90_ms, g->ns_per_attempt, g->events_per_s, g->attempts_per_run);
  if (n) {
    printf("  %-8s %7.2f ms %7.2f-%6.2f ms %12.1f %14.3g %12.0f\n", "naive", n->median_ms,
           n->p10_ms, n->p90_ms, n->ns_per_attempt, n->events_per_s, n->attempts_per_run);
    printf("  naive / guarded time per run: %.2fx (attempts: %.2fx)\n",
           n->median_ms / g->median_ms, n->attempts_per_run / g->attempts_per_run);
  }
  printf("  peak RSS of this process after the engine runs: %.1f MB\n", peak_kb / 1024.0);
}

/* Runs this binary with args (stdout to out_path, or /dev/null), timing it:
 * wall time, and its CPU time (user + system; cpu_s may be NULL), which a
 * loaded machine does not inflate. Returns its exit status, or -1. */
static int time_self_cpu(char *const args[], const char *out_path, double *wall_s,
                         double *cpu_s) {
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
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) < 0) return -1;
  *wall_s = now_s() - t0;
  if (cpu_s)
    *cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
             ru.ru_stime.tv_usec * 1e-6;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}


/* The seed study's two ways to a decision (--set overrides of the run). */
#define BENCH_SEQ_FIRST "replicates=4"
#define BENCH_SEQ_UP_TO "screen_up_to=20"

typedef struct decision_side {
  double s;           /* run --refine, then recommend */
  double cpu_s;       /* their CPU time */
  int64_t runs;       /* runs in the file */
  int proven;         /* recommend names a proven point */
  char point[512];    /* "point 8: vnodes=10 ..." as recommend names it, or "" */
  double amp, lost;   /* its cost as recommend prints it (screening runs), or NAN */
} decision_side;

typedef struct decision_figures {
  decision_side fixed, seq;
} decision_figures;

/* Runs marked done in a result file (-1: unreadable). */
static int64_t runs_done(const char *path) {
  fmt_in *in = NULL;
  char err[512];
  if (fmt_in_open(&in, path, err, sizeof err)) return -1;
  int64_t n = fmt_in_info(in)->n_runs, done = -1;
  uint8_t *d = malloc((size_t)(n > 0 ? n : 1));
  if (d && !fmt_in_read_done(in, d, err, sizeof err)) {
    done = 0;
    for (int64_t r = 0; r < n; r++) done += d[r] != 0;
  }
  free(d);
  fmt_in_close(in);
  return done;
}

/* What recommend printed (out): whether a point is proven, which, its cost. */
static void recommended_read(const char *out, decision_side *d) {
  static const char tag[] = "RECOMMENDED (proven): ";
  d->proven = 0;
  d->point[0] = 0;
  d->amp = d->lost = NAN;
  FILE *f = fopen(out, "r");
  if (!f) return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    const char *p = strstr(line, tag), *c = strstr(line, "cost (screening runs): ");
    if (p && !d->proven) {
      d->proven = 1;
      p += strlen(tag);
      const char *end = strstr(p, " \xe2\x80\x94 "); /* " - " before the evidence */
      size_t n = end ? (size_t)(end - p) : strcspn(p, "\n");
      if (n >= sizeof d->point) n = sizeof d->point - 1;
      memcpy(d->point, p, n);
      d->point[n] = 0;
    } else if (c && d->proven && isnan(d->amp)) {
      if (sscanf(c, "cost (screening runs): retry amplification %lf; goodput during the fault "
                 "%lf", &d->amp, &d->lost) != 2)
        d->amp = d->lost = NAN;
    }
  }
  fclose(f);
}

/* One way to a decision: run --refine (with extra args), then recommend. */
static int decision_side_run(int threads, const char *dir, const char *name, int sequential,
                             decision_side *d) {
  char h5[600], out[600], j[16];
  snprintf(h5, sizeof h5, "%s/%s.h5", dir, name);
  snprintf(out, sizeof out, "%s/%s-recommend.txt", dir, name);
  snprintf(j, sizeof j, "%d", threads);
  char *run_fixed[] = {"stormsweep", "run", "-o", h5, "-j", j, "-q", "--refine", NULL};
  char *run_seq[] = {"stormsweep", "run", "-o", h5, "-j", j, "-q", "--refine", "--set",
                     BENCH_SEQ_FIRST, "--set", BENCH_SEQ_UP_TO, NULL};
  char *reco[] = {"stormsweep", "recommend", h5, NULL};
  double run_s = 0, reco_s = 0, run_cpu = 0, reco_cpu = 0;
  int rc = time_self_cpu(sequential ? run_seq : run_fixed, NULL, &run_s, &run_cpu) != 0 ||
           time_self_cpu(reco, out, &reco_s, &reco_cpu) != 0;
  d->s = run_s + reco_s;
  d->cpu_s = run_cpu + reco_cpu;
  d->runs = rc ? -1 : runs_done(h5);
  recommended_read(out, d);
  unlink(h5);
  unlink(out);
  return rc ? -1 : 0;
}

/* The seed study to a proven recommendation two ways, side by side: today's
 * fixed screening (20 replicates everywhere) and sequential screening (4,
 * then up to 20 where the rule of refine_plan.h says), each followed by refine and
 * recommend. */
static int bench_decision(int threads, const char *dir, decision_figures *d) {
  return decision_side_run(threads, dir, "fixed", 0, &d->fixed) ||
         decision_side_run(threads, dir, "sequential", 1, &d->seq);
}

static json_t *decision_json(const decision_side *d) {
  return json_pack("{s:o,s:o,s:I,s:b,s:s,s:o,s:o}", "seconds", figure(d->s, 2), "cpu_s",
                   figure(d->cpu_s, 2), "runs", (json_int_t)d->runs, "proven", d->proven,
                   "point", d->point,
                   "amplification", figure(d->amp, 3), "goodput_during", figure(d->lost, 3));
}

static void print_decision_side(const char *what, const decision_side *d) {
  printf("  %-44s %7.1f s (CPU %7.1f s) %7lld runs  %s", what, d->s, d->cpu_s,
         (long long)d->runs, d->proven ? d->point : "no point proven");
  if (d->proven && !isnan(d->amp)) printf(" (amplification %.3f)", d->amp);
  printf("\n");
}

/* ---- --compare ---- */

/* The number after "key": in text (our own bench --json output), or NAN. */
static double json_number(const char *text, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = text ? strstr(text, pat) : NULL;
  if (!p) return NAN;
  char *end;
  double v = strtod(p + strlen(pat), &end);
  return end == p + strlen(pat) ? NAN : v;
}

static int parse_policy(const char *json, const char *policy, engine_figures *f) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", policy);
  const char *p = strstr(json, pat);
  if (!p) return -1;
  f->median_ms = json_number(p, "median_ms");
  f->p10_ms = json_number(p, "p10_ms");
  f->p90_ms = json_number(p, "p90_ms");
  f->ns_per_attempt = json_number(p, "ns_per_attempt");
  f->events_per_s = json_number(p, "events_per_s");
  f->attempts_per_run = json_number(p, "attempts_per_run");
  return isnan(f->median_ms) || isnan(f->ns_per_attempt) ? -1 : 0;
}

/* `old bench --engine-only --json --runs N [--set KV]...` as a child: its
 * engine figures for both policies. */
static int old_engine(const char *old, int runs, const overrides *o, engine_figures *g,
                      engine_figures *n, char *err, size_t errlen) {
  char nruns[16];
  snprintf(nruns, sizeof nruns, "%d", runs);
  char **args = calloc((size_t)(2 * o->n + 8), sizeof *args);
  if (!args) return -1;
  int k = 0;
  args[k++] = (char *)old;
  args[k++] = "bench";
  args[k++] = "--engine-only";
  args[k++] = "--json";
  args[k++] = "--runs";
  args[k++] = nruns;
  for (int i = 0; i < o->n; i++) args[k++] = "--set", args[k++] = o->kv[i];
  int fd[2];
  if (pipe(fd)) {
    free(args);
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    free(args);
    return -1;
  }
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], STDOUT_FILENO);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    execv(old, args);
    _exit(127);
  }
  free(args);
  close(fd[1]);
  char buf[16384];
  size_t used = 0;
  ssize_t got;
  while (used + 1 < sizeof buf && (got = read(fd[0], buf + used, sizeof buf - 1 - used)) > 0)
    used += (size_t)got;
  buf[used] = 0;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    snprintf(err, errlen, "%s bench --engine-only --json failed (exit %d)", old,
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return -1;
  }
  if (parse_policy(buf, "guarded", g) || parse_policy(buf, "naive", n)) {
    snprintf(err, errlen, "%s bench --json: no engine figures in its output", old);
    return -1;
  }
  return 0;
}

enum { CMP_G_MS, CMP_G_NS, CMP_N_MS, CMP_N_NS, CMP_FIGURES };

static int bench_compare(const char *old, int runs, int rounds, const overrides *o, int json) {
  static const char *const names[CMP_FIGURES][2] = {
      {"guarded", "ms_per_run"}, {"guarded", "ns_per_attempt"},
      {"naive", "ms_per_run"}, {"naive", "ns_per_attempt"}};
  double *v = calloc((size_t)rounds * CMP_FIGURES * 3, sizeof *v); /* old, new, ratio */
  if (!v) return 1;
#define CMP_AT(side, fig, k) v[((size_t)(side) * CMP_FIGURES + (fig)) * (size_t)rounds + (k)]
  char err[512];
  double att_old[2] = {0, 0}, att_new[2] = {0, 0};
  for (int k = 0; k < rounds; k++) {
    engine_figures f[2][2]; /* [old/new][guarded/naive] */
    if (!json) fprintf(stderr, "bench --compare: round %d of %d\n", k + 1, rounds);
    for (int step = 0; step < 2; step++) {
      int side = (step + k) % 2; /* old first in even rounds, new first in odd ones */
      int rc = side == 0 ? old_engine(old, runs, o, &f[0][0], &f[0][1], err, sizeof err)
                         : bench_engine("guarded", o, runs, &f[1][0], err, sizeof err) ||
                               bench_engine("naive", o, runs, &f[1][1], err, sizeof err);
      if (rc) {
        fprintf(stderr, "stormsweep bench: --compare: %s\n", err);
        free(v);
        return 1;
      }
    }
    for (int side = 0; side < 2; side++)
      for (int p = 0; p < 2; p++) {
        CMP_AT(side, 2 * p, k) = f[side][p].median_ms;
        CMP_AT(side, 2 * p + 1, k) = f[side][p].ns_per_attempt;
      }
    for (int fig = 0; fig < CMP_FIGURES; fig++) CMP_AT(2, fig, k) = CMP_AT(0, fig, k) / CMP_AT(1, fig, k);
    for (int p = 0; p < 2; p++) {
      att_old[p] = f[0][p].attempts_per_run;
      att_new[p] = f[1][p].attempts_per_run;
    }
  }
  double med[3][CMP_FIGURES], lo[CMP_FIGURES], hi[CMP_FIGURES];
  for (int fig = 0; fig < CMP_FIGURES; fig++) {
    for (int side = 0; side < 3; side++) med[side][fig] = quantile(&CMP_AT(side, fig, 0), rounds, 0.5);
    lo[fig] = quantile(&CMP_AT(2, fig, 0), rounds, 0);
    hi[fig] = quantile(&CMP_AT(2, fig, 0), rounds, 1);
  }
#undef CMP_AT
  free(v);
  /* The same engine results on both sides: the attempts per run must agree
   * (printed with %.0f by both, so compare as printed). */
  char as[4][32];
  for (int p = 0; p < 2; p++) {
    snprintf(as[p], sizeof as[p], "%.0f", att_old[p]);
    snprintf(as[2 + p], sizeof as[2 + p], "%.0f", att_new[p]);
  }
  int same = !strcmp(as[0], as[2]) && !strcmp(as[1], as[3]);
  if (json) {
    printf("{\n  \"compare\": {\n    \"old\": \"%s\",\n    \"rounds\": %d,\n"
           "    \"runs_per_round\": %d,\n    \"same_attempts\": %s",
           old, rounds, runs, same ? "true" : "false");
    for (int fig = 0; fig < CMP_FIGURES; fig++)
      printf(",\n    \"%s_%s\": {\"old\": %.4f, \"new\": %.4f, \"ratio\": %.4f, "
             "\"ratio_min\": %.4f, \"ratio_max\": %.4f}",
             names[fig][0], names[fig][1], med[0][fig], med[1][fig], med[2][fig], lo[fig], hi[fig]);
    printf("\n  }\n}\n");
    return same ? 0 : 1;
  }
  printf("bench --compare: engine, 1 thread, seed study; %d rounds of %d runs per policy,\n"
         "old and new alternating (old = %s, new = this binary)\n",
         rounds, runs, old);
  printf("  %-8s %-15s %10s %10s %9s %17s\n", "policy", "figure (median)", "old", "new",
         "old/new", "range of old/new");
  for (int fig = 0; fig < CMP_FIGURES; fig++)
    printf("  %-8s %-15s %10.2f %10.2f %8.2fx %8.2f-%.2fx\n", names[fig][0],
           fig % 2 ? "ns/attempt" : "ms/run", med[0][fig], med[1][fig], med[2][fig], lo[fig],
           hi[fig]);
  printf("  attempts per run: old %.0f / %.0f, new %.0f / %.0f (guarded / naive): %s\n",
         att_old[0], att_old[1], att_new[0], att_new[1],
         same ? "the same results" : "DIFFERENT RESULTS");
  return same ? 0 : 1;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep bench [--runs N] [--replicates R] [--threads N] [--json]\n"
          "                        [--engine-only] [--guarded-only] [--no-decision]\n"
          "                        [--decision-only] [--writer N]\n"
          "                        [--set KEY=VALUE]...\n"
          "       stormsweep bench --compare OLD_BINARY [--rounds R] [--runs N] [--json]\n\n"
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
          "          --refine, then recommend) two ways, at N threads, side by side: with\n"
          "          sequential screening (--set replicates=4 --set screen_up_to=20:\n"
          "          decision_s) and with the fixed 20-replicate, 4,800-run screening\n"
          "          (fixed_sweep_s); the seconds, runs and recommended point of each\n"
          "          (minutes)\n"
          "Options take --opt VALUE or --opt=VALUE.\n"
          "  --engine-only        skip the sweeps\n"
          "  --guarded-only       the engine part for the guarded policy only (implies\n"
          "                       --engine-only; for long scaling rows). --runs 1 skips the\n"
          "                       warm-up run\n"
          "  --no-decision        skip the decision timing\n"
          "  --decision-only      the decision timing alone (no engine or sweep part)\n"
          "  --writer N           only the single HDF5 writer's throughput: N synthetic\n"
          "                       seed-study runs (8 simulated runs' encoded chunks, cycled)\n"
          "                       written as a sweep writes them, 1 thread, no simulating;\n"
          "                       runs/s, bytes/run, and how many simulating cores one\n"
          "                       writer keeps up with (pin it with taskset)\n"
          "  --set KEY=VALUE      change an engine setting for the engine part (repeatable),\n"
          "                       e.g. horizon_ms=100000 or load=2.8 for scaling checks\n"
          "  --compare OLD        the engine part only, against another stormsweep build: R\n"
          "                       rounds (default 7) alternating `OLD bench --engine-only\n"
          "                       --json` and this binary's own measurement; prints each\n"
          "                       side's median and the median ratio old/new (exit 1 if the\n"
          "                       two simulate different numbers of attempts)\n"
          "Compare ratios measured in the same invocation: absolute times on a shared\n"
          "machine move from one minute to the next.\n");
}

/* The decision figures into a bench --json object. */
static void decision_json_add(json_t *root, const decision_figures *dec) {
  json_object_set_new(root, "decision_s", figure(dec->seq.s, 2));
  json_object_set_new(root, "fixed_sweep_s", figure(dec->fixed.s, 2));
  json_object_set_new(root, "decision_ratio",
                      figure(dec->fixed.s > 0 ? dec->seq.s / dec->fixed.s : 0, 3));
  json_object_set_new(root, "decision_cpu_s", figure(dec->seq.cpu_s, 2));
  json_object_set_new(root, "fixed_sweep_cpu_s", figure(dec->fixed.cpu_s, 2));
  json_object_set_new(root, "decision_cpu_ratio",
                      figure(dec->fixed.cpu_s > 0 ? dec->seq.cpu_s / dec->fixed.cpu_s : 0, 3));
  json_object_set_new(root, "decision_runs", json_integer((json_int_t)dec->seq.runs));
  json_object_set_new(root, "fixed_sweep_runs", json_integer((json_int_t)dec->fixed.runs));
  json_object_set_new(root, "decision_proven", json_boolean(dec->seq.proven));
  json_object_set_new(root, "same_point", json_boolean(dec->seq.proven &&
                                                       !strcmp(dec->seq.point, dec->fixed.point)));
  json_object_set_new(root, "decision",
                      json_pack("{s:s,s:o,s:o}", "sequential",
                                "--set " BENCH_SEQ_FIRST " --set " BENCH_SEQ_UP_TO,
                                "fixed_sweep", decision_json(&dec->fixed), "sequential_sweep",
                                decision_json(&dec->seq)));
}

static void print_decision_text(int threads, const decision_figures *dec) {
  printf("\ndecision: the seed study from nothing to a proven recommendation (run --refine,\n"
         "recommend), %d threads:\n", threads);
  print_decision_side("fixed screening, 20 replicates (fixed_sweep_s)", &dec->fixed);
  print_decision_side("sequential, 4 then up to 20 (decision_s)", &dec->seq);
  printf("  decision_s / fixed_sweep_s: %.2fx (CPU time %.2fx, runs %.2fx); %s\n",
         dec->fixed.s > 0 ? dec->seq.s / dec->fixed.s : 0,
         dec->fixed.cpu_s > 0 ? dec->seq.cpu_s / dec->fixed.cpu_s : 0,
         dec->fixed.runs > 0 ? (double)dec->seq.runs / (double)dec->fixed.runs : 0,
         !dec->seq.proven ? "sequential screening proved no point"
         : !strcmp(dec->seq.point, dec->fixed.point) ? "the same point"
                                                   : "a different point");
}

static void report_decision(int json, int threads, const decision_figures *dec) {
  if (json) {
    json_t *root = json_object();
    decision_json_add(root, dec);
    ana_json_print(stdout, root, 2);
  } else {
    print_decision_text(threads, dec);
  }
}

/* The whole bench's figures: JSON or the text report. */
static void report_full(int json, int decision, int threads, int runs, int replicates,
                        const engine_figures *g, const engine_figures *n, long engine_kb,
                        const sweep_figures *s1p, const sweep_figures *snp,
                        const sweep_figures *sbigp, const decision_figures *decp) {
  sweep_figures s1 = *s1p, sn = *snp, sbig = *sbigp;
  decision_figures dec = *decp;
  double speedup = sn.runs_per_s / s1.runs_per_s;
  if (json) {
    json_t *root = json_object();
    json_object_set_new(root, "engine", engine_section(g, n, runs, engine_kb));
    json_object_set_new(
        root, "sweep",
        json_pack("{s:I,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I}", "runs",
                  (json_int_t)s1.runs, "threads", threads, "runs_per_s_1_thread",
                  figure(s1.runs_per_s, 2), "runs_per_s_all_threads", figure(sn.runs_per_s, 2),
                  "speedup", figure(speedup, 3), "hdf5_write_share_1_thread",
                  figure(s1.write_share, 4), "hdf5_write_share_all_threads",
                  figure(sn.write_share, 4), "writer_wait_share_all_threads",
                  figure(sn.wait_share, 4), "cpu_s_1_thread", figure(s1.cpu_s, 2),
                  "cpu_s_all_threads", figure(sn.cpu_s, 2), "bytes_per_run",
                  figure(sn.bytes_per_run, 0), "peak_rss_kb", (json_int_t)sn.peak_kb,
                  "peak_rss_kb_4x_runs", (json_int_t)sbig.peak_kb, "runs_4x",
                  (json_int_t)sbig.runs));
    if (decision) decision_json_add(root, &dec);
    ana_json_print(stdout, root, 2);
    return;
  }
  printf("stormsweep bench (%d cores available)\n\n", omp_get_num_procs());
  print_engine(g, n, runs, engine_kb);
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
  printf("  CPU time %.1f s at 1 thread, %.1f s at %d (the work itself: same runs); threads\n"
         "  waited for the writer %.1f%% of their time; on a loaded machine a wall-time\n"
         "  speedup shows the load, these do not\n",
         s1.cpu_s, sn.cpu_s, threads, 100 * sn.wait_share);
  printf("  peak RSS at %lld runs: %.1f MB (%.2fx the %lld-run sweep's)\n", (long long)sbig.runs,
         sbig.peak_kb / 1024.0, (double)sbig.peak_kb / (double)sn.peak_kb, (long long)sn.runs);
  if (decision) print_decision_text(threads, &dec);
}

/* bench --decision-only: the decision part alone, in its own directory. */
static int bench_decision_only(int threads, int json) {
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char dir[512];
  snprintf(dir, sizeof dir, "%s/stormsweep-bench-XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    perror("stormsweep bench: mkdtemp");
    return 1;
  }
  decision_figures dec;
  memset(&dec, 0, sizeof dec);
  if (!json)
    fprintf(stderr, "bench: the seed study to a decision, fixed then sequential screening...\n");
  int rc = bench_decision(threads, dir, &dec);
  rmdir(dir);
  if (rc) {
    fprintf(stderr, "stormsweep bench: the decision timing failed\n");
    return 1;
  }
  report_decision(json, threads, &dec);
  return 0;
}

/* bench --engine-only: the engine part's figures (n is NULL for --guarded-only). */
static void report_engine(int json, const engine_figures *g, const engine_figures *n, int runs,
                          long engine_kb) {
  if (json)
    ana_json_print(stdout, json_pack("{s:o}", "engine", engine_section(g, n, runs, engine_kb)),
                   2);
  else
    print_engine(g, n, runs, engine_kb);
}

/* The sweep part (1 and all threads, then 4x the replicates for peak memory) and the
 * decision timing, in a temporary directory of their own. Returns 1 after saying why. */
static int bench_sweeps(int threads, int replicates, int decision, int json, sweep_figures *s1,
                        sweep_figures *sn, sweep_figures *sbig, decision_figures *dec) {
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char dir[512];
  snprintf(dir, sizeof dir, "%s/stormsweep-bench-XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    perror("stormsweep bench: mkdtemp");
    return 1;
  }
  if (!json)
    fprintf(stderr, "bench: sweeps of %d replicates at 1 and %d threads...\n", replicates,
            threads);
  int rc = bench_sweep(1, replicates, dir, s1) || bench_sweep(threads, replicates, dir, sn);
  if (!rc && !json)
    fprintf(stderr, "bench: a sweep of %d replicates for peak memory...\n", 4 * replicates);
  if (!rc) rc = bench_sweep(threads, 4 * replicates, dir, sbig);
  memset(dec, 0, sizeof *dec);
  if (!rc && decision) {
    if (!json)
      fprintf(stderr, "bench: the fixed seed study, then the seed study to a decision...\n");
    rc = bench_decision(threads, dir, dec);
  }
  rmdir(dir);
  if (rc) {
    fprintf(stderr, "stormsweep bench: sweep failed\n");
    return 1;
  }
  return 0;
}

int cmd_bench(int argc, char **argv) {
  int runs = 30, replicates = 4, threads = omp_get_max_threads(), json = 0, engine_only = 0,
      decision = 1, rounds = 7, guarded_only = 0, decision_only = 0;
  long long writer_runs = 0;
  const char *compare = NULL;
  overrides ov = {0, NULL};
  char **kv = calloc((size_t)argc + 1, sizeof *kv);
  if (!kv) return 1;
  ov.kv = kv;
  enum { O_RUNS = 256, O_REPLICATES, O_THREADS, O_JSON, O_ENGINE_ONLY, O_NO_DECISION, O_SET,
         O_COMPARE, O_ROUNDS, O_GUARDED_ONLY, O_DECISION_ONLY,
         O_WRITER };
  static const struct option longopts[] = {
      {"runs", required_argument, NULL, O_RUNS},
      {"replicates", required_argument, NULL, O_REPLICATES},
      {"threads", required_argument, NULL, O_THREADS},
      {"json", no_argument, NULL, O_JSON},
      {"engine-only", no_argument, NULL, O_ENGINE_ONLY},
      {"no-decision", no_argument, NULL, O_NO_DECISION},
      {"set", required_argument, NULL, O_SET},
      {"compare", required_argument, NULL, O_COMPARE},
      {"rounds", required_argument, NULL, O_ROUNDS},
      {"guarded-only", no_argument, NULL, O_GUARDED_ONLY},
      {"decision-only", no_argument, NULL, O_DECISION_ONLY},
      {"writer", required_argument, NULL, O_WRITER},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int c;
  cli_opts_begin(argc, argv);
  while ((c = cli_getopt("bench", argc, argv, ":h", longopts)) != -1) {
    switch (c) {
    case 'h': usage(stdout); free(kv); return 0;
    case O_JSON: json = 1; break;
    case O_ENGINE_ONLY: engine_only = 1; break;
    case O_GUARDED_ONLY: guarded_only = engine_only = 1; break;
    case O_NO_DECISION: decision = 0; break;
    case O_DECISION_ONLY: decision_only = 1; break;
    case O_WRITER:
      if (cli_parse_count("bench", "--writer", optarg, 1, 100000000, &writer_runs)) {
        free(kv);
        return 2;
      }
      break;
    case O_SET:
      if (!strchr(optarg, '=') || optarg[0] == '=') {
        fprintf(stderr, "stormsweep bench: --set needs KEY=VALUE, got '%s'\n", optarg);
        free(kv);
        return 2;
      }
      kv[ov.n++] = optarg;
      break;
    case O_COMPARE:
      if (access(optarg, X_OK)) {
        fprintf(stderr, "stormsweep bench: --compare: %s is not an executable file\n", optarg);
        free(kv);
        return 2;
      }
      compare = optarg;
      break;
    case O_THREADS:
      if (cli_parse_threads("bench", "--threads", optarg, &threads)) {
        free(kv);
        return 2;
      }
      break;
    case O_RUNS:
    case O_REPLICATES:
    case O_ROUNDS: {
      long long v;
      const char *opt = c == O_RUNS ? "--runs" : c == O_REPLICATES ? "--replicates" : "--rounds";
      if (cli_parse_count("bench", opt, optarg, 1, 100000, &v)) {
        free(kv);
        return 2;
      }
      if (c == O_RUNS) runs = (int)v;
      else if (c == O_REPLICATES) replicates = (int)v;
      else rounds = (int)v;
      break;
    }
    default: free(kv); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "stormsweep bench: unexpected argument '%s' (see 'stormsweep bench --help')\n",
            argv[optind]);
    free(kv);
    return 2;
  }
  if (compare) {
    int rc = bench_compare(compare, runs, rounds, &ov, json);
    free(kv);
    return rc;
  }
  if (writer_runs > 0) {
    free(kv);
    return cli_bench_writer((int64_t)writer_runs, json);
  }
  if (decision_only) {
    free(kv);
    return bench_decision_only(threads, json);
  }
  engine_figures g, n;
  char err[512];
  if (!json) fprintf(stderr, "bench: engine, %d runs per policy...\n", runs);
  if (bench_engine("guarded", &ov, runs, &g, err, sizeof err) ||
      (!guarded_only && bench_engine("naive", &ov, runs, &n, err, sizeof err))) {
    fprintf(stderr, "stormsweep bench: %s\n", err);
    free(kv);
    return 2;
  }
  free(kv);
  /* The engine part's peak memory (the sweeps below run in children). */
  struct rusage self;
  long engine_kb = getrusage(RUSAGE_SELF, &self) ? -1 : self.ru_maxrss;
  if (engine_only) {
    report_engine(json, &g, guarded_only ? NULL : &n, runs, engine_kb);
    return 0;
  }
  sweep_figures s1, sn, sbig;
  decision_figures dec;
  if (bench_sweeps(threads, replicates, decision, json, &s1, &sn, &sbig, &dec)) return 1;
  report_full(json, decision, threads, runs, replicates, &g, &n, engine_kb, &s1, &sn, &sbig, &dec);
  return 0;
}
