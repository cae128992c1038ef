/*
 * test_config.c — the settings table (engine/config.c): defaults, the
 * get/set round trip of every setting, and the exact messages for bad input.
 *
 * Sweep files, --set and grid axes all go through eng_config_set, so the
 * messages checked here are the ones a user sees; they are compared whole,
 * not by substring, so a reworded or truncated message shows up as a diff.
 * The round trip is table-driven: a new setting is covered without a new
 * test, and its value is compared field by field through
 * eng_config_get_number as well as byte for byte. The rule of which
 * settings are live under the others is checked against the engine's runs.
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

#include "eng.h"

#define CHECK_EQ_DOUBLE(actual, expected, what)                                          \
  do {                                                                                   \
    double a_ = (actual), e_ = (expected);                                               \
    if (!(a_ == e_)) fail_msg("%s: got %.17g, expected %.17g", (what), a_, e_);          \
  } while (0)

/* eng_config_set must fail with exactly `msg` and leave cfg unchanged. */
static void expect_set_error(const char *key, const char *value, const char *msg) {
  eng_config c, before;
  eng_config_defaults(&c);
  before = c;
  char err[512] = "";
  int rc = eng_config_set(&c, key, value, err, sizeof err);
  if (rc != -1) fail_msg("set %s='%s': got rc %d, expected -1 (error '%s')", key, value, rc, msg);
  if (strcmp(err, msg)) fail_msg("set %s='%s':\n  got      \"%s\"\n  expected \"%s\"", key, value, err, msg);
  if (memcmp(&c, &before, sizeof c))
    fail_msg("set %s='%s' failed but changed the configuration", key, value);
}

static void expect_set_ok(eng_config *c, const char *key, const char *value) {
  char err[512] = "";
  if (eng_config_set(c, key, value, err, sizeof err))
    fail_msg("set %s='%s': unexpected error \"%s\"", key, value, err);
}

static void expect_validate_error(const eng_config *c, const char *msg) {
  char err[512] = "";
  int rc = eng_config_validate(c, err, sizeof err);
  if (rc != -1) fail_msg("validate: got rc %d, expected -1 with \"%s\"", rc, msg);
  if (strcmp(err, msg)) fail_msg("validate:\n  got      \"%s\"\n  expected \"%s\"", err, msg);
}

/* ------------------------------------------------------------------------ */

static void test_defaults_are_the_seed_study(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  assert_int_equal(c.shards, 16);
  assert_int_equal(c.workers, 8);
  assert_int_equal(c.service_dist, ENG_SERVICE_EXP);
  CHECK_EQ_DOUBLE(c.service_mean_ms, 5, "service_mean_ms");
  CHECK_EQ_DOUBLE(c.load, 0.7, "load");
  CHECK_EQ_DOUBLE(c.rate_rps, 0, "rate_rps (0: load applies)");
  CHECK_EQ_DOUBLE(c.timeout_ms, 100, "timeout_ms");
  assert_int_equal(c.max_retries, 3);
  CHECK_EQ_DOUBLE(c.tick_ms, 1, "tick_ms");
  CHECK_EQ_DOUBLE(c.horizon_ms, 10000, "horizon_ms");
  assert_int_equal(eng_config_ticks(&c), 10000);
  CHECK_EQ_DOUBLE(c.queue_capacity, 1024, "queue_capacity");
  assert_int_equal(c.surge.count, 1);
  CHECK_EQ_DOUBLE(c.surge.w[0].start_ms, 2000, "surge start");
  CHECK_EQ_DOUBLE(c.surge.w[0].duration_ms, 500, "surge duration");
  CHECK_EQ_DOUBLE(c.surge_factor, 5, "surge_factor");
  assert_int_equal(c.brownout.count, 1);
  CHECK_EQ_DOUBLE(c.brownout.w[0].start_ms, 2000, "brownout start");
  CHECK_EQ_DOUBLE(c.brownout.w[0].duration_ms, 500, "brownout duration");
  CHECK_EQ_DOUBLE(c.brownout_factor, 0, "brownout_factor (stall)");
  assert_int_equal(c.crash.count, 0);
  assert_int_equal(c.outage.count, 0);
  assert_int_equal(c.hot_key.count, 0);
  /* naive client: immediate retries, no budget */
  assert_int_equal(c.backoff, ENG_BACKOFF_NONE);
  assert_true(isinf(c.budget_ratio));
  CHECK_EQ_DOUBLE(c.slo_ms, 1500, "slo_ms");
  /* modelling choices default to what common libraries and
   * servers do; codel_target_ms alone keeps meaning the Fail-at-Scale variant */
  assert_int_equal(c.codel_variant, ENG_CODEL_FAIL_AT_SCALE);
  assert_int_equal(c.shed_reply, ENG_SHED_ERROR);
  assert_int_equal(c.router_load, ENG_ROUTER_LOAD_SENT);
  assert_int_equal(c.brk.breaker_reject, ENG_BREAKER_REJECT_FAIL);
  eng_config old = c;
  expect_set_ok(&old, "codel_target_ms", "5");
  assert_int_equal(old.codel_variant, ENG_CODEL_FAIL_AT_SCALE);
  expect_set_ok(&old, "codel_variant", "rfc8289");
  assert_int_equal(old.codel_variant, ENG_CODEL_RFC8289);
  expect_set_error("codel_variant", "codel", "codel_variant: must be one of fail_at_scale, rfc8289, folly, got 'codel'");
  expect_set_error("shed_reply", "drop", "shed_reply: must be one of error, silent, got 'drop'");
  expect_set_error("router_load", "x", "router_load: must be one of sent, admitted, got 'x'");
  expect_set_error("breaker_reject", "next", "breaker_reject: must be one of fail, retry, got 'next'");
  char buf[64];
  assert_int_equal(eng_config_get(&c, "policy", buf, sizeof buf), 0);
  assert_string_equal(buf, "naive");
  /* derived quantities: 16 x 8 / 5 ms = 25.6 per ms */
  CHECK_EQ_DOUBLE(eng_config_capacity_rps(&c), 25600, "capacity_rps");
  CHECK_EQ_DOUBLE(eng_config_arrival_rps(&c), 0.7 * 25600, "arrival_rps");
  CHECK_EQ_DOUBLE(eng_config_fault_start_ms(&c), 2000, "fault_start_ms");
  CHECK_EQ_DOUBLE(eng_config_fault_clear_ms(&c), 2500, "fault_clear_ms");
  char err[256];
  if (eng_config_validate(&c, err, sizeof err)) fail_msg("defaults do not validate: %s", err);
}

