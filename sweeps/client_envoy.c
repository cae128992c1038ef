/*
 * client_envoy.c — an Envoy route (its RouteAction: retry_policy, timeout,
 * hedge_policy) with its cluster's circuit_breakers mapped onto engine
 * settings (client_import.h, docs/client-import.md). Every field of
 * RetryPolicy, HedgePolicy and CircuitBreakers is either mapped, or named
 * in a note saying why it is not; any other field is an error, or a note
 * with SWP_CLIENT_LENIENT.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "client_doc.h"

#define F(x) (1u << ENG_FAIL_##x)

/* ---- Envoy retry_on conditions ---------------------------------------------
 * What each condition retries (router's RetryStateImpl): 5xx and
 * gateway-error retry a 503 (a full queue, a shed), a reset or connection
 * failure, and a per-try timeout (Envoy retries those only under these
 * two); reset, reset-before-request and connect-failure retry an attempt
 * lost to a crashed shard or an outage; refused-stream one that a server
 * at its limit refused (a full queue); retriable-status-codes the codes it
 * lists (503: a full queue or a shed). Never retried: the router's refusal
 * (Envoy's own "no healthy upstream" reply), an open breaker's refusal and
 * an overflow ("we never retry if the reset reason is overflow"). */

static const struct envoy_cond {
  const char *name;
  unsigned fails;
  const char *why; /* when fails is 0 */
} envoy_conds[] = {
    {"5xx", F(TIMEOUT) | F(REJECTED) | F(SHED) | F(LOST), NULL},
    {"gateway-error", F(TIMEOUT) | F(REJECTED) | F(SHED) | F(LOST), NULL},
    {"reset", F(LOST), NULL},
    {"reset-before-request", F(LOST), NULL},
    {"connect-failure", F(LOST), NULL},
    {"refused-stream", F(REJECTED), NULL},
    {"retriable-status-codes", 0, NULL}, /* from retriable_status_codes */
    {"retriable-4xx", 0, "409 Conflict, which stormsweep's servers never answer"},
    {"retriable-headers", 0, "response headers are not modelled"},
    {"envoy-ratelimited", 0, "no rate-limiting upstream Envoy is modelled"},
    {"http3-post-connect-failure", 0, "HTTP/3 is not modelled"},
    {"cancelled", 0, "gRPC CANCELLED: no failure stormsweep produces"},
    {"deadline-exceeded", 0,
     "an upstream's gRPC DEADLINE_EXCEEDED, which stormsweep's servers never send (Envoy "
     "retries its own per-try timeout only under 5xx or gateway-error)"},
    {"internal", 0, "gRPC INTERNAL: no failure stormsweep produces"},
    {"resource-exhausted", F(REJECTED) | F(SHED), NULL},
    {"unavailable", F(REJECTED) | F(SHED), NULL},
    {NULL, 0, NULL}};

/* retriable_status_codes: what the listed HTTP codes retry (503 only). */
static int envoy_status_codes(ictx *c, json_t *rp, int listed, unsigned *mask) {
  char shown[96], raw[64];
  json_t *v;
  FIELD(rp, "retriable_status_codes", v, shown);
  if (!v) {
    if (listed)
      swp__cl_note(c, "retry_on",
                   "retriable-status-codes names no code (retriable_status_codes is not given)");
    return 0;
  }
  if (!json_is_array(v))
    return swp__cl_fail(c, shown, "expected a list of HTTP status codes, got %s",
                        swp__cl_type_name(v));
  size_t i, old = swp__cl_path_push(c, shown);
  json_t *code;
  json_array_foreach(v, i, code) {
    long long k;
    size_t o2 = swp__cl_path_index(c, i);
    if (swp__cl_get_int(c, code, NULL, 100, 599, &k, raw, sizeof raw)) return -1;
    if (k == 503)
      *mask |= F(REJECTED) | F(SHED);
    else
      swp__cl_note(c, NULL, "%lld retries nothing: stormsweep's servers answer only 503", k);
    swp__cl_path_pop(c, o2);
  }
  swp__cl_path_pop(c, old);
  if (!listed)
    swp__cl_note(c, shown, "ignored: retry_on does not name retriable-status-codes");
  return 0;
}

