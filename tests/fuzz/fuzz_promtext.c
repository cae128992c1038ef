/*
 * fuzz_promtext.c — libFuzzer target for the Prometheus text-format
 * histogram reader (telemetry/prom_text.c) and the empirical sampler built
 * from what it returns (engine/variates.c).
 *
 * An input is a scrape. The first line may be "#series: SELECTOR", which
 * is passed as service_histogram_series (and stays in the input, a
 * comment to the reader). Invariants: the status is 0, -1 or -2; an error
 * is non-empty, starts with "in:" and is one line without control
 * characters; a success has at most TEL_MAX_BUCKETS finite bounds that
 * never decrease, finite counts >= 0 with some mass, and builds a sampler
 * whose draws are finite and >= 0; the same bytes give the same answer
 * twice.
 *
 * scripts/fuzz.sh -f promtext builds it with clang -fsanitize=fuzzer;
 * ctest's fuzz_replay_promtext runs it (plain gcc, tests/fuzz/replay.c) on
 * tests/telemetry/good and tests/telemetry/bad/hist.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tel.h"
#include "variates.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *msg) {
  fprintf(stderr, "fuzz_promtext: %s: %s\n", what, msg);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char sel[256] = "";
  const char *text = (const char *)data;
  if (size > 9 && !memcmp(data, "#series: ", 9)) {
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n = (size_t)((nl ? nl : data + size) - data) - 9;
    if (n < sizeof sel && !memchr(data + 9, 0, n)) memcpy(sel, data + 9, n), sel[n] = 0;
  }
  char err[1024] = "", err2[1024] = "";
  tel_hist h, h2;
  int rc = tel_prom_text_parse("in", text, size, sel, &h, err, sizeof err);
  int rc2 = tel_prom_text_parse("in", text, size, sel, &h2, err2, sizeof err2);
  if (rc != 0 && rc != -1 && rc != -2) die("status", "not 0, -1 or -2");
  if (rc != rc2 || (rc && strcmp(err, err2))) die("twice", "two parses of the same bytes differ");
  if (rc) {
    if (strncmp(err, "in:", 3)) die("error does not name the file", err);
    for (const unsigned char *p = (const unsigned char *)err; *p; p++)
      if (*p < 0x20 || *p == 0x7f) die("error holds a control character", err);
    return 0;
  }
  if (h.n != h2.n || memcmp(h.le, h2.le, h.n * sizeof *h.le) ||
      memcmp(h.count, h2.count, (h.n + 1) * sizeof *h.count))
    die("twice", "two parses give different histograms");
  tel_hist_free(&h2);
  if (h.n > TEL_MAX_BUCKETS) die("buckets", "more than TEL_MAX_BUCKETS");
  double prev = h.lower, total = 0;
  for (size_t i = 0; i <= h.n; i++) {
    if (i < h.n && !(isfinite(h.le[i]) && h.le[i] >= prev)) die("bounds", "not finite increasing");
    if (i < h.n) prev = h.le[i];
    if (!(isfinite(h.count[i]) && h.count[i] >= 0)) die("counts", "not finite >= 0");
    total += h.count[i];
  }
  if (!(total > 0)) die("counts", "no mass");
  eng_empirical e;
  if (eng_empirical_build(&e, h.n, h.lower, h.le, h.count, h.sum)) die("sampler", "build failed");
  static const double us[] = {0, 1e-9, 0.25, 0.5, 0.9, 0.999999, 0x1.fffffffffffffp-1};
  for (size_t i = 0; i < sizeof us / sizeof *us; i++) {
    double x = eng_empirical_at(&e, us[i]);
    if (!(x >= 0) || isnan(x) || isinf(x)) die("sampler", "a draw is not finite and >= 0");
  }
  if (!(e.mean_ms >= 0) || !isfinite(e.mean_ms)) die("sampler", "mean not finite");
  eng_empirical_free(&e);
  tel_hist_free(&h);
  return 0;
}
