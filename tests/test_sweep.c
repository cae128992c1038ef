/*
 * test_sweep.c — sweep files and grids (sweeps/sweepfile.c, sweeps/grid.c):
 * lists, lin/log ranges, inf, windows, continuation lines, point numbering,
 * --set/--grid overrides, the effective-text round trip, every error message
 * a user can hit, and the shipped study files (seed.ini must equal the
 * compiled-in seed study byte for byte).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "swp.h"
#include "drv_internal.h"

/* ---- helpers ---- */

static void parse_ok(swp_sweep *sw, const char *text) {
  char err[1024] = "";
  swp_sweep_init(sw);
  int rc = swp_sweep_parse_string(sw, text, "t.ini", err, sizeof err);
  if (rc) print_error("unexpected parse error: %s\n", err);
  assert_int_equal(rc, 0);
  rc = swp_sweep_check(sw, err, sizeof err);
  if (rc) print_error("unexpected check error: %s\n", err);
  assert_int_equal(rc, 0);
}

/* Parses (and checks) text expecting an error that contains want. */
static void parse_fails(const char *text, const char *want) {
  char err[1024] = "";
  swp_sweep sw;
  swp_sweep_init(&sw);
  int rc = swp_sweep_parse_string(&sw, text, "t.ini", err, sizeof err);
  if (!rc) rc = swp_sweep_check(&sw, err, sizeof err);
  swp_sweep_free(&sw);
  if (!rc) print_error("expected an error containing \"%s\", got success\n", want);
  assert_int_equal(rc, -1);
  if (!strstr(err, want)) print_error("error \"%s\"\n  does not contain \"%s\"\n", err, want);
  assert_non_null(strstr(err, want));
}

static const swp_axis *axis(const swp_sweep *sw, const char *key) {
  for (size_t a = 0; a < sw->n_axes; a++)
    if (!strcmp(sw->axes[a].key, key)) return &sw->axes[a];
  print_error("no axis %s\n", key);
  fail();
  return NULL;
}

/* Asserts an axis's values, given as one comma-joined string. */
static void assert_values(const swp_sweep *sw, const char *key, const char *want) {
  const swp_axis *ax = axis(sw, key);
  char got[1024] = "";
  for (size_t v = 0; v < ax->count; v++) {
    if (v) strcat(got, "|");
    strcat(got, ax->values[v]);
  }
  if (strcmp(got, want)) print_error("axis %s: got \"%s\", want \"%s\"\n", key, got, want);
  assert_string_equal(got, want);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    print_error("cannot open %s\n", path);
    fail();
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = 0;
  fclose(f);
  return s;
}

/* ---- parsing ---- */

static void test_lists_and_sections(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "; a comment\n"
                "[sweep]\n"
                "name = small\n"
                "replicates = 3\n"
                "seed = 0x10\n"
                "\n"
                "[scenario]\n"
                "load = 0.6   ; inline comment\n"
                "surge = 2000+500 4000+100\n"
                "# another comment\n"
                "[grid]\n"
                "vnodes = 10, 50 ,150\n"
                "capacity_factor = 1.1,inf\n");
  assert_string_equal(sw.name, "small");
  assert_int_equal(sw.replicates, 3);
  assert_int_equal(sw.seed, 16);
  assert_int_equal(sw.n_settings, 2);
  assert_string_equal(sw.settings[0].key, "load");
  assert_string_equal(sw.settings[0].value, "0.6");
  assert_int_equal(sw.settings[0].line, 8);
  assert_int_equal(sw.settings[1].line, 9);
  assert_true(sw.base.load == 0.6);
  assert_int_equal(sw.base.surge.count, 2);
  assert_true(sw.base.surge.w[1].start_ms == 4000 && sw.base.surge.w[1].duration_ms == 100);
  assert_int_equal(sw.n_axes, 2);
  assert_values(&sw, "vnodes", "10|50|150");
  assert_values(&sw, "capacity_factor", "1.1|inf");
  assert_int_equal(sw.axes[0].line, 12);
  assert_int_equal(sw.n_points, 6);
  assert_int_equal(swp_sweep_runs(&sw), 18);
  assert_int_equal(sw.ticks, 10000);
  swp_sweep_free(&sw);
}

