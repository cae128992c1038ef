/*
 * journal.c — FILE.journal: an append-only log of everything written to a
 * result file, made durable (fdatasync) at each commit before the run is
 * marked done in FILE. HDF5 1.10 rewrites its chunk indexes in place and has
 * no journal of its own, so after a power cut FILE may hold a mix of old and
 * new pages; the journal's records are each checked by a CRC, so its valid
 * prefix is exactly what was committed, whatever state FILE is in.
 * `run --resume` and `refine` check FILE against it and, when FILE is
 * damaged, rebuild FILE from it (resume.c, close.c). The journal goes once
 * FILE is closed cleanly and synced with every run of its sweep (or slice)
 * in it, or once a refine session ends.
 *
 * A journal belongs to one file instance: the random `instance` of FILE's
 * root is in its header, so a journal left by another file of the same name
 * (a killed first attempt, then a finished file copied over it) is never
 * taken for FILE's.
 *
 * Layout (native byte order, checked by a marker; the journal is only read
 * by the same stormsweep version on the same machine kind that wrote it):
 *
 *   header: "SSWJRN4\0", u32 0x01020304, u32 header bytes, u64 master_seed,
 *           i64 n_runs, i32 ticks, i32 sizeof(eng_summary), i64 slice_index,
 *           i64 slice_count, u32 crc32(sweep text), u32 tool_len, u32 cmd_len,
 *           u64 instance, i32 width[FMT_WIDE_COUNT] (each fmt_wide dataset's,
 *           0: none), u32 text_len, tool_version, command_line, sweep text,
 *           u32 crc32(all of the above)
 *   record: u32 kind, u32 len, payload[len], u32 crc32(kind, len, payload)
 *   run (kind 0x53524E31): i64 run, i64 point, i32 replicate, i32 ticks,
 *           f64 wall_s, i32 thread, u32 wide_chunk_size[] (one per fmt_wide
 *           dataset the header gives a width, in fmt_wide order), eng_summary, u32 chunk_size[19], the 19 chunks as stored in /ticks
 *           (shuffle + deflate), back to back, then the fmt_wide chunks
 *           (shard queue depths, the service series; size 0: not recorded);
 *           every size 0: a run that stores no /ticks rows (refine's,
 *           summary only)
 *   rows appended (kind 0x53524E41, refine): i64 first row, i64 n, then n x
 *           (i64 point, i32 replicate); first is always the rows so far
 *   group (kind 0x53524E47): u32 name_len, name, an HDF5 file image holding
 *           the group of that name as written into FILE (the latest counts)
 *
 * A record cut short, failing its CRC or out of place ends the valid
 * prefix; a later record of the same run replaces an earlier one (a rerun
 * after a resume). Every length is bounded by the sweep's own shapes before
 * anything is allocated for it, so a hostile journal costs no more memory
 * than a real one of the same sweep.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "journal.h"
#include "fmt.h"
#include "layout.h"

#define J_MAGIC "SSWJRN4"
#define J_ORDER 0x01020304u
#define J_FIXED (80 + 4 * FMT_WIDE_COUNT)
#define K_RUN 0x53524E31u
#define K_ROWS 0x53524E41u
#define K_GROUP 0x53524E47u
#define R_WIDE 36 /* offset of a run record's wide_chunk_size[] */
/* A run record's summary and chunks follow the sizes of the wide chunks
 * its journal records (no word for the others: a single tier's records
 * are as short as before any wide chunk but the shard queues). */
#define R_SUMMARY(j) (R_WIDE + 4 * (size_t)(j)->n_wide)
#define R_FIXED(j) (R_SUMMARY(j) + sizeof(eng_summary) + 4 * ENG_M_COUNT)
#define ROW_BYTES 12          /* an appended row: i64 point, i32 replicate */
#define GROUP_MAX (64u << 20) /* a group image: /refine is a few KB per candidate */
#define GROUP_NAMES 8

struct fmt_journal {
  int fd;
  char *path;
  int64_t n_runs;     /* the sweep's own runs */
  int64_t rows;       /* ... plus the rows appended so far */
  int32_t ticks, wide[FMT_WIDE_COUNT]; /* each fmt_wide chunk's width (0: none) */
  int n_wide;                /* how many it records (width > 0) */
  uint64_t instance;
  int64_t *at;        /* per row: offset of its run's latest record, -1 none */
  int64_t at_cap;
  int64_t count;
  int64_t *appends;   /* offsets of the rows-appended records, in order */
  size_t n_appends, appends_cap;
  struct { char name[32]; int64_t at; } group[GROUP_NAMES];
  int64_t end;        /* end of the valid prefix: appends go here */
  int64_t file_bytes;
  int64_t slice_index, slice_count;
  char *command_line, *sweep_text;
  uint8_t *buf;       /* one record being built or read */
  size_t cap;
};

