/*
 * layout.c — the result file's layout as the writer, resume and merge share
 * it: the /ticks coordinate names (format 2), the /runs row (columns, types,
 * their documentation), and reading a file back with every check of its
 * root attributes, shapes, types and storage against what this version
 * writes (layout.h says what each format version holds and documents the
 * layout in full).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "layout_h5.h"
#include "fmt.h"
#include "h5util.h"

#define FORMAT_NAME FMT_FORMAT_NAME
#define FORMAT_VERSION FMT_FORMAT_VERSION

const char *const fmt_run_coord_names[FMT_RUN_COORDS] = {"point", "replicate", "seed", "outcome"};

/* In fmt_wide order; the service series are named service_<the metric
 * each mirrors> (eng_service_trace_metric; test_format checks it). */
static const char *const wide_names[FMT_WIDE_COUNT] = {
    FMT_TICKS_SHARD_QUEUES,           "service_queue_depth",     "service_successes",
    "service_new_requests",           "service_attempts",        "service_wasted",
    "service_retries",                "service_timeouts",        "service_rejected_queue_full",
    "service_rejected_router",        "service_rejected_breaker", "service_rejected_budget",
    "service_shed",                   "service_lost",            "service_failed_requests",
    "service_in_flight",              "service_summary"};

static const char *const service_fields[FMT_SERVICE_FIELDS] = {
    "outcome", "recovery_ms", "calls",          "attempts",     "retries",
    "successes", "errors",    "rejected",       "dropped",      "shed",     "lost",
    "timeouts",
    "wasted",  "budget_refused", "breaker_refused", "failed_calls", "peak_queue",
    "busy_ppm"};

const char *fmt_service_field_name(int i) {
  return i >= 0 && i < FMT_SERVICE_FIELDS ? service_fields[i] : "";
}

static int32_t field_i32(double v) {
  if (!(v == v)) return -1; /* NaN: none */
  v = floor(v + 0.5);
  return v > INT32_MAX ? INT32_MAX : v < -1 ? -1 : (int32_t)v;
}

void fmt_service_fields(const eng_service_summary *s, int32_t out[FMT_SERVICE_FIELDS]) {
  const double v[FMT_SERVICE_FIELDS] = {
      (double)s->outcome,  s->recovery_ms,       (double)s->calls,    (double)s->attempts,
      (double)s->retries,  (double)s->successes, (double)s->errors,   (double)s->rejected,
      (double)s->dropped,  (double)s->shed,      (double)s->lost,     (double)s->timeouts,  (double)s->wasted,   (double)s->budget_refused,
      (double)s->breaker_refused, (double)s->failed_calls, s->peak_queue, s->busy_share * 1e6};
  for (int i = 0; i < FMT_SERVICE_FIELDS; i++) out[i] = field_i32(v[i]);
}

int32_t fmt_wide_rows(fmt_wide w, int32_t rows) {
  return w == FMT_WIDE_SERVICE_SUMMARY ? FMT_SERVICE_FIELDS : rows;
}

const char *fmt_wide_name(fmt_wide w) {
  return (unsigned)w < FMT_WIDE_COUNT ? wide_names[w] : "";
}

int32_t fmt_wide_width(const swp_sweep *sw, fmt_wide w) {
  if ((unsigned)w >= FMT_WIDE_COUNT) return 0;
  return w == FMT_WIDE_SHARD_QUEUES ? sw->shard_queues : sw->services;
}

const char *fmt_layout_wide_scale(fmt_wide w) {
  return w == FMT_WIDE_SHARD_QUEUES ? FMT_COORD_SHARD : FMT_COORD_SERVICE;
}

int32_t fmt_layout_wide_max(fmt_wide w) {
  return w == FMT_WIDE_SHARD_QUEUES ? ENG_MAX_SHARDS : ENG_MAX_SERVICES + 1;
}

int fmt_layout_is_fixed_coord(const char *name) {
  if (!strcmp(name, FMT_COORD_RUN) || !strcmp(name, FMT_COORD_TIME) ||
      !strcmp(name, FMT_COORD_SHARD) || !strcmp(name, FMT_COORD_SERVICE) ||
      !strcmp(name, FMT_COORD_SERVICE_FIELD))
    return 1;
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if (!strcmp(name, wide_names[w])) return 1;
  for (int i = 0; i < FMT_RUN_COORDS; i++)
    if (!strcmp(name, fmt_run_coord_names[i])) return 1;
  return 0;
}

const char *fmt_layout_axis_coord(const char *key, char *buf, size_t len) {
  int taken = fmt_layout_is_fixed_coord(key);
  for (int m = 0; m < ENG_M_COUNT && !taken; m++)
    taken = !strcmp(key, eng_metric_get_info((eng_metric)m)->name);
  snprintf(buf, len, "%s%s", taken ? "axis_" : "", key);
  return buf;
}