/* Every setting: the text eng_config_get produces is accepted by
 * eng_config_set and gives back the same configuration, byte for byte. Done
 * on the defaults and on a configuration with awkward values in every kind
 * of field (inf, long fractions, several windows, non-default enums). */
static void roundtrip_all(const eng_config *orig, const char *label, int skip_custom) {
  for (size_t i = 0; i < eng_settings_count(); i++) {
    const eng_setting *s = eng_settings_at(i);
    char buf[1024], err[512] = "";
    if (eng_config_get(orig, s->key, buf, sizeof buf))
      fail_msg("%s: eng_config_get(%s) failed", label, s->key);
    if (skip_custom && s->type == ENG_SET_PRESET && !strcmp(buf, "custom")) continue;
    eng_config back = *orig;
    if (eng_config_set(&back, s->key, buf, err, sizeof err))
      fail_msg("%s: %s: get gave '%s', which set rejects: %s", label, s->key, buf, err);
    if (memcmp(&back, orig, sizeof back)) {
      char again[1024];
      eng_config_get(&back, s->key, again, sizeof again);
      fail_msg("%s: %s: get gave '%s', set of it gives '%s' (value %.17g vs %.17g)", label,
               s->key, buf, again, eng_config_get_number(&back, s->key),
               eng_config_get_number(orig, s->key));
    }
  }
}

static void fill_awkward(eng_config *c) {
  eng_config_defaults(c);
  expect_set_ok(c, "tick_ms", "0.1");
  expect_set_ok(c, "horizon_ms", "12345.5");
  expect_set_ok(c, "workers", "3");
  expect_set_ok(c, "service", "lognormal");
  expect_set_ok(c, "service_mean_ms", "0.3333333333333333");
  expect_set_ok(c, "service_sigma", "0.7");
  expect_set_ok(c, "queue_capacity", "inf");
  expect_set_ok(c, "queue_discipline", "adaptive_lifo");
  expect_set_ok(c, "codel_target_ms", "12.25");
  expect_set_ok(c, "deadline_drop", "on");
  expect_set_ok(c, "codel_variant", "rfc8289");
  expect_set_ok(c, "shed_reply", "silent");
  expect_set_ok(c, "router_load", "admitted");
  expect_set_ok(c, "breaker_reject", "retry");
  expect_set_ok(c, "breaker_probes", "1000");
  expect_set_ok(c, "vnodes", "7");
  expect_set_ok(c, "capacity_factor", "inf");
  expect_set_ok(c, "load", "0.1");
  expect_set_ok(c, "rate_rps", "123456.789");
  expect_set_ok(c, "keys", "4000000000000000000");
  expect_set_ok(c, "key_dist", "zipf");
  expect_set_ok(c, "zipf_s", "1.0000001");
  expect_set_ok(c, "timeout_ms", "1e-3");
  expect_set_ok(c, "max_retries", "1000");
  expect_set_ok(c, "backoff", "decorrelated");
  expect_set_ok(c, "budget_ratio", "0.05");
  expect_set_ok(c, "breaker", "next_shard");
  expect_set_ok(c, "surge", "0+1 100+0.5 2000.25+500");
  expect_set_ok(c, "brownout", "none");
  expect_set_ok(c, "crash", "3000+1000");
  expect_set_ok(c, "outage", "5000+10;6000+20");
  expect_set_ok(c, "record_shard_queues", "on");
  expect_set_ok(c, "deadline_ms", "250.5");
  expect_set_ok(c, "deadline_propagation", "on");
  expect_set_ok(c, "retry_on", "rejected+lost+overflow");
  expect_set_ok(c, "hedge_attempts", "3");
  expect_set_ok(c, "hedge_delay_ms", "0.25");
  expect_set_ok(c, "hedge_cancel", "off");
  expect_set_ok(c, "max_requests_per_client", "17");
  expect_set_ok(c, "breaker_halfopen", "failure_rate");
}

static void test_every_setting_roundtrips(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  roundtrip_all(&c, "defaults", 0);
  fill_awkward(&c); /* its policy is "custom": test_policy_custom_roundtrips covers that */
  roundtrip_all(&c, "awkward values", 1);
  expect_set_ok(&c, "policy", "guarded");
  roundtrip_all(&c, "guarded", 0);
}

