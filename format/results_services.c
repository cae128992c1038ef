/*
 * results_services.c — a call graph's per-service figures for analysis:
 * each run's row of /ticks/service_summary (int32 [runs, fields, services],
 * fmt_service_fields), the fields a caller asks for by name, checked
 * against the file's own shape and its /ticks/service_field labels before
 * anything is read. A run that stores no /ticks rows (refine's
 * confirmation runs) reads -1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

void fmt_service_runs_free(fmt_service_runs *s) {
  free(s->cell);
  memset(s, 0, sizeof *s);
}

/* The index of each wanted field in the file's service_field scale. */
static int fields_map(hid_t g, const fmt_results *r, const char *const *want, int n, int *at,
                      char *err, size_t errlen) {
  hid_t ds = H5Lexists(g, FMT_COORD_SERVICE_FIELD, H5P_DEFAULT) > 0
                 ? H5Dopen2(g, FMT_COORD_SERVICE_FIELD, H5P_DEFAULT)
                 : -1;
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hsize_t nf = 0;
  char *names[64] = {0};
  hid_t st = fmt_h5_str_type(0);
  int read = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
             H5Sget_simple_extent_dims(sp, &nf, NULL) >= 0 && nf >= 1 && nf <= 64 &&
             H5Dread(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0;
  int rc = read ? (int)nf : -1;
  if (!read)
    snprintf(err, errlen, "%s: no readable %s/%s", r->path, GROUP_TICKS, FMT_COORD_SERVICE_FIELD);
  for (int i = 0; i < n && rc >= 0; i++) {
    at[i] = -1;
    for (hsize_t k = 0; k < nf; k++)
      if (names[k] && strnlen(names[k], MAX_NAME_BYTES) < MAX_NAME_BYTES &&
          !strcmp(names[k], want[i]))
        at[i] = (int)k;
    if (at[i] < 0) {
      snprintf(err, errlen, "%s: %s/%s has no field '%s'", r->path, GROUP_TICKS,
               FMT_COORD_SERVICE_FIELD, want[i]);
      rc = -1;
    }
  }
  if (read) H5Dvlen_reclaim(st, sp, H5P_DEFAULT, names);
  H5Tclose(st);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  return rc;
}

int fmt_service_runs_read(fmt_service_runs *s, const fmt_results *r, const char *const *fields,
                          int n_fields, char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  if (r->services <= 0) return 0;
  if (n_fields < 1 || n_fields > FMT_SERVICE_FIELDS) {
    snprintf(err, errlen, "%s: %d service fields asked for", r->path, n_fields);
    return -1;
  }
  int rc = -1, at[FMT_SERVICE_FIELDS];
  size_t K = (size_t)r->services;
  hid_t fid = fmt_open(r->path, H5F_ACC_RDONLY, NULL, err, errlen), g = -1, ds = -1, sp = -1,
        ms = -1;
  if (fid < 0) return -1;
  g = H5Gopen2(fid, GROUP_TICKS, H5P_DEFAULT);
  char name[64];
  snprintf(name, sizeof name, "%s", fmt_wide_name(FMT_WIDE_SERVICE_SUMMARY));
  if (g < 0 || H5Lexists(g, name, H5P_DEFAULT) <= 0) {
    rc = 1; /* a file that keeps no per-service figures (record = summary, or older) */
    goto done;
  }
  int nf = fields_map(g, r, fields, n_fields, at, err, errlen);
  if (nf < 0) goto done;
  ds = H5Dopen2(g, name, H5P_DEFAULT);
  sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hsize_t dims[3] = {0, 0, 0};
  hid_t t = ds >= 0 ? H5Dget_type(ds) : -1;
  int ok = sp >= 0 && t >= 0 && H5Tget_class(t) == H5T_INTEGER &&
           H5Sget_simple_extent_ndims(sp) == 3 && H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 &&
           dims[1] == (hsize_t)nf && dims[2] == (hsize_t)K;
  if (t >= 0) H5Tclose(t);
  for (size_t i = 0; ok && i < r->n_runs; i++)
    if (r->runs[i].run < 0 || (hsize_t)r->runs[i].run >= dims[0]) ok = 0;
  if (!ok) {
    snprintf(err, errlen, "%s: %s/%s is not int32 [runs, %d fields, %zu services] with a row "
             "for every run", r->path, GROUP_TICKS, name, nf, K);
    goto done;
  }
  s->n_services = r->services;
  s->n_fields = n_fields;
  s->n_runs = r->n_runs;
  s->cell = malloc((r->n_runs ? r->n_runs : 1) * (size_t)n_fields * K * sizeof *s->cell);
  int32_t row[FMT_SERVICE_FIELDS * (ENG_MAX_SERVICES + 1)];
  hsize_t one[3] = {1, (hsize_t)nf, K};
  ms = H5Screate_simple(3, one, NULL);
  if (!s->cell || ms < 0) {
    snprintf(err, errlen, "%s: out of memory for the per-service figures", r->path);
    goto done;
  }
  if ((size_t)nf * K > sizeof row / sizeof *row) {
    snprintf(err, errlen, "%s: %s/%s has %d fields, more than this version writes", r->path,
             GROUP_TICKS, FMT_COORD_SERVICE_FIELD, nf);
    goto done;
  }
  /* Run by run: each row is a chunk of its own, so this reads what it
   * uses, once. */
  for (size_t i = 0; i < r->n_runs; i++) {
    hsize_t start[3] = {(hsize_t)r->runs[i].run, 0, 0};
    if (H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, one, NULL) < 0 ||
        H5Dread(ds, H5T_NATIVE_INT32, ms, sp, H5P_DEFAULT, row) < 0) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      snprintf(err, errlen, "%s: reading run %lld of %s/%s: %s", r->path,
               (long long)r->runs[i].run, GROUP_TICKS, name, why);
      goto done;
    }
    int32_t *out = s->cell + i * (size_t)n_fields * K;
    for (int f = 0; f < n_fields; f++)
      memcpy(out + (size_t)f * K, row + (size_t)at[f] * K, K * sizeof *row);
  }
  rc = 0;
done:
  if (rc < 0) fmt_service_runs_free(s);
  if (ms >= 0) H5Sclose(ms);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (g >= 0) H5Gclose(g);
  H5Fclose(fid);
  return rc;
}