static void test_defaults(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "[scenario]\n");
  assert_int_equal(sw.replicates, SWP_DEFAULT_REPLICATES);
  assert_int_equal(sw.seed, SWP_DEFAULT_SEED);
  assert_int_equal(sw.n_axes, 0);
  assert_int_equal(sw.n_points, 1);
  assert_null(sw.name);
  eng_config def;
  eng_config_defaults(&def);
  assert_memory_equal(&def, &sw.base, sizeof def);
  swp_sweep_free(&sw);
}

static void test_ranges(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "[grid]\n"
                "load = lin(0.5, 0.9, 5)\n"
                "budget_ratio = log(0.01, 1, 3), inf\n"
                "vnodes = lin(10, 100, 4), log(1000, 10000, 2)\n"
                "clients = log(1, 1000, 4)\n"
                "recovery_tolerance = lin(0, 1, 11)\n"
                "backoff_cap_ms = lin(7, 9, 1)\n");
  assert_values(&sw, "load", "0.5|0.6|0.7|0.8|0.9");
  assert_values(&sw, "budget_ratio", "0.01|0.1|1|inf");
  assert_values(&sw, "vnodes", "10|40|70|100|1000|10000");
  assert_values(&sw, "clients", "1|10|100|1000");
  assert_values(&sw, "recovery_tolerance", "0|0.1|0.2|0.3|0.4|0.5|0.6|0.7|0.8|0.9|1");
  assert_values(&sw, "backoff_cap_ms", "7");
  /* The spec keeps the ranges as written. */
  assert_string_equal(axis(&sw, "budget_ratio")->spec, "log(0.01, 1, 3), inf");
  swp_sweep_free(&sw);
}

static void test_normalised_values(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "[grid]\n"
                "capacity_factor = 1e0, 1.50, infinity\n"
                "backoff = none, full, decorrelated\n"
                "policy = naive, guarded\n"
                "surge = none, 2000+500 6000+200, 3000+250\n");
  assert_values(&sw, "capacity_factor", "1|1.5|inf");
  assert_values(&sw, "backoff", "none|full|decorrelated");
  assert_values(&sw, "policy", "naive|guarded");
  assert_values(&sw, "surge", "none|2000+500 6000+200|3000+250");
  assert_int_equal(sw.n_points, 3 * 3 * 2 * 3);
  swp_sweep_free(&sw);
}

static void test_continuation_lines(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "[sweep]\n"
                "description = first words\n"
                "   and more words\n"
                "[grid]\n"
                "vnodes = 10, 50,\n"
                "    150,\n"
                "\t200\n"
                "capacity_factor = 1.1\n");
  assert_string_equal(sw.description, "first words and more words");
  assert_values(&sw, "vnodes", "10|50|150|200");
  assert_values(&sw, "capacity_factor", "1.1");
  assert_int_equal(axis(&sw, "capacity_factor")->line, 8);
  swp_sweep_free(&sw);
}

static void test_bom_and_crlf(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "\xEF\xBB\xBF[sweep]\r\nreplicates = 2\r\n[grid]\r\nvnodes = 10, 50\r\n");
  assert_int_equal(sw.replicates, 2);
  assert_values(&sw, "vnodes", "10|50");
  swp_sweep_free(&sw);
  parse_fails("\xEF\xBB\xBF[grids]\nvnodes = 10\n", "t.ini:1: unknown section [grids] (did you mean [grid]?)");
}