/* Windows are times in ms like any other: a long study (mentions
 * 600,000 ms horizons) puts windows at times with more than six
 * significant digits, and a fractional ms window must survive too. */
static void test_window_roundtrip_keeps_precision(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "horizon_ms", "3000000");
  expect_set_ok(&c, "surge", "1234567+250.125");
  roundtrip_all(&c, "surge at 1234567 ms", 0);
}

/* A preset has no state of its own; get reports "custom" when neither
 * preset matches. Every other value get reports is accepted by set; set
 * refuses "custom", which names no preset (it ran naive before). */
static void test_policy_custom_roundtrips(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "budget_ratio", "0.2");
  expect_set_ok(&c, "backoff", "equal");
  char buf[64];
  assert_int_equal(eng_config_get(&c, "policy", buf, sizeof buf), 0);
  assert_string_equal(buf, "custom");
  roundtrip_all(&c, "custom policy", 1);
  expect_set_error("policy", "custom",
                   "policy: 'custom' is not a preset (it is how settings changed one by one are "
                   "reported): choose naive or guarded, or set budget_ratio, backoff, "
                   "backoff_base_ms, backoff_cap_ms and deadline_drop themselves");
}

/* Dump every setting in table order and read it into fresh defaults: the
 * result equals the original (what a sweep file writer would rely on). */
static void test_dump_and_reload_in_table_order(void **state) {
  (void)state;
  eng_config c;
  fill_awkward(&c);
  expect_set_ok(&c, "policy", "guarded");
  expect_set_ok(&c, "backoff_cap_ms", "250");
  eng_config d;
  eng_config_defaults(&d);
  for (size_t i = 0; i < eng_settings_count(); i++) {
    const eng_setting *s = eng_settings_at(i);
    char buf[1024], err[512] = "";
    assert_int_equal(eng_config_get(&c, s->key, buf, sizeof buf), 0);
    if (s->type == ENG_SET_PRESET && !strcmp(buf, "custom")) continue; /* see the test above */
    if (eng_config_set(&d, s->key, buf, err, sizeof err))
      fail_msg("reload %s='%s': %s", s->key, buf, err);
  }
  if (memcmp(&c, &d, sizeof c)) {
    for (size_t i = 0; i < eng_settings_count(); i++) {
      const eng_setting *s = eng_settings_at(i);
      char a[1024], b[1024];
      eng_config_get(&c, s->key, a, sizeof a);
      eng_config_get(&d, s->key, b, sizeof b);
      if (strcmp(a, b)) fail_msg("reload: %s is '%s', expected '%s'", s->key, b, a);
    }
    fail_msg("reload: configurations differ outside the settings table");
  }
}

static void test_table_is_consistent(void **state) {
  (void)state;
  size_t n = eng_settings_count();
  assert_true(n > 40);
  assert_null(eng_settings_at(n));
  for (size_t i = 0; i < n; i++) {
    const eng_setting *s = eng_settings_at(i);
    assert_non_null(s->key);
    assert_non_null(s->help);
    assert_non_null(s->group);
    if (eng_settings_find(s->key) != s) fail_msg("key '%s' is not unique or not found", s->key);
    if ((s->type == ENG_SET_ENUM || s->type == ENG_SET_PRESET) && !s->names)
      fail_msg("%s: enum without names", s->key);
    if (s->type != ENG_SET_ENUM && s->type != ENG_SET_PRESET && s->type != ENG_SET_WINDOWS &&
        !(s->min <= s->max))
      fail_msg("%s: bounds %g..%g", s->key, s->min, s->max);
  }
  assert_null(eng_settings_find("no_such_setting"));
}

/* ------------------------------------------------------------------------ */
/* bad input                                                                 */

static void test_unknown_key(void **state) {
  (void)state;
  expect_set_error("capacty_factor", "1.5",
                   "unknown setting 'capacty_factor' (did you mean 'capacity_factor'?)");
  expect_set_error("shard", "4", "unknown setting 'shard' (did you mean 'shards'?)");
  expect_set_error("Load", "0.5", "unknown setting 'Load' (did you mean 'load'?)");
  expect_set_error("bogus", "1",
                   "unknown setting 'bogus' (see 'stormsweep sim --list-settings')");
  expect_set_error("", "1", "unknown setting '' (see 'stormsweep sim --list-settings')");
  assert_string_equal(eng_settings_suggest("timout_ms"), "timeout_ms");
  assert_string_equal(eng_settings_suggest("backof_cap_ms"), "backoff_cap_ms");
  assert_null(eng_settings_suggest("zzzzzzzzzzzz"));
}

