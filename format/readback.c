/*
 * readback.c — a result file opened read-only with its layout checked
 * (fmt_in: merge, verify --resume, bench), its rows read back checked to be
 * the runs they claim to be, its chunks read raw to be copied still
 * compressed.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "writer.h"

#define FORMAT_NAME FMT_FORMAT_NAME
#define FORMAT_VERSION FMT_FORMAT_VERSION

/* A result file open read-only (merge). */
struct fmt_in {
  hid_t file, runs, runs_mem, wall, thread;
  hid_t ticks[ENG_M_COUNT];
  hid_t outcome;
  hid_t wide[FMT_WIDE_COUNT];     /* -1: the file records no such series */
  int32_t wide_n[FMT_WIDE_COUNT];
  fmt_info info;
  char *path;
};

/* ---- read-only access (merge) ---- */

static void h5in_release(fmt_in *in) {
  if (in->runs >= 0) H5Dclose(in->runs);
  if (in->runs_mem >= 0) H5Tclose(in->runs_mem);
  if (in->wall >= 0) H5Dclose(in->wall);
  if (in->thread >= 0) H5Dclose(in->thread);
  if (in->outcome >= 0) H5Dclose(in->outcome);
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if (in->wide[w] >= 0) H5Dclose(in->wide[w]);
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (in->ticks[m] >= 0) H5Dclose(in->ticks[m]);
  if (in->file >= 0) H5Fclose(in->file);
}

static void fmt_in_close_q(fmt_in *in) {
  if (!in) return;
  h5in_release(in);
  fmt_info_free(&in->info);
  free(in->path);
  free(in);
}

static void read_timing_info(hid_t f, fmt_info *info) {
  if (H5Lexists(f, "timing", H5P_DEFAULT) <= 0) return;
  hid_t g = H5Gopen2(f, "timing", H5P_DEFAULT);
  if (g < 0) return;
  fmt_attr_get_num(g, "wall_s", H5T_NATIVE_DOUBLE, &info->wall_s);
  fmt_attr_get_num(g, "simulate_s", H5T_NATIVE_DOUBLE, &info->simulate_s);
  fmt_attr_get_num(g, "encode_s", H5T_NATIVE_DOUBLE, &info->encode_s);
  fmt_attr_get_num(g, "write_s", H5T_NATIVE_DOUBLE, &info->write_s);
  fmt_attr_get_num(g, "threads", H5T_NATIVE_INT32, &info->threads);
  fmt_attr_get_str(g, "started", SWP_MAX_TEXT, &info->started);
  fmt_attr_get_str(g, "finished", SWP_MAX_TEXT, &info->finished);
  char **when[2] = {&info->started, &info->finished};
  for (int i = 0; i < 2; i++)
    if (*when[i] && swp_text_problem(*when[i], 64, 0)) {
      free(*when[i]);
      *when[i] = NULL;
    }
  H5Gclose(g);
}

