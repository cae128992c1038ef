/*
 * client_grpc.c — a gRPC service config mapped onto engine settings
 * (client_import.h, docs/client-import.md): ServiceConfig, MethodConfig,
 * RetryPolicy, HedgingPolicy and RetryThrottlingPolicy. Every field of
 * those messages is either mapped, or named in a note saying why it is not;
 * any other field is an error (a typo must not silently give the defaults),
 * or a note with SWP_CLIENT_LENIENT.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "client_doc.h"

#define F(x) (1u << ENG_FAIL_##x)

/* ---- gRPC status codes -------------------------------------------------------
 * What each code retries when it is listed (retryableStatusCodes, or
 * nonFatalStatusCodes for hedging). stormsweep's servers answer a full
 * queue and an overload shed with UNAVAILABLE — the code gRPC itself uses
 * for a server that cannot take the call, and the one an HTTP 503 becomes —
 * or, as some servers do, RESOURCE_EXHAUSTED: either code retries them.
 * UNAVAILABLE is also what the client sees when no subchannel can take the
 * pick (router) and when the connection to a crashed shard breaks (lost).
 * Never retried whatever the list: the call's deadline (DEADLINE_EXCEEDED
 * raised by the client itself), and the local drops — an open breaker's
 * refusal and the concurrency limit (C-core never retries an LB drop). */

static const struct grpc_code {
  const char *name;
  unsigned fails;
  const char *why; /* when fails is 0 */
} grpc_codes[17] = {
    {"OK", 0, NULL},
    {"CANCELLED", 0, "no failure stormsweep produces"},
    {"UNKNOWN", 0, "no failure stormsweep produces"},
    {"INVALID_ARGUMENT", 0, "no failure stormsweep produces"},
    {"DEADLINE_EXCEEDED", 0,
     "gRPC never retries the call's own deadline, and stormsweep's servers send no "
     "DEADLINE_EXCEEDED of theirs"},
    {"NOT_FOUND", 0, "no failure stormsweep produces"},
    {"ALREADY_EXISTS", 0, "no failure stormsweep produces"},
    {"PERMISSION_DENIED", 0, "no failure stormsweep produces"},
    {"RESOURCE_EXHAUSTED", F(REJECTED) | F(SHED), NULL},
    {"FAILED_PRECONDITION", 0, "no failure stormsweep produces"},
    {"ABORTED", 0, "no failure stormsweep produces"},
    {"OUT_OF_RANGE", 0, "no failure stormsweep produces"},
    {"UNIMPLEMENTED", 0, "no failure stormsweep produces"},
    {"INTERNAL", 0, "no failure stormsweep produces"},
    {"UNAVAILABLE", F(REJECTED) | F(SHED) | F(ROUTER) | F(LOST), NULL},
    {"DATA_LOSS", 0, "no failure stormsweep produces"},
    {"UNAUTHENTICATED", 0, "no failure stormsweep produces"},
};

/* A list of status codes (names in any case, or numbers 1-16) into the
 * failures they retry (*mask), their names as raw, and a note saying what
 * each became. required: gRFC A6 requires a non-empty list. */
static int grpc_code_list(ictx *c, json_t *v, const char *shown, int required, unsigned *mask,
                          char *raw, size_t rawlen) {
  *mask = 0;
  raw[0] = 0;
  if (!json_is_array(v))
    return swp__cl_fail(c, shown, "expected a list of status codes, got %s", swp__cl_type_name(v));
  if (required && !json_array_size(v))
    return swp__cl_fail(c, shown, "must name at least one status code (gRFC A6)");
  unsigned seen = 0;
  size_t i, used = 0;
  json_t *code;
  size_t old = swp__cl_path_push(c, shown);
  json_array_foreach(v, i, code) {
    int k = 0;
    if (json_is_integer(code) && json_integer_value(code) >= 1 && json_integer_value(code) <= 16)
      k = (int)json_integer_value(code);
    for (int j = 1; !k && json_is_string(code) && j <= 16; j++)
      if (!strcasecmp(json_string_value(code), grpc_codes[j].name)) k = j;
    if (!k) {
      size_t o2 = swp__cl_path_index(c, i);
      if (json_is_string(code)) {
        char text[64];
        snprintf(text, sizeof text, "%.40s", json_string_value(code));
        swp__cl_fail(c, NULL,
                     "unknown gRPC status code \"%s\" (expected a name such as UNAVAILABLE)", text);
      } else {
        swp__cl_fail(c, NULL, "expected a status code name or number 1-16, got %s",
                     swp__cl_type_name(code));
      }
      swp__cl_path_pop(c, o2);
      swp__cl_path_pop(c, old);
      return -1;
    }
    if (!(seen & (1u << k))) {
      seen |= 1u << k;
      if (used) swp__cl_cat(raw, rawlen, &used, ",");
      swp__cl_cat(raw, rawlen, &used, grpc_codes[k].name);
    }
    *mask |= grpc_codes[k].fails;
  }
  swp__cl_path_pop(c, old);
  /* the note: what each listed code retries */
  char note[400], f[96];
  size_t n = 0;
  note[0] = 0;
  for (int k = 1; k <= 16; k++) {
    if (!(seen & (1u << k))) continue;
    if (grpc_codes[k].fails) {
      swp__cl_fails_text(grpc_codes[k].fails, f, sizeof f);
      char part[160];
      snprintf(part, sizeof part, "%s%s retries %s", n ? "; " : "", grpc_codes[k].name, f);
      swp__cl_cat(note, sizeof note, &n, part);
    } else {
      char part[200];
      snprintf(part, sizeof part, "%s%s retries nothing (%s)", n ? "; " : "", grpc_codes[k].name,
               grpc_codes[k].why);
      swp__cl_cat(note, sizeof note, &n, part);
    }
  }
  if (n) swp__cl_note(c, shown, "%s", note);
  return 0;
}

