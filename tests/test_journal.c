/*
 * test_journal.c — the journal's valid prefix (format/journal.c) and the
 * writer lock (format/writelock.c): records read back as written; a torn
 * tail, a flipped byte or a record cut short ends the prefix there; a
 * journal of another sweep is refused; appended rows and groups read back
 * and extend the rows runs may name; lengths beyond the sweep's shapes end
 * the prefix unallocated; journals through links are neither opened nor
 * written through; a second lock on the same file — by any symlinked name —
 * is refused while the first is held, and a file with two names is not
 * locked at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal.h"
#include "writelock.h"
#include "testutil.h"

#define TICKS 100

typedef struct fx {
  char dir[64], h5[96];
  fmt_journal_id id;
  uint8_t chunk[ENG_M_COUNT][32];
  uint8_t wide[FMT_WIDE_COUNT][48]; /* the fmt_wide chunks: shard queues, service series */
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  assert_int_equal(tu_tmpdir_make(f->dir, sizeof f->dir, "test_journal"), 0);
  snprintf(f->h5, sizeof f->h5, "%s/r.h5", f->dir);
  f->id.master_seed = 7;
  f->id.n_runs = 10;
  f->id.ticks = TICKS;
  f->id.wide[FMT_WIDE_SHARD_QUEUES] = 4;
  for (int w = FMT_WIDE_SERVICE_FIRST; w < FMT_WIDE_COUNT; w++) f->id.wide[w] = 3;
  f->id.instance = 0x1234abcdu;
  f->id.sweep_crc = fmt_journal_crc_text("[sweep]\nseed = 7\n");
  f->id.tool_version = "test";
  f->id.command_line = "stormsweep run x";
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  int rc = tu_tmpdir_remove(f->dir); /* r.h5 and its journal and lock */
  free(f);
  return rc;
}

/* Run r's record: chunk m holds bytes r*31 + m + i. */
static void make_record(fx *f, int64_t r, fmt_run_record *rec) {
  memset(rec, 0, sizeof *rec);
  rec->run = r;
  rec->point = r / 2;
  rec->replicate = (int32_t)(r % 2);
  rec->ticks = TICKS;
  rec->summary.seed = 1000 + (uint64_t)r;
  rec->summary.recovery_ms = 12.5 * (double)r;
  rec->wall_s = 0.25;
  rec->thread = 1;
  for (int m = 0; m < ENG_M_COUNT; m++) {
    size_t n = 8 + (size_t)((r + m) % 20);
    for (size_t i = 0; i < n; i++) f->chunk[m][i] = (uint8_t)(r * 31 + m + (int64_t)i);
    rec->chunk[m] = f->chunk[m];
    rec->chunk_size[m] = n;
  }
  /* The sweep records shard queues and a call graph's series: every run
   * carries a chunk of each. */
  for (int w = 0; w < FMT_WIDE_COUNT; w++) {
    for (size_t i = 0; i < sizeof f->wide[w]; i++)
      f->wide[w][i] = (uint8_t)(r * 7 + w * 13 + (int64_t)i);
    rec->wide_chunk[w] = f->wide[w];
    rec->wide_chunk_size[w] = sizeof f->wide[w] - (size_t)r - (size_t)w;
  }
}

static void write_runs(fx *f, int n) {
  fmt_journal *j = NULL;
  char err[512] = "";
  assert_int_equal(fmt_journal_create(&j, f->h5, &f->id, err, sizeof err), 0);
  for (int r = 0; r < n; r++) {
    fmt_run_record rec;
    make_record(f, r, &rec);
    assert_int_equal(fmt_journal_append(j, &rec, err, sizeof err), 0);
  }
  assert_int_equal(fmt_journal_sync(j, err, sizeof err), 0);
  fmt_journal_close(j);
}

