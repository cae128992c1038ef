/*
 * h5util.c — see h5util.h: the format library's HDF5 helpers, each check made
 * once. Reads never trust a stored shape: class, number of elements and
 * byte size are compared with what the caller's memory holds before H5Aread
 * or H5Dread touches it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
  (void)n;
  char *buf = data;
  if (!buf[0] && e->desc) snprintf(buf, 256, "%s", e->desc);
  return 0;
}

void fmt_h5_reason(char *out, size_t len) {
  char buf[256] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, buf);
  if (!buf[0]) {
    /* A later call cleared the stack; a failed write leaves its errno. */
    int e = errno;
    if (e == ENOSPC || e == EFBIG || e == EDQUOT || e == EIO)
      snprintf(buf, sizeof buf, "write failed: %s", strerror(e));
    else
      snprintf(buf, sizeof buf, "HDF5 error");
  }
  /* A failed system call's message is long ("file write failed: time = ...,
   * errno = 28, error message = 'No space left on device', ..."): only the
   * system's words are kept. */
  const char *m = strstr(buf, "error message = '");
  if (m) {
    m += strlen("error message = '");
    const char *e = strchr(m, '\'');
    int n = e ? (int)(e - m) : (int)strlen(m);
    char sys[200];
    snprintf(sys, sizeof sys, "%.*s", n, m);
    if (strstr(buf, "lock"))
      snprintf(out, len, "it is locked (%.120s): is another process writing it?", sys);
    else if (strstr(buf, "read failed"))
      snprintf(out, len, "read failed: %.200s", sys);
    else if (strstr(buf, "write failed") || strstr(buf, "truncate") || strstr(buf, "extend"))
      snprintf(out, len, "write failed: %.200s", sys);
    else
      snprintf(out, len, "%.200s", sys);
    return;
  }
  snprintf(out, len, "%s", buf);
}

void fmt_h5_quiet_begin(fmt_h5_quiet *q) {
  H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void fmt_h5_quiet_end(const fmt_h5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

hid_t fmt_h5_str_type(size_t len) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, len ? len : H5T_VARIABLE);
  return t;
}

/* ---- attributes, read ---- */

/* Opens attribute name of obj with its type and its element count: 1 absent,
 * -1 unreadable. */
static int attr_open(hid_t obj, const char *name, hid_t *a, hid_t *t, hssize_t *count) {
  *a = *t = -1;
  htri_t ex = H5Aexists(obj, name);
  if (ex == 0) return 1;
  if (ex < 0) return -1;
  *a = H5Aopen(obj, name, H5P_DEFAULT);
  if (*a < 0) return -1;
  *t = H5Aget_type(*a);
  hid_t sp = H5Aget_space(*a);
  *count = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
  int rank = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
  if (sp >= 0) H5Sclose(sp);
  if (*t < 0 || *count < 0 || rank < 0 || rank > 1) {
    if (*t >= 0) H5Tclose(*t);
    H5Aclose(*a);
    *a = *t = -1;
    return -1;
  }
  return 0;
}

static void attr_release(hid_t a, hid_t t) {
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
}

int fmt_attr_get_nums(hid_t obj, const char *name, hid_t mem_type, void *v, size_t n) {
  hid_t a, t;
  hssize_t count;
  int rc = attr_open(obj, name, &a, &t, &count);
  if (rc) return rc;
  H5T_class_t cls = H5Tget_class(t);
  rc = (cls == H5T_INTEGER || cls == H5T_FLOAT) && count == (hssize_t)n &&
               H5Aread(a, mem_type, v) >= 0
           ? 0
           : -1;
  attr_release(a, t);
  return rc;
}

int fmt_attr_get_num(hid_t obj, const char *name, hid_t mem_type, void *v) {
  return fmt_attr_get_nums(obj, name, mem_type, v, 1);
}