/* retry_on: "5xx,reset,..." into the failures it retries. */
static int envoy_retry_on(ictx *c, json_t *rp) {
  char shown[96];
  json_t *v;
  FIELD(rp, "retry_on", v, shown);
  if (!v)
    return swp__cl_entry(c, "retry_on", "none", NULL, "",
                         "no retry_on: Envoy retries only the conditions it lists");
  if (!json_is_string(v))
    return swp__cl_fail(c, shown, "expected a string such as \"5xx,reset\", got %s",
                        swp__cl_type_name(v));
  const char *s = json_string_value(v);
  unsigned mask = 0;
  int listed = 0;
  char raw[160] = "", note[400] = "", f[96];
  size_t used = 0, nused = 0;
  while (*s) {
    while (*s == ',' || isspace((unsigned char)*s)) s++;
    size_t n = 0;
    while (s[n] && s[n] != ',') n++;
    size_t e = n;
    while (e && isspace((unsigned char)s[e - 1])) e--;
    if (!e) break;
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)(e < 63 ? e : 63), s);
    s += n;
    const struct envoy_cond *k = NULL;
    const char *names[32];
    size_t nn = 0;
    for (const struct envoy_cond *q = envoy_conds; q->name; q++) {
      names[nn++] = q->name;
      if (!strcmp(word, q->name)) k = q;
    }
    if (!k) {
      const char *best = eng_suggest(word, names, nn);
      char hint[96] = "";
      if (best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
      if (!(c->flags & SWP_CLIENT_LENIENT))
        return swp__cl_fail(c, shown, "unknown retry_on condition '%s'%s", word, hint);
      swp__cl_note(c, shown, "unknown retry_on condition '%s' ignored%s", word, hint);
      continue;
    }
    if (used) swp__cl_cat(raw, sizeof raw, &used, ",");
    swp__cl_cat(raw, sizeof raw, &used, k->name);
    char part[240];
    if (!strcmp(k->name, "retriable-status-codes")) {
      listed = 1;
      continue;
    }
    mask |= k->fails;
    if (k->fails) {
      swp__cl_fails_text(k->fails, f, sizeof f);
      snprintf(part, sizeof part, "%s%s retries %s", nused ? "; " : "", k->name, f);
    } else {
      snprintf(part, sizeof part, "%s%s retries nothing (%s)", nused ? "; " : "", k->name, k->why);
    }
    swp__cl_cat(note, sizeof note, &nused, part);
  }
  unsigned codes = 0;
  if (envoy_status_codes(c, rp, listed, &codes)) return -1;
  if (listed) {
    char part[240];
    swp__cl_fails_text(codes, f, sizeof f);
    snprintf(part, sizeof part, "%sretriable-status-codes retries %s", nused ? "; " : "", f);
    swp__cl_cat(note, sizeof note, &nused, part);
    mask |= codes;
  }
  if (nused) swp__cl_note(c, shown, "%s", note);
  swp__cl_fails_text(mask, f, sizeof f);
  return swp__cl_entry(c, "retry_on", f, shown, raw, NULL);
}

/* ---- Envoy route: retry_policy, timeout, hedge_policy ---------------------- */

/* retry_back_off: base_interval required in it, max_interval 10 x base by
 * default; without it base 25 ms (router filter docs). backoff = envoy is
 * Envoy's JitteredExponentialBackOffStrategy in whole milliseconds. */