/* ---- /runs: one row per run ---- */


enum col_kind { K_I64, K_U64, K_I32, K_I8, K_I8_FROM_I32, K_F64, K_OUTCOME };

typedef struct column {
  const char *name;
  size_t offset;
  enum col_kind kind;
  const char *doc;
} column;

#define RS(f) (offsetof(run_row, s) + offsetof(eng_summary, f))
static const column run_columns[] = {
    {"run", offsetof(run_row, run), K_I64, "run index = point * replicates + replicate"},
    {"point", offsetof(run_row, point), K_I64, "grid point (row of /points)"},
    {"replicate", offsetof(run_row, replicate), K_I32, "replicate within the point"},
    {"seed", RS(seed), K_U64, "the run's seed: eng_seed_derive(master_seed, point, replicate); point 0 when crn = 1"},
    {"done", offsetof(run_row, done), K_I8, "1 once the run is written (0: not run yet)"},
    {"outcome", RS(outcome), K_OUTCOME, "recovered, slow, metastable or collapsed (docs/model.md)"},
    {"passed_slo", RS(passed_slo), K_I8_FROM_I32, "1: recovered within slo_ms"},
    {"recovery_ms", RS(recovery_ms), K_F64, "fault clearance to recovery in ms; NaN unless recovered"},
    {"baseline_queue", RS(baseline_queue), K_F64, "mean total queue depth over the baseline window"},
    {"recovery_threshold", RS(recovery_threshold), K_F64, "queue depth that counts as back to baseline"},
    {"peak_queue", RS(peak_queue), K_F64, "max total queue depth"},
    {"amplification", RS(amplification), K_F64, "attempts / new requests over the run"},
    {"amplification_after", RS(amplification_after), K_F64, "the same from fault clearance on"},
    {"goodput_baseline", RS(goodput_baseline), K_F64, "successes per tick over the baseline window"},
    {"goodput_during", RS(goodput_during), K_F64, "goodput during the faults / baseline goodput"},
    {"goodput_after", RS(goodput_after), K_F64, "goodput after clearance / baseline goodput"},
    {"late_queue_trend", RS(late_queue_trend), K_F64, "late-window mean queue / previous window's"},
    {"max_mean_shard_load", RS(max_mean_shard_load), K_F64, "max over shards of admissions / mean"},
    {"mean_hops", RS(mean_hops), K_F64, "router hops per admission"},
    {"little_L", RS(little_L), K_F64, "time-average attempts in system (steady window)"},
    {"little_lambda_w", RS(little_lambda_w), K_F64, "admission rate x mean time in system"},
    {"little_lambda", RS(little_lambda), K_F64, "admissions per ms over the steady window"},
    {"little_w_ms", RS(little_w_ms), K_F64, "mean time in system (ms) of attempts admitted then"},
    {"little_rel_error", RS(little_rel_error), K_F64, "|L - lambda W| / L"},
    {"keys_remapped", RS(keys_remapped), K_F64, "fraction of the key space moved by crashes"},
    {"successor_peak_load", RS(successor_peak_load), K_F64, "peak in-flight on a live shard during a crash / baseline mean"},
    {"new_requests", RS(new_requests), K_I64, "requests created"},
    {"attempts", RS(attempts), K_I64, "attempts sent"},
    {"successes", RS(successes), K_I64, "attempts answered in time"},
    {"failed_requests", RS(failed_requests), K_I64, "requests that ended without success"},
    {"events", RS(events), K_I64, "engine events processed"},
    {"ticks", offsetof(run_row, ticks), K_I32, "ticks simulated by this run"},
    {"baseline_goodput_ratio", RS(baseline_goodput_ratio), K_F64, "successes / new requests before the first fault (health)"},
    {"baseline_amplification", RS(baseline_amplification), K_F64, "attempts / new requests before the first fault (health)"},
    {"collapse_ms", RS(collapse_ms), K_F64, "time to collapse from an empty start, watched before the first fault; NaN: none, 0: never healthy"},
    {"collapse_watch_ms", RS(collapse_watch_ms), K_F64, "how long collapse was watched for (censoring time of collapse_ms)"},
    {"return_ms", RS(return_ms), K_F64, "collapse_ms to the first healthy window after it; NaN: no return"},
    {"late_goodput", RS(late_goodput), K_F64, "goodput over the last trend_ms / baseline goodput"},
    {"late_amplification", RS(late_amplification), K_F64, "attempts / new requests over the last trend_ms"},
    {"late_wasted_share", RS(late_wasted_share), K_F64, "wasted / (wasted + successes) over the last trend_ms"},
    {"drain_ms", RS(drain_ms), K_F64, "not recovered: projected ms past the horizon to drain to the threshold (inf: not shrinking)"},
    {"late_load", RS(late_load), K_F64, "attempts per tick over the last trend_ms / what the cluster serves per tick"},
    {"baseline_p50_ms", RS(user[0].p50_ms), K_F64, "median request latency, ms of the requests that ended in the baseline window (NaN: none)"},
    {"baseline_p90_ms", RS(user[0].p90_ms), K_F64, "90th percentile request latency, ms of the requests that ended in the baseline window (NaN: none)"},
    {"baseline_p99_ms", RS(user[0].p99_ms), K_F64, "99th percentile request latency, ms of the requests that ended in the baseline window (NaN: none)"},
    {"baseline_p999_ms", RS(user[0].p999_ms), K_F64, "99.9th percentile request latency, ms of the requests that ended in the baseline window (NaN: none)"},
    {"baseline_error_rate", RS(user[0].error_rate), K_F64, "failed / ended requests of the requests that ended in the baseline window (NaN: none)"},
    {"during_p50_ms", RS(user[1].p50_ms), K_F64, "median request latency, ms of the requests that ended in the faults (NaN: none)"},
    {"during_p90_ms", RS(user[1].p90_ms), K_F64, "90th percentile request latency, ms of the requests that ended in the faults (NaN: none)"},
    {"during_p99_ms", RS(user[1].p99_ms), K_F64, "99th percentile request latency, ms of the requests that ended in the faults (NaN: none)"},
    {"during_p999_ms", RS(user[1].p999_ms), K_F64, "99.9th percentile request latency, ms of the requests that ended in the faults (NaN: none)"},
    {"during_error_rate", RS(user[1].error_rate), K_F64, "failed / ended requests of the requests that ended in the faults (NaN: none)"},
    {"after_p50_ms", RS(user[2].p50_ms), K_F64, "median request latency, ms of the requests that ended in after clearance (NaN: none)"},
    {"after_p90_ms", RS(user[2].p90_ms), K_F64, "90th percentile request latency, ms of the requests that ended in after clearance (NaN: none)"},
    {"after_p99_ms", RS(user[2].p99_ms), K_F64, "99th percentile request latency, ms of the requests that ended in after clearance (NaN: none)"},
    {"after_p999_ms", RS(user[2].p999_ms), K_F64, "99.9th percentile request latency, ms of the requests that ended in after clearance (NaN: none)"},
    {"after_error_rate", RS(user[2].error_rate), K_F64, "failed / ended requests of the requests that ended in after clearance (NaN: none)"},
    {"latency_window_ms", RS(latency_window_ms), K_F64, "window of the user-view /ticks metrics (latency_*_us, error_rate_ppm)"},
    {"user_hold_ms", RS(user_hold_ms), K_F64, "hold window of user recovery, ms"},
    {"clear_ms", RS(clear_ms), K_F64, "the last fault's clearance (0 without faults), ms"},
    {"user_recovery_ms", RS(user_recovery_ms), K_F64, "clearance to when every --slo term holds again for user_hold_ms; NaN: no terms, or never"},
    {"stage", offsetof(run_row, stage), K_I32, "0: screening (the sweep's own runs); k >= 1: a fresh run appended by refine round k"},
};
#define N_RUN_COLUMNS (sizeof run_columns / sizeof run_columns[0])
/* Every eng_summary field needs a column above: a new field changes the size. */
_Static_assert(sizeof(eng_summary) == 16 + 19 * 8 + 5 * 8 + 10 * 8 + 19 * 8,
               "eng_summary changed: update run_columns and the layout comment");



