/*
 * config.c — the settings table: every user-visible scenario setting, its
 * type, bounds, default (the built-in seed study) and help text.
 *
 * Parsing, formatting, "did you mean" suggestions, help output and the
 * README's settings reference all read this one table, so a new setting is
 * one row here plus its field in eng_config. The checks across settings
 * (eng_config_validate) are in config_validate.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_err.h"
#include "setting_store.h"
#include "eng_config.h"
#include "telemetry_tables.h"

static const char *const service_names[] = {"exponential", "deterministic", "lognormal",
                                            "empirical", NULL};
static const char *const key_names[] = {"uniform", "zipf", NULL};
static const char *const discipline_names[] = {"fifo", "lifo", "adaptive_lifo", NULL};
static const char *const backoff_names[] = {"none",         "full", "equal",
                                            "decorrelated", "grpc", "envoy", NULL};
static const char *const breaker_names[] = {"off", "fail_fast", "next_shard", NULL};
static const char *const bool_names[] = {"off", "on", NULL};
static const char *const policy_names[] = {"naive", "guarded", NULL};
/* What each policy preset sets, in policy_names' order: one table for
 * applying a preset, naming the preset a config matches (eng_config_get)
 * and describing it in help texts (eng_preset_settings). Values are spelt
 * as eng_config_get prints them. */
static const char *const preset_settings[][6] = {
    {"budget_ratio=inf", "backoff=none", "deadline_drop=off", NULL},
    /* guarded: the seed article's fix names a budget and load shedding */
    {"budget_ratio=0.1", "backoff=full", "backoff_base_ms=10", "backoff_cap_ms=1000",
     "deadline_drop=on", NULL},
};
static const char *const codel_variant_names[] = {"fail_at_scale", "rfc8289", "folly", NULL};
static const char *const shed_reply_names[] = {"error", "silent", NULL};
static const char *const router_load_names[] = {"sent", "admitted", NULL};
static const char *const breaker_reject_names[] = {"fail", "retry", NULL};
static const char *const breaker_halfopen_names[] = {"any_failure", "failure_rate", NULL};
static const char *const client_model_names[] = {"open", "closed", NULL};
static const char *const limiter_names[] = {"token_bucket", "grpc",         "finagle",
                                            "envoy",        "sre_adaptive", "aws", NULL};
/* eng_failure, in its order */
static const char *const failure_names[] = {"timeout", "rejected", "shed",     "router",
                                            "breaker", "lost",     "overflow", NULL};

#define OFF(f) offsetof(eng_config, f)
#define BIG 1e15

