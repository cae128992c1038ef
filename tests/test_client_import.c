/*
 * test_client_import.c — the --client importer (sweeps/client_import.c):
 * the exact (setting, value, source field) list each shipped example and a
 * few edge cases map to, the order it is applied in, and that no prefix of a
 * valid file crashes it or yields an error without the file's name.
 *
 * The list is compared whole, so a setting that moves, changes value or
 * loses its source shows up as a diff. Applying the list end to end needs
 * the client limiter settings (retry_limiter, backoff_multiplier, ...) from
 * issue 12's other half; without them those tests are skipped, with a
 * message saying so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client_import.h"
#include "eng.h"

typedef struct want {
  const char *key, *value, *source;
} want;

static void expect_map(const swp_client_map *m, const want *w, size_t n) {
  for (size_t i = 0; i < m->n || i < n; i++) {
    if (i >= m->n) fail_msg("entry %zu missing: want %s = %s from %s", i, w[i].key, w[i].value,
                            w[i].source);
    if (i >= n) fail_msg("extra entry %zu: %s = %s from %s", i, m->e[i].key, m->e[i].value,
                         m->e[i].source);
    if (strcmp(m->e[i].key, w[i].key) || strcmp(m->e[i].value, w[i].value) ||
        strcmp(m->e[i].source, w[i].source))
      fail_msg("entry %zu:\n  got  %s = %s from %s\n  want %s = %s from %s", i, m->e[i].key,
               m->e[i].value, m->e[i].source, w[i].key, w[i].value, w[i].source);
  }
}

static int parse(const char *text, swp_client_map *m, char *err, size_t errlen) {
  return swp_client_parse("t", text, strlen(text), m, err, errlen);
}

static int has_note(const swp_client_map *m, const char *text) {
  for (size_t i = 0; i < m->n_notes; i++)
    if (strstr(m->notes[i], text)) return 1;
  return 0;
}

static char *slurp(const char *rel, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", STORMSWEEP_SOURCE_DIR, rel);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *buf = malloc(1 << 16);
  assert_non_null(buf);
  *len = fread(buf, 1, (1 << 16) - 1, f);
  buf[*len] = 0;
  fclose(f);
  return buf;
}

static void test_grpc_example(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/grpc-service-config.json", STORMSWEEP_SOURCE_DIR);
  if (swp_client_load(path, &m, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(m.kind, SWP_CLIENT_GRPC);
  static const want w[] = {
      {"max_retries", "3", "methodConfig[0].retryPolicy.maxAttempts"},
      {"backoff", "full",
       "(gRPC waits U(0, min(initialBackoff*mult^(n-1), maxBackoff)) before retry n)"},
      {"backoff_base_ms", "10", "methodConfig[0].retryPolicy.initialBackoff"},
      {"backoff_cap_ms", "1000", "methodConfig[0].retryPolicy.maxBackoff"},
      {"backoff_multiplier", "2", "methodConfig[0].retryPolicy.backoffMultiplier"},
      {"timeout_ms", "100", "methodConfig[0].retryPolicy.perAttemptRecvTimeout"},
      {"retry_limiter", "grpc", "(retryThrottling is present)"},
      {"grpc_max_tokens", "10", "retryThrottling.maxTokens"},
      {"grpc_token_ratio", "0.1", "retryThrottling.tokenRatio"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_true(has_note(&m, "methodConfig[0].timeout: ignored: perAttemptRecvTimeout"));
  assert_true(has_note(&m, "retryableStatusCodes: not modelled"));
}

static void test_envoy_example(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  size_t len;
  char *text = slurp("examples/envoy-route.yaml", &len);
  if (swp_client_parse("envoy-route.yaml", text, len, &m, err, sizeof err)) fail_msg("%s", err);
  free(text);
  assert_int_equal(m.kind, SWP_CLIENT_ENVOY);
  static const want w[] = {
      {"max_retries", "3", "retry_policy.num_retries"},
      {"timeout_ms", "100", "retry_policy.per_try_timeout"},
      {"backoff", "full", "(Envoy's fully jittered exponential back-off)"},
      {"backoff_base_ms", "25", "retry_policy.retry_back_off.base_interval"},
      {"backoff_cap_ms", "250", "retry_policy.retry_back_off.max_interval"},
      {"backoff_multiplier", "2", "(Envoy doubles the back-off range per retry)"},
      {"retry_limiter", "envoy", "(retry_budget is present)"},
      {"envoy_budget_percent", "20", "circuit_breakers.thresholds[0].retry_budget.budget_percent.value"},
      {"envoy_min_retry_concurrency", "3",
       "circuit_breakers.thresholds[0].retry_budget.min_retry_concurrency"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
}

/* The same policy in protobuf JSON with camelCase names, inside a route
 * entry, maps to the same values; sources use the file's spelling. */
