/*
 * results_points.c — /points (ids whole and unique, enum axes in range),
 * the labels of /points_text (shown only when they parse back to their
 * value), and the scenario times each point's sweep text gives.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"

/* ------------------------------------------------------------------------ */
/* /points                                                                   */
/* ------------------------------------------------------------------------ */


int fmt__rr_points_read(fmt_results *r, hid_t fid, char *err, size_t errlen) {
  int rc = -1;
  hid_t ft, sp, mt = -1;
  hsize_t n = 0;
  double *row = NULL;
  int64_t *sorted = NULL;
  hid_t ds = fmt__rr_table_open(r, fid, DSET_POINTS, &ft, &sp, &n, err, errlen);
  if (ds < 0) return -1;
  hid_t pmember = -1;
  H5T_class_t pc = fmt__rr_column_class(ft, COL_POINT, &pmember);
  if (pmember >= 0) H5Tclose(pmember);
  if (pc != H5T_INTEGER && pc != H5T_FLOAT) {
    snprintf(err, errlen, "%s: not a stormsweep result file (%s has no numeric '%s' column)",
             r->path, DSET_POINTS, COL_POINT);
    goto done;
  }
  if (n == 0) {
    snprintf(err, errlen, "%s: %s has no rows (a sweep has at least one grid point)", r->path,
             DSET_POINTS);
    goto done;
  }
  int nm = H5Tget_nmembers(ft);
  if (nm < 1) goto h5fail;
  /* Summaries, effects and grids cost O(P log P) or more per axis. */
  if (n > (hsize_t)SWP_MAX_POINTS) {
    snprintf(err, errlen, "%s: %s has %llu rows, more than any sweep has (%lld); the file is "
             "damaged", r->path, DSET_POINTS, (unsigned long long)n, (long long)SWP_MAX_POINTS);
    goto done;
  }
  if (fmt__rr_rows_fit(r->path, DSET_POINTS, n, (double)POINT_BYTES((size_t)nm), err, errlen)) goto done;
  r->n_points = (size_t)n;
  r->axes = calloc((size_t)nm, sizeof *r->axes);
  if (!r->axes) goto oom;
  /* Every numeric column other than "point" is an axis, in file order. */
  for (int i = 0; i < nm; i++) {
    char *name = H5Tget_member_name(ft, (unsigned)i);
    if (!name) goto h5fail;
    hid_t mtype = H5Tget_member_type(ft, (unsigned)i);
    H5T_class_t c = mtype >= 0 ? H5Tget_class(mtype) : H5T_NO_CLASS;
    if (mtype >= 0) H5Tclose(mtype);
    if (strcmp(name, COL_POINT) != 0 && (c == H5T_FLOAT || c == H5T_INTEGER)) {
      /* Axis names reach tables, plots and JSON: printable text only. */
      const char *bad = swp_text_problem(name, MAX_NAME_BYTES, 0);
      if (bad) {
        snprintf(err, errlen, "%s: %s column %d: its name %s (at most %d bytes of printable "
                 "UTF-8)", r->path, DSET_POINTS, i, bad, MAX_NAME_BYTES);
        H5free_memory(name);
        goto done;
      }
      r->axes[r->n_axes] = strdup(name);
      if (!r->axes[r->n_axes]) {
        H5free_memory(name);
        goto oom;
      }
      r->n_axes++;
    }
    H5free_memory(name);
  }
  size_t rowsize = (r->n_axes + 1) * sizeof(double);
  mt = H5Tcreate(H5T_COMPOUND, rowsize);
  if (mt < 0 || H5Tinsert(mt, COL_POINT, 0, H5T_NATIVE_DOUBLE) < 0) goto h5fail;
  for (size_t a = 0; a < r->n_axes; a++)
    if (H5Tinsert(mt, r->axes[a], (a + 1) * sizeof(double), H5T_NATIVE_DOUBLE) < 0) goto h5fail;
  size_t np = r->n_points;
  row = malloc(np * rowsize);
  r->point_ids = malloc(np * sizeof *r->point_ids);
  r->values = malloc(np * (r->n_axes ? r->n_axes : 1) * sizeof *r->values);
  r->times = malloc(np * sizeof *r->times);
  sorted = malloc(np * sizeof *sorted);
  if (!row || !r->point_ids || !r->values || !r->times || !sorted) goto oom;
  if (H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, row) < 0) goto h5fail;
  for (size_t p = 0; p < r->n_points; p++) {
    /* Ids index arrays later: whole numbers that fit, checked before the
     * conversion (a NaN or 1e300 cast to an integer is undefined). */
    double id = row[p * (r->n_axes + 1)];
    if (!(id >= 0 && id <= (double)SWP_MAX_RUNS) || id != floor(id)) {
      snprintf(err, errlen, "%s: %s row %zu: point id %g is not a whole number from 0 to %lld",
               r->path, DSET_POINTS, p, id, (long long)SWP_MAX_RUNS);
      goto done;
    }
    r->point_ids[p] = (int64_t)id;
    sorted[p] = (int64_t)id;
    for (size_t a = 0; a < r->n_axes; a++) {
      double v = row[p * (r->n_axes + 1) + a + 1];
      /* An enum or preset axis (backoff, policy) stores the value's index:
       * anything else would index past its names. */
      const eng_setting *st = eng_settings_find(r->axes[a]);
      if (st && (st->type == ENG_SET_ENUM || st->type == ENG_SET_PRESET) && !isnan(v)) {
        size_t count = 0;
        while (st->names[count]) count++;
        if (!(v >= 0 && v < (double)count && v == floor(v))) {
          snprintf(err, errlen, "%s: %s row %zu: %s = %g is not the index of one of its %zu "
                   "names", r->path, DSET_POINTS, p, r->axes[a], v, count);
          goto done;
        }
      }
      r->values[p * r->n_axes + a] = v;
    }
    r->times[p] = (fmt_point_times){NAN, NAN, NAN, NAN};
  }
  qsort(sorted, np, sizeof *sorted, fmt__rr_cmp_i64);
  for (size_t p = 1; p < np; p++)
    if (sorted[p] == sorted[p - 1]) {
      snprintf(err, errlen, "%s: %s: point id %lld appears twice", r->path, DSET_POINTS,
               (long long)sorted[p]);
      goto done;
    }
  rc = 0;
  goto done;
