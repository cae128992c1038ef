/*
 * test_validation.c — every kind of bad sweep input is refused before any
 * work starts, with the exact one-line message a user sees:
 * unknown sections and keys (with the nearest known one), malformed numbers,
 * out-of-range values, fault windows outside the horizon, horizons and grids
 * that cannot fit in memory, too many runs or points, empty and duplicate
 * axes, and the same through --set / --grid.
 *
 * Each case goes the way `stormsweep run` goes: swp_sweep_parse_string (or
 * _file), the overrides in order, then swp_sweep_check; the first error is
 * compared whole, so a reworded message or a lost line number shows up as a
 * diff. Messages name the file and line ("t.ini:3:") or the option
 * ("--set load=2:") and the key. cli_hostile.sh checks the exit status and
 * that no output file is created.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "swp.h"
#include "drv_internal.h"
#include "testutil.h"

/* ---- helpers ---- */

/* Runs text through parse, the overrides ("--set=K=V" or "--grid=K=V1,V2",
 * NULL-terminated) and check; returns the status and leaves the first
 * message in err. */
static int sweep_try(const char *text, const char *const *overrides, char *err, size_t errlen) {
  swp_sweep sw;
  swp_sweep_init(&sw);
  err[0] = 0;
  int rc = swp_sweep_parse_string(&sw, text, "t.ini", err, errlen);
  for (size_t i = 0; !rc && overrides && overrides[i]; i++) {
    const char *o = overrides[i];
    if (!strncmp(o, "--set=", 6))
      rc = swp_sweep_override_set(&sw, o + 6, err, errlen);
    else if (!strncmp(o, "--grid=", 7))
      rc = swp_sweep_override_grid(&sw, o + 7, err, errlen);
    else
      fail_msg("bad override spec '%s' in the test", o);
  }
  if (!rc) rc = swp_sweep_check(&sw, err, errlen);
  swp_sweep_free(&sw);
  return rc;
}

static void expect_error_with(const char *text, const char *const *overrides, const char *want) {
  char err[2048];
  int rc = sweep_try(text, overrides, err, sizeof err);
  if (rc != -1) fail_msg("input:\n%s\nexpected the error\n  \"%s\"\ngot success", text, want);
  if (strcmp(err, want))
    fail_msg("input:\n%s\n  got      \"%s\"\n  expected \"%s\"", text, err, want);
  if (strchr(err, '\n')) fail_msg("message is not one line: \"%s\"", err);
}

static void expect_error(const char *text, const char *want) {
  expect_error_with(text, NULL, want);
}

static void expect_ok_with(const char *text, const char *const *overrides) {
  char err[2048];
  if (sweep_try(text, overrides, err, sizeof err))
    fail_msg("input:\n%s\nunexpected error \"%s\"", text, err);
}

static void expect_ok(const char *text) { expect_ok_with(text, NULL); }

/* The message must start with head and end with tail (the middle is a
 * machine-dependent number). */
static void expect_error_around(const char *text, const char *head, const char *tail) {
  char err[2048];
  int rc = sweep_try(text, NULL, err, sizeof err);
  if (rc != -1) fail_msg("input:\n%s\nexpected an error starting \"%s\", got success", text, head);
  size_t n = strlen(err), h = strlen(head), t = strlen(tail);
  if (n < h + t || strncmp(err, head, h) || strcmp(err + n - t, tail))
    fail_msg("input:\n%s\n  got      \"%s\"\n  expected \"%s...%s\"", text, err, head, tail);
}

static double physical_gb(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page / (1024.0 * 1024.0 * 1024.0) : 0;
}

/* ---- unknown sections and keys ---- */

