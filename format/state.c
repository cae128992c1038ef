/*
 * state.c — an open result-file writer (writer.h says how it stays durable):
 * allocating and releasing it, the commit that makes staged runs durable,
 * writing one run's chunks and staging its row, freezing a file after a
 * failed write, and the disk-space reservation that makes a full disk fail
 * before a flush rather than in the middle of one.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "writer.h"

#define FORMAT_NAME FMT_FORMAT_NAME
#define FORMAT_VERSION FMT_FORMAT_VERSION

/* File access: the metadata cache never evicts (so never writes) on its
 * own; metadata reaches the disk only when we commit (see Durability). */
hid_t fmt__file_access(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5AC_cache_config_t c;
  memset(&c, 0, sizeof c);
  c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  if (fapl < 0 || H5Pget_mdc_config(fapl, &c) < 0) return fapl;
  c.evictions_enabled = 0;
  c.incr_mode = H5C_incr__off;
  c.flash_incr_mode = H5C_flash_incr__off;
  c.decr_mode = H5C_decr__off;
  H5Pset_mdc_config(fapl, &c);
  H5Pset_evict_on_close(fapl, 1);
  return fapl;
}

/* A random, nonzero id for a new file instance: what binds a journal to the
 * one file it belongs to. Without the kernel's entropy, the clock, the
 * process and an address still make a copy of the same name unlikely to
 * get the same id. */
uint64_t fmt__instance_new(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    v = eng_seed_derive((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                        (uint64_t)getpid(), (uint64_t)(uintptr_t)&v);
  }
  return v ? v : 1;
}

static void out_release(fmt_out *o) {
  if (o->runs >= 0) H5Dclose(o->runs);
  if (o->runs_mem >= 0) H5Tclose(o->runs_mem);
  if (o->runs_space >= 0) H5Sclose(o->runs_space);
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (o->ticks[m] >= 0) H5Dclose(o->ticks[m]);
  if (o->wall >= 0) H5Dclose(o->wall);
  if (o->thread >= 0) H5Dclose(o->thread);
  if (o->timing_space >= 0) H5Sclose(o->timing_space);
  if (o->outcome >= 0) H5Dclose(o->outcome);
  for (int w = 0; w < FMT_WIDE_COUNT; w++)
    if (o->wide[w] >= 0) H5Dclose(o->wide[w]);
  o->runs = o->runs_mem = o->runs_space = o->wall = o->thread = o->timing_space = -1;
  o->outcome = -1;
  for (int w = 0; w < FMT_WIDE_COUNT; w++) o->wide[w] = -1;
  for (int m = 0; m < ENG_M_COUNT; m++) o->ticks[m] = -1;
}

int fmt__out_free(fmt_out *o) {
  out_release(o);
  int rc = o->file >= 0 && H5Fclose(o->file) < 0 ? -1 : 0;
  fmt_journal_close(o->journal);
  fmt_lock_release(o->lock);
  free(o->jcmd);
  free((char *)o->jid.sweep_text);
  free(o->path);
  free(o->done);
  free(o->pend);
  free(o->pend_at);
  free(o->pend_wall);
  free(o->pend_thread);
  free(o->pend_outcome);
  free(o);
  return rc;
}


/* A writer with nothing open yet; HDF5's error printing off until closed. */
fmt_out *fmt__out_alloc(const char *path, int64_t n_runs, int32_t ticks) {
  fmt_out *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->file = -1;
  o->runs = o->runs_mem = o->runs_space = -1;
  o->wall = o->thread = o->timing_space = -1;
  o->outcome = -1;
  for (int w = 0; w < FMT_WIDE_COUNT; w++) o->wide[w] = -1;
  for (int m = 0; m < ENG_M_COUNT; m++) o->ticks[m] = -1;
  o->n_runs = o->base_runs = o->finish_runs = n_runs;
  o->ticks_n = ticks;
  o->stored = (1u << ENG_M_COUNT) - 1;
  o->path = strdup(path);
  o->done = calloc((size_t)(n_runs > 0 ? n_runs : 1), 1);
  o->pend = malloc(PEND_MAX * sizeof *o->pend);
  o->pend_at = malloc(PEND_MAX * sizeof *o->pend_at);
  o->pend_wall = malloc(PEND_MAX * sizeof *o->pend_wall);
  o->pend_thread = malloc(PEND_MAX * sizeof *o->pend_thread);
  o->pend_outcome = malloc(PEND_MAX * sizeof *o->pend_outcome);
  if (!o->path || !o->done || !o->pend || !o->pend_at || !o->pend_wall || !o->pend_thread ||
      !o->pend_outcome) {
    fmt__out_free(o);
    return NULL;
  }
  return o;
}

