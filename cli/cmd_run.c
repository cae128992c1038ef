/*
 * cmd_run.c — the `run` and `list` commands: load a sweep (a file or the
 * built-in seed study), apply --set/--grid overrides, validate every grid
 * point, then either list the grid or run it into one HDF5 file.
 *
 * Nothing is created until the whole sweep is valid, the output path is free
 * (or --force) and its file system has room for the estimated size, so a bad
 * sweep leaves no file behind. `--slice K/N` runs one slice of the runs into
 * a file of the full shape (`merge` joins the slices); `--resume` reopens an
 * interrupted file of the same sweep and runs only what it lacks. Ctrl-C
 * (SIGINT) or SIGTERM stops handing out new runs; the runs in flight finish
 * and are written, the file is closed with complete = 0, and the command to
 * finish it is printed (exit 128 + the signal: 130, 143). A failed write
 * (full disk) leaves the file as of its last commit, also resumable (exit 1).
 *
 * Built with STORMSWEEP_MPI and started by mpirun with several processes,
 * rank 0 does all of the above and writes the one file; the other ranks only
 * receive the effective sweep text and compute the runs rank 0 hands them
 * (mpi_driver.c).
 */
#include <errno.h>
#include <hdf5.h>
#include <libgen.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "client_import.h"
#include "cli.h"
#include "drv.h"
#include "refine.h"
#include "textsafe.h"

/* Conservative size of one run in the file, for the free-space check: the
 * seed study (19 metrics x 10,000 ticks) stores about 64 KB per run at
 * deflate level 3, a storm-heavy grid somewhat more; 200 KB per 10,000 ticks
 * leaves room for noisier metrics. Plus the /runs row and /timing. */
#define EST_BYTES_PER_TICK 20.0
#define EST_BYTES_PER_ROW 300.0
#define EST_BYTES_FIXED (1024.0 * 1024.0)

/* ---- shared option parsing ---- */

typedef struct run_args {
  const char *sweep_path;
  const char *output;
  int threads;
  int force, quiet, help, print_ini, resume, no_space_check, no_journal;
  int allow_dead;         /* --allow-dead-axes: a dead axis is a warning, not an error */
  int64_t slice_index, slice_count; /* slice_count 0: the whole sweep */
  double commit_s;
  const char *client;     /* --client FILE: applied before every override */
  unsigned client_flags;  /* --client-lenient: SWP_CLIENT_LENIENT */
  const char **overrides; /* "--set", value, "--grid", value, ... in command-line order */
  int n_overrides;
  int refine;             /* --refine, or a refine option: refine the file afterwards */
  ana_refine_opts ro;
} run_args;

/* Parses the options of run (is_run) or list. Returns 0, or 2 after printing
 * an error. */