static int map_envoy_backoff(ictx *c, json_t *rp) {
  char shown[96];
  json_t *v;
  FIELD(rp, "retry_back_off", v, shown);
  if (swp__cl_entry(c, "backoff", "envoy", NULL, "",
                    "Envoy's jittered exponential back-off, whole ms"))
    return -1;
  if (!v) {
    if (swp__cl_entry(c, "backoff_base_ms", "25", NULL, "",
                      "no retry_back_off: Envoy's default 25 ms"))
      return -1;
    return swp__cl_entry(c, "backoff_cap_ms", "250", NULL, "",
                         "no retry_back_off: Envoy's default 10 x base_interval");
  }
  if (swp__cl_want_object(c, v, shown)) return -1;
  size_t o = swp__cl_path_push(c, shown);
  static const char *const bo_read[] = {"base_interval", "max_interval", NULL};
  if (swp__cl_check_fields(c, v, "an Envoy RetryBackOff", bo_read, NULL)) return -1;
  char bshown[96], mshown[96], rb[64], rm[64];
  json_t *b, *mx;
  double base, cap;
  FIELD(v, "base_interval", b, bshown);
  if (!b) return swp__cl_fail(c, bshown, "missing (required in retry_back_off, e.g. \"0.025s\")");
  if (swp__cl_get_duration(c, b, bshown, 0, &base, rb, sizeof rb)) return -1;
  if (swp__cl_entry_num(c, "backoff_base_ms", base, bshown, rb, NULL)) return -1;
  FIELD(v, "max_interval", mx, mshown);
  if (mx) {
    if (swp__cl_get_duration(c, mx, mshown, 0, &cap, rm, sizeof rm)) return -1;
    if (cap < base)
      return swp__cl_fail(c, mshown, "must be at least base_interval (%s), got \"%s\"", rb, rm);
    if (swp__cl_entry_num(c, "backoff_cap_ms", cap, mshown, rm, NULL)) return -1;
  } else if (swp__cl_entry_num(c, "backoff_cap_ms", 10 * base, NULL, "",
                               "max_interval not given: Envoy's default 10 x base_interval")) {
    return -1;
  }
  swp__cl_path_pop(c, o);
  return 0;
}

/* What the route leaves for the timeouts. */
typedef struct envoy_route {
  long long retries;
  int per_try;
  double per_try_ms;
  char per_try_src[256], per_try_raw[64];
} envoy_route;

static int map_envoy_policy(ictx *c, json_t *rp, envoy_route *r) {
  static const char *const rp_read[] = {"num_retries", "per_try_timeout", "retry_on",
                                        "retry_back_off", "retriable_status_codes", NULL};
  static const swp__cl_known rp_known[] = {
      {"retry_priority", "which priority a retry goes to: not modelled"},
      {"retry_host_predicate", "Envoy may send a retry to another host; in stormsweep a retry "
                               "goes where its key is routed"},
      {"host_selection_retry_max_attempts", "Envoy may send a retry to another host; in "
                                            "stormsweep a retry goes where its key is routed"},
      {"retry_options_predicates", "not modelled"},
      {"retriable_headers", "response headers are not modelled"},
      {"retriable_request_headers", "request headers are not modelled: every request may be "
                                    "retried"},
      {"rate_limited_retry_back_off", "rate-limit reset headers are not modelled: "
                                      "retry_back_off applies"},
      {"per_try_idle_timeout", "not modelled: per_try_timeout is the attempt's timeout"},
      {NULL, NULL}};
  if (swp__cl_check_fields(c, rp, "an Envoy RetryPolicy", rp_read, rp_known)) return -1;
  char shown[96], raw[64];
  json_t *v;
  FIELD(rp, "num_retries", v, shown); /* 1 by default (RetryPolicy docs) */
  r->retries = 1;
  if (v) {
    if (swp__cl_get_int(c, v, shown, 0, UINT32_MAX, &r->retries, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "max_retries", (double)r->retries, shown, raw, NULL)) return -1;
  } else if (swp__cl_entry(c, "max_retries", "1", NULL, "",
                           "num_retries not given: Envoy's default 1")) {
    return -1;
  }
  if (envoy_retry_on(c, rp)) return -1;
  if (map_envoy_backoff(c, rp)) return -1;
  FIELD(rp, "per_try_timeout", v, shown);
  r->per_try = v != NULL;
  if (v) {
    if (swp__cl_get_duration(c, v, shown, 0, &r->per_try_ms, r->per_try_raw,
                             sizeof r->per_try_raw))
      return -1;
    swp__cl_path_of(c, shown, r->per_try_src, sizeof r->per_try_src);
  }
  return 0;
}

/* hedge_policy.hedge_on_per_try_timeout: a per-try timeout sends another
 * request without resetting the first (and is always retried while retries
 * are left): hedges one per_try_timeout apart, up to num_retries + 1 in
 * flight, with no per-attempt timeout. Returns 1 when it applies. */