static void test_unknown_sections(void **state) {
  (void)state;
  expect_error("[scenarios]\nload = 0.5\n",
               "t.ini:1: unknown section [scenarios] (did you mean [scenario]?)");
  expect_error("[grdi]\nvnodes = 1\n", "t.ini:1: unknown section [grdi] (did you mean [grid]?)");
  expect_error("[Sweep]\n", "t.ini:1: unknown section [Sweep] (did you mean [sweep]?)");
  expect_error("[sweep]\n[foo]\n",
               "t.ini:2: unknown section [foo] (expected [sweep], [scenario], [grid], [service NAME] or [call A->B])");
  expect_error("[]\n", "t.ini:1: unknown section [] (expected [sweep], [scenario], [grid], [service NAME] or [call A->B])");
  /* a byte-order mark does not hide the header from the check */
  expect_error("\xEF\xBB\xBF[grids]\nvnodes = 10\n",
               "t.ini:1: unknown section [grids] (did you mean [grid]?)");
  expect_error("load = 0.5\n",
               "t.ini:1: 'load' is outside a section (put it under [sweep], [scenario] or [grid])");
  expect_error("[grid]\nvnodes = 10\n  [scenario]\n",
               "t.ini:3: a section header must start at the beginning of its line");
  /* call graphs: a service or call section names its service or edge */
  expect_error("[service]\nworkers = 2\n",
               "t.ini:1: [service] needs its name: [service NAME] for a service, [call A->B] "
               "for its calls");
  expect_error("[call api]\ntimeout_ms = 2\n",
               "t.ini:1: [call api] needs its name: [service NAME] for a service, [call A->B] "
               "for its calls");
  expect_error("[service api]\ncalls = db\n[call api->db]\nclients = 2\n",
               "t.ini:4: unknown setting 'api->db.clients' in [call api->db] (a service "
               "has its server settings, calls, at and error_rate; a call its client policy and "
               "fanout: docs/call-graphs.md)");
  expect_error("[service api]\ncalls = db\n[call db->api]\nmax_retries = 2\n",
               "t.ini:4: db->api.max_retries: db does not call api (list it in db.calls first)");
  expect_ok("[service api]\nworkers = 4\ncalls = db\n[service db]\nworkers = 2\n"
            "[call api->db]\nmax_retries = 1\n[grid]\napi->db.timeout_ms = 20, 40\n"
            "db.shards = 1, 2\n");
}

static void test_unknown_keys(void **state) {
  (void)state;
  expect_error("[scenario]\nload = 0.5\nvnode = 10\n",
               "t.ini:3: unknown setting 'vnode' in [scenario] (did you mean 'vnodes'?)");
  expect_error("[grid]\ncapacity_factr = 1.1, 2\n",
               "t.ini:2: unknown setting 'capacity_factr' in [grid] (did you mean "
               "'capacity_factor'?)");
  expect_error("[grid]\nzzzzzz = 1\n",
               "t.ini:2: unknown setting 'zzzzzz' in [grid] (see 'stormsweep sim --list-settings')");
  expect_error("[sweep]\nreplicate = 3\n",
               "t.ini:2: unknown key 'replicate' in [sweep] (did you mean 'replicates'?)");
  expect_error("[sweep]\nnmae = x\n", "t.ini:2: unknown key 'nmae' in [sweep] (did you mean 'name'?)");
  expect_error("[sweep]\ncolour = red\n",
               "t.ini:2: unknown key 'colour' in [sweep] (expected name, description, replicates, "
               "seed, crn, refine, screen_up_to, scenario_axes, tunable_axes, telemetry_digests, "
               "record or record_metrics)");
  expect_error("[sweep]\ncrn = yes\n", "t.ini:2: crn: expected on or off, got 'yes'");
  expect_error("[sweep]\nscreen_up_to = 1\n",
               "t.ini:2: screen_up_to: expected off or a whole number from 2 to 1000000000 "
               "(more than replicates), got '1'");
  expect_error("[scenario]\nreplicats = 3\n",
               "t.ini:2: unknown setting 'replicats' in [scenario] (did you mean 'replicates' in "
               "[sweep]?)");
  expect_error("[sweep]\nvnodes = 3\n",
               "t.ini:2: 'vnodes' is a scenario setting: put it in [scenario] or [grid]");
  expect_error("[scenario]\nreplicates = 3\n", "t.ini:2: 'replicates' belongs in [sweep]");
  expect_error("[scenario]\nthis line has no equals sign\n",
               "t.ini:2: expected '[section]' or 'key = value'");
  expect_error("[grid]\nvnodes = 10\n  capacity_factor = 2\n",
               "t.ini:3: indented line continues the value of 'vnodes' (line 2); remove the "
               "indentation to start a new key");
}