static const eng_setting settings[] = {
    /* time */
    {"tick_ms", ENG_SET_DOUBLE, OFF(tick_ms), 1e-3, 1e4, NULL, "time",
     "length of one tick in ms; every duration below is converted to ticks"},
    {"horizon_ms", ENG_SET_DOUBLE, OFF(horizon_ms), 1, 1e10, NULL, "time",
     "simulated time per run in ms (ticks = horizon_ms / tick_ms, at most 100 million)"},
    /* cluster */
    {"shards", ENG_SET_INT, OFF(shards), 1, ENG_MAX_SHARDS, NULL, "cluster", "number of shards"},
    {"workers", ENG_SET_INT, OFF(workers), 1, 1e6, NULL, "cluster",
     "parallel workers per shard (attempts in service at once)"},
    {"service", ENG_SET_ENUM, OFF(service_dist), 0, 0, service_names, "cluster",
     "service-time distribution: exponential, deterministic, lognormal, or empirical (from "
     "service_histogram)"},
    {"service_mean_ms", ENG_SET_DOUBLE, OFF(service_mean_ms), 1e-6, 1e9, NULL, "cluster",
     "mean service time of one attempt in ms"},
    {"service_sigma", ENG_SET_DOUBLE, OFF(service_sigma), 0, 10, NULL, "cluster",
     "lognormal shape: sigma of the underlying normal (the mean stays service_mean_ms)"},
    {"service_histogram", ENG_SET_TEXT, OFF(service_histogram), 0, 0, NULL, "cluster",
     "service = empirical: a latency histogram FILE (Prometheus text, OpenTelemetry JSON or CSV; "
     "docs/telemetry.md), measured at low load, as the service time; setting it sets "
     "service_mean_ms to its mean (a later service_mean_ms rescales it); none = unset"},
    {"service_histogram_series", ENG_SET_TEXT, OFF(service_histogram_series), 0, 0, NULL,
     "cluster",
     "the series of service_histogram to use when it holds several: label matchers such as "
     "handler=\"/get\" or METRIC{name=\"value\",...}; none = the only one"},
    {"queue_capacity", ENG_SET_DOUBLE_INF, OFF(queue_capacity), 0, 1e9, NULL, "cluster",
     "waiting attempts a shard holds before rejecting at once; inf = unbounded"},
    {"queue_discipline", ENG_SET_ENUM, OFF(queue_discipline), 0, 0, discipline_names, "cluster",
     "fifo; lifo (newest served first); adaptive_lifo (fifo until the queue reaches "
     "adaptive_lifo_threshold, lifo above it)"},
    {"adaptive_lifo_threshold", ENG_SET_DOUBLE, OFF(adaptive_lifo_threshold), 0, 1e9, NULL,
     "cluster", "queue length at which adaptive_lifo switches to lifo"},
    {"codel_target_ms", ENG_SET_DOUBLE_INF, OFF(codel_target_ms), 0, BIG, NULL, "cluster",
     "controlled-delay shedding (variant: codel_variant): target queueing delay in ms; "
     "inf = off"},
    {"codel_interval_ms", ENG_SET_DOUBLE, OFF(codel_interval_ms), 0, BIG, NULL, "cluster",
     "how long the queue delay must stay above codel_target_ms before shedding starts"},
    {"codel_variant", ENG_SET_ENUM, OFF(codel_variant), 0, 0, codel_variant_names, "cluster",
     "fail_at_scale: then shed every queued attempt that waited codel_target_ms or more "
     "until one has not (Facebook's Fail at Scale variant); rfc8289: CoDel's control law, "
     "shed one, then the next after codel_interval_ms / sqrt(count); folly: folly's Codel, "
     "overloaded for an interval when the least delay of the previous one exceeded the target, "
     "then shed what waited more than 2 x codel_target_ms"},
    {"deadline_drop", ENG_SET_ENUM, OFF(deadline_drop), 0, 0, bool_names, "cluster",
     "on: a shard drops, instead of serving, a queued attempt whose client already gave up"},
    {"shed_reply", ENG_SET_ENUM, OFF(shed_reply), 0, 0, shed_reply_names, "cluster",
     "error: a shed attempt's client gets an overload error at once (and may retry); silent: "
     "it learns only at its timeout"},
    /* router */
    {"vnodes", ENG_SET_INT, OFF(vnodes), 1, ENG_MAX_VNODES, NULL, "router",
     "ring points per shard (xxHash of shard and vnode)"},
    {"capacity_factor", ENG_SET_DOUBLE_INF, OFF(capacity_factor), 1, BIG, NULL, "router",
     "bounded-load factor c: no shard takes more than max(1, ceil(c (L+1) / M)) attempts "
     "in flight; inf = plain consistent hashing"},
    {"router_load", ENG_SET_ENUM, OFF(router_load), 0, 0, router_load_names, "router",
     "a shard's load as the router counts it: sent = what the shard holds plus attempts "
     "sent to it and lost (crash not yet detected, outage) until their timeout; admitted = "
     "only what the shard holds (a crashed shard looks idle)"},
    /* traffic */
    {"load", ENG_SET_DOUBLE, OFF(load), 0, 1e6, NULL, "traffic",
     "arrival rate as a fraction of cluster capacity (shards x workers / service mean)"},
    {"rate_rps", ENG_SET_DOUBLE, OFF(rate_rps), 0, 1e12, NULL, "traffic",
     "absolute arrival rate in requests/s; when > 0 it replaces load"},
    {"rate_profile", ENG_SET_TEXT, OFF(rate_profile), 0, 0, NULL, "traffic",
     "requests/s over time from FILE (CSV time_s,rate or a Prometheus range-query JSON; "
     "docs/telemetry.md), from t = 0 at its first point, interpolated per tick and held after "
     "its last; replaces load and rate_rps (open model only); none = a constant rate"},
    {"rate_profile_series", ENG_SET_TEXT, OFF(rate_profile_series), 0, 0, NULL, "traffic",
     "the series of a Prometheus rate_profile to use when it holds several, as "
     "service_histogram_series; none = the only one"},
    {"rate_scale", ENG_SET_DOUBLE, OFF(rate_scale), 0, 1e6, NULL, "traffic",
     "multiplies every rate of rate_profile (2 = twice the measured traffic)"},
    {"keys", ENG_SET_INT64, OFF(keys), 1, 4e18, NULL, "traffic", "size of the key space"},
    {"key_dist", ENG_SET_ENUM, OFF(key_dist), 0, 0, key_names, "traffic",
     "key popularity: uniform or zipf (exponent zipf_s)"},
    {"zipf_s", ENG_SET_DOUBLE, OFF(zipf_s), 0, 10, NULL, "traffic", "Zipf exponent s"},
    {"clients", ENG_SET_INT, OFF(clients), 1, 1e6, NULL, "traffic",
     "client processes sharing the load; budgets and breakers are per client"},
    {"client_model", ENG_SET_ENUM, OFF(client_model), 0, 0, client_model_names, "traffic",
     "open: a Poisson source at the load's rate; closed: each client process has users who "
     "send their next request only when the previous one ended (success or final failure) "
     "plus a think time (docs/clients.md)"},
    {"concurrency", ENG_SET_INT, OFF(concurrency), 0, 1e6, NULL, "traffic",
     "closed: users per client process; 0 = as many users (over all clients) as give "
     "load x capacity when nothing queues: load x capacity x (service_mean_ms + think_ms)"},
    {"think_ms", ENG_SET_DOUBLE, OFF(think_ms), 0, BIG, NULL, "traffic",
     "closed: mean of a user's exponential think time after a request ends; 0 = none"},
    /* client policy */
    {"policy", ENG_SET_PRESET, 0, 0, 0, policy_names, "client",
     "preset: sets several settings at once (listed below)"},
    {"timeout_ms", ENG_SET_DOUBLE_INF, OFF(timeout_ms), 0, BIG, NULL, "client",
     "per-attempt client timeout in ms (the server is not told); inf or none = no "
     "per-attempt timeout, the attempt waits for the rest of deadline_ms (which it needs)"},
    {"deadline_ms", ENG_SET_DOUBLE_INF, OFF(deadline_ms), 0, BIG, NULL, "client",
     "per-request deadline in ms over all its attempts and backoff waits (gRPC's call "
     "deadline, Envoy's route timeout): when it passes the request fails (deadline exceeded) "
     "and is never retried; a retry whose backoff would end after it is not sent; inf or none "
     "= no deadline"},
    {"deadline_propagation", ENG_SET_ENUM, OFF(deadline_propagation), 0, 0, bool_names,
     "client",
     "on: the server knows each request's deadline (gRPC's grpc-timeout, Envoy's "
     "x-envoy-expected-rq-timeout-ms), so deadline_drop also drops queued work whose request "
     "deadline passed; off: it knows only the attempt's timeout_ms"},
    {"retry_on", ENG_SET_FLAGS, OFF(retry_on), 0, 0, failure_names, "client",
     "the failures that are retried, NAME+NAME...: timeout, rejected (queue full), shed, router "
     "(cluster_capacity_exhausted), breaker (with breaker_reject = retry), lost (crash or "
     "outage), overflow (max_requests_per_client); all or none (gRPC retryableStatusCodes, "
     "Envoy retry_on; docs/clients.md maps them); any other failure ends the request"},
    {"hedge_attempts", ENG_SET_INT, OFF(hedge_attempts), 1, ENG_MAX_HEDGE, NULL, "client",
     "hedging: copies of a request in flight at most (gRPC hedgingPolicy maxAttempts); "
     "1 = no hedging. Every copy after the first counts against max_retries and the retry "
     "limiter; the first success wins"},
    {"hedge_delay_ms", ENG_SET_DOUBLE, OFF(hedge_delay_ms), 0, BIG, NULL, "client",
     "hedging: send a further copy when no copy answered within this long of the last one "
     "sent (gRPC hedgingDelay); 0 = all copies at once"},
    {"hedge_cancel", ENG_SET_ENUM, OFF(hedge_cancel), 0, 0, bool_names, "client",
     "on: when one copy of a request answers (or fails it), the client cancels its other "
     "copies still in flight, and a shard drops a cancelled copy it has not started; off: "
     "they are abandoned and served anyway (wasted). A deadline's copies: deadline_drop"},
    {"max_requests_per_client", ENG_SET_DOUBLE_INF, OFF(max_requests_per_client), 1, 1e9, NULL,
     "client",
     "client-side concurrency limit: attempts in flight per client process (Envoy "
     "circuit_breakers max_requests); one more fails at once, counted in rejected_breaker, "
     "retried only if retry_on has overflow; inf = no limit"},
    {"max_retries", ENG_SET_INT, OFF(max_retries), 0, 1000, NULL, "client",
     "retries per request after the first attempt"},
    {"backoff", ENG_SET_ENUM, OFF(backoff), 0, 0, backoff_names, "client",
     "delay before a retry: none (immediate), full jitter U(0, min(cap, base 2^n)), equal "
     "jitter (half fixed, half random), decorrelated jitter min(cap, U(base, 3 prev)), grpc "
     "(min(cap, base 2^n) x U(0.8, 1.2), gRFC A6) or envoy (Envoy's jittered exponential "
     "back-off in whole ms; docs/clients.md)"},
    {"backoff_base_ms", ENG_SET_DOUBLE, OFF(backoff_base_ms), 0, BIG, NULL, "client",
     "backoff base in ms"},
    {"backoff_cap_ms", ENG_SET_DOUBLE, OFF(backoff_cap_ms), 0, BIG, NULL, "client",
     "backoff cap in ms (0 = retries are immediate, whatever backoff says)"},
    {"backoff_multiplier", ENG_SET_DOUBLE, OFF(backoff_multiplier), 1e-6, 1e6, NULL, "client",
     "growth of the full, equal and grpc backoff: retry n sleeps against min(cap, base x "
     "multiplier^(n-1)) (gRPC's backoffMultiplier; 2 = the classic doubling)"},
    {"budget_ratio", ENG_SET_DOUBLE_INF, OFF(budget_ratio), 0, BIG, NULL, "client",
     "retry budget: tokens each first attempt deposits in its client's bucket; a retry "
     "spends one and is dropped without one; inf = no budget"},
    {"budget_max_tokens", ENG_SET_DOUBLE, OFF(budget_max_tokens), 0, BIG, NULL, "client",
     "retry budget bucket capacity per client (the bucket starts full)"},
    {"retry_limiter", ENG_SET_ENUM, OFF(retry_limiter), 0, 0, limiter_names, "client",
     "what limits retries, per client process: token_bucket (budget_ratio, "
     "budget_max_tokens), grpc (gRFC A6 throttling), finagle (Finagle/tower RetryBudget), "
     "envoy (concurrent retry budget), sre_adaptive (SRE book client throttling; it rejects "
     "first attempts too), aws (AWS SDK standard retry quota); docs/clients.md"},
    {"grpc_max_tokens", ENG_SET_DOUBLE, OFF(lim.grpc_max_tokens), 0.001, 1000, NULL, "client",
     "grpc: retryThrottling maxTokens; the bucket starts full, retries stop at or below half"},
    {"grpc_token_ratio", ENG_SET_DOUBLE, OFF(lim.grpc_token_ratio), 0.001, 1e6, NULL, "client",
     "grpc: retryThrottling tokenRatio, tokens a success earns (a failed attempt costs 1)"},
    {"finagle_ttl_ms", ENG_SET_DOUBLE, OFF(lim.finagle_ttl_ms), 1000, 60000, NULL, "client",
     "finagle: how long a deposit (and a withdrawal) counts, 1 to 60 s"},
    {"finagle_min_retries_per_s", ENG_SET_DOUBLE, OFF(lim.finagle_min_retries_per_s), 0, 1e9, NULL,
     "client", "finagle: minRetriesPerSec, a reserve of retries that never expires"},
    {"finagle_percent_can_retry", ENG_SET_DOUBLE, OFF(lim.finagle_percent_can_retry), 0, 1000, NULL,
     "client", "finagle: percentCanRetry, retries allowed per request (0.2 = one in five)"},
    {"envoy_budget_percent", ENG_SET_DOUBLE, OFF(lim.envoy_budget_percent), 0, 100, NULL, "client",
     "envoy: active retries may reach this percent of the client's active requests"},
    {"envoy_min_retry_concurrency", ENG_SET_INT, OFF(lim.envoy_min_retry_concurrency), 0, 1e9,
     NULL, "client", "envoy: active retries allowed whatever the percentage says"},
    {"sre_k", ENG_SET_DOUBLE, OFF(lim.sre_k), 0.001, 1e6, NULL, "client",
     "sre_adaptive: K; the client rejects with probability max(0, (requests - K accepts) / "
     "(requests + 1))"},
    {"sre_window_ms", ENG_SET_DOUBLE, OFF(lim.sre_window_ms), 1e-3, BIG, NULL, "client",
     "sre_adaptive: window over which requests and accepts are counted"},
    {"aws_quota_tokens", ENG_SET_INT, OFF(lim.aws_quota_tokens), 0, 1e9, NULL, "client",
     "aws: retry quota per client (starts full)"},
    {"aws_retry_cost", ENG_SET_INT, OFF(lim.aws_retry_cost), 0, 1e9, NULL, "client",
     "aws: quota a retry costs"},
    {"aws_timeout_cost", ENG_SET_INT, OFF(lim.aws_timeout_cost), 0, 1e9, NULL, "client",
     "aws: quota a retry after a timeout costs"},
    {"aws_success_refund", ENG_SET_INT, OFF(lim.aws_success_refund), 0, 1e9, NULL, "client",
     "aws: quota a success without retry returns (a successful retry returns its own cost)"},
    {"breaker", ENG_SET_ENUM, OFF(brk.breaker), 0, 0, breaker_names, "client",
     "circuit breaker per (client, shard): off; fail_fast (an open breaker fails the attempt "
     "at once); next_shard (the router steps over shards whose breaker is open)"},
    {"breaker_window", ENG_SET_INT, OFF(brk.breaker_window), 1, 64, NULL, "client",
     "calls in the breaker's sliding window"},
    {"breaker_min_calls", ENG_SET_INT, OFF(brk.breaker_min_calls), 1, 64, NULL, "client",
     "calls the window must hold before the breaker may open"},
    {"breaker_threshold", ENG_SET_DOUBLE, OFF(brk.breaker_threshold), 0, 1, NULL, "client",
     "failure ratio over the window that opens the breaker"},
    {"breaker_cooldown_ms", ENG_SET_DOUBLE, OFF(brk.breaker_cooldown_ms), 0, BIG, NULL, "client",
     "how long an open breaker stays open before it lets probes through (half-open)"},
    {"breaker_probes", ENG_SET_INT, OFF(brk.breaker_probes), 1, 1000, NULL, "client",
     "calls a half-open breaker lets through; with breaker_halfopen = any_failure, the "
     "successes in a row that close it"},
    {"breaker_reject", ENG_SET_ENUM, OFF(brk.breaker_reject), 0, 0, breaker_reject_names, "client",
     "an open breaker's refusal: fail = the request fails (Envoy, gRPC); retry = it is a "
     "failed attempt, retried after the backoff and budget like any other (resilience4j)"},
    {"breaker_halfopen", ENG_SET_ENUM, OFF(brk.breaker_halfopen), 0, 0, breaker_halfopen_names,
     "client",
     "how a half-open breaker's breaker_probes decide: any_failure = one failed probe opens it "
     "again, breaker_probes successes close it; failure_rate = once every probe answered, "
     "failures / probes >= breaker_threshold opens it again, else it closes (resilience4j)"},
    /* faults */
    {"surge", ENG_SET_WINDOWS, OFF(surge), 0, 0, NULL, "faults",
     "traffic surge windows \"START+DURATION ...\" in ms, or none"},
    {"surge_factor", ENG_SET_DOUBLE, OFF(surge_factor), 0, 1e6, NULL, "faults",
     "arrival-rate multiplier during a surge"},
    {"brownout", ENG_SET_WINDOWS, OFF(brownout), 0, 0, NULL, "faults",
     "brownout windows of shard brownout_shard, or none"},
    {"brownout_factor", ENG_SET_DOUBLE, OFF(brownout_factor), 0, 1, NULL, "faults",
     "service capacity multiplier during a brownout (0 = stalled: no progress at all)"},
    {"brownout_shard", ENG_SET_INT, OFF(brownout_shard), 0, ENG_MAX_SHARDS - 1, NULL, "faults",
     "the shard a brownout hits"},
    {"crash", ENG_SET_WINDOWS, OFF(crash), 0, 0, NULL, "faults",
     "crash windows of shard crash_shard (it loses its queue and stops answering), or none"},
    {"crash_shard", ENG_SET_INT, OFF(crash_shard), 0, ENG_MAX_SHARDS - 1, NULL, "faults",
     "the shard that crashes"},
    {"crash_detect_ms", ENG_SET_DOUBLE, OFF(crash_detect_ms), 0, BIG, NULL, "faults",
     "delay before the router marks a crashed shard unhealthy and its keys walk on"},
    {"outage", ENG_SET_WINDOWS, OFF(outage), 0, 0, NULL, "faults",
     "network outage windows: attempts sent then are lost (they time out), or none"},
    {"hot_key", ENG_SET_WINDOWS, OFF(hot_key), 0, 0, NULL, "faults",
     "windows during which one key takes hot_key_share of the requests, or none"},
    {"hot_key_share", ENG_SET_DOUBLE, OFF(hot_key_share), 0, 1, NULL, "faults",
     "share of requests that go to the hot key during a hot_key window"},
    /* measurement */
    {"warmup_ms", ENG_SET_DOUBLE, OFF(warmup_ms), 0, BIG, NULL, "measurement",
     "start of the baseline window (the cluster fills up before it)"},
    {"baseline_ms", ENG_SET_DOUBLE, OFF(baseline_ms), 1, BIG, NULL, "measurement",
     "longest baseline window, ending at the first fault (or 90% of the horizon)"},
    {"recovery_tolerance", ENG_SET_DOUBLE, OFF(recovery_tolerance), 0, 1e6, NULL, "measurement",
     "recovered = total queue depth <= (1 + tolerance) x baseline p99 + 1 for a hold window"},
    {"recovery_hold_ms", ENG_SET_DOUBLE, OFF(recovery_hold_ms), 0, BIG, NULL, "measurement",
     "how long the queue must stay back within tolerance to count as recovered"},
    {"slo_ms", ENG_SET_DOUBLE, OFF(slo_ms), 0, BIG, NULL, "measurement",
     "recovery-time SLO: a recovered run passes when recovery_ms <= slo_ms"},
    {"latency_window_ms", ENG_SET_DOUBLE, OFF(latency_window_ms), 0.001, BIG, NULL,
     "measurement",
     "window of the request latency quantiles and error rate series (at least one tick)"},
    {"trend_ms", ENG_SET_DOUBLE, OFF(trend_ms), 1, BIG, NULL, "measurement",
     "length of the late window (goodput, amplification, wasted share) after clearance"},
    {"metastable_goodput", ENG_SET_DOUBLE, OFF(metastable_goodput), 0, 1, NULL, "measurement",
     "goodput share (of baseline late, of new requests in a collapse window) that is far below"},
    {"recovery_goodput", ENG_SET_DOUBLE, OFF(recovery_goodput), 0, 1, NULL, "measurement",
     "recovered also needs goodput over the hold window >= this x baseline goodput"},
    {"health_goodput", ENG_SET_DOUBLE, OFF(health_goodput), 0, 1, NULL, "measurement",
     "healthy baseline: successes >= this x new requests before the first fault"},
    {"health_amplification", ENG_SET_DOUBLE, OFF(health_amplification), 1, 1e6, NULL,
     "measurement",
     "healthy baseline: attempts <= this x new requests; above it retries sustain a storm"},
    {"wasted_share", ENG_SET_DOUBLE, OFF(wasted_share), 0, 1, NULL, "measurement",
     "wasted completions above this share of all completions sustain a storm"},
    {"drain_bound_ms", ENG_SET_DOUBLE_INF, OFF(drain_bound_ms), 0, 1e12, NULL, "measurement",
     "a backlog projected to drain within this long after the horizon is slow, not metastable"},
    {"collapse_requests", ENG_SET_DOUBLE, OFF(collapse_requests), 1, 1e9, NULL, "measurement",
     "the collapse window is trend_ms or long enough for this many new requests, if longer"},
    {"record_shard_queues", ENG_SET_ENUM, OFF(record_shard_queues), 0, 0, bool_names,
     "measurement",
     "on: also record the queue depth of every shard at every tick (sim --ticks-csv: "
     "shard_queue_K columns; run: /ticks/shard_queue_depth)"},
    {"memory_limit_mb", ENG_SET_DOUBLE_INF, OFF(memory_limit_mb), 1, 1e9, NULL, "measurement",
     "a run whose attempts need more memory than this fails alone (the sweep goes on and says "
     "so); inf: as much as the machine gives"},
};