static int map_envoy_hedge(ictx *c, json_t *hp, const char *shown, const envoy_route *r,
                           int deadline) {
  if (!hp) return 0;
  if (swp__cl_want_object(c, hp, shown)) return -1;
  size_t o = swp__cl_path_push(c, shown);
  static const char *const hp_read[] = {"hedge_on_per_try_timeout", NULL};
  static const swp__cl_known hp_known[] = {
      {"initial_requests", "not implemented by Envoy (its API says so): one request first"},
      {"additional_request_chance", "not implemented by Envoy (its API says so)"},
      {NULL, NULL}};
  if (swp__cl_check_fields(c, hp, "an Envoy HedgePolicy", hp_read, hp_known)) return -1;
  char hshown[96];
  json_t *v;
  int on = 0;
  FIELD(hp, "hedge_on_per_try_timeout", v, hshown);
  if (v && swp__cl_get_bool(c, v, hshown, &on)) return -1;
  int applies = 0;
  if (on && !r->per_try) {
    swp__cl_note(c, hshown, "no effect without retry_policy.per_try_timeout");
  } else if (on && !deadline) {
    swp__cl_note(c, hshown, "not applied: with the route timeout disabled a hedged attempt "
                            "would wait forever; per_try_timeout stays the attempt's timeout");
  } else if (on && r->retries < 1) {
    swp__cl_note(c, hshown, "no effect with num_retries 0");
  } else if (on) {
    long long n = r->retries + 1;
    if (n > ENG_MAX_HEDGE) {
      swp__cl_note(c, hshown, "%lld requests in flight capped at stormsweep's %d", n,
                   ENG_MAX_HEDGE);
      n = ENG_MAX_HEDGE;
    }
    char val[32];
    snprintf(val, sizeof val, "%lld", n);
    if (swp__cl_entry(c, "hedge_attempts", val, NULL, "",
                      "hedge_on_per_try_timeout: up to num_retries + 1 requests in flight"))
      return -1;
    snprintf(val, sizeof val, "%.10g", r->per_try_ms);
    if (swp__cl_entry_from(c, "hedge_delay_ms", val, r->per_try_src, r->per_try_raw)) return -1;
    if (swp__cl_entry(c, "hedge_cancel", "on", NULL, "",
                      "Envoy resets the other requests when one answers"))
      return -1;
    swp__cl_note(c, hshown, "Envoy waits the retry back-off before it sends the hedge; "
                            "stormsweep's hedges do not");
    applies = 1;
  }
  swp__cl_path_pop(c, o);
  return applies;
}