static void test_out_of_range(void **state) {
  (void)state;
  expect_set_error("load", "-1", "load: must be between 0 and 1e+06, got -1");
  expect_set_error("rate_rps", "-5", "rate_rps: must be between 0 and 1e+12, got -5");
  expect_set_error("capacity_factor", "0.5", "capacity_factor: must be >= 1 or inf, got 0.5");
  expect_set_error("vnodes", "0", "vnodes: must be between 1 and 65536, got 0");
  expect_set_error("vnodes", "65537", "vnodes: must be between 1 and 65536, got 65537");
  expect_set_error("shards", "0", "shards: must be between 1 and 4096, got 0");
  expect_set_error("shards", "1e10", "shards: must be between 1 and 4096, got 1e10");
  expect_set_error("timeout_ms", "-0.5", "timeout_ms: must be >= 0 or inf, got -0.5");
  expect_set_error("max_retries", "-1", "max_retries: must be between 0 and 1000, got -1");
  expect_set_error("brownout_factor", "1.5", "brownout_factor: must be between 0 and 1, got 1.5");
  expect_set_error("budget_ratio", "-0.1", "budget_ratio: must be >= 0 or inf, got -0.1");
  expect_set_error("tick_ms", "0", "tick_ms: must be between 0.001 and 10000, got 0");
  /* a huge upper bound is only named when it is crossed */
  expect_set_error("keys", "1e19", "keys: must be between 1 and 4e+18, got 1e19");
  expect_set_error("timeout_ms", "1e16", "timeout_ms: must be between 0 and 1e+15 or inf, got 1e16");
  /* the bounds are inclusive */
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "capacity_factor", "1");
  expect_set_ok(&c, "vnodes", "1");
  expect_set_ok(&c, "vnodes", "65536");
  expect_set_ok(&c, "load", "0");
}

static void test_malformed_numbers(void **state) {
  (void)state;
  expect_set_error("load", "abc", "load: expected a number, got 'abc'");
  expect_set_error("load", "1.5.2", "load: expected a number, got '1.5.2'");
  expect_set_error("load", "", "load: expected a number, got ''");
  expect_set_error("load", "   ", "load: expected a number, got '   '");
  expect_set_error("load", "0.5x", "load: expected a number, got '0.5x'");
  expect_set_error("load", "nan", "load: expected a number, got 'nan'");
  expect_set_error("load", "1e999", "load: expected a number, got '1e999'");
  expect_set_error("queue_capacity", "lots", "queue_capacity: expected a number or inf, got 'lots'");
  expect_set_error("shards", "2.5", "shards: expected a whole number, got '2.5'");
  expect_set_error("keys", "10.5", "keys: expected a whole number, got '10.5'");
  expect_set_error("shards", "four", "shards: expected a whole number, got 'four'");
  /* surrounding spaces are fine */
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "load", " 0.5 ");
  CHECK_EQ_DOUBLE(c.load, 0.5, "load");
}

/* inf only where the table allows it (DOUBLE_INF), everywhere else an error. */
static void test_inf_only_where_allowed(void **state) {
  (void)state;
  int allowed = 0;
  for (size_t i = 0; i < eng_settings_count(); i++) {
    const eng_setting *s = eng_settings_at(i);
    if (s->type == ENG_SET_ENUM || s->type == ENG_SET_PRESET || s->type == ENG_SET_WINDOWS ||
        s->type == ENG_SET_TEXT) /* a text setting takes any text ("inf" names a file) */
      continue;
    eng_config c;
    eng_config_defaults(&c);
    char err[512] = "";
    int rc = eng_config_set(&c, s->key, "inf", err, sizeof err);
    if (s->type == ENG_SET_DOUBLE_INF) {
      if (rc) fail_msg("%s=inf rejected: %s", s->key, err);
      if (!isinf(eng_config_get_number(&c, s->key))) fail_msg("%s=inf did not store inf", s->key);
      allowed++;
    } else if (!rc) {
      fail_msg("%s=inf accepted (value %g)", s->key, eng_config_get_number(&c, s->key));
    }
  }
  /* the four that must take inf */
  assert_int_equal(eng_settings_find("queue_capacity")->type, ENG_SET_DOUBLE_INF);
  assert_int_equal(eng_settings_find("capacity_factor")->type, ENG_SET_DOUBLE_INF);
  assert_int_equal(eng_settings_find("budget_ratio")->type, ENG_SET_DOUBLE_INF);
  assert_int_equal(eng_settings_find("codel_target_ms")->type, ENG_SET_DOUBLE_INF);
  assert_true(allowed >= 4);
  expect_set_error("load", "inf", "load: expected a number, got 'inf'");
  expect_set_error("vnodes", "inf", "vnodes: expected a whole number, got 'inf'");
  expect_set_error("capacity_factor", "-inf", "capacity_factor: expected a number or inf, got '-inf'");
}

/* retry_on is a set of failure names: '+', ',', '|' or spaces join them,
 * all and none are words too; it prints with '+' (a value of a grid axis
 * is comma-separated) and reads back what it printed. */