/* ---- malformed numbers ---- */

static void test_malformed_numbers(void **state) {
  (void)state;
  expect_error("[scenario]\nload = 0.7.1\n", "t.ini:2: load: expected a number, got '0.7.1'");
  expect_error("[scenario]\nload = nan\n", "t.ini:2: load: expected a number, got 'nan'");
  expect_error("[scenario]\nload = 1e999\n", "t.ini:2: load: expected a number, got '1e999'");
  expect_error("[scenario]\ncapacity_factor = 1.2x\n",
               "t.ini:2: capacity_factor: expected a number or inf, got '1.2x'");
  expect_error("[scenario]\nshards = 4.5\n", "t.ini:2: shards: expected a whole number, got '4.5'");
  expect_error("[grid]\nvnodes = 10, 5o\n", "t.ini:2: vnodes: expected a whole number, got '5o'");
  expect_error("[grid]\nvnodes = inf\n", "t.ini:2: vnodes: expected a whole number, got 'inf'");
  expect_error("[sweep]\nreplicates = 2x\n",
               "t.ini:2: replicates: expected a whole number from 1 to 1000000000, got '2x'");
  expect_error("[sweep]\nseed = 0x\n",
               "t.ini:2: seed: expected a whole number from 0 to 2^64-1 (decimal or 0x hex), got "
               "'0x'");
  expect_error("[sweep]\nseed = 99999999999999999999\n",
               "t.ini:2: seed: expected a whole number from 0 to 2^64-1 (decimal or 0x hex), got "
               "'99999999999999999999'");
  expect_error("[sweep]\nseed = -1\n",
               "t.ini:2: seed: expected a whole number from 0 to 2^64-1 (decimal or 0x hex), got "
               "'-1'");
  expect_error("[scenario]\nsurge = 2000-500\n",
               "t.ini:2: surge: expected windows \"START+DURATION ...\" in ms (e.g. 2000+500) or "
               "none");
  expect_error("[scenario]\nsurge = 1e400+10\n",
               "t.ini:2: surge: window start and duration must be finite numbers of ms");
  expect_error("[grid]\nbackoff = full, sometimes\n",
               "t.ini:2: backoff: must be one of none, full, equal, decorrelated, grpc, envoy, got 'sometimes'");
  expect_error("[grid]\nload = lin(0.5, 0.9)\n",
               "t.ini:2: load: expected lin(START, STOP, N) with three numbers, got 'lin(0.5, "
               "0.9)'");
  expect_error("[grid]\nload = lin(0.5, 0.9, 2.5)\n",
               "t.ini:2: load: lin(0.5, 0.9, 2.5): N must be a whole number from 1 to 1000000");
  expect_error("[grid]\nload = log(0, 1, 3)\n",
               "t.ini:2: load: log(0, 1, 3): log ranges need START and STOP > 0");
  expect_error("[grid]\nbackoff = lin(1, 2, 2)\n",
               "t.ini:2: backoff: lin(1, 2, 2) ranges need a numeric setting");
}

/* ---- out-of-range values ---- */

