/*
 * results_ticks.c — /ticks checked as a whole (every metric a 2-D integer
 * dataset of one row per run, chunks no larger than a run, reading a point
 * bounded in work) and one point's runs read a row at a time into bin means
 * (fmt_bins_read).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"

/* Every /ticks/<metric> must be a 2-D integer dataset of (runs x ticks),
 * ticks the same for all and at most MAX_TICKS, with a row for every run
 * read. Sets r->n_ticks. A missing /ticks is fine (nothing to plot). */
typedef struct ticks_check {
  const fmt_results *r;
  hsize_t rows, ticks;
  int64_t max_run;
  char *err;
  size_t errlen;
  int failed;
  double chunk_bytes; /* the largest chunk of any metric (0: none chunked) */
  hsize_t chunk_ticks; /* the narrowest chunk's ticks */
} ticks_check;

/* A member of a format 2 /ticks that is a coordinate (layout.h): a fixed
 * name, or a grid axis (a /points column, possibly as "axis_<key>"). */
static int ticks_member_is_coord(const fmt_results *r, const char *name) {
  if (fmt_layout_is_fixed_coord(name)) return 1;
  for (size_t a = 0; a < r->n_axes; a++) {
    char axis[160];
    if (!strcmp(name, fmt_layout_axis_coord(r->axes[a], axis, sizeof axis))) return 1;
  }
  return 0;
}

static herr_t ticks_visit(hid_t group, const char *name, const H5L_info_t *info, void *data) {
  (void)info;
  ticks_check *tc = data;
  const fmt_results *r = tc->r;
  const char *bad = swp_text_problem(name, MAX_NAME_BYTES, 0);
  if (bad) {
    snprintf(tc->err, tc->errlen, "%s: a member name of %s %s (at most %d bytes of printable "
             "UTF-8)", r->path, GROUP_TICKS, bad, MAX_NAME_BYTES);
    tc->failed = 1;
    return 1;
  }
  /* Format 2 keeps its coordinates (run, time_ms, point, ...: 1-D; the
   * grid axes by name) and the per-shard matrix in /ticks too: they are not
   * (runs x ticks) metrics. */
  if (r->format_version >= 2 && ticks_member_is_coord(r, name)) return 0;
  hid_t ds = H5Dopen2(group, name, H5P_DEFAULT);
  if (ds < 0) {
    snprintf(tc->err, tc->errlen, "%s: %s/%.64s is not a dataset", r->path, GROUP_TICKS, name);
    tc->failed = 1;
    return 1;
  }
  hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hsize_t dims[2] = {0, 0};
  int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
  if (rank == 2) H5Sget_simple_extent_dims(sp, dims, NULL);
  /* A chunk is decompressed whole to read any of it. */
  hsize_t chunk[2] = {0, 0};
  double chunk_bytes = 0;
  hid_t dcpl = ds >= 0 ? H5Dget_create_plist(ds) : -1;
  if (rank == 2 && dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
      H5Pget_chunk(dcpl, 2, chunk) == 2)
    chunk_bytes = (double)chunk[0] * (double)chunk[1] * (double)(ft >= 0 ? H5Tget_size(ft) : 0);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
  const char *problem = NULL;
  char detail[128] = "";
  if (rank != 2) {
    problem = "is not a 2-D (runs x ticks) dataset";
    snprintf(detail, sizeof detail, " (rank %d)", rank);
  } else if (cls != H5T_INTEGER) {
    problem = "is not an integer dataset";
  } else if (dims[1] < 1 || dims[1] > (hsize_t)MAX_TICKS) {
    problem = "has an impossible number of ticks";
    snprintf(detail, sizeof detail, " (%llu; at most %lld)", (unsigned long long)dims[1],
             MAX_TICKS);
  } else if (tc->ticks && dims[1] != tc->ticks) {
    problem = "has a different number of ticks than the other metrics";
    snprintf(detail, sizeof detail, " (%llu, not %llu)", (unsigned long long)dims[1],
             (unsigned long long)tc->ticks);
  } else if (dims[0] != tc->rows || (tc->max_run >= 0 && dims[0] <= (hsize_t)tc->max_run)) {
    problem = "does not have one row per run";
    snprintf(detail, sizeof detail, " (%llu rows, /runs has %llu)", (unsigned long long)dims[0],
             (unsigned long long)tc->rows);
  } else if (chunk_bytes > MAX_CHUNK_BYTES || (chunk_bytes > 0 && chunk[1] < 1)) {
    problem = "has chunks larger than any run";
    snprintf(detail, sizeof detail, " (%llu x %llu values; at most %.0f bytes)",
             (unsigned long long)chunk[0], (unsigned long long)chunk[1], MAX_CHUNK_BYTES);
  }
  if (problem) {
    snprintf(tc->err, tc->errlen, "%s: %s/%.64s %s%s", r->path, GROUP_TICKS, name, problem,
             detail);
    tc->failed = 1;
    return 1;
  }
  tc->ticks = dims[1];
  if (chunk_bytes > tc->chunk_bytes) tc->chunk_bytes = chunk_bytes;
  if (chunk_bytes > 0 && (!tc->chunk_ticks || chunk[1] < tc->chunk_ticks))
    tc->chunk_ticks = chunk[1];
  return 0;
}

