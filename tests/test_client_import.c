/*
 * test_client_import.c — the --client importer (sweeps/client_import.c):
 * the exact (setting, value, source field) list each shipped example and a
 * few edge cases map to, the order it is applied in, and that no prefix of a
 * valid file crashes it or yields an error without the file's name.
 *
 * The list is compared whole, so a setting that moves, changes value or
 * loses its source shows up as a diff. Applying the list end to end needs
 * the client limiter settings (retry_limiter, backoff_multiplier, ...); without them those tests
 * are skipped, with a message saying so.
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
      {"backoff", "grpc",
       "(gRPC waits min(initialBackoff*mult^(n-1), maxBackoff) x U(0.8, 1.2) before retry n)"},
      {"backoff_base_ms", "10", "methodConfig[0].retryPolicy.initialBackoff"},
      {"backoff_cap_ms", "1000", "methodConfig[0].retryPolicy.maxBackoff"},
      {"backoff_multiplier", "2", "methodConfig[0].retryPolicy.backoffMultiplier"},
      {"retry_on", "rejected+shed+router+lost", "methodConfig[0].retryPolicy.retryableStatusCodes"},
      {"deadline_ms", "500", "methodConfig[0].timeout"},
      {"deadline_propagation", "on",
       "(gRPC sends the call's remaining deadline with every attempt (grpc-timeout))"},
      {"timeout_ms", "none",
       "(no per-attempt timeout: an attempt waits for the call's deadline, which is never "
       "retried)"},
      {"retry_limiter", "grpc", "(retryThrottling is present)"},
      {"grpc_max_tokens", "10", "retryThrottling.maxTokens"},
      {"grpc_token_ratio", "0.1", "retryThrottling.tokenRatio"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_string_equal(m.e[5].raw, "UNAVAILABLE,DEADLINE_EXCEEDED");
  /* perAttemptRecvTimeout without hedging on the channel: C-core ignores it */
  assert_true(has_note(&m, "perAttemptRecvTimeout: not honoured"));
  assert_true(has_note(&m, "DEADLINE_EXCEEDED retries nothing"));
  assert_true(has_note(&m, "not retried: an attempt that times out"));
  assert_true(has_note(&m, "methodConfig[0].name: the methods this entry applies to"));
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
      {"retry_on", "timeout+rejected+shed+lost", "retry_policy.retry_on"},
      {"backoff", "envoy", "(Envoy's jittered exponential back-off, whole ms)"},
      {"backoff_base_ms", "25", "retry_policy.retry_back_off.base_interval"},
      {"backoff_cap_ms", "250", "retry_policy.retry_back_off.max_interval"},
      {"deadline_ms", "15000", "(no route timeout: Envoy's default 15 s)"},
      {"timeout_ms", "100", "retry_policy.per_try_timeout"},
      {"retry_limiter", "envoy", "(retry_budget is present)"},
      {"envoy_budget_percent", "20", "circuit_breakers.thresholds[0].retry_budget.budget_percent.value"},
      {"envoy_min_retry_concurrency", "3",
       "circuit_breakers.thresholds[0].retry_budget.min_retry_concurrency"},
      {"max_requests_per_client", "1024",
       "(max_requests not given: Envoy's default 1024 requests in flight)"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_string_equal(m.e[1].raw, "5xx,reset,connect-failure");
  assert_true(has_note(&m, "5xx retries timeout+rejected+shed+lost; reset retries lost"));
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
      {"retry_on", "timeout+rejected+shed+lost", "route.retryPolicy.retryOn"},
      {"backoff", "envoy", "(Envoy's jittered exponential back-off, whole ms)"},
      {"backoff_base_ms", "10", "route.retryPolicy.retryBackOff.baseInterval"},
      {"backoff_cap_ms", "100", "(max_interval not given: Envoy's default 10 x base_interval)"},
      {"deadline_ms", "15000", "(no route timeout: Envoy's default 15 s)"},
      {"timeout_ms", "250", "route.retryPolicy.perTryTimeout"},
      {"retry_limiter", "envoy",
       "(no retry_budget: the max_retries circuit breaker caps concurrent retries)"},
      {"envoy_budget_percent", "0", "(no retry_budget)"},
      {"envoy_min_retry_concurrency", "5", "circuitBreakers.thresholds[1].maxRetries"},
      {"max_requests_per_client", "1024",
       "(max_requests not given: Envoy's default 1024 requests in flight)"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_true(has_note(&m, "circuitBreakers.thresholds[0]: HIGH priority"));
  assert_true(has_note(&m, "match: which requests the route takes"));
}

/* Every Envoy default the docs state, when the file states nothing else. */
static void test_envoy_defaults(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  if (parse("retry_policy:\n  retry_on: 5xx\n", &m, err, sizeof err)) fail_msg("%s", err);
  static const want w[] = {
      {"max_retries", "1", "(num_retries not given: Envoy's default 1)"},
      {"retry_on", "timeout+rejected+shed+lost", "retry_policy.retry_on"},
      {"backoff", "envoy", "(Envoy's jittered exponential back-off, whole ms)"},
      {"backoff_base_ms", "25", "(no retry_back_off: Envoy's default 25 ms)"},
      {"backoff_cap_ms", "250", "(no retry_back_off: Envoy's default 10 x base_interval)"},
      {"deadline_ms", "15000", "(no route timeout: Envoy's default 15 s)"},
      {"timeout_ms", "none", "(no per_try_timeout: an attempt waits for the route timeout)"},
      {"retry_limiter", "envoy",
       "(no retry_budget: Envoy's max_retries circuit breaker caps concurrent retries)"},
      {"envoy_budget_percent", "0", "(no retry_budget)"},
      {"envoy_min_retry_concurrency", "3",
       "(no max_retries threshold: Envoy's default 3 concurrent retries)"},
      {"max_requests_per_client", "1024",
       "(no max_requests threshold: Envoy's default 1024 requests in flight)"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  /* without retry_on Envoy retries nothing */
  if (parse("retry_policy: {num_retries: 2}\n", &m, err, sizeof err)) fail_msg("%s", err);
  assert_string_equal(m.e[1].key, "retry_on");
  assert_string_equal(m.e[1].value, "none");
  /* a budget with no fields: Envoy's 20 % and 3 */
  if (parse("retry_policy: {num_retries: 4}\ncircuit_breakers:\n  thresholds:\n"
            "  - retry_budget: {}\n",
            &m, err, sizeof err))
    fail_msg("%s", err);
  assert_int_equal(m.n, 11);
  assert_string_equal(m.e[7].key, "retry_limiter");
  assert_string_equal(m.e[8].key, "envoy_budget_percent");
  assert_string_equal(m.e[8].value, "20");
  assert_string_equal(m.e[9].key, "envoy_min_retry_concurrency");
  assert_string_equal(m.e[9].value, "3");
}

/* gRPC without retryThrottling retries without a budget; maxAttempts above
 * 5 is capped at 5 as gRPC does, with a note; a second retryPolicy is
 * ignored; without methodConfig.timeout the scenario's timeout_ms stays. */
static void test_grpc_edges(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  const char *text =
      "{\"methodConfig\": [{\"retryPolicy\": {\"maxAttempts\": 9, "
      "\"initialBackoff\": \"0.000500s\", \"maxBackoff\": \"30s\", \"backoffMultiplier\": 1.5,"
      " \"retryableStatusCodes\": [14, \"unavailable\", \"RESOURCE_EXHAUSTED\", \"ABORTED\"]}},"
      " {\"retryPolicy\": {\"maxAttempts\": 2}}]}";
  if (parse(text, &m, err, sizeof err)) fail_msg("%s", err);
  static const want w[] = {
      {"max_retries", "4", "methodConfig[0].retryPolicy.maxAttempts"},
      {"backoff", "grpc",
       "(gRPC waits min(initialBackoff*mult^(n-1), maxBackoff) x U(0.8, 1.2) before retry n)"},
      {"backoff_base_ms", "0.5", "methodConfig[0].retryPolicy.initialBackoff"},
      {"backoff_cap_ms", "30000", "methodConfig[0].retryPolicy.maxBackoff"},
      {"backoff_multiplier", "1.5", "methodConfig[0].retryPolicy.backoffMultiplier"},
      {"retry_on", "rejected+shed+router+lost", "methodConfig[0].retryPolicy.retryableStatusCodes"},
      {"retry_limiter", "token_bucket", "(no retryThrottling: gRPC retries without a budget)"},
      {"budget_ratio", "inf", "(no retryThrottling: no retry budget)"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_string_equal(m.e[5].raw, "UNAVAILABLE,RESOURCE_EXHAUSTED,ABORTED");
  assert_true(has_note(&m, "maxAttempts: 9 capped at 5"));
  assert_true(has_note(&m, "methodConfig[1].retryPolicy: ignored: only the first"));
  assert_true(has_note(&m, "methodConfig[0].timeout: not given: a gRPC call without a deadline"));
  assert_true(has_note(&m, "ABORTED retries nothing"));
  assert_true(has_note(&m, "RESOURCE_EXHAUSTED retries rejected+shed"));
}

/* Which failures each gRPC status code and each Envoy retry_on condition
 * retries (docs/client-import.md's tables). */
static void test_retry_on_tables(void **state) {
  (void)state;
  static const struct {
    const char *codes, *want;
  } g[] = {
      {"\"UNAVAILABLE\"", "rejected+shed+router+lost"},
      {"\"RESOURCE_EXHAUSTED\"", "rejected+shed"},
      {"\"DEADLINE_EXCEEDED\"", "none"},
      {"\"CANCELLED\", \"INTERNAL\", 10", "none"},
      {"4, 14", "rejected+shed+router+lost"},
  };
  for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
    char text[512], err[512];
    swp_client_map m;
    snprintf(text, sizeof text,
             "{\"methodConfig\": [{\"timeout\": \"1s\", \"retryPolicy\": {\"maxAttempts\": 3,"
             " \"initialBackoff\": \"0.01s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2,"
             " \"retryableStatusCodes\": [%s]}}]}",
             g[i].codes);
    if (parse(text, &m, err, sizeof err)) fail_msg("%s: %s", g[i].codes, err);
    assert_string_equal(m.e[5].key, "retry_on");
    if (strcmp(m.e[5].value, g[i].want))
      fail_msg("%s: retry_on = %s, want %s", g[i].codes, m.e[5].value, g[i].want);
  }
  static const struct {
    const char *cond, *want;
  } e[] = {
      {"5xx", "timeout+rejected+shed+lost"},
      {"gateway-error", "timeout+rejected+shed+lost"},
      {"reset", "lost"},
      {"connect-failure", "lost"},
      {"reset-before-request", "lost"},
      {"refused-stream", "rejected"},
      {"retriable-4xx", "none"},
      {"envoy-ratelimited,retriable-headers,http3-post-connect-failure", "none"},
      {"unavailable", "rejected+shed"},
      {"resource-exhausted, cancelled , deadline-exceeded,internal", "rejected+shed"},
      {"retriable-status-codes", "none"},
      {"", "none"},
  };
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
    char text[512], err[512];
    swp_client_map m;
    snprintf(text, sizeof text, "retry_policy:\n  retry_on: \"%s\"\n", e[i].cond);
    if (parse(text, &m, err, sizeof err)) fail_msg("%s: %s", e[i].cond, err);
    assert_string_equal(m.e[1].key, "retry_on");
    if (strcmp(m.e[1].value, e[i].want))
      fail_msg("'%s': retry_on = %s, want %s", e[i].cond, m.e[1].value, e[i].want);
  }
  /* retriable-status-codes retries what retriable_status_codes lists: 503 */
  swp_client_map m;
  char err[512];
  if (parse("retry_policy:\n  retry_on: reset,retriable-status-codes\n"
            "  retriable_status_codes: [503, 504]\n",
            &m, err, sizeof err))
    fail_msg("%s", err);
  assert_string_equal(m.e[1].value, "rejected+shed+lost");
  assert_true(has_note(&m, "retriable_status_codes[1]: 504 retries nothing"));
  /* the list alone does nothing */
  if (parse("retry_policy:\n  retry_on: reset\n  retriable_status_codes: [503]\n", &m, err,
            sizeof err))
    fail_msg("%s", err);
  assert_string_equal(m.e[1].value, "lost");
  assert_true(has_note(&m, "ignored: retry_on does not name retriable-status-codes"));
  /* an unknown condition is an error, with the nearest name; lenient: a note */
  assert_int_equal(parse("retry_policy:\n  retry_on: 5xx,gatway-error\n", &m, err, sizeof err),
                   -1);
  assert_string_equal(err, "t: retry_policy.retry_on: unknown retry_on condition 'gatway-error' "
                           "(did you mean 'gateway-error'?)");
  const char *lenient = "retry_policy:\n  retry_on: 5xx,gatway-error\n";
  if (swp_client_parse_opts("t", lenient, strlen(lenient), SWP_CLIENT_LENIENT, &m, err,
                            sizeof err))
    fail_msg("%s", err);
  assert_string_equal(m.e[1].value, "timeout+rejected+shed+lost");
  assert_true(has_note(&m, "unknown retry_on condition 'gatway-error' ignored"));
}

/* Every typo the untrusted-input review found is an error naming the field
 * and the nearest known spelling; with SWP_CLIENT_LENIENT a note. */
static void test_unknown_fields(void **state) {
  (void)state;
  static const struct {
    const char *text, *err;
  } cases[] = {
      {"retry_policy: {num_retries: 3}\ncircuit_breaker:\n  thresholds: []\n",
       "t: circuit_breaker: unknown field (did you mean 'circuit_breakers'?)"},
      {"retry_policy: {num_retries: 3}\ncircuit_breakers:\n  threshold:\n  - max_retries: 50\n",
       "t: circuit_breakers.threshold: unknown field (did you mean 'thresholds'?)"},
      {"retry_policy: {num_retries: 3}\ncircuit_breakers:\n  thresholds:\n  - retry_budjet:\n"
       "      budget_percent: {value: 100}\n",
       "t: circuit_breakers.thresholds[0].retry_budjet: unknown field (did you mean "
       "'retry_budget'?)"},
      {"retry_policy: {num_retries: 3, per_try_timeot: 0.1s}\n",
       "t: retry_policy.per_try_timeot: unknown field (did you mean 'per_try_timeout'?)"},
      {"retry_policy: {num_retries: 3}\nhedge_policy: {hedge_on_per_try_timout: true}\n",
       "t: hedge_policy.hedge_on_per_try_timout: unknown field (did you mean "
       "'hedge_on_per_try_timeout'?)"},
      {"retry_policy: {num_retries: 3}\nfoo: 1\n",
       "t: foo: unknown field in an Envoy route action (--client-lenient ignores unknown "
       "fields)"},
      {"{\"methodConfig\": [{\"timout\": \"5s\", \"retryPolicy\": {\"maxAttempts\": 3,"
       " \"initialBackoff\": \"0.01s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2,"
       " \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}",
       "t: methodConfig[0].timout: unknown field (did you mean 'timeout'?)"},
      {"{\"methodConfig\": [{\"retryPolicy\": {\"maxAttemps\": 3}}]}",
       "t: methodConfig[0].retryPolicy.maxAttemps: unknown field (did you mean 'maxAttempts'?)"},
      {"{\"methodConfig\": [{\"hedgingPolicy\": {\"maxAttempts\": 2}},"
       " {\"retryPolicy\": {\"maxAttempts\": 2, \"backofMultiplier\": 2}}]}",
       "t: methodConfig[1].retryPolicy.backofMultiplier: unknown field (did you mean "
       "'backoffMultiplier'?)"},
      {"{\"methodConfig\": [{\"hedgingPolicy\": {\"maxAttempts\": 2}}], \"retryThrottling\":"
       " {\"maxTokens\": 10, \"tokenRatio\": 0.1, \"token_ration\": 1}}",
       "t: retryThrottling.token_ration: unknown field (did you mean 'token_ratio'?)"},
      {"{\"methodConfig\": [], \"loadBalancingConfg\": []}",
       "t: loadBalancingConfg: unknown field (did you mean 'loadBalancingConfig'?)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    swp_client_map m;
    char err[512];
    if (!parse(cases[i].text, &m, err, sizeof err)) fail_msg("case %zu parsed", i);
    if (strcmp(err, cases[i].err)) fail_msg("case %zu:\n  got  %s\n  want %s", i, err, cases[i].err);
  }
  /* lenient: the same file maps, the typo becomes a note */
  const char *typo = "retry_policy: {num_retries: 3}\ncircuit_breakers:\n  thresholds:\n"
                     "  - retry_budjet: {min_retry_concurrency: 50}\n";
  swp_client_map m;
  char err[512];
  if (swp_client_parse_opts("t", typo, strlen(typo), SWP_CLIENT_LENIENT, &m, err, sizeof err))
    fail_msg("%s", err);
  assert_true(has_note(&m, "circuit_breakers.thresholds[0].retry_budjet: unknown field, ignored "
                           "(did you mean 'retry_budget'?)"));
  /* a strict success parses the same way leniently */
  size_t len;
  char *text = slurp("examples/envoy-route.yaml", &len);
  static swp_client_map a, b;
  if (swp_client_parse("x", text, len, &a, err, sizeof err)) fail_msg("%s", err);
  if (swp_client_parse_opts("x", text, len, SWP_CLIENT_LENIENT, &b, err, sizeof err))
    fail_msg("%s", err);
  assert_memory_equal(&a, &b, sizeof a);
  free(text);
  /* the library leaves a hostile field name raw: the CLI escapes it */
  const char *esc = "{\"methodConfig\": [{\"\\u001b[2J\": 1}]}";
  assert_int_equal(parse(esc, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "methodConfig[0].\x1b[2J: unknown field"));
}

/* Numbers are decimal: "0x10" (quoted or not) is refused, not read as 16. */
static void test_decimal_only(void **state) {
  (void)state;
  static const char *const bad[] = {"\"0x10\"", "0x10", "\"0X1p4\"", "\"inf\"", "\"1e\"", "\" 5\"",
                                    "\"5 \"", "\"\""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[256], err[512];
    swp_client_map m;
    snprintf(text, sizeof text,
             "retry_policy: {num_retries: 2}\ncircuit_breakers:\n  thresholds:\n"
             "  - retry_budget:\n      budget_percent: {value: %s}\n",
             bad[i]);
    if (!parse(text, &m, err, sizeof err)) fail_msg("%s was accepted", bad[i]);
    if (!strstr(err, "circuit_breakers.thresholds[0].retry_budget.budget_percent.value: expected"))
      fail_msg("%s: %s", bad[i], err);
  }
  static const struct {
    const char *text, *want;
  } good[] = {{"\"16\"", "16"}, {"\"1.5e1\"", "15"}, {"\"+7\"", "7"}, {"12.5", "12.5"}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    char text[256], err[512];
    swp_client_map m;
    snprintf(text, sizeof text,
             "retry_policy: {num_retries: 2}\ncircuit_breakers:\n  thresholds:\n"
             "  - retry_budget:\n      budget_percent: {value: %s}\n",
             good[i].text);
    if (parse(text, &m, err, sizeof err)) fail_msg("%s: %s", good[i].text, err);
    assert_string_equal(m.e[8].key, "envoy_budget_percent");
    assert_string_equal(m.e[8].value, good[i].want);
  }
}

/* gRPC hedgingPolicy, and perAttemptRecvTimeout honoured on a channel with
 * hedging (a service config that has a hedgingPolicy). */
static void test_grpc_hedging(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  const char *text =
      "{\"methodConfig\": [{\"name\": [{\"service\": \"kv\"}], \"timeout\": \"0.3s\","
      " \"hedgingPolicy\": {\"maxAttempts\": 3, \"hedgingDelay\": \"0.02s\","
      " \"nonFatalStatusCodes\": [\"UNAVAILABLE\"]}}],"
      " \"retryThrottling\": {\"maxTokens\": 10, \"tokenRatio\": 0.1}}";
  if (parse(text, &m, err, sizeof err)) fail_msg("%s", err);
  static const want w[] = {
      {"max_retries", "2", "methodConfig[0].hedgingPolicy.maxAttempts"},
      {"hedge_attempts", "3", "methodConfig[0].hedgingPolicy.maxAttempts"},
      {"hedge_delay_ms", "20", "methodConfig[0].hedgingPolicy.hedgingDelay"},
      {"hedge_cancel", "on", "(gRPC cancels the other copies when one succeeds)"},
      {"backoff", "none", "(after a non-fatal failure gRPC sends the next copy at once)"},
      {"retry_on", "rejected+shed+router+lost", "methodConfig[0].hedgingPolicy.nonFatalStatusCodes"},
      {"deadline_ms", "300", "methodConfig[0].timeout"},
      {"deadline_propagation", "on",
       "(gRPC sends the call's remaining deadline with every attempt (grpc-timeout))"},
      {"timeout_ms", "none",
       "(no per-attempt timeout: an attempt waits for the call's deadline, which is never "
       "retried)"},
      {"retry_limiter", "grpc", "(retryThrottling is present)"},
      {"grpc_max_tokens", "10", "retryThrottling.maxTokens"},
      {"grpc_token_ratio", "0.1", "retryThrottling.tokenRatio"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  /* without a delay every copy goes at once; without nonFatalStatusCodes
   * any failed copy fails the call */
  if (parse("{\"methodConfig\": [{\"timeout\": \"1s\", \"hedgingPolicy\": {\"maxAttempts\": 7}}]}",
            &m, err, sizeof err))
    fail_msg("%s", err);
  assert_string_equal(m.e[1].value, "5");
  assert_string_equal(m.e[2].value, "0");
  assert_string_equal(m.e[5].key, "retry_on");
  assert_string_equal(m.e[5].value, "none");
  assert_int_equal(parse("{\"methodConfig\": [{\"hedgingPolicy\": {\"maxAttempts\": 1}}]}", &m,
                         err, sizeof err),
                   -1);
  assert_string_equal(err, "t: methodConfig[0].hedgingPolicy.maxAttempts: must be greater than 1 "
                           "(gRPC rejects the hedging policy), got 1");
  /* a hedgingPolicy elsewhere: the retryPolicy's perAttemptRecvTimeout is
   * read (C-core with hedging enabled), and a timed-out attempt retried */
  text = "{\"methodConfig\": [{\"name\": [{\"service\": \"kv\", \"method\": \"Get\"}],"
         " \"timeout\": \"0.5s\", \"retryPolicy\": {\"maxAttempts\": 3, \"initialBackoff\":"
         " \"0.01s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\":"
         " [\"UNAVAILABLE\"], \"perAttemptRecvTimeout\": \"0.1s\"}},"
         " {\"name\": [{\"service\": \"kv\"}], \"hedgingPolicy\": {\"maxAttempts\": 2}}]}";
  if (parse(text, &m, err, sizeof err)) fail_msg("%s", err);
  assert_string_equal(m.e[5].key, "retry_on");
  assert_string_equal(m.e[5].value, "timeout+rejected+shed+router+lost");
  assert_string_equal(m.e[8].key, "timeout_ms");
  assert_string_equal(m.e[8].value, "100");
  assert_string_equal(m.e[8].source, "methodConfig[0].retryPolicy.perAttemptRecvTimeout");
  assert_true(has_note(&m, "perAttemptRecvTimeout: honoured"));
  assert_true(has_note(&m, "methodConfig[1].hedgingPolicy: ignored"));
}

/* Envoy's route timeout, hedge_policy and circuit-breaker request limits. */
static void test_envoy_route(void **state) {
  (void)state;
  swp_client_map m;
  char err[512];
  const char *text = "timeout: 2s\n"
                     "retry_policy:\n  retry_on: 5xx\n  num_retries: 2\n  per_try_timeout: 0.25s\n"
                     "hedge_policy:\n  hedge_on_per_try_timeout: true\n  initial_requests: 1\n"
                     "circuit_breakers:\n  thresholds:\n  - max_requests: 50\n"
                     "    max_connections: 10\n    max_pending_requests: 5\n    max_retries: 4\n";
  if (parse(text, &m, err, sizeof err)) fail_msg("%s", err);
  static const want w[] = {
      {"max_retries", "2", "retry_policy.num_retries"},
      {"retry_on", "timeout+rejected+shed+lost", "retry_policy.retry_on"},
      {"backoff", "envoy", "(Envoy's jittered exponential back-off, whole ms)"},
      {"backoff_base_ms", "25", "(no retry_back_off: Envoy's default 25 ms)"},
      {"backoff_cap_ms", "250", "(no retry_back_off: Envoy's default 10 x base_interval)"},
      {"deadline_ms", "2000", "timeout"},
      {"hedge_attempts", "3",
       "(hedge_on_per_try_timeout: up to num_retries + 1 requests in flight)"},
      {"hedge_delay_ms", "250", "retry_policy.per_try_timeout"},
      {"hedge_cancel", "on", "(Envoy resets the other requests when one answers)"},
      {"timeout_ms", "none",
       "(hedge_on_per_try_timeout: a per-try timeout sends a hedge and ends no attempt)"},
      {"retry_limiter", "envoy",
       "(no retry_budget: the max_retries circuit breaker caps concurrent retries)"},
      {"envoy_budget_percent", "0", "(no retry_budget)"},
      {"envoy_min_retry_concurrency", "4", "circuit_breakers.thresholds[0].max_retries"},
      {"max_requests_per_client", "50", "circuit_breakers.thresholds[0].max_requests"},
  };
  expect_map(&m, w, sizeof w / sizeof w[0]);
  assert_true(has_note(&m, "hedge_policy.initial_requests: not implemented by Envoy"));
  assert_true(has_note(&m, "thresholds[0].max_connections: a connection-pool limit, not "
                           "modelled: with HTTP/1.1 at most max_connections + "
                           "max_pending_requests = 15"));
  /* route.timeout 0s: no deadline; with no per_try_timeout the scenario's
   * timeout stays */
  if (parse("timeout: 0s\nretry_policy: {num_retries: 1}\n", &m, err, sizeof err))
    fail_msg("%s", err);
  assert_string_equal(m.e[5].key, "deadline_ms");
  assert_string_equal(m.e[5].value, "none");
  assert_string_equal(m.e[6].key, "retry_limiter");
  assert_true(has_note(&m, "neither per_try_timeout nor a route timeout"));
  /* the same inside a whole route entry */
  if (parse("match: {prefix: /}\nroute:\n  cluster: kv\n  timeout: 1s\n"
            "  retry_policy: {retry_on: reset, per_try_timeout: 0.1s}\n",
            &m, err, sizeof err))
    fail_msg("%s", err);
  assert_string_equal(m.e[5].source, "route.timeout");
  assert_string_equal(m.e[6].source, "route.retry_policy.per_try_timeout");
  assert_int_equal(parse("retry_policy: {}\nroute: {retry_policy: {}}\n", &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "has both retry_policy and route"));
}

/* Only regular files are read: a FIFO fails at once instead of blocking,
 * a directory is named as one; a link to a regular file is read. */
static void test_load_regular_only(void **state) {
  (void)state;
  char dir[] = "/tmp/test_client_import.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[256], link[256], target[1024], err[512];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(link, sizeof link, "%s/link.yaml", dir);
  snprintf(target, sizeof target, "%s/examples/envoy-route.yaml", STORMSWEEP_SOURCE_DIR);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(symlink(target, link), 0);
  swp_client_map m;
  assert_int_equal(swp_client_load(fifo, &m, err, sizeof err), -1); /* would block before */
  assert_non_null(strstr(err, "fifo: not a regular file (a FIFO)"));
  assert_int_equal(swp_client_load(dir, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "not a regular file (a directory)"));
  if (swp_client_load(link, &m, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(m.kind, SWP_CLIENT_ENVOY);
  unlink(fifo);
  unlink(link);
  rmdir(dir);
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
 * list says. Needs the limiter settings. */
static void test_apply_end_to_end(void **state) {
  (void)state;
  if (!eng_settings_find("retry_limiter") || !eng_settings_find("backoff_multiplier")) {
    print_message("SKIP: this build has no retry_limiter/backoff_multiplier settings"
                  "; the end-to-end apply runs once both are merged\n");
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
      cmocka_unit_test(test_retry_on_tables),
      cmocka_unit_test(test_unknown_fields),
      cmocka_unit_test(test_decimal_only),
      cmocka_unit_test(test_grpc_hedging),
      cmocka_unit_test(test_envoy_route),
      cmocka_unit_test(test_load_regular_only),
      cmocka_unit_test(test_apply_order_and_errors),
      cmocka_unit_test(test_apply_end_to_end),
      cmocka_unit_test(test_prefixes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
