/*
 * metrics.c — names and meanings of the per-tick metrics and outcomes, and
 * the derivation of run seeds: the vocabulary every layer (CLI, HDF5 files,
 * analysis) shares with the engine.
 */
#include <xxhash.h>

#include "eng.h"

/* The last field: 1 for a count of the tick's events (a row of several
 * ticks holds their sum), 0 for a level (such a row holds its last tick's). */
static const eng_metric_info metric_info[ENG_M_COUNT] = {
    {"new_requests", "requests/tick", "requests created by the clients (open-loop source or closed-loop users)", 1},
    {"attempts", "attempts/tick", "attempts sent to the router (first tries and retries)", 1},
    {"retries", "attempts/tick", "attempts that were retries (or hedged copies: every attempt after a request's first)", 1},
    {"successes", "attempts/tick", "attempts answered within the client timeout (goodput)", 1},
    {"timeouts", "attempts/tick", "attempts abandoned by their client at the timeout (or at their request's deadline)", 1},
    {"rejected_queue_full", "attempts/tick", "attempts rejected by a full shard queue", 1},
    {"rejected_router", "attempts/tick", "attempts refused by the router (no shard under its cap)", 1},
    {"rejected_breaker", "attempts/tick", "attempts failed fast by an open circuit breaker or the client's concurrency limit", 1},
    {"rejected_budget", "attempts/tick", "retries refused by the client's retry limiter (sre_adaptive: any attempt)", 1},
    {"shed", "attempts/tick", "queued attempts dropped by shards (controlled delay or deadline drop)", 1},
    {"lost", "attempts/tick", "attempts lost to a crashed shard or a network outage", 1},
    {"failed_requests", "requests/tick", "requests that ended without a success (deadline exceeded included)", 1},
    {"wasted", "attempts/tick", "completions of attempts whose client had already given up", 1},
    {"queue_depth", "attempts", "attempts waiting in shard queues, all shards", 0},
    {"max_shard_queue", "attempts", "the longest shard queue", 0},
    {"in_flight", "attempts", "attempts admitted to a shard and not finished", 0},
    {"hops", "hops/tick", "router hops taken by this tick's admissions", 1},
    {"open_breakers", "breakers", "(client, shard) circuit breakers open or half-open", 0},
    {"budget_tokens", "tokens", "retry limiter level, all clients: whole budget tokens left (docs/clients.md for each limiter)", 0},
    {"latency_p50_us", "us", "median latency of the requests that ended in this tick's latency window (first send to final answer); -1: none ended", 0},
    {"latency_p90_us", "us", "90th percentile latency of the requests that ended in this tick's latency window; -1: none ended", 0},
    {"latency_p99_us", "us", "99th percentile latency of the requests that ended in this tick's latency window; -1: none ended", 0},
    {"latency_p999_us", "us", "99.9th percentile latency of the requests that ended in this tick's latency window; -1: none ended", 0},
    {"error_rate_ppm", "1e-6", "failed / ended requests in this tick's latency window, parts per million; -1: none ended", 0},
};

const double eng_user_quantiles[ENG_USER_QUANTILES] = {0.5, 0.9, 0.99, 0.999};

const eng_metric_info *eng_metric_get_info(eng_metric m) {
  return (unsigned)m < ENG_M_COUNT ? &metric_info[m] : NULL;
}

static const eng_metric_info lat_info[ENG_L_COUNT] = {
    {"requests_ended", "requests", "requests that ended in the window (answered or failed)", 1},
    {"requests_failed", "requests", "requests that ended in the window without a success", 1},
    {"latency_p50", "ms", "median latency of the requests that ended in the window", 0},
    {"latency_p90", "ms", "90th percentile latency of the requests that ended in the window", 0},
    {"latency_p99", "ms", "99th percentile latency of the requests that ended in the window", 0},
    {"latency_p999", "ms", "99.9th percentile latency of the requests that ended in the window", 0},
    {"error_rate", "1", "failed / finished requests in the window", 0},
    {"success_rate", "1", "answered / finished requests in the window", 0},
};

const eng_metric_info *eng_lat_series_info(eng_lat_series s) {
  return (unsigned)s < ENG_L_COUNT ? &lat_info[s] : NULL;
}

const char *eng_status_name(eng_status s) {
  static const char *const names[ENG_ST_COUNT] = {"ok",      "timeout", "deadline_exceeded",
                                                  "rejected", "shed",   "breaker", "budget"};
  return (unsigned)s < ENG_ST_COUNT ? names[s] : "unknown";
}

const char *eng_phase_name(int phase) {
  static const char *const names[ENG_PHASE_COUNT] = {"baseline", "during", "after"};
  return (unsigned)phase < ENG_PHASE_COUNT ? names[phase] : "unknown";
}

const char *eng_outcome_name(eng_outcome o) {
  switch (o) {
  case ENG_OUTCOME_RECOVERED: return "recovered";
  case ENG_OUTCOME_SLOW: return "slow";
  case ENG_OUTCOME_METASTABLE: return "metastable";
  case ENG_OUTCOME_COLLAPSED: return "collapsed";
  case ENG_OUTCOME_UNDETERMINED: return "undetermined";
  }
  return "unknown";
}

uint64_t eng_seed_derive(uint64_t master, uint64_t point, uint64_t replicate) {
  unsigned char buf[24];
  uint64_t v[3] = {master, point, replicate};
  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 8; b++) buf[i * 8 + b] = (unsigned char)(v[i] >> (8 * b));
  return XXH3_64bits(buf, sizeof buf);
}

