/*
 * journal.c — FILE.journal: an append-only log of every run written to a
 * result file, made durable (fdatasync) at each commit before the run is
 * marked done in FILE. HDF5 1.10 rewrites its chunk indexes in place and has
 * no journal of its own, so after a power cut FILE may hold a mix of old and
 * new pages; the journal's records are each checked by a CRC, so its valid
 * prefix is exactly the runs that were committed, whatever state FILE is in.
 * `run --resume` checks FILE against it and, when FILE is damaged, rebuilds
 * FILE from it (resume.c, close.c). The journal goes once FILE is closed cleanly and
 * synced with every run of its sweep (or slice) in it.
 *
 * Layout (native byte order, checked by a marker; the journal is only read
 * by the same stormsweep version on the same machine kind that wrote it):
 *
 *   header: "SSWJRN1\0", u32 0x01020304, u32 header bytes, u64 master_seed,
 *           i64 n_runs, i32 ticks, i32 sizeof(eng_summary), i64 slice_index,
 *           i64 slice_count, u32 crc32(sweep text), u32 tool_len, u32 cmd_len,
 *           tool_version, command_line, u32 crc32(all of the above)
 *   record: u32 0x53524E31, u32 len, payload[len], u32 crc32(len, payload)
 *   payload: i64 run, i64 point, i32 replicate, i32 ticks, f64 wall_s,
 *           i32 thread, u32 shard_chunk_size, eng_summary, u32 chunk_size[19],
 *           the 19 chunks as stored in /ticks (shuffle + deflate), back to
 *           back, then the /ticks/shard_queue_depth chunk (record_shard_queues;
 *           shard_chunk_size 0: none)
 *
 * A record cut short, or failing its CRC, ends the valid prefix; a later
 * record of the same run replaces an earlier one (a rerun after a resume).
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

#define J_MAGIC "SSWJRN1"
#define J_ORDER 0x01020304u
#define J_FIXED 68
#define R_MAGIC 0x53524E31u
#define R_FIXED (8 + 8 + 4 + 4 + 8 + 4 + 4 + sizeof(eng_summary) + 4 * ENG_M_COUNT)

struct fmt_journal {
  int fd;
  char *path;
  int64_t n_runs;
  int32_t ticks;
  int64_t *at;        /* per run: offset of its latest record, -1 none */
  int64_t count;
  int64_t end;        /* end of the valid prefix: appends go here */
  int64_t file_bytes;
  char *command_line;
  uint8_t *buf;       /* one record being built */
  size_t cap;
};

char *fmt_journal_path(const char *h5path) { return fmt_path_suffixed(h5path, ".journal"); }

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

static fmt_journal *journal_alloc(const char *h5path, const fmt_journal_id *id) {
  fmt_journal *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->fd = -1;
  j->path = fmt_journal_path(h5path);
  j->n_runs = id->n_runs;
  j->ticks = id->ticks;
  j->at = malloc((size_t)(id->n_runs > 0 ? id->n_runs : 1) * sizeof *j->at);
  if (!j->path || !j->at) {
    fmt_journal_close(j);
    return NULL;
  }
  for (int64_t r = 0; r < id->n_runs; r++) j->at[r] = -1;
  return j;
}

void fmt_journal_close(fmt_journal *j) {
  if (!j) return;
  if (j->fd >= 0) close(j->fd);
  free(j->path);
  free(j->at);
  free(j->command_line);
  free(j->buf);
  free(j);
}

#define PUT(p, off, v) memcpy((p) + (off), &(v), sizeof(v))
#define GET(p, off, v) memcpy(&(v), (p) + (off), sizeof(v))