h5fail:
  snprintf(err, errlen, "%s: cannot read %s", r->path, DSET_POINTS);
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory reading %s", r->path, DSET_POINTS);
done:
  free(row);
  free(sorted);
  if (mt >= 0) H5Tclose(mt);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
  return rc;
}

int fmt__rr_cmp_id_index(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

long fmt_results_point_index(const fmt_results *r, int64_t id) {
  /* Points are normally stored in id order with id == row: try that first. */
  if (id >= 0 && (uint64_t)id < r->n_points && r->point_ids[id] == id) return (long)id;
  for (size_t p = 0; p < r->n_points; p++)
    if (r->point_ids[p] == id) return (long)p;
  return -1;
}


/* ------------------------------------------------------------------------ */
/* Labels from /points_text                                                  */
/* ------------------------------------------------------------------------ */

enum { LABEL_LEN = 64 };

void fmt__rr_labels_free(fmt_results *r) {
  if (!r->labels) return;
  for (size_t a = 0; a < r->n_axes; a++) {
    if (!r->labels[a]) continue;
    for (size_t p = 0; p < r->n_points; p++) free(r->labels[a][p]);
    free(r->labels[a]);
  }
  free(r->labels);
  r->labels = NULL;
}

/* A label is shown instead of its number, so it must say the same: it is
 * printable text that parses, for its setting, back to the /points value v
 * (as the writer computed it: eng_config_get_number after setting it; for
 * a column that is no setting, as a plain number). A NaN value (a preset
 * the point's other settings changed) only needs a label that parses. */
static int label_matches(const eng_config *defaults, const char *axis, const char *label,
                         double v, int by_index) {
  if (swp_text_problem(label, MAX_LABEL_BYTES, 0) || !label[0]) return 0;
  double got;
  if (eng_settings_find(axis)) {
    eng_config cfg = *defaults;
    if (eng_config_set(&cfg, axis, label, NULL, 0) != 0) return 0;
    if (by_index) return 1; /* the number is the value's index: nothing to compare */
    got = eng_config_get_number(&cfg, axis);
  } else {
    char *end;
    got = strtod(label, &end);
    if (end == label || *end) return 0;
  }
  return isnan(v) || got == v || (isnan(got) && isnan(v));
}

/* Reads each axis's string column of /points_text (same rows as /points).
 * Optional: any problem just leaves the labels to the number (ana_value_format), and a
 * label that does not match its value (label_matches) is dropped alone. */
void fmt__rr_labels_read(fmt_results *r, hid_t fid) {
  if (r->n_axes == 0 || r->n_points == 0 || H5Lexists(fid, DSET_POINTS_TEXT, H5P_DEFAULT) <= 0)
    return;
  hid_t ds = H5Dopen2(fid, DSET_POINTS_TEXT, H5P_DEFAULT);
  hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  /* One byte more than a label may have: a longer one is seen, not cut. */
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, LABEL_LEN + 1);
  H5Tset_strpad(str, H5T_STR_NULLTERM);
  char *buf = malloc(r->n_points * (LABEL_LEN + 1));
  eng_config defaults;
  eng_config_defaults(&defaults);
  int64_t *ids = malloc(r->n_points * sizeof *ids);
  hsize_t n = 0;
  int ok = ds >= 0 && ft >= 0 && sp >= 0 && buf && ids && H5Tget_class(ft) == H5T_COMPOUND &&
           H5Sget_simple_extent_ndims(sp) == 1;
  if (ok) H5Sget_simple_extent_dims(sp, &n, NULL);
  ok = ok && n == r->n_points;
  if (ok) {
    hid_t it = H5Tcreate(H5T_COMPOUND, sizeof(int64_t));
    ok = H5Tinsert(it, COL_POINT, 0, H5T_NATIVE_INT64) >= 0 &&
         H5Dread(ds, it, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids) >= 0;
    H5Tclose(it);
    for (size_t p = 0; ok && p < r->n_points; p++)
      if (ids[p] != r->point_ids[p]) ok = 0;
  }
  if (ok) r->labels = calloc(r->n_axes, sizeof *r->labels);
  for (size_t a = 0; ok && r->labels && a < r->n_axes; a++) {
    hid_t member = -1;
    if (fmt__rr_column_class(ft, r->axes[a], &member) != H5T_STRING) continue;
    H5Tclose(member);
    hid_t mt = H5Tcreate(H5T_COMPOUND, LABEL_LEN + 1);
    int got = H5Tinsert(mt, r->axes[a], 0, str) >= 0 &&
              H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
    H5Tclose(mt);
    if (!got) continue;
    r->labels[a] = calloc(r->n_points, sizeof *r->labels[a]);
    char axis_path[600];
    snprintf(axis_path, sizeof axis_path, "/axes/%s", r->axes[a]);
    int by_index = H5Lexists(fid, "/axes", H5P_DEFAULT) > 0 &&
                   H5Lexists(fid, axis_path, H5P_DEFAULT) > 0 &&
                   H5Aexists_by_name(fid, axis_path, FMT_ATTR_NUMBERS_ARE_INDEXES, H5P_DEFAULT) > 0;
    for (size_t p = 0; r->labels[a] && p < r->n_points; p++) {
      char *label = buf + p * (LABEL_LEN + 1);
      label[LABEL_LEN] = '\0';
      if (label_matches(&defaults, r->axes[a], label, r->values[p * r->n_axes + a], by_index))
        r->labels[a][p] = strdup(label);
    }
  }
  free(buf);
  free(ids);
  H5Tclose(str);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
}

