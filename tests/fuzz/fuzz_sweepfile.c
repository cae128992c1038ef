/*
 * fuzz_sweepfile.c — libFuzzer target for the sweep-file parser
 * (sweeps/sweepfile.c, sweeps/grid.c, engine/config.c).
 *
 * An input is a sweep file, optionally followed by a line "%%" and override
 * lines "set KEY=VALUE" / "grid KEY=V1,V2" (the way `run --set/--grid`
 * applies them). The target parses, applies the overrides, checks, and for a
 * valid sweep asserts the round trip that the result file relies on:
 * swp_sweep_format's text parses and checks again to the same sweep (name,
 * description, replicates, seed, every setting of the base config, every
 * axis value, points, ticks) and formats to the same text. Any error must be
 * one non-empty line. A broken invariant aborts with both sides printed, so
 * libFuzzer saves the input as a crash.
 *
 * scripts/fuzz.sh builds it with clang -fsanitize=fuzzer,address,undefined;
 * tests/fuzz/replay.c links the same function into a plain program (gcc, no
 * libFuzzer) that ctest runs on the seed corpus and on every saved
 * regression in tests/fuzz/regressions/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swp.h"
#include "drv_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Grids bigger than this are parsed but not checked: checking validates
 * every point (about a microsecond each) and would only slow the search. */
#define FUZZ_MAX_POINTS 20000

#define FUZZ_ASSERT(cond, ...)                                 \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "fuzz_sweepfile: %s failed: ", #cond);   \
      fprintf(stderr, __VA_ARGS__);                            \
      fprintf(stderr, "\n");                                   \
      abort();                                                 \
    }                                                          \
  } while (0)

static void check_message(const char *err, const char *what) {
  FUZZ_ASSERT(err[0] != 0, "%s failed without a message", what);
  FUZZ_ASSERT(strchr(err, '\n') == NULL, "%s message is not one line: \"%s\"", what, err);
}

static int str_same(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return !strcmp(a, b);
}

/* Every observable part of two checked sweeps must agree. */
static void compare_sweeps(const swp_sweep *a, const swp_sweep *b, const char *text) {
  FUZZ_ASSERT(str_same(a->name, b->name), "name \"%s\" became \"%s\"; text:\n%s",
              a->name ? a->name : "(null)", b->name ? b->name : "(null)", text);
  FUZZ_ASSERT(str_same(a->description, b->description),
              "description \"%s\" became \"%s\"; text:\n%s",
              a->description ? a->description : "(null)",
              b->description ? b->description : "(null)", text);
  FUZZ_ASSERT(a->replicates == b->replicates, "replicates %lld became %lld",
              (long long)a->replicates, (long long)b->replicates);
  FUZZ_ASSERT(a->seed == b->seed, "seed %llu became %llu", (unsigned long long)a->seed,
              (unsigned long long)b->seed);
  FUZZ_ASSERT(a->n_axes == b->n_axes, "%zu axes became %zu; text:\n%s", a->n_axes, b->n_axes,
              text);
  for (size_t x = 0; x < a->n_axes; x++) {
    const swp_axis *p = &a->axes[x], *q = &b->axes[x];
    FUZZ_ASSERT(!strcmp(p->key, q->key), "axis %zu '%s' became '%s'", x, p->key, q->key);
    FUZZ_ASSERT(p->count == q->count, "axis %s: %zu values became %zu; text:\n%s", p->key,
                p->count, q->count, text);
    for (size_t v = 0; v < p->count; v++)
      FUZZ_ASSERT(!strcmp(p->values[v], q->values[v]), "axis %s value %zu '%s' became '%s'",
                  p->key, v, p->values[v], q->values[v]);
  }
  FUZZ_ASSERT(a->n_points == b->n_points, "points %lld became %lld", (long long)a->n_points,
              (long long)b->n_points);
  FUZZ_ASSERT(a->ticks == b->ticks, "ticks %d became %d", (int)a->ticks, (int)b->ticks);
  FUZZ_ASSERT(a->tick_ms == b->tick_ms, "tick_ms %g became %g", a->tick_ms, b->tick_ms);
  /* The base config and the last point's, setting by setting (printing is
   * exact, and unlike memcmp blind to struct padding). */
  eng_config ca, cb;
  char err[512];
  int64_t last = a->n_points - 1;
  FUZZ_ASSERT(!swp_sweep_point_config(a, last, &ca, err, sizeof err), "point config: %s", err);
  FUZZ_ASSERT(!swp_sweep_point_config(b, last, &cb, err, sizeof err), "point config: %s", err);
  for (size_t i = 0; i < eng_settings_count(); i++) {
    const char *key = eng_settings_at(i)->key;
    char va[512], vb[512];
    eng_config_get(&a->base, key, va, sizeof va);
    eng_config_get(&b->base, key, vb, sizeof vb);
    FUZZ_ASSERT(!strcmp(va, vb), "base %s = '%s' became '%s'; text:\n%s", key, va, vb, text);
    eng_config_get(&ca, key, va, sizeof va);
    eng_config_get(&cb, key, vb, sizeof vb);
    FUZZ_ASSERT(!strcmp(va, vb), "last point %s = '%s' became '%s'", key, va, vb);
  }
}