static int args_parse(int argc, char **argv, int is_run, run_args *ra) {
  enum { O_SET = 256, O_GRID, O_CLIENT, O_SLICE, O_COMMIT, O_RESUME, O_NO_SPACE, O_NO_JOURNAL,
         O_INI, O_REFINE, O_LENIENT, O_ALLOW_DEAD };
  static const struct option run_opts[] = {
      {"set", required_argument, NULL, O_SET},       {"grid", required_argument, NULL, O_GRID},
      {"client", required_argument, NULL, O_CLIENT}, {"output", required_argument, NULL, 'o'},
      {"client-lenient", no_argument, NULL, O_LENIENT},
      {"threads", required_argument, NULL, 'j'},     {"slice", required_argument, NULL, O_SLICE},
      {"commit-interval", required_argument, NULL, O_COMMIT},
      {"force", no_argument, NULL, 'f'},             {"resume", no_argument, NULL, O_RESUME},
      {"no-space-check", no_argument, NULL, O_NO_SPACE},
      {"no-journal", no_argument, NULL, O_NO_JOURNAL}, {"quiet", no_argument, NULL, 'q'},
      {"refine", no_argument, NULL, O_REFINE},       CLI_REFINE_LONGOPTS,
      {"allow-dead-axes", no_argument, NULL, O_ALLOW_DEAD},
      {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0}};
  static const struct option list_opts[] = {
      {"set", required_argument, NULL, O_SET},       {"grid", required_argument, NULL, O_GRID},
      {"client", required_argument, NULL, O_CLIENT}, {"ini", no_argument, NULL, O_INI},
      {"client-lenient", no_argument, NULL, O_LENIENT},
      {"allow-dead-axes", no_argument, NULL, O_ALLOW_DEAD},
      {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0}};
  const char *cmd = is_run ? "run" : "list";
  memset(ra, 0, sizeof *ra);
  ra->output = "results.h5";
  ra->commit_s = 2.0;
  ana_refine_opts_init(&ra->ro);
  ra->overrides = calloc((size_t)argc * 2 + 1, sizeof *ra->overrides);
  if (!ra->overrides) {
    cli_error(cmd, "out of memory");
    return 2;
  }
  int c;
  cli_opts_begin(argc, argv);
  while ((c = cli_getopt(cmd, argc, argv, is_run ? ":o:j:fqh" : ":h", is_run ? run_opts : list_opts)) != -1) {
    int r = is_run ? cli_refine_opt(cmd, c, optarg, &ra->ro) : 0;
    if (r < 0) return 2;
    if (r) {
      ra->refine = 1;
      continue;
    }
    switch (c) {
    case O_SET:
    case O_GRID:
      ra->overrides[ra->n_overrides++] = c == O_SET ? "--set" : "--grid";
      ra->overrides[ra->n_overrides++] = optarg;
      break;
    case O_CLIENT:
      if (ra->client) {
        cli_error(cmd, "one --client FILE at most");
        return 2;
      }
      if (!*optarg) {
        cli_error(cmd, "--client needs a value");
        return 2;
      }
      ra->client = optarg;
      break;
    case O_LENIENT: ra->client_flags |= SWP_CLIENT_LENIENT; break;
    case 'o':
      if (!*optarg) {
        cli_error(cmd, "-o needs a value");
        return 2;
      }
      ra->output = optarg;
      break;
    case 'j':
      if (cli_parse_threads(cmd, "-j", optarg, &ra->threads)) return 2;
      break;
    case O_SLICE: {
      char err[256];
      if (swp_slice_parse(optarg, &ra->slice_index, &ra->slice_count, err, sizeof err)) {
        cli_error(cmd, "--slice: %s", err);
        return 2;
      }
      if (ra->slice_count == 1) ra->slice_count = 0; /* 0/1 is the whole sweep */
      break;
    }
    case O_COMMIT:
      if (cli_parse_number(cmd, "--commit-interval", optarg, 0.01, 86400, &ra->commit_s))
        return 2;
      break;
    case 'f': ra->force = 1; break;
    case O_RESUME: ra->resume = 1; break;
    case O_NO_SPACE: ra->no_space_check = 1; break;
    case O_NO_JOURNAL: ra->no_journal = 1; break;
    case 'q': ra->quiet = ra->ro.quiet = 1; break;
    case O_INI: ra->print_ini = 1; break;
    case O_REFINE: ra->refine = 1; break;
    case O_ALLOW_DEAD: ra->allow_dead = 1; break;
    case 'h': ra->help = 1; return 0;
    default: return 2;
    }
  }
  if (optind < argc) ra->sweep_path = argv[optind++];
  if (optind < argc) {
    cli_error(cmd, "one sweep file at most (got '%s' and '%s')", ra->sweep_path, argv[optind]);
    return 2;
  }
  if (ra->client_flags && !ra->client) {
    cli_error(cmd, "--client-lenient goes with --client FILE");
    return 2;
  }
  if (is_run && ra->resume && ra->force) {
    cli_error(cmd, "--resume continues the file and --force replaces it: choose one");
    return 2;
  }
  ra->ro.threads = ra->threads;
  return 0;
}

/* The sweep of run or list (cli_sweep_load). */
static int sweep_load(const run_args *ra, const char *cmd, int loud, swp_sweep *sw) {
  cli_sweep_spec spec = {.path = ra->sweep_path,
                         .client = ra->client,
                         .client_flags = ra->client_flags,
                         .loud = loud,
                         .overrides = ra->overrides,
                         .n_overrides = ra->n_overrides,
                         .allow_dead = ra->allow_dead};
  return cli_sweep_load(cmd, &spec, sw);
}