static void test_points_first_axis_slowest(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "[scenario]\nload = 0.5\n"
                "[grid]\nvnodes = 10, 50, 150\ncapacity_factor = 1.1, inf\n");
  size_t idx[2];
  swp_sweep_point_indexes(&sw, 0, idx);
  assert_true(idx[0] == 0 && idx[1] == 0);
  swp_sweep_point_indexes(&sw, 1, idx);
  assert_true(idx[0] == 0 && idx[1] == 1);
  swp_sweep_point_indexes(&sw, 4, idx);
  assert_true(idx[0] == 2 && idx[1] == 0);
  eng_config cfg;
  char err[256];
  assert_int_equal(swp_sweep_point_config(&sw, 5, &cfg, err, sizeof err), 0);
  assert_int_equal(cfg.vnodes, 150);
  assert_true(isinf(cfg.capacity_factor));
  assert_true(cfg.load == 0.5); /* the scenario stays under the axes */
  assert_int_equal(swp_sweep_point_config(&sw, 2, &cfg, err, sizeof err), 0);
  assert_int_equal(cfg.vnodes, 50);
  assert_true(cfg.capacity_factor == 1.1);
  char where[128];
  swp_sweep_point_describe(&sw, 3, where, sizeof where);
  assert_string_equal(where, "vnodes=50 capacity_factor=inf");
  swp_sweep_free(&sw);
}

static void test_preset_axis_overrides_scenario(void **state) {
  (void)state;
  swp_sweep sw;
  parse_ok(&sw, "[scenario]\nbudget_ratio = 0.3\n[grid]\npolicy = naive, guarded\n");
  eng_config cfg;
  assert_int_equal(swp_sweep_point_config(&sw, 0, &cfg, NULL, 0), 0);
  assert_true(isinf(cfg.budget_ratio)); /* naive: no budget */
  assert_int_equal(swp_sweep_point_config(&sw, 1, &cfg, NULL, 0), 0);
  assert_true(cfg.budget_ratio == 0.1);
  assert_int_equal(cfg.backoff, ENG_BACKOFF_FULL);
  swp_sweep_free(&sw);
}

/* ---- overrides and the effective text ---- */

static void test_overrides(void **state) {
  (void)state;
  swp_sweep sw;
  char err[512];
  parse_ok(&sw, "[scenario]\nload = 0.6\nshards = 8\n"
                "[grid]\nvnodes = 10, 50\ncapacity_factor = 1.1, inf\nbudget_ratio = 0.1, inf\n");
  assert_int_equal(swp_sweep_override_set(&sw, "load=0.5", err, sizeof err), 0);
  assert_int_equal(swp_sweep_override_set(&sw, " vnodes = 20 ", err, sizeof err), 0);
  assert_int_equal(swp_sweep_override_grid(&sw, "budget_ratio=0.05,0.2, inf", err, sizeof err), 0);
  assert_int_equal(swp_sweep_override_grid(&sw, "shards=4,16", err, sizeof err), 0);
  assert_int_equal(swp_sweep_override_set(&sw, "replicates=7", err, sizeof err), 0);
  assert_int_equal(swp_sweep_override_set(&sw, "seed=99", err, sizeof err), 0);
  assert_int_equal(swp_sweep_check(&sw, err, sizeof err), 0);
  /* vnodes left the grid; budget_ratio kept its place; shards joined at the end. */
  assert_int_equal(sw.n_axes, 3);
  assert_string_equal(sw.axes[0].key, "capacity_factor");
  assert_string_equal(sw.axes[1].key, "budget_ratio");
  assert_string_equal(sw.axes[2].key, "shards");
  assert_values(&sw, "budget_ratio", "0.05|0.2|inf");
  assert_int_equal(axis(&sw, "budget_ratio")->line, 0);
  /* load replaced (appended last), shards removed from the scenario, vnodes fixed. */
  assert_int_equal(sw.n_settings, 2);
  assert_string_equal(sw.settings[0].key, "load");
  assert_string_equal(sw.settings[0].value, "0.5");
  assert_string_equal(sw.settings[1].key, "vnodes");
  assert_int_equal(sw.base.vnodes, 20);
  assert_true(sw.base.load == 0.5);
  assert_int_equal(sw.replicates, 7);
  assert_int_equal(sw.seed, 99);
  assert_int_equal(sw.n_points, 2 * 3 * 2);
  swp_sweep_free(&sw);
}