/* A route action: retry_policy (required), timeout, hedge_policy. */
static int map_envoy_action(ictx *c, json_t *act, int is_root) {
  static const char *const root_read[] = {"retry_policy", "timeout", "hedge_policy",
                                          "circuit_breakers", NULL};
  static const char *const act_read[] = {"retry_policy", "timeout", "hedge_policy", NULL};
  static const swp__cl_known act_known[] = {
      {"cluster", NULL}, {"cluster_header", NULL}, {"weighted_clusters", NULL},
      {"cluster_specifier_plugin", NULL}, {"inline_cluster_specifier_plugin", NULL},
      {"cluster_not_found_response_code", NULL}, {"metadata_match", NULL},
      {"prefix_rewrite", NULL}, {"regex_rewrite", NULL}, {"path_rewrite_policy", NULL},
      {"host_rewrite_literal", NULL}, {"auto_host_rewrite", NULL}, {"host_rewrite_header", NULL},
      {"host_rewrite_path_regex", NULL}, {"append_x_forwarded_host", NULL},
      {"idle_timeout", "a stream idle timeout: not modelled"}, {"early_data_policy", NULL},
      {"retry_policy_typed_config", "not modelled: retry_policy is read"},
      {"request_mirror_policies", "mirrored traffic is not modelled"},
      {"priority", "routing priority: not modelled (the DEFAULT circuit-breaker threshold "
                   "applies)"},
      {"rate_limits", NULL}, {"include_vh_rate_limits", NULL}, {"hash_policy", NULL},
      {"cors", NULL},
      {"max_grpc_timeout", "not modelled: the route timeout is the deadline, not the client's "
                           "grpc-timeout"},
      {"grpc_timeout_offset", "not modelled: the route timeout is the deadline"},
      {"upgrade_configs", NULL}, {"internal_redirect_policy", NULL},
      {"internal_redirect_action", NULL}, {"max_internal_redirects", NULL},
      {"max_stream_duration", "not modelled: the route timeout is the deadline"},
      {NULL, NULL}};
  /* circuit_breakers is the cluster's, beside a route action at the top level */
  if (swp__cl_check_fields(c, act, "an Envoy route action", is_root ? root_read : act_read,
                           act_known))
    return -1;
  char shown[96], tshown[96], hshown[96], raw[64];
  json_t *rp, *t, *hp;
  FIELD(act, "retry_policy", rp, shown);
  if (!rp)
    return swp__cl_fail(c, shown, "missing: an Envoy client config needs the route's retry_policy");
  if (swp__cl_want_object(c, rp, shown)) return -1;
  envoy_route r;
  memset(&r, 0, sizeof r);
  size_t old = swp__cl_path_push(c, shown);
  if (map_envoy_policy(c, rp, &r)) return -1;
  swp__cl_path_pop(c, old);
  /* timeout: the whole request, retries included; 15 s by default, 0 off */
  FIELD(act, "timeout", t, tshown);
  double ms = 15000;
  if (t) {
    if (swp__cl_get_duration(c, t, tshown, 1, &ms, raw, sizeof raw)) return -1;
    if (ms > 0 ? swp__cl_entry_num(c, "deadline_ms", ms, tshown, raw, NULL)
               : swp__cl_entry(c, "deadline_ms", "none", tshown, raw, NULL))
      return -1;
    if (!(ms > 0)) swp__cl_note(c, tshown, "0s disables Envoy's route timeout: no deadline");
  } else if (swp__cl_entry(c, "deadline_ms", "15000", NULL, "",
                           "no route timeout: Envoy's default 15 s")) {
    return -1;
  }
  int deadline = ms > 0;
  FIELD(act, "hedge_policy", hp, hshown);
  int hedged = map_envoy_hedge(c, hp, hshown, &r, deadline);
  if (hedged < 0) return -1;
  if (hedged)
    return swp__cl_entry(c, "timeout_ms", "none", NULL, "",
                         "hedge_on_per_try_timeout: a per-try timeout sends a hedge and ends "
                         "no attempt");
  if (r.per_try) {
    char val[32];
    snprintf(val, sizeof val, "%.10g", r.per_try_ms);
    return swp__cl_entry_from(c, "timeout_ms", val, r.per_try_src, r.per_try_raw);
  }
  if (deadline)
    return swp__cl_entry(c, "timeout_ms", "none", NULL, "",
                         "no per_try_timeout: an attempt waits for the route timeout");
  swp__cl_note(c, "retry_policy",
               "neither per_try_timeout nor a route timeout: the scenario's timeout_ms stays "
               "as the time a client waits for an attempt");
  return 0;
}

/* ---- Envoy circuit breakers -------------------------------------------------- */

/* retry_budget {budget_percent {value} 20 %, min_retry_concurrency 3}. */
static int map_envoy_budget(ictx *c, json_t *rb, const char *rshown) {
  char raw[64];
  if (swp__cl_want_object(c, rb, rshown)) return -1;
  size_t o3 = swp__cl_path_push(c, rshown);
  static const char *const rb_read[] = {"budget_percent", "min_retry_concurrency", NULL};
  if (swp__cl_check_fields(c, rb, "an Envoy RetryBudget", rb_read, NULL)) return -1;
  json_t *bp, *mrc;
  char bshown[96], mshown[96];
  FIELD(rb, "budget_percent", bp, bshown);
  if (swp__cl_entry(c, "retry_limiter", "envoy", NULL, "", "retry_budget is present")) return -1;
  if (bp) {
    if (swp__cl_want_object(c, bp, bshown)) return -1;
    size_t o4 = swp__cl_path_push(c, bshown);
    static const char *const pct_read[] = {"value", NULL};
    if (swp__cl_check_fields(c, bp, "an Envoy Percent", pct_read, NULL)) return -1;
    json_t *val;
    char vshown[96];
    double pct;
    FIELD(bp, "value", val, vshown);
    if (!val) return swp__cl_fail(c, vshown, "missing (a percentage from 0 to 100)");
    if (swp__cl_get_num(c, val, vshown, 0, 1, 100, &pct, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "envoy_budget_percent", pct, vshown, raw, NULL)) return -1;
    swp__cl_path_pop(c, o4);
  } else if (swp__cl_entry(c, "envoy_budget_percent", "20", NULL, "",
                           "budget_percent not given: Envoy's default 20 %")) {
    return -1;
  }
  FIELD(rb, "min_retry_concurrency", mrc, mshown);
  long long n;
  if (mrc) {
    if (swp__cl_get_int(c, mrc, mshown, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "envoy_min_retry_concurrency", (double)n, mshown, raw, NULL))
      return -1;
  } else if (swp__cl_entry(c, "envoy_min_retry_concurrency", "3", NULL, "",
                           "min_retry_concurrency not given: Envoy's default 3")) {
    return -1;
  }
  swp__cl_path_pop(c, o3);
  return 0;
}