/* Dataspaces the row writes select in. */
int fmt__out_spaces(fmt_out *o) {
  o->runs_space = H5Dget_space(o->runs);
  o->timing_space = H5Dget_space(o->wall);
  return o->runs_space < 0 || o->timing_space < 0 ? -1 : 0;
}

/* The journal's identity of a file of sweep sw (slice 0/0: the whole sweep);
 * id->sweep_text is malloc'd, the caller's (a writer frees its jid's). */
int fmt__journal_id(const swp_sweep *sw, int64_t slice_index, int64_t slice_count,
                      const char *command_line, fmt_journal_id *id) {
  char *text = swp_sweep_format(sw);
  if (!text) return -1;
  memset(id, 0, sizeof *id);
  id->master_seed = sw->seed;
  id->n_runs = swp_sweep_runs(sw);
  id->ticks = sw->rows;
  for (int w = 0; w < FMT_WIDE_COUNT; w++) id->wide[w] = fmt_wide_width(sw, (fmt_wide)w);
  id->slice_index = slice_count > 1 ? slice_index : 0;
  id->slice_count = slice_count > 1 ? slice_count : 0;
  id->sweep_crc = fmt_journal_crc_text(text);
  id->tool_version = STORMSWEEP_VERSION;
  id->command_line = command_line;
  id->sweep_text = text;
  return 0;
}

/* Runs of slice index/count of sw (all of them when count <= 1). */
int64_t fmt__slice_runs(const swp_sweep *sw, int64_t index, int64_t count) {
  swp_subset s = {index, count, NULL};
  return swp_subset_count(sw, &s);
}

const uint8_t *fmt_out_done(const fmt_out *o) { return o->done; }

int64_t fmt_out_done_count(const fmt_out *o) {
  return o->done_before + (o->failed ? o->committed : o->written);
}

int fmt_out_failed(const fmt_out *o) { return o->failed; }

int64_t fmt_out_committed_count(const fmt_out *o) { return o->done_before + o->committed; }

/* ---- runs and commits ---- */

/* After a failed write the HDF5 library still holds dirty metadata (the
 * chunk index of the runs since the last commit), and closing the file would
 * write it: the parts that land inside the file would succeed, those that
 * extend it would fail again on a full disk, leaving an index that points
 * past the end of the file. Nor can the close be skipped or left to fail:
 * HDF5 1.10 then crashes when it closes the file again at exit. So the
 * file's descriptor is swapped for one on an anonymous shared-memory file
 * (shm_open, unlinked at once): the close "succeeds" into memory, the file on
 * disk stays as of its last commit — which is what --resume continues from. */
static void out_freeze(fmt_out *o) {
  hid_t fapl = H5Fget_access_plist(o->file);
  void *handle = NULL;
  if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
      H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle) {
    int fd = *(int *)handle;
    char name[64];
    snprintf(name, sizeof name, "/stormsweep-frozen-%ld", (long)getpid());
    int sink = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (sink >= 0) {
      shm_unlink(name);
    } else {
      /* No shared memory: a read-only descriptor still protects the file. */
      sink = open(o->path, O_RDONLY);
    }
    if (sink >= 0) {
      dup2(sink, fd);
      close(sink);
    }
  }
  if (fapl >= 0) H5Pclose(fapl);
}

/* Releases a frozen file without H5Fclose: closing fails (its flush cannot
 * write), and HDF5 1.10 crashes at exit when it closes a file whose close
 * failed. The library's own shutdown at exit closes it once; its writes fail
 * on the frozen descriptor. Error printing stays off for that. */
void fmt__out_abandon(fmt_out *o) {
  out_release(o);
  fmt_journal_close(o->journal);
  fmt_lock_release(o->lock);
  free(o->jcmd);
  free((char *)o->jid.sweep_text);
  free(o->path);
  free(o->done);
  free(o->pend);
  free(o->pend_at);
  free(o->pend_wall);
  free(o->pend_thread);
  free(o->pend_outcome);
  free(o);
}

void fmt__out_fail(fmt_out *o) {
  if (!o->failed) out_freeze(o);
  o->failed = 1;
}