static void test_retry_on_names(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  char buf[256];
  assert_int_equal(c.retry_on, ENG_RETRY_ON_DEFAULT);
  eng_config_get(&c, "retry_on", buf, sizeof buf);
  assert_string_equal(buf, "timeout+rejected+shed+router+breaker+lost");
  expect_set_ok(&c, "retry_on", "rejected");
  assert_int_equal(c.retry_on, 1 << ENG_FAIL_REJECTED);
  expect_set_ok(&c, "retry_on", " shed, rejected | lost ");
  assert_int_equal(c.retry_on, (1 << ENG_FAIL_SHED) | (1 << ENG_FAIL_REJECTED) | (1 << ENG_FAIL_LOST));
  eng_config_get(&c, "retry_on", buf, sizeof buf);
  assert_string_equal(buf, "rejected+shed+lost");
  expect_set_ok(&c, "retry_on", "all");
  assert_int_equal(c.retry_on, ENG_RETRY_ON_ALL);
  eng_config_get(&c, "retry_on", buf, sizeof buf);
  assert_string_equal(buf, "all");
  expect_set_ok(&c, "retry_on", "none");
  assert_int_equal(c.retry_on, 0);
  eng_config_get(&c, "retry_on", buf, sizeof buf);
  assert_string_equal(buf, "none");
  assert_true(eng_config_get_number(&c, "retry_on") == 0);
  expect_set_error("retry_on", "rejected+5xx",
                   "retry_on: '5xx' is not one of timeout, rejected, shed, router, breaker, lost, "
                   "overflow, all or none (join names with '+')");
  expect_set_error("retry_on", " ", "retry_on: expected names joined with '+', all or none, got ' '");
  expect_set_error("retry_on", "Timeout",
                   "retry_on: 'Timeout' is not one of timeout, rejected, shed, router, breaker, "
                   "lost, overflow, all or none (join names with '+')");
  /* "none" is inf where inf is allowed: no deadline, no per-attempt timeout */
  expect_set_ok(&c, "deadline_ms", "none");
  assert_true(isinf(c.deadline_ms));
  expect_set_ok(&c, "deadline_ms", "300");
  expect_set_ok(&c, "timeout_ms", "none");
  assert_true(isinf(c.timeout_ms));
  expect_set_error("hedge_attempts", "9", "hedge_attempts: must be between 1 and 8, got 9");
  expect_set_error("hedge_attempts", "0", "hedge_attempts: must be between 1 and 8, got 0");
  expect_set_error("max_requests_per_client", "0",
                   "max_requests_per_client: must be between 1 and 1e+09 or inf, got 0");
}

/* Combinations that cannot run are refused with the settings named. */
static void test_client_combinations(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "timeout_ms", "inf");
  expect_validate_error(&c, "timeout_ms = inf (no per-attempt timeout) needs a finite "
                            "deadline_ms, or attempts would wait forever");
  expect_set_ok(&c, "deadline_ms", "0.5");
  expect_validate_error(&c, "deadline_ms (0.5) must be at least one tick (tick_ms = 1) or inf");
  expect_set_ok(&c, "deadline_ms", "200");
  char err[256];
  assert_int_equal(eng_config_validate(&c, err, sizeof err), 0);
  expect_set_ok(&c, "max_requests_per_client", "2.5");
  expect_validate_error(&c, "max_requests_per_client: expected a whole number or inf, got 2.5");
  eng_config_defaults(&c);
  expect_set_ok(&c, "backoff", "envoy");
  expect_set_ok(&c, "backoff_base_ms", "0.5");
  expect_validate_error(&c, "backoff_base_ms (0.5) must be at least 1 with backoff = envoy (Envoy "
                            "counts whole milliseconds and needs a base interval above 0)");
  expect_set_ok(&c, "backoff_base_ms", "25");
  expect_set_ok(&c, "backoff_cap_ms", "20");
  expect_validate_error(&c, "backoff_cap_ms (20) must be 0 or at least backoff_base_ms (25) with "
                            "backoff = envoy (Envoy requires max_interval >= base_interval)");
  expect_set_ok(&c, "backoff_cap_ms", "0"); /* cap 0: immediate retries, as for every backoff */
  assert_int_equal(eng_config_validate(&c, err, sizeof err), 0);
}

static void test_enum_values(void **state) {
  (void)state;
  expect_set_error("service", "gamma",
                   "service: must be one of exponential, deterministic, lognormal, empirical, got 'gamma'");
  expect_set_error("backoff", "Full",
                   "backoff: must be one of none, full, equal, decorrelated, grpc, envoy, got 'Full'");
  expect_set_error("policy", "careful", "policy: must be one of naive, guarded, got 'careful'");
  expect_set_error("record_shard_queues", "1",
                   "record_shard_queues: must be one of off, on, got '1'");
  expect_set_error("service", "", "service: must be one of exponential, deterministic, lognormal, empirical, got ''");
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "service", "deterministic");
  assert_int_equal(c.service_dist, ENG_SERVICE_DET);
  expect_set_ok(&c, "breaker", "fail_fast");
  assert_int_equal(c.brk.breaker, ENG_BREAKER_FAIL_FAST);
}

/* An enum value followed by more words is malformed, as "1.5.2" is for a
 * number: "deterministic lognormal" must not quietly mean deterministic. */
static void test_enum_trailing_junk_rejected(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  char err[512] = "";
  int rc = eng_config_set(&c, "service", "deterministic lognormal", err, sizeof err);
  if (rc != -1)
    fail_msg("service='deterministic lognormal' accepted as '%s'",
             c.service_dist == ENG_SERVICE_DET ? "deterministic" : "?");
  eng_config_defaults(&c);
  rc = eng_config_set(&c, "policy", "guarded please", err, sizeof err);
  if (rc != -1) fail_msg("policy='guarded please' accepted (budget_ratio now %g)", c.budget_ratio);
}

