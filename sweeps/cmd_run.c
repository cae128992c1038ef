/*
 * cmd_run.c — the `run` and `list` commands: load a sweep (a file or the
 * built-in seed study), apply --set/--grid overrides, validate every grid
 * point, then either list the grid or run it into one HDF5 file.
 *
 * Nothing is created until the whole sweep is valid and the output path is
 * free (or --force), so a bad sweep leaves no file behind. Ctrl-C stops
 * handing out new runs; the runs in flight finish and are written, and the
 * file is closed cleanly with complete = 0 (exit 130).
 */
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "swp.h"

/* Set by the SIGINT/SIGTERM handler: the only state a signal handler may
 * touch, hence the one file-scope variable. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* ---- shared option parsing ---- */

typedef struct run_args {
  const char *sweep_path;
  const char *output;
  int threads;
  int force, quiet, help, print_ini;
  const char **overrides; /* "--set", value, "--grid", value, ... in command-line order */
  int n_overrides;
} run_args;

/* Value of an option given as "--opt VALUE", "--opt=VALUE" or "-oVALUE". */
static const char *option_value(int argc, char **argv, int *i, const char *lng, const char *shrt,
                                int *matched) {
  const char *a = argv[*i];
  size_t n = strlen(lng);
  *matched = 1;
  if (!strcmp(a, lng) || (shrt && !strcmp(a, shrt))) {
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
  }
  if (!strncmp(a, lng, n) && a[n] == '=') return a + n + 1;
  if (shrt && !strncmp(a, shrt, 2) && a[2]) return a + 2;
  *matched = 0;
  return NULL;
}

/* Parses the options of run (is_run) or list. Returns 0, or 2 after printing
 * an error. */
static int args_parse(int argc, char **argv, int is_run, run_args *ra) {
  const char *cmd = is_run ? "run" : "list";
  memset(ra, 0, sizeof *ra);
  ra->output = "results.h5";
  ra->overrides = calloc((size_t)argc * 2 + 1, sizeof *ra->overrides);
  if (!ra->overrides) {
    fprintf(stderr, "stormsweep %s: out of memory\n", cmd);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int m;
    const char *v;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      ra->help = 1;
      return 0;
    }
    if ((v = option_value(argc, argv, &i, "--set", NULL, &m)) || m) {
      if (!v) goto missing;
      ra->overrides[ra->n_overrides++] = "--set";
      ra->overrides[ra->n_overrides++] = v;
      continue;
    }
    if ((v = option_value(argc, argv, &i, "--grid", NULL, &m)) || m) {
      if (!v) goto missing;
      ra->overrides[ra->n_overrides++] = "--grid";
      ra->overrides[ra->n_overrides++] = v;
      continue;
    }
    if (is_run) {
      if ((v = option_value(argc, argv, &i, "--output", "-o", &m)) || m) {
        if (!v || !*v) goto missing;
        ra->output = v;
        continue;
      }
      if ((v = option_value(argc, argv, &i, "--threads", "-j", &m)) || m) {
        if (!v) goto missing;
        char *end;
        long t = strtol(v, &end, 10);
        if (*end || end == v || t < 1 || t > 4096) {
          fprintf(stderr, "stormsweep run: %s: expected a thread count from 1 to 4096, got '%s'\n",
                  a, v);
          return 2;
        }
        ra->threads = (int)t;
        continue;
      }
      if (!strcmp(a, "--force") || !strcmp(a, "-f")) {
        ra->force = 1;
        continue;
      }
      if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
        ra->quiet = 1;
        continue;
      }
    } else if (!strcmp(a, "--ini")) {
      ra->print_ini = 1;
      continue;
    }
    if (a[0] == '-' && a[1]) {
      fprintf(stderr, "stormsweep %s: unknown option '%s' (see 'stormsweep %s --help')\n", cmd, a,
              cmd);
      return 2;
    }
    if (ra->sweep_path) {
      fprintf(stderr, "stormsweep %s: one sweep file at most (got '%s' and '%s')\n", cmd,
              ra->sweep_path, a);
      return 2;
    }
    ra->sweep_path = a;
    continue;
  missing:
    fprintf(stderr, "stormsweep %s: option '%s' needs a value\n", cmd, a);
    return 2;
  }
  return 0;
}