#define NSETTINGS (sizeof settings / sizeof settings[0])

void eng_config_defaults(eng_config *c) {
  memset(c, 0, sizeof *c);
  c->memory_limit_mb = INFINITY;
  c->tick_ms = 1;
  c->horizon_ms = 10000;
  c->shards = 16;
  c->workers = 8;
  c->service_dist = ENG_SERVICE_EXP;
  c->service_mean_ms = 5;
  c->service_sigma = 1;
  c->rate_scale = 1;
  c->queue_capacity = 1024;
  c->queue_discipline = ENG_QUEUE_FIFO;
  c->adaptive_lifo_threshold = 64;
  c->codel_target_ms = INFINITY;
  c->codel_interval_ms = 100;
  c->vnodes = 150;
  c->capacity_factor = 1.25;
  c->load = 0.7;
  c->keys = 1000000;
  c->key_dist = ENG_KEYS_UNIFORM;
  c->zipf_s = 1.1;
  c->clients = 64;
  c->client_model = ENG_CLIENT_OPEN;
  c->concurrency = 0;
  c->think_ms = 0;
  c->timeout_ms = 100;
  c->deadline_ms = INFINITY;
  c->deadline_propagation = 0;
  c->retry_on = ENG_RETRY_ON_DEFAULT;
  c->hedge_attempts = 1;
  c->hedge_delay_ms = 0; /* gRPC's hedgingDelay when unset */
  c->hedge_cancel = 1;   /* gRPC and Envoy cancel the other copies */
  c->max_requests_per_client = INFINITY;
  c->max_retries = 3;
  c->backoff = ENG_BACKOFF_NONE;
  c->backoff_base_ms = 10;
  c->backoff_cap_ms = 1000;
  c->backoff_multiplier = 2;
  c->budget_ratio = INFINITY;
  c->budget_max_tokens = 10;
  /* Each limiter's defaults are its library's (docs/clients.md). */
  c->retry_limiter = ENG_LIMITER_TOKEN_BUCKET;
  c->lim.grpc_max_tokens = 10;
  c->lim.grpc_token_ratio = 0.1;
  c->lim.finagle_ttl_ms = 10000;
  c->lim.finagle_min_retries_per_s = 10;
  c->lim.finagle_percent_can_retry = 0.2;
  c->lim.envoy_budget_percent = 20;
  c->lim.envoy_min_retry_concurrency = 3;
  c->lim.sre_k = 2;
  c->lim.sre_window_ms = 120000;
  c->lim.aws_quota_tokens = 500;
  c->lim.aws_retry_cost = 5;
  c->lim.aws_timeout_cost = 10;
  c->lim.aws_success_refund = 1;
  c->brk.breaker = ENG_BREAKER_OFF;
  c->brk.breaker_window = 20;
  c->brk.breaker_min_calls = 10;
  c->brk.breaker_threshold = 0.5;
  c->brk.breaker_cooldown_ms = 1000;
  c->brk.breaker_probes = 3;
  /* modelling choices: the behaviour of common libraries and servers */
  c->codel_variant = ENG_CODEL_FAIL_AT_SCALE;
  c->shed_reply = ENG_SHED_ERROR;
  c->router_load = ENG_ROUTER_LOAD_SENT;
  c->brk.breaker_reject = ENG_BREAKER_REJECT_FAIL;
  c->brk.breaker_halfopen = ENG_BREAKER_HALFOPEN_ANY_FAILURE;
  c->surge.count = 1;
  c->surge.w[0] = (eng_window){2000, 500};
  c->surge_factor = 5;
  c->brownout.count = 1;
  c->brownout.w[0] = (eng_window){2000, 500};
  c->brownout_factor = 0;
  c->brownout_shard = 0;
  c->crash_shard = 1;
  c->crash_detect_ms = 50;
  c->hot_key_share = 0.5;
  c->warmup_ms = 500;
  c->baseline_ms = 1500;
  c->recovery_tolerance = 0.5;
  c->recovery_hold_ms = 200;
  c->latency_window_ms = 100;
  c->slo_ms = 1500;
  c->trend_ms = 1000;
  c->metastable_goodput = 0.5;
  c->recovery_goodput = 0.9;
  c->health_goodput = 0.9;
  c->health_amplification = 1.2;
  c->wasted_share = 0.5;
  c->drain_bound_ms = 60000;
  c->collapse_requests = 100;
}

