/*
 * reader.c — reading a stormsweep result file (SPEC §4) for the analysis.
 * This is the only analysis module that knows the HDF5 layout; the names it
 * relies on are collected below so following a layout change means editing
 * one place. The layout is documented in layout.h; this reader
 * needs from it:
 *
 *   /            attributes format = "stormsweep-results" (string) and
 *                format_version (integer, <= FMT_FORMAT_VERSION); uses
 *                tool_version, master_seed, tick_ms, complete and sweep_text
 *                (the effective sweep INI) when present
 *   /points      compound table: "point" (integer id) and one numeric column
 *                per grid axis, named by the setting key, in axis order
 *   /points_text optional: "point" and one string column per axis, the value
 *                as written ("inf", "full", "guarded"), used for labels
 *   /runs        compound table, one row per run; needs "point", "outcome"
 *                (integer, or enum on any integer: recovered = 0, slow = 1,
 *                metastable = 2, collapsed = 3, undetermined = 4) and
 *                "recovery_ms" (NaN unless recovered);
 *                uses "done" (0 = not written yet: skipped), "run" (row of
 *                /ticks; default: the row of /runs), "replicate", "seed",
 *                "passed_slo", "ticks" (the run's own tick count),
 *                "amplification", "goodput_during", "goodput_after",
 *                "peak_queue", "baseline_queue", "collapse_ms",
 *                "collapse_watch_ms" when present
 *   /ticks/<m>   int32 (runs x ticks), one per metric (queue_depth,
 *                successes, open_breakers, ...); values past a run's own
 *                tick count are ignored
 *
 * Columns are matched by name, never by position, through HDF5 compound
 * conversion, so the writer may add columns or reorder them freely.
 *
 * Damaged and hostile files: every HDF5 call is checked and every problem
 * is one line naming the file and the object ("/runs row 5: point 99 is not
 * in /points"), which the commands print before exiting 2. Before anything
 * is allocated, a table's row count must be at most SWP_MAX_RUNS and fit in
 * a quarter of physical memory; /runs memory then grows with the runs
 * actually found (a table that only declares rows costs nothing). Values
 * that later index arrays or are cast to integers are checked first: point
 * ids (whole, unique), enum axis values (an index of one of the setting's
 * names), a written row's point (in /points), outcome (0 to OUTCOME_MAX),
 * run id and a recovered run's recovery_ms (finite, >= 0). Every member of
 * /ticks must be a 2-D integer dataset with one row per /runs row and the
 * same tick count, at most 100 million, in chunks no larger than one such
 * row and not so wide that plotting a point costs far more than its ticks.
 * Root attributes n_points, n_runs, replicates and ticks, when present,
 * must agree with the tables.
 *
 * Untrusted files (issue 19): evidence is counted once — a run id or a
 * (point, replicate) pair that appears twice, more finished runs at a point
 * than the file declares, or a /runs fill value that would make unwritten
 * rows finished runs is refused; at most SWP_MAX_POINTS points; every
 * string taken from the file (names, labels, texts) must be printable
 * UTF-8 of bounded length, and a label must parse back to its /points value
 * (label_matches) or it is not shown. Rows with done = 0 are simply
 * not written yet (an interrupted sweep or a slice), never an error.
 *
 * Memory: /points and /runs are read whole into compact arrays (one small
 * row per run, in blocks of RUN_BLOCK rows through a packed buffer). /ticks
 * is never read whole: fmt_bins_read reads one run's row at a time (a block
 * of ticks at a time for very long rows) and keeps only per-bin means, so its
 * memory is O(replicates x bins + block), whatever the file size.
 *
 * Scenario times (horizon, fault start and clearance) are not columns: they
 * come from re-parsing the stored sweep text with the sweeps library (the
 * writer guarantees it parses back to the same sweep). A file whose sweep
 * text cannot be parsed is still analysed; its recovery quantiles then say
 * ">horizon" without a number.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "fmt_results.h"
#include "h5util.h"
#include "layout.h"
#include "open.h"

/* ---- layout names: owned by layout.h ---- */
#define ATTR_FORMAT FMT_ATTR_FORMAT
#define ATTR_FORMAT_VERSION FMT_ATTR_FORMAT_VERSION
#define ATTR_TOOL_VERSION FMT_ATTR_TOOL_VERSION
#define ATTR_MASTER_SEED FMT_ATTR_MASTER_SEED
#define ATTR_SWEEP_TEXT FMT_ATTR_SWEEP_TEXT
#define ATTR_TICK_MS FMT_ATTR_TICK_MS
#define ATTR_COMPLETE FMT_ATTR_COMPLETE
#define DSET_POINTS FMT_DSET_POINTS
#define DSET_POINTS_TEXT FMT_DSET_POINTS_TEXT
#define DSET_RUNS FMT_DSET_RUNS
#define GROUP_TICKS FMT_GROUP_TICKS
#define COL_POINT FMT_COL_POINT

#define ATTR_N_RUNS FMT_ATTR_N_RUNS
#define ATTR_N_POINTS FMT_ATTR_N_POINTS
#define ATTR_TICKS FMT_ATTR_TICKS
#define ATTR_REPLICATES FMT_ATTR_REPLICATES

enum { RUN_BLOCK = 4096, TICK_BLOCK = 1 << 20, MAX_BAND_CELLS = 1 << 24 };

/* Bounds that keep a damaged or hostile file from asking for absurd work:
 * no sweep has more runs than SWP_MAX_RUNS, no run more ticks than the
 * engine simulates, and no string attribute we read is anywhere near 16 MB.
 * What is read whole (/points, /runs) must also fit in a quarter of the
 * machine's memory, checked before anything is allocated. */
#define MAX_TICKS 100000000LL
#define MAX_ATTR_STRING (16u << 20)
/* Outcome codes a /runs row may hold (eng_outcome: recovered 0, slow 1,
 * metastable 2, collapsed 3); the summary counts only the ones it knows. */