static int fmt_in_open_q(fmt_in **out, const char *path, char *err, size_t errlen) {
  *out = NULL;
  fmt_in *in = calloc(1, sizeof *in);
  if (!in || !(in->path = strdup(path))) {
    free(in);
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  in->file = in->runs = in->runs_mem = in->wall = in->thread = in->outcome = -1;
  for (int w = 0; w < FMT_WIDE_COUNT; w++) in->wide[w] = -1;
  for (int m = 0; m < ENG_M_COUNT; m++) in->ticks[m] = -1;
  char why[256];
  if (access(path, R_OK)) {
    swp_seterr(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    goto fail;
  }
  if (H5Fis_hdf5(path) <= 0) {
    swp_seterr(err, errlen, "%s: not an HDF5 file (or truncated or damaged beyond reading)", path);
    goto fail;
  }
  in->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (in->file < 0) {
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: cannot open: %s", path, why);
    goto fail;
  }
  if (fmt_layout_read_info(in->file, path, &in->info, err, errlen) ||
      fmt_layout_open_datasets(in->file, path, &in->info, &in->runs, &in->runs_mem,
                               in->ticks, &in->wall, &in->thread, &in->outcome, in->wide,
                               in->wide_n, err, errlen))
    goto fail;
  read_timing_info(in->file, &in->info);
  *out = in;
  return 0;
fail:
  fmt_in_close(in);
  return -1;
}

const fmt_info *fmt_in_info(const fmt_in *in) { return &in->info; }

int fmt_in_sweep(const fmt_in *in, swp_sweep *sw, char *err, size_t errlen) {
  const fmt_info *info = &in->info;
  swp_sweep_init(sw);
  char source[512], msg[1024];
  snprintf(source, sizeof source, "%s (its sweep_text)", in->path);
  char *stored_digests = NULL;
  int bad = swp_sweep_parse_string(sw, info->sweep_text, source, msg, sizeof msg);
  if (!bad && sw->telemetry_digests && !(stored_digests = strdup(sw->telemetry_digests))) {
    snprintf(msg, sizeof msg, "out of memory");
    bad = 1;
  }
  if (!bad) bad = swp_sweep_check(sw, msg, sizeof msg);
  /* A telemetry file that changed since is no damage: say which. */
  if (!bad && stored_digests && sw->telemetry_digests &&
      strcmp(stored_digests, sw->telemetry_digests)) {
    snprintf(msg, sizeof msg,
             "%s: a telemetry file its sweep reads changed since its runs were made (the "
             "file says telemetry_digests = %.300s; now %.300s): its runs are not what the "
             "sweep makes now; restore the file",
             in->path, stored_digests, sw->telemetry_digests);
    bad = 1;
  }
  free(stored_digests);
  if (bad) {
    swp_seterr(err, errlen, "%s", msg);
    swp_sweep_free(sw);
    swp_sweep_init(sw);
    return -1;
  }
  char *text = swp_sweep_format(sw);
  int same = text && !strcmp(text, info->sweep_text);
  free(text);
  int64_t runs = swp_sweep_runs(sw);
  if (!same || runs > info->n_runs || (info->n_runs != runs && info->n_points * info->replicates != runs) ||
      sw->ticks != info->ticks || sw->seed != info->master_seed) {
    swp_seterr(err, errlen, "%s: its sweep_text does not describe its own shape (%lld runs x %d "
               "ticks, seed %llu): damaged or from another tool", in->path,
               (long long)info->n_runs, info->ticks, (unsigned long long)info->master_seed);
    swp_sweep_free(sw);
    swp_sweep_init(sw);
    return -1;
  }
  /* The sweep names its origin as the file does. */
  free(sw->source);
  free(sw->source_text);
  sw->source = strdup(info->sweep_source ? info->sweep_source : "");
  sw->source_text =
      info->sweep_source_text && info->sweep_source_text[0] ? strdup(info->sweep_source_text) : NULL;
  return 0;
}

static int fmt_in_read_done_q(fmt_in *in, uint8_t *done, char *err, size_t errlen) {
  if (fmt_layout_read_done(in->runs, in->info.n_runs, done)) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: cannot read the done column of /runs: %s", in->path, why);
    return -1;
  }
  return 0;
}

static int fmt_in_read_records_q(fmt_in *in, const int64_t *runs, size_t n,
                                   fmt_run_record *recs, char *err, size_t errlen) {
  if (!n) return 0;
  run_row *rows = malloc(n * sizeof *rows);
  hsize_t *at = malloc(n * sizeof *at);
  double *wall = malloc(n * sizeof *wall);
  int32_t *thread = malloc(n * sizeof *thread);
  hid_t fs = H5Dget_space(in->runs), ts = H5Dget_space(in->wall);
  hsize_t cnt = n;
  hid_t ms = H5Screate_simple(1, &cnt, NULL);
  int rc = !rows || !at || !wall || !thread || fs < 0 || ts < 0 || ms < 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (runs[i] < 0 || runs[i] >= in->info.n_runs) rc = 1;
    at[i] = (hsize_t)runs[i];
  }
  const char *step = "/runs";
  if (!rc)
    rc = H5Sselect_elements(fs, H5S_SELECT_SET, n, at) < 0 ||
         H5Dread(in->runs, in->runs_mem, ms, fs, H5P_DEFAULT, rows) < 0;
  if (!rc) {
    step = "/timing";
    rc = H5Sselect_elements(ts, H5S_SELECT_SET, n, at) < 0 ||
         H5Dread(in->wall, H5T_NATIVE_DOUBLE, ms, ts, H5P_DEFAULT, wall) < 0 ||
         H5Dread(in->thread, H5T_NATIVE_INT32, ms, ts, H5P_DEFAULT, thread) < 0;
  }
  if (rc) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: reading %s: %s", in->path, step, why);
  }
  const fmt_info *info = &in->info;
  fmt_record_rules k = {info->master_seed, info->crn, info->replicates,
                        info->n_points * info->replicates, info->n_runs, info->ticks,
                        {0}, info->stored, info->rows};
  for (int w = 0; w < FMT_WIDE_COUNT; w++) k.wide[w] = in->wide[w] >= 0 ? in->wide_n[w] : 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const run_row *row = &rows[i];
    fmt_run_record *rec = &recs[i];
    memset(rec, 0, sizeof *rec);
    rec->run = runs[i];
    rec->point = row->point;
    rec->replicate = row->replicate;
    rec->ticks = row->ticks;
    rec->summary = row->s;
    rec->wall_s = wall[i];
    rec->thread = thread[i];
    char why[512];
    if (row->run != runs[i]) snprintf(why, sizeof why, "it names run %lld", (long long)row->run);
    else if (!row->done) snprintf(why, sizeof why, "it is not marked done");
    if (row->run != runs[i] || !row->done ||
        fmt__record_check(&k, rec, -1, -1, 0, why, sizeof why)) {
      swp_seterr(err, errlen, "%s: the /runs row of run %lld is inconsistent: %s", in->path,
                 (long long)runs[i], why);
      rc = 1;
    }
  }
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (ts >= 0) H5Sclose(ts);
  free(rows);
  free(at);
  free(wall);
  free(thread);
  return rc ? -1 : 0;
}