size_t eng_settings_count(void) { return NSETTINGS; }

const eng_setting *eng_settings_at(size_t i) { return i < NSETTINGS ? &settings[i] : NULL; }

/* Groups whose settings describe the world, not a choice: what the traffic
 * is, which faults happen, and how long and how strictly a run is watched. */
static const char *const scenario_groups[] = {"traffic", "faults", "time", "measurement", NULL};

eng_setting_role eng_setting_role_of(const eng_setting *s) {
  if (!s || !s->group) return ENG_ROLE_TUNABLE;
  for (size_t i = 0; scenario_groups[i]; i++)
    if (!strcmp(s->group, scenario_groups[i])) return ENG_ROLE_SCENARIO;
  return ENG_ROLE_TUNABLE;
}

int eng_setting_names_file(const char *key) {
  return !strcmp(key, "service_histogram") || !strcmp(key, "rate_profile");
}

const eng_setting *eng__settings_find_plain(const char *key) {
  for (size_t i = 0; i < NSETTINGS; i++)
    if (!strcmp(settings[i].key, key)) return &settings[i];
  return NULL;
}

/* Edit distance with adjacent transpositions ("grdi" is one step from
 * "grid"), case-insensitive; words longer than 63 characters are far. */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 64;
  size_t d[64][64];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
      size_t best = d[i - 1][j - 1] + (ca != cb);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