/* Space the metadata may still claim past the end of the allocated file
 * while a commit or close writes it (attributes, object headers). */
#define RESERVE_MARGIN (256 * 1024)

/* Makes sure every byte a flush may write has its disk blocks: the file up
 * to its end of allocation plus a margin (posix_fallocate, which also fills
 * the holes left where metadata was allocated but not yet written). A full
 * disk then fails here, before the flush, and the file stays as of its last
 * commit — instead of failing in the middle of the flush, after some index
 * blocks were rewritten in place and others could not be written. Skipped
 * where the file system or driver cannot tell. */
int fmt__out_reserve(fmt_out *o, char *why, size_t whylen) {
  haddr_t eoa = 0;
  hid_t fapl = H5Fget_access_plist(o->file);
  void *handle = NULL;
  int ok = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
           H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle &&
           H5Fget_eoa(o->file, &eoa) >= 0;
  if (fapl >= 0) H5Pclose(fapl);
  if (!ok) return 0;
  off_t to = (off_t)eoa + RESERVE_MARGIN;
  if (to <= o->reserved_to) return 0;
  int e = posix_fallocate(*(int *)handle, (off_t)o->reserved_to, to - (off_t)o->reserved_to);
  if (e == EINVAL || e == EOPNOTSUPP) return 0;
  /* The margin is a precaution, not a need: a sweep that fits the disk
   * must not fail for it. Without it a flush may still find the disk full;
   * the journal then holds every committed run (docs/durability.md). */
  if ((e == ENOSPC || e == EDQUOT || e == EFBIG) && (off_t)eoa > o->reserved_to)
    e = posix_fallocate(*(int *)handle, (off_t)o->reserved_to, (off_t)eoa - o->reserved_to);
  else if (e == ENOSPC || e == EDQUOT || e == EFBIG)
    e = 0;
  if (e) {
    snprintf(why, whylen, "reserving disk space: %s", strerror(e));
    return -1;
  }
  /* Keep a little below eoa: the next commit re-checks the blocks that
   * metadata allocated between now and then may have left as holes. */
  o->reserved_to = (int64_t)eoa > 4096 ? (int64_t)eoa - 4096 : 0;
  return 0;
}

/* Cuts a closed file back to its end of allocation: fmt__out_reserve may have
 * extended it past that, and HDF5 only trims what it wrote itself. A file
 * longer than its superblock says is valid but wastes the margin and hides
 * truncation from readers that compare sizes. */
void fmt__trim_reserve(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  haddr_t eoa = 0;
  int ok = f >= 0 && H5Fget_eoa(f, &eoa) >= 0;
  if (f >= 0) H5Fclose(f);
  struct stat st;
  if (ok && eoa > 0 && stat(path, &st) == 0 && (uint64_t)st.st_size > (uint64_t)eoa) {
    int trimmed = truncate(path, (off_t)eoa); /* failing, a longer file is still valid */
    (void)trimmed;
  }
}

/* With evictions off the metadata cache would keep every chunk-index node
 * it ever touched (some 7 KB per run over 19 datasets). After a commit all
 * of it is clean, so closing and reopening the /ticks datasets — the file is
 * opened with evict-on-close — drops their index nodes without writing
 * anything; the next runs reload the few nodes they insert into. */
static int out_evict(fmt_out *o, char *err, size_t errlen) {
  hid_t g = H5Gopen2(o->file, "ticks", H5P_DEFAULT);
  int rc = g < 0;
  for (int m = 0; m < ENG_M_COUNT && !rc; m++) {
    if (!(o->stored >> m & 1u)) continue;
    H5Dclose(o->ticks[m]);
    o->ticks[m] = H5Dopen2(g, eng_metric_get_info((eng_metric)m)->name, H5P_DEFAULT);
    rc = o->ticks[m] < 0;
  }
  for (int w = 0; w < FMT_WIDE_COUNT && !rc; w++) {
    if (o->wide[w] < 0) continue;
    H5Dclose(o->wide[w]);
    o->wide[w] = H5Dopen2(g, fmt_wide_name((fmt_wide)w), H5P_DEFAULT);
    rc = o->wide[w] < 0;
  }
  if (g >= 0) H5Gclose(g);
  if (rc) {
    char why[256];
    fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: reopening /ticks after a commit: %s", o->path, why);
    fmt__out_fail(o);
    return -1;
  }
  return 0;
}

