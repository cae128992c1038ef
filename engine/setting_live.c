/*
 * setting_live.c — which settings are live: whether a setting can change a
 * run under the others (eng_setting_live, eng_config.h). A sweep axis that
 * is never live is dead (budget_ratio under another retry limiter, backoff
 * with max_retries = 0, codel settings with codel off, ...): its runs would
 * repeat each other, so the sweep check refuses it. The rule sits beside
 * the settings table, and test_config changes every setting it calls dead
 * and checks that the runs stay identical.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eng_config.h"

static void dead_because(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void dead_because(char *why, size_t len, const char *fmt, ...) {
  if (!why || !len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
}

/* The name of value v of the enum setting key (the settings table's). */
static const char *name_of(const char *key, int v) {
  const eng_setting *s = eng_settings_find(key);
  return s && s->names ? s->names[v] : "?";
}

/* key is one of the space-separated words of list. */
static int key_in(const char *key, const char *list) {
  size_t n = strlen(key);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ' ');
    size_t m = e ? (size_t)(e - p) : strlen(p);
    if (m == n && !strncmp(p, key, n)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* The settings one retry limiter reads, by eng_retry_limiter. */
static const char *const limiter_keys[] = {
    "budget_ratio budget_max_tokens",
    "grpc_max_tokens grpc_token_ratio",
    "finagle_ttl_ms finagle_min_retries_per_s finagle_percent_can_retry",
    "envoy_budget_percent envoy_min_retry_concurrency",
    "sre_k sre_window_ms",
    "aws_quota_tokens aws_retry_cost aws_timeout_cost aws_success_refund",
};

int eng_setting_live(const eng_config *c, const char *key, char *why, size_t len) {
#define DEAD(...) return dead_because(why, len, __VA_ARGS__), 0
  for (int k = 0; k < (int)(sizeof limiter_keys / sizeof *limiter_keys); k++)
    if (key_in(key, limiter_keys[k]) && c->retry_limiter != k)
      DEAD("retry_limiter = %s, and %s is read by the %s limiter only",
           name_of("retry_limiter", c->retry_limiter), key, name_of("retry_limiter", k));
  /* sre_adaptive also refuses first attempts: its settings stay live without retries */
  if (c->max_retries == 0 && c->retry_limiter != ENG_LIMITER_SRE &&
      key_in(key, limiter_keys[c->retry_limiter]))
    DEAD("max_retries = 0: no request is retried (nor hedged), so the retry limiter's %s "
         "never decides anything",
         key);
  if (!strcmp(key, "budget_max_tokens") && isinf(c->budget_ratio))
    DEAD("budget_ratio = inf (no retry budget), and budget_max_tokens is the budget's bucket");
  if (key_in(key, "backoff backoff_base_ms backoff_cap_ms backoff_multiplier")) {
    if (c->max_retries == 0)
      DEAD("max_retries = 0: no request is retried, so %s never applies", key);
    if (strcmp(key, "backoff") && c->backoff == ENG_BACKOFF_NONE)
      DEAD("backoff = none: retries are immediate, and %s is not read", key);
    if (strcmp(key, "backoff_cap_ms") && c->backoff_cap_ms <= 0)
      DEAD("backoff_cap_ms = 0: retries are immediate whatever %s says", key);
    if (!strcmp(key, "backoff_multiplier") &&
        (c->backoff == ENG_BACKOFF_DECORRELATED || c->backoff == ENG_BACKOFF_ENVOY))
      DEAD("backoff = %s, whose delays do not use backoff_multiplier",
           name_of("backoff", c->backoff));
  }
  if (key_in(key, "codel_interval_ms codel_variant shed_reply") && isinf(c->codel_target_ms))
    DEAD("codel_target_ms = inf (controlled-delay shedding off), and %s is read only when it "
         "sheds",
         key);
  if (!strcmp(key, "adaptive_lifo_threshold") && c->queue_discipline != ENG_QUEUE_ADAPTIVE_LIFO)
    DEAD("queue_discipline = %s, and adaptive_lifo_threshold is read by adaptive_lifo only",
         name_of("queue_discipline", c->queue_discipline));
  if (!strcmp(key, "service_sigma") && c->service_dist != ENG_SERVICE_LOGNORMAL)
    DEAD("service = %s, and service_sigma shapes the lognormal only",
         name_of("service", c->service_dist));
  if (key_in(key, "service_histogram service_histogram_series") &&
      c->service_dist != ENG_SERVICE_EMPIRICAL)
    DEAD("service = %s, and %s is the empirical distribution's",
         name_of("service", c->service_dist), key);
  if (key_in(key, "rate_profile_series rate_scale") && !c->rate_profile[0])
    DEAD("rate_profile = none, and %s applies to a rate profile", key);
  if (key_in(key, "load rate_rps") && c->rate_profile[0] && c->client_model == ENG_CLIENT_OPEN)
    DEAD("rate_profile = %s sets the arrival rate, which replaces %s", c->rate_profile, key);
  if (!strcmp(key, "zipf_s") && c->key_dist != ENG_KEYS_ZIPF)
    DEAD("key_dist = %s, and zipf_s is the zipf exponent", name_of("key_dist", c->key_dist));
  if (!strncmp(key, "breaker_", 8) && c->brk.breaker == ENG_BREAKER_OFF)
    DEAD("breaker = off, and %s configures the circuit breaker", key);
  if (key_in(key, "hedge_delay_ms hedge_cancel") && c->hedge_attempts <= 1)
    DEAD("hedge_attempts = 1 (no hedging), and %s configures hedging", key);
  if (key_in(key, "concurrency think_ms") && c->client_model != ENG_CLIENT_CLOSED)
    DEAD("client_model = open, and %s describes closed-loop users", key);
  int fixed_users = c->client_model == ENG_CLIENT_CLOSED && c->concurrency > 0;
  if (!strcmp(key, "load") && (c->rate_rps > 0 || fixed_users))
    DEAD("%s, which replaces load", fixed_users ? "concurrency > 0 fixes the users"
                                                 : "rate_rps > 0 sets the arrival rate");
  if (!strcmp(key, "rate_rps") && fixed_users)
    DEAD("client_model = closed with concurrency > 0 fixes the users, which replaces rate_rps");
  if (!strcmp(key, "deadline_propagation") && isinf(c->deadline_ms))
    DEAD("deadline_ms = inf: there is no request deadline to propagate");
  static const struct {
    const char *keys, *window;
  } faults[] = {{"surge_factor", "surge"},
                {"brownout_factor brownout_shard", "brownout"},
                {"crash_shard crash_detect_ms", "crash"},
                {"hot_key_share", "hot_key"}};
  for (size_t k = 0; k < sizeof faults / sizeof *faults; k++) {
    const eng_setting *w = eng_settings_find(faults[k].window);
    if (key_in(key, faults[k].keys) && !((const eng_windows *)((const char *)c + w->offset))->count)
      DEAD("%s = none, and %s describes that fault", faults[k].window, key);
  }
#undef DEAD
  return 1;
}