#define OUTCOME_MAX (ENG_OUTCOME_COUNT - 1) /* recovered .. undetermined */
/* Strings taken from a file are printable UTF-8 of at most these bytes. */
#define MAX_NAME_BYTES 128 /* a column or dataset name */
#define MAX_LABEL_BYTES 63 /* a /points_text label (LABEL_LEN with its NUL) */
#define MAX_SHORT_TEXT 256 /* tool_version */
/* The biggest /ticks chunk: a whole row of the longest run the engine
 * simulates, as the writer stores it. */
#define MAX_CHUNK_BYTES (4.0 * (double)MAX_TICKS)
/* What reading one point's band may decompress beyond the ticks it uses:
 * chunks wider than the point's runs (a short horizon in a long file) cost
 * this much at most, so a small file cannot ask for hours of inflate. */
#define MAX_BAND_OVERREAD (256.0 * 1024.0 * 1024.0)
#define POINT_BYTES(axes) (((axes) + 1) * 2 * sizeof(double) + sizeof(fmt_point_times) + 64)
#define RUN_BYTES (sizeof(fmt_run) + sizeof(size_t) + sizeof(double) * 16)

/* ------------------------------------------------------------------------ */
/* Small HDF5 helpers                                                        */
/* ------------------------------------------------------------------------ */

static void quiet_hdf5(void) {
  /* HDF5 prints its error stack by default; our messages say it in one line. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* The description of the innermost HDF5 error on the stack (where it was
 * detected, e.g. "truncated file: eof = 5000, ..."), for the end of a
 * message; "" when there is none. */
static herr_t first_error(unsigned n, const H5E_error2_t *e, void *data) {
  char *out = data;
  if (n == 0 && e->desc) snprintf(out, 200, "%s", e->desc);
  return 0;
}

static void hdf5_reason(char *buf, size_t len) {
  char desc[200] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, desc);
  if (desc[0])
    snprintf(buf, len, " (HDF5: %s)", desc);
  else
    buf[0] = 0;
}

/* Physical memory in bytes (0 when unknown: no limit is applied). */
static double physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}

/* Refuses a table of rows x row_bytes that would not fit in a quarter of
 * memory, or more rows than any sweep has. */
