/*
 * limiter.h — the retry limiters production client libraries ship, one
 * state per client process ("Clients as real libraries write them";
 * semantics and sources in docs/clients.md).
 *
 * A run keeps one eng_limiter per client process in its context and calls,
 * for that client, in the order a library would:
 *   on_request      the application starts a request (before its first try);
 *   admit           an attempt is about to be sent (sre_adaptive may refuse
 *                   it locally; every other limiter says yes);
 *   on_success      an attempt was answered in time;
 *   on_failure      an attempt failed (timeout, rejection, shed, refusal);
 *                   `counts` says whether gRPC's throttle counts it: a
 *                   failure the client would retry (retry_on), heard from
 *                   the cluster — not a local refusal such as an open
 *                   breaker's, which gRPC C-core treats as a load-balancer
 *                   drop and never records;
 *   may_retry       the request has retries left: may it retry now? (takes
 *                   what the retry costs when yes);
 *   on_upstream     an attempt of this client went out (+1) or ended (-1):
 *                   sent and not yet answered, failed or given up (Envoy's
 *                   budget counts these upstream requests, not requests
 *                   sleeping in a backoff; the engine calls it in request
 *                   mode, which the envoy limiter turns on).
 * Every call is O(1) and allocates nothing; time is in ticks and only moves
 * forward. Windowed limiters (finagle, sre_adaptive) count in ENG_LIM_SLOTS
 * slices of their window, as Finagle's WindowedAdder and tower's bucket do.
 *
 * The token bucket of budget_ratio (retry_limiter = token_bucket) lives in
 * the engine's hot path as it always has; eng_limiter_tb_* are its two
 * steps, kept here so they are tested with the others.
 */
#ifndef STORMSWEEP_LIMITER_H
#define STORMSWEEP_LIMITER_H

#include <stdint.h>

#include "eng_config.h"

#define ENG_LIM_SLOTS 10

/* Parameters in the units the limiters count in (ticks, milli-tokens). */
typedef struct eng_limiter_params {
  int32_t kind; /* eng_retry_limiter */
  /* grpc: milli-tokens, as gRPC's implementation counts them */
  int64_t grpc_max, grpc_ratio;
  /* finagle: a deposit is 1000 units, a withdrawal 1000 / percentCanRetry */
  int64_t fin_deposit, fin_withdrawal, fin_reserve;
  /* windowed limiters: slice length in ticks */
  int32_t slice_ticks;
  /* envoy */
  double envoy_fraction;
  int32_t envoy_min;
  /* sre_adaptive */
  double sre_k;
  /* aws */
  int32_t aws_max, aws_cost, aws_timeout_cost, aws_refund;
} eng_limiter_params;

typedef struct eng_limiter {
  int64_t tokens;                /* grpc (milli-tokens), aws */
  int64_t win[ENG_LIM_SLOTS];    /* finagle: balance; sre: requests */
  int64_t win2[ENG_LIM_SLOTS];   /* sre: accepts */
  int64_t sum, sum2;             /* sums of win and win2 */
  int64_t slice;                 /* the slice the windows were last advanced to */
  int32_t active_requests;       /* envoy: attempts in flight (upstream requests) */
  int32_t active_retries;        /* envoy */
} eng_limiter;

/* Converts the settings of limiter kind (eng_retry_limiter; tick_ms for
 * the windows). */
void eng_limiter_params_init(eng_limiter_params *p, int32_t kind, const eng_limiter_settings *s,
                             double tick_ms);
/* A fresh state at tick 0: buckets full, windows empty. */
void eng_limiter_reset(eng_limiter *l, const eng_limiter_params *p);

void eng_limiter_on_request(eng_limiter *l, const eng_limiter_params *p, int32_t now);
/* u: a uniform [0, 1) draw, used by sre_adaptive only. 1 = send, 0 = reject. */
int eng_limiter_admit(eng_limiter *l, const eng_limiter_params *p, int32_t now, double u);
/* was_retry: the attempt was a retry; after_timeout: that retry followed a
 * timeout (aws refunds what the retry cost). */
void eng_limiter_on_success(eng_limiter *l, const eng_limiter_params *p, int32_t now,
                            int was_retry, int after_timeout);
void eng_limiter_on_failure(eng_limiter *l, const eng_limiter_params *p, int32_t now,
                            int was_retry, int counts);
/* after_timeout: the failure that asks for the retry was a timeout. */
int eng_limiter_may_retry(eng_limiter *l, const eng_limiter_params *p, int32_t now,
                          int after_timeout);
void eng_limiter_on_upstream(eng_limiter *l, const eng_limiter_params *p, int delta);

/* The limiter's level for the budget_tokens metric: grpc whole tokens, aws
 * quota tokens, finagle retries affordable now, envoy free retry slots;
 * sre_adaptive has no such number and gives 0. */
int64_t eng_limiter_level(eng_limiter *l, const eng_limiter_params *p, int32_t now);

/* The budget_ratio token bucket: a first attempt deposits ratio (capped at
 * max_tokens); a retry spends one token or is refused. *total follows the
 * sum over clients. */
static inline void eng_limiter_tb_deposit(double *tokens, double *total, double ratio,
                                          double max_tokens) {
  double add = *tokens + ratio > max_tokens ? max_tokens - *tokens : ratio;
  *tokens += add;
  *total += add;
}

static inline int eng_limiter_tb_spend(double *tokens, double *total) {
  if (*tokens < 1) return 0;
  *tokens -= 1;
  *total -= 1;
  return 1;
}

#endif