int fmt__chunks_read(const char *path, const hid_t *ticks, const hid_t *wide, int32_t ticks_n,
                     const int32_t *wide_n, int64_t r, int64_t base_runs, uint8_t **buf,
                     size_t *cap, fmt_run_record *rec, char *err, size_t errlen) {
  size_t bound = fmt_chunk_bound((size_t)ticks_n), used = 0, offset[ENG_M_COUNT];
  size_t wide_at[FMT_WIDE_COUNT] = {0};
  hsize_t at[2] = {(hsize_t)r, 0};
  if (r >= base_runs) {
    int none = fmt__run_chunks_none(ticks, wide, r);
    if (none < 0) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      swp_seterr(err, errlen, "%s: reading the chunk index of /ticks at run %lld: %s", path,
                 (long long)r, why);
      return -1;
    }
    if (none) {
      for (int m = 0; m < ENG_M_COUNT; m++) rec->chunk[m] = NULL, rec->chunk_size[m] = 0;
      for (int w = 0; w < FMT_WIDE_COUNT; w++) rec->wide_chunk[w] = NULL, rec->wide_chunk_size[w] = 0;
      return 0;
    }
  }
  for (int m = 0; m < ENG_M_COUNT; m++) {
    const char *name = eng_metric_get_info((eng_metric)m)->name;
    hsize_t size = 0;
    offset[m] = used;
    rec->chunk_size[m] = 0;
    if (ticks[m] < 0) continue; /* the metric is not recorded (sweeps/record.c) */
    if (fmt__chunk_size_at(ticks[m], r, &size)) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      swp_seterr(err, errlen, "%s: reading the chunk index of /ticks/%s at run %lld: %s",
                 path, name, (long long)r, why);
      return -1;
    }
    if (size == 0 || size > bound) {
      swp_seterr(err, errlen, "%s: run %lld is marked done but its /ticks/%s chunk %s", path,
                 (long long)r, name, size ? "is larger than any encoding" : "is missing");
      return -1;
    }
    if (fmt__buf_reserve(buf, cap, used + (size_t)size)) {
      swp_seterr(err, errlen, "%s: out of memory reading run %lld", path, (long long)r);
      return -1;
    }
    uint32_t mask = 0;
    if (H5Dread_chunk(ticks[m], H5P_DEFAULT, at, &mask, *buf + used) < 0 || mask != 0) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      swp_seterr(err, errlen, "%s: reading run %lld's /ticks/%s chunk: %s", path,
                 (long long)r, name, mask ? "stored without its filters" : why);
      return -1;
    }
    offset[m] = used;
    rec->chunk_size[m] = (size_t)size;
    used += (size_t)size;
  }
  for (int w = 0; w < FMT_WIDE_COUNT; w++) {
    rec->wide_chunk_size[w] = 0;
    if (wide[w] < 0) continue;
    const char *name = fmt_wide_name((fmt_wide)w);
    hsize_t size = 0, at3[3] = {(hsize_t)r, 0, 0};
    size_t wbound =
        fmt_chunk_bound((size_t)fmt_wide_rows((fmt_wide)w, ticks_n) * (size_t)wide_n[w]);
    if (fmt__chunk_size_at(wide[w], r, &size) || size == 0 || size > wbound) {
      swp_seterr(err, errlen, "%s: run %lld is marked done but its /ticks/%s chunk is missing "
                 "or unreadable", path, (long long)r, name);
      return -1;
    }
    if (fmt__buf_reserve(buf, cap, used + (size_t)size)) {
      swp_seterr(err, errlen, "%s: out of memory reading run %lld", path, (long long)r);
      return -1;
    }
    uint32_t mask = 0;
    if (H5Dread_chunk(wide[w], H5P_DEFAULT, at3, &mask, *buf + used) < 0 || mask != 0) {
      swp_seterr(err, errlen, "%s: reading run %lld's /ticks/%s chunk", path, (long long)r,
                 name);
      return -1;
    }
    wide_at[w] = used;
    rec->wide_chunk_size[w] = (size_t)size;
    used += (size_t)size;
  }
  /* Pointed at once every chunk is in: a later one may move *buf. */
  for (int m = 0; m < ENG_M_COUNT; m++)
    rec->chunk[m] = rec->chunk_size[m] ? *buf + offset[m] : NULL;
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    rec->wide_chunk[w] = rec->wide_chunk_size[w] ? *buf + wide_at[w] : NULL;
  return 0;
}