const char *eng_suggest(const char *word, const char *const *cands, size_t n) {
  const char *best = NULL;
  size_t best_s = (size_t)-1, len = strlen(word);
  for (size_t i = 0; i < n && cands[i]; i++) {
    if (!*cands[i]) continue;
    /* Twice the distance, so that a candidate that contains the typo (or
     * the reverse), a good guess too, counts as 1.5 edits: one edit away
     * wins ("service_histgram" is service_histogram, not service). */
    size_t s = 2 * edit_distance(word, cands[i]);
    if (len >= 3 && (strstr(cands[i], word) || strstr(word, cands[i])) && s > 3) s = 3;
    if (s < best_s) best_s = s, best = cands[i];
  }
  size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
  return best_s <= 2 * limit + 1 ? best : NULL;
}

const char *eng_settings_suggest(const char *key) {
  const char *keys[NSETTINGS + 1];
  for (size_t i = 0; i < NSETTINGS; i++) keys[i] = settings[i].key;
  keys[NSETTINGS] = NULL;
  return eng_suggest(key, keys, NSETTINGS);
}


/* Parses a whole string as a number; "inf" only when allowed. */
static int parse_double(const char *s, int allow_inf, double *out) {
  while (isspace((unsigned char)*s)) s++;
  if (!*s) return -1;
  if (!strcmp(s, "inf") || !strcmp(s, "+inf") || !strcmp(s, "infinity") ||
      (allow_inf && !strcmp(s, "none"))) {
    if (!allow_inf) return -1;
    *out = INFINITY;
    return 0;
  }
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  while (isspace((unsigned char)*end)) end++;
  if (*end || errno == ERANGE || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

static int parse_windows(const char *s, eng_windows *w, char *err, size_t errlen,
                         const char *key) {
  eng_windows out = {0};
  while (isspace((unsigned char)*s)) s++;
  if (!strcmp(s, "none") || !*s) {
    *w = out;
    return 0;
  }
  while (*s) {
    if (out.count == ENG_MAX_WINDOWS) {
      seterr(err, errlen, "%s: at most %d windows", key, ENG_MAX_WINDOWS);
      return -1;
    }
    char *end;
    /* Overflow gives inf and underflow a tiny number: isfinite below
     * catches the one that matters, so errno is not consulted. */
    double start = strtod(s, &end);
    if (end == s || *end != '+') goto bad;
    s = end + 1;
    double dur = strtod(s, &end);
    if (end == s) goto bad;
    if (!isfinite(start) || !isfinite(dur)) {
      seterr(err, errlen, "%s: window start and duration must be finite numbers of ms", key);
      return -1;
    }
    if (!(start >= 0) || !(dur >= 0)) {
      seterr(err, errlen, "%s: window start and duration must be >= 0 ms", key);
      return -1;
    }
    out.w[out.count++] = (eng_window){start, dur};
    s = end;
    if (*s && !isspace((unsigned char)*s) && *s != ';') goto bad;
    while (isspace((unsigned char)*s) || *s == ';') s++;
  }
  *w = out;
  return 0;
bad:
  seterr(err, errlen, "%s: expected windows \"START+DURATION ...\" in ms (e.g. 2000+500) or none",
         key);
  return -1;
}

static int eng_config_set_pair(eng_config *c, const char *pair, char *err, size_t errlen) {
  char key[64];
  const char *eq = strchr(pair, '=');
  snprintf(key, sizeof key, "%.*s", (int)(eq - pair), pair);
  return eng__config_set_plain(c, key, eq + 1, err, errlen);
}

static int apply_preset(eng_config *c, int which) {
  char err[160];
  for (int i = 0; preset_settings[which][i]; i++)
    if (eng_config_set_pair(c, preset_settings[which][i], err, sizeof err)) return -1;
  return 0;
}

/* 1 when every setting preset which sets has that value in c. */
static int preset_matches(const eng_config *c, int which) {
  for (int i = 0; preset_settings[which][i]; i++) {
    const char *pair = preset_settings[which][i], *eq = strchr(pair, '=');
    char key[64], val[64];
    snprintf(key, sizeof key, "%.*s", (int)(eq - pair), pair);
    if (eng__config_get_plain(c, key, val, sizeof val) || strcmp(val, eq + 1)) return 0;
  }
  return 1;
}

const char *const *eng_preset_settings(const char *key, const char *name) {
  const eng_setting *s = eng__settings_find_plain(key);
  if (!s || s->type != ENG_SET_PRESET) return NULL;
  for (int i = 0; s->names[i]; i++)
    if (!strcmp(s->names[i], name)) return preset_settings[i];
  return NULL;
}

static void describe_names(const char *const *names, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; names[i]; i++)
    used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", i ? ", " : "",
                             names[i]);
}

