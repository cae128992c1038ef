/*
 * fuzz_client.c — libFuzzer target for the --client importer
 * (sweeps/client_import.c: libjansson, libyaml and the mapping on top).
 *
 * An input is a client config (JSON or YAML). The target parses it and
 * asserts what callers rely on: an error is non-empty, starts with the
 * file's name and, escaped as the CLI prints it (ana_term_text), is one
 * line without control characters; a success has a kind, at least one
 * entry, every key, value and source non-empty and printable ASCII (built
 * only from names the importer knows), notes that escape to one line; the
 * same bytes map the same way twice (no state between calls), and a file
 * that maps strictly maps the same way with SWP_CLIENT_LENIENT.
 *
 * scripts/fuzz.sh -f client builds it with clang -fsanitize=fuzzer; ctest's
 * fuzz_replay_client runs it (plain gcc, tests/fuzz/replay.c) on
 * examples/ and on the broken files of tests/client/bad/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_import.h"
#include "textsafe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *what, const char *s, int may_be_empty) {
  if (!*s && !may_be_empty) {
    fprintf(stderr, "fuzz_client: empty %s\n", what);
    abort();
  }
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p >= 0x7f) {
      fprintf(stderr, "fuzz_client: %s holds byte 0x%02x: %s\n", what, *p, s);
      abort();
    }
}

/* s as the terminal sees it: one line, no control character. */
static void check_escaped(const char *what, const char *s) {
  static char esc[8192];
  ana_term_text(esc, sizeof esc, s);
  for (const unsigned char *p = (const unsigned char *)esc; *p; p++)
    if (*p < 0x20 || *p == 0x7f) {
      fprintf(stderr, "fuzz_client: escaped %s holds byte 0x%02x: %s\n", what, *p, esc);
      abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static swp_client_map a, b, l; /* large: off the stack */
  char err[1024], err2[1024];
  int rc = swp_client_parse("in", (const char *)data, size, &a, err, sizeof err);
  int rc2 = swp_client_parse("in", (const char *)data, size, &b, err2, sizeof err2);
  if (rc != rc2 || (rc && strcmp(err, err2)) || (!rc && memcmp(&a, &b, sizeof a))) {
    fprintf(stderr, "fuzz_client: two parses of the same bytes differ\n");
    abort();
  }
  if (rc) {
    if (strncmp(err, "in: ", 4) || !err[4]) {
      fprintf(stderr, "fuzz_client: bad error line: '%s'\n", err);
      abort();
    }
    check_escaped("error", err);
    return 0;
  }
  char err3[1024];
  if (swp_client_parse_opts("in", (const char *)data, size, SWP_CLIENT_LENIENT, &l, err3,
                            sizeof err3) ||
      memcmp(&a, &l, sizeof a)) {
    fprintf(stderr, "fuzz_client: a strict success maps differently when lenient\n");
    abort();
  }
  if (!a.kind || !a.n) {
    fprintf(stderr, "fuzz_client: success with no kind or no entries\n");
    abort();
  }
  for (size_t i = 0; i < a.n; i++) {
    check_text("key", a.e[i].key, 0);
    check_text("value", a.e[i].value, 0);
    check_text("source", a.e[i].source, 0);
    check_text("raw", a.e[i].raw, 1);
  }
  for (size_t i = 0; i < a.n_notes; i++) check_escaped("note", a.notes[i]);
  return 0;
}
