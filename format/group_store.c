/*
 * group_store.c — writing the content fmt_store.h describes (attributes,
 * dense arrays, tables) into a result file under its writer lock
 * (fmt_group_store) or into a new file of its own (fmt_file_write). The
 * analysis says what to store; only this file turns it into HDF5 objects.
 *
 * A result file with a journal (a refine session's) gets the group into
 * the journal first, as an HDF5 file image holding just that group, so a
 * file torn while /refine is written is rebuilt with it (close.c).
 */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_outfile.h"
#include "fmt_store.h"
#include "h5util.h"
#include "open.h"
#include "writer.h"

static hid_t value_file_type(fmt_vtype t) {
  switch (t) {
  case FMT_V_I32: return H5Tcopy(H5T_STD_I32LE);
  case FMT_V_I64: return H5Tcopy(H5T_STD_I64LE);
  case FMT_V_U64: return H5Tcopy(H5T_STD_U64LE);
  case FMT_V_F64: return H5Tcopy(H5T_IEEE_F64LE);
  case FMT_V_TEXT: return fmt_h5_str_type(0);
  }
  return -1;
}

static hid_t value_mem_type(fmt_vtype t) {
  switch (t) {
  case FMT_V_I32: return H5Tcopy(H5T_NATIVE_INT32);
  case FMT_V_I64: return H5Tcopy(H5T_NATIVE_INT64);
  case FMT_V_U64: return H5Tcopy(H5T_NATIVE_UINT64);
  case FMT_V_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
  case FMT_V_TEXT: return fmt_h5_str_type(0);
  }
  return -1;
}

static hid_t value_space(const fmt_value *v) {
  if (v->rank == 0) return H5Screate(H5S_SCALAR);
  hsize_t dims[3];
  for (int i = 0; i < v->rank && i < 3; i++) dims[i] = v->dims[i];
  return H5Screate_simple(v->rank, dims, NULL);
}

static int attrs_write(hid_t obj, const fmt_value *attrs, size_t n);