/* "NAME+NAME..." (or ',', '|', spaces between), "all" or "none". */
static int parse_flags(const eng_setting *s, const char *value, int32_t *out, char *err,
                       size_t errlen) {
  int32_t mask = 0, all = 0;
  int words = 0;
  for (int i = 0; s->names[i]; i++) all |= (int32_t)(1u << i);
  const char *p = value;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '+' || *p == ',' || *p == '|') p++;
    if (!*p) break;
    size_t n = 0;
    while (p[n] && !strchr(" \t+,|", p[n])) n++;
    int found = -1;
    if (n == 3 && !strncmp(p, "all", 3)) {
      mask |= all;
      found = 0;
    } else if (n == 4 && !strncmp(p, "none", 4)) {
      found = 0;
    }
    for (int i = 0; found < 0 && s->names[i]; i++)
      if (strlen(s->names[i]) == n && !strncmp(p, s->names[i], n)) {
        mask |= (int32_t)(1u << i);
        found = 0;
      }
    if (found < 0) {
      char names[256];
      describe_names(s->names, names, sizeof names);
      seterr(err, errlen, "%s: '%.*s' is not one of %s, all or none (join names with '+')",
             s->key, (int)(n < 64 ? n : 64), p, names);
      return -1;
    }
    words++;
    p += n;
  }
  if (!words) {
    seterr(err, errlen, "%s: expected names joined with '+', all or none, got '%s'", s->key,
           value);
    return -1;
  }
  *out = mask;
  return 0;
}

static void format_flags(const eng_setting *s, int32_t mask, char *buf, size_t len) {
  int32_t all = 0;
  for (int i = 0; s->names[i]; i++) all |= (int32_t)(1u << i);
  if (!len) return;
  buf[0] = 0;
  if (mask == all) {
    snprintf(buf, len, "all");
    return;
  }
  if (!mask) {
    snprintf(buf, len, "none");
    return;
  }
  size_t used = 0;
  for (int i = 0; s->names[i]; i++)
    if (mask & (int32_t)(1u << i))
      used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "+" : "",
                               s->names[i]);
}

/* Reads the telemetry files the text settings name into c's tables. A
 * histogram whose file holds several series is left unloaded until a
 * series is set (eng_config_validate says so if none ever is). */
static int load_tables(eng_config *c, const char *key, char *err, size_t errlen) {
  char msg[512] = "";
  if (!strncmp(key, "service_histogram", 17)) {
    c->svc_table = NULL;
    if (!c->service_histogram[0]) return 0;
    const eng_empirical *e;
    int rc = eng_tables_service(c->service_histogram, c->service_histogram_series, &e, msg,
                                sizeof msg);
    if (rc == -2 && !c->service_histogram_series[0]) return 0;
    if (rc) {
      seterr(err, errlen, "%s", msg);
      return -1;
    }
    c->svc_table = e;
    c->service_mean_ms = e->mean_ms;
  } else {
    c->rate_table = NULL;
    if (!c->rate_profile[0]) return 0;
    const eng_rate_profile *p;
    int rc = eng_tables_rate(c->rate_profile, c->rate_profile_series, &p, msg, sizeof msg);
    if (rc == -2 && !c->rate_profile_series[0]) return 0;
    if (rc) {
      seterr(err, errlen, "%s", msg);
      return -1;
    }
    c->rate_table = p;
  }
  return 0;
}

