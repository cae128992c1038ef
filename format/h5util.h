/*
 * h5util.h — the HDF5 calls of the format library, hardened once: every
 * attribute read checks the attribute's class, shape and size before a byte
 * is read into memory the caller sized (an attribute stored as a 1,000-
 * element array is refused, not read into a scalar on the stack); every
 * table read checks rank and row count against a bound and against what the
 * file actually stores before allocating. Internal to the format library: no
 * other module calls H5A* or H5F* (fmt.h, fmt_results.h, fmt_store.h are
 * the ways in).
 */
#ifndef STORMSWEEP_FMT_H5UTIL_H
#define STORMSWEEP_FMT_H5UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "fmt_store.h"

/* The innermost HDF5 error on the stack in plain words ("it is locked (...):
 * is another process writing it?", "write failed: No space left on
 * device"); buf holds at least 256 bytes. */
void fmt_h5_reason(char *buf, size_t len);

/* HDF5's own error printing off around a call (per thread: the library is
 * thread-safe, and the writer runs on whichever thread holds its lock). */
typedef struct fmt_h5_quiet {
  H5E_auto2_t func;
  void *data;
} fmt_h5_quiet;
void fmt_h5_quiet_begin(fmt_h5_quiet *q);
void fmt_h5_quiet_end(const fmt_h5_quiet *q);

/* An ASCII C string type of len bytes (0: variable length). HDF5 1.10 will
 * not convert a UTF-8 string into the plain H5T_C_S1 a C reader asks for. */
hid_t fmt_h5_str_type(size_t len);

/* ---- attributes, read ----
 * Each returns 0 when read, 1 when absent, -1 when present but of the wrong
 * class, shape or size (nothing is written to *v then). */

/* A number (integer or float class), scalar or of exactly one element,
 * converted to mem_type (H5T_NATIVE_INT32, H5T_NATIVE_DOUBLE, ...). */
int fmt_attr_get_num(hid_t obj, const char *name, hid_t mem_type, void *v);
/* Exactly n numbers (a 1-D attribute of n elements, or a scalar when n = 1). */
int fmt_attr_get_nums(hid_t obj, const char *name, hid_t mem_type, void *v, size_t n);
/* A string (fixed or variable length), scalar or of one element, of at most
 * max bytes, malloc'd into *out (NUL-terminated; embedded NULs end it). */
int fmt_attr_get_str(hid_t obj, const char *name, size_t max, char **out);

/* ---- attributes, written (an existing one of that name is replaced) ---- */

int fmt_attr_put_num(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                     const void *v);
int fmt_attr_put_nums(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                      const void *v, size_t n);
int fmt_attr_put_i32(hid_t obj, const char *name, int32_t v);
int fmt_attr_put_i64(hid_t obj, const char *name, int64_t v);
int fmt_attr_put_f64(hid_t obj, const char *name, double v);
int fmt_attr_put_str(hid_t obj, const char *name, const char *v); /* NULL: "" */
int fmt_attr_put_strs(hid_t obj, const char *name, const char *const *v, size_t n);

/* Writes an existing numeric attribute in place (its storage, not the
 * object header's list of attributes, changes): the writer's "complete"
 * and "n_runs". -1 when absent or not a scalar number. */
int fmt_attr_set_num(hid_t obj, const char *name, hid_t mem_type, const void *v);
/* Removes attribute name when present. */
int fmt_attr_delete(hid_t obj, const char *name);

/* ---- tables: 1-D datasets of compound rows ---- */

/* The memory compound type of n columns in rows of row_size bytes. */
hid_t fmt_table_type(const fmt_column *cols, size_t n, size_t row_size);
/* Writes rows (n_rows of row_size bytes) as the 1-D table name of loc,
 * packed little-endian on disk; replaces an existing one. */
int fmt_table_write(hid_t loc, const char *name, const fmt_column *cols, size_t n_cols,
                    size_t row_size, const void *rows, size_t n_rows);
/* Reads the 1-D table name of loc into *rows (malloc'd, n_rows x row_size,
 * zeroed first: columns the file lacks stay 0), matching columns by name.
 * Refuses, before allocating, a dataset that is not 1-D, has more than
 * max_rows rows, or declares more rows than it stores (unfiltered storage
 * smaller than rows x the stored row size). 0, 1 absent, -1 with why. */
int fmt_table_read(hid_t loc, const char *name, const fmt_column *cols, size_t n_cols,
                   size_t row_size, size_t max_rows, void **rows, size_t *n_rows, char *why,
                   size_t whylen);

/* Opens group name of loc, creating it when absent. */
hid_t fmt_group_open_or_create(hid_t loc, const char *name);

/* The stored size of the chunk of a (runs x ...) dataset chunked a run per
 * chunk that holds run r's row: 0 when none is allocated (the row reads the
 * fill value). -1 when the chunk index cannot be read. */
int fmt__chunk_size_at(hid_t ds, int64_t r, hsize_t *size);
/* 1 when run r has no chunk in any of the ENG_M_COUNT /ticks datasets
 * ticks[] nor in the FMT_WIDE_COUNT wide[] (-1 entries: absent): a run that stores its summary
 * row alone (refine's confirmation runs); 0 when it has one; -1 when an
 * index cannot be read. */
int fmt__run_chunks_none(const hid_t *ticks, const hid_t *wide, int64_t r);

#endif