/* ------------------------------------------------------------------------ */
/* Scenario times (and labels, when /points_text is absent) from the sweep   */
/* ------------------------------------------------------------------------ */

/* The stored sweep was checked when it ran; here it is only evaluated:
 * the base config from its settings, then each point's config for the ids
 * of /points. (swp_sweep_check would also validate every grid point and
 * refuse a run bigger than this machine's memory — neither matters for
 * reading, and the first costs time on a large grid.) A text that does not
 * parse, or whose grid is not the table's, is ignored. */
void fmt__rr_sweep_apply(fmt_results *r, const char *text) {
  swp_sweep sw;
  char msg[512];
  swp_sweep_init(&sw);
  if (swp_sweep_parse_string(&sw, text, "stored sweep", msg, sizeof msg) != 0) goto out;
  if (sw.screen_up_to > r->replicates) r->screen_up_to = sw.screen_up_to;
  for (size_t i = 0; i < sw.n_settings; i++)
    if (eng_config_set(&sw.base, sw.settings[i].key, sw.settings[i].value, msg, sizeof msg))
      goto out;
  if (sw.n_axes > SWP_MAX_AXES) goto out;
  int64_t points = 1;
  for (size_t a = 0; a < sw.n_axes; a++) {
    if (!sw.axes[a].count || points > SWP_MAX_RUNS / (int64_t)sw.axes[a].count) goto out;
    points *= (int64_t)sw.axes[a].count;
  }
  sw.n_points = points;
  if (points < (int64_t)r->n_points) goto out;
  if (isnan(r->tick_ms)) r->tick_ms = sw.base.tick_ms;
  if (isnan(r->slo_ms)) r->slo_ms = sw.base.slo_ms;
  if (sw.base.graph.n_services) {
    r->services = sw.base.graph.n_services + 1;
    snprintf(r->front, sizeof r->front, "%s", sw.base.graph.front);
    for (int32_t k = 0; k < r->services; k++)
      snprintf(r->service_names[k], ENG_NAME_MAX, "%s",
               k ? sw.base.graph.svc[k - 1].name : sw.base.graph.front);
  }
  /* Labels only when the stored grid is the table's grid. */
  int same_axes = sw.n_axes == r->n_axes;
  for (size_t a = 0; same_axes && a < r->n_axes; a++)
    if (strcmp(sw.axes[a].key, r->axes[a]) != 0) same_axes = 0;
  size_t idx[SWP_MAX_AXES + 1];
  int make_labels = same_axes && !r->labels; /* /points_text wins */
  eng_config defaults;
  eng_config_defaults(&defaults);
  uint8_t by_index[SWP_MAX_AXES + 1] = {0};
  if (make_labels) {
    for (size_t a = 0; a < r->n_axes && a < SWP_MAX_AXES; a++) {
      double *nums = malloc(sw.axes[a].count * sizeof *nums);
      by_index[a] = nums ? (uint8_t)swp_axis_numbers(&sw, a, nums) : 0;
      free(nums);
    }
    r->labels = calloc(r->n_axes ? r->n_axes : 1, sizeof *r->labels);
    for (size_t a = 0; r->labels && a < r->n_axes; a++)
      r->labels[a] = calloc(r->n_points ? r->n_points : 1, sizeof *r->labels[a]);
  }
  for (size_t p = 0; p < r->n_points; p++) {
    int64_t id = r->point_ids[p];
    if (id < 0 || id >= sw.n_points) continue;
    eng_config cfg;
    if (swp_sweep_point_config(&sw, id, &cfg, msg, sizeof msg) != 0) continue;
    fmt_point_times *t = &r->times[p];
    t->horizon_ms = cfg.horizon_ms;
    t->fault_start_ms = eng_config_fault_start_ms(&cfg);
    t->fault_clear_ms = eng_config_fault_clear_ms(&cfg);
    t->censor_ms = t->horizon_ms - t->fault_clear_ms;
    if (make_labels && r->labels) {
      swp_sweep_point_indexes(&sw, id, idx);
      for (size_t a = 0; a < r->n_axes; a++)
        if (r->labels[a] && label_matches(&defaults, r->axes[a], sw.axes[a].values[idx[a]],
                                          r->values[p * r->n_axes + a], by_index[a]))
          r->labels[a][p] = strdup(sw.axes[a].values[idx[a]]);
    }
  }
out:
  swp_sweep_free(&sw);
}