static int rows_fit(const char *path, const char *table, hsize_t rows, double row_bytes,
                    char *err, size_t errlen) {
  if (rows > (hsize_t)SWP_MAX_RUNS) {
    snprintf(err, errlen, "%s: %s has %llu rows, more than any sweep has (%lld); the file is "
             "damaged", path, table, (unsigned long long)rows, (long long)SWP_MAX_RUNS);
    return -1;
  }
  double need = (double)rows * row_bytes, phys = physical_memory();
  if (phys > 0 && need > phys / 4) {
    snprintf(err, errlen,
             "%s: %s has %llu rows; reading them needs about %.1f GB, more than a quarter of "
             "this machine's %.1f GB", path, table, (unsigned long long)rows,
             need / (1024.0 * 1024.0 * 1024.0), phys / (1024.0 * 1024.0 * 1024.0));
    return -1;
  }
  return 0;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* Reads a string attribute (fixed or variable length) of obj; malloc'd or
 * NULL when absent / not a string / not printable UTF-8 of at most max
 * bytes (newlines and tabs allowed when multiline); *bad (when given) says
 * which of the last. */
static char *attr_string_raw(hid_t obj, const char *name);
static int roles_read(fmt_results *r, hid_t root);
static int rounds_read(fmt_results *r, hid_t fid, char *err, size_t errlen);

static char *attr_string(hid_t obj, const char *name, size_t max, int multiline,
                         const char **bad) {
  if (bad) *bad = NULL;
  char *s = attr_string_raw(obj, name);
  const char *problem = s ? swp_text_problem(s, max, multiline) : NULL;
  if (problem) {
    if (bad) *bad = problem;
    free(s);
    return NULL;
  }
  return s;
}

static char *attr_string_raw(hid_t obj, const char *name) {
  char *out = NULL;
  return fmt_attr_get_str(obj, name, MAX_ATTR_STRING, &out) == 0 ? out : NULL;
}

/* Reads a numeric scalar attribute as double; 0 ok, -1 absent or not a
 * number. */
static int attr_double(hid_t obj, const char *name, double *v) {
  return fmt_attr_get_num(obj, name, H5T_NATIVE_DOUBLE, v) == 0 ? 0 : -1;
}

static int attr_u64(hid_t obj, const char *name, uint64_t *v) {
  return fmt_attr_get_num(obj, name, H5T_NATIVE_ULLONG, v) == 0 ? 0 : -1;
}

/* Builds a memory enum over native long long with the names and values of
 * the file enum ft, so an enum column converts to our integer by name. */
static hid_t enum_as_llong(hid_t ft) {
  hid_t super = H5Tget_super(ft);
  /* Member values are read into a 16-byte buffer: refuse wider bases. */
  if (super < 0 || H5Tget_size(super) == 0 || H5Tget_size(super) > 16) {
    if (super >= 0) H5Tclose(super);
    return -1;
  }
  hid_t mt = H5Tenum_create(H5T_NATIVE_LLONG);
  int n = H5Tget_nmembers(ft);
  for (int i = 0; i < n && mt >= 0; i++) {
    unsigned char raw[16] = {0};
    long long value = 0;
    char *name = H5Tget_member_name(ft, (unsigned)i);
    if (!name || H5Tget_member_value(ft, (unsigned)i, raw) < 0) {
      H5free_memory(name);
      H5Tclose(mt);
      mt = -1;
      break;
    }
    /* The value is stored in the enum's base type: convert it in place. */
    unsigned char conv[64] = {0};
    memcpy(conv, raw, sizeof raw);
    if (H5Tconvert(super, H5T_NATIVE_LLONG, 1, conv, NULL, H5P_DEFAULT) >= 0)
      memcpy(&value, conv, sizeof value);
    herr_t ins = H5Tenum_insert(mt, name, &value);
    H5free_memory(name);
    if (ins < 0) { /* two names with one value (after conversion): not an outcome enum */
      H5Tclose(mt);
      mt = -1;
      break;
    }
  }
  H5Tclose(super);
  return mt;
}

/* Column of a compound file type: its member type class, or H5T_NO_CLASS
 * when absent. */
static H5T_class_t column_class(hid_t ft, const char *name, hid_t *member_type) {
  int i = H5Tget_member_index(ft, name);
  if (i < 0) return H5T_NO_CLASS;
  hid_t mt = H5Tget_member_type(ft, (unsigned)i);
  if (mt < 0) return H5T_NO_CLASS;
  H5T_class_t c = H5Tget_class(mt);
  if (member_type)
    *member_type = mt;
  else
    H5Tclose(mt);
  return c;
}

/* Adds column name to the memory compound mt at offset as (0) a long long
 * (integer and enum columns), (1) an unsigned long long (integers only) or
 * (2) a double (integer or float columns). Returns 1 if added,
 * 0 if the file lacks it, -2 if it is there but not a number, -1 on error. */
static int column_add(hid_t mt, hid_t ft, const char *name, size_t offset, int as) {
  hid_t member = -1;
  H5T_class_t c = column_class(ft, name, &member);
  if (c == H5T_NO_CLASS) return 0;
  hid_t use = -1;
  int owned = 0;
  if (c == H5T_ENUM && as == 0) {
    use = enum_as_llong(member);
    owned = 1;
  } else if (c == H5T_INTEGER || c == H5T_FLOAT) {
    use = as == 0 ? H5T_NATIVE_LLONG : as == 1 ? H5T_NATIVE_ULLONG : H5T_NATIVE_DOUBLE;
  }
  H5Tclose(member);
  if (use < 0) return -2;
  herr_t rc = H5Tinsert(mt, name, offset, use);
  if (owned) H5Tclose(use);
  return rc < 0 ? -1 : 1;
}

/* ------------------------------------------------------------------------ */
/* /points                                                                   */
/* ------------------------------------------------------------------------ */

static int cmp_id_index(const void *x, const void *y);

/* Opens a 1-D compound table; -1 with a message naming it otherwise. */
static hid_t table_open(const fmt_results *r, hid_t fid, const char *name, hid_t *ft, hid_t *sp,
                        hsize_t *rows, char *err, size_t errlen) {
  *ft = *sp = -1;
  if (H5Lexists(fid, name, H5P_DEFAULT) <= 0) {
    snprintf(err, errlen, "%s: not a stormsweep result file (no %s table)", r->path, name);
    return -1;
  }
  hid_t ds = H5Dopen2(fid, name, H5P_DEFAULT);
  *ft = ds >= 0 ? H5Dget_type(ds) : -1;
  *sp = ds >= 0 ? H5Dget_space(ds) : -1;
  if (ds < 0 || *ft < 0 || *sp < 0 || H5Tget_class(*ft) != H5T_COMPOUND ||
      H5Sget_simple_extent_ndims(*sp) != 1 || H5Sget_simple_extent_dims(*sp, rows, NULL) != 1) {
    snprintf(err, errlen, "%s: not a stormsweep result file (%s is not a 1-D table of rows)",
             r->path, name);
    if (*sp >= 0) H5Sclose(*sp);
    if (*ft >= 0) H5Tclose(*ft);
    if (ds >= 0) H5Dclose(ds);
    *ft = *sp = -1;
    return -1;
  }
  return ds;
}

static int points_read(fmt_results *r, hid_t fid, char *err, size_t errlen) {
  int rc = -1;
  hid_t ft, sp, mt = -1;
  hsize_t n = 0;
  double *row = NULL;
  int64_t *sorted = NULL;
  hid_t ds = table_open(r, fid, DSET_POINTS, &ft, &sp, &n, err, errlen);
  if (ds < 0) return -1;
  hid_t pmember = -1;
  H5T_class_t pc = column_class(ft, COL_POINT, &pmember);
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
  if (rows_fit(r->path, DSET_POINTS, n, (double)POINT_BYTES((size_t)nm), err, errlen)) goto done;
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
  qsort(sorted, np, sizeof *sorted, cmp_i64);
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

static int cmp_id_index(const void *x, const void *y) {
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
/* /runs                                                                     */
/* ------------------------------------------------------------------------ */

/* Packed buffer row for /runs: every column we use, by name. */
typedef struct run_row {
  long long run, point, replicate, done, outcome, passed_slo, ticks;
  unsigned long long seed;
  double recovery_ms, amplification, goodput_during, goodput_after, peak_queue, baseline_queue;
  double collapse_ms, collapse_watch_ms;
} run_row;

enum col_as { AS_LLONG, AS_ULLONG, AS_DOUBLE };

typedef struct run_column {
  const char *name;
  size_t offset;
  enum col_as as;
  int required;
} run_column;

#define RC(f) offsetof(run_row, f)
static const run_column run_columns[] = {
    {"run", RC(run), AS_LLONG, 0},
    {"point", RC(point), AS_LLONG, 1},
    {"replicate", RC(replicate), AS_LLONG, 0},
    {"seed", RC(seed), AS_ULLONG, 0},
    {"done", RC(done), AS_LLONG, 0},
    {"ticks", RC(ticks), AS_LLONG, 0},
    {"outcome", RC(outcome), AS_LLONG, 1},
    {"passed_slo", RC(passed_slo), AS_LLONG, 0},
    {"recovery_ms", RC(recovery_ms), AS_DOUBLE, 1},
    {"amplification", RC(amplification), AS_DOUBLE, 0},
    {"goodput_during", RC(goodput_during), AS_DOUBLE, 0},
    {"goodput_after", RC(goodput_after), AS_DOUBLE, 0},
    {"peak_queue", RC(peak_queue), AS_DOUBLE, 0},
    {"baseline_queue", RC(baseline_queue), AS_DOUBLE, 0},
    {"collapse_ms", RC(collapse_ms), AS_DOUBLE, 0},
    {"collapse_watch_ms", RC(collapse_watch_ms), AS_DOUBLE, 0},
};
enum { N_RUN_COLUMNS = sizeof run_columns / sizeof run_columns[0] };

static void run_row_clear(run_row *b) {
  memset(b, 0, sizeof *b);
  b->outcome = -1;
  b->done = 1;
  b->ticks = -1;
  b->recovery_ms = b->amplification = b->goodput_during = b->goodput_after = NAN;
  b->peak_queue = b->baseline_queue = NAN;
  b->collapse_ms = b->collapse_watch_ms = NAN;
}

/* Grows r->runs / r->point_of_run to hold one more run: memory follows the
 * runs actually found, never a row count the file merely declares. */
static int runs_reserve(fmt_results *r, size_t *cap) {
  if (r->n_runs < *cap) return 0;
  size_t n = *cap ? *cap * 2 : 1024;
  fmt_run *v = realloc(r->runs, n * sizeof *v);
  if (!v) return -1;
  r->runs = v;
  size_t *w = realloc(r->point_of_run, n * sizeof *w);
  if (!w) return -1;
  r->point_of_run = w;
  *cap = n;
  return 0;
}

/* Unwritten rows of /runs read as its fill value, so that must say "not
 * done" (a fill value of finished runs would turn one stored chunk into
 * millions of runs); without a done column every row must be written. */
static int runs_fill_check(const fmt_results *r, hid_t ds, int has_done, char *err,
                           size_t errlen) {
  hid_t dcpl = H5Dget_create_plist(ds);
  H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
  H5D_space_status_t space = H5D_SPACE_STATUS_ERROR;
  int rc = -1;
  if (dcpl < 0 || H5Pfill_value_defined(dcpl, &fv) < 0 || H5Dget_space_status(ds, &space) < 0) {
    snprintf(err, errlen, "%s: cannot read the storage properties of %s", r->path, DSET_RUNS);
  } else if (!has_done && space != H5D_SPACE_STATUS_ALLOCATED) {
    snprintf(err, errlen, "%s: %s has no 'done' column but rows that were never written (they "
             "would read as runs); the file is damaged", r->path, DSET_RUNS);
  } else if (has_done && fv == H5D_FILL_VALUE_USER_DEFINED) {
    long long done = 0;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof done);
    if (mt < 0 || H5Tinsert(mt, "done", 0, H5T_NATIVE_LLONG) < 0 ||
        H5Pget_fill_value(dcpl, mt, &done) < 0)
      snprintf(err, errlen, "%s: cannot read the fill value of %s", r->path, DSET_RUNS);
    else if (done != 0)
      snprintf(err, errlen, "%s: %s has a fill value with done = %lld: rows never written would "
               "count as finished runs; the file is damaged", r->path, DSET_RUNS, done);
    else
      rc = 0;
    if (mt >= 0) H5Tclose(mt);
  } else {
    rc = 0;
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  return rc;
}

static int cmp_i64_pair(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  if (a[0] != b[0]) return (a[0] > b[0]) - (a[0] < b[0]);
  return (a[1] > b[1]) - (a[1] < b[1]);
}

/* A run counted twice is a verdict on fake evidence: refuses a run id or a
 * (point, replicate) pair that appears twice, a replicate outside the
 * declared count, and a point with more finished runs than the file
 * declares (replicates; when the file does not say, /runs rows / points). */
static int runs_unique_check(const fmt_results *r, int has_run, int has_replicate,
                             int64_t replicates, int64_t appended, char *err, size_t errlen) {
  /* A refined file (refine appends fresh replicates R0, R0+1, ... after the
   * sweep's own rows): a point may hold its appended replicates too, never
   * more than there are appended rows. */
  int64_t limit = replicates + appended;
  size_t n = r->n_runs;
  if (n == 0) return 0;
  int64_t *v = malloc(n * 2 * sizeof *v);
  size_t *per = calloc(r->n_points, sizeof *per);
  int rc = -1;
  if (!v || !per) {
    snprintf(err, errlen, "%s: out of memory checking %s", r->path, DSET_RUNS);
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    size_t p = r->point_of_run[i];
    if (++per[p] > (size_t)limit) {
      snprintf(err, errlen, "%s: %s: point %lld has more than the %lld finished runs the file "
               "declares; the file is damaged", r->path, DSET_RUNS, (long long)r->point_ids[p],
               (long long)limit);
      goto out;
    }
  }
  if (has_replicate) {
    for (size_t i = 0; i < n; i++) {
      int64_t rep = r->runs[i].replicate;
      if (rep < 0 || rep >= limit) {
        snprintf(err, errlen, "%s: %s: point %lld has replicate %lld; the file declares %lld "
                 "replicates (0 to %lld)", r->path, DSET_RUNS, (long long)r->runs[i].point,
                 (long long)rep, (long long)limit, (long long)limit - 1);
        goto out;
      }
      v[2 * i] = (int64_t)r->point_of_run[i];
      v[2 * i + 1] = rep;
    }
    qsort(v, n, 2 * sizeof *v, cmp_i64_pair);
    for (size_t i = 1; i < n; i++)
      if (v[2 * i] == v[2 * i - 2] && v[2 * i + 1] == v[2 * i - 1]) {
        snprintf(err, errlen, "%s: %s: point %lld replicate %lld appears twice; the file is "
                 "damaged", r->path, DSET_RUNS, (long long)r->point_ids[v[2 * i]],
                 (long long)v[2 * i + 1]);
        goto out;
      }
  }
  if (has_run) {
    for (size_t i = 0; i < n; i++) v[i] = r->runs[i].run;
    qsort(v, n, sizeof *v, cmp_i64);
    for (size_t i = 1; i < n; i++)
      if (v[i] == v[i - 1]) {
        snprintf(err, errlen, "%s: %s: run id %lld appears twice; the file is damaged", r->path,
                 DSET_RUNS, (long long)v[i]);
        goto out;
      }
  }
  rc = 0;
out:
  free(v);
  free(per);
  return rc;
}

/* replicates: what the file declares (its root attribute), 0 when it does
 * not say. */
static int runs_read(fmt_results *r, hid_t fid, int64_t replicates, int refined, char *err,
                     size_t errlen) {
  int rc = -1;
  hid_t ft, sp, mt = -1, msp = -1;
  hsize_t n = 0;
  run_row *buf = NULL;
  int64_t *index = NULL;
  int has[N_RUN_COLUMNS] = {0};
  hid_t ds = table_open(r, fid, DSET_RUNS, &ft, &sp, &n, err, errlen);
  if (ds < 0) return -1;
  mt = H5Tcreate(H5T_COMPOUND, sizeof(run_row));
  if (mt < 0) goto h5fail;
  for (size_t c = 0; c < N_RUN_COLUMNS; c++) {
    const run_column *col = &run_columns[c];
    int got = column_add(mt, ft, col->name, col->offset, col->as);
    if (got == -1) goto h5fail;
    if (got != 1 && col->required) {
      snprintf(err, errlen, "%s: not a stormsweep result file (%s has no numeric '%s' column)",
               r->path, DSET_RUNS, col->name);
      goto done;
    }
    has[c] = got == 1; /* an optional column that is not a number counts as absent */
  }
  if (rows_fit(r->path, DSET_RUNS, n, (double)RUN_BYTES, err, errlen)) goto done;
  if (runs_fill_check(r, ds, has[4], err, errlen)) goto done;
  if (replicates <= 0) /* undeclared: the table's own rows per point */
    replicates = (int64_t)((n + r->n_points - 1) / (r->n_points ? r->n_points : 1));
  if (replicates <= 0) replicates = 1;
  buf = malloc(RUN_BLOCK * sizeof *buf);
  if (!buf) goto oom;
  /* Sorted (id, index) pairs when point ids are not simply their rows. */
  int ids_are_rows = 1;
  for (size_t p = 0; p < r->n_points; p++)
    if (r->point_ids[p] != (int64_t)p) ids_are_rows = 0;
  if (!ids_are_rows) {
    index = malloc((r->n_points ? r->n_points : 1) * 2 * sizeof *index);
    if (!index) goto oom;
    for (size_t p = 0; p < r->n_points; p++) {
      index[2 * p] = r->point_ids[p];
      index[2 * p + 1] = (int64_t)p;
    }
    qsort(index, r->n_points, 2 * sizeof *index, cmp_id_index);
  }
  /* Nothing stored yet (a sweep stopped before its first run, or a table
   * that only declares its rows): every row is fill, so skip reading it. */
  if (n > 0 && H5Dget_storage_size(ds) == 0) {
    r->n_skipped = (size_t)n;
    n = 0;
  }
  size_t cap = 0;
  for (hsize_t start = 0; start < n; start += RUN_BLOCK) {
    hsize_t count = n - start < RUN_BLOCK ? n - start : RUN_BLOCK;
    for (hsize_t i = 0; i < count; i++) run_row_clear(&buf[i]);
    msp = H5Screate_simple(1, &count, NULL);
    if (msp < 0 || H5Sselect_hyperslab(sp, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
        H5Dread(ds, mt, msp, sp, H5P_DEFAULT, buf) < 0)
      goto h5fail;
    H5Sclose(msp);
    msp = -1;
    for (hsize_t i = 0; i < count; i++) {
      const run_row *b = &buf[i];
      unsigned long long row = (unsigned long long)(start + i);
      if (!b->done) {
        r->n_skipped++; /* a row not written yet */
        continue;
      }
      /* A written row must be placeable: a damaged table is an error, not
       * a silently smaller sweep. */
      long p = -1;
      if (ids_are_rows) {
        if (b->point >= 0 && (unsigned long long)b->point < r->n_points) p = (long)b->point;
      } else {
        int64_t key[2] = {b->point, 0};
        int64_t *hit = bsearch(key, index, r->n_points, 2 * sizeof *index, cmp_id_index);
        if (hit) p = (long)hit[1];
      }
      if (p < 0) {
        snprintf(err, errlen, "%s: %s row %llu: point %lld is not in %s", r->path, DSET_RUNS,
                 row, (long long)b->point, DSET_POINTS);
        goto done;
      }
      if (b->outcome < ENG_OUTCOME_RECOVERED || b->outcome > OUTCOME_MAX) {
        snprintf(err, errlen, "%s: %s row %llu: outcome %lld is not an outcome code (0 to %d)",
                 r->path, DSET_RUNS, row, (long long)b->outcome, OUTCOME_MAX);
        goto done;
      }
      if (b->outcome == ENG_OUTCOME_RECOVERED && !(b->recovery_ms >= 0 && isfinite(b->recovery_ms))) {
        snprintf(err, errlen, "%s: %s row %llu: a recovered run needs a recovery_ms >= 0, got %g",
                 r->path, DSET_RUNS, row, b->recovery_ms);
        goto done;
      }
      if (has[0] && (b->run < 0 || b->run >= (long long)SWP_MAX_RUNS)) {
        snprintf(err, errlen, "%s: %s row %llu: run id %lld is out of range", r->path, DSET_RUNS,
                 row, (long long)b->run);
        goto done;
      }
      if (runs_reserve(r, &cap)) goto oom;
      fmt_run *run = &r->runs[r->n_runs];
      run->run = has[0] ? b->run : (int64_t)row;
      run->point = b->point;
      run->replicate = has[2] ? b->replicate : -1;
      run->seed = has[3] ? (uint64_t)b->seed : 0;
      run->outcome = (int32_t)b->outcome;
      run->recovery_ms = run->outcome == ENG_OUTCOME_RECOVERED ? b->recovery_ms : NAN;
      run->passed_slo = has[7] ? (b->passed_slo != 0) : -1;
      run->amplification = has[9] ? b->amplification : NAN;
      run->goodput_during = has[10] ? b->goodput_during : NAN;
      run->goodput_after = has[11] ? b->goodput_after : NAN;
      run->peak_queue = has[12] ? b->peak_queue : NAN;
      run->baseline_queue = has[13] ? b->baseline_queue : NAN;
      run->ticks = has[5] && b->ticks >= 0 && b->ticks <= MAX_TICKS ? b->ticks : -1;
      /* Hostile values read as "not seen": times are finite and >= 0. */
      run->collapse_ms = has[14] && b->collapse_ms >= 0 && isfinite(b->collapse_ms) ? b->collapse_ms : NAN;
      run->collapse_watch_ms =
          has[15] && b->collapse_watch_ms >= 0 && isfinite(b->collapse_watch_ms) ? b->collapse_watch_ms : NAN;
      r->point_of_run[r->n_runs] = (size_t)p;
      r->n_runs++;
    }
  }
  int64_t base = (int64_t)r->n_points * replicates;
  int64_t appended = refined && (int64_t)n > base ? (int64_t)n - base : 0;
  if (runs_unique_check(r, has[0], has[2], replicates, appended, err, errlen)) goto done;
  /* Callers index these even when no run is written. */
  if (!r->runs && runs_reserve(r, &cap)) goto oom;
  rc = 0;
  goto done;
h5fail:
  snprintf(err, errlen, "%s: cannot read %s", r->path, DSET_RUNS);
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory reading %s", r->path, DSET_RUNS);
done:
  free(buf);
  free(index);
  if (msp >= 0) H5Sclose(msp);
  if (mt >= 0) H5Tclose(mt);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Labels from /points_text                                                  */
/* ------------------------------------------------------------------------ */

enum { LABEL_LEN = 64 };

static void labels_free(fmt_results *r) {
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
                         double v) {
  if (swp_text_problem(label, MAX_LABEL_BYTES, 0) || !label[0]) return 0;
  double got;
  if (eng_settings_find(axis)) {
    eng_config cfg = *defaults;
    if (eng_config_set(&cfg, axis, label, NULL, 0) != 0) return 0;
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
static void labels_read(fmt_results *r, hid_t fid) {
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
    if (column_class(ft, r->axes[a], &member) != H5T_STRING) continue;
    H5Tclose(member);
    hid_t mt = H5Tcreate(H5T_COMPOUND, LABEL_LEN + 1);
    int got = H5Tinsert(mt, r->axes[a], 0, str) >= 0 &&
              H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
    H5Tclose(mt);
    if (!got) continue;
    r->labels[a] = calloc(r->n_points, sizeof *r->labels[a]);
    for (size_t p = 0; r->labels[a] && p < r->n_points; p++) {
      char *label = buf + p * (LABEL_LEN + 1);
      label[LABEL_LEN] = '\0';
      if (label_matches(&defaults, r->axes[a], label, r->values[p * r->n_axes + a]))
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
static void sweep_apply(fmt_results *r, const char *text) {
  swp_sweep sw;
  char msg[512];
  swp_sweep_init(&sw);
  if (swp_sweep_parse_string(&sw, text, "stored sweep", msg, sizeof msg) != 0) goto out;
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
  /* Labels only when the stored grid is the table's grid. */
  int same_axes = sw.n_axes == r->n_axes;
  for (size_t a = 0; same_axes && a < r->n_axes; a++)
    if (strcmp(sw.axes[a].key, r->axes[a]) != 0) same_axes = 0;
  size_t idx[SWP_MAX_AXES + 1];
  int make_labels = same_axes && !r->labels; /* /points_text wins */
  eng_config defaults;
  eng_config_defaults(&defaults);
  if (make_labels) {
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
                                          r->values[p * r->n_axes + a]))
          r->labels[a][p] = strdup(sw.axes[a].values[idx[a]]);
    }
  }
out:
  swp_sweep_free(&sw);
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

hid_t fmt_open(const char *path, unsigned flags, int *format_version, char *err,
                  size_t errlen) {
  quiet_hdf5();
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s: is a directory, not a stormsweep result file", path);
    return -1;
  }
  /* A FIFO or a device would block or stream forever. */
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: not a regular file (expected a stormsweep result file)", path);
    return -1;
  }
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  fclose(probe);
  htri_t is = H5Fis_hdf5(path);
  if (is <= 0) {
    snprintf(err, errlen, "%s: not an HDF5 file (expected a stormsweep result file)", path);
    return -1;
  }
  H5Eclear2(H5E_DEFAULT);
  hid_t fid = H5Fopen(path, flags, H5P_DEFAULT);
  if (fid < 0) {
    char why[256];
    hdf5_reason(why, sizeof why);
    if (fmt_lock_held_elsewhere(path) || strstr(why, "unable to lock file"))
      snprintf(err, errlen, "%s: another process is writing it (a sweep, resume, refine or "
               "merge); try again once it has finished", path);
    else if (fmt_journal_exists(path))
      snprintf(err, errlen, "%s: cannot open HDF5 file: damaged, but its journal %s.journal "
               "holds every committed run: 'stormsweep run ... --resume' (the command that wrote "
               "it) rebuilds it%s", path, path, why);
    else
      snprintf(err, errlen, "%s: cannot open HDF5 file%s: truncated or damaged?%s", path,
               flags == H5F_ACC_RDWR ? " for writing" : "", why);
    return -1;
  }
  hid_t root = H5Gopen2(fid, "/", H5P_DEFAULT);
  if (root < 0) {
    snprintf(err, errlen, "%s: cannot read the root group: the file is damaged", path);
    H5Fclose(fid);
    return -1;
  }
  const char *format_bad = NULL;
  char *format = attr_string(root, ATTR_FORMAT, MAX_NAME_BYTES, 0, &format_bad);
  int format_exists = H5Aexists(root, ATTR_FORMAT) > 0;
  double version = NAN;
  int has_version = attr_double(root, ATTR_FORMAT_VERSION, &version) == 0;
  H5Gclose(root);
  if (!format || strcmp(format, FMT_FORMAT_NAME) != 0) {
    if (format)
      snprintf(err, errlen, "%s: not a stormsweep result file (format is '%.100s', expected '%s')",
               path, format, FMT_FORMAT_NAME);
    else if (format_bad)
      snprintf(err, errlen, "%s: not a stormsweep result file (its '%s' attribute %s)", path,
               ATTR_FORMAT, format_bad);
    else if (format_exists)
      snprintf(err, errlen, "%s: not a stormsweep result file (its '%s' attribute is not a string)",
               path, ATTR_FORMAT);
    else
      snprintf(err, errlen, "%s: not a stormsweep result file (no '%s' attribute)", path,
               ATTR_FORMAT);
    free(format);
    H5Fclose(fid);
    return -1;
  }
  free(format);
  if (!has_version || version != floor(version) || version < 1) {
    snprintf(err, errlen, "%s: not a stormsweep result file (missing or invalid '%s')", path,
             ATTR_FORMAT_VERSION);
    H5Fclose(fid);
    return -1;
  }
  if (version > FMT_FORMAT_VERSION) {
    snprintf(err, errlen,
             "%s: format_version %.15g is newer than this stormsweep understands (%d); use a "
             "newer stormsweep",
             path, version, FMT_FORMAT_VERSION);
    H5Fclose(fid);
    return -1;
  }
  if (format_version) *format_version = (int)version;
  return fid;
}

/* Checks an optional integer root attribute against what the tables say
 * (n_points, n_runs, ticks): a mismatch means a damaged or hand-made file. */
static int attr_agrees(const fmt_results *r, hid_t root, const char *name, double actual,
                       const char *what, char *err, size_t errlen) {
  double v;
  if (attr_double(root, name, &v) != 0 || v == actual) return 0;
  snprintf(err, errlen, "%s: the '%s' attribute says %.15g but %s has %.15g; the file is damaged",
           r->path, name, v, what, actual);
  return -1;
}

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

static int ticks_read(fmt_results *r, hid_t fid, double *chunk_bytes, hsize_t *chunk_ticks,
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

/* The ticks a band of point p uses: its runs' own tick count, else its
 * horizon, else the file's (ticks, the /ticks width). */
static int64_t point_band_ticks(const fmt_results *r, size_t p, int64_t own, int64_t ticks) {
  const fmt_point_times *pt = &r->times[p];
  if (own < 0 && isfinite(pt->horizon_ms) && isfinite(r->tick_ms) && r->tick_ms > 0 &&
      pt->horizon_ms / r->tick_ms < (double)MAX_TICKS)
    own = (int64_t)ceil(pt->horizon_ms / r->tick_ms - 1e-9);
  return own > 0 && own < ticks ? own : ticks;
}

/* Reading a point's band decompresses every chunk its rows touch, once per
 * row (fmt_bins_read keeps one chunk cached): refuses a file whose chunks
 * make some point cost more than MAX_BAND_OVERREAD beyond the ticks it
 * uses (a (1, 10^8) chunk under runs of 3000 ticks is 400 MB per row). */
static int band_work_check(const fmt_results *r, double chunk_bytes, hsize_t chunk_ticks,
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

int fmt_results_read(fmt_results *r, const char *path, char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  r->tick_ms = r->slo_ms = NAN;
  r->path = strdup(path);
  if (!r->path) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  char *sweep_text = NULL;
  hid_t root = -1;
  hid_t fid = fmt_open(path, H5F_ACC_RDONLY, &r->format_version, err, errlen);
  if (fid < 0) goto fail;
  root = H5Gopen2(fid, "/", H5P_DEFAULT);
  if (root < 0) {
    snprintf(err, errlen, "%s: cannot read the root group", path);
    goto fail;
  }
  /* Decoration: a version or sweep text that is not printable text is
   * dropped, as if absent. */
  r->tool_version = attr_string(root, ATTR_TOOL_VERSION, MAX_SHORT_TEXT, 0, NULL);
  attr_u64(root, ATTR_MASTER_SEED, &r->master_seed);
  if (attr_double(root, ATTR_TICK_MS, &r->tick_ms) == 0 && !(r->tick_ms > 0 && isfinite(r->tick_ms)))
    r->tick_ms = NAN;
  double complete = NAN;
  r->complete = attr_double(root, ATTR_COMPLETE, &complete) == 0 ? complete != 0 : -1;
  sweep_text = attr_string(root, ATTR_SWEEP_TEXT, SWP_MAX_TEXT, 1, NULL);

  double reps = 0, chunk_bytes = 0;
  hsize_t chunk_ticks = 0;
  int64_t replicates = 0;
  /* refine appends fresh replicates after the sweep's own rows and records
   * its rounds under /refine (append.c). */
  int refined = H5Lexists(fid, "refine", H5P_DEFAULT) > 0;
  if (attr_double(root, ATTR_REPLICATES, &reps) == 0) {
    if (!(reps >= 1 && reps <= (double)SWP_MAX_RUNS && reps == floor(reps))) {
      snprintf(err, errlen, "%s: the '%s' attribute is %g, not a whole number from 1 to %lld",
               path, ATTR_REPLICATES, reps, (long long)SWP_MAX_RUNS);
      goto fail;
    }
    replicates = (int64_t)reps;
    r->replicates = replicates;
  }

  if (points_read(r, fid, err, errlen) != 0 ||
      runs_read(r, fid, replicates, refined, err, errlen) != 0 ||
      attr_agrees(r, root, ATTR_N_POINTS, (double)r->n_points, DSET_POINTS, err, errlen) != 0 ||
      attr_agrees(r, root, ATTR_N_RUNS, (double)(r->n_runs + r->n_skipped), DSET_RUNS, err,
                  errlen) != 0 ||
      ticks_read(r, fid, &chunk_bytes, &chunk_ticks, err, errlen) != 0 ||
      (r->n_ticks > 0 && attr_agrees(r, root, ATTR_TICKS, (double)r->n_ticks, "/ticks", err,
                                     errlen) != 0) ||
      (replicates && !refined &&
       attr_agrees(r, root, ATTR_N_RUNS, (double)r->n_points * (double)replicates,
                   "n_points x replicates", err, errlen) != 0) ||
      (replicates && refined &&
       (double)(r->n_runs + r->n_skipped) < (double)r->n_points * (double)replicates &&
       attr_agrees(r, root, ATTR_N_RUNS, (double)r->n_points * (double)replicates,
                   "at least n_points x replicates", err, errlen) != 0))
    goto fail;
  labels_read(r, fid);
  if (sweep_text) sweep_apply(r, sweep_text);
  if (roles_read(r, root)) goto oom_fail;
  if (refined && rounds_read(r, fid, err, errlen)) goto fail;
  if (band_work_check(r, chunk_bytes, chunk_ticks, err, errlen)) goto fail;
  free(sweep_text);
  H5Gclose(root);
  H5Fclose(fid);
  return 0;
oom_fail:
  snprintf(err, errlen, "%s: out of memory", path);
fail:
  free(sweep_text);
  if (root >= 0) H5Gclose(root);
  if (fid >= 0) H5Fclose(fid);
  fmt_results_free(r);
  return -1;
}

/* The role of each axis: the file's scenario_axes attribute (the sweep's
 * [sweep] overrides resolved when it was written), or for older files each
 * setting's default role. A damaged attribute falls back to the defaults. */
static int roles_read(fmt_results *r, hid_t root) {
  r->scenario = calloc(r->n_axes ? r->n_axes : 1, 1);
  if (!r->scenario) return -1;
  char *list = attr_string(root, "scenario_axes", MAX_SHORT_TEXT * 64, 0, NULL);
  for (size_t a = 0; a < r->n_axes; a++) {
    if (!list) {
      r->scenario[a] = eng_setting_role_find(r->axes[a]) == ENG_ROLE_SCENARIO;
      continue;
    }
    size_t n = strlen(r->axes[a]);
    for (const char *p = list; *p;) {
      while (*p == ' ' || *p == ',') p++;
      const char *e = p;
      while (*e && *e != ',') e++;
      if ((size_t)(e - p) == n && !strncmp(p, r->axes[a], n)) r->scenario[a] = 1;
      p = e;
    }
  }
  free(list);
  return 0;
}

/* /refine/round_start: where each refine round's rows begin. At most one
 * round per appended row; ascending, past the sweep's own rows, inside
 * /runs. */
static int rounds_read(fmt_results *r, hid_t fid, char *err, size_t errlen) {
  const char *name = "/refine/round_start";
  if (H5Lexists(fid, "/refine", H5P_DEFAULT) <= 0 || H5Lexists(fid, name, H5P_DEFAULT) <= 0)
    return 0;
  hid_t ds = H5Dopen2(fid, name, H5P_DEFAULT);
  hid_t sp = ds < 0 ? -1 : H5Dget_space(ds), ft = ds < 0 ? -1 : H5Dget_type(ds);
  hsize_t n = 0;
  size_t rows = r->n_runs + r->n_skipped;
  int ok = ds >= 0 && sp >= 0 && ft >= 0 && H5Tget_class(ft) == H5T_INTEGER &&
           H5Sget_simple_extent_ndims(sp) == 1 && H5Sget_simple_extent_dims(sp, &n, NULL) == 1 &&
           n <= rows;
  if (ok && n) {
    r->round_start = malloc((size_t)n * sizeof *r->round_start);
    ok = r->round_start && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                   r->round_start) >= 0;
    int64_t base = (int64_t)r->n_points * (r->replicates > 0 ? r->replicates : 0);
    for (hsize_t i = 0; ok && i < n; i++)
      ok = r->round_start[i] >= base && r->round_start[i] <= (int64_t)rows &&
           (i == 0 || r->round_start[i] >= r->round_start[i - 1]);
  }
  if (ft >= 0) H5Tclose(ft);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (!ok) {
    snprintf(err, errlen, "%s: %s is not an ascending list of /runs rows past the sweep's own; "
             "the file is damaged", r->path, name);
    return -1;
  }
  r->n_rounds = (size_t)n;
  return 0;
}

int fmt_axis_is_scenario(const fmt_results *r, size_t axis) {
  return r->scenario && axis < r->n_axes && r->scenario[axis];
}

void fmt_results_free(fmt_results *r) {
  labels_free(r);
  free(r->scenario);
  if (r->axes)
    for (size_t a = 0; a < r->n_axes; a++) free(r->axes[a]);
  free(r->axes);
  free(r->path);
  free(r->tool_version);
  free(r->point_ids);
  free(r->values);
  free(r->times);
  free(r->runs);
  free(r->point_of_run);
  free(r->round_start);
  memset(r, 0, sizeof *r);
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
  free(b->t_ms);
  free(b->cell);
  memset(b, 0, sizeof *b);
}

int fmt_bins_read(fmt_bins *b, const fmt_results *r, const char *metric, size_t point_index,
                  size_t max_bins, char *err, size_t errlen) {
  memset(b, 0, sizeof *b);
  int rc = -1;
  hid_t fid = -1, ds = -1, sp = -1, msp = -1;
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
  qsort(rows, nrows, sizeof *rows, cmp_i64);
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
   * (band_work_check). */
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
  for (size_t i = 0; i < nrows; i++) {
    double *out = cell + i * nbins;
    for (size_t k = 0; k < nbins; k++) out[k] = 0.0;
    for (int64_t t0 = 0; t0 < ticks; t0 += blen) {
      hsize_t count[2] = {1, (hsize_t)(ticks - t0 < blen ? ticks - t0 : blen)};
      hsize_t start[2] = {(hsize_t)rows[i], (hsize_t)t0};
      hsize_t mdim = count[1];
      msp = H5Screate_simple(1, &mdim, NULL);
      if (msp < 0 || H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
          H5Dread(ds, H5T_NATIVE_INT32, msp, sp, H5P_DEFAULT, block) < 0) {
        snprintf(err, errlen, "%s: cannot read %s row %lld", r->path, name, (long long)rows[i]);
        goto done;
      }
      H5Sclose(msp);
      msp = -1;
      for (hsize_t k = 0; k < count[1]; k++) out[(size_t)((t0 + (int64_t)k) / per)] += block[k];
    }
    for (size_t k = 0; k < nbins; k++) {
      int64_t lo = (int64_t)k * per, hi = lo + per < ticks ? lo + per : ticks;
      out[k] /= (double)(hi - lo);
    }
  }
  double tick = isfinite(r->tick_ms) && r->tick_ms > 0 ? r->tick_ms : 1.0;
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
  if (msp >= 0) H5Sclose(msp);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (fid >= 0) H5Fclose(fid);
  return rc;
}
