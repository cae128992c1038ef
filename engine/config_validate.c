/*
 * config_validate.c — the checks a whole configuration must pass before it
 * runs (eng_config_validate, eng_config.h), beside the per-setting bounds
 * the settings table in config.c enforces: fault windows inside the
 * horizon, shards that exist, a histogram or rate series chosen, arrival
 * rates and users a run can simulate, Envoy's backoff bounds, timeouts and
 * deadlines of at least one tick.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "breaker.h"
#include "config_err.h"
#include "eng_config.h"
#include "graph_config.h"


static int check_windows(const eng_config *c, const eng_windows *w, const char *key, char *err,
                         size_t errlen) {
  for (int i = 0; i < w->count; i++)
    if (w->w[i].start_ms + w->w[i].duration_ms > c->horizon_ms) {
      seterr(err, errlen, "%s: window %g+%g ends after the horizon (horizon_ms = %g)", key,
             w->w[i].start_ms, w->w[i].duration_ms, c->horizon_ms);
      return -1;
    }
  return 0;
}

int eng_config_validate(const eng_config *c, char *err, size_t errlen) {
  if (c->user_slo.n && eng_slo_check(&c->user_slo, err, errlen)) return -1;
  if (eng__graph_validate(c, err, errlen)) return -1;
  int32_t ticks = eng_config_ticks(c);
  if (ticks < 1) {
    seterr(err, errlen, "horizon_ms / tick_ms must give 1 to 100000000 ticks (got %g / %g)",
           c->horizon_ms, c->tick_ms);
    return -1;
  }
  if (check_windows(c, &c->surge, "surge", err, errlen) ||
      check_windows(c, &c->brownout, "brownout", err, errlen) ||
      check_windows(c, &c->crash, "crash", err, errlen) ||
      check_windows(c, &c->outage, "outage", err, errlen) ||
      check_windows(c, &c->hot_key, "hot_key", err, errlen))
    return -1;
  if (c->brownout.count && c->brownout_shard >= c->shards) {
    seterr(err, errlen, "brownout_shard: %d is not a shard (shards = %d)", c->brownout_shard,
           c->shards);
    return -1;
  }
  if (c->crash.count && c->crash_shard >= c->shards) {
    seterr(err, errlen, "crash_shard: %d is not a shard (shards = %d)", c->crash_shard, c->shards);
    return -1;
  }
  if (c->crash.count && c->shards < 2) {
    seterr(err, errlen, "crash: needs at least 2 shards so the crashed shard's keys can move");
    return -1;
  }
  if (eng_breaker_settings_check(&c->brk, "", err, errlen)) return -1;
  if (c->service_dist == ENG_SERVICE_EMPIRICAL && !c->svc_table) {
    seterr(err, errlen,
           c->service_histogram[0]
               ? "service_histogram: %s holds several histogram series: choose one with "
                 "service_histogram_series"
               : "service = empirical needs service_histogram = FILE%s",
           c->service_histogram);
    return -1;
  }
  if (c->rate_profile[0] && !c->rate_table) {
    seterr(err, errlen,
           "rate_profile: %s holds several series: choose one with rate_profile_series",
           c->rate_profile);
    return -1;
  }
  if (c->rate_profile[0] && c->client_model == ENG_CLIENT_CLOSED) {
    seterr(err, errlen,
           "rate_profile: a measured rate drives the open model only (client_model = closed "
           "sends as its users allow)");
    return -1;
  }
  if (c->key_dist == ENG_KEYS_ZIPF && c->zipf_s <= 0) {
    seterr(err, errlen, "zipf_s: must be > 0 for key_dist = zipf");
    return -1;
  }
  double rate_per_tick = eng_config_arrival_rps(c) * c->tick_ms / 1000.0;
  double peak = rate_per_tick * (c->surge.count ? (c->surge_factor > 1 ? c->surge_factor : 1) : 1);
  if (peak > 1e7) {
    /* Named after the setting that fixes the rate, so a sweep file's
     * message points at its line. */
    seterr(err, errlen,
           "%s: arrival rate of %.3g requests per tick is beyond what a run can simulate (max "
           "1e7)",
           c->rate_rps > 0 ? "rate_rps" : "load", peak);
    return -1;
  }
  if (c->client_model == ENG_CLIENT_CLOSED) {
    double users = (double)eng_config_users(c) *
                   (c->surge.count && c->surge_factor > 1 ? c->surge_factor : 1);
    if (users > 1e7) {
      seterr(err, errlen, "%s: %.3g users is beyond what a run can simulate (max 1e7)",
             c->concurrency > 0 ? "concurrency" : "load", users);
      return -1;
    }
  }
  if (c->backoff == ENG_BACKOFF_ENVOY && c->backoff_cap_ms > 0) {
    if (c->backoff_base_ms < 1) {
      seterr(err, errlen,
             "backoff_base_ms (%g) must be at least 1 with backoff = envoy (Envoy counts whole "
             "milliseconds and needs a base interval above 0)",
             c->backoff_base_ms);
      return -1;
    }
    if (c->backoff_cap_ms < c->backoff_base_ms) {
      seterr(err, errlen,
             "backoff_cap_ms (%g) must be 0 or at least backoff_base_ms (%g) with backoff = envoy "
             "(Envoy requires max_interval >= base_interval)",
             c->backoff_cap_ms, c->backoff_base_ms);
      return -1;
    }
  }
  if (isinf(c->timeout_ms) && isinf(c->deadline_ms)) {
    seterr(err, errlen,
           "timeout_ms = inf (no per-attempt timeout) needs a finite deadline_ms, or attempts "
           "would wait forever");
    return -1;
  }
  if (c->deadline_ms < c->tick_ms) {
    seterr(err, errlen, "deadline_ms (%g) must be at least one tick (tick_ms = %g) or inf",
           c->deadline_ms, c->tick_ms);
    return -1;
  }
  if (!isinf(c->max_requests_per_client) &&
      c->max_requests_per_client != floor(c->max_requests_per_client)) {
    seterr(err, errlen, "max_requests_per_client: expected a whole number or inf, got %g",
           c->max_requests_per_client);
    return -1;
  }
  if (c->timeout_ms < c->tick_ms) {
    seterr(err, errlen, "timeout_ms (%g) must be at least one tick (tick_ms = %g)", c->timeout_ms,
           c->tick_ms);
    return -1;
  }
  return 0;
}
