/*
 * client_import.c — `--client FILE`: a gRPC service config or an Envoy
 * retry policy mapped onto engine settings (client_import.h,
 * docs/client-import.md).
 *
 * The document is read into one tree whatever its syntax (client_doc.c);
 * this file maps gRPC's MethodConfig / RetryPolicy / RetryThrottlingPolicy
 * and Envoy's RetryPolicy / retry budget / circuit breakers onto settings.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <yaml.h>

#include "client_doc.h"
static const char *const grpc_codes[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED", NULL};

static int grpc_codes_check(ictx *c, json_t *v, const char *shown) {
  if (!json_is_array(v)) return swp__cl_fail(c, shown, "expected a list of status codes, got %s",
                                     swp__cl_type_name(v));
  if (!json_array_size(v))
    return swp__cl_fail(c, shown, "must name at least one status code (gRFC A6)");
  size_t old = swp__cl_path_push(c, shown);
  size_t i;
  json_t *code;
  json_array_foreach(v, i, code) {
    size_t o2 = swp__cl_path_index(c, i);
    int ok = 0;
    if (json_is_integer(code)) {
      ok = json_integer_value(code) >= 1 && json_integer_value(code) <= 16;
    } else if (json_is_string(code)) {
      for (int k = 1; grpc_codes[k]; k++)
        if (!strcasecmp(json_string_value(code), grpc_codes[k])) ok = 1;
    }
    if (!ok) {
      char safe[64] = "";
      if (json_is_string(code)) swp__cl_safe_copy(safe, sizeof safe, json_string_value(code), 40);
      if (json_is_string(code))
        swp__cl_fail(c, NULL,
                     "unknown gRPC status code \"%s\" (expected a name such as UNAVAILABLE)", safe);
      else
        swp__cl_fail(c, NULL, "expected a status code name or number 1-16, got %s",
                     swp__cl_type_name(code));
      swp__cl_path_pop(c, old);
      return -1;
    }
    swp__cl_path_pop(c, o2);
  }
  swp__cl_path_pop(c, old);
  return 0;
}

static int map_grpc_policy(ictx *c, json_t *rp, int *per_attempt) {
  char shown[96], raw[64];
  json_t *v;
  /* maxAttempts: gRFC A6 requires > 1 and treats values above 5 as 5 */
  FIELD(rp, "max_attempts", v, shown);
  if (!v) return swp__cl_fail(c, shown, "missing (required: attempts including the first, 2 to 5)");
  long long attempts;
  if (swp__cl_get_int(c, v, shown, 0, INT32_MAX, &attempts, raw, sizeof raw)) return -1;
  if (attempts < 2)
    return swp__cl_fail(
        c, shown, "must be greater than 1 (gRPC rejects the retry policy), got %lld", attempts);
  if (attempts > 5) {
    swp__cl_note(c, shown, "%lld capped at 5, as gRPC does (gRFC A6)", attempts);
    attempts = 5;
  }
  if (swp__cl_entry_num(c, "max_retries", (double)(attempts - 1), shown, raw, NULL)) return -1;
  /* gRPC's backoff: attempt n waits U(0, min(initialBackoff * mult^(n-1), maxBackoff)) */
  double base, cap, mult;
  char rbase[64], rcap[64], rmult[64];
  FIELD(rp, "initial_backoff", v, shown);
  if (!v) return swp__cl_fail(c, shown, "missing (required, e.g. \"0.1s\")");
  if (swp__cl_get_duration(c, v, shown, &base, rbase, sizeof rbase)) return -1;
  char s_base[96];
  snprintf(s_base, sizeof s_base, "%s", shown);
  FIELD(rp, "max_backoff", v, shown);
  if (!v) return swp__cl_fail(c, shown, "missing (required, e.g. \"1s\")");
  if (swp__cl_get_duration(c, v, shown, &cap, rcap, sizeof rcap)) return -1;
  char s_cap[96];
  snprintf(s_cap, sizeof s_cap, "%s", shown);
  FIELD(rp, "backoff_multiplier", v, shown);
  if (!v) return swp__cl_fail(c, shown, "missing (required, e.g. 2)");
  if (swp__cl_get_num(c, v, shown, 0, 0, 1e6, &mult, rmult, sizeof rmult)) return -1;
  char s_mult[96];
  snprintf(s_mult, sizeof s_mult, "%s", shown);
  FIELD(rp, "retryable_status_codes", v, shown);
  if (!v) return swp__cl_fail(c, shown, "missing (required: the status codes to retry)");
  if (grpc_codes_check(c, v, shown)) return -1;
  swp__cl_note(c, shown, "not modelled: stormsweep retries every failed or timed-out attempt");
  if (swp__cl_entry(c, "backoff", "full", NULL, "",
                    "gRPC waits U(0, min(initialBackoff*mult^(n-1), "
                    "maxBackoff)) before retry n"))
    return -1;
  if (swp__cl_entry_num(c, "backoff_base_ms", base, s_base, rbase, NULL)) return -1;
  if (swp__cl_entry_num(c, "backoff_cap_ms", cap, s_cap, rcap, NULL)) return -1;
  if (swp__cl_entry_num(c, "backoff_multiplier", mult, s_mult, rmult, NULL)) return -1;
  /* per-attempt timeout: perAttemptRecvTimeout (gRFC A6 update) is one;
   * methodConfig.timeout bounds the whole call, the closest we have */
  double ms;
  FIELD(rp, "per_attempt_recv_timeout", v, shown);
  if (v) {
    if (swp__cl_get_duration(c, v, shown, &ms, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "timeout_ms", ms, shown, raw, NULL)) return -1;
  }
  static const char *const rp_read[] = {"max_attempts", "initial_backoff", "max_backoff",
                                        "backoff_multiplier", "retryable_status_codes",
                                        "per_attempt_recv_timeout", NULL};
  swp__cl_note_others(c, rp, rp_read, NULL);
  *per_attempt = v != NULL;
  return 0;
}

