/*
 * replay.c — runs the sweep-file fuzz target (fuzz_sweepfile.c) on saved
 * inputs without libFuzzer, so every crash the fuzzer ever found stays a
 * regression test in the normal gcc build: ctest runs
 *   fuzz_replay tests/fuzz/corpus tests/fuzz/regressions
 * Each argument is a file or a directory (its regular files, in name
 * order). An input that breaks an invariant aborts, failing the test.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: %s: cannot open\n", path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      uint8_t *b = realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "fuzz_replay: %s: out of memory\n", path);
    return -1;
  }
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays path (file or directory); returns the number of inputs, -1 on error. */
static long replay_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "fuzz_replay: %s: no such file or directory\n", path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path) ? -1 : 1;
  DIR *d = opendir(path);
  if (!d) return -1;
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char **v = realloc(names, (n + 1) * sizeof *v);
    if (!v) break;
    names = v;
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) break;
    snprintf(names[n], len, "%s/%s", path, e->d_name);
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str); /* an empty directory: names is NULL */
  long count = 0;
  for (size_t i = 0; i < n; i++) {
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      if (replay_file(names[i])) count = -1;
      else if (count >= 0) count++;
    }
    free(names[i]);
  }
  free(names);
  return count;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fuzz_replay FILE_OR_DIR...\n");
    return 2;
  }
  long total = 0;
  for (int i = 1; i < argc; i++) {
    long n = replay_path(argv[i]);
    if (n < 0) return 1;
    total += n;
  }
  printf("fuzz_replay: %ld inputs replayed, no invariant broken\n", total);
  return 0;
}
