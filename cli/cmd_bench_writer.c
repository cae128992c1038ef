/*
 * cmd_bench_writer.c — `stormsweep bench --writer N`: how many runs per
 * second the single HDF5 writer (format/) sustains, measured with a
 * synthetic producer: eight runs of the seed study are simulated once and
 * their encoded /ticks chunks and summaries are fed to the writer N times
 * (as rows of a seed-study file with enough replicates), one thread, no
 * simulation in the timed loop. The writer commits every 2 s like a sweep
 * (fmt_out_flush) and closes the file at the end; the timed span covers
 * all of it. Beside it, the same process's simulate + encode time per run
 * (one thread), so the ratio says how many simulating cores one writer can
 * keep up with. Pin it with taskset: the figures are per core.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "drv.h"
#include "eng.h"
#include "fmt.h"
#include "swp.h"

#define BW_TEMPLATES 8 /* distinct simulated runs the producer cycles through */

static double bw_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* This process's CPU time: on a shared machine the load-free figure. */
static double bw_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct bw_template {
  fmt_run_record rec;
  uint8_t *chunks; /* the metrics' encoded chunks back to back */
} bw_template;

/* Simulates run j of the sweep and encodes its metrics as a worker does. */
static int bw_template_make(const swp_sweep *sw, int64_t j, fmt_chunk_encoder *enc,
                            eng_run *run, bw_template *t, double *sim_cpu, char *err,
                            size_t errlen) {
  memset(t, 0, sizeof *t);
  eng_config cfg;
  int64_t point = j / sw->replicates;
  if (swp_sweep_point_config(sw, point, &cfg, err, errlen)) return -1;
  uint64_t seed = swp_run_seed(sw->seed, sw->crn, point, j % sw->replicates);
  double t0 = bw_cpu();
  if (eng_run_simulate(run, &cfg, seed, &t->rec.summary, err, errlen)) return -1;
  int32_t ticks = eng_run_ticks(run);
  size_t n = (size_t)sw->ticks, bound = fmt_chunk_bound(n), used = 0;
  int32_t *padded = malloc(n * sizeof *padded);
  t->chunks = malloc(bound * ENG_M_COUNT);
  if (!padded || !t->chunks) {
    free(padded);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  size_t offset[ENG_M_COUNT];
  for (int m = 0; m < ENG_M_COUNT; m++) {
    const int32_t *src = eng_run_metric(run, (eng_metric)m);
    memcpy(padded, src, (size_t)ticks * sizeof *src);
    for (size_t k = (size_t)ticks; k < n; k++) padded[k] = -1;
    size_t len = fmt_chunk_encode(enc, padded, t->chunks + used, bound);
    if (!len) {
      free(padded);
      snprintf(err, errlen, "encoding failed");
      return -1;
    }
    offset[m] = used;
    t->rec.chunk_size[m] = len;
    used += len;
  }
  *sim_cpu += bw_cpu() - t0;
  for (int m = 0; m < ENG_M_COUNT; m++) t->rec.chunk[m] = t->chunks + offset[m];
  t->rec.ticks = ticks;
  free(padded);
  return 0;
}

int cli_bench_writer(int64_t runs, int json) {
  char err[1024] = "";
  swp_sweep sw;
  swp_sweep_init(&sw);
  /* the seed study with enough replicates for the rows */
  int64_t reps = 1;
  if (swp_sweep_parse_seed_study(&sw, err, sizeof err) || swp_sweep_check(&sw, err, sizeof err))
    goto fail_sweep;
  reps = (runs + sw.n_points - 1) / sw.n_points;
  char kv[64];
  snprintf(kv, sizeof kv, "replicates=%lld", (long long)(reps < 1 ? 1 : reps));
  if (swp_sweep_override_set(&sw, kv, err, sizeof err) || swp_sweep_check(&sw, err, sizeof err))
    goto fail_sweep;
  bw_template tpl[BW_TEMPLATES];
  memset(tpl, 0, sizeof tpl);
  fmt_chunk_encoder *enc = fmt_chunk_encoder_create((size_t)sw.ticks);
  eng_run *run = eng_run_create();
  double sim_cpu = 0;
  int rc = enc && run ? 0 : -1;
  for (int i = 0; !rc && i < BW_TEMPLATES; i++)
    rc = bw_template_make(&sw, (int64_t)i * sw.n_points / BW_TEMPLATES * sw.replicates, enc,
                          run, &tpl[i], &sim_cpu, err, sizeof err); /* points spread */
  fmt_chunk_encoder_destroy(enc);
  if (run) eng_run_destroy(run);
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/stormsweep-bench-XXXXXX", tmp);
  if (!rc && !mkdtemp(dir)) {
    snprintf(err, sizeof err, "mkdtemp: cannot make a directory in %s", tmp);
    rc = -1;
  }
  snprintf(path, sizeof path, "%s/writer.h5", dir);
  fmt_out *o = NULL;
  double t0 = bw_now(), last_flush = t0, c0 = bw_cpu();
  if (!rc) rc = fmt_out_create(&o, path, &sw, "stormsweep bench --writer", 0, err, sizeof err);
  int64_t total = swp_sweep_runs(&sw), n = runs < total ? runs : total;
  for (int64_t i = 0; !rc && i < n; i++) {
    fmt_run_record rec = tpl[i % BW_TEMPLATES].rec;
    rec.run = i;
    rec.point = i / sw.replicates;
    rec.replicate = (int32_t)(i % sw.replicates);
    rec.summary.seed = swp_run_seed(sw.seed, sw.crn, rec.point, rec.replicate);
    rc = fmt_out_write_run(o, &rec, err, sizeof err);
    if (!rc && bw_now() - last_flush >= 2.0) {
      rc = fmt_out_flush(o, err, sizeof err);
      last_flush = bw_now();
    }
  }
  if (o) {
    fmt_timing tm = {.wall_s = bw_now() - t0, .threads = 1, .runs_done = n, .started = "",
                     .finished = ""};
    char cerr[512] = "";
    if (fmt_out_close(o, &tm, cerr, sizeof cerr) && !rc) {
      snprintf(err, sizeof err, "%s", cerr);
      rc = -1;
    }
  }
  double wall = bw_now() - t0, cpu = bw_cpu() - c0;
  struct stat st;
  double bytes = !rc && !stat(path, &st) ? (double)st.st_size : NAN;
  unlink(path);
  char aux[700];
  snprintf(aux, sizeof aux, "%s.journal", path);
  unlink(aux);
  snprintf(aux, sizeof aux, "%s.lock", path);
  unlink(aux);
  rmdir(dir);
  for (int i = 0; i < BW_TEMPLATES; i++) free(tpl[i].chunks);
  swp_sweep_free(&sw);
  if (rc) {
    fprintf(stderr, "stormsweep bench: --writer: %s\n", err);
    return 1;
  }
  /* per CPU second: what one core gives, whatever else runs; the writer keeps up
   * with its wall rate (its I/O waits included) over a core's simulating rate */
  double w_rps = (double)n / wall, w_cps = (double)n / cpu, sim_cps = BW_TEMPLATES / sim_cpu;
  if (json) {
    printf("{\n  \"writer\": {\n    \"runs\": %lld,\n    \"wall_s\": %.3f,\n"
           "    \"cpu_s\": %.3f,\n    \"runs_per_s\": %.1f,\n    \"runs_per_cpu_s\": %.1f,\n"
           "    \"bytes_per_run\": %.0f,\n    \"write_mb_per_s\": %.2f,\n"
           "    \"simulate_encode_runs_per_cpu_s\": %.2f,\n"
           "    \"cores_one_writer_keeps_up_with\": %.1f\n  }\n}\n",
           (long long)n, wall, cpu, w_rps, w_cps, bytes / (double)n, bytes / wall / 1e6, sim_cps,
           w_rps / sim_cps);
  } else {
    printf("writer: %lld synthetic seed-study runs (%d simulated runs' chunks, cycled) through\n"
           "the single HDF5 writer, 1 thread, journal on, a commit every 2 s:\n", (long long)n,
           BW_TEMPLATES);
    printf("  %.2f s wall, %.2f s CPU: %.1f runs/s (%.1f per CPU second), %.0f bytes/run, "
           "%.1f MB/s\n", wall, cpu, w_rps, w_cps, bytes / (double)n, bytes / wall / 1e6);
    printf("  simulate + encode: %.1f runs per CPU second; one writer keeps up with %.1f such "
           "cores\n", sim_cps, w_rps / sim_cps);
  }
  return 0;
fail_sweep:
  fprintf(stderr, "stormsweep bench: --writer: %s\n", err);
  swp_sweep_free(&sw);
  return 1;
}