/* methodConfig[i].timeout: the deadline of the whole call, retries
 * included; the closest stormsweep has is the per-attempt timeout_ms. */
static int map_grpc_timeout(ictx *c, json_t *mc, int per_attempt) {
  char shown[96], raw[64];
  json_t *t;
  double ms;
  FIELD(mc, "timeout", t, shown);
  if (!t) return 0;
  if (swp__cl_get_duration(c, t, shown, &ms, raw, sizeof raw)) return -1;
  if (per_attempt) {
    swp__cl_note(c, shown, "ignored: perAttemptRecvTimeout gives the per-attempt timeout");
    return 0;
  }
  swp__cl_note(c, shown, "gRPC's deadline covers the whole call with its retries; stormsweep's "
                 "timeout_ms is per attempt");
  return swp__cl_entry_num(c, "timeout_ms", ms, shown, raw, NULL);
}

static int map_grpc(ictx *c, json_t *root) {
  char shown[96], mshown[96];
  json_t *mcs, *thr;
  FIELD(root, "method_config", mcs, mshown);
  if (!mcs) return swp__cl_fail(c, mshown, "missing: a service config needs a methodConfig with a "
                                   "retryPolicy for gRPC to retry");
  if (!json_is_array(mcs))
    return swp__cl_fail(c, mshown, "expected a list, got %s", swp__cl_type_name(mcs));
  size_t old = swp__cl_path_push(c, mshown);
  size_t i, chosen = (size_t)-1;
  json_t *mc;
  json_array_foreach(mcs, i, mc) {
    size_t o2 = swp__cl_path_index(c, i);
    if (!json_is_object(mc)) {
      swp__cl_fail(c, NULL, "expected an object, got %s", swp__cl_type_name(mc));
      return -1;
    }
    json_t *rp, *hp;
    FIELD(mc, "retry_policy", rp, shown);
    char hshown[96];
    FIELD(mc, "hedging_policy", hp, hshown);
    if (rp && hp)
      return swp__cl_fail(c, NULL, "has both retryPolicy and hedgingPolicy (gRPC allows one)");
    if (hp) swp__cl_note(c, hshown, "hedging is not modelled, ignored");
    if (rp) {
      if (chosen == (size_t)-1) {
        chosen = i;
        size_t o3 = swp__cl_path_push(c, shown);
        if (swp__cl_want_object(c, rp, NULL)) return -1;
        int per_attempt = 0;
        if (map_grpc_policy(c, rp, &per_attempt)) return -1;
        swp__cl_path_pop(c, o3);
        if (map_grpc_timeout(c, mc, per_attempt)) return -1;
      } else {
        swp__cl_note(c, shown,
                     "ignored: only the first retryPolicy (methodConfig[%zu]) is simulated",
                     chosen);
      }
    }
    swp__cl_path_pop(c, o2);
  }
  if (chosen == (size_t)-1)
    return swp__cl_fail(c, NULL, "no entry has a retryPolicy (without one gRPC does not retry)");
  swp__cl_path_pop(c, old);
  /* retryThrottling (gRFC A6): maxTokens in (0, 1000], tokenRatio > 0 */
  FIELD(root, "retry_throttling", thr, shown);
  if (thr) {
    if (swp__cl_want_object(c, thr, shown)) return -1;
    size_t o = swp__cl_path_push(c, shown);
    char tshown[96], rshown[96], rtok[64], rratio[64];
    json_t *mt, *tr;
    double tokens, ratio;
    FIELD(thr, "max_tokens", mt, tshown);
    if (!mt) return swp__cl_fail(c, tshown, "missing (required: more than 0, at most 1000)");
    if (swp__cl_get_num(c, mt, tshown, 0, 0, 1000, &tokens, rtok, sizeof rtok)) return -1;
    FIELD(thr, "token_ratio", tr, rshown);
    if (!tr) return swp__cl_fail(c, rshown, "missing (required, e.g. 0.1)");
    if (swp__cl_get_num(c, tr, rshown, 0, 0, 1e6, &ratio, rratio, sizeof rratio)) return -1;
    static const char *const thr_read[] = {"max_tokens", "token_ratio", NULL};
    swp__cl_note_others(c, thr, thr_read, NULL);
    if (swp__cl_entry(c, "retry_limiter", "grpc", NULL, "", "retryThrottling is present"))
      return -1;
    if (swp__cl_entry_num(c, "grpc_max_tokens", tokens, tshown, rtok, NULL)) return -1;
    if (swp__cl_entry_num(c, "grpc_token_ratio", ratio, rshown, rratio, NULL)) return -1;
    swp__cl_path_pop(c, o);
  } else {
    if (swp__cl_entry(c, "retry_limiter", "token_bucket", NULL, "",
              "no retryThrottling: gRPC retries without a budget")) return -1;
    if (swp__cl_entry(c, "budget_ratio", "inf", NULL, "", "no retryThrottling: no retry budget"))
      return -1;
  }
  static const char *const root_read[] = {"method_config", "retry_throttling", NULL};
  static const char *const root_other[] = {"load_balancing_config", "load_balancing_policy",
                                           "health_check_config", NULL};
  swp__cl_note_others(c, root, root_read, root_other);
  return 0;
}

