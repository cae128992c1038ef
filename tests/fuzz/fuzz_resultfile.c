/*
 * fuzz_resultfile.c — libFuzzer target for the result-file reader
 * (format/results_read.c) and everything that runs on what it returns
 * (summary, effects, recommendation, JSON, bands, heat-map grids).
 *
 * An input is not an HDF5 file but a recipe for one: its bytes choose the
 * root attributes and their strings, the /points, /points_text and /runs
 * compound layouts (which columns, of which types, in which order, chunked
 * or not, with which fill value, how many rows written), the values, and
 * the /ticks datasets (shape, chunking, compression). The file is built with
 * HDF5 itself in memory (the core driver, no backing store), so the fuzzer
 * explores the layouts a hostile writer can make rather than the HDF5
 * library's own parser. Its image is then written to a file in /dev/shm
 * (memory; /tmp when there is none), because the reader's entry points take
 * a path and ana_band_read reopens it: HDF5 cannot open a memfd through
 * /proc/self/fd/N (it fails to resolve the real path), and opening the
 * image itself (H5LTopen_file_image) would need a second, fid-based reader
 * API that only the fuzzer used.
 *
 * The recipe also builds a /refine group (its attributes of any class and
 * shape — a 1,000-element "scalar" among them — its candidate table and
 * rounds), and a FILE.journal beside the file: a header that matches the
 * file or not, and records of each kind (runs, appended rows, groups) with
 * valid CRCs and chosen contents. The journal is opened and read back, and
 * with the file torn beyond opening it is what refine's salvage rebuilds
 * the file from; the rebuilt file is then read and analysed like any other.
 *
 * Invariants: the reader either refuses with one non-empty line naming the
 * file, or returns tables every later step can use without a crash, a leak
 * or undefined behaviour; labels it keeps are printable text; the journal's
 * readers and the salvage refuse or succeed the same way.
 *
 * scripts/fuzz.sh -f resultfile builds it with clang
 * -fsanitize=fuzzer,address,undefined; tests/fuzz/replay.c links the same
 * function into a plain program that ctest runs on tests/fuzz/corpus_result
 * (and tests/fuzz/regressions_result) in every build.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include <zlib.h>

#include "ana.h"
#include "services.h"
#include "fmt_store.h"
#include "journal.h"
#include "swp.h"
#include "drv_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond, ...)                                 \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "fuzz_resultfile: %s failed: ", #cond);  \
      fprintf(stderr, __VA_ARGS__);                            \
      fprintf(stderr, "\n");                                   \
      abort();                                                 \
    }                                                          \
  } while (0)

/* The recipe, read front to back; past its end every byte is 0. */
typedef struct recipe {
  const uint8_t *p;
  size_t n, at;
} recipe;

static unsigned byte(recipe *r) { return r->at < r->n ? r->p[r->at++] : 0; }
static unsigned pick(recipe *r, unsigned n) { return n ? byte(r) % n : 0; }

/* A string: one of the names the layout uses, or up to 40 raw bytes (any
 * byte but NUL: control characters, invalid UTF-8, quotes). */
static void text(recipe *r, char *buf, size_t len, const char *const *names, size_t n_names) {
  unsigned how = byte(r);
  if (names && how % 4 != 3) {
    snprintf(buf, len, "%s", names[how % n_names]);
    return;
  }
  size_t n = pick(r, 41), k = 0;
  for (size_t i = 0; i < n && k + 1 < len; i++) {
    unsigned c = byte(r);
    if (c) buf[k++] = (char)c;
  }
  buf[k] = 0;
}

static double number(recipe *r) {
  static const double special[] = {0, 1, -1, 0.1, 0.5, 2, 10, 100, 1e300, -1e300, 1e-300};
  unsigned how = byte(r);
  switch (how % 8) {
  case 0: return NAN;
  case 1: return how & 8 ? INFINITY : -INFINITY;
  case 2: return special[byte(r) % (sizeof special / sizeof special[0])];
  case 3: return (double)(int8_t)byte(r) / 4.0;
  default: return (double)byte(r);
  }
}

/* The file types a numeric column may have. */
static hid_t num_type(recipe *r) {
  switch (pick(r, 7)) {
  case 0: return H5T_NATIVE_INT64;
  case 1: return H5T_NATIVE_INT32;
  case 2: return H5T_NATIVE_INT8;
  case 3: return H5T_NATIVE_UINT8;
  case 4: return H5T_NATIVE_FLOAT;
  case 5: return H5T_NATIVE_UINT64;
  default: return H5T_NATIVE_DOUBLE;
  }
}