int fmt_attr_get_str(hid_t obj, const char *name, size_t max, char **out) {
  *out = NULL;
  hid_t a, t;
  hssize_t count;
  int rc = attr_open(obj, name, &a, &t, &count);
  if (rc) return rc;
  rc = -1;
  if (H5Tget_class(t) == H5T_STRING && count == 1) {
    if (H5Tis_variable_str(t) > 0) {
      hid_t mt = fmt_h5_str_type(0);
      H5Tset_cset(mt, H5Tget_cset(t));
      char *s = NULL;
      if (H5Aread(a, mt, &s) >= 0) {
        size_t len = s ? strlen(s) : 0;
        if (len <= max) {
          *out = strdup(s ? s : "");
          rc = *out ? 0 : -1;
        }
        if (s) H5free_memory(s);
      }
      H5Tclose(mt);
    } else {
      size_t n = H5Tget_size(t);
      if (n > 0 && n <= max + 1) {
        /* One byte more than stored: a string that fills its width still
         * ends in a NUL. */
        hid_t mt = fmt_h5_str_type(n + 1);
        H5Tset_strpad(mt, H5T_STR_NULLTERM);
        char *s = calloc(n + 2, 1);
        if (s && H5Aread(a, mt, s) >= 0 && strlen(s) <= max) {
          *out = s;
          rc = 0;
        } else {
          free(s);
        }
        H5Tclose(mt);
      }
    }
  }
  attr_release(a, t);
  return rc;
}

/* ---- attributes, written ---- */

int fmt_attr_put_nums(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                      const void *v, size_t n) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return -1;
  hsize_t dim = n;
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
  hid_t a = sp < 0 ? -1 : H5Acreate2(obj, name, file_type, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, mem_type, v);
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return rc < 0 ? -1 : 0;
}

int fmt_attr_put_num(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                     const void *v) {
  return fmt_attr_put_nums(obj, name, file_type, mem_type, v, 1);
}

int fmt_attr_put_i32(hid_t o, const char *name, int32_t v) {
  return fmt_attr_put_num(o, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &v);
}