/* ---- Envoy route retry_policy + cluster circuit breakers ----------------- */

static int map_envoy_policy(ictx *c, json_t *rp) {
  char shown[96], raw[64];
  json_t *v;
  long long n;
  /* num_retries defaults to 1 (RetryPolicy docs) */
  FIELD(rp, "num_retries", v, shown);
  if (v) {
    if (swp__cl_get_int(c, v, shown, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "max_retries", (double)n, shown, raw, NULL)) return -1;
  } else if (swp__cl_entry(c, "max_retries", "1", NULL, "",
                           "num_retries not given: Envoy's default 1")) {
    return -1;
  }
  FIELD(rp, "per_try_timeout", v, shown);
  if (v) {
    double ms;
    if (swp__cl_get_duration(c, v, shown, &ms, raw, sizeof raw)) return -1;
    if (swp__cl_entry_num(c, "timeout_ms", ms, shown, raw, NULL)) return -1;
  }
  FIELD(rp, "retry_on", v, shown);
  if (!v)
    swp__cl_note(c, shown,
                 "missing: Envoy retries only on the conditions listed here; imported as if "
                 "every failure were retriable");
  else if (!json_is_string(v))
    return swp__cl_fail(c, shown, "expected a string such as \"5xx,reset\", got %s",
                        swp__cl_type_name(v));
  else
    swp__cl_note(c, shown, "not modelled: stormsweep retries every failed or timed-out attempt");
  /* retry_back_off: base_interval required in it; max_interval 10x base by
   * default; without it Envoy uses base 25 ms (router filter docs). Envoy
   * draws retry n's wait from U(0, (2^n - 1) base), capped; the nearest
   * stormsweep backoff is full jitter U(0, min(cap, base 2^(n-1))). */
  FIELD(rp, "retry_back_off", v, shown);
  double base = 25, cap;
  if (v) {
    if (swp__cl_want_object(c, v, shown)) return -1;
    size_t o = swp__cl_path_push(c, shown);
    char bshown[96], mshown[96], rb[64], rm[64];
    json_t *b, *mx;
    FIELD(v, "base_interval", b, bshown);
    if (!b) return swp__cl_fail(c, bshown, "missing (required in retry_back_off, e.g. \"0.025s\")");
    if (swp__cl_get_duration(c, b, bshown, &base, rb, sizeof rb)) return -1;
    if (swp__cl_entry(c, "backoff", "full", NULL, "",
                      "Envoy's fully jittered exponential back-off"))
      return -1;
    if (swp__cl_entry_num(c, "backoff_base_ms", base, bshown, rb, NULL)) return -1;
    FIELD(v, "max_interval", mx, mshown);
    if (mx) {
      if (swp__cl_get_duration(c, mx, mshown, &cap, rm, sizeof rm)) return -1;
      if (cap < base)
        return swp__cl_fail(c, mshown, "must be at least base_interval (%s), got \"%s\"", rb, rm);
      if (swp__cl_entry_num(c, "backoff_cap_ms", cap, mshown, rm, NULL)) return -1;
    } else if (swp__cl_entry_num(c, "backoff_cap_ms", 10 * base, NULL, "",
                         "max_interval not given: Envoy's default 10 x base_interval")) {
      return -1;
    }
    static const char *const bo_read[] = {"base_interval", "max_interval", NULL};
    swp__cl_note_others(c, v, bo_read, NULL);
    swp__cl_path_pop(c, o);
  } else {
    if (swp__cl_entry(c, "backoff", "full", NULL, "",
                      "Envoy's fully jittered exponential back-off"))
      return -1;
    if (swp__cl_entry(c, "backoff_base_ms", "25", NULL, "",
                      "no retry_back_off: Envoy's default 25 ms"))
      return -1;
    if (swp__cl_entry(c, "backoff_cap_ms", "250", NULL, "",
              "no retry_back_off: Envoy's default 10 x base_interval"))
      return -1;
  }
  if (swp__cl_entry(c, "backoff_multiplier", "2", NULL, "",
                    "Envoy doubles the back-off range per retry"))
    return -1;
  static const char *const rp_read[] = {"num_retries", "per_try_timeout", "retry_on",
                                        "retry_back_off", NULL};
  static const char *const rp_other[] = {
      "retry_priority", "retry_host_predicate", "retry_options_predicates",
      "host_selection_retry_max_attempts", "retriable_status_codes", "retriable_headers",
      "retriable_request_headers", "rate_limited_retry_back_off", "per_try_idle_timeout", NULL};
  swp__cl_note_others(c, rp, rp_read, rp_other);
  return 0;
}