char *fmt_layout_runs_doc(void) {
  size_t len = 1;
  for (size_t i = 0; i < N_RUN_COLUMNS; i++)
    len += strlen(run_columns[i].name) + strlen(run_columns[i].doc) + 3;
  char *doc = malloc(len);
  if (!doc) return NULL;
  doc[0] = 0;
  for (size_t i = 0; i < N_RUN_COLUMNS; i++) {
    strcat(doc, run_columns[i].name);
    strcat(doc, ": ");
    strcat(doc, run_columns[i].doc);
    strcat(doc, "\n");
  }
  return doc;
}

static hid_t outcome_type(hid_t base) {
  hid_t t = H5Tenum_create(base);
  for (int v = ENG_OUTCOME_RECOVERED; v < ENG_OUTCOME_COUNT; v++) {
    if (H5Tget_size(base) == 1) {
      int8_t b = (int8_t)v;
      H5Tenum_insert(t, eng_outcome_name((eng_outcome)v), &b);
    } else {
      int32_t b = v;
      H5Tenum_insert(t, eng_outcome_name((eng_outcome)v), &b);
    }
  }
  return t;
}

/* The stage column is the last: files from before it end one column earlier. */
#define N_UNSTAGED_COLUMNS (N_RUN_COLUMNS - 1)