/* ---- run ---- */

static void run_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep run [SWEEP.ini] [-o FILE] [-j THREADS] [--client FILE]\n"
          "                      [--client-lenient] [--set KEY=VALUE]...\n"
          "                      [--grid KEY=V1,V2,...]... [--slice K/N] [--resume]\n"
          "                      [--commit-interval S] [--force] [--no-space-check]\n"
          "                      [--quiet] [--refine [REFINE OPTIONS]]\n\n"
          "Runs every (grid point, replicate) of a sweep in parallel and writes one HDF5 file.\n"
          "Without SWEEP.ini, runs the built-in seed study (sweeps/seed.ini).\n\n"
          "  -o, --output FILE    result file (default results.h5); never overwritten\n"
          "                       unless --force\n"
          "  -j, --threads N      OpenMP threads (default: OMP_NUM_THREADS or all cores)\n"
          "  --set KEY=VALUE      fix a setting for every run (removes a grid axis of KEY);\n"
          "                       also any [sweep] key: replicates=N, seed=N, crn=on|off, ...\n"
          "  --client FILE        the retry policy you ship (gRPC service config or Envoy\n"
          "                       retry_policy; docs/client-import.md) as [scenario]\n"
          "                       settings: before --set and the grid axes; A->B=FILE:\n"
          "                       the call edge A->B's (docs/call-graphs.md)\n"
          "  --client-lenient     an unknown field in the --client file is a note, not an\n"
          "                       error\n"
          "  --grid KEY=V1,V2     make KEY an axis (replaces the file's axis in place);\n"
          "                       values as in a sweep file: lists, lin(A,B,N), log(A,B,N), inf\n"
          "  --slice K/N          run only slice K of N (K from 0 to N-1, e.g. a batch array\n"
          "                       index) into a file of the full shape; 'stormsweep merge'\n"
          "                       joins the N files into the file one run would have written\n"
          "  --resume             finish an interrupted FILE: check it holds this same sweep\n"
          "                       (and slice), then run only the runs it lacks\n"
          "  --commit-interval S  commit finished runs to the file every S seconds (default\n"
          "                       2): a kill loses at most the runs since the last commit\n"
          "  -f, --force          overwrite an existing result file\n"
          "  --no-space-check     skip the check that the output's file system has room for\n"
          "                       the estimated size (about 20 bytes per tick per run, twice\n"
          "                       while the journal exists)\n"
          "  --allow-dead-axes    run an axis that cannot change any run (its setting is\n"
          "                       ignored under the others, e.g. budget_ratio with a\n"
          "                       retry_limiter other than token_bucket), with a warning;\n"
          "                       without it such a sweep is refused\n"
          "  --no-journal         write no FILE.journal (a new FILE only): half the disk space\n"
          "                       while running, but a power cut may then lose committed runs\n"
          "                       (docs/durability.md)\n"
          "  -q, --quiet          no progress line and no summary\n"
          "  --refine             then refine the file to a decision ('stormsweep refine'; so\n"
          "                       does refine = on in [sweep], or any of the refine options\n"
          "                       --min-pass, --max-metastable, --alpha, --max-runs,\n"
          "                       --parallel-candidates, --slo, --ticks: see\n"
          "                       'stormsweep refine --help')\n"
          "  -h, --help           this help\n\n"
          "Results are identical for any thread count, process count, slicing or resumption:\n"
          "each run's seed derives only from (master seed, point, replicate). Ctrl-C or\n"
          "SIGTERM finishes the runs in flight, closes the file with complete = 0 and prints\n"
          "the command that finishes it; so does a failed write (full disk).\n"
#ifdef STORMSWEEP_MPI
          "MPI: built with MPI; 'mpirun -np N stormsweep run ...' spreads the runs over N\n"
          "processes (each with its OpenMP threads) and rank 0 writes the one file.\n"
#endif
          "Exit status: 0 every run written (or --resume of a complete file), 1 a run or the\n"
          "file failed, 2 bad usage, sweep or file, 130 interrupted (143 on SIGTERM).\n"
          "Sweep file grammar: 'stormsweep list --help'; file layout: docs/file-format.md.\n");
}