static int set_text(eng_config *c, const eng_setting *s, const char *value, char *err,
                    size_t errlen) {
  while (isspace((unsigned char)*value)) value++;
  size_t n = strlen(value);
  while (n && isspace((unsigned char)value[n - 1])) n--;
  if (n == 4 && !strncmp(value, "none", 4)) n = 0;
  if (n >= ENG_TEXT_MAX) {
    seterr(err, errlen, "%s: at most %d bytes, got %zu", s->key, ENG_TEXT_MAX - 1, n);
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f) {
      seterr(err, errlen, "%s: control characters are not allowed", s->key);
      return -1;
    }
  char *field = (char *)c + s->offset, old[ENG_TEXT_MAX];
  memcpy(old, field, ENG_TEXT_MAX);
  memset(field, 0, ENG_TEXT_MAX); /* zero-filled, so equal settings compare equal */
  memcpy(field, value, n);
  if (load_tables(c, s->key, err, errlen)) {
    memcpy(field, old, ENG_TEXT_MAX);
    char ignore[8];
    load_tables(c, s->key, ignore, sizeof ignore); /* the tables of the old value */
    return -1;
  }
  return 0;
}

/* The first word of value (blanks around it skipped) into word; 1 when
 * nothing follows it, as an enum or preset name must stand alone. */
static int one_word(const char *value, char *word, size_t len) {
  size_t n = 0;
  while (isspace((unsigned char)*value)) value++;
  while (value[n] && !isspace((unsigned char)value[n]) && n < len - 1) {
    word[n] = value[n];
    n++;
  }
  word[n] = 0;
  while (isspace((unsigned char)value[n])) n++;
  return !value[n];
}

/* Parses value into field, the storage of setting s (its key spelt key in
 * messages): every type but presets and text, which need the whole
 * configuration (eng_config_set). Call graphs store a service's or an
 * edge's settings through this too (graph_config.c). */
int eng__setting_parse(const eng_setting *s, const char *key, void *field_p, const char *value,
                       char *err, size_t errlen) {
  char *field = field_p;
  double v;
  char names[256];
  switch (s->type) {
  case ENG_SET_ENUM: {
    char word[64];
    int one = one_word(value, word, sizeof word);
    for (int i = 0; s->names[i] && one; i++)
      if (!strcmp(word, s->names[i])) {
        *(int32_t *)field = i;
        return 0;
      }
    describe_names(s->names, names, sizeof names);
    seterr(err, errlen, "%s: must be one of %s, got '%s'", key, names, value);
    return -1;
  }
  case ENG_SET_WINDOWS:
    return parse_windows(value, (eng_windows *)field, err, errlen, key);
  case ENG_SET_FLAGS:
    return parse_flags(s, value, (int32_t *)field, err, errlen);
  case ENG_SET_TEXT:
  case ENG_SET_PRESET:
    seterr(err, errlen, "%s: cannot be set here", key);
    return -1;
  default:
    break;
  }
  int allow_inf = s->type == ENG_SET_DOUBLE_INF;
  if (parse_double(value, allow_inf, &v)) {
    seterr(err, errlen, "%s: expected a %s%s, got '%s'", key,
           s->type == ENG_SET_INT || s->type == ENG_SET_INT64 ? "whole number" : "number",
           allow_inf ? " or inf" : "", value);
    return -1;
  }
  if (!isinf(v) && (v < s->min || v > s->max)) {
    /* BIG means "no real upper bound": name the bound that was crossed. */
    if (s->max >= BIG && v < s->min)
      seterr(err, errlen, "%s: must be >= %g%s, got %s", key, s->min, allow_inf ? " or inf" : "",
             value);
    else
      seterr(err, errlen, "%s: must be between %g and %g%s, got %s", key, s->min, s->max,
             allow_inf ? " or inf" : "", value);
    return -1;
  }
  if ((s->type == ENG_SET_INT || s->type == ENG_SET_INT64) && v != floor(v)) {
    seterr(err, errlen, "%s: expected a whole number, got '%s'", key, value);
    return -1;
  }
  switch (s->type) {
  case ENG_SET_INT: *(int32_t *)field = (int32_t)v; break;
  case ENG_SET_INT64: *(int64_t *)field = (int64_t)v; break;
  default: *(double *)field = v; break;
  }
  return 0;
}

int eng__config_set_plain(eng_config *c, const char *key, const char *value, char *err,
                          size_t errlen) {
  const eng_setting *s = eng__settings_find_plain(key);
  if (!s) {
    const char *sug = eng_settings_suggest(key);
    if (sug)
      seterr(err, errlen, "unknown setting '%s' (did you mean '%s'?)", key, sug);
    else
      seterr(err, errlen, "unknown setting '%s' (see 'stormsweep sim --list-settings')", key);
    return -1;
  }
  if (s->type == ENG_SET_TEXT) return set_text(c, s, value, err, errlen);
  if (s->type != ENG_SET_PRESET)
    return eng__setting_parse(s, key, (char *)c + s->offset, value, err, errlen);
  char word[64], names[256];
  int one = one_word(value, word, sizeof word);
  /* "custom" is what get reports for hand-made policy settings, not a
   * preset: taken as "change nothing" it would run whatever the other
   * settings say under a name that promises something else. */
  if (one && !strcmp(word, "custom")) {
    seterr(err, errlen,
           "%s: 'custom' is not a preset (it is how settings changed one by one are "
           "reported): choose naive or guarded, or set budget_ratio, backoff, "
           "backoff_base_ms, backoff_cap_ms and deadline_drop themselves",
           key);
    return -1;
  }
  for (int i = 0; s->names[i] && one; i++)
    if (!strcmp(word, s->names[i])) return apply_preset(c, i);
  describe_names(s->names, names, sizeof names);
  seterr(err, errlen, "%s: must be one of %s, got '%s'", key, names, value);
  return -1;
}

static void format_double(double v, char *buf, size_t len) {
  if (isinf(v))
    snprintf(buf, len, "inf");
  else
    snprintf(buf, len, "%.17g", v);
  /* Prefer the short form when it round-trips. */
  char shortbuf[64];
  snprintf(shortbuf, sizeof shortbuf, "%g", v);
  /* memcpy, not snprintf: with buf inlined, gcc's -Wformat-truncation
   * (an error under -Werror in the sanitizer build) sees 63 bytes into a
   * smaller buffer; the length check makes the copy exact. */
  size_t n = strlen(shortbuf);
  if (!isinf(v) && strtod(shortbuf, NULL) == v && n < len) memcpy(buf, shortbuf, n + 1);
}