static void attr_str(hid_t obj, const char *name, const char *value) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    H5Awrite(a, t, &value);
    H5Aclose(a);
  }
  H5Sclose(sp);
  H5Tclose(t);
}

static void attr_num(hid_t obj, const char *name, double v) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
    H5Aclose(a);
  }
  H5Sclose(sp);
}

/* A 1-D dataset of n rows of type t: contiguous, or chunked (with an
 * optional fill value and deflate), rows [0, written) written from buf. */
static void table_write(recipe *r, hid_t f, const char *name, hid_t t, hsize_t n,
                        hsize_t written, const void *buf, const void *fill) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t maxn = n;
  if (byte(r) % 2 || written < n) {
    hsize_t chunk = 1 + pick(r, 16);
    H5Pset_chunk(dcpl, 1, &chunk);
    if (byte(r) % 4 == 0) H5Pset_deflate(dcpl, 1);
  }
  if (fill) H5Pset_fill_value(dcpl, t, fill);
  hid_t sp = H5Screate_simple(1, &n, &maxn);
  hid_t ds = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds >= 0 && written > 0) {
    hsize_t zero = 0;
    hid_t msp = H5Screate_simple(1, &written, NULL);
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, &zero, NULL, &written, NULL);
    H5Dwrite(ds, t, msp, sp, H5P_DEFAULT, buf);
    H5Sclose(msp);
  }
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  H5Pclose(dcpl);
}

static const char *const axis_names[] = {"budget_ratio", "backoff", "vnodes", "load",
                                         "policy",       "surge",   "point"};
static const char *const sweep_texts[] = {
    ("[sweep]\nreplicates = 2\n[scenario]\nhorizon_ms = 3000\n[grid]\nbudget_ratio = 0.1, "
     "inf\nbackoff = none, full\n"),
    ("[grid]\nvnodes = lin(1, 1000, 1000)\nload = lin(0.1, 1, 1000)\nworkers = lin(1, 9, "
     "9)\n"),
    "[scenario]\nhorizon_ms = 2000\n",
    "not a sweep [[[",
};
static const char *const metric_names[] = {"queue_depth", "successes", "open_breakers"};

/* An attribute of a chosen class and shape: a number, or n of them (a
 * "scalar" stored as an array is what a hostile writer does first). */
static void attr_any(recipe *r, hid_t obj, const char *name) {
  hsize_t n = byte(r) % 8 ? 1 : (hsize_t)(1 + pick(r, 4) * 333);
  hid_t t = byte(r) % 8 ? num_type(r) : H5T_NATIVE_INT8;
  hid_t sp = n == 1 && byte(r) % 2 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
  double *v = calloc((size_t)n, sizeof *v);
  for (hsize_t i = 0; v && i < n && i < 8; i++) v[i] = number(r);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0 && v) H5Awrite(a, H5T_NATIVE_DOUBLE, v);
  if (a >= 0) H5Aclose(a);
  free(v);
  H5Sclose(sp);
}

/* /refine: the design and state attributes, the candidate table and the
 * rounds, each present or not, of any shape. */