static fmt_journal *reopen(fx *f) {
  fmt_journal *j = NULL;
  int exists = 0;
  char err[512] = "";
  assert_int_equal(fmt_journal_open(&j, f->h5, &f->id, &exists, err, sizeof err), 0);
  assert_int_equal(exists, 1);
  return j;
}

static int64_t file_size(const char *p) {
  struct stat st;
  return stat(p, &st) ? -1 : (int64_t)st.st_size;
}

static void test_round_trip(void **state) {
  fx *f = *state;
  write_runs(f, 5);
  fmt_journal *j = reopen(f);
  assert_int_equal(fmt_journal_count(j), 5);
  assert_string_equal(fmt_journal_command_line(j), "stormsweep run x");
  uint8_t *buf = NULL;
  size_t cap = 0;
  char err[512];
  for (int64_t r = 0; r < 5; r++) {
    fmt_run_record got, want;
    assert_int_equal(fmt_journal_read(j, r, &got, &buf, &cap, err, sizeof err), 0);
    make_record(f, r, &want);
    assert_int_equal(got.point, want.point);
    assert_int_equal(got.replicate, want.replicate);
    assert_memory_equal(&got.summary, &want.summary, sizeof got.summary);
    for (int m = 0; m < ENG_M_COUNT; m++) {
      assert_int_equal(got.chunk_size[m], want.chunk_size[m]);
      assert_memory_equal(got.chunk[m], want.chunk[m], want.chunk_size[m]);
    }
    for (int w = 0; w < FMT_WIDE_COUNT; w++) {
      assert_int_equal(got.wide_chunk_size[w], want.wide_chunk_size[w]);
      if (want.wide_chunk_size[w])
        assert_memory_equal(got.wide_chunk[w], want.wide_chunk[w], want.wide_chunk_size[w]);
    }
  }
  assert_false(fmt_journal_has(j, 5));
  free(buf);
  fmt_journal_close(j);
}

/* Cut at every byte of the last record: the prefix always holds 4 runs. */
static void test_torn_tail(void **state) {
  fx *f = *state;
  write_runs(f, 4);
  char *path = fmt_journal_path(f->h5);
  int64_t four = file_size(path);
  write_runs(f, 5);
  int64_t five = file_size(path);
  assert_true(five > four);
  for (int64_t cut = five - 1; cut >= four; cut -= 7) {
    assert_int_equal(truncate(path, cut), 0);
    fmt_journal *j = reopen(f);
    assert_int_equal(fmt_journal_count(j), 4);
    assert_int_equal(fmt_journal_valid_bytes(j), four);
    fmt_journal_close(j);
  }
  free(path);
}

/* A flipped byte inside record 2 ends the prefix before it. */
static void test_flipped_byte(void **state) {
  fx *f = *state;
  write_runs(f, 2);
  char *path = fmt_journal_path(f->h5);
  int64_t two = file_size(path);
  write_runs(f, 4);
  FILE *fp = fopen(path, "r+b");
  assert_non_null(fp);
  fseek(fp, (long)two + 40, SEEK_SET);
  int c = fgetc(fp);
  fseek(fp, (long)two + 40, SEEK_SET);
  fputc(c ^ 0x10, fp);
  fclose(fp);
  fmt_journal *j = reopen(f);
  assert_int_equal(fmt_journal_count(j), 2);
  assert_false(fmt_journal_has(j, 2));
  assert_false(fmt_journal_has(j, 3));
  char err[512];
  assert_int_equal(fmt_journal_truncate_tail(j, err, sizeof err), 0);
  fmt_journal_close(j);
  assert_int_equal(file_size(path), two);
  free(path);
}

static void test_other_sweep_refused(void **state) {
  fx *f = *state;
  write_runs(f, 1);
  fmt_journal_id other = f->id;
  other.master_seed = 8;
  fmt_journal *j = NULL;
  int exists = 0;
  char err[512] = "";
  assert_int_equal(fmt_journal_open(&j, f->h5, &other, &exists, err, sizeof err), -1);
  assert_non_null(strstr(err, "another master seed"));
  other = f->id;
  other.slice_index = 1;
  other.slice_count = 2;
  assert_int_equal(fmt_journal_open(&j, f->h5, &other, &exists, err, sizeof err), -1);
  assert_non_null(strstr(err, "another slice"));
}