static void test_out_of_range(void **state) {
  (void)state;
  expect_error("[scenario]\ncapacity_factor = 0.5\n",
               "t.ini:2: capacity_factor: must be >= 1 or inf, got 0.5");
  expect_error("[grid]\ncapacity_factor = 1.1, 0.99\n",
               "t.ini:2: capacity_factor: must be >= 1 or inf, got 0.99");
  expect_error("[scenario]\nvnodes = 0\n", "t.ini:2: vnodes: must be between 1 and 65536, got 0");
  expect_error("[scenario]\nvnodes = 65537\n",
               "t.ini:2: vnodes: must be between 1 and 65536, got 65537");
  expect_error("[scenario]\nrate_rps = -5\n",
               "t.ini:2: rate_rps: must be between 0 and 1e+12, got -5");
  expect_error("[scenario]\nload = -0.1\n", "t.ini:2: load: must be between 0 and 1e+06, got -0.1");
  expect_error("[scenario]\ntimeout_ms = -1\n", "t.ini:2: timeout_ms: must be >= 0 or inf, got -1");
  expect_error("[scenario]\nbackoff_cap_ms = -1\n",
               "t.ini:2: backoff_cap_ms: must be >= 0, got -1");
  expect_error("[scenario]\nhorizon_ms = -10\n",
               "t.ini:2: horizon_ms: must be between 1 and 1e+10, got -10");
  expect_error("[scenario]\ntick_ms = 0\n",
               "t.ini:2: tick_ms: must be between 0.001 and 10000, got 0");
  expect_error("[scenario]\nmax_retries = 1001\n",
               "t.ini:2: max_retries: must be between 0 and 1000, got 1001");
  expect_error("[scenario]\nkeys = 1e19\n", "t.ini:2: keys: must be between 1 and 4e+18, got 1e19");
  expect_error("[scenario]\nsurge = -5+100\n",
               "t.ini:2: surge: window start and duration must be >= 0 ms");
  expect_error("[scenario]\nsurge = 2000+-5\n",
               "t.ini:2: surge: window start and duration must be >= 0 ms");
  expect_error("[sweep]\nreplicates = 0\n",
               "t.ini:2: replicates: expected a whole number from 1 to 1000000000, got '0'");
  expect_error("[scenario]\nload = 1e6\n",
               "t.ini:2: load: arrival rate of 1.28e+08 requests per tick is beyond what a run "
               "can simulate (max 1e7)");
  /* the bounds themselves are fine */
  expect_ok("[scenario]\ncapacity_factor = 1\nvnodes = 65536\nshards = 2\n");
  expect_ok("[grid]\nvnodes = 1, 65536\ncapacity_factor = 1, inf\n");
}

/* ---- cross-field checks: windows, shards, ticks ---- */

static void test_cross_field(void **state) {
  (void)state;
  /* The default surge now ends after the horizon: the horizon's line is blamed. */
  expect_error("[scenario]\nhorizon_ms = 1000\n",
               "t.ini:2: surge: window 2000+500 ends after the horizon (horizon_ms = 1000)");
  expect_error("[scenario]\nload = 0.5\ncrash = 9000+2000\n",
               "t.ini:3: crash: window 9000+2000 ends after the horizon (horizon_ms = 10000)");
  expect_error("[grid]\nhorizon_ms = 10000, 1000\n",
               "t.ini:2: grid point 1 (horizon_ms=1000): surge: window 2000+500 ends after the "
               "horizon (horizon_ms = 1000)");
  expect_error("[scenario]\nshards = 4\nbrownout_shard = 7\n",
               "t.ini:3: brownout_shard: 7 is not a shard (shards = 4)");
  /* brownout_shard left at its default: the shards line is blamed */
  expect_error("[scenario]\nbrownout = 100+10\nshards = 1\nbrownout_shard = 1\n",
               "t.ini:4: brownout_shard: 1 is not a shard (shards = 1)");
  expect_error("[scenario]\nbreaker_min_calls = 30\n",
               "t.ini:2: breaker_min_calls (30) must not exceed breaker_window (20)");
  expect_error("[grid]\ntimeout_ms = 0.5, 100\n",
               "t.ini:2: grid point 0 (timeout_ms=0.5): timeout_ms (0.5) must be at least one tick "
               "(tick_ms = 1)");
  expect_error("[grid]\ntick_ms = 1, 2\n",
               "t.ini:2: grid point 1 (tick_ms=2): tick_ms must be the same at every grid point "
               "(the /ticks datasets share one time axis); got 1 and 2");
  expect_error("[scenario]\nhorizon_ms = 1e10\n",
               "t.ini:2: horizon_ms / tick_ms must give 1 to 100000000 ticks (got 1e+10 / 1)");
  expect_error("[scenario]\ntick_ms = 0.001\nhorizon_ms = 1e6\nsurge = none\nbrownout = none\n",
               "t.ini:3: horizon_ms / tick_ms must give 1 to 100000000 ticks (got 1e+06 / 0.001)");
  /* A window ending exactly at the horizon is inside it. */
  expect_ok("[scenario]\nhorizon_ms = 2500\n");
}

/* ---- memory ---- */