int fmt__rr_ticks_read(fmt_results *r, hid_t fid, double *chunk_bytes, hsize_t *chunk_ticks,
                      char *err, size_t errlen) {
  *chunk_bytes = 0;
  *chunk_ticks = 0;
  if (H5Lexists(fid, GROUP_TICKS, H5P_DEFAULT) <= 0) return 0;
  hid_t g = H5Gopen2(fid, GROUP_TICKS, H5P_DEFAULT);
  if (g < 0) {
    snprintf(err, errlen, "%s: %s is not a group of datasets", r->path, GROUP_TICKS);
    return -1;
  }
  ticks_check tc = {r, 0, 0, -1, err, errlen, 0, 0, 0};
  hid_t ds = H5Dopen2(fid, DSET_RUNS, H5P_DEFAULT);
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  if (sp >= 0) H5Sget_simple_extent_dims(sp, &tc.rows, NULL);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->runs[i].run > tc.max_run) tc.max_run = r->runs[i].run;
  /* Without a "run" column a run's row is its /runs row: same count. */
  hsize_t idx = 0;
  herr_t rc = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, ticks_visit, &tc);
  H5Gclose(g);
  if (tc.failed) return -1;
  if (rc < 0) {
    snprintf(err, errlen, "%s: cannot list %s", r->path, GROUP_TICKS);
    return -1;
  }
  r->n_ticks = (int64_t)tc.ticks;
  *chunk_bytes = tc.chunk_bytes;
  *chunk_ticks = tc.chunk_ticks;
  return 0;
}

/* The stored rows a band of point p uses: its runs' own tick count, else
 * its horizon, else the file's (ticks, the /ticks width), in rows of
 * row_ticks ticks (record = every=MS). */
static int64_t point_band_ticks(const fmt_results *r, size_t p, int64_t own, int64_t ticks) {
  const fmt_point_times *pt = &r->times[p];
  if (own < 0 && isfinite(pt->horizon_ms) && isfinite(r->tick_ms) && r->tick_ms > 0 &&
      pt->horizon_ms / r->tick_ms < (double)MAX_TICKS)
    own = (int64_t)ceil(pt->horizon_ms / r->tick_ms - 1e-9);
  if (own > 0 && r->row_ticks > 1) own = (own + r->row_ticks - 1) / r->row_ticks;
  return own > 0 && own < ticks ? own : ticks;
}

/* Reading a point's band decompresses every chunk its rows touch, once per
 * row (fmt_bins_read keeps one chunk cached): refuses a file whose chunks
 * make some point cost more than MAX_BAND_OVERREAD beyond the ticks it
 * uses (a (1, 10^8) chunk under runs of 3000 ticks is 400 MB per row). */