/* maxAttempts of a retry or hedging policy: required, > 1, above 5 read as 5. */
static int grpc_attempts(ictx *c, json_t *pol, const char *policy, long long *attempts,
                         char *shown, size_t n, char *raw, size_t rawlen) {
  json_t *v;
  int bad = 0;
  v = swp__cl_field(c, pol, "max_attempts", shown, n, &bad);
  if (bad) return -1;
  if (!v) return swp__cl_fail(c, shown, "missing (required: attempts including the first, 2 to 5)");
  if (swp__cl_get_int(c, v, shown, 0, INT32_MAX, attempts, raw, rawlen)) return -1;
  if (*attempts < 2)
    return swp__cl_fail(c, shown, "must be greater than 1 (gRPC rejects the %s), got %lld",
                        policy, *attempts);
  if (*attempts > 5) {
    swp__cl_note(c, shown, "%lld capped at 5, as gRPC does (gRFC A6)", *attempts);
    *attempts = 5;
  }
  return 0;
}

/* What the chosen methodConfig entry leaves for its timeouts. */
typedef struct grpc_timeouts {
  int per_attempt;        /* perAttemptRecvTimeout honoured */
  double per_attempt_ms;
  char per_attempt_src[256], per_attempt_raw[64];
} grpc_timeouts;

static const char *const grpc_retry_read[] = {
    "max_attempts", "initial_backoff", "max_backoff", "backoff_multiplier",
    "retryable_status_codes", "per_attempt_recv_timeout", NULL};
static const char *const grpc_hedge_read[] = {"max_attempts", "hedging_delay",
                                              "non_fatal_status_codes", NULL};

/* retryPolicy. hedging_channel: the service config has a hedgingPolicy, so
 * the channel runs with hedging enabled and C-core reads
 * perAttemptRecvTimeout. */
