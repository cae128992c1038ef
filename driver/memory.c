/*
 * memory.c — whether a sweep's threads fit in the memory this process may
 * still take (drv.h, drv_memory_check), checked before any run starts.
 *
 * Every thread holds one engine run (eng_run_memory: the engine owns that
 * estimate) and its worker's buffers (worker.c, estimated here, next to
 * what allocates them); the process adds its libraries and the writer.
 * Against that stands the least of: the memory the kernel says is
 * available (MemAvailable), the room left under the process's cgroup
 * limit, and the room left under its address-space limit (ulimit -v). A
 * run that fails to allocate anyway (the estimate is an estimate, other
 * processes grow) still fails alone: the engine's out-of-memory path.
 */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "drv_internal.h"

#define MB (1024.0 * 1024.0)
#define GB (1024.0 * MB)

/* The process without any run: code, HDF5 and zlib, the writer's chunk
 * cache and journal (measured: a sweep of 2-shard, 600-tick runs peaks at
 * 19 MB, less than 1 MB of it the run). */
#define DRV_PROCESS_BYTES (18.0 * MB)
/* A thread's stack and its malloc arena count against ulimit -v even
 * untouched (glibc reserves 64 MB per arena; stacks are 8 MB). */
#define DRV_THREAD_ADDRESS_BYTES (72.0 * MB)
/* Deflate's state at the default window and memory level (zlib's
 * zconf.h: 2^(windowBits+2) + 2^(memLevel+9) bytes) plus its structure. */
#define DRV_DEFLATE_BYTES (262144.0 + 6000.0)
/* Compressed chunks as a share of the raw values they hold: per-tick counts
 * shuffle and deflate to a few percent (a 5e6-tick run's 19 chunks take
 * about 0.07 of its rows); the encoding buffer and the arena of a run's
 * chunks are touched only that far. */
#define DRV_COMPRESSED_SHARE 0.1

double drv_worker_memory(int32_t ticks, const int32_t *wide) {
  if (ticks <= 0) return 0;
  double t = ticks, one = t * sizeof(int32_t);
  /* The encoder's shuffle buffer and deflate state, one chunk's encoding
   * and the arena of the run's ENG_M_COUNT chunks. The padded row is
   * touched only for points with a shorter horizon than the file's: not
   * counted. */
  double b = one + DRV_DEFLATE_BYTES + one * DRV_COMPRESSED_SHARE * (1 + ENG_M_COUNT);
  /* Each fmt_wide matrix (rows x width): its encoding, and per shape
   * (drv_wide_shape) the padded matrix, the encoder's shuffle buffer and
   * its deflate state. */
  int shape_seen[DRV_WIDE_SHAPES] = {0};
  for (int w = 0; wide && w < FMT_WIDE_COUNT; w++) {
    if (wide[w] <= 0) continue;
    double cells = (double)fmt_wide_rows((fmt_wide)w, ticks) * sizeof(int32_t) * wide[w];
    b += cells * DRV_COMPRESSED_SHARE;
    if (!shape_seen[drv_wide_shape(w)]++) b += cells * 2 + DRV_DEFLATE_BYTES;
  }
  return b;
}

/* The number after key in a "key: N kB" file such as /proc/meminfo, in
 * bytes; -1 when absent. */
static double kb_field(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[256];
  double v = -1;
  size_t n = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, n) && line[n] == ':') {
      v = strtod(line + n + 1, NULL) * 1024.0;
      break;
    }
  fclose(f);
  return v;
}

/* A file holding one number (cgroup's memory.max, memory.current); -1 when
 * absent or "max". */
static double number_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[64] = "";
  char *ok = fgets(buf, sizeof buf, f);
  fclose(f);
  if (!ok || !strncmp(buf, "max", 3)) return -1;
  char *end;
  double v = strtod(buf, &end);
  return end == buf ? -1 : v;
}

/* Room left under this process's cgroup v2 memory limit; -1: none. */
static double cgroup_room(void) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return -1;
  char line[512], dir[700] = "";
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "0::", 3)) {
      line[strcspn(line, "\n")] = '\0';
      snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", line + 3);
    }
  fclose(f);
  if (!dir[0]) return -1;
  char path[800];
  snprintf(path, sizeof path, "%s/memory.max", dir);
  double max = number_file(path);
  snprintf(path, sizeof path, "%s/memory.current", dir);
  double cur = number_file(path);
  return max < 0 ? -1 : fmax(0, max - fmax(cur, 0));
}

/* Room left under ulimit -v; -1: no limit. */
static double address_room(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY) return -1;
  FILE *f = fopen("/proc/self/statm", "r");
  double pages = 0;
  if (f) {
    if (fscanf(f, "%lf", &pages) != 1) pages = 0;
    fclose(f);
  }
  return fmax(0, (double)rl.rlim_cur - pages * (double)sysconf(_SC_PAGESIZE));
}

double drv_available_memory(const char **what, int *address_space) {
  double avail = kb_field("/proc/meminfo", "MemAvailable");
  *what = "available (MemAvailable)";
  *address_space = 0;
  if (avail < 0) {
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    avail = pages > 0 && page > 0 ? (double)pages * (double)page : -1;
    *what = "free";
  }
  double cg = cgroup_room();
  if (cg >= 0 && (avail < 0 || cg < avail)) {
    avail = cg;
    *what = "left under this cgroup's memory.max";
  }
  double as = address_room();
  if (as >= 0 && (avail < 0 || as < avail)) {
    avail = as;
    *what = "left under the address-space limit (ulimit -v)";
    *address_space = 1;
  }
  return avail;
}

int drv_memory_check(const eng_memory *run, int32_t ticks, const int32_t *wide, int64_t jobs,
                     int threads, char *err, size_t errlen) {
  if (threads <= 0) threads = omp_get_max_threads();
  const char *what;
  int as;
  double avail = drv_available_memory(&what, &as);
  if (avail < 0) return 0; /* the system does not say: nothing to check against */
  /* Threads beyond the jobs never get a run; each still sets up its worker. */
  double busy = jobs > 0 && jobs < threads ? (double)jobs : threads;
  double worker = drv_worker_memory(ticks, wide) + (as ? DRV_THREAD_ADDRESS_BYTES : 0);
  double per_run = run->total;
  double need = DRV_PROCESS_BYTES + busy * per_run + threads * worker;
  if (need <= avail) return 0;
  double fit = floor((avail - DRV_PROCESS_BYTES) / (per_run + worker));
  char hint[128];
  if (fit >= 1)
    snprintf(hint, sizeof hint, "-j %.0f would fit", fmin(fit, threads - 1));
  else
    snprintf(hint, sizeof hint, "not even -j 1 fits: lower what the run holds");
  swp_seterr(err, errlen,
             "-j %d: %.0f thread%s x %.2f GB per run (%.2f GB engine run, %.2f GB buffers) "
             "need about %.2f GB, more than the %.2f GB of memory %s; %s",
             threads, busy, busy == 1 ? "" : "s", (per_run + worker) / GB, per_run / GB,
             worker / GB, need / GB, avail / GB, what, hint);
  return -1;
}

int drv_sweep_memory_check(const swp_sweep *sw, int threads, int64_t jobs, char *err,
                           size_t errlen) {
  int32_t wide[FMT_WIDE_COUNT];
  for (int w = 0; w < FMT_WIDE_COUNT; w++) wide[w] = fmt_wide_width(sw, (fmt_wide)w);
  return drv_memory_check(&sw->run_memory, sw->ticks, wide, jobs, threads, err, errlen);
}