static void test_memory(void **state) {
  (void)state;
  /* 1e8 ticks x 4096 shards x 4 bytes is 1.5 TB: no machine runs that. */
  expect_error_around("[scenario]\nrecord_shard_queues = on\nshards = 4096\nhorizon_ms = 1e8\n"
                      "surge = none\nbrownout = none\n",
                      "t.ini:2: record_shard_queues: one run needs about 1534.9 GB (100000000 "
                      "ticks x 4096 shards x 4 bytes of per-shard queue depths), more than half of "
                      "this machine's ",
                      " GB of memory; turn record_shard_queues off or shorten horizon_ms");
  /* A grid point whose horizon alone is too long, blamed on the axis line. */
  expect_error_around("[grid]\nrecord_shard_queues = off, on\n[scenario]\nshards = 4096\n"
                      "horizon_ms = 1e7\n",
                      "t.ini:2: grid point 1 (record_shard_queues=on): record_shard_queues: one "
                      "run needs about 153.9 GB (10000000 ticks x 4096 shards x 4 bytes of "
                      "per-shard queue depths), more than half of this machine's ",
                      "; turn record_shard_queues off or shorten horizon_ms");
  /* The per-tick metrics of 1e8 ticks: 7.1 GB, refused where that is more
   * than half the memory (bigger machines run it, as many threads as fit:
   * the driver's check). */
  double gb = physical_gb();
  if (gb > 0 && gb / 2 < 7.1)
    expect_error_around("[scenario]\nhorizon_ms = 1e8\n",
                        "t.ini:2: horizon_ms: one run needs about 7.1 GB (100000000 ticks x 76 "
                        "bytes of per-tick metrics), more than half of this machine's ",
                        " GB of memory; shorten horizon_ms or lengthen tick_ms");
  else
    print_message("(%.1f GB machine: a 1e8-tick run fits; per-tick refusal not tested)\n", gb);
  if (gb > 0 && gb / 2 < 92.1)
    expect_error_around("[scenario]\nbreaker = fail_fast\nclients = 1000000\nshards = 4096\n",
                        "t.ini:2: breaker: one run needs about 92.2 GB (1000000 clients x 4096 "
                        "shards circuit breakers), more than half of this machine's ",
                        " GB of memory; lower clients or shards, or turn the breaker off");
  /* The seed study's scale is nowhere near. */
  expect_ok("[scenario]\nhorizon_ms = 100000\n");
  /* A sweep that stores no rows keeps none in its runs either: the same
   * horizons and per-shard depths fit (the outcome rule's windows only). */
  expect_ok("[sweep]\nrecord = summary\n[scenario]\nrecord_shard_queues = on\nshards = 4096\n"
            "horizon_ms = 1e7\n");
  expect_ok("[sweep]\nrecord = summary\n[scenario]\nhorizon_ms = 1e8\n");
  /* Rows of 100 ticks: a hundredth of the per-shard depths (1.6 GB). */
  expect_ok("[sweep]\nrecord = every=100ms\n[scenario]\nrecord_shard_queues = on\n"
            "shards = 4096\nhorizon_ms = 1e7\n");
}

/* ---- grid size, empty and duplicate axes ---- */