int fmt_attr_put_i64(hid_t o, const char *name, int64_t v) {
  return fmt_attr_put_num(o, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

int fmt_attr_put_f64(hid_t o, const char *name, double v) {
  return fmt_attr_put_num(o, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

int fmt_attr_put_str(hid_t obj, const char *name, const char *value) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return -1;
  hid_t t = fmt_h5_str_type(0), sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  const char *v = value ? value : "";
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, &v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

int fmt_attr_put_strs(hid_t obj, const char *name, const char *const *values, size_t n) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return -1;
  hsize_t dim = n;
  hid_t t = fmt_h5_str_type(0), sp = H5Screate_simple(1, &dim, NULL);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : n ? H5Awrite(a, t, values) : 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

int fmt_attr_set_num(hid_t obj, const char *name, hid_t mem_type, const void *v) {
  hid_t a, t;
  hssize_t count;
  if (attr_open(obj, name, &a, &t, &count)) return -1;
  H5T_class_t cls = H5Tget_class(t);
  int rc = (cls == H5T_INTEGER || cls == H5T_FLOAT) && count == 1 && H5Awrite(a, mem_type, v) >= 0
               ? 0
               : -1;
  attr_release(a, t);
  return rc;
}

int fmt_attr_delete(hid_t obj, const char *name) {
  htri_t ex = H5Aexists(obj, name);
  if (ex < 0) return -1;
  return ex > 0 && H5Adelete(obj, name) < 0 ? -1 : 0;
}

/* ---- tables ---- */

static hid_t col_mem_type(const fmt_column *c) {
  switch (c->type) {
  case FMT_CT_I8: return H5Tcopy(H5T_NATIVE_INT8);
  case FMT_CT_I32: return H5Tcopy(H5T_NATIVE_INT32);
  case FMT_CT_I64: return H5Tcopy(H5T_NATIVE_INT64);
  case FMT_CT_U64: return H5Tcopy(H5T_NATIVE_UINT64);
  case FMT_CT_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
  case FMT_CT_STR: {
    hid_t s = fmt_h5_str_type(c->len);
    H5Tset_strpad(s, H5T_STR_NULLTERM);
    return s;
  }
  case FMT_CT_I8_ARRAY: {
    hsize_t n = c->len;
    return H5Tarray_create2(H5T_NATIVE_INT8, 1, &n);
  }
  }
  return -1;
}

hid_t fmt_table_type(const fmt_column *cols, size_t n, size_t row_size) {
  hid_t t = H5Tcreate(H5T_COMPOUND, row_size);
  for (size_t i = 0; t >= 0 && i < n; i++) {
    hid_t m = col_mem_type(&cols[i]);
    if (m < 0 || H5Tinsert(t, cols[i].name, cols[i].offset, m) < 0) {
      if (m >= 0) H5Tclose(m);
      H5Tclose(t);
      return -1;
    }
    H5Tclose(m);
  }
  return t;
}

int fmt_table_write(hid_t loc, const char *name, const fmt_column *cols, size_t n_cols,
                    size_t row_size, const void *rows, size_t n_rows) {
  if (H5Lexists(loc, name, H5P_DEFAULT) > 0 && H5Ldelete(loc, name, H5P_DEFAULT) < 0) return -1;
  hid_t mt = fmt_table_type(cols, n_cols, row_size);
  if (mt < 0) return -1;
  hid_t ft = H5Tcopy(mt);
  H5Tpack(ft);
  hsize_t dim = n_rows;
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t ds = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds >= 0 && (n_rows == 0 || H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0)
               ? 0
               : -1;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  H5Tclose(ft);
  H5Tclose(mt);
  return rc;
}

int fmt_table_read(hid_t loc, const char *name, const fmt_column *cols, size_t n_cols,
                   size_t row_size, size_t max_rows, void **rows, size_t *n_rows, char *why,
                   size_t whylen) {
  *rows = NULL;
  *n_rows = 0;
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return 1;
  hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
  hid_t ft = ds < 0 ? -1 : H5Dget_type(ds), sp = ds < 0 ? -1 : H5Dget_space(ds);
  hid_t dcpl = ds < 0 ? -1 : H5Dget_create_plist(ds);
  hid_t mt = -1;
  hsize_t n = 0;
  int rc = -1;
  if (ds < 0 || ft < 0 || sp < 0 || dcpl < 0 || H5Tget_class(ft) != H5T_COMPOUND ||
      H5Sget_simple_extent_ndims(sp) != 1 || H5Sget_simple_extent_dims(sp, &n, NULL) != 1) {
    snprintf(why, whylen, "%s is not a 1-D table of rows", name);
    goto out;
  }
  if (n > max_rows) {
    snprintf(why, whylen, "%s declares %llu rows, more than the %zu it can hold", name,
             (unsigned long long)n, max_rows);
    goto out;
  }
  /* Rows a table only declares cost nothing to store but would cost memory
   * to read: unfiltered, the file must hold every declared row. */
  size_t stored_row = H5Tget_size(ft);
  if (H5Pget_nfilters(dcpl) == 0 && n > 0 &&
      (double)H5Dget_storage_size(ds) < (double)n * (double)stored_row) {
    snprintf(why, whylen, "%s declares %llu rows but stores %llu bytes, less than they need",
             name, (unsigned long long)n, (unsigned long long)H5Dget_storage_size(ds));
    goto out;
  }
  /* Only the columns the file has: a table from an older writer lacks the
   * newer ones, which stay zero. */
  size_t have = 0;
  fmt_column *use = calloc(n_cols ? n_cols : 1, sizeof *use);
  if (!use) {
    snprintf(why, whylen, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n_cols; i++)
    if (H5Tget_member_index(ft, cols[i].name) >= 0) use[have++] = cols[i];
  mt = fmt_table_type(use, have, row_size);
  free(use);
  *rows = calloc(n ? (size_t)n : 1, row_size);
  if (mt < 0 || !*rows) {
    snprintf(why, whylen, "out of memory reading %s", name);
    goto out;
  }
  if (n && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, *rows) < 0) {
    snprintf(why, whylen, "cannot read %s (its columns are not of the expected types)", name);
    goto out;
  }
  *n_rows = (size_t)n;
  rc = 0;
out:
  if (rc) {
    free(*rows);
    *rows = NULL;
  }
  if (mt >= 0) H5Tclose(mt);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (ds >= 0) H5Dclose(ds);
  return rc;
}

hid_t fmt_group_open_or_create(hid_t loc, const char *name) {
  return H5Lexists(loc, name, H5P_DEFAULT) > 0
             ? H5Gopen2(loc, name, H5P_DEFAULT)
             : H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

int fmt__chunk_size_at(hid_t ds, int64_t r, hsize_t *size) {
  hsize_t offset[3] = {(hsize_t)r, 0, 0};
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  *size = 0;
  if (H5Dget_chunk_info_by_coord(ds, offset, &mask, &addr, size) < 0) return -1;
  if (addr == HADDR_UNDEF) *size = 0;
  return 0;
}

int fmt__run_chunks_none(const hid_t *ticks, const hid_t *wide, int64_t r) {
  for (int m = 0; m < ENG_M_COUNT + FMT_WIDE_COUNT; m++) {
    hid_t ds = m < ENG_M_COUNT ? ticks[m] : wide[m - ENG_M_COUNT];
    hsize_t size = 0;
    if (ds < 0) continue;
    if (fmt__chunk_size_at(ds, r, &size)) return -1;
    if (size) return 0;
  }
  return 1;
}