static void test_override_errors(void **state) {
  (void)state;
  swp_sweep sw;
  char err[512];
  parse_ok(&sw, "[grid]\nvnodes = 10, 50\n");
  assert_int_equal(swp_sweep_override_set(&sw, "vnode=5", err, sizeof err), -1);
  assert_string_equal(err, "--set: unknown setting 'vnode' (did you mean 'vnodes'?)");
  assert_int_equal(swp_sweep_override_set(&sw, "load", err, sizeof err), -1);
  assert_string_equal(err, "--set load: expected KEY=VALUE");
  assert_int_equal(swp_sweep_override_set(&sw, "capacity_factor=0.5", err, sizeof err), -1);
  assert_string_equal(err, "--set capacity_factor=0.5: capacity_factor: must be >= 1 or inf, got 0.5");
  assert_int_equal(swp_sweep_override_grid(&sw, "vnodes=", err, sizeof err), -1);
  assert_non_null(strstr(err, "empty axis"));
  assert_int_equal(swp_sweep_override_grid(&sw, "vnodes=10,,20", err, sizeof err), -1);
  assert_non_null(strstr(err, "empty value"));
  assert_int_equal(swp_sweep_override_grid(&sw, "replicates=1,2", err, sizeof err), -1);
  assert_non_null(strstr(err, "not a scenario setting"));
  assert_int_equal(swp_sweep_override_set(&sw, "replicates=0", err, sizeof err), -1);
  assert_non_null(strstr(err, "replicates: expected a whole number"));
  swp_sweep_free(&sw);
}

static void test_format_round_trip(void **state) {
  (void)state;
  swp_sweep a, b;
  char err[512];
  parse_ok(&a, "[sweep]\nname = rt\n"
               "description = a long description that goes on and on, with commas, and words "
               "enough to need wrapping at a hundred columns\n"
               "    when it is printed back\n"
               "replicates = 4\nseed = 18446744073709551615\n"
               "[scenario]\nsurge = 2000+500 6000+200\nshards = 12\n"
               "[grid]\nload = lin(0.5, 0.9, 3)\n");
  /* Override to make a long axis that must wrap. */
  assert_int_equal(swp_sweep_override_grid(&a, "vnodes=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,"
                                               "18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,"
                                               "34,35,36,37,38,39,40,lin(41,100,60)",
                                           err, sizeof err),
                   0);
  assert_int_equal(swp_sweep_check(&a, err, sizeof err), 0);
  char *text = swp_sweep_format(&a);
  assert_non_null(text);
  /* No line longer than the parser accepts. */
  for (char *l = text; *l;) {
    char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    if (len > SWP_MAX_LINE) print_error("line too long (%zu): %.*s\n", len, (int)len, l);
    assert_true(len <= SWP_MAX_LINE);
    l += len + (nl ? 1 : 0);
  }
  parse_ok(&b, text);
  assert_string_equal(a.name, b.name);
  assert_string_equal(a.description, b.description);
  assert_int_equal(a.replicates, b.replicates);
  assert_true(a.seed == b.seed);
  assert_int_equal(a.n_axes, b.n_axes);
  for (size_t x = 0; x < a.n_axes; x++) {
    assert_string_equal(a.axes[x].key, b.axes[x].key);
    assert_int_equal(a.axes[x].count, b.axes[x].count);
    for (size_t v = 0; v < a.axes[x].count; v++)
      assert_string_equal(a.axes[x].values[v], b.axes[x].values[v]);
  }
  assert_int_equal(axis(&b, "vnodes")->count, 100);
  assert_memory_equal(&a.base, &b.base, sizeof a.base);
  char *text2 = swp_sweep_format(&b);
  assert_string_equal(text, text2);
  free(text);
  free(text2);
  swp_sweep_free(&a);
  swp_sweep_free(&b);
}

/* ---- errors ---- */