static void test_grid_shape(void **state) {
  (void)state;
  expect_error("[sweep]\nreplicates = 1000000000\n[grid]\nvnodes = 1, 2\n",
               "t.ini: 2 points x 1000000000 replicates is more than 1000000000 runs");
  expect_error("[grid]\nvnodes = lin(1, 1000, 1000)\nload = lin(0.1, 1, 1000)\n"
               "workers = lin(1, 1000, 1000)\n",
               "t.ini:4: workers: its 1000 values take the grid past 10000000 points (the most a "
               "sweep may have; use fewer values or replicates instead)");
  expect_error("[grid]\nload = lin(0, 1, 1000000), lin(2, 3, 1000000)\n",
               "t.ini:2: load: more than 1000000 values in one axis");
  expect_error("[grid]\nload = 0.5\nvnodes =\n",
               "t.ini:3: vnodes: empty axis (give at least one value)");
  expect_error("[grid]\nvnodes = 10, , 20\n", "t.ini:2: empty value in the list '10, , 20'");
  expect_error("[grid]\nvnodes = 10\nload = 0.5\nvnodes = 20\n",
               "t.ini:4: duplicate axis 'vnodes' (first at line 2)");
  expect_error("[scenario]\nload = 0.5\nload = 0.6\n",
               "t.ini:3: duplicate key 'load' in [scenario] (first at line 2)");
  expect_error("[scenario]\nload = 0.5\n[grid]\nload = 0.6, 0.7\n",
               "t.ini:4: 'load' is both a [scenario] setting and a [grid] axis (lines 2 and 4)");
  expect_error("[grid]\nvnodes = 10, 1e1\n", "t.ini:2: vnodes: value '1e1' appears twice in the axis");
  expect_error("[grid]\nsurge = 2000+500, 2e3+5e2\n",
               "t.ini:2: surge: value '2e3+5e2' appears twice in the axis");
  /* custom names no preset: refused (it used to run as naive) */
  expect_error("[grid]\npolicy = naive, custom\n",
               "t.ini:2: policy: 'custom' is not a preset (it is how settings changed one by one "
               "are reported): choose naive or guarded, or set budget_ratio, backoff, "
               "backoff_base_ms, backoff_cap_ms and deadline_drop themselves");
  /* integer rounding of a range makes repeats */
  expect_error("[grid]\nvnodes = lin(1, 2, 3)\n", "t.ini:2: vnodes: value '2' appears twice in the axis");
  /* the first repeat in list order is named, and before a later bad value */
  expect_error("[grid]\nload = 0.3, 0.1, 0.2, 0.1, 0.3, bad\n",
               "t.ini:2: load: value '0.1' appears twice in the axis");
  /* a long distinct axis is quick: duplicates are found by sorting */
  expect_ok("[grid]\nload = lin(0, 1, 200000)\n[sweep]\nreplicates = 1\n");
  char longline[400] = "[grid]\nvnodes = 1";
  for (int i = 2; strlen(longline) < 300; i++) sprintf(longline + strlen(longline), ", %d", i);
  strcat(longline, "\n");
  expect_error(longline,
               "t.ini:2: line longer than 196 characters (continue a long list on indented lines)");
}

/* ---- --set and --grid ---- */

static void test_overrides(void **state) {
  (void)state;
  const char *base = "[grid]\nvnodes = 10, 50\n";
  expect_error_with(base, (const char *[]){"--set=vnode=5", NULL},
                    "--set: unknown setting 'vnode' (did you mean 'vnodes'?)");
  expect_error_with(base, (const char *[]){"--set=replicate=5", NULL},
                    "--set: unknown setting 'replicate' (did you mean 'replicates'?)");
  expect_error_with(base, (const char *[]){"--set=load", NULL}, "--set load: expected KEY=VALUE");
  expect_error_with(base, (const char *[]){"--set==3", NULL}, "--set =3: expected KEY=VALUE");
  expect_error_with(base, (const char *[]){"--set=load=0.5.1", NULL},
                    "--set load=0.5.1: load: expected a number, got '0.5.1'");
  expect_error_with(base, (const char *[]){"--set=capacity_factor=0.5", NULL},
                    "--set capacity_factor=0.5: capacity_factor: must be >= 1 or inf, got 0.5");
  expect_error_with(base, (const char *[]){"--set=rate_rps=-1", NULL},
                    "--set rate_rps=-1: rate_rps: must be between 0 and 1e+12, got -1");
  expect_error_with(base, (const char *[]){"--set=replicates=0", NULL},
                    "--set replicates=0: replicates: expected a whole number from 1 to "
                    "1000000000, got '0'");
  expect_error_with(base, (const char *[]){"--set=name=two\nlines", NULL},
                    "--set name: the value contains a control character");
  expect_error_with(base, (const char *[]){"--set=description=a ;b", NULL},
                    "--set description: the value contains ' ;', which would start a comment in "
                    "the sweep file");
  expect_error_with(base, (const char *[]){"--set=", NULL}, "--set : expected KEY=VALUE");
}