static void test_windows_syntax(void **state) {
  (void)state;
  const char *bad_syntax =
      "surge: expected windows \"START+DURATION ...\" in ms (e.g. 2000+500) or none";
  expect_set_error("surge", "2000-500", bad_syntax);
  expect_set_error("surge", "2000", bad_syntax);
  expect_set_error("surge", "2000+", bad_syntax);
  expect_set_error("surge", "+500", bad_syntax);
  expect_set_error("surge", "abc", bad_syntax);
  expect_set_error("surge", "2000+500x", bad_syntax);
  expect_set_error("surge", "2000+500,3000+10", bad_syntax);
  expect_set_error("surge", "-5+10", "surge: window start and duration must be >= 0 ms");
  expect_set_error("outage", "5+-10", "outage: window start and duration must be >= 0 ms");
  expect_set_error("surge", "1e400+10", "surge: window start and duration must be finite numbers of ms");
  expect_set_error("surge", "nan+10", "surge: window start and duration must be finite numbers of ms");
  expect_set_error("crash", "0+1 1+1 2+1 3+1 4+1 5+1 6+1 7+1 8+1", "crash: at most 8 windows");
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "surge", "none");
  assert_int_equal(c.surge.count, 0);
  expect_set_ok(&c, "surge", "  100+50   200.5+25 ;300+1 ");
  assert_int_equal(c.surge.count, 3);
  CHECK_EQ_DOUBLE(c.surge.w[1].start_ms, 200.5, "second window start");
  CHECK_EQ_DOUBLE(c.surge.w[1].duration_ms, 25, "second window duration");
  CHECK_EQ_DOUBLE(c.surge.w[2].start_ms, 300, "third window start");
  expect_set_ok(&c, "crash", "0+1 1+1 2+1 3+1 4+1 5+1 6+1 7+1");
  assert_int_equal(c.crash.count, 8);
}

static void test_validate(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "surge", "9800+500");
  expect_validate_error(&c, "surge: window 9800+500 ends after the horizon (horizon_ms = 10000)");
  /* ending exactly at the horizon is fine */
  expect_set_ok(&c, "surge", "9500+500");
  char err[512];
  if (eng_config_validate(&c, err, sizeof err)) fail_msg("window ending at the horizon: %s", err);

  eng_config_defaults(&c);
  expect_set_ok(&c, "brownout_shard", "16");
  expect_validate_error(&c, "brownout_shard: 16 is not a shard (shards = 16)");
  expect_set_ok(&c, "brownout", "none"); /* no brownout: the index does not matter */
  if (eng_config_validate(&c, err, sizeof err)) fail_msg("brownout_shard without brownout: %s", err);

  eng_config_defaults(&c);
  expect_set_ok(&c, "crash", "1000+100");
  expect_set_ok(&c, "crash_shard", "16");
  expect_validate_error(&c, "crash_shard: 16 is not a shard (shards = 16)");
  expect_set_ok(&c, "crash_shard", "0");
  expect_set_ok(&c, "shards", "1");
  expect_set_ok(&c, "brownout", "none");
  expect_validate_error(&c, "crash: needs at least 2 shards so the crashed shard's keys can move");

  eng_config_defaults(&c);
  expect_set_ok(&c, "breaker_min_calls", "30");
  expect_validate_error(&c, "breaker_min_calls (30) must not exceed breaker_window (20)");

  eng_config_defaults(&c);
  expect_set_ok(&c, "timeout_ms", "0.5");
  expect_validate_error(&c, "timeout_ms (0.5) must be at least one tick (tick_ms = 1)");

  eng_config_defaults(&c);
  expect_set_ok(&c, "tick_ms", "0.001");
  expect_set_ok(&c, "horizon_ms", "1e6");
  expect_validate_error(&c, "horizon_ms / tick_ms must give 1 to 100000000 ticks (got 1e+06 / 0.001)");

  eng_config_defaults(&c);
  expect_set_ok(&c, "key_dist", "zipf");
  expect_set_ok(&c, "zipf_s", "0");
  expect_validate_error(&c, "zipf_s: must be > 0 for key_dist = zipf");

  eng_config_defaults(&c);
  expect_set_ok(&c, "rate_rps", "1e12");
  expect_validate_error(&c, "rate_rps: arrival rate of 5e+09 requests per tick is beyond what a run can simulate (max 1e7)");
  eng_config_defaults(&c);
  expect_set_ok(&c, "load", "1e6");
  expect_validate_error(&c, "load: arrival rate of 1.28e+08 requests per tick is beyond what a run can simulate (max 1e7)");

  /* eng_run_simulate validates too, with the same message */
  eng_config_defaults(&c);
  expect_set_ok(&c, "outage", "9999+2");
  eng_run *run = eng_run_create();
  assert_non_null(run);
  eng_summary sum;
  err[0] = 0;
  int rc = eng_run_simulate(run, &c, 1, &sum, err, sizeof err);
  eng_run_destroy(run);
  assert_int_equal(rc, -1);
  assert_string_equal(err, "outage: window 9999+2 ends after the horizon (horizon_ms = 10000)");
}