static const char *const th_read[] = {"priority", "max_connections", "max_pending_requests",
                                      "max_requests", "max_retries", "retry_budget", NULL};
static const swp__cl_known th_known[] = {
    {"track_remaining", "statistics only"},
    {"max_connection_pools", "connection pools are not modelled"},
    {NULL, NULL}};

/* The DEFAULT-priority threshold: its retry limit (a retry_budget, else the
 * max_retries breaker, 3 by default) and its request limit. max_requests
 * (1024 by default) caps the requests in flight: max_requests_per_client.
 * max_connections and max_pending_requests limit the connection pool
 * (HTTP/1.1: max_connections requests in flight, max_pending_requests more
 * waiting), which stormsweep does not model: HTTP/2's reading, where
 * max_requests alone limits what is in flight. */
static int map_envoy_threshold(ictx *c, json_t *th) {
  char shown[96], raw[64];
  json_t *v;
  long long lim[3] = {1024, 1024, 1024};
  static const char *const lim_names[3] = {"max_connections", "max_pending_requests",
                                           "max_requests"};
  char lim_shown[3][96], lim_raw[3][64];
  int given[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) {
    FIELD(th, lim_names[k], v, lim_shown[k]);
    lim_raw[k][0] = 0;
    if (v && swp__cl_get_int(c, v, lim_shown[k], 0, UINT32_MAX, &lim[k], lim_raw[k],
                             sizeof lim_raw[k]))
      return -1;
    given[k] = v != NULL;
  }
  json_t *rb;
  char rshown[96];
  FIELD(th, "retry_budget", rb, rshown);
  FIELD(th, "max_retries", v, shown);
  if (rb) {
    if (map_envoy_budget(c, rb, rshown)) return -1;
    if (v) swp__cl_note(c, shown, "ignored: a retry_budget replaces the max_retries breaker");
  } else {
    long long n = 3;
    if (v && swp__cl_get_int(c, v, shown, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
    if (swp__cl_entry(c, "retry_limiter", "envoy", NULL, "",
                      "no retry_budget: the max_retries circuit breaker caps concurrent retries"))
      return -1;
    if (swp__cl_entry(c, "envoy_budget_percent", "0", NULL, "", "no retry_budget")) return -1;
    if (v ? swp__cl_entry_num(c, "envoy_min_retry_concurrency", (double)n, shown, raw, NULL)
          : swp__cl_entry(c, "envoy_min_retry_concurrency", "3", NULL, "",
                          "no max_retries threshold: Envoy's default 3 concurrent retries"))
      return -1;
  }
  if (lim[2] < 1) return swp__cl_fail(c, lim_shown[2], "must be at least 1 for any request to go");
  if (given[2]
          ? swp__cl_entry_num(c, "max_requests_per_client", (double)lim[2], lim_shown[2],
                              lim_raw[2], NULL)
          : swp__cl_entry(c, "max_requests_per_client", "1024", NULL, "",
                          "max_requests not given: Envoy's default 1024 requests in flight"))
    return -1;
  for (int k = 0; k < 2; k++)
    if (given[k])
      swp__cl_note(c, lim_shown[k],
                   "a connection-pool limit, not modelled: with HTTP/1.1 at most "
                   "max_connections + max_pending_requests = %lld requests could be pending; "
                   "stormsweep takes HTTP/2's reading, where max_requests alone caps them",
                   lim[0] + lim[1]);
  return 0;
}

static int map_envoy_breakers(ictx *c, json_t *cb, const char *cb_shown) {
  char shown[96];
  json_t *list = NULL, *th = NULL;
  size_t idx = 0;
  if (cb) {
    if (swp__cl_want_object(c, cb, cb_shown)) return -1;
    size_t o = swp__cl_path_push(c, cb_shown);
    static const char *const cb_read[] = {"thresholds", NULL};
    static const swp__cl_known cb_known[] = {
        {"per_host_thresholds", "per-host limits are not modelled"}, {NULL, NULL}};
    if (swp__cl_check_fields(c, cb, "Envoy's CircuitBreakers", cb_read, cb_known)) return -1;
    FIELD(cb, "thresholds", list, shown);
    if (list && !json_is_array(list))
      return swp__cl_fail(c, shown, "expected a list, got %s", swp__cl_type_name(list));
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t) {
      size_t o2 = swp__cl_path_push(c, shown);
      swp__cl_path_index(c, i);
      if (!json_is_object(t))
        return swp__cl_fail(c, NULL, "expected an object, got %s", swp__cl_type_name(t));
      if (swp__cl_check_fields(c, t, "an Envoy circuit-breaker threshold", th_read, th_known))
        return -1;
      json_t *pr;
      char pshown[96];
      FIELD(t, "priority", pr, pshown);
      if (pr && !json_is_string(pr))
        return swp__cl_fail(c, pshown, "expected DEFAULT or HIGH, got %s", swp__cl_type_name(pr));
      if (pr && strcmp(json_string_value(pr), "DEFAULT") && strcmp(json_string_value(pr), "HIGH"))
        return swp__cl_fail(c, pshown, "expected DEFAULT or HIGH");
      if (pr && !strcmp(json_string_value(pr), "HIGH"))
        swp__cl_note(c, NULL, "HIGH priority: not modelled, ignored");
      else if (th)
        swp__cl_note(c, NULL, "ignored: a second DEFAULT-priority threshold");
      else
        th = t, idx = i;
      swp__cl_path_pop(c, o2);
    }
    if (th) {
      size_t o2 = swp__cl_path_push(c, shown);
      swp__cl_path_index(c, idx);
      if (map_envoy_threshold(c, th)) return -1;
      swp__cl_path_pop(c, o2);
      swp__cl_path_pop(c, o);
      return 0;
    }
    swp__cl_path_pop(c, o);
  }
  if (swp__cl_entry(c, "retry_limiter", "envoy", NULL, "",
                    "no retry_budget: Envoy's max_retries circuit breaker caps concurrent retries"))
    return -1;
  if (swp__cl_entry(c, "envoy_budget_percent", "0", NULL, "", "no retry_budget")) return -1;
  if (swp__cl_entry(c, "envoy_min_retry_concurrency", "3", NULL, "",
                    "no max_retries threshold: Envoy's default 3 concurrent retries"))
    return -1;
  return swp__cl_entry(c, "max_requests_per_client", "1024", NULL, "",
                       "no max_requests threshold: Envoy's default 1024 requests in flight");
}

/* The file: a route action with the cluster's circuit_breakers beside it,
 * or a whole route entry (match, route: {...}) with them. */
int swp__cl_map_envoy(ictx *c, json_t *root) {
  char shown[96], cshown[96], rshown[96];
  json_t *rp, *cb, *route;
  FIELD(root, "retry_policy", rp, shown);
  FIELD(root, "route", route, rshown);
  if (rp && route)
    return swp__cl_fail(c, NULL, "has both retry_policy and route: give the route action's "
                                 "retry_policy at the top level or inside route, not both");
  if (route) {
    static const char *const entry_read[] = {"route", "circuit_breakers", NULL};
    static const swp__cl_known entry_known[] = {
        {"name", NULL}, {"match", "which requests the route takes: not modelled"},
        {"redirect", NULL}, {"direct_response", NULL}, {"filter_action", NULL},
        {"non_forwarding_action", NULL}, {"metadata", NULL}, {"decorator", NULL},
        {"typed_per_filter_config", NULL}, {"request_headers_to_add", NULL},
        {"request_headers_to_remove", NULL}, {"response_headers_to_add", NULL},
        {"response_headers_to_remove", NULL}, {"tracing", NULL},
        {"per_request_buffer_limit_bytes", NULL}, {"stat_prefix", NULL}, {NULL, NULL}};
    if (swp__cl_check_fields(c, root, "an Envoy route", entry_read, entry_known)) return -1;
    if (swp__cl_want_object(c, route, rshown)) return -1;
    size_t old = swp__cl_path_push(c, rshown);
    if (map_envoy_action(c, route, 0)) return -1;
    swp__cl_path_pop(c, old);
  } else if (map_envoy_action(c, root, 1)) {
    return -1;
  }
  FIELD(root, "circuit_breakers", cb, cshown);
  return map_envoy_breakers(c, cb, cshown);
}
