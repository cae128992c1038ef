/*
 * layout_h5.h — the HDF5 side of the result file's layout (layout.c), for
 * the sweeps library only: the /runs row, and reading a file back with its
 * layout checked (shared by resume, refine, merge and the read-back).
 * Names and versions are in layout.h.
 */
#ifndef STORMSWEEP_LAYOUT_H5_H
#define STORMSWEEP_LAYOUT_H5_H

#include <hdf5.h>

#include "fmt.h"

/* The in-memory /runs row: HDF5 converts it to the packed file layout. */
typedef struct run_row {
  int64_t run, point;
  int32_t replicate, ticks;
  int8_t done;
  eng_summary s;
  int32_t stage; /* FMT_STAGE_SCREENING, or k >= 1: appended by refine round k */
} run_row;

/* Memory (run_row) and packed file compound types of /runs. */
int fmt_layout_runs_types(hid_t *mem, hid_t *file);
/* The same without the stage column (files written before it had one, and
 * the memory type of a commit: a run's stage is set when its row is made,
 * and a commit leaves it as it is). */
int fmt_layout_runs_types_unstaged(hid_t *mem, hid_t *file);
/* The /runs `columns` attribute: "name: what it is" per line (malloc'd). */
char *fmt_layout_runs_doc(void);

/* Reads the root attributes into info and checks them (format, version =
 * FMT_FORMAT_VERSION, dimensions, printable text). -1 with a message. */
int fmt_layout_read_info(hid_t f, const char *path, fmt_info *info, char *err, size_t errlen);
/* Opens /runs (with its memory row type), /ticks/<metric>, /timing/run_*,
 * /ticks/outcome and the fmt_wide datasets present (wide[w] -1 and
 * wide_n[w] 0 for one absent; FMT_WIDE_COUNT each), checking their types,
 * shapes and storage against info. -1 with a message naming what differs. */
int fmt_layout_open_datasets(hid_t f, const char *path, const fmt_info *info, hid_t *runs,
                             hid_t *runs_mem, hid_t ticks[], hid_t *wall, hid_t *thread,
                             hid_t *outcome, hid_t wide[], int32_t wide_n[], char *err,
                             size_t errlen);
/* The done column of /runs, n_runs flags (1 for any nonzero value). */
int fmt_layout_read_done(hid_t runs, int64_t n_runs, uint8_t *done);

/* /refine/round_start of file fid: where each refine round's rows begin —
 * ascending, in [base, rows], at most rows of them (*starts malloc'd, NULL
 * when none). 0, or -1 when it is malformed. */
int fmt__round_starts_read(hid_t fid, int64_t base, int64_t rows, int64_t **starts,
                           size_t *n);

#endif