char *fmt_journal_path(const char *h5path) {
  char *file = fmt_path_resolved(h5path);
  char *p = file ? fmt_path_suffixed(file, ".journal") : NULL;
  free(file);
  return p;
}

uint32_t fmt_journal_crc_text(const char *text) {
  return (uint32_t)crc32(0L, (const Bytef *)text, (uInt)strlen(text));
}

/* crc32 over any length (zlib's length argument is an uInt). */
static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t n) {
  while (n) {
    uInt part = n > (1u << 30) ? (1u << 30) : (uInt)n;
    crc = (uint32_t)crc32(crc, p, part);
    p += part;
    n -= part;
  }
  return crc;
}

static int write_all(int fd, const void *p, size_t n, off_t at) {
  const uint8_t *b = p;
  while (n) {
    ssize_t w = pwrite(fd, b, n, at);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    b += w;
    n -= (size_t)w;
    at += w;
  }
  return 0;
}

static int read_all(int fd, void *p, size_t n, off_t at) {
  uint8_t *b = p;
  while (n) {
    ssize_t r = pread(fd, b, n, at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    b += r;
    n -= (size_t)r;
    at += r;
  }
  return 0;
}

static int grow(fmt_journal *j, size_t n) {
  if (n <= j->cap) return 0;
  size_t c = j->cap ? j->cap : 65536;
  while (c < n) c *= 2;
  uint8_t *b = realloc(j->buf, c);
  if (!b) return -1;
  j->buf = b;
  j->cap = c;
  return 0;
}

/* Makes room for rows [0, n) in j->at (new ones: no record). */
static int rows_reserve(fmt_journal *j, int64_t n) {
  if (n <= j->at_cap) return 0;
  int64_t c = j->at_cap > 0 ? j->at_cap : 1;
  while (c < n) c *= 2;
  int64_t *a = realloc(j->at, (size_t)c * sizeof *a);
  if (!a) return -1;
  for (int64_t r = j->at_cap; r < c; r++) a[r] = -1;
  j->at = a;
  j->at_cap = c;
  return 0;
}

static fmt_journal *journal_alloc(const char *h5path) {
  fmt_journal *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->fd = -1;
  j->path = fmt_journal_path(h5path);
  for (int g = 0; g < GROUP_NAMES; g++) j->group[g].at = -1;
  if (!j->path) {
    fmt_journal_close(j);
    return NULL;
  }
  return j;
}

/* The shapes the records are checked against: the sweep's (or, for a
 * journal opened without one, its own header's). */
static int journal_shape(fmt_journal *j, int64_t n_runs, int32_t ticks, const int32_t *wide) {
  if (n_runs < 0 || n_runs > SWP_MAX_RUNS || ticks < 0 || ticks > FMT_MAX_TICKS) return -1;
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if (wide[w] < 0 || wide[w] > fmt_layout_wide_max((fmt_wide)w)) return -1;
  j->n_runs = j->rows = n_runs;
  j->ticks = ticks;
  memcpy(j->wide, wide, sizeof j->wide);
  j->n_wide = 0;
  for (int w = 0; w < FMT_WIDE_COUNT; w++) j->n_wide += wide[w] > 0;
  return rows_reserve(j, n_runs > 0 ? n_runs : 1);
}

void fmt_journal_close(fmt_journal *j) {
  if (!j) return;
  if (j->fd >= 0) close(j->fd);
  free(j->path);
  free(j->at);
  free(j->appends);
  free(j->command_line);
  free(j->sweep_text);
  free(j->buf);
  free(j);
}

#define PUT(p, off, v) memcpy((p) + (off), &(v), sizeof(v))
#define GET(p, off, v) memcpy(&(v), (p) + (off), sizeof(v))

int fmt_journal_create(fmt_journal **out, const char *h5path, const fmt_journal_id *id,
                       char *err, size_t errlen) {
  *out = NULL;
  fmt_journal *j = journal_alloc(h5path);
  if (!j || journal_shape(j, id->n_runs, id->ticks, id->wide)) {
    fmt_journal_close(j);
    swp_seterr(err, errlen, "%s: out of memory", h5path);
    return -1;
  }
  j->instance = id->instance;
  const char *cmd = id->command_line ? id->command_line : "";
  const char *text = id->sweep_text ? id->sweep_text : "";
  uint32_t tool_len = (uint32_t)strlen(id->tool_version), cmd_len = (uint32_t)strlen(cmd);
  uint32_t text_len = (uint32_t)strlen(text);
  uint32_t hlen = J_FIXED + tool_len + cmd_len + text_len + 4, order = J_ORDER;
  int32_t ssize = (int32_t)sizeof(eng_summary);
  if (grow(j, hlen) || !(j->command_line = strdup(cmd))) {
    fmt_journal_close(j);
    swp_seterr(err, errlen, "%s: out of memory", h5path);
    return -1;
  }
  uint8_t *p = j->buf;
  memset(p, 0, hlen);
  memcpy(p, J_MAGIC, 8);
  PUT(p, 8, order);
  PUT(p, 12, hlen);
  PUT(p, 16, id->master_seed);
  PUT(p, 24, id->n_runs);
  PUT(p, 32, id->ticks);
  PUT(p, 36, ssize);
  PUT(p, 40, id->slice_index);
  PUT(p, 48, id->slice_count);
  PUT(p, 56, id->sweep_crc);
  PUT(p, 60, tool_len);
  PUT(p, 64, cmd_len);
  PUT(p, 68, id->instance);
  memcpy(p + 76, id->wide, sizeof id->wide);
  PUT(p, J_FIXED - 4, text_len);
  memcpy(p + J_FIXED, id->tool_version, tool_len);
  memcpy(p + J_FIXED + tool_len, cmd, cmd_len);
  memcpy(p + J_FIXED + tool_len + cmd_len, text, text_len);
  uint32_t crc = crc_bytes(0, p, hlen - 4);
  PUT(p, hlen - 4, crc);
  /* A fresh file, never the one an old name points to: a hard link named
   * FILE.journal (a cp -al backup of it) keeps its content; only the name
   * is replaced. O_EXCL also refuses a name planted between the two. */
  if (unlink(j->path) && errno != ENOENT) {
    swp_seterr(err, errlen, "%s: cannot replace its old journal %s: %s", h5path, j->path,
               strerror(errno));
    fmt_journal_close(j);
    return -1;
  }
  j->fd = open(j->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (j->fd < 0 || write_all(j->fd, p, hlen, 0) || fdatasync(j->fd) || fmt_fsync_dir(j->path)) {
    swp_seterr(err, errlen, "%s: cannot write its journal %s: %s", h5path, j->path,
               strerror(errno));
    if (j->fd >= 0) unlink(j->path);
    fmt_journal_close(j);
    return -1;
  }
  j->end = j->file_bytes = hlen;
  *out = j;
  return 0;
}

static uint32_t get_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Checks the header (against id when given; else takes its shapes from
 * it); names the first difference. */
static int header_check(fmt_journal *j, const char *h5path, const fmt_journal_id *id,
                        int64_t size, char *err, size_t errlen) {
  uint8_t fixed[J_FIXED];
  if (size < J_FIXED + 4 || read_all(j->fd, fixed, J_FIXED, 0)) {
    swp_seterr(err, errlen, "%s: its journal %s is cut short before the end of its header",
               h5path, j->path);
    return -1;
  }
  uint32_t order, hlen, tool_len, cmd_len, sweep_crc, text_len;
  uint64_t seed;
  int64_t n_runs, si, sc;
  int32_t ticks, ssize, wide[FMT_WIDE_COUNT];
  GET(fixed, 8, order);
  GET(fixed, 12, hlen);
  GET(fixed, 16, seed);
  GET(fixed, 24, n_runs);
  GET(fixed, 32, ticks);
  GET(fixed, 36, ssize);
  GET(fixed, 40, si);
  GET(fixed, 48, sc);
  GET(fixed, 56, sweep_crc);
  GET(fixed, 60, tool_len);
  GET(fixed, 64, cmd_len);
  GET(fixed, 68, j->instance);
  memcpy(wide, fixed + 76, sizeof wide);
  GET(fixed, J_FIXED - 4, text_len);
  if (memcmp(fixed, J_MAGIC, 8) || order != J_ORDER || hlen > 1u << 24 || hlen > size ||
      (uint64_t)J_FIXED + tool_len + cmd_len + text_len + 4 != hlen || grow(j, hlen) ||
      read_all(j->fd, j->buf, hlen, 0) ||
      crc_bytes(0, j->buf, hlen - 4) != get_u32(j->buf + hlen - 4)) {
    swp_seterr(err, errlen,
               "%s: %s is not a journal of this stormsweep version, or its header is damaged",
               h5path, j->path);
    return -1;
  }
  const char *what = NULL;
  if (id) {
    if (tool_len != strlen(id->tool_version) ||
        memcmp(j->buf + J_FIXED, id->tool_version, tool_len))
      what = "another stormsweep version";
    else if (seed != id->master_seed) what = "another master seed";
    else if (sweep_crc != id->sweep_crc) what = "another sweep definition";
    else if (n_runs != id->n_runs || ticks != id->ticks || memcmp(wide, id->wide, sizeof wide) ||
             ssize != (int32_t)sizeof(eng_summary))
      what = "another shape (runs, ticks, shards, services)";
    else if (si != id->slice_index || sc != id->slice_count) what = "another slice";
  } else if (ssize != (int32_t)sizeof(eng_summary)) {
    what = "another stormsweep version";
  }
  if (what) {
    swp_seterr(err, errlen, "%s: its journal %s belongs to %s", h5path, j->path, what);
    return -1;
  }
  if (journal_shape(j, n_runs, ticks, wide)) {
    swp_seterr(err, errlen, "%s: its journal %s declares impossible shapes", h5path, j->path);
    return -1;
  }
  j->command_line = malloc(cmd_len + 1);
  j->sweep_text = malloc(text_len + 1);
  if (!j->command_line || !j->sweep_text) return -1;
  memcpy(j->command_line, j->buf + J_FIXED + tool_len, cmd_len);
  j->command_line[cmd_len] = 0;
  memcpy(j->sweep_text, j->buf + J_FIXED + tool_len + cmd_len, text_len);
  j->sweep_text[text_len] = 0;
  if (strlen(j->sweep_text) != text_len || crc_bytes(0, (const uint8_t *)j->sweep_text,
                                                     text_len) != (text_len ? sweep_crc : 0)) {
    swp_seterr(err, errlen, "%s: its journal %s has a damaged sweep text", h5path, j->path);
    return -1;
  }
  j->slice_index = si;
  j->slice_count = sc;
  j->end = hlen;
  return 0;
}

/* The largest payload a record of this kind may have in this journal. */
static uint64_t kind_bound(const fmt_journal *j, uint32_t kind) {
  switch (kind) {
  case K_RUN: {
    uint64_t b = R_FIXED(j) + (uint64_t)ENG_M_COUNT * fmt_chunk_bound((size_t)j->ticks);
    for (int w = 0; w < FMT_WIDE_COUNT; w++)
      if (j->wide[w])
        b += fmt_chunk_bound((size_t)fmt_wide_rows((fmt_wide)w, j->ticks) * (size_t)j->wide[w]);
    return b;
  }
  case K_ROWS: return 16 + (uint64_t)ROW_BYTES * (uint64_t)(SWP_MAX_RUNS - j->rows);
  case K_GROUP: return GROUP_MAX;
  }
  return 0;
}

/* Reads and checks the record at off into j->buf (kind, len, payload,
 * crc); returns its total size, 0 where the valid prefix ends. A run's
 * record must name a row the journal knows and have consistent chunk
 * sizes; the other kinds are checked where they are used. */
static int64_t record_at(fmt_journal *j, int64_t off, int64_t size, uint32_t *kind,
                         int64_t *run) {
  uint32_t head[2];
  if (off + 12 > size || read_all(j->fd, head, 8, off)) return 0;
  uint64_t len = head[1], bound = kind_bound(j, head[0]);
  if (!bound || len > bound || (int64_t)(off + 12 + (int64_t)len) > size || grow(j, len + 12))
    return 0;
  if (read_all(j->fd, j->buf, len + 12, off)) return 0;
  uint32_t crc;
  memcpy(&crc, j->buf + 8 + len, 4);
  if (crc_bytes(0, j->buf, 8 + len) != crc) return 0;
  *kind = head[0];
  *run = -1;
  if (head[0] != K_RUN) return 12 + (int64_t)len;
  const uint8_t *p = j->buf + 8;
  if (len < R_FIXED(j)) return 0;
  int64_t r;
  memcpy(&r, p, 8);
  if (r < 0 || r >= j->rows) return 0;
  size_t bound1 = fmt_chunk_bound((size_t)j->ticks), sum = 0;
  for (int m = 0; m < ENG_M_COUNT; m++) {
    uint32_t cs;
    memcpy(&cs, p + R_FIXED(j) - 4 * ENG_M_COUNT + 4 * m, 4);
    if (cs > bound1) return 0; /* 0: a metric the sweep does not record */
    sum += cs;
  }
  /* The wide chunks: one of each the journal records when the run stores
   * rows (sum 0: one that stores none, refine's; fmt__record_check says
   * which may), none of the others. */
  int rows = sum != 0;
  for (int w = 0, slot = 0; w < FMT_WIDE_COUNT; w++) {
    if (!j->wide[w]) continue;
    uint32_t cs;
    memcpy(&cs, p + R_WIDE + 4 * slot++, 4);
    if ((cs != 0) != rows) return 0;
    if (cs > fmt_chunk_bound((size_t)fmt_wide_rows((fmt_wide)w, j->ticks) * (size_t)j->wide[w]))
      return 0;
    sum += cs;
  }
  if (R_FIXED(j) + sum != len) return 0;
  *run = r;
  return 12 + (int64_t)len;
}

/* A rows-appended record in j->buf, of length len: its first row and count,
 * if it continues the rows so far. */
static int rows_record_parse(const fmt_journal *j, uint64_t len, int64_t *first, int64_t *n) {
  const uint8_t *p = j->buf + 8;
  if (len < 16) return -1;
  memcpy(first, p, 8);
  memcpy(n, p + 8, 8);
  if (*first != j->rows || *n <= 0 || *n > SWP_MAX_RUNS - j->rows ||
      len != 16 + (uint64_t)*n * ROW_BYTES)
    return -1;
  return 0;
}

/* A group record in j->buf: its name (NUL-terminated into name). */
static int group_record_parse(const fmt_journal *j, uint64_t len, char *name, size_t cap,
                              size_t *image_at) {
  const uint8_t *p = j->buf + 8;
  uint32_t nl;
  if (len < 4) return -1;
  memcpy(&nl, p, 4);
  if (nl == 0 || nl >= cap || 4 + (uint64_t)nl >= len) return -1;
  memcpy(name, p + 4, nl);
  name[nl] = 0;
  if (strlen(name) != nl) return -1;
  *image_at = 4 + nl;
  return 0;
}

static int group_slot(fmt_journal *j, const char *name, int add) {
  for (int g = 0; g < GROUP_NAMES; g++)
    if (j->group[g].at >= 0 && !strcmp(j->group[g].name, name)) return g;
  if (!add) return -1;
  for (int g = 0; g < GROUP_NAMES; g++)
    if (j->group[g].at < 0) {
      snprintf(j->group[g].name, sizeof j->group[g].name, "%s", name);
      return g;
    }
  return -1;
}

/* Takes in the record at off (already read into j->buf by record_at);
 * 0, or -1 when it is out of place (the valid prefix ends before it). */
static int record_take(fmt_journal *j, int64_t off, int64_t n, uint32_t kind, int64_t run) {
  uint64_t len = (uint64_t)n - 12;
  if (kind == K_RUN) {
    if (j->at[run] < 0) j->count++;
    j->at[run] = off;
    return 0;
  }
  if (kind == K_ROWS) {
    int64_t first, rows;
    if (rows_record_parse(j, len, &first, &rows) || rows_reserve(j, j->rows + rows)) return -1;
    if (j->n_appends == j->appends_cap) {
      size_t c = j->appends_cap ? 2 * j->appends_cap : 8;
      int64_t *a = realloc(j->appends, c * sizeof *a);
      if (!a) return -1;
      j->appends = a;
      j->appends_cap = c;
    }
    j->appends[j->n_appends++] = off;
    j->rows += rows;
    return 0;
  }
  char name[32];
  size_t image_at;
  int g = group_record_parse(j, len, name, sizeof name, &image_at) ? -1 : group_slot(j, name, 1);
  if (g < 0) return -1;
  j->group[g].at = off;
  return 0;
}

int fmt_journal_open(fmt_journal **out, const char *h5path, const fmt_journal_id *id,
                     int *exists, char *err, size_t errlen) {
  *out = NULL;
  *exists = 0;
  fmt_journal *j = journal_alloc(h5path);
  if (!j) {
    swp_seterr(err, errlen, "%s: out of memory", h5path);
    return -1;
  }
  j->fd = open(j->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (j->fd < 0) {
    int e = errno;
    struct stat ls;
    int is_link = e == ELOOP && lstat(j->path, &ls) == 0 && S_ISLNK(ls.st_mode);
    if (e == ENOENT) {
      fmt_journal_close(j);
      return 0;
    }
    *exists = 1;
    if (is_link)
      swp_seterr(err, errlen,
                 "%s: its journal %s is a symbolic link, which stormsweep never follows; if it "
                 "points at this file's journal, put that file in its place (mv)",
                 h5path, j->path);
    else
      swp_seterr(err, errlen, "%s: cannot open its journal %s: %s", h5path, j->path,
                 strerror(e));
    fmt_journal_close(j);
    return -1;
  }
  *exists = 1;
  struct stat st;
  if (fstat(j->fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
    swp_seterr(err, errlen,
               "%s: its journal %s is %s; stormsweep writes only journals it made (move it "
               "aside)",
               h5path, j->path,
               S_ISREG(st.st_mode) ? "a file with more than one name (a hard link)"
                                   : "not a regular file");
    fmt_journal_close(j);
    return -1;
  }
  if (header_check(j, h5path, id, (int64_t)st.st_size, err, errlen)) {
    if (!err || !err[0]) swp_seterr(err, errlen, "%s: cannot read its journal", h5path);
    fmt_journal_close(j);
    return -1;
  }
  j->file_bytes = (int64_t)st.st_size;
  int64_t off = j->end, r, n;
  uint32_t kind;
  while ((n = record_at(j, off, j->file_bytes, &kind, &r)) > 0 &&
         !record_take(j, off, n, kind, r))
    off += n;
  j->end = off;
  *out = j;
  return 0;
}

uint64_t fmt_journal_instance(const fmt_journal *j) { return j->instance; }
int64_t fmt_journal_count(const fmt_journal *j) { return j ? j->count : 0; }
int64_t fmt_journal_rows(const fmt_journal *j) { return j->rows; }
int64_t fmt_journal_sweep_runs(const fmt_journal *j) { return j->n_runs; }
int fmt_journal_has(const fmt_journal *j, int64_t run) {
  return j && run >= 0 && run < j->rows && j->at[run] >= 0;
}
int64_t fmt_journal_valid_bytes(const fmt_journal *j) { return j->end; }
int64_t fmt_journal_file_bytes(const fmt_journal *j) { return j->file_bytes; }
const char *fmt_journal_command_line(const fmt_journal *j) {
  return j->command_line ? j->command_line : "";
}
const char *fmt_journal_sweep_text(const fmt_journal *j) {
  return j->sweep_text ? j->sweep_text : "";
}
void fmt_journal_slice(const fmt_journal *j, int64_t *index, int64_t *count) {
  *index = j->slice_index;
  *count = j->slice_count;
}

/* Copies the payload of the record just read (len bytes) into *buf. */
static int payload_copy(fmt_journal *j, size_t len, uint8_t **buf, size_t *cap) {
  if (len > *cap) {
    uint8_t *b = realloc(*buf, len ? len : 1);
    if (!b) return -1;
    *buf = b;
    *cap = len;
  }
  memcpy(*buf, j->buf + 8, len);
  return 0;
}

int fmt_journal_read(fmt_journal *j, int64_t run, fmt_run_record *rec, uint8_t **buf,
                     size_t *cap, char *err, size_t errlen) {
  int64_t r = -1;
  uint32_t kind = 0;
  int64_t n = fmt_journal_has(j, run) ? record_at(j, j->at[run], j->file_bytes, &kind, &r) : 0;
  if (n <= 0 || kind != K_RUN || r != run) {
    swp_seterr(err, errlen, "%s: run %lld's record no longer reads back", j->path,
               (long long)run);
    return -1;
  }
  size_t len = (size_t)n - 12;
  if (payload_copy(j, len, buf, cap)) {
    swp_seterr(err, errlen, "%s: out of memory", j->path);
    return -1;
  }
  const uint8_t *p = *buf;
  memset(rec, 0, sizeof *rec);
  memcpy(&rec->run, p, 8);
  memcpy(&rec->point, p + 8, 8);
  memcpy(&rec->replicate, p + 16, 4);
  memcpy(&rec->ticks, p + 20, 4);
  memcpy(&rec->wall_s, p + 24, 8);
  memcpy(&rec->thread, p + 32, 4);
  memcpy(&rec->summary, p + R_SUMMARY(j), sizeof(eng_summary));
  size_t at = R_FIXED(j);
  for (int m = 0; m < ENG_M_COUNT; m++) {
    uint32_t cs;
    memcpy(&cs, p + R_FIXED(j) - 4 * ENG_M_COUNT + 4 * m, 4);
    rec->chunk[m] = p + at;
    rec->chunk_size[m] = cs;
    at += cs;
  }
  for (int w = 0, slot = 0; w < FMT_WIDE_COUNT; w++) {
    if (!j->wide[w]) continue;
    uint32_t cs;
    memcpy(&cs, p + R_WIDE + 4 * slot++, 4);
    if (!cs) continue;
    rec->wide_chunk[w] = p + at;
    rec->wide_chunk_size[w] = cs;
    at += cs;
  }
  if (at != len) {
    swp_seterr(err, errlen, "%s: run %lld's record has inconsistent chunk sizes", j->path,
               (long long)run);
    return -1;
  }
  return 0;
}

size_t fmt_journal_appends(const fmt_journal *j) { return j->n_appends; }

int fmt_journal_read_append(fmt_journal *j, size_t i, int64_t *first, int64_t *n,
                            int64_t **point, int32_t **replicate, char *err, size_t errlen) {
  *point = NULL;
  *replicate = NULL;
  uint32_t kind = 0;
  int64_t r, len = i < j->n_appends ? record_at(j, j->appends[i], j->file_bytes, &kind, &r) : 0;
  /* Parsed against the rows before it: the count it was taken in with. */
  int64_t rows = j->rows;
  int ok = len > 0 && kind == K_ROWS;
  if (ok) {
    memcpy(first, j->buf + 8, 8);
    j->rows = *first;
    ok = !rows_record_parse(j, (uint64_t)len - 12, first, n);
    j->rows = rows;
  }
  if (ok) {
    *point = malloc((size_t)*n * sizeof **point);
    *replicate = malloc((size_t)*n * sizeof **replicate);
    ok = *point && *replicate;
    for (int64_t k = 0; ok && k < *n; k++) {
      const uint8_t *p = j->buf + 8 + 16 + (size_t)k * ROW_BYTES;
      memcpy(&(*point)[k], p, 8);
      memcpy(&(*replicate)[k], p + 8, 4);
    }
  }
  if (!ok) {
    free(*point);
    free(*replicate);
    *point = NULL;
    *replicate = NULL;
    swp_seterr(err, errlen, "%s: its record of appended rows %zu no longer reads back", j->path,
               i);
    return -1;
  }
  return 0;
}

size_t fmt_journal_groups(const fmt_journal *j, const char **names, size_t cap) {
  size_t n = 0;
  for (int g = 0; g < GROUP_NAMES; g++)
    if (j->group[g].at >= 0 && n < cap) names[n++] = j->group[g].name;
  return n;
}

int fmt_journal_read_group(fmt_journal *j, const char *name, uint8_t **image, size_t *size,
                           char *err, size_t errlen) {
  *image = NULL;
  *size = 0;
  int g = group_slot(j, name, 0);
  if (g < 0) return 1;
  uint32_t kind = 0;
  int64_t r, n = record_at(j, j->group[g].at, j->file_bytes, &kind, &r);
  char got[32];
  size_t image_at = 0;
  size_t cap = 0;
  if (n <= 0 || kind != K_GROUP ||
      group_record_parse(j, (uint64_t)n - 12, got, sizeof got, &image_at) || strcmp(got, name) ||
      payload_copy(j, (size_t)n - 12, image, &cap)) {
    free(*image);
    *image = NULL;
    swp_seterr(err, errlen, "%s: its record of /%s no longer reads back", j->path, name);
    return -1;
  }
  *size = (size_t)n - 12 - image_at;
  memmove(*image, *image + image_at, *size);
  return 0;
}

int fmt_journal_truncate_tail(fmt_journal *j, char *err, size_t errlen) {
  if (j->file_bytes == j->end) return 0;
  if (ftruncate(j->fd, (off_t)j->end) || fdatasync(j->fd)) {
    swp_seterr(err, errlen, "%s: cutting its torn tail: %s", j->path, strerror(errno));
    return -1;
  }
  j->file_bytes = j->end;
  return 0;
}

/* Frames the payload built at j->buf + 8 (len bytes) as a record of kind,
 * writes it at the end of the valid prefix and takes it in. */
static int record_put(fmt_journal *j, uint32_t kind, size_t len, char *err, size_t errlen) {
  uint32_t l32 = (uint32_t)len;
  PUT(j->buf, 0, kind);
  PUT(j->buf, 4, l32);
  uint32_t crc = crc_bytes(0, j->buf, 8 + len);
  PUT(j->buf, 8 + len, crc);
  if (write_all(j->fd, j->buf, len + 12, (off_t)j->end)) {
    int e = errno;
    int cut = ftruncate(j->fd, (off_t)j->end); /* a partial record is ignored anyway */
    (void)cut;
    swp_seterr(err, errlen, "%s: writing a record: %s", j->path, strerror(e));
    return -1;
  }
  int64_t off = j->end;
  int64_t run = -1;
  if (kind == K_RUN) memcpy(&run, j->buf + 8, 8);
  if (record_take(j, off, (int64_t)len + 12, kind, run)) {
    swp_seterr(err, errlen, "%s: out of memory", j->path);
    return -1;
  }
  j->end += (int64_t)len + 12;
  j->file_bytes = j->end;
  return 0;
}

int fmt_journal_append(fmt_journal *j, const fmt_run_record *rec, char *err, size_t errlen) {
  if (rec->run < 0 || rec->run >= j->rows) {
    swp_seterr(err, errlen, "%s: run %lld is outside the journal's %lld rows", j->path,
               (long long)rec->run, (long long)j->rows);
    return -1;
  }
  size_t len = R_FIXED(j);
  for (int m = 0; m < ENG_M_COUNT; m++) len += rec->chunk_size[m];
  int rows = len > R_FIXED(j), fits = 1;
  for (int w = 0; w < FMT_WIDE_COUNT; w++) {
    len += rec->wide_chunk_size[w];
    if ((rec->wide_chunk_size[w] != 0) != (j->wide[w] && rows)) fits = 0;
  }
  if (!fits || len > kind_bound(j, K_RUN)) {
    swp_seterr(err, errlen, "%s: run %lld's chunks do not fit its journal's shapes", j->path,
               (long long)rec->run);
    return -1;
  }
  if (grow(j, len + 12)) {
    swp_seterr(err, errlen, "%s: out of memory", j->path);
    return -1;
  }
  uint8_t *p = j->buf + 8;
  PUT(p, 0, rec->run);
  PUT(p, 8, rec->point);
  PUT(p, 16, rec->replicate);
  PUT(p, 20, rec->ticks);
  PUT(p, 24, rec->wall_s);
  PUT(p, 32, rec->thread);
  for (int w = 0, slot = 0; w < FMT_WIDE_COUNT; w++) {
    if (!j->wide[w]) continue;
    uint32_t cs = (uint32_t)rec->wide_chunk_size[w];
    PUT(p, R_WIDE + 4 * (size_t)slot++, cs);
  }
  memcpy(p + R_SUMMARY(j), &rec->summary, sizeof(eng_summary));
  size_t at = R_FIXED(j);
  for (int m = 0; m < ENG_M_COUNT; m++) {
    uint32_t cs = (uint32_t)rec->chunk_size[m];
    PUT(p, R_FIXED(j) - 4 * ENG_M_COUNT + 4 * (size_t)m, cs);
    if (cs) memcpy(p + at, rec->chunk[m], rec->chunk_size[m]); /* none stored: NULL */
    at += rec->chunk_size[m];
  }
  for (int w = 0; w < FMT_WIDE_COUNT; w++) {
    if (rec->wide_chunk_size[w]) memcpy(p + at, rec->wide_chunk[w], rec->wide_chunk_size[w]);
    at += rec->wide_chunk_size[w];
  }
  return record_put(j, K_RUN, len, err, errlen);
}

int fmt_journal_append_rows(fmt_journal *j, int64_t first, int64_t n, const int64_t *point,
                            const int32_t *replicate, char *err, size_t errlen) {
  if (first != j->rows || n <= 0 || n > SWP_MAX_RUNS - j->rows) {
    swp_seterr(err, errlen, "%s: appended rows %lld..%lld do not continue its %lld rows",
               j->path, (long long)first, (long long)(first + n - 1), (long long)j->rows);
    return -1;
  }
  size_t len = 16 + (size_t)n * ROW_BYTES;
  if (grow(j, len + 12)) {
    swp_seterr(err, errlen, "%s: out of memory", j->path);
    return -1;
  }
  uint8_t *p = j->buf + 8;
  PUT(p, 0, first);
  PUT(p, 8, n);
  for (int64_t k = 0; k < n; k++) {
    PUT(p, 16 + (size_t)k * ROW_BYTES, point[k]);
    PUT(p, 16 + (size_t)k * ROW_BYTES + 8, replicate[k]);
  }
  return record_put(j, K_ROWS, len, err, errlen) || fmt_journal_sync(j, err, errlen) ? -1 : 0;
}

int fmt_journal_put_group(fmt_journal *j, const char *name, const void *image, size_t size,
                          char *err, size_t errlen) {
  size_t nl = strlen(name), len = 4 + nl + size;
  if (nl == 0 || nl >= sizeof j->group[0].name || len > GROUP_MAX ||
      (group_slot(j, name, 0) < 0 && group_slot(j, name, 1) < 0)) {
    swp_seterr(err, errlen, "%s: cannot journal /%s (%zu bytes)", j->path, name, size);
    return -1;
  }
  if (grow(j, len + 12)) {
    swp_seterr(err, errlen, "%s: out of memory", j->path);
    return -1;
  }
  uint8_t *p = j->buf + 8;
  uint32_t n32 = (uint32_t)nl;
  PUT(p, 0, n32);
  memcpy(p + 4, name, nl);
  memcpy(p + 4 + nl, image, size);
  return record_put(j, K_GROUP, len, err, errlen) || fmt_journal_sync(j, err, errlen) ? -1 : 0;
}

int fmt_journal_sync(fmt_journal *j, char *err, size_t errlen) {
  if (fdatasync(j->fd)) {
    swp_seterr(err, errlen, "%s: fdatasync: %s", j->path, strerror(errno));
    return -1;
  }
  return 0;
}

int fmt_journal_exists(const char *h5path) {
  char *p = fmt_journal_path(h5path);
  struct stat st;
  int e = p && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
  free(p);
  return e;
}

int fmt_journal_remove(const char *h5path) {
  char *p = fmt_journal_path(h5path);
  if (!p) return -1;
  int rc = unlink(p);
  rc = rc && errno != ENOENT ? -1 : 0;
  if (!rc) fmt_fsync_dir(p);
  free(p);
  return rc;
}