static void test_policy_presets(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  expect_set_ok(&c, "backoff_base_ms", "3");
  expect_set_ok(&c, "policy", "guarded");
  CHECK_EQ_DOUBLE(c.budget_ratio, 0.1, "budget_ratio");
  assert_int_equal(c.backoff, ENG_BACKOFF_FULL);
  CHECK_EQ_DOUBLE(c.backoff_base_ms, 10, "backoff_base_ms");
  CHECK_EQ_DOUBLE(c.backoff_cap_ms, 1000, "backoff_cap_ms");
  assert_int_equal(c.deadline_drop, 1); /* guarded sheds abandoned work */
  char buf[64];
  eng_config_get(&c, "policy", buf, sizeof buf);
  assert_string_equal(buf, "guarded");
  /* Without the shedding it is no longer the guarded preset. */
  expect_set_ok(&c, "deadline_drop", "off");
  eng_config_get(&c, "policy", buf, sizeof buf);
  assert_string_equal(buf, "custom");
  expect_set_ok(&c, "deadline_drop", "on");
  CHECK_EQ_DOUBLE(eng_config_get_number(&c, "policy"), 1, "policy as a number");
  /* the rest of the scenario is untouched: the policies differ only on the client */
  eng_config d;
  eng_config_defaults(&d);
  assert_int_equal(c.max_retries, d.max_retries);
  CHECK_EQ_DOUBLE(c.timeout_ms, d.timeout_ms, "timeout_ms");
  expect_set_ok(&c, "policy", "naive");
  assert_true(isinf(c.budget_ratio));
  assert_int_equal(c.backoff, ENG_BACKOFF_NONE);
  assert_int_equal(c.deadline_drop, 0);
  eng_config_get(&c, "policy", buf, sizeof buf);
  assert_string_equal(buf, "naive");
  CHECK_EQ_DOUBLE(eng_config_get_number(&c, "policy"), 0, "policy as a number");
}

static void test_get_number(void **state) {
  (void)state;
  eng_config c;
  eng_config_defaults(&c);
  CHECK_EQ_DOUBLE(eng_config_get_number(&c, "shards"), 16, "shards");
  CHECK_EQ_DOUBLE(eng_config_get_number(&c, "surge"), 2000, "surge (first start)");
  CHECK_EQ_DOUBLE(eng_config_get_number(&c, "service"), ENG_SERVICE_EXP, "service (enum index)");
  assert_true(isnan(eng_config_get_number(&c, "crash")));
  assert_true(isnan(eng_config_get_number(&c, "no_such_key")));
  assert_true(isinf(eng_config_get_number(&c, "budget_ratio")));
  char buf[8];
  assert_int_equal(eng_config_get(&c, "no_such_key", buf, sizeof buf), -1);
}

/* ---- which settings are live (eng_setting_live) ----
 * Checked against the engine itself: on small scenarios that retry, hedge,
 * shed and fail, every setting the rule calls dead is given other values,
 * and each run must come out the same, seed for seed (the summary and every
 * per-tick metric; only the budget_tokens trace may differ where
 * max_retries = 0 leaves a bucket filling that nothing spends). A rule that
 * wrongly called a setting dead would refuse a sweep axis that matters. */

/* Small scenarios under which many settings are dead. */
static const char *const bases[] = {
    "",
    "retry_limiter=envoy budget_ratio=0.1 backoff=full",
    "max_retries=0 backoff=full budget_ratio=0.1",
    "max_retries=0 retry_limiter=grpc",
    "max_retries=0 retry_limiter=finagle",
    "max_retries=0 retry_limiter=aws",
    "max_retries=0 retry_limiter=envoy",
    "backoff=full backoff_cap_ms=0",
    "backoff=decorrelated",
    "backoff=envoy",
    "rate_rps=5000 deadline_ms=300 retry_on=timeout+rejected",
    "client_model=closed concurrency=20 think_ms=5",
    "policy=guarded breaker=fail_fast queue_discipline=lifo service=lognormal",
    "deadline_ms=300 deadline_drop=on hedge_attempts=1",
    "key_dist=zipf crash=800+300 surge=none",
};

static void apply(eng_config *c, const char *words) {
  char buf[512], err[256];
  snprintf(buf, sizeof buf, "%s", words);
  for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
    char *eq = strchr(tok, '=');
    assert_non_null(eq);
    *eq = 0;
    if (eng_config_set(c, tok, eq + 1, err, sizeof err)) fail_msg("%s", err);
  }
}

static void base_config(eng_config *c, const char *words) {
  eng_config_defaults(c);
  apply(c, "shards=4 workers=4 clients=8 horizon_ms=3000 surge=800+300 brownout=800+300 "
           "warmup_ms=200 baseline_ms=500 trend_ms=500 load=0.8");
  apply(c, words);
}

/* Other values to try for s: the bounds, and a few in between. */
static size_t alternatives(const eng_setting *s, const eng_config *c, char (*out)[64]) {
  size_t n = 0;
  char cur[64];
  eng_config_get(c, s->key, cur, sizeof cur);
  if (s->type == ENG_SET_ENUM) {
    for (size_t i = 0; s->names[i]; i++)
      if (strcmp(s->names[i], cur)) snprintf(out[n++], 64, "%s", s->names[i]);
    return n;
  }
  if (s->type == ENG_SET_WINDOWS || s->type == ENG_SET_FLAGS || s->type == ENG_SET_PRESET)
    return 0;
  double v = eng_config_get_number(c, s->key);
  double cand[] = {s->min, s->min + 1, isfinite(v) ? 2 * v + 1 : 1, isfinite(v) ? v / 3 : 2,
                   fmin(s->max, 50), fmin(s->max, 1000)};
  for (size_t i = 0; i < sizeof cand / sizeof *cand; i++) {
    double x = fmax(s->min, fmin(s->max, cand[i]));
    if (s->type == ENG_SET_INT || s->type == ENG_SET_INT64) x = floor(x);
    if (x == v) continue;
    snprintf(out[n++], 64, "%.17g", x);
  }
  if (s->type == ENG_SET_DOUBLE_INF && !isinf(v)) snprintf(out[n++], 64, "inf");
  return n;
}

typedef struct outcome {
  eng_summary sum;
  int32_t *metrics;
  int32_t ticks;
} outcome;