static void test_envoy_json_camel(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  const char *text =
      "{\"match\": {\"prefix\": \"/\"}, \"route\": {\"cluster\": \"kv\", \"retryPolicy\": "
      "{\"retryOn\": \"5xx\", \"numRetries\": 2, \"perTryTimeout\": \"0.250s\", "
      "\"retryBackOff\": {\"baseInterval\": \"0.010s\"}}},"
      " \"circuitBreakers\": {\"thresholds\": [{\"priority\": \"HIGH\", \"maxRetries\": 9},"
      " {\"maxRetries\": 5}]}}";
  if (parse(text, &m, err, sizeof err)) fail_msg("%s", err);
  static const want w[] = {
      {"max_retries", "2", "route.retryPolicy.numRetries"},
      {"timeout_ms", "250", "route.retryPolicy.perTryTimeout"},
      {"backoff", "full", "(Envoy's fully jittered exponential back-off)"},
      {"backoff_base_ms", "10", "route.retryPolicy.retryBackOff.baseInterval"},
      {"backoff_cap_ms", "100", "(max_interval not given: Envoy's default 10 x base_interval)"},
      {"backoff_multiplier", "2", "(Envoy doubles the back-off range per retry)"},
      {"retry_limiter", "envoy",
       "(no retry_budget: the max_retries circuit breaker caps concurrent retries)"},
      {"envoy_budget_percent", "0", "(no retry_budget)"},
      {"envoy_min_retry_concurrency", "5", "circuitBreakers.thresholds[1].maxRetries"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_true(has_note(&m, "circuitBreakers.thresholds[0]: HIGH priority"));
}

/* Every Envoy default the docs state, when the file states nothing else. */
static void test_envoy_defaults(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  if (parse("retry_policy:\n  retry_on: 5xx\n", &m, err, sizeof err)) fail_msg("%s", err);
  static const want w[] = {
      {"max_retries", "1", "(num_retries not given: Envoy's default 1)"},
      {"backoff", "full", "(Envoy's fully jittered exponential back-off)"},
      {"backoff_base_ms", "25", "(no retry_back_off: Envoy's default 25 ms)"},
      {"backoff_cap_ms", "250", "(no retry_back_off: Envoy's default 10 x base_interval)"},
      {"backoff_multiplier", "2", "(Envoy doubles the back-off range per retry)"},
      {"retry_limiter", "envoy",
       "(no retry_budget: Envoy's max_retries circuit breaker caps concurrent retries)"},
      {"envoy_budget_percent", "0", "(no retry_budget)"},
      {"envoy_min_retry_concurrency", "3",
       "(no max_retries threshold: Envoy's default 3 concurrent retries)"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  /* a budget with no fields: Envoy's 20 % and 3 */
  if (parse("retry_policy: {num_retries: 4}\ncircuit_breakers:\n  thresholds:\n"
            "  - retry_budget: {}\n",
            &m, err, sizeof err))
    fail_msg("%s", err);
  assert_int_equal(m.n, 8);
  assert_string_equal(m.e[5].key, "retry_limiter");
  assert_string_equal(m.e[6].key, "envoy_budget_percent");
  assert_string_equal(m.e[6].value, "20");
  assert_string_equal(m.e[7].key, "envoy_min_retry_concurrency");
  assert_string_equal(m.e[7].value, "3");
}

/* gRPC without retryThrottling retries without a budget; maxAttempts above
 * 5 is capped at 5 as gRPC does, with a note; methodConfig.timeout is used
 * when no per-attempt timeout is given; a second retryPolicy is ignored. */
static void test_grpc_edges(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  const char *text =
      "{\"methodConfig\": [{\"timeout\": \"2.5s\", \"retryPolicy\": {\"maxAttempts\": 9, "
      "\"initialBackoff\": \"0.000500s\", \"maxBackoff\": \"30s\", \"backoffMultiplier\": 1.5,"
      " \"retryableStatusCodes\": [14, \"unavailable\"], \"maxAttempt\": 3}},"
      " {\"retryPolicy\": {\"maxAttempts\": 2}}]}";
  if (parse(text, &m, err, sizeof err)) fail_msg("%s", err);
  static const want w[] = {
      {"max_retries", "4", "methodConfig[0].retryPolicy.maxAttempts"},
      {"backoff", "full",
       "(gRPC waits U(0, min(initialBackoff*mult^(n-1), maxBackoff)) before retry n)"},
      {"backoff_base_ms", "0.5", "methodConfig[0].retryPolicy.initialBackoff"},
      {"backoff_cap_ms", "30000", "methodConfig[0].retryPolicy.maxBackoff"},
      {"backoff_multiplier", "1.5", "methodConfig[0].retryPolicy.backoffMultiplier"},
      {"timeout_ms", "2500", "methodConfig[0].timeout"},
      {"retry_limiter", "token_bucket", "(no retryThrottling: gRPC retries without a budget)"},
      {"budget_ratio", "inf", "(no retryThrottling: no retry budget)"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_true(has_note(&m, "maxAttempts: 9 capped at 5"));
  assert_true(has_note(&m, "retryPolicy.maxAttempt: unknown field, ignored"));
  assert_true(has_note(&m, "methodConfig[1].retryPolicy: ignored: only the first"));
  assert_true(has_note(&m, "covers the whole call"));
}

/* Applying goes through eng_config_set in list order, and a value the
 * engine refuses is reported with the field it came from. */
static void test_apply_order_and_errors(void **state) {
  (void)state;
  swp_client_map m;
  memset(&m, 0, sizeof m);
  m.n = 3;
  snprintf(m.e[0].key, sizeof m.e[0].key, "max_retries");
  snprintf(m.e[0].value, sizeof m.e[0].value, "7");
  snprintf(m.e[1].key, sizeof m.e[1].key, "policy");
  snprintf(m.e[1].value, sizeof m.e[1].value, "guarded");
  snprintf(m.e[2].key, sizeof m.e[2].key, "backoff_base_ms");
  snprintf(m.e[2].value, sizeof m.e[2].value, "42");
  eng_config cfg;
  eng_config_defaults(&cfg);
  char err[512];
  if (swp_client_apply(&m, "f.json", &cfg, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(cfg.max_retries, 7);
  assert_int_equal(cfg.backoff, ENG_BACKOFF_FULL); /* from the preset, applied second */
  assert_true(cfg.backoff_base_ms == 42);          /* applied after the preset: wins */
  /* num_retries the engine cannot take: named by its field */
  if (parse("retry_policy:\n  num_retries: 5000\n", &m, err, sizeof err)) fail_msg("%s", err);
  eng_config_defaults(&cfg);
  assert_int_equal(swp_client_apply(&m, "envoy.yaml", &cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, "envoy.yaml: retry_policy.num_retries: max_retries"));
}

/* End to end: both examples apply to the seed scenario and set what the
 * list says. Needs issue 12's limiter settings. */
static void test_apply_end_to_end(void **state) {
  (void)state;
  if (!eng_settings_find("retry_limiter") || !eng_settings_find("backoff_multiplier")) {
    print_message("SKIP: this build has no retry_limiter/backoff_multiplier settings (issue 12's "
                  "limiter branch); the end-to-end apply runs once both are merged\n");
    skip();
  }
  static const char *const files[] = {"examples/grpc-service-config.json",
                                      "examples/envoy-route.yaml"};
  for (size_t f = 0; f < 2; f++) {
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s", STORMSWEEP_SOURCE_DIR, files[f]);
    swp_client_map m;
    if (swp_client_load(path, &m, err, sizeof err)) fail_msg("%s", err);
    assert_true(swp_client_keys_known(&m));
    eng_config cfg;
    eng_config_defaults(&cfg);
    if (swp_client_apply(&m, path, &cfg, err, sizeof err)) fail_msg("%s", err);
    for (size_t i = 0; i < m.n; i++) {
      /* each entry's value is what the config holds, unless a later entry
       * of the same key replaced it */
      int later = 0;
      for (size_t j = i + 1; j < m.n; j++) later |= !strcmp(m.e[j].key, m.e[i].key);
      if (later) continue;
      eng_config one;
      eng_config_defaults(&one);
      assert_int_equal(eng_config_set(&one, m.e[i].key, m.e[i].value, err, sizeof err), 0);
      char got[256], want_v[256];
      eng_config_get(&cfg, m.e[i].key, got, sizeof got);
      eng_config_get(&one, m.e[i].key, want_v, sizeof want_v);
      if (strcmp(got, want_v)) fail_msg("%s: %s = %s, want %s", files[f], m.e[i].key, got, want_v);
    }
    assert_int_equal(eng_config_validate(&cfg, err, sizeof err), 0);
  }
}

/* Every prefix of each example either parses or fails with a message that
 * starts with the file's name (what a fuzzer's shortest inputs look like). */
static void test_prefixes(void **state) {
  (void)state;
  static const char *const files[] = {"examples/grpc-service-config.json",
                                      "examples/envoy-route.yaml"};
  for (size_t f = 0; f < 2; f++) {
    size_t len;
    char *text = slurp(files[f], &len);
    for (size_t n = 0; n <= len; n++) {
      char *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees any over-read */
      assert_non_null(copy);
      memcpy(copy, text, n);
      swp_client_map m;
      char err[512] = "";
      if (swp_client_parse("cut", copy, n, &m, err, sizeof err)) {
        if (strncmp(err, "cut: ", 5)) fail_msg("prefix %zu of %s: '%s'", n, files[f], err);
      }
      free(copy);
    }
    free(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grpc_example),
      cmocka_unit_test(test_envoy_example),
      cmocka_unit_test(test_envoy_json_camel),
      cmocka_unit_test(test_envoy_defaults),
      cmocka_unit_test(test_grpc_edges),
      cmocka_unit_test(test_apply_order_and_errors),
      cmocka_unit_test(test_apply_end_to_end),
      cmocka_unit_test(test_prefixes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