/* Memory and packed file compound types of /runs, of its first n columns. */
static int runs_types(hid_t *mem, hid_t *file, size_t n) {
  size_t fsize = 0;
  for (size_t i = 0; i < n; i++) {
    switch (run_columns[i].kind) {
    case K_I64: case K_U64: case K_F64: fsize += 8; break;
    case K_I32: fsize += 4; break;
    default: fsize += 1; break;
    }
  }
  *mem = H5Tcreate(H5T_COMPOUND, sizeof(run_row));
  *file = H5Tcreate(H5T_COMPOUND, fsize);
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    const column *c = &run_columns[i];
    hid_t mt, ft;
    int own = 0;
    switch (c->kind) {
    case K_I64: mt = H5T_NATIVE_INT64; ft = H5T_STD_I64LE; break;
    case K_U64: mt = H5T_NATIVE_UINT64; ft = H5T_STD_U64LE; break;
    case K_I32: mt = H5T_NATIVE_INT32; ft = H5T_STD_I32LE; break;
    case K_I8: mt = H5T_NATIVE_INT8; ft = H5T_STD_I8LE; break;
    case K_I8_FROM_I32: mt = H5T_NATIVE_INT32; ft = H5T_STD_I8LE; break;
    case K_F64: mt = H5T_NATIVE_DOUBLE; ft = H5T_IEEE_F64LE; break;
    default:
      mt = outcome_type(H5T_NATIVE_INT32);
      ft = outcome_type(H5T_STD_I8LE);
      own = 1;
      break;
    }
    herr_t rc = H5Tinsert(*mem, c->name, c->offset, mt);
    if (rc >= 0) rc = H5Tinsert(*file, c->name, off, ft);
    off += H5Tget_size(ft);
    if (own) {
      H5Tclose(mt);
      H5Tclose(ft);
    }
    if (rc < 0) return -1;
  }
  return 0;
}

int fmt_layout_runs_types(hid_t *mem, hid_t *file) { return runs_types(mem, file, N_RUN_COLUMNS); }

int fmt_layout_runs_types_unstaged(hid_t *mem, hid_t *file) {
  return runs_types(mem, file, N_UNSTAGED_COLUMNS);
}

/* ---- reading a result file: the layout checks shared by resume and merge ---- */

void fmt_info_free(fmt_info *info) {
  free(info->tool_version);
  free(info->sweep_text);
  free(info->sweep_source);
  free(info->sweep_source_text);
  free(info->command_line);
  free(info->started);
  free(info->finished);
  memset(info, 0, sizeof *info);
}

/* What /ticks stores (layout.h: `record`, `rows`, `metrics`); a file
 * without `record` stores every metric at every tick. */
static int layout_read_record(hid_t f, const char *path, fmt_info *info, char *err,
                              size_t errlen) {
  char *rec = NULL;
  int has = fmt_attr_get_str(f, FMT_ATTR_RECORD, 64, &rec);
  snprintf(info->record, sizeof info->record, "full");
  info->rows = info->ticks;
  info->stored = (1u << ENG_M_COUNT) - 1;
  if (has == 1) { /* absent */
    free(rec);
    return 0;
  }
  int bad = has < 0 || !rec || swp_text_problem(rec, 63, 0);
  if (!bad) snprintf(info->record, sizeof info->record, "%s", rec);
  free(rec);
  if (!bad) bad = fmt_attr_get_num(f, FMT_ATTR_ROWS, H5T_NATIVE_INT32, &info->rows) != 0 ||
                  info->rows < 0 || info->rows > info->ticks;
  /* The stored metrics, by name, from `metrics`. */
  hid_t a = bad ? -1 : H5Aopen(f, "metrics", H5P_DEFAULT);
  hid_t sp = a < 0 ? -1 : H5Aget_space(a);
  hssize_t n = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
  if (!bad && (n < 0 || n > ENG_M_COUNT)) bad = 1;
  char *names[ENG_M_COUNT] = {0};
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, H5T_VARIABLE);
  if (!bad && n > 0 && H5Aread(a, st, names) < 0) bad = 1;
  info->stored = 0;
  for (hssize_t i = 0; !bad && i < n; i++) {
    int found = 0;
    for (int m = 0; m < ENG_M_COUNT && names[i]; m++)
      if (!strcmp(names[i], eng_metric_get_info((eng_metric)m)->name)) {
        info->stored |= 1u << m;
        found = 1;
      }
    if (!found) bad = 1;
  }
  if (!bad && n > 0 && sp >= 0) H5Dvlen_reclaim(st, sp, H5P_DEFAULT, names);
  H5Tclose(st);
  if (sp >= 0) H5Sclose(sp);
  if (a >= 0) H5Aclose(a);
  if (!bad && info->rows == 0) info->stored = 0;
  if (bad) {
    swp_seterr(err, errlen, "%s: malformed root attributes 'record', 'rows' or 'metrics'", path);
    return -1;
  }
  return 0;
}