static void refine_build(recipe *r, hid_t f, size_t np, size_t nr) {
  hid_t g = H5Gcreate2(f, "refine", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return;
  static const char *const names[] = {"min_pass", "max_meta", "alpha", "beta", "ratio", "k",
                                      "r0", "decided_point", "decided_rank", "closest_point",
                                      "runs_appended", "rounds", "n_candidates"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (byte(r) % 8) attr_any(r, g, names[i]);
  if (byte(r) % 4) {
    char st[64];
    text(r, st, sizeof st, (const char *const[]){"proven", "none", "open"}, 3);
    attr_str(g, "status", st);
  }
  static const char *const cols[] = {"rank", "point", "alpha", "state", "runs", "not_passing",
                                     "metastable", "llr_pass", "llr_meta", "screen_runs",
                                     "screen_pass", "screen_meta"};
  enum { NC = sizeof cols / sizeof cols[0] };
  if (byte(r) % 4) {
    hid_t ft = H5Tcreate(H5T_COMPOUND, 8 * NC), mt = H5Tcreate(H5T_COMPOUND, 8 * NC);
    for (size_t c = 0; c < NC; c++) {
      if (!(byte(r) % 8)) continue;
      H5Tinsert(ft, cols[c], 8 * c, num_type(r));
      H5Tinsert(mt, cols[c], 8 * c, H5T_NATIVE_DOUBLE);
    }
    size_t n = pick(r, (unsigned)(2 * np + 3));
    double *v = calloc(n ? n * NC : 1, sizeof *v);
    for (size_t i = 0; v && i < n * NC; i++) v[i] = byte(r) % 4 ? (double)(i / NC % np) : number(r);
    size_t fs = H5Tget_size(ft) > 8 * NC ? H5Tget_size(ft) : 8 * NC;
    char *conv = calloc(n ? n : 1, fs), *bkg = calloc(n ? n : 1, fs);
    if (H5Tget_nmembers(ft) > 0 && v && conv && bkg) {
      memcpy(conv, v, n * 8 * NC);
      H5Tconvert(mt, ft, n, conv, bkg, H5P_DEFAULT);
      table_write(r, g, "candidates", ft, n, n, conv, NULL);
    }
    free(v);
    free(conv);
    free(bkg);
    H5Tclose(ft);
    H5Tclose(mt);
  }
  if (byte(r) % 2) {
    hsize_t n = pick(r, 6);
    int64_t v[6];
    for (hsize_t i = 0; i < n; i++) v[i] = byte(r) % 4 ? (int64_t)(nr / 2 + i) : (int64_t)(int8_t)byte(r);
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(g, "round_start", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    if (ds >= 0 && n) H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
  }
  H5Gclose(g);
}

/* ---- the journal: FILE.journal as format/journal.c lays it out ---- */

typedef struct jbuf {
  uint8_t *p;
  size_t n, cap;
} jbuf;

static void jput(jbuf *b, const void *v, size_t n) {
  if (b->n + n > b->cap) {
    size_t c = b->cap ? 2 * b->cap : 4096;
    while (c < b->n + n) c *= 2;
    uint8_t *q = realloc(b->p, c);
    if (!q) return;
    b->p = q;
    b->cap = c;
  }
  memcpy(b->p + b->n, v, n);
  b->n += n;
}
#define JPUT(b, v) jput((b), &(v), sizeof(v))

/* A record of kind over payload [from, b->n): its frame, CRC usually right. */
static void jrecord(recipe *r, jbuf *b, uint32_t kind, const uint8_t *payload, size_t len) {
  size_t at = b->n;
  uint32_t l32 = (uint32_t)len;
  JPUT(b, kind);
  JPUT(b, l32);
  jput(b, payload, len);
  uint32_t crc = (uint32_t)crc32(0L, b->p + at, (uInt)(8 + len));
  if (!(byte(r) % 16)) crc ^= 1;
  JPUT(b, crc);
}

/* Writes path's journal from the recipe: header fields that agree with the
 * file (its seed, shape, instance, sweep text) or not, then records. */
static void journal_build(recipe *r, const char *path, uint64_t instance, size_t nr) {
  jbuf b = {0}, pl = {0};
  /* A sweep of a few runs (or none): rebuilding is writing its records. */
  unsigned k = pick(r, 3);
  const char *text = k == 0 ? sweep_texts[0] : k == 1 ? sweep_texts[2] : "";
  char tool[64];
  snprintf(tool, sizeof tool, "%s", byte(r) % 8 ? STORMSWEEP_VERSION : "0.0.0");
  const char *cmd = "stormsweep run fuzz.ini";
  uint32_t tool_len = (uint32_t)strlen(tool), cmd_len = (uint32_t)strlen(cmd),
           text_len = (uint32_t)strlen(text), order = 0x01020304u;
  uint32_t hlen = 84 + tool_len + cmd_len + text_len + 4;
  uint64_t seed = byte(r) % 4 ? 1 : byte(r);
  int64_t n_runs = byte(r) % 4 ? (int64_t)nr : (int64_t)pick(r, 40), si = 0, sc = 0;
  int32_t ticks = byte(r) % 4 ? 64 : (int32_t)(1 + pick(r, 200)), ssize = (int32_t)sizeof(eng_summary);
  int32_t shards = byte(r) % 4 ? 0 : (int32_t)pick(r, 5);
  if (!(byte(r) % 8)) ssize = 7;
  uint32_t text_crc = (uint32_t)crc32(0L, (const Bytef *)text, (uInt)text_len);
  uint64_t inst = byte(r) % 4 ? instance : instance + 1;
  jput(&b, "SSWJRN3", 8);
  JPUT(&b, order);
  JPUT(&b, hlen);
  JPUT(&b, seed);
  JPUT(&b, n_runs);
  JPUT(&b, ticks);
  JPUT(&b, ssize);
  JPUT(&b, si);
  JPUT(&b, sc);
  JPUT(&b, text_crc);
  JPUT(&b, tool_len);
  JPUT(&b, cmd_len);
  JPUT(&b, inst);
  JPUT(&b, shards);
  JPUT(&b, text_len);
  jput(&b, tool, tool_len);
  jput(&b, cmd, cmd_len);
  jput(&b, text, text_len);
  uint32_t hcrc = b.p ? (uint32_t)crc32(0L, b.p, (uInt)b.n) : 0;
  JPUT(&b, hcrc);
  /* One real encoded chunk of zeros, and the rows appended so far. */
  size_t bound = fmt_chunk_bound((size_t)ticks);
  uint8_t *chunk = malloc(bound);
  int32_t *zeros = calloc((size_t)ticks, sizeof *zeros);
  fmt_chunk_encoder *e = fmt_chunk_encoder_create((size_t)ticks);
  size_t clen = e && chunk && zeros ? fmt_chunk_encode(e, zeros, chunk, bound) : 0;
  fmt_chunk_encoder_destroy(e);
  free(zeros);
  int64_t rows = n_runs;
  unsigned nrec = pick(r, 12);
  for (unsigned i = 0; i < nrec; i++) {
    pl.n = 0;
    unsigned kind = pick(r, 8);
    if (kind < 5) { /* a run */
      int64_t run = byte(r) % 4 ? (int64_t)pick(r, (unsigned)(rows > 0 ? rows : 1)) : (int64_t)byte(r) - 8;
      int64_t point = byte(r) % 4 ? run / 2 : (int64_t)byte(r);
      int32_t rep = byte(r) % 4 ? (int32_t)(run % 2) : (int32_t)byte(r), rt = ticks;
      double wall = number(r);
      int32_t thread = 0;
      uint32_t shard_cs = shards ? (uint32_t)clen : 0;
      eng_summary sum;
      memset(&sum, 0, sizeof sum);
      sum.seed = byte(r) % 4 ? swp_run_seed(seed, 0, point, rep) : byte(r);
      sum.outcome = (int32_t)(byte(r) % 4 ? pick(r, ENG_OUTCOME_COUNT) : byte(r));
      sum.recovery_ms = number(r);
      JPUT(&pl, run);
      JPUT(&pl, point);
      JPUT(&pl, rep);
      JPUT(&pl, rt);
      JPUT(&pl, wall);
      JPUT(&pl, thread);
      JPUT(&pl, shard_cs);
      JPUT(&pl, sum);
      uint32_t cs[ENG_M_COUNT];
      int garbage = !(byte(r) % 4);
      for (int m = 0; m < ENG_M_COUNT; m++) cs[m] = garbage ? 1 + pick(r, 16) : (uint32_t)clen;
      jput(&pl, cs, sizeof cs);
      for (int m = 0; m < ENG_M_COUNT; m++) {
        if (garbage)
          for (uint32_t j = 0; j < cs[m]; j++) {
            uint8_t c = (uint8_t)byte(r);
            JPUT(&pl, c);
          }
        else
          jput(&pl, chunk, clen);
      }
      if (shard_cs) jput(&pl, chunk, clen);
      jrecord(r, &b, 0x53524E31u, pl.p, pl.n);
    } else if (kind < 7) { /* rows appended */
      int64_t first = byte(r) % 4 ? rows : (int64_t)byte(r), n = 1 + pick(r, 4);
      JPUT(&pl, first);
      JPUT(&pl, n);
      for (int64_t j = 0; j < n; j++) {
        int64_t point = (int64_t)pick(r, 3);
        int32_t rep = (int32_t)(2 + j);
        JPUT(&pl, point);
        JPUT(&pl, rep);
      }
      if (first == rows) rows += n;
      jrecord(r, &b, 0x53524E41u, pl.p, pl.n);
    } else { /* a group: a name and bytes that are rarely an HDF5 image */
      uint32_t nl = 6;
      JPUT(&pl, nl);
      jput(&pl, "refine", 6);
      unsigned n = pick(r, 64);
      for (unsigned j = 0; j < n; j++) {
        uint8_t c = (uint8_t)byte(r);
        JPUT(&pl, c);
      }
      jrecord(r, &b, 0x53524E47u, pl.p, pl.n);
    }
  }
  free(chunk);
  free(pl.p);
  char jpath[128];
  snprintf(jpath, sizeof jpath, "%s.journal", path);
  FILE *out = fopen(jpath, "wb");
  if (out) {
    if (b.p) fwrite(b.p, 1, b.n, out);
    fclose(out);
  }
  free(b.p);
}

/* Opens the journal of path and reads back everything it holds. */
static void journal_read(const char *path) {
  fmt_journal *j = NULL;
  int exists = 0;
  char err[1024] = "";
  if (fmt_journal_open(&j, path, NULL, &exists, err, sizeof err)) {
    FUZZ_ASSERT(err[0] && !strchr(err, '\n'), "journal refusal '%s'", err);
    return;
  }
  if (!j) return;
  uint8_t *buf = NULL;
  size_t cap = 0;
  for (int64_t r = 0; r < fmt_journal_rows(j); r++) {
    fmt_run_record rec;
    if (fmt_journal_has(j, r)) FUZZ_ASSERT(!fmt_journal_read(j, r, &rec, &buf, &cap, err, sizeof err), "run %lld: %s", (long long)r, err);
  }
  free(buf);
  for (size_t i = 0; i < fmt_journal_appends(j); i++) {
    int64_t first, n, *point;
    int32_t *rep;
    FUZZ_ASSERT(!fmt_journal_read_append(j, i, &first, &n, &point, &rep, err, sizeof err),
                "append %zu: %s", i, err);
    free(point);
    free(rep);
  }
  uint8_t *image = NULL;
  size_t size = 0;
  if (fmt_journal_read_group(j, "refine", &image, &size, err, sizeof err) == 0) free(image);
  fmt_journal_close(j);
}

/* Builds the file the recipe describes; returns its image (malloc'd). */
static void *build(recipe *r, size_t *len) {
  *len = 0;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, 64 * 1024, 0);
  hid_t f = H5Fcreate("fuzz_resultfile.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (f < 0) return NULL;
  char s[64];

  /* Root attributes. */
  unsigned flags = byte(r);
  if (flags & 1) {
    text(r, s, sizeof s, (const char *const[]){"stormsweep-results"}, 1);
    attr_str(f, "format", s);
  } else {
    attr_str(f, "format", "stormsweep-results");
  }
  attr_num(f, "format_version", flags & 2 ? number(r) : 1);
  if (flags & 4) {
    text(r, s, sizeof s, NULL, 0);
    attr_str(f, "tool_version", s);
  }
  if (flags & 8) {
    unsigned k = pick(r, 5);
    if (k < 4) {
      attr_str(f, "sweep_text", sweep_texts[k]);
    } else {
      text(r, s, sizeof s, NULL, 0);
      attr_str(f, "sweep_text", s);
    }
  }
  if (flags & 16) attr_num(f, "tick_ms", number(r));
  if (byte(r) % 2) {
    uint64_t inst = 42;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "instance", H5T_STD_U64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
      H5Awrite(a, H5T_NATIVE_UINT64, &inst);
      H5Aclose(a);
    }
    H5Sclose(sp);
  }

  /* /points: "point" and up to three axes, in a chosen order. */
  size_t n_axes = pick(r, 4), np = 1 + pick(r, 12);
  char axes[3][64];
  hid_t atype[3];
  for (size_t a = 0; a < n_axes; a++) {
    text(r, axes[a], sizeof axes[a], axis_names, sizeof axis_names / sizeof axis_names[0]);
    atype[a] = num_type(r);
  }
  hid_t pid_type = num_type(r);
  size_t row = 8 * (n_axes + 1);
  hid_t pt = H5Tcreate(H5T_COMPOUND, row);
  hid_t mt = H5Tcreate(H5T_COMPOUND, row);
  int ok = H5Tinsert(pt, "point", 0, pid_type) >= 0 &&
           H5Tinsert(mt, "point", 0, H5T_NATIVE_DOUBLE) >= 0;
  for (size_t a = 0; a < n_axes && ok; a++)
    ok = H5Tinsert(pt, axes[a], 8 * (a + 1), atype[a]) >= 0 &&
         H5Tinsert(mt, axes[a], 8 * (a + 1), H5T_NATIVE_DOUBLE) >= 0;
  double *pv = calloc(np * (n_axes + 1), sizeof *pv);
  if (ok && pv) {
    for (size_t p = 0; p < np; p++) {
      pv[p * (n_axes + 1)] = byte(r) % 8 ? (double)p : number(r);
      for (size_t a = 0; a < n_axes; a++) pv[p * (n_axes + 1) + a + 1] = number(r);
    }
    /* Write through a dataset of the file type, converting from doubles. */
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t n = np;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(f, "points", pt, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds >= 0) {
      H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, pv);
      H5Dclose(ds);
    }
    H5Sclose(sp);
    H5Pclose(dcpl);
  }
  free(pv);
  H5Tclose(pt);
  H5Tclose(mt);
  if (flags & 32) attr_num(f, "n_points", byte(r) % 4 ? (double)np : number(r));

  /* /points_text: "point" and a fixed string per axis, raw bytes. */
  if (n_axes && (flags & 64)) {
    size_t w = 1 + pick(r, 80);
    size_t trow = 8 + w * n_axes;
    hid_t tt = H5Tcreate(H5T_COMPOUND, trow);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, w);
    H5Tinsert(tt, "point", 0, H5T_NATIVE_INT64);
    for (size_t a = 0; a < n_axes; a++) H5Tinsert(tt, axes[a], 8 + w * a, st);
    char *rows = calloc(np, trow);
    for (size_t p = 0; rows && p < np; p++) {
      int64_t id = (int64_t)p;
      memcpy(rows + p * trow, &id, 8);
      for (size_t a = 0; a < n_axes; a++) {
        char lab[64];
        text(r, lab, sizeof lab, (const char *const[]){"inf", "0.1", "full", "none", "10"}, 5);
        memcpy(rows + p * trow + 8 + w * a, lab, strlen(lab) < w ? strlen(lab) : w);
      }
    }
    if (rows) table_write(r, f, "points_text", tt, np, np, rows, NULL);
    free(rows);
    H5Tclose(st);
    H5Tclose(tt);
  }

  /* /runs: a chosen subset of columns, each of a chosen type. */
  static const char *const cols[] = {"point", "outcome", "recovery_ms", "done", "run",
                                     "replicate", "ticks", "passed_slo", "amplification"};
  enum { NCOL = sizeof cols / sizeof cols[0] };
  unsigned present = byte(r) | (byte(r) << 8);
  if (byte(r) % 8) present |= 7; /* usually the required columns */
  size_t nr = pick(r, 24), written = nr ? pick(r, (unsigned)nr + 1) : 0;
  if (byte(r) % 2) written = nr;
  hid_t rt = H5Tcreate(H5T_COMPOUND, 8 * NCOL);
  hid_t rm = H5Tcreate(H5T_COMPOUND, 8 * NCOL);
  hid_t outcome_enum = -1;
  for (size_t c = 0; c < NCOL; c++) {
    if (!(present & (1u << c))) continue;
    hid_t t = num_type(r);
    if (c == 1 && byte(r) % 2) { /* outcome as an enum, as the writer stores it */
      outcome_enum = H5Tenum_create(H5T_NATIVE_INT8);
      static const char *const names[] = {"recovered", "slow", "metastable", "collapsed"};
      for (int8_t v = 0; v < 4; v++) H5Tenum_insert(outcome_enum, names[v], &v);
      t = outcome_enum;
    }
    H5Tinsert(rt, cols[c], 8 * c, t);
    H5Tinsert(rm, cols[c], 8 * c, c == 1 && outcome_enum >= 0 ? outcome_enum : H5T_NATIVE_DOUBLE);
  }
  if (H5Tget_nmembers(rt) > 0) {
    double *rv = calloc(nr ? nr * NCOL : 1, sizeof *rv);
    double fill[NCOL];
    for (size_t c = 0; c < NCOL; c++) fill[c] = byte(r) % 2 ? number(r) : 0;
    for (size_t i = 0; rv && i < nr; i++)
      for (size_t c = 0; c < NCOL; c++) {
        double v = byte(r) % 4 ? (double)(c == 4 ? i : c == 0 ? i % np : c == 3 ? 1 : i % 3)
                               : number(r);
        if (c == 1 && outcome_enum >= 0) {
          int8_t e = (int8_t)(byte(r) % 5);
          memcpy(&rv[i * NCOL + c], &e, 1);
        } else {
          rv[i * NCOL + c] = v;
        }
      }
    if (outcome_enum >= 0) {
      int8_t e = (int8_t)(byte(r) % 4);
      memset(&fill[1], 0, sizeof fill[1]);
      memcpy(&fill[1], &e, 1);
    }
    /* Stored in the file type: convert the doubles first. */
    size_t rsize = H5Tget_size(rt);
    char *conv = rv ? calloc(nr ? nr : 1, rsize > 8 * NCOL ? rsize : 8 * NCOL) : NULL;
    char fconv[8 * NCOL], fbkg[8 * NCOL] = {0};
    memcpy(fconv, fill, sizeof fconv);
    /* Compound conversion reads a background buffer of the destination. */
    char *bkg = conv ? calloc(nr ? nr : 1, rsize > 8 * NCOL ? rsize : 8 * NCOL) : NULL;
    if (conv && bkg) {
      memcpy(conv, rv, nr * 8 * NCOL);
      H5Tconvert(rm, rt, nr, conv, bkg, H5P_DEFAULT);
      H5Tconvert(rm, rt, 1, fconv, fbkg, H5P_DEFAULT);
      table_write(r, f, "runs", rt, nr, written, conv, byte(r) % 2 ? fconv : NULL);
    }
    free(bkg);
    free(conv);
    free(rv);
  }
  if (outcome_enum >= 0) H5Tclose(outcome_enum);
  H5Tclose(rt);
  H5Tclose(rm);
  if (flags & 128) {
    attr_num(f, "n_runs", byte(r) % 4 ? (double)nr : number(r));
    attr_num(f, "replicates", byte(r) % 4 ? (double)(1 + pick(r, 4)) : number(r));
  }

  /* /ticks: up to three int32 metrics of (rows x ticks), chunked or not. */
  unsigned nm = pick(r, 4);
  if (nm) {
    hid_t g = H5Gcreate2(f, "ticks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {byte(r) % 8 ? nr : pick(r, 30), 1 + pick(r, 64)};
    int32_t *tv = calloc(dims[0] * dims[1] + 1, sizeof *tv);
    for (size_t i = 0; tv && i < dims[0] * dims[1]; i++) tv[i] = (int32_t)(int8_t)byte(r);
    for (unsigned m = 0; m < nm && g >= 0; m++) {
      hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      if (byte(r) % 2 && dims[0] > 0) {
        hsize_t chunk[2] = {1 + pick(r, 4), 1 + pick(r, 64)};
        H5Pset_chunk(dcpl, 2, chunk);
        if (byte(r) % 2) H5Pset_deflate(dcpl, 1);
      }
      hid_t sp = H5Screate_simple(2, dims, NULL);
      hid_t ds = H5Dcreate2(g, metric_names[m], byte(r) % 8 ? H5T_STD_I32LE : H5T_IEEE_F32LE,
                            sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      if (ds >= 0 && tv && byte(r) % 4) H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL,
                                                 H5P_DEFAULT, tv);
      if (ds >= 0) H5Dclose(ds);
      H5Sclose(sp);
      H5Pclose(dcpl);
    }
    free(tv);
    if (g >= 0) H5Gclose(g);
  }

  if (byte(r) % 2) refine_build(r, f, np, nr);

  H5Fflush(f, H5F_SCOPE_GLOBAL);
  ssize_t n = H5Fget_file_image(f, NULL, 0);
  void *img = n > 0 ? malloc((size_t)n) : NULL;
  if (img && H5Fget_file_image(f, img, (size_t)n) != n) {
    free(img);
    img = NULL;
  }
  H5Fclose(f);
  if (img) *len = (size_t)n;
  return img;
}

/* Runs every analysis step on a file the reader accepted. */
static void analyse(const fmt_results *res) {
  for (size_t a = 0; res->labels && a < res->n_axes; a++)
    for (size_t p = 0; res->labels[a] && p < res->n_points; p++)
      FUZZ_ASSERT(!res->labels[a][p] || !swp_text_problem(res->labels[a][p], 64, 0),
                  "label '%s' is not printable text", res->labels[a][p]);
  for (size_t a = 0; a < res->n_axes; a++)
    FUZZ_ASSERT(!swp_text_problem(res->axes[a], 128, 0), "axis name is not printable text");
  ana_summary s;
  char err[1024];
  if (ana_summary_compute(&s, res, 1500, ANA_INTERVAL_WILSON, err, sizeof err) != 0) {
    FUZZ_ASSERT(err[0] && !strchr(err, '\n'), "summary error '%s'", err);
    return;
  }
  FILE *null = fopen("/dev/null", "w");
  if (null) {
    ana_summary_print_table(null, res, &s);
    ana_summary_print_effects(null, res, &s);
  }
  ana_services svc; /* a call graph's per-service figures: read from /ticks, checked */
  if (ana_services_compute(&svc, res, &s, err, sizeof err) == 0) {
    if (null) ana_services_print_table(null, res, &s, &svc);
    json_decref(ana_services_json(res, &s, &svc));
    ana_services_free(&svc);
  } else {
    FUZZ_ASSERT(err[0] && !strchr(err, '\n'), "services error '%s'", err);
  }
  ana_reco rec;
  ana_reco_opts ro = {0.01, 0.99};
  if (ana_recommend(&rec, res, &s, &ro) == 0) {
    char *t = ana_reco_text(&rec, res, &s, &ro);
    if (null && t) ana_summary_print_json(null, res, &s, t);
    free(t);
    ana_reco_free(&rec); /* scenario axes give it per-scenario arrays */
  }
  if (null) fclose(null);
  for (size_t p = 0; p < res->n_points && p < 4; p++)
    for (size_t m = 0; m < sizeof metric_names / sizeof metric_names[0]; m++) {
      ana_band b;
      if (ana_band_read(&b, res, metric_names[m], p, 16, err, sizeof err) == 0)
        ana_band_free(&b);
      else
        FUZZ_ASSERT(err[0] && !strchr(err, '\n'), "band error '%s'", err);
    }
  for (size_t x = 0; x < res->n_axes; x++)
    for (size_t y = 0; y < res->n_axes; y++) {
      ana_grid2 g;
      if (ana_grid2_compute(&g, res, &s, x, y) == 0) ana_grid2_free(&g);
    }
  ana_summary_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  recipe r = {data, size, 0};
  size_t len = 0;
  void *img = build(&r, &len);
  if (!img) return 0;
  char path[64];
  snprintf(path, sizeof path, "%s/fuzz_resultfile.XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  int fd = mkstemp(path);
  FUZZ_ASSERT(fd >= 0, "mkstemp %s", path);
  FUZZ_ASSERT(write(fd, img, len) == (ssize_t)len, "write to %s", path);
  free(img);
  fmt_results res;
  char err[2048] = "";
  int rc = fmt_results_read(&res, path, err, sizeof err);
  /* FUZZ_RESULT_VERBOSE=1: what became of each input (for seeding). */
  if (getenv("FUZZ_RESULT_VERBOSE"))
    fprintf(stderr, "%s\n", rc ? err : "read");
  if (rc == 0) {
    analyse(&res);
    fmt_results_free(&res);
  } else {
    FUZZ_ASSERT(err[0] && !strchr(err, '\n') && !strncmp(err, path, strlen(path)),
                "the refusal '%s' is not one line naming the file", err);
  }
  fmt_refine_info ri;
  if (fmt_refine_read(path, &ri, err, sizeof err) == 0) fmt_refine_info_free(&ri);
  char jpath[128], lpath[128];
  snprintf(jpath, sizeof jpath, "%s.journal", path);
  snprintf(lpath, sizeof lpath, "%s.lock", path);
  if (byte(&r) % 2) {
    journal_build(&r, path, 42, 8);
    journal_read(path);
    if (byte(&r) % 2) {
      /* Torn beyond opening: refine's salvage rebuilds it from the journal. */
      FUZZ_ASSERT(ftruncate(fd, 64) == 0, "truncating %s", path);
      char note[1024] = "";
      int sv = fmt_out_salvage(path, NULL, note, sizeof note, err, sizeof err);
      if (sv == 0 && fmt_results_read(&res, path, err, sizeof err) == 0) {
        analyse(&res);
        fmt_results_free(&res);
      } else if (sv < 0) {
        FUZZ_ASSERT(err[0] && !strchr(err, '\n'), "salvage refusal '%s'", err);
      }
    }
  }
  close(fd);
  unlink(path);
  unlink(jpath);
  unlink(lpath);
  return 0;
}