static int map_grpc_retry(ictx *c, json_t *rp, int hedging_channel, grpc_timeouts *t) {
  char shown[96], raw[64];
  json_t *v;
  if (swp__cl_check_fields(c, rp, "a gRPC RetryPolicy", grpc_retry_read, NULL)) return -1;
  long long attempts;
  if (grpc_attempts(c, rp, "retry policy", &attempts, shown, sizeof shown, raw, sizeof raw))
    return -1;
  if (swp__cl_entry_num(c, "max_retries", (double)(attempts - 1), shown, raw, NULL)) return -1;
  /* gRPC's backoff (gRFC A6 as amended): min(initialBackoff * mult^(n-1), maxBackoff) x U(0.8, 1.2) */
  double base, cap, mult;
  char rbase[64], rcap[64], rmult[64], s_base[96], s_cap[96], s_mult[96];
  FIELD(rp, "initial_backoff", v, s_base);
  if (!v) return swp__cl_fail(c, s_base, "missing (required, e.g. \"0.1s\")");
  if (swp__cl_get_duration(c, v, s_base, 0, &base, rbase, sizeof rbase)) return -1;
  FIELD(rp, "max_backoff", v, s_cap);
  if (!v) return swp__cl_fail(c, s_cap, "missing (required, e.g. \"1s\")");
  if (swp__cl_get_duration(c, v, s_cap, 0, &cap, rcap, sizeof rcap)) return -1;
  FIELD(rp, "backoff_multiplier", v, s_mult);
  if (!v) return swp__cl_fail(c, s_mult, "missing (required, e.g. 2)");
  if (swp__cl_get_num(c, v, s_mult, 0, 0, 1e6, &mult, rmult, sizeof rmult)) return -1;
  if (swp__cl_entry(c, "backoff", "grpc", NULL, "",
                    "gRPC waits min(initialBackoff*mult^(n-1), maxBackoff) x U(0.8, 1.2) before "
                    "retry n"))
    return -1;
  if (swp__cl_entry_num(c, "backoff_base_ms", base, s_base, rbase, NULL)) return -1;
  if (swp__cl_entry_num(c, "backoff_cap_ms", cap, s_cap, rcap, NULL)) return -1;
  if (swp__cl_entry_num(c, "backoff_multiplier", mult, s_mult, rmult, NULL)) return -1;
  /* perAttemptRecvTimeout: C-core reads it only with hedging enabled on the
   * channel (grpc.experimental.enable_hedging); grpc-go has no such field */
  char s_pa[96];
  FIELD(rp, "per_attempt_recv_timeout", v, s_pa);
  t->per_attempt = 0;
  if (v) {
    char rpa[64];
    double ms;
    if (swp__cl_get_duration(c, v, s_pa, 0, &ms, rpa, sizeof rpa)) return -1;
    if (hedging_channel) {
      t->per_attempt = 1;
      t->per_attempt_ms = ms;
      snprintf(t->per_attempt_raw, sizeof t->per_attempt_raw, "%s", rpa);
      swp__cl_path_of(c, s_pa, t->per_attempt_src, sizeof t->per_attempt_src);
      swp__cl_note(c, s_pa,
                   "honoured, as C-core does on a channel with hedging enabled (this service "
                   "config has a hedgingPolicy): an attempt that times out is retried whatever "
                   "retryableStatusCodes says");
    } else {
      swp__cl_note(c, s_pa,
                   "not honoured: C-core reads it only on a channel with hedging enabled "
                   "(grpc.experimental.enable_hedging; this service config has no "
                   "hedgingPolicy), grpc-go not at all; attempts get no timeout of their own");
    }
  }
  char s_codes[96], rcodes[160], val[96];
  unsigned mask;
  FIELD(rp, "retryable_status_codes", v, s_codes);
  if (!v) return swp__cl_fail(c, s_codes, "missing (required: the status codes to retry)");
  if (grpc_code_list(c, v, s_codes, 1, &mask, rcodes, sizeof rcodes)) return -1;
  if (t->per_attempt) mask |= F(TIMEOUT) | F(LOST);
  swp__cl_fails_text(mask, val, sizeof val);
  if (swp__cl_entry(c, "retry_on", val, s_codes, rcodes, NULL)) return -1;
  if (!(mask & F(TIMEOUT)))
    swp__cl_note(c, s_codes,
                 "not retried: an attempt that times out (without a per-attempt timeout an "
                 "attempt ends only at the call's deadline, which gRPC never retries), and the "
                 "local drops (breaker, overflow)");
  return 0;
}

/* hedgingPolicy: maxAttempts copies at most, one every hedgingDelay; a copy
 * failing with a non-fatal code lets the next go at once, any other code
 * fails the call; the first success cancels the rest (gRFC A6). */
static int map_grpc_hedging(ictx *c, json_t *hp) {
  char shown[96], raw[64];
  json_t *v;
  if (swp__cl_check_fields(c, hp, "a gRPC HedgingPolicy", grpc_hedge_read, NULL)) return -1;
  long long attempts;
  if (grpc_attempts(c, hp, "hedging policy", &attempts, shown, sizeof shown, raw, sizeof raw))
    return -1;
  if (swp__cl_entry_num(c, "max_retries", (double)(attempts - 1), shown, raw, NULL)) return -1;
  if (swp__cl_entry_num(c, "hedge_attempts", (double)attempts, shown, raw, NULL)) return -1;
  FIELD(hp, "hedging_delay", v, shown);
  if (v) {
    double ms;
    if (swp__cl_get_duration(c, v, shown, 1, &ms, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "hedge_delay_ms", ms, shown, raw, NULL)) return -1;
  } else if (swp__cl_entry(c, "hedge_delay_ms", "0", NULL, "",
                           "hedgingDelay not given: 0, every copy at once")) {
    return -1;
  }
  if (swp__cl_entry(c, "hedge_cancel", "on", NULL, "",
                    "gRPC cancels the other copies when one succeeds"))
    return -1;
  if (swp__cl_entry(c, "backoff", "none", NULL, "",
                    "after a non-fatal failure gRPC sends the next copy at once"))
    return -1;
  FIELD(hp, "non_fatal_status_codes", v, shown);
  unsigned mask = 0;
  char rcodes[160] = "", val[96];
  if (v && grpc_code_list(c, v, shown, 0, &mask, rcodes, sizeof rcodes)) return -1;
  swp__cl_fails_text(mask, val, sizeof val);
  if (v) return swp__cl_entry(c, "retry_on", val, shown, rcodes, NULL);
  return swp__cl_entry(c, "retry_on", "none", NULL, "",
                       "no nonFatalStatusCodes: any failed copy fails the call");
}