/* The command that finishes an interrupted file: this one without --force
 * and --resume, plus --resume (under "mpirun -np N" when it ran so). */
static char *resume_command(int argc, char **argv, int ranks) {
  char **v = calloc((size_t)argc + 2, sizeof *v);
  if (!v) return NULL;
  int n = 0;
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "--force") && strcmp(argv[i], "-f") && strcmp(argv[i], "--resume"))
      v[n++] = argv[i];
  v[n++] = "--resume";
  char *cmd = cli_command_line(n, v);
  free(v);
  if (cmd && ranks > 1) {
    char *m = malloc(strlen(cmd) + 32);
    if (m) sprintf(m, "mpirun -np %d %s", ranks, cmd);
    free(cmd);
    cmd = m;
  }
  return cmd;
}

/* Refuses (exit 2, after a message) when the file system of output cannot
 * take about `runs` more runs; reclaim is the size of a file --force will
 * replace. A file system that cannot be asked is not checked. */
static int space_check(const char *output, const swp_sweep *sw, int64_t runs, int new_file,
                       double reclaim, int journal) {
  char *copy = strdup(output);
  if (!copy) return 0;
  struct statvfs vfs;
  const char *dir = dirname(copy);
  int asked = statvfs(dir, &vfs) == 0;
  if (!asked) {
    free(copy);
    return 0;
  }
  double per_run = EST_BYTES_PER_TICK * sw->ticks;
  /* Twice: the file and its journal (docs/durability.md) hold the same
   * compressed ticks until the sweep is finished. */
  double need = (journal ? 2.0 : 1.0) * (double)runs * per_run;
  if (new_file) need += EST_BYTES_FIXED + (double)swp_sweep_runs(sw) * EST_BYTES_PER_ROW;
  double avail = (double)vfs.f_bavail * (double)vfs.f_frsize + reclaim;
  int rc = 0;
  if (need > avail) {
    char n[32], a[32], p[32];
    cli_bytes_text(need, n, sizeof n);
    cli_bytes_text(avail < 0 ? 0 : avail, a, sizeof a);
    cli_bytes_text(per_run, p, sizeof p);
    fprintf(stderr,
            "stormsweep run: not enough disk space for %s (in %s): %lld runs need about %s "
            "(~%s per run of %d ticks, a conservative estimate%s) "
            "and %s is free. Free some "
            "space, write elsewhere (-o), or pass --no-space-check if the estimate is wrong.\n",
            output, dir, (long long)runs, n, p, sw->ticks,
            journal ? ", twice: the file and its journal" : "", a);
    rc = 2;
  }
  free(copy);
  return rc;
}

/* Everything rank 0 prepares before the runs start. */
typedef struct run_state {
  run_args ra;
  char **av;             /* argv, to parse (getopt reorders it); argv itself stays as typed */
  int args_ok, sweep_ok;
  swp_sweep sw;
  fmt_out *out;
  swp_subset subset;
  int64_t to_run;        /* runs this session will do */
  int64_t selected;    /* runs of the slice (or sweep) */
} run_state;

static void run_state_free(run_state *st) {
  if (st->out) fmt_out_close(st->out, NULL, NULL, 0);
  st->out = NULL;
  if (st->sweep_ok) swp_sweep_free(&st->sw);
  free(st->ra.overrides);
  free(st->av);
}

/* Parses, loads, checks the output and creates or reopens it. Returns -1 to
 * go on, or the exit status. */
