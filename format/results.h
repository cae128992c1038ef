/*
 * results.h — what the files of the results reader share (internal to the
 * format library): the names and bounds of the checks results_read.c's
 * header lists, and the readers of each part of a file.
 */
#ifndef STORMSWEEP_FMT_RESULTS_INTERNAL_H
#define STORMSWEEP_FMT_RESULTS_INTERNAL_H

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
#define MAX_TICKS ((long long)FMT_MAX_TICKS)
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

/* ---- results_util.c ---- */
void fmt__rr_quiet_hdf5(void);
void fmt__rr_hdf5_reason(char *buf, size_t len);
int fmt__rr_rows_fit(const char *path, const char *table, hsize_t rows, double row_bytes, char
    *err, size_t errlen);
int fmt__rr_cmp_i64(const void *x, const void *y);
char *fmt__rr_attr_string(hid_t obj, const char *name, size_t max, int multiline, const char
    **bad);
int fmt__rr_attr_double(hid_t obj, const char *name, double *v);
int fmt__rr_attr_u64(hid_t obj, const char *name, uint64_t *v);
H5T_class_t fmt__rr_column_class(hid_t ft, const char *name, hid_t *member_type);
int fmt__rr_column_add(hid_t mt, hid_t ft, const char *name, size_t offset, int as);
hid_t fmt__rr_table_open(const fmt_results *r, hid_t fid, const char *name, hid_t *ft, hid_t *sp,
    hsize_t *rows, char *err, size_t errlen);
int fmt__rr_attr_agrees(const fmt_results *r, hid_t root, const char *name, double actual, const
    char *what, char *err, size_t errlen);

/* ---- results_points.c ---- */
int fmt__rr_cmp_id_index(const void *x, const void *y);
int fmt__rr_points_read(fmt_results *r, hid_t fid, char *err, size_t errlen);
void fmt__rr_labels_free(fmt_results *r);
void fmt__rr_labels_read(fmt_results *r, hid_t fid);
void fmt__rr_sweep_apply(fmt_results *r, const char *text);

/* ---- results_runs.c ---- */
int fmt__rr_runs_read(fmt_results *r, hid_t fid, int64_t replicates, int refined, char *err,
    size_t errlen);

/* ---- results_ticks.c ---- */
int fmt__rr_ticks_read(fmt_results *r, hid_t fid, double *chunk_bytes, hsize_t *chunk_ticks, char
    *err, size_t errlen);
int fmt__rr_band_work_check(const fmt_results *r, double chunk_bytes, hsize_t chunk_ticks, char
    *err, size_t errlen);

#endif