static void test_lock(void **state) {
  fx *f = *state;
  fmt_lock *a = NULL, *b = NULL;
  char err[512] = "";
  assert_int_equal(fmt_lock_acquire(&a, f->h5, err, sizeof err), 0);
  /* Open-file-description locks conflict within one process too. */
  assert_int_equal(fmt_lock_acquire(&b, f->h5, err, sizeof err), 1);
  assert_non_null(strstr(err, "another stormsweep process is writing it"));
  assert_int_equal(fmt_lock_held_elsewhere(f->h5), 1);
  fmt_lock_release(a);
  assert_int_equal(fmt_lock_held_elsewhere(f->h5), 0);
  assert_int_equal(fmt_lock_acquire(&b, f->h5, err, sizeof err), 0);
  fmt_lock_release(b);
}

/* Appended rows and a group: rows extend what runs may be recorded; both
 * read back in order; the header keeps the instance and the sweep text. */
static void test_appends_and_groups(void **state) {
  fx *f = *state;
  f->id.sweep_text = "[sweep]\nseed = 7\n";
  f->id.sweep_crc = fmt_journal_crc_text(f->id.sweep_text);
  fmt_journal *j = NULL;
  char err[512] = "";
  assert_int_equal(fmt_journal_create(&j, f->h5, &f->id, err, sizeof err), 0);
  fmt_run_record rec;
  make_record(f, 10, &rec);
  assert_int_equal(fmt_journal_append(j, &rec, err, sizeof err), -1); /* no row 10 yet */
  int64_t point[3] = {0, 1, 1};
  int32_t rep[3] = {2, 2, 3};
  assert_int_equal(fmt_journal_append_rows(j, 11, 3, point, rep, err, sizeof err), -1);
  assert_int_equal(fmt_journal_append_rows(j, 10, 3, point, rep, err, sizeof err), 0);
  assert_int_equal(fmt_journal_append(j, &rec, err, sizeof err), 0);
  const char image[] = "not really an HDF5 image";
  assert_int_equal(fmt_journal_put_group(j, "refine", image, sizeof image, err, sizeof err), 0);
  fmt_journal_close(j);
  j = reopen(f);
  assert_int_equal(fmt_journal_instance(j), 0x1234abcdu);
  assert_string_equal(fmt_journal_sweep_text(j), "[sweep]\nseed = 7\n");
  assert_int_equal(fmt_journal_rows(j), 13);
  assert_true(fmt_journal_has(j, 10));
  assert_int_equal(fmt_journal_appends(j), 1);
  int64_t first, n, *pt;
  int32_t *rp;
  assert_int_equal(fmt_journal_read_append(j, 0, &first, &n, &pt, &rp, err, sizeof err), 0);
  assert_int_equal(first, 10);
  assert_int_equal(n, 3);
  assert_int_equal(pt[2], 1);
  assert_int_equal(rp[2], 3);
  free(pt);
  free(rp);
  uint8_t *got = NULL;
  size_t size = 0;
  assert_int_equal(fmt_journal_read_group(j, "refine", &got, &size, err, sizeof err), 0);
  assert_int_equal(size, sizeof image);
  assert_memory_equal(got, image, size);
  free(got);
  assert_int_equal(fmt_journal_read_group(j, "analysis", &got, &size, err, sizeof err), 1);
  fmt_journal_close(j);
}

/* A record longer than the sweep's shapes allow ends the valid prefix
 * before anything is allocated for it; one without one of its wide
 * chunks (a service series) in a sweep that records them too. */