int fmt__rr_band_work_check(const fmt_results *r, double chunk_bytes, hsize_t chunk_ticks,
                           char *err, size_t errlen) {
  if (chunk_bytes <= 0 || chunk_ticks < 1 || r->n_ticks <= 0 || r->n_points == 0) return 0;
  size_t *rows = calloc(r->n_points, sizeof *rows);
  int64_t *own = malloc(r->n_points * sizeof *own);
  int rc = -1;
  if (!rows || !own) {
    snprintf(err, errlen, "%s: out of memory checking %s", r->path, GROUP_TICKS);
    goto out;
  }
  for (size_t p = 0; p < r->n_points; p++) own[p] = -1;
  for (size_t i = 0; i < r->n_runs; i++) {
    size_t p = r->point_of_run[i];
    rows[p]++;
    if (r->runs[i].ticks > own[p]) own[p] = r->runs[i].ticks;
  }
  for (size_t p = 0; p < r->n_points; p++) {
    if (!rows[p]) continue;
    double ticks = (double)point_band_ticks(r, p, own[p], r->n_ticks);
    double chunks = ceil(ticks / (double)chunk_ticks);
    double work = (double)rows[p] * chunks * chunk_bytes;
    double used = (double)rows[p] * ticks * sizeof(int32_t);
    if (work - used > MAX_BAND_OVERREAD) {
      snprintf(err, errlen, "%s: %s is stored in chunks so large that plotting point %lld would "
               "decompress %.1f GB for %.0f KB of ticks; the file is damaged", r->path,
               GROUP_TICKS, (long long)r->point_ids[p], work / (1024.0 * 1024.0 * 1024.0),
               used / 1024.0);
      goto out;
    }
  }
  rc = 0;
out:
  free(rows);
  free(own);
  return rc;
}


/* ------------------------------------------------------------------------ */
/* /ticks                                                                    */
/* ------------------------------------------------------------------------ */

int fmt_metric_exists(const fmt_results *r, const char *metric) {
  char err[256];
  hid_t fid = fmt_open(r->path, H5F_ACC_RDONLY, NULL, err, sizeof err);
  if (fid < 0) return -1;
  char name[256];
  snprintf(name, sizeof name, "%s/%s", GROUP_TICKS, metric);
  int rc = H5Lexists(fid, GROUP_TICKS, H5P_DEFAULT) > 0 && H5Lexists(fid, name, H5P_DEFAULT) > 0;
  H5Fclose(fid);
  return rc;
}


void fmt_bins_free(fmt_bins *b) {
  free(b->runs);
  free(b->t_ms);
  free(b->cell);
  memset(b, 0, sizeof *b);
}

/* A decimated counter row is its window's sum (eng_metric_info.sums): made per
 * tick, as at full, so curves mean the same whatever the record mode. */
static void per_tick(const fmt_results *r, const char *metric, double *cell, size_t n) {
  if (r->row_ticks <= 1) return;
  int sums = 0;
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (!strcmp(metric, eng_metric_get_info((eng_metric)m)->name))
      sums = eng_metric_get_info((eng_metric)m)->sums;
  if (sums)
    for (size_t k = 0; k < n; k++) cell[k] /= (double)r->row_ticks;
}

/* Row `row` of ds (space sp) as the means of nbins bins of per ticks, read
 * blen ticks at a time through block. */