/* Applies the override lines after "%%"; returns 0 or -1 (with a checked
 * message). Unknown verbs are ignored. */
static int overrides_apply(swp_sweep *sw, char *lines) {
  char err[1024];
  for (char *line = lines; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    int rc = 0;
    if (!strncmp(line, "set ", 4)) {
      err[0] = 0;
      rc = swp_sweep_override_set(sw, line + 4, err, sizeof err);
      if (rc) check_message(err, "--set");
      FUZZ_ASSERT(!rc || !strncmp(err, "--set", 5), "--set message \"%s\"", err);
    } else if (!strncmp(line, "grid ", 5)) {
      err[0] = 0;
      rc = swp_sweep_override_grid(sw, line + 5, err, sizeof err);
      if (rc) check_message(err, "--grid");
      FUZZ_ASSERT(!rc || !strncmp(err, "--grid", 6), "--grid message \"%s\"", err);
    }
    if (rc) return -1;
    line = nl ? nl + 1 : NULL;
  }
  return 0;
}

static int64_t grid_points(const swp_sweep *sw) {
  int64_t n = 1;
  for (size_t a = 0; a < sw->n_axes; a++) {
    if (n > FUZZ_MAX_POINTS) break;
    n *= (int64_t)sw->axes[a].count;
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  char *overrides = NULL;
  char *sep = strstr(text, "\n%%\n");
  if (sep) {
    *sep = 0;
    overrides = sep + 4;
  }
  char err[1024] = "";
  swp_sweep a, b;
  swp_sweep_init(&a);
  swp_sweep_init(&b);
  char *formatted = NULL, *again = NULL;
  int rc = swp_sweep_parse_string(&a, text, "fuzz.ini", err, sizeof err);
  if (rc) {
    check_message(err, "parse");
    FUZZ_ASSERT(!strncmp(err, "fuzz.ini", 8), "parse message without the file: \"%s\"", err);
    goto done;
  }
  if (overrides_apply(&a, overrides)) goto done;
  if (grid_points(&a) > FUZZ_MAX_POINTS) goto done;
  if (swp_sweep_check(&a, err, sizeof err)) {
    check_message(err, "check");
    goto done;
  }
  FUZZ_ASSERT(a.checked && a.n_points >= 1 && a.ticks >= 1, "checked sweep: %lld points, %d ticks",
              (long long)a.n_points, (int)a.ticks);

  /* The round trip: the effective text is what the result file stores. */
  formatted = swp_sweep_format(&a);
  FUZZ_ASSERT(formatted != NULL, "swp_sweep_format returned NULL");
  for (const char *l = formatted; *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    FUZZ_ASSERT(len <= SWP_MAX_LINE, "formatted line of %zu characters: %.*s", len, (int)len, l);
    l += len + (nl ? 1 : 0);
  }
  rc = swp_sweep_parse_string(&b, formatted, "formatted", err, sizeof err);
  FUZZ_ASSERT(rc == 0, "the formatted sweep does not parse: %s\n--- text:\n%s", err, formatted);
  rc = swp_sweep_check(&b, err, sizeof err);
  FUZZ_ASSERT(rc == 0, "the formatted sweep does not check: %s\n--- text:\n%s", err, formatted);
  compare_sweeps(&a, &b, formatted);
  again = swp_sweep_format(&b);
  FUZZ_ASSERT(again && !strcmp(formatted, again), "format is not stable:\n%s\n--- became:\n%s",
              formatted, again ? again : "(null)");
done:
  free(again);
  free(formatted);
  swp_sweep_free(&a);
  swp_sweep_free(&b);
  free(text);
  return 0;
}