/* Reads and checks the root attributes. */
int fmt_layout_read_info(hid_t f, const char *path, fmt_info *info, char *err,
                         size_t errlen) {
  memset(info, 0, sizeof *info);
  char *format = NULL;
  int rc = fmt_attr_get_str(f, "format", SWP_MAX_TEXT, &format);
  if (rc || strcmp(format, FORMAT_NAME)) {
    if (rc)
      swp_seterr(err, errlen, "%s: not a stormsweep result file (no 'format' attribute)", path);
    else swp_seterr(err, errlen, "%s: not a stormsweep result file (format is '%.60s', not '%s')",
                    path, format, FORMAT_NAME);
    free(format);
    return -1;
  }
  free(format);
  if (fmt_attr_get_num(f, "format_version", H5T_NATIVE_INT32, &info->format_version)) {
    swp_seterr(err, errlen, "%s: no readable 'format_version' attribute", path);
    return -1;
  }
  if (info->format_version != FORMAT_VERSION) {
    /* resume, refine and merge write into (or next to) the file: one file
     * never mixes two layouts. Reading is the readers' job (layout.h). */
    if (info->format_version >= FMT_FORMAT_VERSION_MIN_READ &&
        info->format_version < FORMAT_VERSION)
      swp_seterr(err, errlen, "%s: result file format_version %d, but this stormsweep (%s) writes "
                 "format_version %d: resume, refine and merge do not mix the two layouts "
                 "(analyze, recommend and report still read it; run the sweep again to continue "
                 "it)", path, info->format_version, STORMSWEEP_VERSION, FORMAT_VERSION);
    else
      swp_seterr(err, errlen, "%s: result file format_version %d; this stormsweep (%s) writes "
                 "format_version %d and cannot continue or merge it", path,
                 info->format_version, STORMSWEEP_VERSION, FORMAT_VERSION);
    return -1;
  }
  const char *bad = NULL;
  if (fmt_attr_get_num(f, "master_seed", H5T_NATIVE_UINT64, &info->master_seed)) bad = "master_seed";
  else if (fmt_attr_get_num(f, "n_runs", H5T_NATIVE_INT64, &info->n_runs)) bad = "n_runs";
  else if (fmt_attr_get_num(f, "n_points", H5T_NATIVE_INT64, &info->n_points)) bad = "n_points";
  else if (fmt_attr_get_num(f, "replicates", H5T_NATIVE_INT64, &info->replicates)) bad = "replicates";
  else if (fmt_attr_get_num(f, "ticks", H5T_NATIVE_INT32, &info->ticks)) bad = "ticks";
  else if (fmt_attr_get_num(f, "tick_ms", H5T_NATIVE_DOUBLE, &info->tick_ms)) bad = "tick_ms";
  else if (fmt_attr_get_num(f, "complete", H5T_NATIVE_INT32, &info->complete)) bad = "complete";
  else if (fmt_attr_get_str(f, "tool_version", SWP_MAX_TEXT, &info->tool_version)) bad = "tool_version";
  else if (fmt_attr_get_str(f, "sweep_text", SWP_MAX_TEXT, &info->sweep_text)) bad = "sweep_text";
  else if (fmt_attr_get_str(f, "sweep_source", SWP_MAX_TEXT, &info->sweep_source) < 0) bad = "sweep_source";
  else if (fmt_attr_get_str(f, "sweep_source_text", SWP_MAX_TEXT, &info->sweep_source_text) < 0)
    bad = "sweep_source_text";
  else if (fmt_attr_get_str(f, "command_line", SWP_MAX_TEXT, &info->command_line) < 0) bad = "command_line";
  if (bad) {
    swp_seterr(err, errlen, "%s: missing or malformed root attribute '%s'", path, bad);
    return -1;
  }
  int crn = fmt_attr_get_num(f, "crn", H5T_NATIVE_INT32, &info->crn);
  if (crn < 0 || info->crn < 0 || info->crn > 1) {
    swp_seterr(err, errlen, "%s: malformed root attribute 'crn'", path);
    return -1;
  }
  if (crn) info->crn = 0;
  /* The file instance its journal must name (0: a file from before it). */
  if (fmt_attr_get_num(f, FMT_ATTR_INSTANCE, H5T_NATIVE_UINT64, &info->instance) < 0) {
    swp_seterr(err, errlen, "%s: malformed root attribute '%s'", path, FMT_ATTR_INSTANCE);
    return -1;
  }
  /* Strings from a file somebody else wrote: the ones a merge needs must be
   * printable text; the descriptive ones are dropped when they are not. */
  const char *problem = swp_text_problem(info->tool_version, 256, 0);
  if (problem) bad = "tool_version";
  else if ((problem = swp_text_problem(info->sweep_text, SWP_MAX_TEXT, 1))) bad = "sweep_text";
  if (bad) {
    swp_seterr(err, errlen, "%s: root attribute '%s' %s (printable UTF-8 text only)", path, bad,
               problem);
    return -1;
  }
  char **optional[3] = {&info->sweep_source, &info->sweep_source_text, &info->command_line};
  for (int i = 0; i < 3; i++)
    if (*optional[i] && swp_text_problem(*optional[i], SWP_MAX_TEXT, i == 1)) {
      free(*optional[i]);
      *optional[i] = NULL;
    }
  int si = fmt_attr_get_num(f, "slice_index", H5T_NATIVE_INT64, &info->slice_index);
  int sc = fmt_attr_get_num(f, "slice_count", H5T_NATIVE_INT64, &info->slice_count);
  if (si < 0 || sc < 0 || si != sc) {
    swp_seterr(err, errlen, "%s: malformed slice attributes", path);
    return -1;
  }
  if (si) info->slice_index = info->slice_count = 0;
  if (info->n_points < 1 || info->replicates < 1 || info->n_runs < 1 ||
      info->n_runs > SWP_MAX_RUNS || info->n_points > info->n_runs ||
      info->n_runs / info->replicates < info->n_points ||
      info->n_points > SWP_MAX_RUNS / info->replicates) {
    swp_seterr(err, errlen,
               "%s: impossible dimensions: n_runs %lld, n_points %lld, replicates %lld", path,
               (long long)info->n_runs, (long long)info->n_points, (long long)info->replicates);
    return -1;
  }
  if (info->ticks < 1 || info->ticks > FMT_MAX_TICKS || !(info->tick_ms > 0)) {
    swp_seterr(err, errlen, "%s: impossible time axis: %d ticks of %g ms", path, info->ticks,
               info->tick_ms);
    return -1;
  }
  if (layout_read_record(f, path, info, err, errlen)) return -1;
  if (info->slice_count &&
      (info->slice_count < 1 || info->slice_index < 0 || info->slice_index >= info->slice_count)) {
    swp_seterr(err, errlen, "%s: impossible slice %lld/%lld", path,
               (long long)info->slice_index, (long long)info->slice_count);
    return -1;
  }
  return 0;
}