static void test_bounds(void **state) {
  fx *f = *state;
  write_runs(f, 2);
  char *path = fmt_journal_path(f->h5);
  FILE *out = fopen(path, "ab");
  assert_non_null(out);
  uint32_t head[2] = {0x53524E31u, 0x70000000u}; /* within the file, beyond any run */
  assert_int_equal(fwrite(head, sizeof head, 1, out), 1);
  fclose(out);
  assert_int_equal(truncate(path, 0x7FFFFFFF), 0); /* sparse: it "holds" the record */
  fmt_journal *j = reopen(f);
  assert_int_equal(fmt_journal_count(j), 2);
  fmt_journal_close(j);
  free(path);
  fmt_run_record rec;
  make_record(f, 3, &rec);
  rec.wide_chunk[FMT_WIDE_COUNT - 1] = NULL;
  rec.wide_chunk_size[FMT_WIDE_COUNT - 1] = 0;
  char err[512] = "";
  assert_int_equal(fmt_journal_create(&j, f->h5, &f->id, err, sizeof err), 0);
  assert_int_equal(fmt_journal_append(j, &rec, err, sizeof err), -1);
  fmt_journal_close(j);
}

/* A journal that is a hard link to another file is replaced, not written
 * through; one that is a symbolic link, or hard-linked, is not opened. */
static void test_links(void **state) {
  fx *f = *state;
  char keep[160], target[160];
  snprintf(keep, sizeof keep, "%s/keep.txt", f->dir);
  snprintf(target, sizeof target, "%s/target.journal", f->dir);
  FILE *k = fopen(keep, "w");
  assert_non_null(k);
  fputs("yesterday", k);
  fclose(k);
  char *path = fmt_journal_path(f->h5);
  assert_int_equal(link(keep, path), 0);
  fmt_journal *j = NULL;
  int exists = 0;
  char err[512] = "";
  assert_int_equal(fmt_journal_open(&j, f->h5, &f->id, &exists, err, sizeof err), -1);
  assert_non_null(strstr(err, "more than one name"));
  write_runs(f, 1);
  char buf[16] = "";
  k = fopen(keep, "r");
  assert_non_null(k);
  assert_non_null(fgets(buf, sizeof buf, k));
  fclose(k);
  assert_string_equal(buf, "yesterday");
  assert_int_equal(rename(path, target), 0);
  assert_int_equal(symlink("target.journal", path), 0);
  assert_int_equal(fmt_journal_open(&j, f->h5, &f->id, &exists, err, sizeof err), -1);
  assert_int_equal(exists, 1);
  assert_non_null(strstr(err, "is a symbolic link"));
  unlink(path);
  unlink(target);
  unlink(keep);
  free(path);
}

/* The lock is the file's: a symbolic link to it shares it, and a file with
 * a second name is not locked for writing. */
static void test_lock_of_the_file(void **state) {
  fx *f = *state;
  char alias[160], hard[160];
  snprintf(alias, sizeof alias, "%s/alias.h5", f->dir);
  snprintf(hard, sizeof hard, "%s/hard.h5", f->dir);
  FILE *h = fopen(f->h5, "w");
  assert_non_null(h);
  fclose(h);
  assert_int_equal(symlink("r.h5", alias), 0);
  fmt_lock *a = NULL, *b = NULL;
  char err[512] = "";
  assert_int_equal(fmt_lock_acquire(&a, f->h5, err, sizeof err), 0);
  assert_int_equal(fmt_lock_acquire(&b, alias, err, sizeof err), 1);
  assert_int_equal(fmt_lock_held_elsewhere(alias), 1);
  fmt_lock_release(a);
  assert_int_equal(link(f->h5, hard), 0);
  assert_int_equal(fmt_lock_acquire(&b, hard, err, sizeof err), -1);
  assert_non_null(strstr(err, "the file has 2 names"));
  unlink(hard);
  unlink(alias);
  unlink(f->h5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_flipped_byte, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_sweep_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
      cmocka_unit_test_setup_teardown(test_appends_and_groups, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_links, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lock_of_the_file, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