/* fdatasync of the HDF5 file (sec2 driver; others are not synced). */
int fmt__out_sync_file(fmt_out *o, char *why, size_t whylen) {
  hid_t fapl = H5Fget_access_plist(o->file);
  void *handle = NULL;
  int ok = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
           H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle;
  if (fapl >= 0) H5Pclose(fapl);
  if (ok && fdatasync(*(int *)handle)) {
    snprintf(why, whylen, "fdatasync: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* The commit: the chunks written since the last commit are on disk already
 * (H5Dwrite_chunk writes raw data at once); the first flush puts their index
 * on disk, then their rows (done = 1) are written and flushed. A file cut off
 * anywhere in between holds runs not yet marked done — rerun on resume —
 * never a run marked done without its data. */
int fmt__out_commit(fmt_out *o, char *err, size_t errlen) {
  if (o->failed) {
    swp_seterr(err, errlen, "%s: an earlier write failed", o->path);
    return -1;
  }
  char why[256] = "";
  const char *step = "journal";
  /* The journal first: once it is durable the runs are committed, whatever
   * happens to the HDF5 file from here on. */
  int rc = o->journal && !o->replaying ? fmt_journal_sync(o->journal, why, sizeof why) : 0;
  if (!rc) step = "reserve", rc = fmt__out_reserve(o, why, sizeof why);
  if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
  if (!rc && o->sync_file) step = "fdatasync", rc = fmt__out_sync_file(o, why, sizeof why);
  if (!rc && o->n_pend) {
    hsize_t n = o->n_pend;
    hid_t ms = H5Screate_simple(1, &n, NULL);
    /* Every column but the stage, which the row got when it was made (the
     * fill value for the sweep's own rows, fmt_out_append's for refine's). */
    hid_t mt = -1, ft = -1;
    step = "/runs";
    rc = ms < 0 || fmt_layout_runs_types_unstaged(&mt, &ft) ||
         H5Sselect_elements(o->runs_space, H5S_SELECT_SET, o->n_pend, o->pend_at) < 0 ||
         H5Dwrite(o->runs, mt, ms, o->runs_space, H5P_DEFAULT, o->pend) < 0;
    if (mt >= 0) H5Tclose(mt);
    if (ft >= 0) H5Tclose(ft);
    if (!rc) {
      step = "/timing";
      rc = H5Sselect_elements(o->timing_space, H5S_SELECT_SET, o->n_pend, o->pend_at) < 0 ||
           H5Dwrite(o->wall, H5T_NATIVE_DOUBLE, ms, o->timing_space, H5P_DEFAULT,
                    o->pend_wall) < 0 ||
           H5Dwrite(o->thread, H5T_NATIVE_INT32, ms, o->timing_space, H5P_DEFAULT,
                    o->pend_thread) < 0;
    }
    if (!rc) {
      /* /ticks/outcome has the rows of /timing (both allocated early). */
      step = "/ticks/outcome";
      rc = H5Dwrite(o->outcome, H5T_NATIVE_INT32, ms, o->timing_space, H5P_DEFAULT,
                    o->pend_outcome) < 0;
    }
    if (ms >= 0) H5Sclose(ms);
    if (!rc) step = "flush", rc = H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0;
    if (!rc && o->sync_file) step = "fdatasync", rc = fmt__out_sync_file(o, why, sizeof why);
  }
  if (rc) {
    if (!why[0]) fmt_h5_reason(why, sizeof why);
    swp_seterr(err, errlen, "%s: committing %zu runs (%s): %s", o->path, o->n_pend, step, why);
    fmt__out_fail(o);
    return -1;
  }
  o->committed += (int64_t)o->n_pend;
  o->n_pend = 0;
  return out_evict(o, err, errlen);
}

int fmt__out_write_run(fmt_out *o, const fmt_run_record *rec, char *err,
                                 size_t errlen) {
  if (o->failed) {
    swp_seterr(err, errlen, "%s: an earlier write failed", o->path);
    return -1;
  }
  if (rec->run < 0 || rec->run >= o->n_runs) {
    swp_seterr(err, errlen, "%s: run %lld out of range (0..%lld)", o->path, (long long)rec->run,
               (long long)o->n_runs - 1);
    return -1;
  }
  /* Only refine's runs, past the sweep's own, may store no rows. */
  int rows = fmt__record_has_rows(rec);
  if (!rows && o->ticks_n > 0 && rec->run < o->base_runs) {
    swp_seterr(err, errlen, "%s: run %lld has no /ticks rows (only refine's runs may store "
               "their summary row alone)", o->path, (long long)rec->run);
    return -1;
  }
  if (o->n_pend == PEND_MAX && fmt__out_commit(o, err, errlen)) return -1;
  hsize_t offset[2] = {(hsize_t)rec->run, 0};
  for (int m = 0; m < ENG_M_COUNT; m++) {
    /* not recorded (record_metrics, summary), or a run storing no rows */
    if (!(o->stored >> m & 1u) || !rec->chunk_size[m]) continue;
    if (H5Dwrite_chunk(o->ticks[m], H5P_DEFAULT, 0, offset, rec->chunk_size[m], rec->chunk[m]) <
        0) {
      char why[256];
      fmt_h5_reason(why, sizeof why);
      swp_seterr(err, errlen, "%s: writing run %lld (/ticks/%s): %s", o->path,
                 (long long)rec->run, eng_metric_get_info((eng_metric)m)->name, why);
      fmt__out_fail(o);
      return -1;
    }
  }
  if (o->journal && !o->replaying && fmt_journal_append(o->journal, rec, err, errlen)) {
    fmt__out_fail(o);
    return -1;
  }
  for (int w = 0; w < FMT_WIDE_COUNT && rows; w++) {
    if (o->wide[w] < 0) continue;
    hsize_t at[3] = {(hsize_t)rec->run, 0, 0};
    if (!rec->wide_chunk_size[w] ||
        H5Dwrite_chunk(o->wide[w], H5P_DEFAULT, 0, at, rec->wide_chunk_size[w],
                       rec->wide_chunk[w]) < 0) {
      char why[256];
      if (rec->wide_chunk_size[w]) fmt_h5_reason(why, sizeof why);
      else snprintf(why, sizeof why, "the run has no such series");
      swp_seterr(err, errlen, "%s: writing run %lld (/ticks/%s): %s", o->path,
                 (long long)rec->run, fmt_wide_name((fmt_wide)w), why);
      fmt__out_fail(o);
      return -1;
    }
  }
  run_row *row = &o->pend[o->n_pend];
  memset(row, 0, sizeof *row);
  row->run = rec->run;
  row->point = rec->point;
  row->replicate = rec->replicate;
  row->ticks = rec->ticks;
  row->done = 1;
  row->s = rec->summary;
  o->pend_at[o->n_pend] = (hsize_t)rec->run;
  o->pend_wall[o->n_pend] = rec->wall_s;
  o->pend_thread[o->n_pend] = rec->thread;
  o->pend_outcome[o->n_pend] = (int32_t)rec->summary.outcome;
  o->n_pend++;
  o->written++;
  return 0;
}

static int fmt_out_flush_q(fmt_out *o, char *err, size_t errlen) {
  return fmt__out_commit(o, err, errlen);
}

/* Stored size of the chunk of run r (0: none). H5Dget_chunk_storage_size
 * fails on a chunk never written; this tells "missing" from "unreadable". */
int fmt__out_row_read(fmt_out *o, int64_t r, run_row *row) {
  memset(row, 0, sizeof *row);
  hsize_t at = (hsize_t)r, one = 1;
  if (r < 0 || r >= o->n_runs) return -1;
  hid_t ms = H5Screate_simple(1, &one, NULL);
  int bad = ms < 0 || H5Sselect_elements(o->runs_space, H5S_SELECT_SET, 1, &at) < 0 ||
            H5Dread(o->runs, o->runs_mem, ms, o->runs_space, H5P_DEFAULT, row) < 0;
  if (ms >= 0) H5Sclose(ms);
  return bad ? -1 : 0;
}

/* Grows *buf (capacity *cap) to hold need bytes, doubling from 64 KiB. */
int fmt__buf_reserve(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 65536;
  while (c < need) c *= 2;
  uint8_t *b = realloc(*buf, c);
  if (!b) return -1;
  *buf = b;
  *cap = c;
  return 0;
}

const char *fmt_out_note(const fmt_out *o) { return o->note; }

int fmt_out_write_run(fmt_out *o, const fmt_run_record *rec, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt__out_write_run(o, rec, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}

int fmt_out_flush(fmt_out *o, char *err, size_t errlen) {
  fmt_h5_quiet q;
  fmt_h5_quiet_begin(&q);
  int rc = fmt_out_flush_q(o, err, errlen);
  fmt_h5_quiet_end(&q);
  return rc;
}