/* Loads the sweep, applies the overrides, validates. Returns 0 or 2. */
static int sweep_load(const run_args *ra, const char *cmd, swp_sweep *sw) {
  char err[1024];
  swp_sweep_init(sw);
  int rc = ra->sweep_path ? swp_sweep_parse_file(sw, ra->sweep_path, err, sizeof err)
                          : swp_sweep_parse_seed_study(sw, err, sizeof err);
  for (int i = 0; !rc && i < ra->n_overrides; i += 2)
    rc = !strcmp(ra->overrides[i], "--set")
             ? swp_sweep_override_set(sw, ra->overrides[i + 1], err, sizeof err)
             : swp_sweep_override_grid(sw, ra->overrides[i + 1], err, sizeof err);
  if (!rc) rc = swp_sweep_check(sw, err, sizeof err);
  if (rc) {
    fprintf(stderr, "stormsweep %s: %s\n", cmd, err);
    return 2;
  }
  return 0;
}

/* ---- run ---- */

static void run_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep run [SWEEP.ini] [-o FILE] [-j THREADS] [--set KEY=VALUE]...\n"
          "                      [--grid KEY=V1,V2,...]... [--force] [--quiet]\n\n"
          "Runs every (grid point, replicate) of a sweep in parallel and writes one HDF5 file.\n"
          "Without SWEEP.ini, runs the built-in seed study (sweeps/seed.ini).\n\n"
          "  -o, --output FILE    result file (default results.h5); never overwritten\n"
          "                       unless --force\n"
          "  -j, --threads N      OpenMP threads (default: OMP_NUM_THREADS or all cores)\n"
          "  --set KEY=VALUE      fix a setting for every run (removes a grid axis of KEY);\n"
          "                       also replicates=N, seed=N, name=..., description=...\n"
          "  --grid KEY=V1,V2     make KEY an axis (replaces the file's axis in place);\n"
          "                       values as in a sweep file: lists, lin(A,B,N), log(A,B,N), inf\n"
          "  -f, --force          overwrite an existing result file\n"
          "  -q, --quiet          no progress line and no summary\n"
          "  -h, --help           this help\n\n"
          "Results are identical for any thread count: each run's seed derives only from\n"
          "(master seed, point, replicate). Ctrl-C finishes the runs in flight and closes\n"
          "the file with complete = 0. Exit status: 0 every run written, 1 a run or the\n"
          "file failed, 2 bad usage or sweep, 130 interrupted.\n"
          "Sweep file grammar: 'stormsweep list --help'; file layout: README (HDF5 layout).\n");
}

typedef struct progress_state {
  int tty;
} progress_state;

static void format_duration(double s, char *buf, size_t len) {
  if (!isfinite(s) || s < 0) s = 0;
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static void progress_print(void *user, const swp_progress *p) {
  const progress_state *ps = user;
  if (!ps->tty) return;
  int64_t finished = p->done + p->failed;
  double rate = p->elapsed_s > 0 ? (double)finished / p->elapsed_s : 0;
  char eta[32];
  format_duration(rate > 0 ? (double)(p->total - finished) / rate : 0, eta, sizeof eta);
  fprintf(stderr, "\r\033[K%lld/%lld runs (%.0f%%)  %.0f runs/s  ETA %s  metastable %lld",
          (long long)finished, (long long)p->total,
          p->total ? 100.0 * (double)finished / (double)p->total : 100.0, rate, eta,
          (long long)p->outcomes[ENG_OUTCOME_METASTABLE]);
  if (p->failed) fprintf(stderr, "  failed %lld", (long long)p->failed);
  fflush(stderr);
}

/* "stormsweep run a 'b c'" for the file's command_line attribute. */
static char *command_line_join(int argc, char **argv) {
  size_t len = 16;
  for (int i = 0; i < argc; i++) len += 4 * strlen(argv[i]) + 3;
  char *s = malloc(len);
  if (!s) return NULL;
  strcpy(s, "stormsweep");
  char *p = s + strlen(s);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int plain = *a != 0;
    for (const char *c = a; *c; c++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+%@", *c))
        plain = 0;
    *p++ = ' ';
    if (plain) {
      strcpy(p, a);
      p += strlen(a);
      continue;
    }
    *p++ = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'') {
        memcpy(p, "'\\''", 4);
        p += 4;
      } else {
        *p++ = *c;
      }
    }
    *p++ = '\'';
  }
  *p = 0;
  return s;
}