/* One fmt_wide dataset, when present: int32 [n_runs, rows, width] in
 * chunks of one run with our filters (*ds -1, *width 0 when absent). */
static int layout_open_wide(hid_t f, const fmt_info *info, fmt_wide w, hid_t *ds, int32_t *width,
                            char *what, size_t whatlen) {
  char name[64];
  snprintf(name, sizeof name, "ticks/%s", fmt_wide_name(w));
  if (H5Lexists(f, "ticks", H5P_DEFAULT) <= 0 || H5Lexists(f, name, H5P_DEFAULT) <= 0) return 0;
  *ds = H5Dopen2(f, name, H5P_DEFAULT);
  hid_t t = *ds < 0 ? -1 : H5Dget_type(*ds), sp = *ds < 0 ? -1 : H5Dget_space(*ds),
        dcpl = *ds < 0 ? -1 : H5Dget_create_plist(*ds);
  hsize_t dims[3] = {0, 0, 0}, chunk[3] = {0, 0, 0};
  unsigned flags, cd[8];
  size_t ncd = 8;
  int ok = t >= 0 && H5Tequal(t, H5T_STD_I32LE) > 0 && sp >= 0 &&
           H5Sget_simple_extent_ndims(sp) == 3 && H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 &&
           dims[0] == (hsize_t)info->n_runs && dims[1] == (hsize_t)fmt_wide_rows(w, info->rows) &&
           dims[2] >= 1 && dims[2] <= (hsize_t)fmt_layout_wide_max(w) && dcpl >= 0 &&
           H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 3, chunk) == 3 &&
           chunk[0] == 1 && chunk[1] == dims[1] && chunk[2] == dims[2] &&
           H5Pget_nfilters(dcpl) == 2 &&
           H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_SHUFFLE;
  ncd = 8;
  ok = ok && H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE &&
       ncd >= 1 && cd[0] == FMT_DEFLATE_LEVEL;
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (!ok) {
    snprintf(what, whatlen, "/%s is not int32 [n_runs, %s, %ss] in chunks of one run", name,
             w == FMT_WIDE_SERVICE_SUMMARY ? "fields" : "ticks", fmt_layout_wide_scale(w));
    return 1;
  }
  *width = (int32_t)dims[2];
  return 0;
}