static void test_errors(void **state) {
  (void)state;
  parse_fails("[scenario]\nload = 0.5\nvnode = 10\n",
              "t.ini:3: unknown setting 'vnode' in [scenario] (did you mean 'vnodes'?)");
  parse_fails("[grid]\ncapacity_factr = 1.1, 2\n",
              "t.ini:2: unknown setting 'capacity_factr' in [grid] (did you mean 'capacity_factor'?)");
  parse_fails("[grid]\nzzzzzz = 1\n", "t.ini:2: unknown setting 'zzzzzz' in [grid] (see");
  parse_fails("[scenarios]\nload = 0.5\n", "t.ini:1: unknown section [scenarios] (did you mean [scenario]?)");
  parse_fails("[sweep]\n[foo]\n", "t.ini:2: unknown section [foo] (expected [sweep], [scenario], [grid], [service NAME] or [call A->B])");
  parse_fails("[scenario]\ncapacity_factor = 1.2x\n",
              "t.ini:2: capacity_factor: expected a number or inf, got '1.2x'");
  parse_fails("[scenario]\nshards = 4.5\n", "t.ini:2: shards: expected a whole number");
  parse_fails("[grid]\nvnodes = 10, 5o\n", "t.ini:2: vnodes: expected a whole number, got '5o'");
  parse_fails("[grid]\ncapacity_factor = 1.1, 0.5\n",
              "t.ini:2: capacity_factor: must be >= 1 or inf, got 0.5");
  parse_fails("[grid]\nvnodes = inf\n", "t.ini:2: vnodes: expected a whole number, got 'inf'");
  parse_fails("[grid]\nload = 0.5\nvnodes =\n", "t.ini:3: vnodes: empty axis");
  parse_fails("[grid]\nvnodes = 10, , 20\n", "t.ini:2: empty value in the list");
  parse_fails("[grid]\nvnodes = 10\nload = 0.5\nvnodes = 20\n",
              "t.ini:4: duplicate axis 'vnodes' (first at line 2)");
  parse_fails("[scenario]\nload = 0.5\nload = 0.6\n",
              "t.ini:3: duplicate key 'load' in [scenario] (first at line 2)");
  parse_fails("[scenario]\nload = 0.5\n[grid]\nload = 0.6, 0.7\n",
              "t.ini:4: 'load' is both a [scenario] setting and a [grid] axis (lines 2 and 4)");
  parse_fails("[grid]\nvnodes = 10, 1e1\n", "t.ini:2: vnodes: value '1e1' appears twice in the axis");
  parse_fails("[grid]\nload = lin(0.5, 0.9)\n", "t.ini:2: load: expected lin(START, STOP, N) with three numbers");
  parse_fails("[grid]\nload = lin(0.5, 0.9, 0)\n", "N must be a whole number");
  parse_fails("[grid]\nload = log(0, 1, 3)\n", "log ranges need START and STOP > 0");
  parse_fails("[grid]\nbackoff = lin(1, 2, 2)\n", "ranges need a numeric setting");
  parse_fails("[grid]\nbackoff = full, sometimes\n", "t.ini:2: backoff: must be one of none, full");
  parse_fails("load = 0.5\n", "t.ini:1: 'load' is outside a section");
  parse_fails("[sweep]\nreplicates = 0\n", "t.ini:2: replicates: expected a whole number from 1");
  parse_fails("[sweep]\nreplicates = 2x\n", "t.ini:2: replicates: expected a whole number");
  parse_fails("[sweep]\nseed = -1\n", "t.ini:2: seed: expected a whole number from 0 to 2^64-1");
  parse_fails("[sweep]\nvnodes = 3\n", "t.ini:2: 'vnodes' is a scenario setting: put it in [scenario] or [grid]");
  parse_fails("[sweep]\nreplicate = 3\n", "t.ini:2: unknown key 'replicate' in [sweep]");
  parse_fails("[scenario]\nreplicates = 3\n", "t.ini:2: 'replicates' belongs in [sweep]");
  parse_fails("[scenario]\nthis line has no equals sign\n", "t.ini:2: expected '[section]' or 'key = value'");
  parse_fails("[grid]\nvnodes = 10\n  capacity_factor = 2\n",
              "t.ini:3: indented line continues the value of 'vnodes' (line 2)");
  parse_fails("[grid]\nvnodes = 10\n  [scenario]\n", "t.ini:3: a section header must start");
  /* Cross-field validation runs per grid point and names the point. */
  parse_fails("[scenario]\nhorizon_ms = 1000\n",
              "t.ini:2: surge: window 2000+500 ends after the horizon");
  parse_fails("[grid]\nhorizon_ms = 10000, 1000\n",
              "t.ini:2: grid point 1 (horizon_ms=1000): surge: window 2000+500 ends after the horizon");
  parse_fails("[grid]\ntick_ms = 1, 2\n", "tick_ms must be the same at every grid point");
  parse_fails("[scenario]\nshards = 4\nbrownout_shard = 7\n",
              "t.ini:3: brownout_shard: 7 is not a shard (shards = 4)");
  parse_fails("[grid]\ntimeout_ms = lin(0, 1, 11)\n", "grid point 0 (timeout_ms=0): timeout_ms");
  parse_fails("[sweep]\nreplicates = 1000000000\n[grid]\nvnodes = 1, 2\n", "more than 1000000000 runs");
  /* Lines longer than inih's buffer are refused, not split. */
  char longline[400] = "[grid]\nvnodes = 1";
  for (int i = 2; strlen(longline) < 300; i++) sprintf(longline + strlen(longline), ", %d", i);
  strcat(longline, "\n");
  parse_fails(longline, "t.ini:2: line longer than 196 characters");
}

