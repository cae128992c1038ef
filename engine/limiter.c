/*
 * limiter.c — gRPC, Finagle/tower, Envoy, SRE-book and AWS SDK retry
 * limiters as state machines over scripted events (limiter.h; the sources
 * and every reading of an ambiguous text are in docs/clients.md).
 */
#include <math.h>

#include "limiter.h"

static int64_t ticks_of(double tick_ms, double ms) {
  double t = floor(ms / tick_ms + 0.5);
  return t < 1 ? 1 : t > 1e9 ? 1000000000 : (int64_t)t;
}

void eng_limiter_params_init(eng_limiter_params *p, int32_t kind, const eng_limiter_settings *s,
                             double tick_ms) {
  *p = (eng_limiter_params){.kind = kind};
  /* gRPC keeps milli-tokens. C-core reads at most three decimals of
   * tokenRatio and drops the rest (gRFC A6: 0.5466 is 0.546): truncation,
   * nudged by a relative 1e-12 so that a ratio written with three decimals
   * (0.29 is 0.28999999999999998 as a double) keeps its last one. */
  p->grpc_max = (int64_t)floor(s->grpc_max_tokens * 1000 + 0.5);
  p->grpc_ratio = (int64_t)floor(s->grpc_token_ratio * 1000 * (1 + 1e-12));
  /* Finagle: deposits of 1000, withdrawals of 1000 / percentCanRetry, and a
   * reserve of minRetriesPerSec x whole seconds of ttl withdrawals; with
   * percentCanRetry = 0 only the reserve pays, a withdrawal costing 1. */
  double pct = s->finagle_percent_can_retry;
  p->fin_deposit = pct > 0 ? 1000 : 0;
  p->fin_withdrawal = pct > 0 ? (int64_t)(1000.0 / pct) : 1;
  if (p->fin_withdrawal < 1) p->fin_withdrawal = 1;
  p->fin_reserve = (int64_t)(s->finagle_min_retries_per_s * floor(s->finagle_ttl_ms / 1000.0)) *
                   p->fin_withdrawal;
  double window = kind == ENG_LIMITER_SRE ? s->sre_window_ms : s->finagle_ttl_ms;
  int64_t w = ticks_of(tick_ms, window);
  p->slice_ticks = (int32_t)(w / ENG_LIM_SLOTS > 0 ? w / ENG_LIM_SLOTS : 1);
  p->envoy_fraction = s->envoy_budget_percent / 100.0;
  p->envoy_min = s->envoy_min_retry_concurrency;
  p->sre_k = s->sre_k;
  p->aws_max = s->aws_quota_tokens;
  p->aws_cost = s->aws_retry_cost;
  p->aws_timeout_cost = s->aws_timeout_cost;
  p->aws_refund = s->aws_success_refund;
}

void eng_limiter_reset(eng_limiter *l, const eng_limiter_params *p) {
  *l = (eng_limiter){0};
  if (p->kind == ENG_LIMITER_GRPC) l->tokens = p->grpc_max;
  if (p->kind == ENG_LIMITER_AWS) l->tokens = p->aws_max;
}

/* Moves the windows to the slice holding now: slices that fell out of the
 * window are emptied (at most ENG_LIM_SLOTS of them, whatever the gap). */
static int advance(eng_limiter *l, const eng_limiter_params *p, int32_t now) {
  int64_t s = now / p->slice_ticks;
  if (s != l->slice) {
    int64_t n = s - l->slice;
    if (n > ENG_LIM_SLOTS) n = ENG_LIM_SLOTS;
    for (int64_t k = 0; k < n; k++) {
      int i = (int)((s - k) % ENG_LIM_SLOTS);
      l->sum -= l->win[i];
      l->sum2 -= l->win2[i];
      l->win[i] = l->win2[i] = 0;
    }
    l->slice = s;
  }
  return (int)(s % ENG_LIM_SLOTS);
}

void eng_limiter_on_request(eng_limiter *l, const eng_limiter_params *p, int32_t now) {
  if (p->kind == ENG_LIMITER_FINAGLE) {
    int i = advance(l, p, now);
    l->win[i] += p->fin_deposit;
    l->sum += p->fin_deposit;
  }
}