/* Formats field, the storage of setting s, as eng__setting_parse reads it
 * (every type but presets, which have no storage). */
void eng__setting_format(const eng_setting *s, const void *field_p, char *buf, size_t len) {
  const char *field = field_p;
  switch (s->type) {
  case ENG_SET_INT: snprintf(buf, len, "%d", (int)*(const int32_t *)field); break;
  case ENG_SET_INT64: snprintf(buf, len, "%lld", (long long)*(const int64_t *)field); break;
  case ENG_SET_DOUBLE:
  case ENG_SET_DOUBLE_INF: format_double(*(const double *)field, buf, len); break;
  case ENG_SET_ENUM: snprintf(buf, len, "%s", s->names[*(const int32_t *)field]); break;
  case ENG_SET_FLAGS: format_flags(s, *(const int32_t *)field, buf, len); break;
  case ENG_SET_TEXT: snprintf(buf, len, "%s", *field ? field : "none"); break;
  case ENG_SET_PRESET: snprintf(buf, len, "custom"); break;
  case ENG_SET_WINDOWS: {
    const eng_windows *w = (const eng_windows *)field;
    size_t used = 0;
    buf[0] = 0;
    if (!w->count) snprintf(buf, len, "none");
    for (int i = 0; i < w->count && used < len; i++) {
      char a[40], b[40];
      format_double(w->w[i].start_ms, a, sizeof a);
      format_double(w->w[i].duration_ms, b, sizeof b);
      used += (size_t)snprintf(buf + used, len - used, "%s%s+%s", i ? " " : "", a, b);
    }
    break;
  }
  }
}

int eng__config_get_plain(const eng_config *c, const char *key, char *buf, size_t len) {
  const eng_setting *s = eng__settings_find_plain(key);
  if (!s || !len) return -1;
  if (s->type == ENG_SET_PRESET) {
    /* A preset has no state of its own: report the name whose settings match. */
    const char *name = "custom";
    for (int i = 0; s->names[i] && !strcmp(name, "custom"); i++)
      if (preset_matches(c, i)) name = s->names[i];
    snprintf(buf, len, "%s", name);
    return 0;
  }
  eng__setting_format(s, (const char *)c + s->offset, buf, len);
  return 0;
}

/* The number of field, the storage of setting s, for tables: enums give
 * their index, windows the first start (NaN when none), text NaN. */
double eng__setting_number(const eng_setting *s, const void *field_p) {
  const char *field = field_p;
  switch (s->type) {
  case ENG_SET_INT:
  case ENG_SET_ENUM:
  case ENG_SET_FLAGS: return *(const int32_t *)field; /* flags: the bit set */
  case ENG_SET_INT64: return (double)*(const int64_t *)field;
  case ENG_SET_TEXT:
  case ENG_SET_PRESET: return NAN;
  case ENG_SET_DOUBLE:
  case ENG_SET_DOUBLE_INF: return *(const double *)field;
  case ENG_SET_WINDOWS: {
    const eng_windows *w = (const eng_windows *)field;
    return w->count ? w->w[0].start_ms : NAN;
  }
  }
  return NAN;
}

double eng__config_number_plain(const eng_config *c, const char *key) {
  const eng_setting *s = eng__settings_find_plain(key);
  if (!s) return NAN;
  if (s->type == ENG_SET_PRESET) {
    char buf[32];
    eng__config_get_plain(c, key, buf, sizeof buf);
    return !strcmp(buf, "naive") ? 0 : !strcmp(buf, "guarded") ? 1 : NAN;
  }
  return eng__setting_number(s, (const char *)c + s->offset);
}

int32_t eng_config_ticks(const eng_config *c) {
  double t = floor(c->horizon_ms / c->tick_ms + 0.5);
  return t > 1e8 ? -1 : (int32_t)t;
}

double eng_config_capacity_rps(const eng_config *c) {
  return (double)c->shards * c->workers * 1000.0 / c->service_mean_ms;
}

double eng_config_arrival_rps(const eng_config *c) {
  if (c->client_model == ENG_CLIENT_CLOSED && c->concurrency > 0)
    return (double)c->concurrency * c->clients * 1000.0 / (c->service_mean_ms + c->think_ms);
  if (c->rate_profile[0] && c->rate_table) return c->rate_table->peak_rps * c->rate_scale;
  return c->rate_rps > 0 ? c->rate_rps : c->load * eng_config_capacity_rps(c);
}

/* With nothing queued a user's cycle is one service time plus one think
 * time, so N users offer N / (S + Z) requests per ms: N is chosen to make
 * that the open model's rate. */
int64_t eng_config_users(const eng_config *c) {
  if (c->concurrency > 0) return (int64_t)c->concurrency * c->clients;
  double rps = c->rate_rps > 0 ? c->rate_rps : c->load * eng_config_capacity_rps(c);
  double n = floor(rps * (c->service_mean_ms + c->think_ms) / 1000.0 + 0.5);
  return n < 1 ? 1 : n > 1e9 ? 1000000000 : (int64_t)n;
}

static void windows_extent(const eng_windows *w, double *first, double *last) {
  for (int i = 0; i < w->count; i++) {
    if (w->w[i].duration_ms <= 0) continue;
    if (w->w[i].start_ms < *first) *first = w->w[i].start_ms;
    if (w->w[i].start_ms + w->w[i].duration_ms > *last)
      *last = w->w[i].start_ms + w->w[i].duration_ms;
  }
}

/* Faults that disturb the cluster. A hot key is a fault too: bounded load is
 * studied by how the cluster copes with the skew and its end. */
static void faults_extent(const eng_config *c, double *first, double *last) {
  *first = INFINITY;
  *last = 0;
  windows_extent(&c->surge, first, last);
  windows_extent(&c->brownout, first, last);
  windows_extent(&c->crash, first, last);
  windows_extent(&c->outage, first, last);
  windows_extent(&c->hot_key, first, last);
  for (int k = 0; k < c->graph.n_services; k++) {
    windows_extent(&c->graph.svc[k].brownout, first, last);
    windows_extent(&c->graph.svc[k].outage, first, last);
  }
}

double eng_config_fault_clear_ms(const eng_config *c) {
  double first, last;
  faults_extent(c, &first, &last);
  return last;
}

double eng_config_fault_start_ms(const eng_config *c) {
  double first, last;
  faults_extent(c, &first, &last);
  return isinf(first) ? c->horizon_ms : first;
}