/* circuit_breakers.thresholds[] (the DEFAULT priority entry): retry_budget
 * {budget_percent {value} 20 %, min_retry_concurrency 3}, or without a
 * budget the max_retries threshold (3 concurrent retries by default). */
static int map_envoy_breakers(ictx *c, json_t *cb, const char *cb_shown) {
  char shown[96], raw[64];
  json_t *th = NULL, *list = NULL;
  if (cb) {
    if (swp__cl_want_object(c, cb, cb_shown)) return -1;
    size_t o = swp__cl_path_push(c, cb_shown);
    FIELD(cb, "thresholds", list, shown);
    if (list && !json_is_array(list))
      return swp__cl_fail(c, shown, "expected a list, got %s", swp__cl_type_name(list));
    char tshown[96];
    snprintf(tshown, sizeof tshown, "%s", shown);
    size_t i, idx = 0;
    json_t *t;
    json_array_foreach(list, i, t) {
      size_t o2 = swp__cl_path_push(c, tshown);
      swp__cl_path_index(c, i);
      if (!json_is_object(t))
        return swp__cl_fail(c, NULL, "expected an object, got %s", swp__cl_type_name(t));
      json_t *pr;
      FIELD(t, "priority", pr, shown);
      if (pr && !json_is_string(pr))
        return swp__cl_fail(c, shown, "expected DEFAULT or HIGH, got %s", swp__cl_type_name(pr));
      if (pr && strcmp(json_string_value(pr), "DEFAULT") && strcmp(json_string_value(pr), "HIGH"))
        return swp__cl_fail(c, shown, "expected DEFAULT or HIGH");
      if (pr && !strcmp(json_string_value(pr), "HIGH"))
        swp__cl_note(c, NULL, "HIGH priority: not modelled, ignored");
      else if (th)
        swp__cl_note(c, NULL, "ignored: a second DEFAULT-priority threshold");
      else {
        th = t;
        idx = i;
      }
      swp__cl_path_pop(c, o2);
    }
    if (th) {
      swp__cl_path_push(c, tshown);
      swp__cl_path_index(c, idx);
      json_t *rb;
      char rshown[96];
      FIELD(th, "retry_budget", rb, rshown);
      if (rb) {
        if (swp__cl_want_object(c, rb, rshown)) return -1;
        size_t o3 = swp__cl_path_push(c, rshown);
        json_t *bp, *mrc;
        char bshown[96], mshown2[96];
        FIELD(rb, "budget_percent", bp, bshown);
        if (swp__cl_entry(c, "retry_limiter", "envoy", NULL, "", "retry_budget is present"))
          return -1;
        if (bp) {
          if (swp__cl_want_object(c, bp, bshown)) return -1;
          size_t o4 = swp__cl_path_push(c, bshown);
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
        FIELD(rb, "min_retry_concurrency", mrc, mshown2);
        long long n;
        if (mrc) {
          if (swp__cl_get_int(c, mrc, mshown2, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
          if (swp__cl_entry_num(c, "envoy_min_retry_concurrency", (double)n, mshown2, raw, NULL))
            return -1;
        } else if (swp__cl_entry(c, "envoy_min_retry_concurrency", "3", NULL, "",
                         "min_retry_concurrency not given: Envoy's default 3")) {
          return -1;
        }
        static const char *const rb_read[] = {"budget_percent", "min_retry_concurrency", NULL};
        swp__cl_note_others(c, rb, rb_read, NULL);
        swp__cl_path_pop(c, o3);
        return 0;
      }
      json_t *mr;
      FIELD(th, "max_retries", mr, shown);
      if (mr) {
        long long n;
        if (swp__cl_get_int(c, mr, shown, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
        if (swp__cl_entry(c, "retry_limiter", "envoy", NULL, "",
                  "no retry_budget: the max_retries circuit breaker caps concurrent retries"))
          return -1;
        if (swp__cl_entry(c, "envoy_budget_percent", "0", NULL, "", "no retry_budget")) return -1;
        return swp__cl_entry_num(c, "envoy_min_retry_concurrency", (double)n, shown, raw, NULL);
      }
    }
    swp__cl_path_pop(c, o);
  }
  if (swp__cl_entry(c, "retry_limiter", "envoy", NULL, "",
            "no retry_budget: Envoy's max_retries circuit breaker caps concurrent retries"))
    return -1;
  if (swp__cl_entry(c, "envoy_budget_percent", "0", NULL, "", "no retry_budget")) return -1;
  return swp__cl_entry(c, "envoy_min_retry_concurrency", "3", NULL, "",
               "no max_retries threshold: Envoy's default 3 concurrent retries");
}

static int map_envoy(ictx *c, json_t *root) {
  char shown[96], cshown[96], rshown[96];
  json_t *rp, *cb, *route;
  FIELD(root, "retry_policy", rp, shown);
  FIELD(root, "route", route, rshown);
  size_t old = c->plen;
  if (!rp && route && json_is_object(route)) {
    swp__cl_path_push(c, rshown);
    FIELD(route, "retry_policy", rp, shown);
    if (!rp) swp__cl_path_pop(c, old);
  }
  if (!rp)
    return swp__cl_fail(c, shown, "missing: an Envoy client config needs the route's retry_policy");
  if (swp__cl_want_object(c, rp, shown)) return -1;
  swp__cl_path_push(c, shown);
  if (map_envoy_policy(c, rp)) return -1;
  swp__cl_path_pop(c, old);
  FIELD(root, "circuit_breakers", cb, cshown);
  if (map_envoy_breakers(c, cb, cshown)) return -1;
  swp__cl_path_pop(c, old);
  return 0;
}

/* ---- entry points --------------------------------------------------------- */

const char *swp_client_kind_name(int kind) {
  return kind == SWP_CLIENT_GRPC    ? "gRPC service config"
         : kind == SWP_CLIENT_ENVOY ? "Envoy retry policy"
                                    : "client config";
}

int swp_client_parse(const char *name, const char *buf, size_t len, swp_client_map *m,
                     char *err, size_t errlen) {
  ictx c;
  memset(m, 0, sizeof *m);
  memset(&c, 0, sizeof c);
  swp__cl_safe_copy(c.name, sizeof c.name, name ? name : "client config", 200);
  c.m = m;
  c.err = err;
  c.errlen = errlen;
  if (err && errlen) err[0] = 0;
  if (len > SWP_CLIENT_MAX_BYTES)
    return swp__cl_fail(&c, NULL, "larger than %d bytes: not a client retry config",
                SWP_CLIENT_MAX_BYTES);
  size_t i = 0;
  if (len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) i = 3; /* a byte-order mark */
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')) i++;
  if (memchr(buf, 0, len)) {
    if (err && errlen) snprintf(err, errlen, "%s: holds a NUL byte: not a text file", c.name);
    return -1;
  }
  /* JSON when it opens like JSON (jansson's errors are the clearer), else
   * YAML; an Envoy YAML file is a mapping, never a bare '{' document. */
  json_t *root = i < len && (buf[i] == '{' || buf[i] == '[')
                     ? swp__cl_json_load(&c, buf + i, len - i)
                     : swp__cl_yaml_load(&c, buf, len);
  if (!root) return -1;
  int rc;
  if (!json_is_object(root)) {
    rc = swp__cl_fail(&c, NULL,
                      "expected an object (a gRPC service config or an Envoy retry_policy), "
                      "got %s",
                      swp__cl_type_name(root));
  } else {
    char shown[96];
    int bad = 0;
    int grpc = swp__cl_field(&c, root, "method_config", shown, sizeof shown, &bad) ||
               swp__cl_field(&c, root, "retry_throttling", shown, sizeof shown, &bad);
    int envoy = swp__cl_field(&c, root, "retry_policy", shown, sizeof shown, &bad) ||
                swp__cl_field(&c, root, "circuit_breakers", shown, sizeof shown, &bad) ||
                swp__cl_field(&c, root, "route", shown, sizeof shown, &bad);
    if (bad) {
      rc = -1;
    } else if (grpc && envoy) {
      rc = swp__cl_fail(&c, NULL,
                        "holds both gRPC (methodConfig) and Envoy (retry_policy) fields; give "
                        "one client config");
    } else if (grpc) {
      m->kind = SWP_CLIENT_GRPC;
      c.camel = 1;
      rc = map_grpc(&c, root);
    } else if (envoy) {
      m->kind = SWP_CLIENT_ENVOY;
      rc = map_envoy(&c, root);
    } else {
      rc = swp__cl_fail(&c, NULL, "neither a gRPC service config (methodConfig) nor an Envoy route "
                          "(retry_policy)");
    }
  }
  json_decref(root);
  return rc;
}

int swp_client_load(const char *path, swp_client_map *m, char *err, size_t errlen) {
  char safe[256];
  swp__cl_safe_copy(safe, sizeof safe, path, 200);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot read: %s", safe, strerror(errno));
    return -1;
  }
  size_t cap = SWP_CLIENT_MAX_BYTES + 1;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    snprintf(err, errlen, "%s: out of memory", safe);
    return -1;
  }
  size_t n = fread(buf, 1, cap, f);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    snprintf(err, errlen, "%s: cannot read", safe);
    return -1;
  }
  int rc = swp_client_parse(path, buf, n, m, err, errlen);
  free(buf);
  return rc;
}

int swp_client_apply(const swp_client_map *m, const char *name, eng_config *cfg, char *err,
                     size_t errlen) {
  char safe[256];
  swp__cl_safe_copy(safe, sizeof safe, name, 200);
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char msg[384];
    if (!eng_settings_find(e->key)) {
      snprintf(err, errlen,
               "%s: %s: this build has no setting '%s' (it needs the client limiter settings)",
               safe, e->source, e->key);
      return -1;
    }
    if (eng_config_set(cfg, e->key, e->value, msg, sizeof msg)) {
      snprintf(err, errlen, "%s: %s: %s", safe, e->source, msg);
      return -1;
    }
  }
  return 0;
}

int swp_client_apply_sweep(const swp_client_map *m, const char *name, swp_sweep *sw, char *err,
                           size_t errlen) {
  char safe[256];
  swp__cl_safe_copy(safe, sizeof safe, name, 200);
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char msg[512];
    if (!eng_settings_find(e->key)) {
      snprintf(err, errlen,
               "%s: %s: this build has no setting '%s' (it needs the client limiter settings)",
               safe, e->source, e->key);
      return -1;
    }
    if (swp_sweep_scenario_set(sw, e->key, e->value, msg, sizeof msg)) {
      snprintf(err, errlen, "%s: %s: %s", safe, e->source, msg);
      return -1;
    }
  }
  return 0;
}

int swp_client_keys_known(const swp_client_map *m) {
  for (size_t i = 0; i < m->n; i++)
    if (!eng_settings_find(m->e[i].key)) return 0;
  return 1;
}

void swp_client_print(const swp_client_map *m, const char *name, FILE *out) {
  char safe[256];
  swp__cl_safe_copy(safe, sizeof safe, name, 200);
  fprintf(out, "--client %s (%s): source field -> setting\n", safe,
          swp_client_kind_name(m->kind));
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char lhs[400];
    if (e->raw[0])
      snprintf(lhs, sizeof lhs, "%s = %s", e->source, e->raw);
    else
      snprintf(lhs, sizeof lhs, "%s", e->source);
    fprintf(out, "  %-56s -> %s = %s\n", lhs, e->key, e->value);
  }
  for (size_t i = 0; i < m->n_notes; i++) fprintf(out, "  note: %s\n", m->notes[i]);
}