static int row_bins(hid_t ds, hid_t sp, int64_t row, int64_t ticks, int64_t blen, int64_t per,
                    size_t nbins, int32_t *block, double *out) {
  for (size_t k = 0; k < nbins; k++) out[k] = 0.0;
  for (int64_t t0 = 0; t0 < ticks; t0 += blen) {
    hsize_t count[2] = {1, (hsize_t)(ticks - t0 < blen ? ticks - t0 : blen)};
    hsize_t start[2] = {(hsize_t)row, (hsize_t)t0};
    hsize_t mdim = count[1];
    hid_t msp = H5Screate_simple(1, &mdim, NULL);
    int bad = msp < 0 || H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
              H5Dread(ds, H5T_NATIVE_INT32, msp, sp, H5P_DEFAULT, block) < 0;
    if (msp >= 0) H5Sclose(msp);
    if (bad) return -1;
    for (hsize_t k = 0; k < count[1]; k++) out[(size_t)((t0 + (int64_t)k) / per)] += block[k];
  }
  for (size_t k = 0; k < nbins; k++) {
    int64_t lo = (int64_t)k * per, hi = lo + per < ticks ? lo + per : ticks;
    out[k] /= (double)(hi - lo);
  }
  return 0;
}

int fmt_bins_read(fmt_bins *b, const fmt_results *r, const char *metric, size_t point_index,
                  size_t max_bins, char *err, size_t errlen) {
  memset(b, 0, sizeof *b);
  int rc = -1;
  hid_t fid = -1, ds = -1, sp = -1;
  int64_t *rows = NULL;
  int32_t *block = NULL;
  double *cell = NULL;
  char name[256];
  snprintf(name, sizeof name, "%s/%s", GROUP_TICKS, metric);

  size_t nrows = 0;
  rows = malloc((r->n_runs ? r->n_runs : 1) * sizeof *rows);
  if (!rows) goto oom;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->point_of_run[i] == point_index) rows[nrows++] = r->runs[i].run;
  qsort(rows, nrows, sizeof *rows, fmt__rr_cmp_i64);
  if (nrows == 0) {
    snprintf(err, errlen, "%s: point %lld has no finished runs", r->path,
             (long long)r->point_ids[point_index]);
    goto done;
  }

  fid = fmt_open(r->path, H5F_ACC_RDONLY, NULL, err, errlen);
  if (fid < 0) goto done;
  if (H5Lexists(fid, GROUP_TICKS, H5P_DEFAULT) <= 0 || H5Lexists(fid, name, H5P_DEFAULT) <= 0) {
    snprintf(err, errlen, "%s: no %s dataset", r->path, name);
    goto done;
  }
  /* A cache that holds one whole chunk, and reads aligned to chunks, so a
   * chunk is decompressed once per row however it is sliced; the chunk
   * size itself is bounded (ticks_visit) and so is the work
   * (fmt__rr_band_work_check). */
  hsize_t chunk[2] = {0, 0};
  ds = H5Dopen2(fid, name, H5P_DEFAULT);
  if (ds >= 0) {
    hid_t dcpl = H5Dget_create_plist(ds);
    hid_t t = H5Dget_type(ds);
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, chunk) == 2 &&
        t >= 0) {
      double bytes = (double)chunk[0] * (double)chunk[1] * (double)H5Tget_size(t);
      hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
      if (bytes <= MAX_CHUNK_BYTES && dapl >= 0 &&
          H5Pset_chunk_cache(dapl, 101, (size_t)bytes + 1, 1.0) >= 0) {
        H5Dclose(ds);
        ds = H5Dopen2(fid, name, dapl);
      } else {
        chunk[1] = 0; /* refused below */
      }
      if (dapl >= 0) H5Pclose(dapl);
    }
    if (t >= 0) H5Tclose(t);
    if (dcpl >= 0) H5Pclose(dcpl);
  }
  sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hsize_t dims[2] = {0, 0};
  hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
  H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
  if (ft >= 0) H5Tclose(ft);
  if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 2 || cls != H5T_INTEGER ||
      (chunk[0] && !chunk[1]) ||
      H5Sget_simple_extent_dims(sp, dims, NULL) != 2 || dims[1] > (hsize_t)MAX_TICKS) {
    snprintf(err, errlen, "%s: %s is not an integer (runs x ticks) dataset", r->path, name);
    goto done;
  }
  if ((hsize_t)rows[nrows - 1] >= dims[0] || rows[0] < 0) {
    snprintf(err, errlen, "%s: run %lld has no row in %s (%llu rows)", r->path,
             (long long)rows[nrows - 1], name, (unsigned long long)dims[0]);
    goto done;
  }
  /* A point whose horizon is shorter than the file's uses only its own
   * ticks (the rest of its rows is fill). */
  int64_t own = -1;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->point_of_run[i] == point_index && r->runs[i].ticks > own) own = r->runs[i].ticks;
  int64_t ticks = point_band_ticks(r, point_index, own, (int64_t)dims[1]);
  if (ticks <= 0) {
    snprintf(err, errlen, "%s: %s has no ticks", r->path, name);
    goto done;
  }
  if (max_bins == 0) max_bins = 1;
  size_t cells_cap = MAX_BAND_CELLS / nrows;
  if (cells_cap < 16) cells_cap = 16;
  if (max_bins > cells_cap) max_bins = cells_cap;
  int64_t per = (ticks + (int64_t)max_bins - 1) / (int64_t)max_bins;
  size_t nbins = (size_t)((ticks + per - 1) / per);
  b->nbins = nbins;
  b->n_runs = nrows;
  b->ticks_per_bin = per;

  /* Bin means of every run (rows x bins), filled one run at a time. */
  cell = malloc(nrows * nbins * sizeof *cell);
  int64_t blen = ticks < TICK_BLOCK ? ticks : (TICK_BLOCK / per) * per;
  if (chunk[1] && ticks >= TICK_BLOCK)
    blen = chunk[1] <= TICK_BLOCK ? (int64_t)((TICK_BLOCK / chunk[1]) * chunk[1]) : TICK_BLOCK;
  if (blen <= 0) blen = per;
  block = malloc((size_t)blen * sizeof *block);
  b->t_ms = malloc(nbins * sizeof *b->t_ms);
  if (!cell || !block || !b->t_ms) goto oom;
  b->runs = malloc(nrows * sizeof *b->runs);
  if (!b->runs) goto oom;
  size_t kept = 0;
  for (size_t i = 0; i < nrows; i++) {
    double *out = cell + kept * nbins;
    /* A run chunk never written holds nothing: a run that stores its
     * summary row alone (refine's confirmation runs). (-1 cannot tell: the
     * user-view series hold it for "no request ended".) */
    hsize_t stored = 1;
    if (chunk[0] == 1 && fmt__chunk_size_at(ds, rows[i], &stored)) {
      snprintf(err, errlen, "%s: cannot read the chunk index of %s", r->path, name);
      goto done;
    }
    if (!stored) continue;
    if (row_bins(ds, sp, rows[i], ticks, blen, per, nbins, block, out)) {
      snprintf(err, errlen, "%s: cannot read %s row %lld", r->path, name, (long long)rows[i]);
      goto done;
    }
    b->runs[kept++] = rows[i];
  }
  if (!kept) {
    snprintf(err, errlen, "%s: no run of point %lld stores %s rows", r->path,
             (long long)r->point_ids[point_index], name);
    goto done;
  }
  b->n_runs = kept;
  per_tick(r, metric, cell, kept * nbins);
  double tick = isfinite(r->row_ms) && r->row_ms > 0 ? r->row_ms
                : isfinite(r->tick_ms) && r->tick_ms > 0 ? r->tick_ms : 1.0;
  for (size_t k = 0; k < nbins; k++) {
    int64_t lo = (int64_t)k * per, hi = lo + per < ticks ? lo + per : ticks;
    b->t_ms[k] = 0.5 * (double)(lo + hi) * tick;
  }
  b->cell = cell;
  cell = NULL;
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory reading %s", r->path, name);
done:
  if (rc != 0) fmt_bins_free(b);
  free(rows);
  free(block);
  free(cell);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (fid >= 0) H5Fclose(fid);
  return rc;
}