static int fmt_in_read_chunks_q(fmt_in *in, int64_t r, uint8_t **buf, size_t *cap,
                                fmt_run_record *rec, char *err, size_t errlen) {
  return fmt__chunks_read(in->path, in->ticks, in->wide, in->info.rows, in->wide_n, r,
                          in->info.n_points * in->info.replicates, buf, cap, rec, err, errlen);
}

/* ---- the writer's own runs read back (verify --resume, refine's journal) ---- */

int fmt__out_read_row(fmt_out *o, int64_t r, fmt_run_record *rec, char *err, size_t errlen) {
  run_row row;
  double wall = 0;
  int32_t thread = 0;
  hsize_t at = (hsize_t)r, one = 1;
  hid_t ms = H5Screate_simple(1, &one, NULL);
  int bad = fmt__out_row_read(o, r, &row) || ms < 0 ||
            H5Sselect_elements(o->timing_space, H5S_SELECT_SET, 1, &at) < 0 ||
            H5Dread(o->wall, H5T_NATIVE_DOUBLE, ms, o->timing_space, H5P_DEFAULT, &wall) < 0 ||
            H5Dread(o->thread, H5T_NATIVE_INT32, ms, o->timing_space, H5P_DEFAULT, &thread) < 0;
  if (ms >= 0) H5Sclose(ms);
  if (bad) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: reading run %lld's row: %s", o->path, (long long)r, why);
    return -1;
  }
  memset(rec, 0, sizeof *rec);
  rec->run = r;
  rec->point = row.point;
  rec->replicate = row.replicate;
  rec->ticks = row.ticks;
  rec->summary = row.s;
  rec->wall_s = wall;
  rec->thread = thread;
  int64_t point = -1;
  int32_t rep = -1;
  char why[512];
  fmt_record_rules k = fmt__out_rules(o);
  if (row.run != r || !row.done || fmt__row_coords(o, r, &point, &rep) ||
      fmt__record_check(&k, rec, point, rep, 0, why, sizeof why)) {
    if (row.run != r || !row.done)
      snprintf(why, sizeof why, "it names run %lld, done %d", (long long)row.run, row.done);
    swp_seterr(err, errlen, "%s: the /runs row of run %lld is inconsistent: %s", o->path,
               (long long)r, why);
    return -1;
  }
  return 0;
}

int fmt_out_read_records(fmt_out *o, const int64_t *runs, size_t n, fmt_run_record *recs,
                         char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = fmt__out_read_row(o, runs[i], &recs[i], err, errlen);
  fmt_h5_quiet_end(&q);
  return rc ? -1 : 0;
}

static double fmt_in_ticks_bytes_q(fmt_in *in) {
  double b = 0;
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (in->ticks[m] >= 0) b += (double)H5Dget_storage_size(in->ticks[m]);
  return b;
}

void fmt_in_close(fmt_in *in) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  fmt_in_close_q(in);
  fmt_h5_quiet_end(&q);
}

int fmt_in_open(fmt_in **out, const char *path, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_open_q(out, path, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_in_read_done(fmt_in *in, uint8_t *done, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_read_done_q(in, done, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_in_read_records(fmt_in *in, const int64_t *runs, size_t n, fmt_run_record *recs,
                          char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_read_records_q(in, runs, n, recs, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_in_read_chunks(fmt_in *in, int64_t r, uint8_t **buf, size_t *cap, fmt_run_record *rec,
                         char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_in_read_chunks_q(in, r, buf, cap, rec, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

double fmt_in_ticks_bytes(fmt_in *in) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  double rc = fmt_in_ticks_bytes_q(in);
  fmt_h5_quiet_end(&q);
  return rc;
}