static void test_override_values(void **state) {
  (void)state;
  const char *base = "[grid]\nvnodes = 10, 50\n";
  char arg[300] = "--set=name=";
  size_t n = strlen(arg);
  memset(arg + n, 'x', 250);
  arg[n + 250] = 0;
  expect_error_with(base, (const char *[]){arg, NULL},
                    "--set name: the value has a word too long for a sweep-file line (at most 192 "
                    "characters)");
  /* a long value with spaces wraps onto continuation lines: fine */
  char desc[700] = "--set=description=";
  for (int i = 0; i < 60; i++) strcat(desc, "words ");
  expect_ok_with(base, (const char *[]){desc, NULL});
  expect_error_with(base, (const char *[]){"--grid=vnodes=", NULL},
                    "--grid vnodes=: empty axis (give at least one value)");
  expect_error_with(base, (const char *[]){"--grid=vnodes=10,,20", NULL},
                    "--grid vnodes=10,,20: empty value in the list '10,,20'");
  expect_error_with(base, (const char *[]){"--grid=vnodes=10,1e1", NULL},
                    "--grid vnodes=10,1e1: vnodes: value '1e1' appears twice in the axis");
  expect_error_with(base, (const char *[]){"--grid=replicates=1,2", NULL},
                    "--grid replicates=1,2: 'replicates' is not a scenario setting; use --set "
                    "replicates=...");
  expect_error_with(base, (const char *[]){"--grid=capacity_factr=1,2", NULL},
                    "--grid: unknown setting 'capacity_factr' (did you mean 'capacity_factor'?)");
  expect_error_with(base, (const char *[]){"--grid=surge=100+1\n200+1", NULL},
                    "--grid surge: the value contains a control character");
  /* Cross-field problems blame the override that caused them. */
  expect_error_with(base, (const char *[]){"--set=horizon_ms=1000", NULL},
                    "--set horizon_ms=1000: grid point 0 (vnodes=10): surge: window 2000+500 ends "
                    "after the horizon (horizon_ms = 1000)");
  expect_error_with("[scenario]\nload = 0.5\n", (const char *[]){"--grid=horizon_ms=1000,10000", NULL},
                    "--grid horizon_ms=1000, 10000: grid point 0 (horizon_ms=1000): surge: window "
                    "2000+500 ends after the horizon (horizon_ms = 1000)");
  expect_error_with(base,
                    (const char *[]){"--grid=load=lin(0.1,1,10000)", "--grid=workers=lin(1,1000,1000)",
                                     NULL},
                    "--grid workers=...: workers: its 1000 values take the grid past 10000000 "
                    "points (the most a sweep may have; use fewer values or replicates instead)");
  expect_error_with(base, (const char *[]){"--set=replicates=1000000000", NULL},
                    "t.ini: 2 points x 1000000000 replicates is more than 1000000000 runs");
  /* overrides are trimmed, and the trimmed value is what is stored */
  swp_sweep sw;
  char err[512];
  swp_sweep_init(&sw);
  assert_int_equal(swp_sweep_parse_string(&sw, base, "t.ini", err, sizeof err), 0);
  assert_int_equal(swp_sweep_override_set(&sw, "  name =  spaced out  ", err, sizeof err), 0);
  assert_string_equal(sw.name, "spaced out");
  assert_int_equal(swp_sweep_override_set(&sw, "load= 0.5 ", err, sizeof err), 0);
  assert_string_equal(sw.settings[0].value, "0.5");
  swp_sweep_free(&sw);
}

/* ---- the file name and the line in messages from a real file ---- */