/* Format 2's /ticks coordinates: the run scale, /ticks/outcome (opened into
 * *outcome, n_runs int8 values) and the fmt_wide datasets present. A call
 * graph's service series come together, of one width. */
static int layout_open_coords(hid_t f, const fmt_info *info, hid_t *outcome, hid_t wide[],
                              int32_t wide_n[], char *what, size_t whatlen) {
  *outcome = -1;
  for (int w = 0; w < FMT_WIDE_COUNT; w++) wide[w] = -1, wide_n[w] = 0;
  for (int i = -1; i < FMT_RUN_COORDS; i++) {
    char name[64];
    snprintf(name, sizeof name, "ticks/%s", i < 0 ? FMT_COORD_RUN : fmt_run_coord_names[i]);
    hid_t ds = H5Lexists(f, name, H5P_DEFAULT) > 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
    hid_t sp = ds < 0 ? -1 : H5Dget_space(ds);
    hsize_t dims[2] = {0, 0};
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
             H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 && dims[0] == (hsize_t)info->n_runs;
    if (sp >= 0) H5Sclose(sp);
    if (!ok) {
      snprintf(what, whatlen, "no /%s of n_runs = %lld values", name, (long long)info->n_runs);
      if (ds >= 0) H5Dclose(ds);
      return 1;
    }
    if (i == 3) *outcome = ds;
    else H5Dclose(ds);
  }
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if (layout_open_wide(f, info, (fmt_wide)w, &wide[w], &wide_n[w], what, whatlen)) return 1;
  for (int w = FMT_WIDE_SERVICE_FIRST + 1; w < FMT_WIDE_COUNT; w++)
    if (wide_n[w] != wide_n[FMT_WIDE_SERVICE_FIRST]) {
      snprintf(what, whatlen, "/ticks/%s and /ticks/%s differ in services",
               fmt_wide_name((fmt_wide)w), fmt_wide_name(FMT_WIDE_SERVICE_FIRST));
      return 1;
    }
  return 0;
}

/* Whether t is the /runs row of a file from before the stage column: it is
 * continued as it is (rows written without a stage; readers derive it). */
static int runs_unstaged(hid_t t) {
  hid_t m, f;
  if (fmt_layout_runs_types_unstaged(&m, &f)) return 0;
  int same = H5Tequal(t, f) > 0;
  H5Tclose(m);
  H5Tclose(f);
  return same;
}

/* Opens /runs, /ticks/<metric> and /timing/run_* and checks their types and
 * shapes against info; *runs_mem gets the in-memory row type. */
