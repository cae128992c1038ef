/*
 * fmt_store.h — the groups commands add to a result file (/refine by refine,
 * /analysis by analyze --write) and the files of their own they write
 * (boundary.h5), through the format library: the analysis describes what to
 * store as plain tables and arrays, the format library owns every HDF5 call,
 * the checks on reading it back and the writer lock on writing it.
 *
 * /refine (the first refine of a file creates it; layout in refine_store.c):
 * the design — min_pass, max_meta, alpha, beta, ratio, k, r0, slo_ms, user_slo — the state
 * after the last evaluation, the candidate table, and round_start (written by
 * the writer with each round's rows).
 */
#ifndef STORMSWEEP_FMT_STORE_H
#define STORMSWEEP_FMT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "fmt.h"

/* ---- generic content: attributes, arrays, tables ---- */

typedef enum fmt_vtype { FMT_V_TEXT, FMT_V_I32, FMT_V_I64, FMT_V_U64, FMT_V_F64 } fmt_vtype;

/* An attribute or a dense dataset: rank 0 is a scalar (data points to one
 * value; FMT_V_TEXT: to a const char *), rank 1..3 an array of dims (text:
 * const char *const [dims[0]]). A dataset may carry attributes of its own. */
typedef struct fmt_value {
  const char *name;
  fmt_vtype type;
  int rank;
  size_t dims[3];
  const void *data;
  const struct fmt_value *attrs; /* datasets only */
  size_t n_attrs;
} fmt_value;

/* A column of a table as the program holds it: a member of a C struct. */
typedef enum fmt_col_type {
  FMT_CT_I8, FMT_CT_I32, FMT_CT_I64, FMT_CT_U64, FMT_CT_F64,
  FMT_CT_STR,     /* fixed, NUL-terminated string of len bytes */
  FMT_CT_I8_ARRAY /* len int8 values */
} fmt_col_type;

typedef struct fmt_column {
  const char *name;
  size_t offset; /* in the row struct */
  fmt_col_type type;
  size_t len;    /* FMT_CT_STR, FMT_CT_I8_ARRAY */
} fmt_column;

/* A 1-D table of n_rows rows of row_size bytes, stored packed. */
typedef struct fmt_table {
  const char *name;
  const fmt_column *cols;
  size_t n_cols, row_size;
  const void *rows;
  size_t n_rows;
  const fmt_value *attrs;
  size_t n_attrs;
} fmt_table;

typedef struct fmt_group {
  const char *name;  /* "/analysis" */
  int replace;       /* remove an existing group of that name first (else update it) */
  const fmt_value *attrs;
  size_t n_attrs;
  const fmt_value *datasets;
  size_t n_datasets;
  const fmt_table *tables;
  size_t n_tables;
} fmt_group;

/* Stores group g in the result file path (checked to be one, as for
 * reading), under the file's writer lock: held when the caller already holds
 * it (refine), else taken for the call and refused while another process
 * writes the file. Tables and datasets of g replace those of the same name;
 * nothing else in the file changes. -1 with a message. */
int fmt_group_store(const char *path, fmt_lock *held, const fmt_group *g, char *err,
                    size_t errlen);
/* Writes a new HDF5 file of root attributes and groups as an fmt_outfile
 * (built beside path, renamed into place; flags FMT_OUTFILE_FORCE). */
int fmt_file_write(const char *path, unsigned flags, const fmt_value *root_attrs,
                   size_t n_root_attrs, const fmt_group *groups, size_t n_groups, char *err,
                   size_t errlen);

/* ---- /refine ---- */

typedef struct fmt_refine_cand {
  int32_t rank;   /* 1 = cheapest (shared by a robust candidate's scenario values) */
  int64_t point;
  double alpha;   /* alpha / 2^rank */
  int8_t state;   /* 0 open, 1 proven, 2 refuted */
  int64_t runs, not_passing, metastable; /* fresh runs fed to its test, bad among them */
  double llr_pass, llr_meta;
  int64_t screen_runs, screen_pass, screen_meta;
  double amplification, goodput_lost; /* its cost keys, from screening */
} fmt_refine_cand;

#define FMT_REFINE_SLO_TEXT 256

typedef struct fmt_refine_design {
  double min_pass, max_meta, alpha, beta, ratio;
  int32_t k;  /* candidates per round */
  int64_t r0; /* screening replicates */
  double slo_ms; /* the recovery SLO its runs were judged by; NaN when the file does not say
                    (written before it was recorded: then the sweep's own slo_ms) */
  /* The SLO terms on what users see its runs were judged by, as text
   * ("p99<=500ms,errors<=1%"); "" = the queue-recovery check (and in files
   * refined before the terms were recorded). Checked by the analysis layer. */
  char user_slo[FMT_REFINE_SLO_TEXT];
} fmt_refine_design;

typedef struct fmt_refine_info {
  fmt_refine_design d;
  char status[16]; /* "proven", "none", "open" */
  int64_t decided_point, decided_rank, closest_point;
  int64_t runs_appended, rounds;
  size_t n_cand;
  fmt_refine_cand *cand;
} fmt_refine_info;

/* Reads /refine: 0, 1 when the file has none (or no evaluation yet), -1 with
 * a message when it is there but malformed (an attribute of the wrong class
 * or shape, a candidate table longer than the file's points or than what it
 * stores). */
int fmt_refine_read(const char *path, fmt_refine_info *ri, char *err, size_t errlen);
/* Writes /refine's design, state and candidates (round_start is the
 * writer's), under held (the lock of the refine session) or the file's lock. */
int fmt_refine_write(const char *path, fmt_lock *held, const fmt_refine_info *ri, char *err,
                     size_t errlen);
void fmt_refine_info_free(fmt_refine_info *ri);
/* The candidate of point id, or NULL. */
const fmt_refine_cand *fmt_refine_find(const fmt_refine_info *ri, int64_t point);

#endif