static int run_setup(run_state *st, int argc, char **argv, int ranks) {
  memset(st, 0, sizeof *st);
  run_args *ra = &st->ra;
  st->av = cli_argv_copy(argc, argv);
  if (!st->av) {
    cli_error("run", "out of memory");
    return 1;
  }
  int rc = args_parse(argc, st->av, 1, ra);
  if (rc || ra->help) {
    if (ra->help) run_usage(stdout);
    return rc;
  }
  if (ranks > 1 && ra->refine) {
    /* The MPI workers derive (point, replicate) from the run id; appended
     * rows are not in that protocol yet. */
    cli_error("run", "--refine does not run under MPI yet: run the sweep under mpirun without "
              "--refine, then 'stormsweep refine %s' without mpirun (the file is the same)",
              ra->output);
    return 2;
  }
  rc = sweep_load(ra, "run", !ra->quiet, &st->sw);
  if (rc) {
    swp_sweep_free(&st->sw);
    return rc;
  }
  st->sweep_ok = 1;
  swp_sweep *sw = &st->sw;
  /* Before the output exists: a -j whose runs the memory cannot hold is
   * refused whole (the driver checks again, for every caller). */
  char merr[1024];
  if (drv_sweep_memory_check(sw, ra->threads, swp_sweep_runs(sw), merr, sizeof merr)) {
    cli_error_text("run", merr);
    return 2;
  }

  struct stat out_st;
  int exists = stat(ra->output, &out_st) == 0;
  if (exists && S_ISDIR(out_st.st_mode)) {
    fprintf(stderr, "stormsweep run: %s: is a directory\n", ra->output);
    return 2;
  }
  struct stat in;
  if (exists && ra->sweep_path && stat(ra->sweep_path, &in) == 0 && in.st_dev == out_st.st_dev &&
      in.st_ino == out_st.st_ino) {
    fprintf(stderr, "stormsweep run: %s: is the sweep file itself; choose another -o\n",
            ra->output);
    return 2;
  }
  if (exists && !ra->force && !ra->resume) {
    fprintf(stderr,
            "stormsweep run: %s: already exists (use --force to overwrite); --resume "
            "finishes an interrupted run of the same sweep\n",
            ra->output);
    return 2;
  }

  st->subset.slice_index = ra->slice_index;
  st->subset.slice_count = ra->slice_count;
  swp_subset slice_only = st->subset;
  st->selected = swp_subset_count(sw, &slice_only);
  char err[1024];
  if (ra->resume) {
    if (fmt_out_open_resume(&st->out, ra->output, sw, ra->slice_index, ra->slice_count, err,
                              sizeof err)) {
      fprintf(stderr, "stormsweep run: %s\n", err);
      /* Another writer is a failure of the moment, not of the usage. */
      return strstr(err, "another stormsweep process") ? 1 : 2;
    }
    st->subset.done = fmt_out_done(st->out);
    if (fmt_out_note(st->out)[0])
      fprintf(stderr, "stormsweep run: %s\n", fmt_out_note(st->out));
  }
  st->to_run = swp_subset_count(sw, &st->subset);
  if (ra->resume && st->to_run == 0) {
    /* Closing marks a whole-sweep file complete if it was cut off after
     * its last commit; nothing else is written. */
    rc = fmt_out_close(st->out, NULL, err, sizeof err);
    st->out = NULL;
    if (rc) {
      fprintf(stderr, "stormsweep run: %s\n", err);
      return 1;
    }
    if (!ra->quiet) {
      if (ra->slice_count)
        fprintf(stderr, "stormsweep run: %s: already complete: it holds all %lld runs of slice "
                        "%lld/%lld; nothing to do\n",
                ra->output, (long long)st->selected, (long long)ra->slice_index,
                (long long)ra->slice_count);
      else
        fprintf(stderr, "stormsweep run: %s: already complete: it holds all %lld runs; nothing "
                        "to do\n",
                ra->output, (long long)st->selected);
    }
    return 0;
  }
  if (!ra->no_space_check) {
    rc = space_check(ra->output, sw, st->to_run, !ra->resume,
                     exists && ra->force && S_ISREG(out_st.st_mode) ? (double)out_st.st_size : 0,
                     !(ra->no_journal && !ra->resume));
    if (rc) return rc;
  }
  if (!ra->resume) {
    char *cmdline = cli_command_line(argc, argv);
    int created = fmt_out_create_flags(
        &st->out, ra->output, sw, cmdline ? cmdline : "",
        (ra->force ? FMT_OUT_FORCE : 0) | (ra->no_journal ? FMT_OUT_NO_JOURNAL : 0), err,
        sizeof err);
    free(cmdline);
    if (!created && ra->slice_count)
      created = fmt_out_set_slice(st->out, ra->slice_index, ra->slice_count, err, sizeof err);
    if (created) {
      fprintf(stderr, "stormsweep run: %s\n", err);
      if (st->out) {
        fmt_out_close(st->out, NULL, NULL, 0);
        st->out = NULL;
        unlink(ra->output);
      }
      return 1;
    }
  }
  return -1;
}