int cmd_run(int argc, char **argv) {
  run_args ra;
  int rc = args_parse(argc, argv, 1, &ra);
  if (rc || ra.help) {
    if (ra.help) run_usage(stdout);
    free(ra.overrides);
    return rc;
  }
  swp_sweep sw;
  rc = sweep_load(&ra, "run", &sw);
  if (rc) goto done;

  struct stat st;
  if (!ra.force && stat(ra.output, &st) == 0) {
    fprintf(stderr, "stormsweep run: %s: already exists (use --force to overwrite)\n", ra.output);
    rc = 2;
    goto done;
  }
  if (stat(ra.output, &st) == 0) {
    struct stat in;
    if (S_ISDIR(st.st_mode)) {
      fprintf(stderr, "stormsweep run: %s: is a directory\n", ra.output);
      rc = 2;
      goto done;
    }
    if (ra.sweep_path && stat(ra.sweep_path, &in) == 0 && in.st_dev == st.st_dev &&
        in.st_ino == st.st_ino) {
      fprintf(stderr, "stormsweep run: %s: is the sweep file itself; choose another -o\n",
              ra.output);
      rc = 2;
      goto done;
    }
  }

  char err[1024];
  char *cmdline = command_line_join(argc, argv);
  swp_h5out *out;
  int created = swp_h5out_create(&out, ra.output, &sw, cmdline ? cmdline : "", ra.force, err,
                                 sizeof err);
  free(cmdline);
  if (created) {
    fprintf(stderr, "stormsweep run: %s\n", err);
    rc = 1;
    goto done;
  }

  progress_state ps = {!ra.quiet && isatty(STDERR_FILENO)};
  swp_driver_options opt = {0};
  opt.threads = ra.threads;
  opt.progress = ps.tty ? progress_print : NULL;
  opt.progress_user = &ps;
  opt.progress_interval_s = 0.2;
  opt.flush_interval_s = 2.0;
  opt.stop = &stop_requested;
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills at once */
  sigemptyset(&sa.sa_mask);
  stop_requested = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  char started[32], finished[32];
  swp_time_iso8601(started, sizeof started);
  swp_driver_result res;
  int exec_rc = swp_sweep_execute(&sw, out, &opt, &res);
  swp_time_iso8601(finished, sizeof finished);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (ps.tty) fprintf(stderr, "\r\033[K");

  swp_timing timing = {.wall_s = res.wall_s,
                       .threads = res.threads,
                       .runs_done = res.totals.done,
                       .started = started,
                       .finished = finished,
                       .simulate_s = res.simulate_s,
                       .encode_s = res.encode_s,
                       .write_s = res.write_s};
  int close_rc = swp_h5out_close(out, &timing, err, sizeof err);

  const swp_progress *t = &res.totals;
  if (!ra.quiet) {
    fprintf(stderr,
            "stormsweep run: %lld runs in %.1f s (%.0f runs/s, %d thread%s): %lld recovered "
            "(%lld pass the SLO), %lld slow, %lld metastable",
            (long long)t->done, res.wall_s, res.wall_s > 0 ? (double)t->done / res.wall_s : 0,
            res.threads, res.threads == 1 ? "" : "s", (long long)t->outcomes[ENG_OUTCOME_RECOVERED],
            (long long)t->passed,
            (long long)t->outcomes[ENG_OUTCOME_SLOW],
            (long long)t->outcomes[ENG_OUTCOME_METASTABLE]);
    if (t->failed) fprintf(stderr, ", %lld failed", (long long)t->failed);
    fprintf(stderr, " -> %s\n", ra.output);
  }
  if (res.first_error[0]) fprintf(stderr, "stormsweep run: %s\n", res.first_error);
  if (close_rc) fprintf(stderr, "stormsweep run: %s\n", err);
  if (res.stopped) {
    fprintf(stderr, "stormsweep run: interrupted: %lld of %lld runs written to %s (incomplete)\n",
            (long long)t->done, (long long)t->total, ra.output);
    rc = 130;
  } else {
    rc = exec_rc || close_rc ? 1 : 0;
  }
done:
  swp_sweep_free(&sw);
  free(ra.overrides);
  return rc;
}