int fmt_journal_create(fmt_journal **out, const char *h5path, const fmt_journal_id *id,
                       char *err, size_t errlen) {
  *out = NULL;
  fmt_journal *j = journal_alloc(h5path, id);
  if (!j) {
    swp_seterr(err, errlen, "%s: out of memory", h5path);
    return -1;
  }
  const char *cmd = id->command_line ? id->command_line : "";
  uint32_t tool_len = (uint32_t)strlen(id->tool_version), cmd_len = (uint32_t)strlen(cmd);
  uint32_t hlen = J_FIXED + tool_len + cmd_len + 4, order = J_ORDER;
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
  memcpy(p + J_FIXED, id->tool_version, tool_len);
  memcpy(p + J_FIXED + tool_len, cmd, cmd_len);
  uint32_t crc = crc_bytes(0, p, hlen - 4);
  PUT(p, hlen - 4, crc);
  j->fd = open(j->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
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

/* Checks the header against id; names the first difference. */
static int header_check(fmt_journal *j, const char *h5path, const fmt_journal_id *id,
                        int64_t size, char *err, size_t errlen) {
  uint8_t fixed[J_FIXED];
  if (size < J_FIXED + 4 || read_all(j->fd, fixed, J_FIXED, 0)) {
    swp_seterr(err, errlen, "%s: its journal %s is cut short before the end of its header",
               h5path, j->path);
    return -1;
  }
  uint32_t order, hlen, tool_len, cmd_len, sweep_crc;
  uint64_t seed;
  int64_t n_runs, si, sc;
  int32_t ticks, ssize;
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
  if (memcmp(fixed, J_MAGIC, 8) || order != J_ORDER || hlen > 1u << 24 || hlen > size ||
      (uint64_t)J_FIXED + tool_len + cmd_len + 4 != hlen || grow(j, hlen) ||
      read_all(j->fd, j->buf, hlen, 0) ||
      crc_bytes(0, j->buf, hlen - 4) != get_u32(j->buf + hlen - 4)) {
    swp_seterr(err, errlen, "%s: %s is not a stormsweep journal, or its header is damaged",
               h5path, j->path);
    return -1;
  }
  const char *what = NULL;
  if (tool_len != strlen(id->tool_version) || memcmp(j->buf + J_FIXED, id->tool_version, tool_len))
    what = "another stormsweep version";
  else if (seed != id->master_seed) what = "another master seed";
  else if (sweep_crc != id->sweep_crc) what = "another sweep definition";
  else if (n_runs != id->n_runs || ticks != id->ticks || ssize != (int32_t)sizeof(eng_summary))
    what = "another shape (runs, ticks)";
  else if (si != id->slice_index || sc != id->slice_count) what = "another slice";
  if (what) {
    swp_seterr(err, errlen, "%s: its journal %s belongs to %s", h5path, j->path, what);
    return -1;
  }
  j->command_line = malloc(cmd_len + 1);
  if (!j->command_line) return -1;
  memcpy(j->command_line, j->buf + J_FIXED + tool_len, cmd_len);
  j->command_line[cmd_len] = 0;
  j->end = hlen;
  return 0;
}

/* Reads and checks the record at off into j->buf; returns its total size,
 * 0 where the valid prefix ends. */
static int64_t record_at(fmt_journal *j, int64_t off, int64_t size, int64_t *run) {
  uint32_t head[2];
  if (off + 12 > size || read_all(j->fd, head, 8, off) || head[0] != R_MAGIC) return 0;
  size_t bound = fmt_chunk_bound((size_t)j->ticks);
  size_t shard_bound = fmt_chunk_bound((size_t)j->ticks * ENG_MAX_SHARDS);
  uint64_t len = head[1];
  if (len < R_FIXED || len > R_FIXED + (uint64_t)ENG_M_COUNT * bound + shard_bound ||
      (int64_t)(off + 12 + (int64_t)len) > size || grow(j, len + 8))
    return 0;
  if (read_all(j->fd, j->buf, len + 8, off + 4)) return 0;
  /* j->buf: len, payload, crc */
  uint32_t crc;
  memcpy(&crc, j->buf + 4 + len, 4);
  if (crc_bytes(0, j->buf, 4 + len) != crc) return 0;
  const uint8_t *p = j->buf + 4;
  int64_t r;
  memcpy(&r, p, 8);
  if (r < 0 || r >= j->n_runs) return 0;
  size_t sum = 0;
  for (int m = 0; m < ENG_M_COUNT; m++) {
    uint32_t cs;
    memcpy(&cs, p + R_FIXED - 4 * ENG_M_COUNT + 4 * m, 4);
    if (cs == 0 || cs > bound) return 0;
    sum += cs;
  }
  uint32_t shard_cs; /* the per-shard queue chunk, 0: none */
  memcpy(&shard_cs, p + 36, 4);
  if (shard_cs > shard_bound) return 0;
  sum += shard_cs;
  if (R_FIXED + sum != len) return 0;
  *run = r;
  return 12 + (int64_t)len;
}

int fmt_journal_open(fmt_journal **out, const char *h5path, const fmt_journal_id *id,
                     int *exists, char *err, size_t errlen) {
  *out = NULL;
  *exists = 0;
  fmt_journal *j = journal_alloc(h5path, id);
  if (!j) {
    swp_seterr(err, errlen, "%s: out of memory", h5path);
    return -1;
  }
  j->fd = open(j->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (j->fd < 0) {
    int e = errno;
    fmt_journal_close(j);
    if (e == ENOENT) return 0;
    swp_seterr(err, errlen, "%s: cannot open its journal: %s", h5path, strerror(e));
    return -1;
  }
  *exists = 1;
  struct stat st;
  if (fstat(j->fd, &st) || header_check(j, h5path, id, (int64_t)st.st_size, err, errlen)) {
    if (!err || !err[0]) swp_seterr(err, errlen, "%s: cannot read its journal", h5path);
    fmt_journal_close(j);
    return -1;
  }
  j->file_bytes = (int64_t)st.st_size;
  int64_t off = j->end, r, n;
  while ((n = record_at(j, off, j->file_bytes, &r)) > 0) {
    if (j->at[r] < 0) j->count++;
    j->at[r] = off;
    off += n;
  }
  j->end = off;
  *out = j;
  return 0;
}

int64_t fmt_journal_count(const fmt_journal *j) { return j ? j->count : 0; }
int fmt_journal_has(const fmt_journal *j, int64_t run) {
  return j && run >= 0 && run < j->n_runs && j->at[run] >= 0;
}
int64_t fmt_journal_valid_bytes(const fmt_journal *j) { return j->end; }
int64_t fmt_journal_file_bytes(const fmt_journal *j) { return j->file_bytes; }
const char *fmt_journal_command_line(const fmt_journal *j) {
  return j->command_line ? j->command_line : "";
}

int fmt_journal_read(fmt_journal *j, int64_t run, fmt_run_record *rec, uint8_t **buf,
                     size_t *cap, char *err, size_t errlen) {
  int64_t r = -1;
  int64_t n = fmt_journal_has(j, run) ? record_at(j, j->at[run], j->file_bytes, &r) : 0;
  if (n <= 0 || r != run) {
    swp_seterr(err, errlen, "%s: run %lld's record no longer reads back", j->path,
               (long long)run);
    return -1;
  }
  size_t len = (size_t)n - 12;
  if (len > *cap) {
    uint8_t *b = realloc(*buf, len);
    if (!b) {
      swp_seterr(err, errlen, "%s: out of memory", j->path);
      return -1;
    }
    *buf = b;
    *cap = len;
  }
  memcpy(*buf, j->buf + 4, len);
  const uint8_t *p = *buf;
  memset(rec, 0, sizeof *rec);
  memcpy(&rec->run, p, 8);
  memcpy(&rec->point, p + 8, 8);
  memcpy(&rec->replicate, p + 16, 4);
  memcpy(&rec->ticks, p + 20, 4);
  memcpy(&rec->wall_s, p + 24, 8);
  memcpy(&rec->thread, p + 32, 4);
  memcpy(&rec->summary, p + 40, sizeof(eng_summary));
  size_t at = R_FIXED;
  for (int m = 0; m < ENG_M_COUNT; m++) {
    uint32_t cs;
    memcpy(&cs, p + R_FIXED - 4 * ENG_M_COUNT + 4 * m, 4);
    rec->chunk[m] = p + at;
    rec->chunk_size[m] = cs;
    at += cs;
  }
  uint32_t shard_cs;
  memcpy(&shard_cs, p + 36, 4);
  if (shard_cs) {
    rec->shard_chunk = p + at;
    rec->shard_chunk_size = shard_cs;
    at += shard_cs;
  }
  if (at != len) {
    swp_seterr(err, errlen, "%s: run %lld's record has inconsistent chunk sizes", j->path,
               (long long)run);
    return -1;
  }
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

int fmt_journal_append(fmt_journal *j, const fmt_run_record *rec, char *err, size_t errlen) {
  if (rec->run < 0 || rec->run >= j->n_runs) {
    swp_seterr(err, errlen, "%s: run %lld is outside the journal's %lld runs", j->path,
               (long long)rec->run, (long long)j->n_runs);
    return -1;
  }
  size_t len = R_FIXED;
  for (int m = 0; m < ENG_M_COUNT; m++) len += rec->chunk_size[m];
  len += rec->shard_chunk_size;
  if (rec->shard_chunk_size > UINT32_MAX) {
    swp_seterr(err, errlen, "%s: run %lld's per-shard chunk is too large to journal", j->path,
               (long long)rec->run);
    return -1;
  }
  if (grow(j, len + 12)) {
    swp_seterr(err, errlen, "%s: out of memory", j->path);
    return -1;
  }
  uint8_t *b = j->buf, *p = b + 8;
  uint32_t magic = R_MAGIC, l32 = (uint32_t)len, shard32 = (uint32_t)rec->shard_chunk_size;
  PUT(b, 0, magic);
  PUT(b, 4, l32);
  PUT(p, 0, rec->run);
  PUT(p, 8, rec->point);
  PUT(p, 16, rec->replicate);
  PUT(p, 20, rec->ticks);
  PUT(p, 24, rec->wall_s);
  PUT(p, 32, rec->thread);
  PUT(p, 36, shard32);
  memcpy(p + 40, &rec->summary, sizeof(eng_summary));
  size_t at = R_FIXED;
  for (int m = 0; m < ENG_M_COUNT; m++) {
    uint32_t cs = (uint32_t)rec->chunk_size[m];
    PUT(p, R_FIXED - 4 * ENG_M_COUNT + 4 * (size_t)m, cs);
    memcpy(p + at, rec->chunk[m], rec->chunk_size[m]);
    at += rec->chunk_size[m];
  }
  if (rec->shard_chunk_size) memcpy(p + at, rec->shard_chunk, rec->shard_chunk_size);
  uint32_t crc = crc_bytes(0, b + 4, 4 + len);
  PUT(b, 8 + len, crc);
  if (write_all(j->fd, b, len + 12, (off_t)j->end)) {
    int e = errno;
    int cut = ftruncate(j->fd, (off_t)j->end); /* a partial record is ignored anyway */
    (void)cut;
    swp_seterr(err, errlen, "%s: writing run %lld: %s", j->path, (long long)rec->run,
               strerror(e));
    return -1;
  }
  if (j->at[rec->run] < 0) j->count++;
  j->at[rec->run] = j->end;
  j->end += (int64_t)len + 12;
  j->file_bytes = j->end;
  return 0;
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