static void test_file_messages(void **state) {
  (void)state;
  char dir[256];
  assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "validation"), 0);
  char path[256], want[512], err[1024];
  tu_path(path, sizeof path, dir, "bad.ini");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("; a comment\n[sweep]\nreplicates = 3\n\n[grid]\nvnodes = 10, 50\ncapacity_factor = 0.9\n",
        f);
  fclose(f);
  swp_sweep sw;
  swp_sweep_init(&sw);
  assert_int_equal(swp_sweep_parse_file(&sw, path, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:7: capacity_factor: must be >= 1 or inf, got 0.9", path);
  assert_string_equal(err, want);
  swp_sweep_free(&sw);

  f = fopen(path, "wb");
  assert_non_null(f);
  fwrite("[sweep]\nname = a\0b\n", 1, 19, f);
  fclose(f);
  swp_sweep_init(&sw);
  assert_int_equal(swp_sweep_parse_file(&sw, path, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s: contains NUL bytes; not a sweep file", path);
  assert_string_equal(err, want);
  swp_sweep_free(&sw);

  swp_sweep_init(&sw);
  assert_int_equal(swp_sweep_parse_file(&sw, dir, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s: cannot read (I/O error)", dir);
  assert_string_equal(err, want);
  swp_sweep_free(&sw);

  assert_int_equal(tu_tmpdir_remove(dir), 0);
}

/* Dead axes (swp_sweep_dead_axes): an axis whose setting cannot change a
 * run at any grid point is named with its line and the reason; an axis
 * live at some point (budget_ratio beside a retry_limiter axis that has
 * token_bucket) is not. The check itself succeeds: result files with such
 * axes still read; list and run refuse them. */
static int dead_axes_of(const char *text, const char *override, char *msg, size_t len) {
  swp_sweep sw;
  swp_sweep_init(&sw);
  char err[1024];
  assert_int_equal(swp_sweep_parse_string(&sw, text, "t.ini", err, sizeof err), 0);
  if (override) assert_int_equal(swp_sweep_override_grid(&sw, override, err, sizeof err), 0);
  assert_int_equal(swp_sweep_check(&sw, err, sizeof err), 0);
  int n = swp_sweep_dead_axes(&sw, msg, len);
  swp_sweep_free(&sw);
  return n;
}

static void test_dead_axes(void **state) {
  (void)state;
  char msg[2048];
  assert_int_equal(dead_axes_of("[scenario]\nretry_limiter = envoy\n[grid]\n"
                                "budget_ratio = 0.01, 0.1, inf\ncapacity_factor = 1.1, 2\n",
                                NULL, msg, sizeof msg),
                   1);
  assert_string_equal(msg, "t.ini:4: budget_ratio: the axis cannot change any run: "
                           "retry_limiter = envoy, and budget_ratio is read by the "
                           "token_bucket limiter only (at every grid point)");
  assert_int_equal(dead_axes_of("[scenario]\nmax_retries = 0\nbackoff = full\n[grid]\n"
                                "backoff_cap_ms = 10, 1000\n",
                                "codel_interval_ms=50,100", msg, sizeof msg),
                   2);
  assert_string_equal(msg, "t.ini:5: backoff_cap_ms: the axis cannot change any run: "
                           "max_retries = 0: no request is retried, so backoff_cap_ms never "
                           "applies (at every grid point)\n"
                           "--grid codel_interval_ms=50, 100: codel_interval_ms: the axis "
                           "cannot change any run: codel_target_ms = inf (controlled-delay "
                           "shedding off), and codel_interval_ms is read only when it sheds "
                           "(at every grid point)");
  /* live at some point: not dead */
  assert_int_equal(dead_axes_of("[grid]\nretry_limiter = envoy, token_bucket\n"
                                "budget_ratio = 0.1, inf\n",
                                NULL, msg, sizeof msg),
                   0);
  assert_string_equal(msg, "");
  assert_int_equal(dead_axes_of("[grid]\nmax_retries = 0, 3\nbackoff = none, full\n", NULL,
                                msg, sizeof msg),
                   0);
  /* the seed study has none */
  swp_sweep sw;
  swp_sweep_init(&sw);
  assert_int_equal(swp_sweep_parse_seed_study(&sw, msg, sizeof msg), 0);
  assert_int_equal(swp_sweep_check(&sw, msg, sizeof msg), 0);
  assert_int_equal(swp_sweep_dead_axes(&sw, msg, sizeof msg), 0);
  swp_sweep_free(&sw);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unknown_sections),  cmocka_unit_test(test_unknown_keys),
      cmocka_unit_test(test_malformed_numbers), cmocka_unit_test(test_out_of_range),
      cmocka_unit_test(test_cross_field),       cmocka_unit_test(test_memory),
      cmocka_unit_test(test_grid_shape),        cmocka_unit_test(test_overrides),
      cmocka_unit_test(test_override_values),   cmocka_unit_test(test_file_messages),
      cmocka_unit_test(test_dead_axes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