int eng_limiter_admit(eng_limiter *l, const eng_limiter_params *p, int32_t now, double u) {
  if (p->kind != ENG_LIMITER_SRE) return 1;
  int i = advance(l, p, now);
  double req = (double)l->sum, acc = (double)l->sum2;
  double reject = (req - p->sre_k * acc) / (req + 1);
  l->win[i]++; /* a locally rejected request is a request too */
  l->sum++;
  return !(u < reject);
}

void eng_limiter_on_success(eng_limiter *l, const eng_limiter_params *p, int32_t now,
                            int was_retry, int after_timeout) {
  switch (p->kind) {
  case ENG_LIMITER_GRPC:
    l->tokens = l->tokens + p->grpc_ratio > p->grpc_max ? p->grpc_max : l->tokens + p->grpc_ratio;
    break;
  case ENG_LIMITER_ENVOY:
    if (was_retry && l->active_retries > 0) l->active_retries--;
    break;
  case ENG_LIMITER_SRE: {
    int i = advance(l, p, now);
    l->win2[i]++;
    l->sum2++;
    break;
  }
  case ENG_LIMITER_AWS: {
    int64_t back = !was_retry ? p->aws_refund : after_timeout ? p->aws_timeout_cost : p->aws_cost;
    l->tokens = l->tokens + back > p->aws_max ? p->aws_max : l->tokens + back;
    break;
  }
  default: break;
  }
}

void eng_limiter_on_failure(eng_limiter *l, const eng_limiter_params *p, int32_t now,
                            int was_retry, int counts) {
  (void)now;
  if (p->kind == ENG_LIMITER_GRPC && counts)
    l->tokens = l->tokens > 1000 ? l->tokens - 1000 : 0;
  else if (p->kind == ENG_LIMITER_ENVOY && was_retry && l->active_retries > 0)
    l->active_retries--;
}

static int32_t envoy_limit(const eng_limiter *l, const eng_limiter_params *p) {
  double f = floor(p->envoy_fraction * l->active_requests);
  return f > p->envoy_min ? (int32_t)f : p->envoy_min;
}

int eng_limiter_may_retry(eng_limiter *l, const eng_limiter_params *p, int32_t now,
                          int after_timeout) {
  switch (p->kind) {
  case ENG_LIMITER_GRPC: return l->tokens > p->grpc_max / 2;
  case ENG_LIMITER_FINAGLE: {
    int i = advance(l, p, now);
    if (l->sum + p->fin_reserve < p->fin_withdrawal) return 0;
    l->win[i] -= p->fin_withdrawal; /* a withdrawal expires with the window too */
    l->sum -= p->fin_withdrawal;
    return 1;
  }
  case ENG_LIMITER_ENVOY:
    if (l->active_retries >= envoy_limit(l, p)) return 0;
    l->active_retries++;
    return 1;
  case ENG_LIMITER_AWS: {
    int64_t cost = after_timeout ? p->aws_timeout_cost : p->aws_cost;
    if (l->tokens < cost) return 0;
    l->tokens -= cost;
    return 1;
  }
  default: return 1; /* sre_adaptive throttles at admit */
  }
}

void eng_limiter_on_upstream(eng_limiter *l, const eng_limiter_params *p, int delta) {
  if (p->kind == ENG_LIMITER_ENVOY) l->active_requests += delta;
}

int64_t eng_limiter_level(eng_limiter *l, const eng_limiter_params *p, int32_t now) {
  switch (p->kind) {
  case ENG_LIMITER_GRPC: return l->tokens / 1000;
  case ENG_LIMITER_AWS: return l->tokens;
  case ENG_LIMITER_FINAGLE: {
    advance(l, p, now);
    int64_t b = (l->sum + p->fin_reserve) / p->fin_withdrawal;
    return b > 0 ? b : 0;
  }
  case ENG_LIMITER_ENVOY: {
    int32_t free_slots = envoy_limit(l, p) - l->active_retries;
    return free_slots > 0 ? free_slots : 0;
  }
  default: return 0;
  }
}