#ifdef STORMSWEEP_MPI
/* Rank 0 tells the others whether to run (status -1) or exit with status,
 * and with which sweep and thread count. */
static int workers_release(int ranks, int status, const swp_sweep *sw, int threads) {
  if (ranks <= 1) return status;
  char *text = status < 0 ? swp_sweep_format(sw) : NULL;
  if (status < 0 && !text) {
    fprintf(stderr, "stormsweep run: out of memory\n");
    status = 1;
  }
  int64_t head[3] = {status, threads, text ? (int64_t)strlen(text) + 1 : 0};
  MPI_Bcast(head, 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (head[2]) MPI_Bcast(text, (int)head[2], MPI_CHAR, 0, MPI_COMM_WORLD);
  free(text);
  return status;
}

/* Ranks 1..n-1: wait for rank 0, then compute what it hands out. */
static int run_worker(int rank) {
  int64_t head[3];
  MPI_Bcast(head, 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (head[0] >= 0) return (int)head[0];
  char *text = malloc((size_t)head[2]);
  if (text) MPI_Bcast(text, (int)head[2], MPI_CHAR, 0, MPI_COMM_WORLD);
  char err[1024] = "", source[64];
  snprintf(source, sizeof source, "sweep text from rank 0 (rank %d)", rank);
  swp_sweep sw;
  swp_sweep_init(&sw);
  int ok = text && !swp_sweep_parse_string(&sw, text, source, err, sizeof err) &&
           !swp_sweep_check(&sw, err, sizeof err);
  if (!text) snprintf(err, sizeof err, "rank %d: out of memory", rank);
  free(text);

  drv_options opt = {0};
  opt.threads = (int)head[1];
  opt.stop = cli_stop_install();
  int rc = drv_mpi_execute_worker(ok ? &sw : NULL, &opt, MPI_COMM_WORLD, err, sizeof err);
  swp_sweep_free(&sw);
  return rc ? 1 : 0;
}
#endif

/* After a sweep that succeeded (rc 0): refine the file when asked
 * (--refine, a refine option, or [sweep] refine = on). */
static int then_refine(run_state *st, int rc, int ranks) {
  run_args *ra = &st->ra;
  if (rc || ra->help || !(ra->refine || (st->sweep_ok && st->sw.refine))) return rc;
  if (ranks > 1) {
    /* refine = on in the sweep, found after an MPI run: only say it. */
    cli_error("run", "refine = on is not done under MPI yet: refine %s without mpirun "
              "('stormsweep refine %s')", ra->output, ra->output);
    return 0;
  }
  ra->ro.path = ra->output;
  return cli_refine_run(&ra->ro);
}

static int run_root(int argc, char **argv, int ranks) {
  run_state st;
  int rc = run_setup(&st, argc, argv, ranks);
#ifdef STORMSWEEP_MPI
  rc = workers_release(ranks, rc, &st.sw, st.ra.threads);
#endif
  if (rc >= 0) {
    rc = then_refine(&st, rc, ranks);
    run_state_free(&st);
    return rc;
  }
  run_args *ra = &st.ra;
  int tty = cli_progress_wanted(ra->quiet);
  drv_options opt = {0};
  opt.threads = ra->threads;
  opt.progress = tty ? cli_progress : NULL;
  opt.progress_interval_s = 0.2;
  opt.flush_interval_s = ra->commit_s;
  opt.stop = cli_stop_install();
  opt.subset = &st.subset;

  char started[32], finished[32];
  fmt_time_iso8601(started, sizeof started);
  drv_result res;
  int exec_rc;
#ifdef STORMSWEEP_MPI
  if (ranks > 1)
    exec_rc = drv_mpi_execute_root(&st.sw, st.out, &opt, &res, MPI_COMM_WORLD);
  else
#endif
    exec_rc = drv_sweep_execute(&st.sw, st.out, &opt, &res);
  fmt_time_iso8601(finished, sizeof finished);
  int sig = cli_stop_signal();
  if (tty) cli_progress_end();

  char *cmdline = ra->resume ? cli_command_line(argc, argv) : NULL;
  fmt_timing timing = {.wall_s = res.wall_s,
                       .threads = res.threads,
                       .ranks = res.ranks,
                       .runs_done = res.totals.done,
                       .started = started,
                       .finished = finished,
                       .simulate_s = res.simulate_s,
                       .encode_s = res.encode_s,
                       .write_s = res.write_s,
                       .command_line = cmdline};
  int write_failed = res.write_failed || fmt_out_failed(st.out);
  int64_t kept = fmt_out_done_count(st.out); /* runs in the file once closed */
  int64_t committed = fmt_out_committed_count(st.out);
  char err[1024];
  int close_rc = fmt_out_close(st.out, &timing, err, sizeof err);
  if (close_rc) kept = committed; /* the final commit did not make it */
  st.out = NULL;
  free(cmdline);
  write_failed = write_failed || close_rc;
  cli_stop_restore();

  const drv_progress *t = &res.totals;
  if (!ra->quiet) {
    char who[64];
    if (res.ranks > 1)
      snprintf(who, sizeof who, "%d ranks, %d threads", res.ranks, res.threads);
    else
      snprintf(who, sizeof who, "%d thread%s", res.threads, res.threads == 1 ? "" : "s");
    fprintf(stderr,
            "stormsweep run: %lld runs in %.1f s (%.0f runs/s, %s): %lld recovered "
            "(%lld pass the SLO), %lld slow, %lld metastable, %lld collapsed",
            (long long)t->done, res.wall_s, res.wall_s > 0 ? (double)t->done / res.wall_s : 0, who,
            (long long)t->outcomes[ENG_OUTCOME_RECOVERED], (long long)t->passed,
            (long long)t->outcomes[ENG_OUTCOME_SLOW],
            (long long)t->outcomes[ENG_OUTCOME_METASTABLE],
            (long long)t->outcomes[ENG_OUTCOME_COLLAPSED]);
    if (t->failed) fprintf(stderr, ", %lld failed", (long long)t->failed);
    fprintf(stderr, " -> %s", ra->output);
    if (ra->slice_count)
      fprintf(stderr, " (slice %lld/%lld: %lld of the sweep's %lld runs)",
              (long long)ra->slice_index, (long long)ra->slice_count, (long long)st.selected,
              (long long)swp_sweep_runs(&st.sw));
    if (ra->resume)
      fprintf(stderr, " (resumed: %lld runs were already there)",
              (long long)(st.selected - st.to_run));
    fprintf(stderr, "\n");
  }
  if (res.first_error[0]) fprintf(stderr, "stormsweep run: %s\n", res.first_error);
  /* After a failed write the close message only repeats it. */
  if ((close_rc && !res.write_failed) || (!close_rc && err[0]))
    fprintf(stderr, "stormsweep run: %s\n", err);
  char *again = resume_command(argc, argv, ranks);
  const char *e1 = res.first_error, *e2 = err;
  int damaged = close_rc || res.write_failed
                    ? strstr(e1, "addr overflow") || strstr(e1, "B-tree") ||
                          strstr(e1, "signature") || strstr(e2, "addr overflow") ||
                          strstr(e2, "B-tree") || strstr(e2, "signature")
                    : 0;
  if (write_failed && damaged) {
    /* HDF5 found its own structures damaged: resuming the file as it is
     * would fail the same way; only its journal can bring the runs back. */
    /* Moved aside, so the resume rebuilds it from the journal rather than
     * trusting the parts of it that still verify. */
    char aside[4200];
    snprintf(aside, sizeof aside, "%s.damaged", ra->output);
    if (fmt_journal_exists(ra->output) && rename(ra->output, aside) == 0)
      fprintf(stderr,
              "stormsweep run: %s was damaged (HDF5 found its own index broken) and is now %s. "
              "Its journal %s.journal holds every committed run; --resume rebuilds the file "
              "from it and runs the rest:\n  %s\n",
              ra->output, aside, ra->output, again ? again : "the same command with --resume");
    else
      fprintf(stderr,
              "stormsweep run: %s is damaged (HDF5 found its own index broken) and has no "
              "journal to rebuild it from, so --resume cannot continue it; its runs are lost: "
              "start over with --force\n",
              ra->output);
    rc = 1;
  } else if (write_failed) {
    fprintf(stderr,
            "stormsweep run: %s keeps the %lld runs committed before the failure and nothing "
            "after it;\n  once the cause is fixed (e.g. disk space freed), finish it with:\n  %s\n",
            ra->output, (long long)kept, again ? again : "the same command with --resume");
    rc = 1;
  } else if (res.stopped) {
    fprintf(stderr,
            "stormsweep run: interrupted (%s): %lld of %lld runs are in %s (incomplete); "
            "finish it with:\n  %s\n",
            sig == SIGTERM ? "SIGTERM" : "SIGINT", (long long)kept, (long long)st.selected,
            ra->output, again ? again : "the same command with --resume");
    rc = 128 + (sig > 0 ? sig : SIGINT);
  } else {
    rc = exec_rc || close_rc ? 1 : 0;
  }
  free(again);
  rc = then_refine(&st, rc, ranks);
  run_state_free(&st);
  return rc;
}

int cmd_run(int argc, char **argv) {
  /* No HDF5 shutdown at exit: after a failed write the result file is left
   * open on purpose (format/state.c, fmt__out_abandon), and closing it then would try
   * to write it. Every file is closed explicitly otherwise. */
  H5dont_atexit();
  int rank = 0, ranks = 1;
#ifdef STORMSWEEP_MPI
  /* Only under an MPI launcher: a plain `stormsweep run` of an MPI build
   * skips MPI's start-up (a second or so, and shared-memory files that a
   * file-size limit breaks) and runs exactly as the default build. */
  static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK",
                                              "PMIX_RANK", "MV2_COMM_WORLD_SIZE",
                                              "MPI_LOCALNRANKS"};
  int launched = 0;
  for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
    if (getenv(launcher_vars[i])) launched = 1;
  if (!launched) return run_root(argc, argv, 1);
  int provided = 0;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks > 1 && provided < MPI_THREAD_SERIALIZED) {
    if (rank == 0)
      fprintf(stderr, "stormsweep run: the MPI library offers thread level %d; stormsweep needs "
                      "MPI_THREAD_SERIALIZED (%d)\n",
              provided, MPI_THREAD_SERIALIZED);
    MPI_Finalize();
    return 1;
  }
  int rc = rank == 0 ? run_root(argc, argv, ranks) : run_worker(rank);
  MPI_Finalize();
  return rc;
#else
  (void)rank;
  return run_root(argc, argv, ranks);
#endif
}