/* methodConfig[i].timeout: the call's deadline over all its attempts. With
 * it, attempts have no timeout of their own unless perAttemptRecvTimeout
 * is honoured. */
static int map_grpc_deadline(ictx *c, json_t *mc, const grpc_timeouts *t) {
  char shown[96], raw[64], val[64];
  json_t *v;
  double ms = 0;
  FIELD(mc, "timeout", v, shown);
  if (v) {
    if (swp__cl_get_duration(c, v, shown, 0, &ms, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "deadline_ms", ms, shown, raw, NULL)) return -1;
    if (swp__cl_entry(c, "deadline_propagation", "on", NULL, "",
                      "gRPC sends the call's remaining deadline with every attempt "
                      "(grpc-timeout)"))
      return -1;
  }
  if (t->per_attempt) {
    snprintf(val, sizeof val, "%.10g", t->per_attempt_ms);
    return swp__cl_entry_from(c, "timeout_ms", val, t->per_attempt_src, t->per_attempt_raw);
  }
  if (v)
    return swp__cl_entry(c, "timeout_ms", "none", NULL, "",
                         "no per-attempt timeout: an attempt waits for the call's deadline, "
                         "which is never retried");
  swp__cl_note(c, shown,
               "not given: a gRPC call without a deadline waits as long as it takes; the "
               "scenario's timeout_ms stays as the time a client waits for an attempt");
  return 0;
}

static const char *const grpc_mc_read[] = {"retry_policy", "hedging_policy", "timeout", NULL};
static const swp__cl_known grpc_mc_known[] = {
    {"name", "the methods this entry applies to: stormsweep simulates one method, the first "
             "entry with a retryPolicy or hedgingPolicy"},
    {"wait_for_ready", "not modelled: stormsweep has no connections to wait for (an attempt to "
                       "a crashed shard is lost, heard at its timeout)"},
    {"max_request_message_bytes", "message sizes are not modelled"},
    {"max_response_message_bytes", "message sizes are not modelled"},
    {NULL, NULL}};

/* Typos in an entry that is not simulated are still errors. */
static int check_grpc_entry(ictx *c, json_t *mc) {
  if (swp__cl_check_fields(c, mc, "a gRPC MethodConfig", grpc_mc_read, grpc_mc_known)) return -1;
  static const char *const names[] = {"retry_policy", "hedging_policy"};
  for (int k = 0; k < 2; k++) {
    char shown[96];
    json_t *p;
    FIELD(mc, names[k], p, shown);
    if (!p || !json_is_object(p)) continue;
    size_t old = swp__cl_path_push(c, shown);
    if (swp__cl_check_fields(c, p, k ? "a gRPC HedgingPolicy" : "a gRPC RetryPolicy",
                             k ? grpc_hedge_read : grpc_retry_read, NULL))
      return -1;
    swp__cl_path_pop(c, old);
  }
  return 0;
}

/* The methodConfig entries: the first with a retryPolicy or a hedgingPolicy
 * is simulated. */