int fmt_layout_open_datasets(hid_t f, const char *path, const fmt_info *info, hid_t *runs,
                             hid_t *runs_mem, hid_t ticks[], hid_t *wall, hid_t *thread,
                             hid_t *outcome, hid_t wide[], int32_t wide_n[], char *err,
                             size_t errlen) {
  hid_t ft = -1;
  char what[160] = "";
  int rc = fmt_layout_runs_types(runs_mem, &ft);
  if (rc) snprintf(what, sizeof what, "building the /runs type");
  if (!rc) {
    *runs = H5Lexists(f, "runs", H5P_DEFAULT) > 0 ? H5Dopen2(f, "runs", H5P_DEFAULT) : -1;
    hid_t t = *runs < 0 ? -1 : H5Dget_type(*runs), sp = *runs < 0 ? -1 : H5Dget_space(*runs);
    hsize_t dims[2] = {0, 0};
    if (*runs < 0) snprintf(what, sizeof what, "no /runs dataset");
    else if (t < 0 || (H5Tequal(t, ft) <= 0 && !runs_unstaged(t)))
      snprintf(what, sizeof what, "/runs has another row layout than this version writes");
    else if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
             H5Sget_simple_extent_dims(sp, dims, NULL) < 0 || dims[0] != (hsize_t)info->n_runs)
      snprintf(what, sizeof what, "/runs is not a list of n_runs = %lld rows",
               (long long)info->n_runs);
    /* The writer allocates every row of /runs, uncompressed, when it
     * creates the file: a part that stores less only declares its runs
     * (and would make a merge allocate and scan them for nothing). */
    else if ((double)H5Dget_storage_size(*runs) < (double)info->n_runs * (double)H5Tget_size(t))
      snprintf(what, sizeof what, "/runs stores %llu bytes, less than its n_runs = %lld rows "
               "take", (unsigned long long)H5Dget_storage_size(*runs), (long long)info->n_runs);
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    rc = what[0] != 0;
  }
  if (ft >= 0) H5Tclose(ft);
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    char name[96];
    snprintf(name, sizeof name, "ticks/%s", eng_metric_get_info((eng_metric)m)->name);
    ticks[m] = -1;
    if (!(info->stored >> m & 1u)) continue; /* not recorded (root `record`) */
    ticks[m] = H5Lexists(f, "ticks", H5P_DEFAULT) > 0 && H5Lexists(f, name, H5P_DEFAULT) > 0
                   ? H5Dopen2(f, name, H5P_DEFAULT)
                   : -1;
    if (ticks[m] < 0) {
      snprintf(what, sizeof what, "no /%s dataset", name);
      rc = 1;
      break;
    }
    hid_t t = H5Dget_type(ticks[m]), sp = H5Dget_space(ticks[m]),
          dcpl = H5Dget_create_plist(ticks[m]);
    hsize_t dims[3] = {0, 0, 0}, chunk[3] = {0, 0, 0};
    unsigned flags, cd[8];
    size_t ncd = 8;
    int ok = t >= 0 && H5Tequal(t, H5T_STD_I32LE) > 0 && sp >= 0 &&
             H5Sget_simple_extent_ndims(sp) == 2 &&
             H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 && dims[0] == (hsize_t)info->n_runs &&
             dims[1] == (hsize_t)info->rows;
    if (!ok) {
      snprintf(what, sizeof what, "/%s is not int32 [n_runs = %lld, ticks = %d]", name,
               (long long)info->n_runs, info->rows);
    } else {
      /* Chunks are copied raw, so the filter pipeline must be ours exactly. */
      ok = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, chunk) == 2 &&
           chunk[0] == 1 && chunk[1] == (hsize_t)info->rows && H5Pget_nfilters(dcpl) == 2 &&
           H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_SHUFFLE;
      ncd = 8;
      ok = ok && H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE &&
           ncd >= 1 && cd[0] == FMT_DEFLATE_LEVEL;
      if (!ok)
        snprintf(what, sizeof what,
                 "/%s is not stored as chunks of (1, %d) with shuffle + deflate %d", name,
                 info->rows, FMT_DEFLATE_LEVEL);
    }
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    if (dcpl >= 0) H5Pclose(dcpl);
    rc = what[0] != 0;
  }
  if (!rc) {
    static const char *const names[2] = {"timing/run_wall_s", "timing/run_thread"};
    hid_t *ds[2] = {wall, thread};
    for (int i = 0; i < 2 && !rc; i++) {
      *ds[i] = H5Lexists(f, "timing", H5P_DEFAULT) > 0 && H5Lexists(f, names[i], H5P_DEFAULT) > 0
                   ? H5Dopen2(f, names[i], H5P_DEFAULT)
                   : -1;
      hid_t sp = *ds[i] < 0 ? -1 : H5Dget_space(*ds[i]);
      hsize_t dims[2] = {0, 0};
      if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
          H5Sget_simple_extent_dims(sp, dims, NULL) < 0 || dims[0] != (hsize_t)info->n_runs) {
        snprintf(what, sizeof what, "no /%s of n_runs = %lld values", names[i],
                 (long long)info->n_runs);
        rc = 1;
      }
      if (sp >= 0) H5Sclose(sp);
    }
  }
  if (!rc) rc = layout_open_coords(f, info, outcome, wide, wide_n, what, sizeof what);
  if (rc) {
    swp_seterr(err, errlen, "%s: not a stormsweep result file of this layout: %s", path, what);
    return -1;
  }
  return 0;
}

/* The done column, in blocks. */
int fmt_layout_read_done(hid_t runs, int64_t n_runs, uint8_t *done) {
  hid_t mt = H5Tcreate(H5T_COMPOUND, 1);
  H5Tinsert(mt, "done", 0, H5T_NATIVE_INT8);
  hid_t fs = H5Dget_space(runs);
  const hsize_t block = 65536;
  int rc = mt < 0 || fs < 0 ? -1 : 0;
  for (hsize_t i0 = 0; i0 < (hsize_t)n_runs && !rc; i0 += block) {
    hsize_t cnt = (hsize_t)n_runs - i0 < block ? (hsize_t)n_runs - i0 : block;
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &i0, NULL, &cnt, NULL) < 0 ||
         H5Dread(runs, mt, ms, fs, H5P_DEFAULT, done + i0) < 0;
    H5Sclose(ms);
  }
  for (int64_t r = 0; r < n_runs && !rc; r++) done[r] = done[r] != 0;
  if (fs >= 0) H5Sclose(fs);
  if (mt >= 0) H5Tclose(mt);
  return rc;
}