static void test_parse_file_errors(void **state) {
  (void)state;
  swp_sweep sw;
  char err[512];
  swp_sweep_init(&sw);
  assert_int_equal(swp_sweep_parse_file(&sw, "/nonexistent/x.ini", err, sizeof err), -1);
  assert_string_equal(err, "/nonexistent/x.ini: cannot open: No such file or directory");
  swp_sweep_free(&sw);
}

/* ---- the shipped studies ---- */

static void test_seed_study_is_seed_ini(void **state) {
  (void)state;
  char *text = read_text(STORMSWEEP_SOURCE_DIR "/sweeps/seed.ini");
  if (strcmp(text, swp_seed_study_text()))
    print_error("sweeps/seed.ini differs from the compiled-in seed study (rebuild?)\n");
  assert_string_equal(text, swp_seed_study_text());
  free(text);
  swp_sweep sw;
  char err[512];
  swp_sweep_init(&sw);
  assert_int_equal(swp_sweep_parse_seed_study(&sw, err, sizeof err), 0);
  assert_int_equal(swp_sweep_check(&sw, err, sizeof err), 0);
  /* The mission's four axes, and a sweep of thousands of runs. */
  const char *keys[] = {"vnodes", "capacity_factor", "budget_ratio", "backoff_cap_ms"};
  assert_int_equal(sw.n_axes, 4);
  for (int i = 0; i < 4; i++) assert_string_equal(sw.axes[i].key, keys[i]);
  assert_true(swp_sweep_runs(&sw) >= 1000);
  /* It crosses from naive (no budget, no backoff) to guarded. */
  assert_values(&sw, "budget_ratio", "0.1|0.5|0.75|1|inf");
  assert_string_equal(axis(&sw, "backoff_cap_ms")->values[0], "0");
  assert_int_equal(sw.base.backoff, ENG_BACKOFF_FULL);
  swp_sweep_free(&sw);
}

static void test_shipped_studies_parse(void **state) {
  (void)state;
  const char *files[] = {"seed.ini",      "hot_key.ini",     "failover.ini",
                         "load_ramp.ini", "closed_loop.ini", "limiters.ini"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[1024], err[1024];
    snprintf(path, sizeof path, "%s/sweeps/%s", STORMSWEEP_SOURCE_DIR, files[i]);
    swp_sweep sw;
    swp_sweep_init(&sw);
    int rc = swp_sweep_parse_file(&sw, path, err, sizeof err);
    if (!rc) rc = swp_sweep_check(&sw, err, sizeof err);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(sw.name);
    assert_non_null(sw.description);
    assert_true(sw.n_axes >= 1);
    swp_sweep_free(&sw);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists_and_sections),
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_ranges),
      cmocka_unit_test(test_normalised_values),
      cmocka_unit_test(test_continuation_lines),
      cmocka_unit_test(test_bom_and_crlf),
      cmocka_unit_test(test_points_first_axis_slowest),
      cmocka_unit_test(test_preset_axis_overrides_scenario),
      cmocka_unit_test(test_overrides),
      cmocka_unit_test(test_override_errors),
      cmocka_unit_test(test_format_round_trip),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_parse_file_errors),
      cmocka_unit_test(test_seed_study_is_seed_ini),
      cmocka_unit_test(test_shipped_studies_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