static int map_grpc_methods(ictx *c, json_t *mcs) {
  size_t i, chosen = (size_t)-1;
  json_t *mc;
  int hedging_channel = 0;
  json_array_foreach(mcs, i, mc) {
    int bad = 0;
    char shown[96];
    if (json_is_object(mc) && swp__cl_field(c, mc, "hedging_policy", shown, sizeof shown, &bad))
      hedging_channel = 1;
  }
  json_array_foreach(mcs, i, mc) {
    size_t o2 = swp__cl_path_index(c, i);
    if (!json_is_object(mc))
      return swp__cl_fail(c, NULL, "expected an object, got %s", swp__cl_type_name(mc));
    if (check_grpc_entry(c, mc)) return -1;
    json_t *rp, *hp;
    char rshown[96], hshown[96];
    FIELD(mc, "retry_policy", rp, rshown);
    FIELD(mc, "hedging_policy", hp, hshown);
    if (rp && hp)
      return swp__cl_fail(c, NULL, "has both retryPolicy and hedgingPolicy (gRPC allows one)");
    if ((rp || hp) && chosen != (size_t)-1) {
      swp__cl_note(c, rp ? rshown : hshown,
                   "ignored: only the first retryPolicy or hedgingPolicy (methodConfig[%zu]) is "
                   "simulated",
                   chosen);
    } else if (rp || hp) {
      chosen = i;
      size_t o3 = swp__cl_path_push(c, rp ? rshown : hshown);
      if (swp__cl_want_object(c, rp ? rp : hp, NULL)) return -1;
      grpc_timeouts t;
      memset(&t, 0, sizeof t);
      if (rp ? map_grpc_retry(c, rp, hedging_channel, &t) : map_grpc_hedging(c, hp)) return -1;
      swp__cl_path_pop(c, o3);
      if (map_grpc_deadline(c, mc, &t)) return -1;
    }
    swp__cl_path_pop(c, o2);
  }
  if (chosen == (size_t)-1)
    return swp__cl_fail(c, NULL, "no entry has a retryPolicy or hedgingPolicy (without one gRPC "
                                 "neither retries nor hedges)");
  return 0;
}

/* retryThrottling (gRFC A6): maxTokens in (0, 1000], tokenRatio > 0. */
static int map_grpc_throttling(ictx *c, json_t *thr, const char *shown) {
  if (!thr) {
    if (swp__cl_entry(c, "retry_limiter", "token_bucket", NULL, "",
                      "no retryThrottling: gRPC retries without a budget"))
      return -1;
    return swp__cl_entry(c, "budget_ratio", "inf", NULL, "", "no retryThrottling: no retry budget");
  }
  if (swp__cl_want_object(c, thr, shown)) return -1;
  size_t o = swp__cl_path_push(c, shown);
  static const char *const thr_read[] = {"max_tokens", "token_ratio", NULL};
  if (swp__cl_check_fields(c, thr, "a gRPC RetryThrottlingPolicy", thr_read, NULL)) return -1;
  char tshown[96], rshown[96], rtok[64], rratio[64];
  json_t *mt, *tr;
  double tokens, ratio;
  FIELD(thr, "max_tokens", mt, tshown);
  if (!mt) return swp__cl_fail(c, tshown, "missing (required: more than 0, at most 1000)");
  if (swp__cl_get_num(c, mt, tshown, 0, 0, 1000, &tokens, rtok, sizeof rtok)) return -1;
  FIELD(thr, "token_ratio", tr, rshown);
  if (!tr) return swp__cl_fail(c, rshown, "missing (required, e.g. 0.1)");
  if (swp__cl_get_num(c, tr, rshown, 0, 0, 1e6, &ratio, rratio, sizeof rratio)) return -1;
  if (swp__cl_entry(c, "retry_limiter", "grpc", NULL, "", "retryThrottling is present")) return -1;
  if (swp__cl_entry_num(c, "grpc_max_tokens", tokens, tshown, rtok, NULL)) return -1;
  if (swp__cl_entry_num(c, "grpc_token_ratio", ratio, rshown, rratio, NULL)) return -1;
  swp__cl_path_pop(c, o);
  return 0;
}

int swp__cl_map_grpc(ictx *c, json_t *root) {
  static const char *const root_read[] = {"method_config", "retry_throttling", NULL};
  static const swp__cl_known root_known[] = {
      {"load_balancing_config", "stormsweep's router (consistent hashing with bounded load) "
                                "stands for the load balancer"},
      {"load_balancing_policy", "stormsweep's router (consistent hashing with bounded load) "
                                "stands for the load balancer"},
      {"health_check_config", "health checking is not modelled (a crashed shard leaves the "
                              "ring after crash_detect_ms)"},
      {"connection_scaling", "connections are not modelled"},
      {NULL, NULL}};
  if (swp__cl_check_fields(c, root, "a gRPC service config", root_read, root_known)) return -1;
  char mshown[96], tshown[96];
  json_t *mcs, *thr;
  FIELD(root, "method_config", mcs, mshown);
  if (!mcs)
    return swp__cl_fail(c, mshown, "missing: a service config needs a methodConfig with a "
                                   "retryPolicy or hedgingPolicy for gRPC to retry or hedge");
  if (!json_is_array(mcs))
    return swp__cl_fail(c, mshown, "expected a list, got %s", swp__cl_type_name(mcs));
  size_t old = swp__cl_path_push(c, mshown);
  if (map_grpc_methods(c, mcs)) return -1;
  swp__cl_path_pop(c, old);
  FIELD(root, "retry_throttling", thr, tshown);
  return map_grpc_throttling(c, thr, tshown);
}