/* ---- list ---- */

static void list_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep list [SWEEP.ini] [--set KEY=VALUE]... [--grid KEY=V1,V2,...]... "
          "[--ini]\n\n"
          "Prints a sweep's axes, every grid point and the run count, without running.\n"
          "Without SWEEP.ini, lists the built-in seed study.\n\n"
          "  --set, --grid   overrides, as for 'stormsweep run'\n"
          "  --ini           print the effective sweep (overrides folded in) as INI text\n"
          "  -h, --help      this help\n\n"
          "Sweep file grammar:\n"
          "  [sweep]      name, description, replicates (default %d), seed (default %d)\n"
          "  [scenario]   KEY = VALUE for any engine setting ('stormsweep sim --list-settings')\n"
          "  [grid]       KEY = V1, V2, ...   one axis per key, any setting; items are values,\n"
          "               lin(START, STOP, N) or log(START, STOP, N) (N points, ends included)\n"
          "Points are the cartesian product of the axes, the first axis varying slowest;\n"
          "run = point * replicates + replicate. Lines hold at most %d characters: continue\n"
          "a long list on indented lines. Comments start with ';' or '#' (inline: ' ;').\n",
          SWP_DEFAULT_REPLICATES, SWP_DEFAULT_SEED, SWP_MAX_LINE);
}

int cmd_list(int argc, char **argv) {
  run_args ra;
  int rc = args_parse(argc, argv, 0, &ra);
  if (rc || ra.help) {
    if (ra.help) list_usage(stdout);
    free(ra.overrides);
    return rc;
  }
  swp_sweep sw;
  rc = sweep_load(&ra, "list", &sw);
  if (rc) goto done;
  if (ra.print_ini) {
    char *text = swp_sweep_format(&sw);
    if (!text) {
      fprintf(stderr, "stormsweep list: out of memory\n");
      rc = 1;
      goto done;
    }
    fputs(text, stdout);
    free(text);
    goto done;
  }
  printf("sweep: %s (%s)\n", sw.name ? sw.name : "(unnamed)", sw.source);
  if (sw.description) printf("  %s\n", sw.description);
  printf("scenario:");
  if (!sw.n_settings) printf(" engine defaults");
  for (size_t i = 0; i < sw.n_settings; i++)
    printf("%s %s = %s", i ? "," : "", sw.settings[i].key, sw.settings[i].value);
  printf("\naxes (first varies slowest):%s\n", sw.n_axes ? "" : " none");
  size_t width[SWP_MAX_AXES];
  for (size_t a = 0; a < sw.n_axes; a++) {
    printf("  %-22s %3zu value%s: ", sw.axes[a].key, sw.axes[a].count,
           sw.axes[a].count == 1 ? " " : "s");
    width[a] = strlen(sw.axes[a].key);
    for (size_t v = 0; v < sw.axes[a].count; v++) {
      printf("%s%s", v ? ", " : "", sw.axes[a].values[v]);
      if (strlen(sw.axes[a].values[v]) > width[a]) width[a] = strlen(sw.axes[a].values[v]);
    }
    printf("\n");
  }
  printf("points: %lld x %lld replicates = %lld runs of %d ticks (%g ms each), master seed %llu\n",
         (long long)sw.n_points, (long long)sw.replicates, (long long)swp_sweep_runs(&sw),
         sw.ticks, sw.tick_ms, (unsigned long long)sw.seed);
  printf("\n%7s", "point");
  for (size_t a = 0; a < sw.n_axes; a++)
    printf("  %-*s", a + 1 < sw.n_axes ? (int)width[a] : 0, sw.axes[a].key);
  printf("\n");
  size_t idx[SWP_MAX_AXES];
  for (int64_t p = 0; p < sw.n_points; p++) {
    printf("%7lld", (long long)p);
    swp_sweep_point_indexes(&sw, p, idx);
    for (size_t a = 0; a < sw.n_axes; a++)
      printf("  %-*s", a + 1 < sw.n_axes ? (int)width[a] : 0, sw.axes[a].values[idx[a]]);
    printf("\n");
  }
done:
  swp_sweep_free(&sw);
  free(ra.overrides);
  return rc;
}