/* ---- list ---- */

static void list_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep list [SWEEP.ini] [--set KEY=VALUE]... [--grid KEY=V1,V2,...]... "
          "[--ini]\n\n"
          "Prints a sweep's axes, every grid point and the run count, without running.\n"
          "Without SWEEP.ini, lists the built-in seed study.\n\n"
          "  --client, --client-lenient, --set, --grid, --allow-dead-axes   as for\n"
          "                  'stormsweep run'\n"
          "  --ini           print the effective sweep (overrides folded in) as INI text\n"
          "  -h, --help      this help\n\n"
          "Sweep file grammar:\n"
          "  [sweep]     ");
  const char *const *keys = swp_sweep_keys();
  for (int i = 0; keys[i]; i++) fprintf(out, " %s%s", keys[i], keys[i + 1] ? "," : "\n");
  fprintf(out,
          "               (replicates default %d, seed default %d; crn = on|off: common\n"
          "               random numbers across points; refine = on|off: run then refines;\n"
          "               screen_up_to = N (> replicates): sequential screening, refine first\n"
          "               runs replicates up to N-1 only where the first ones leave a point\n"
          "               open (docs/reference.md, Refine); scenario_axes, tunable_axes:\n"
          "               axis roles, docs/decisions.md)\n"
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
  rc = sweep_load(&ra, "list", 1, &sw);
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