static int value_write(hid_t loc, const fmt_value *v, int as_attr) {
  if (v->rank < 0 || v->rank > 3) return -1;
  if (as_attr && fmt_attr_delete(loc, v->name)) return -1;
  if (!as_attr && H5Lexists(loc, v->name, H5P_DEFAULT) > 0 &&
      H5Ldelete(loc, v->name, H5P_DEFAULT) < 0)
    return -1;
  hid_t ft = value_file_type(v->type), mt = value_mem_type(v->type), sp = value_space(v);
  size_t count = 1;
  for (int i = 0; i < v->rank; i++) count *= v->dims[i];
  const char *empty = "";
  const void *data = v->data;
  if (v->type == FMT_V_TEXT && v->rank == 0)
    data = v->data ? (const void *)&v->data : (const void *)&empty;
  int rc = ft < 0 || mt < 0 || sp < 0;
  if (!rc && as_attr) {
    hid_t a = H5Acreate2(loc, v->name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
    rc = a < 0 || (count && H5Awrite(a, mt, data) < 0);
    if (a >= 0) H5Aclose(a);
  } else if (!rc) {
    hid_t d = H5Dcreate2(loc, v->name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc = d < 0 || (count && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) ||
         attrs_write(d, v->attrs, v->n_attrs);
    if (d >= 0) H5Dclose(d);
  }
  if (sp >= 0) H5Sclose(sp);
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  return rc ? -1 : 0;
}

static int attrs_write(hid_t obj, const fmt_value *attrs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (value_write(obj, &attrs[i], 1)) return -1;
  return 0;
}

/* The content of g into the open file f. */
static int group_write(hid_t f, const fmt_group *g) {
  if (g->replace && H5Lexists(f, g->name, H5P_DEFAULT) > 0 &&
      H5Ldelete(f, g->name, H5P_DEFAULT) < 0)
    return -1;
  hid_t grp = fmt_group_open_or_create(f, g->name);
  int rc = grp < 0 || attrs_write(grp, g->attrs, g->n_attrs);
  for (size_t i = 0; !rc && i < g->n_datasets; i++) rc = value_write(grp, &g->datasets[i], 0);
  for (size_t i = 0; !rc && i < g->n_tables; i++) {
    const fmt_table *t = &g->tables[i];
    rc = fmt_table_write(grp, t->name, t->cols, t->n_cols, t->row_size, t->rows, t->n_rows);
    if (!rc && t->n_attrs) {
      hid_t d = H5Dopen2(grp, t->name, H5P_DEFAULT);
      rc = d < 0 || attrs_write(d, t->attrs, t->n_attrs);
      if (d >= 0) H5Dclose(d);
    }
  }
  if (grp >= 0) H5Gclose(grp);
  return rc ? -1 : 0;
}

/* g written alone into an in-memory HDF5 file, as that file's bytes. */
static int group_image(const fmt_group *g, uint8_t **image, size_t *size) {
  *image = NULL;
  *size = 0;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  hid_t f = fapl < 0 || H5Pset_fapl_core(fapl, 65536, 0) < 0
                ? -1
                : H5Fcreate("group-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  int rc = f < 0 || group_write(f, g) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0;
  ssize_t n = rc ? -1 : H5Fget_file_image(f, NULL, 0);
  if (n > 0 && (*image = malloc((size_t)n)) && H5Fget_file_image(f, *image, (size_t)n) == n)
    *size = (size_t)n;
  else rc = -1;
  if (f >= 0) H5Fclose(f);
  if (fapl >= 0) H5Pclose(fapl);
  if (rc) {
    free(*image);
    *image = NULL;
  }
  return rc ? -1 : 0;
}

/* Journals g when the file f at path has a journal of its own instance:
 * 0 (also when it has none), -1 with a message. */
static int group_journal(hid_t f, const char *path, const fmt_group *g, char *err,
                         size_t errlen) {
  uint64_t instance = 0;
  if (!fmt_journal_exists(path) ||
      fmt_attr_get_num(f, FMT_ATTR_INSTANCE, H5T_NATIVE_UINT64, &instance))
    return 0;
  fmt_journal *j = NULL;
  int exists = 0;
  char jerr[512];
  if (fmt_journal_open(&j, path, NULL, &exists, jerr, sizeof jerr) ||
      fmt_journal_instance(j) != instance) {
    fmt_journal_close(j);
    return 0; /* another file's journal: not this write's to extend */
  }
  uint8_t *image = NULL;
  size_t size = 0;
  const char *name = g->name[0] == '/' ? g->name + 1 : g->name;
  int rc = fmt_journal_truncate_tail(j, err, errlen);
  if (!rc && group_image(g, &image, &size)) {
    swp_seterr(err, errlen, "%s: cannot journal %s", path, g->name);
    rc = -1;
  }
  if (!rc) rc = fmt_journal_put_group(j, name, image, size, err, errlen);
  free(image);
  fmt_journal_close(j);
  return rc;
}

int fmt__journal_groups_apply(hid_t f, fmt_journal *j, const char *path, char *err,
                              size_t errlen) {
  const char *names[8];
  size_t n = fmt_journal_groups(j, names, 8);
  for (size_t i = 0; i < n; i++) {
    uint8_t *image = NULL;
    size_t size = 0;
    if (fmt_journal_read_group(j, names[i], &image, &size, err, errlen) < 0) return -1;
    hid_t img = H5LTopen_file_image(image, size, 0);
    int rc = img < 0 || H5Lexists(img, names[i], H5P_DEFAULT) <= 0 ||
             (H5Lexists(f, names[i], H5P_DEFAULT) > 0 && H5Ldelete(f, names[i], H5P_DEFAULT) < 0) ||
             H5Ocopy(img, names[i], f, names[i], H5P_DEFAULT, H5P_DEFAULT) < 0;
    if (img >= 0) H5Fclose(img);
    free(image);
    if (rc) {
      swp_seterr(err, errlen, "%s: its journal's /%s does not copy into the rebuilt file", path,
                 names[i]);
      return -1;
    }
  }
  return 0;
}

int fmt_group_store(const char *path, fmt_lock *held, const fmt_group *g, char *err,
                    size_t errlen) {
  fmt_lock *own = NULL;
  if (!held && fmt_lock_acquire(&own, path, err, errlen)) return -1;
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = -1;
  hid_t f = fmt_open(path, H5F_ACC_RDWR, NULL, err, errlen);
  if (f >= 0 && group_journal(f, path, g, err, errlen)) {
    H5Fclose(f);
    f = -1;
  }
  if (f >= 0) {
    rc = group_write(f, g);
    char why[256] = "";
    if (rc) fmt_h5_reason(why, sizeof why);
    if (H5Fclose(f) < 0 && !rc) {
      fmt_h5_reason(why, sizeof why);
      rc = -1;
    }
    if (rc) swp_seterr(err, errlen, "%s: cannot write %s: %s", path, g->name, why);
  }
  fmt_h5_quiet_end(&q);
  fmt_lock_release(own);
  return rc;
}

int fmt_file_write(const char *path, unsigned flags, const fmt_value *root_attrs,
                   size_t n_root_attrs, const fmt_group *groups, size_t n_groups, char *err,
                   size_t errlen) {
  fmt_outfile of;
  if (fmt_outfile_begin(&of, path, flags, err, errlen)) return -1;
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  /* The fresh name is ours (O_EXCL): HDF5 may truncate it. */
  hid_t f = H5Fcreate(fmt_outfile_tmp_name(&of), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  char why[256] = "";
  int rc = f < 0;
  if (!rc) {
    rc = attrs_write(f, root_attrs, n_root_attrs);
    for (size_t i = 0; !rc && i < n_groups; i++) rc = group_write(f, &groups[i]);
  }
  if (rc) fmt_h5_reason(why, sizeof why);
  if (f >= 0 && H5Fclose(f) < 0 && !rc) {
    fmt_h5_reason(why, sizeof why);
    rc = 1;
  }
  fmt_h5_quiet_end(&q);
  if (rc) {
    swp_seterr(err, errlen, "%s: cannot write: %s", path, why);
    fmt_outfile_abandon(&of);
    return -1;
  }
  return fmt_outfile_commit(&of, err, errlen);
}