static void simulate(eng_run *run, const eng_config *c, uint64_t seed, outcome *o) {
  char err[256];
  if (eng_run_simulate(run, c, seed, &o->sum, err, sizeof err)) fail_msg("simulate: %s", err);
  o->ticks = eng_run_ticks(run);
  o->metrics = malloc((size_t)o->ticks * ENG_M_COUNT * sizeof *o->metrics);
  assert_non_null(o->metrics);
  for (int m = 0; m < ENG_M_COUNT; m++)
    memcpy(o->metrics + (size_t)m * (size_t)o->ticks, eng_run_metric(run, m),
           (size_t)o->ticks * sizeof *o->metrics);
}

/* The two runs behave the same (the budget's own trace aside). */
static int same(const outcome *a, const outcome *b) {
  if (memcmp(&a->sum, &b->sum, sizeof a->sum) || a->ticks != b->ticks) return 0;
  for (int m = 0; m < ENG_M_COUNT; m++) {
    if (m == ENG_M_BUDGET_TOKENS) continue;
    if (memcmp(a->metrics + (size_t)m * (size_t)a->ticks, b->metrics + (size_t)m * (size_t)b->ticks,
               (size_t)a->ticks * sizeof *a->metrics))
      return 0;
  }
  return 1;
}

static void test_dead_settings_change_nothing(void **state) {
  (void)state;
  eng_run *run = eng_run_create();
  assert_non_null(run);
  size_t checked = 0;
  for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
    eng_config c;
    base_config(&c, bases[b]);
    char err[256];
    if (eng_config_validate(&c, err, sizeof err)) fail_msg("base '%s': %s", bases[b], err);
    for (uint64_t seed = 1; seed <= 1; seed++) {
      outcome ref;
      simulate(run, &c, seed, &ref);
      for (size_t i = 0; i < eng_settings_count(); i++) {
        const eng_setting *s = eng_settings_at(i);
        char why[256];
        if (eng_setting_live(&c, s->key, why, sizeof why)) continue;
        assert_true(strstr(why, s->key) || strchr(why, '='));
        char alt[16][64];
        size_t n = alternatives(s, &c, alt);
        for (size_t k = 0; k < n && k < 3; k++) {
          eng_config d = c;
          if (eng_config_set(&d, s->key, alt[k], err, sizeof err)) continue;
          if (eng_config_validate(&d, err, sizeof err)) continue;
          /* the value must not revive it (a dead setting stays dead) */
          char why2[256];
          if (eng_setting_live(&d, s->key, why2, sizeof why2)) continue;
          outcome o;
          simulate(run, &d, seed, &o);
          if (!same(&ref, &o))
            fail_msg("base '%s' seed %llu: %s = %s changed the run, yet the rule says: %s",
                     bases[b], (unsigned long long)seed, s->key, alt[k], why);
          free(o.metrics);
          checked++;
        }
      }
      free(ref.metrics);
    }
  }
  print_message("%zu runs with a dead setting changed: all identical\n", checked);
  assert_true(checked > 200);
  eng_run_destroy(run);
}

/* The cases a sweep meets most, with their reasons. */
static void test_reasons(void **state) {
  (void)state;
  eng_config c;
  char why[256];
  base_config(&c, "retry_limiter=envoy");
  assert_int_equal(eng_setting_live(&c, "budget_ratio", why, sizeof why), 0);
  assert_string_equal(why,
                      "retry_limiter = envoy, and budget_ratio is read by the token_bucket "
                      "limiter only");
  assert_int_equal(eng_setting_live(&c, "envoy_budget_percent", why, sizeof why), 1);
  base_config(&c, "max_retries=0 backoff=full");
  assert_int_equal(eng_setting_live(&c, "backoff_cap_ms", why, sizeof why), 0);
  assert_string_equal(why, "max_retries = 0: no request is retried, so backoff_cap_ms never "
                           "applies");
  base_config(&c, "");
  assert_int_equal(eng_setting_live(&c, "codel_interval_ms", why, sizeof why), 0);
  assert_non_null(strstr(why, "codel_target_ms = inf"));
  assert_int_equal(eng_setting_live(&c, "capacity_factor", why, sizeof why), 1);
  assert_int_equal(eng_setting_live(&c, "budget_ratio", why, sizeof why), 1);
  assert_int_equal(eng_setting_live(&c, "no_such_setting", why, sizeof why), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults_are_the_seed_study),
      cmocka_unit_test(test_every_setting_roundtrips),
      cmocka_unit_test(test_window_roundtrip_keeps_precision),
      cmocka_unit_test(test_policy_custom_roundtrips),
      cmocka_unit_test(test_dump_and_reload_in_table_order),
      cmocka_unit_test(test_table_is_consistent),
      cmocka_unit_test(test_unknown_key),
      cmocka_unit_test(test_out_of_range),
      cmocka_unit_test(test_malformed_numbers),
      cmocka_unit_test(test_inf_only_where_allowed),
      cmocka_unit_test(test_enum_values),
      cmocka_unit_test(test_retry_on_names),
      cmocka_unit_test(test_client_combinations),
      cmocka_unit_test(test_enum_trailing_junk_rejected),
      cmocka_unit_test(test_windows_syntax),
      cmocka_unit_test(test_validate),
      cmocka_unit_test(test_policy_presets),
      cmocka_unit_test(test_get_number),
      cmocka_unit_test(test_reasons),
      cmocka_unit_test(test_dead_settings_change_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
