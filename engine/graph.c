/*
 * graph.c — the services behind the front one, and the calls between
 * them (graph.h; the model is docs/call-graphs.md).
 *
 * A service is shards of `workers` each, a queue per shard of
 * queue_capacity served as the front's are (queue_discipline: fifo, lifo,
 * adaptive_lifo; deadline_drop and controlled delay, codel.h, shedding
 * with an error or silently, shed_reply), and a consistent-hash ring
 * (router.h) placing a call's key, with bounded load (capacity_factor)
 * over what its shards hold. An attempt that starts work holds its worker for its whole life,
 * as a thread-per-request server does: its own work before its calls (the
 * share `at`), the calls stage by stage (a stage's calls in parallel), and
 * the rest of its work. A call that fails after its retries fails its
 * caller's attempt, which answers with an error; the front's attempts end
 * the same way in sim.c, whose client treats that error as an overload
 * error (retry_on's `shed`).
 *
 * Each edge's client policy is kept by the caller's client processes (its
 * shards): a timeout per attempt, a deadline per call (with
 * deadline_propagation no later than the caller's own, and known to the
 * callee, whose deadline_drop then drops it unserved), max_retries, retry_on,
 * backoff, a retry limiter per client process (the budget_ratio token
 * bucket, or limiter.h's gRPC, Finagle, Envoy, SRE adaptive and AWS ones,
 * called in the order a library calls them, as sim.c does for the front's
 * clients), and circuit breakers per client process and callee shard
 * (breaker.h; fail_fast: an open one refuses the attempt, and
 * breaker_reject says whether that fails the call or counts as a failed
 * attempt the policy may retry).
 *
 * Records live in pools addressed by 32-bit index and recycled through free
 * lists, with generation counters for stale references; events sit in a
 * timing wheel of WHEEL buckets, a far event waiting in its bucket for its
 * lap. Every operation is O(1) but the stage walk (a service's edges).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "graph_run.h"
#include "variates.h"

eng_graph_run *eng_graph_create(void) { return calloc(1, sizeof(eng_graph_run)); }

void eng_graph_destroy(eng_graph_run *g) {
  if (!g) return;
  for (int k = 0; k <= ENG_MAX_SERVICES; k++) {
    free(g->svc[k].sh);
    free(g->svc[k].load);
    free(g->svc[k].tr);
    free(g->svc[k].tx);
    eng_ring_free(&g->svc[k].ring);
  }
  for (int e = 0; e < ENG_MAX_EDGES; e++) {
    free(g->edge[e].tokens);
    free(g->edge[e].lim);
    free(g->edge[e].brk);
    free(g->edge[e].live);
  }
  free(g->at);
  free(g->cl);
  free(g->ev);
  free(g->done);
  free(g);
}

/* ---- pools ---- */

static void *grow(eng_graph_run *g, void *p, uint32_t *cap, size_t elem) {
  uint32_t n = *cap ? *cap * 2 : 1024;
  void *q = n > *cap ? realloc(p, (size_t)n * elem) : NULL;
  if (!q) longjmp(*g->oom, 1);
  *cap = n;
  return q;
}

/* A pool's alloc and free: a record pops off its free list (the pool grows,
 * linking the new records into the list, when it is empty) and goes back
 * with its generation bumped, so references to it go stale. */
#define POOL_FUNCS(name, arr, cap, freel, type)                                \
  static uint32_t name##_alloc(eng_graph_run *g) {                            \
    if (g->freel == GNIL) {                                                   \
      uint32_t old = g->cap;                                                  \
      g->arr = grow(g, g->arr, &g->cap, sizeof(type));                        \
      for (uint32_t q = g->cap; q-- > old;) {                                 \
        g->arr[q].next = g->freel;                                            \
        g->arr[q].gen = 0;                                                    \
        g->freel = q;                                                         \
      }                                                                       \
    }                                                                         \
    uint32_t i = g->freel;                                                    \
    g->freel = g->arr[i].next;                                                \
    return i;                                                                 \
  }                                                                           \
  static void name##_free(eng_graph_run *g, uint32_t i) {                     \
    g->arr[i].gen++;                                                          \
    g->arr[i].next = g->freel;                                                \
    g->freel = i;                                                             \
  }

POOL_FUNCS(att, at, at_cap, at_free, g_att)
POOL_FUNCS(call, cl, cl_cap, cl_free, g_call)
POOL_FUNCS(ev, ev, ev_cap, ev_free, g_event)

static void event_add(eng_graph_run *g, int kind, uint32_t id, uint32_t gen, uint16_t tries,
                      int32_t due) {
  if (due >= g->ticks) return; /* past the horizon: it never happens in this run */
  uint32_t e = ev_alloc(g);
  g_event *x = &g->ev[e];
  x->kind = (uint8_t)kind;
  x->id = id;
  x->id_gen = gen;
  x->tries = tries;
  x->due = due;
  uint32_t *b = &g->wheel[(uint32_t)due & (WHEEL - 1)];
  x->next = *b;
  *b = e;
}

/* ---- set up ---- */

static int32_t ticks_of(const eng_config *c, double ms) {
  if (isinf(ms)) return NO_TICK;
  double t = floor(ms / c->tick_ms + 0.5);
  return t < 1 ? 1 : t > 1e9 ? 1000000000 : (int32_t)t;
}

/* 1 when edge a goes before edge b: by caller, then stage. */
static int edge_before(const eng_call_edge *a, const eng_call_edge *b) {
  return a->from != b->from ? a->from < b->from : a->stage < b->stage;
}

static int service_prepare(eng_graph_run *g, int k, const eng_service *s, uint64_t seed) {
  g_service *v = &g->svc[k];
  const eng_config *c = g->c;
  v->cfg = s;
  v->sh = realloc(v->sh, (size_t)s->shards * sizeof *v->sh);
  free(v->load);
  v->load = calloc((size_t)s->shards, sizeof *v->load);
  if (!v->sh || !v->load) return -1;
  v->inflight = 0;
  for (int32_t i = 0; i < s->shards; i++) {
    v->sh[i] = (g_shard){.qhead = GNIL, .qtail = GNIL};
    eng_codel_init(&v->sh[i].codel);
    eng_codel_folly_init(&v->sh[i].folly);
  }
  v->codel_target = isinf(s->codel_target_ms) ? -1 : (int32_t)floor(s->codel_target_ms / c->tick_ms + 0.5);
  v->codel_interval = ticks_of(c, s->codel_interval_ms);
  if (eng_ring_build(&v->ring, s->shards, s->vnodes, NULL, (uint32_t)(seed >> 7) + (uint32_t)k))
    return -1;
  v->mean_ticks = s->service_mean_ms / c->tick_ms;
  v->mu = log(v->mean_ticks) - s->service_sigma * s->service_sigma / 2;
  v->q_cap = s->queue_capacity;
  v->error_rate = s->error_rate;
  v->at = s->at;
  free(v->tr);
  free(v->tx);
  v->tr = calloc((size_t)TR_RULE * (size_t)g->ticks, sizeof *v->tr);
  v->tx = calloc((size_t)(TR_COUNT - TR_RULE) * (size_t)g->ticks, sizeof *v->tx);
  if (!v->tr || !v->tx) return -1;
  return 0;
}

int eng_graph_prepare(eng_graph_run *g, const eng_config *c, uint64_t seed, int32_t ticks,
                      jmp_buf *oom) {
  const eng_graph *gr = &c->graph;
  g->c = c;
  g->ticks = ticks;
  g->now = 0;
  g->oom = oom;
  eng_rng_seed(&g->rng, seed, STREAM_GRAPH);
  g->key_seed = seed ^ 0x5851f42d4c957f2dULL;
  g->n_svc = gr->n_services + 1;
  /* the front: its calls and its share; its server is sim.c's */
  memset(&g->svc[ENG_FRONT].sum, 0, sizeof g->svc[ENG_FRONT].sum);
  g->svc[ENG_FRONT].cfg = NULL;
  g->svc[ENG_FRONT].at = gr->front_at;
  g->svc[ENG_FRONT].error_rate = gr->front_error_rate;
  for (int k = 0; k < gr->n_services; k++) {
    if (service_prepare(g, k + 1, &gr->svc[k], seed)) return -1;
    memset(&g->svc[k + 1].sum, 0, sizeof g->svc[k + 1].sum);
    g->svc[k + 1].busy_ticks = 0;
    g->svc[k + 1].queued = 0;
    memset(g->svc[k + 1].cur, 0, sizeof g->svc[k + 1].cur);
  }
  for (int e = 0; e < gr->n_edges; e++) {
    g_edge *x = &g->edge[e];
    const eng_call_edge *ce = &gr->edge[e];
    x->cfg = ce;
    x->timeout = ticks_of(c, ce->timeout_ms);
    x->deadline = ticks_of(c, ce->deadline_ms);
    x->lim_kind = ce->retry_limiter;
    x->hedge_delay = (int32_t)floor(ce->hedge_delay_ms / c->tick_ms + 0.5);
    x->tb_on = x->lim_kind == ENG_LIMITER_TOKEN_BUCKET && !isinf(ce->budget_ratio);
    int32_t clients = ce->from == ENG_FRONT ? c->shards : gr->svc[ce->from - 1].shards;
    free(x->tokens);
    x->tokens = malloc((size_t)clients * sizeof *x->tokens);
    if (!x->tokens) return -1;
    for (int32_t i = 0; i < clients; i++) x->tokens[i] = ce->budget_max_tokens;
    free(x->lim);
    x->lim = NULL;
    if (x->lim_kind) {
      eng_limiter_params_init(&x->lp, x->lim_kind, &ce->lim, c->tick_ms);
      x->lim = malloc((size_t)clients * sizeof *x->lim);
      if (!x->lim) return -1;
      for (int32_t i = 0; i < clients; i++) eng_limiter_reset(&x->lim[i], &x->lp);
    }
    free(x->live);
    x->live = NULL;
    if (!isinf(ce->max_requests_per_client)) {
      x->max_live = (int32_t)ce->max_requests_per_client;
      x->live = calloc((size_t)clients, sizeof *x->live);
      if (!x->live) return -1;
    }
    free(x->brk);
    x->brk = NULL;
    if (ce->brk.breaker != ENG_BREAKER_OFF) {
      int32_t cool = isinf(ce->brk.breaker_cooldown_ms) ? 1000000000
                                                        : ticks_of(c, ce->brk.breaker_cooldown_ms);
      eng_breaker_params_init(&x->bp, &ce->brk, cool);
      x->brk_shards = gr->svc[ce->to - 1].shards;
      x->brk = calloc((size_t)clients * (size_t)x->brk_shards, sizeof *x->brk);
      if (!x->brk) return -1;
    }
    /* insertion by (caller, stage), stable: a graph has few edges */
    int32_t j = e;
    while (j > 0 && edge_before(ce, &gr->edge[g->order[j - 1]])) {
      g->order[j] = g->order[j - 1];
      j--;
    }
    g->order[j] = e;
  }
  for (int k = 0; k < g->n_svc; k++) {
    g->svc[k].first_edge = 0;
    g->svc[k].n_edges = 0;
    g->svc[k].last_stage = -1;
  }
  for (int j = gr->n_edges - 1; j >= 0; j--) {
    const eng_call_edge *ce = &gr->edge[g->order[j]];
    g_service *v = &g->svc[ce->from];
    v->first_edge = j;
    v->n_edges++;
    if (ce->stage > v->last_stage) v->last_stage = ce->stage;
  }
  /* everything alive goes back to the free lists */
  g->at_free = g->cl_free = g->ev_free = GNIL;
  for (uint32_t q = g->at_cap; q-- > 0;) att_free(g, q);
  for (uint32_t q = g->cl_cap; q-- > 0;) call_free(g, q);
  for (uint32_t q = g->ev_cap; q-- > 0;) ev_free(g, q);
  for (uint32_t b = 0; b < WHEEL; b++) g->wheel[b] = GNIL;
  g->n_done = 0;
  memset(g->front_totals, 0, sizeof g->front_totals);
  return 0;
}

/* ---- the attempt at a service ---- */

static void att_reply(eng_graph_run *g, uint32_t a, int ok);
static void stage_run(eng_graph_run *g, uint32_t a);

static int in_window(const eng_windows *w, double ms) {
  for (int i = 0; i < w->count; i++)
    if (ms >= w->w[i].start_ms && ms < w->w[i].start_ms + w->w[i].duration_ms) return 1;
  return 0;
}

/* Its work in ticks, rounded by floor(x + U) so the mean is exact; a
 * brownout at its start slows all of it (a stalled shard never ends it). */
static int32_t work_ticks(eng_graph_run *g, g_service *v, uint32_t shard) {
  const eng_service *s = v->cfg;
  double x;
  if (s->service_dist == ENG_SERVICE_DET) x = v->mean_ticks;
  else if (s->service_dist == ENG_SERVICE_LOGNORMAL)
    x = exp(v->mu + s->service_sigma * eng_rng_normal(&g->rng));
  else
    x = eng_rng_exp(&g->rng, v->mean_ticks);
  if (s->brownout.count && (s->brownout_shard < 0 || (uint32_t)s->brownout_shard == shard) &&
      in_window(&s->brownout, (double)g->now * g->c->tick_ms))
    x = s->brownout_factor > 0 ? x / s->brownout_factor : 2e9;
  double d = x + eng_rng_uniform(&g->rng);
  return d > 1e9 ? 1000000000 : (int32_t)d;
}

/* Its own work (d ticks) begins: the share before its calls, then they. */
static void work_begin(eng_graph_run *g, uint32_t a, int32_t d) {
  g_att *x = &g->at[a];
  int32_t pre = (int32_t)floor(g->svc[x->svc].at * d + 0.5);
  x->post = d - pre;
  g->svc[x->svc].busy_ticks += pre; /* the rest counts once it starts */
  x->stage = 0;
  x->failed = 0;
  if (pre > 0) {
    x->state = ST_PRE;
    event_add(g, EV_WORK, a, x->gen, 0, g->now + pre);
  } else {
    x->state = ST_CALLS;
    stage_run(g, a);
  }
}

/* The attempt ends at its service: the worker goes to the next queued
 * attempt (or one dropped for its passed deadline), the caller hears. */
static void att_finish(eng_graph_run *g, uint32_t a, int ok);

/* The queued attempt shard serves next: the oldest (fifo), the newest
 * (lifo, or adaptive_lifo once the queue is that long), off the queue. */
static uint32_t queue_take(eng_graph_run *g, const g_service *v, g_shard *s) {
  const eng_service *cfg = v->cfg;
  int newest = cfg->queue_discipline == ENG_QUEUE_LIFO ||
               (cfg->queue_discipline == ENG_QUEUE_ADAPTIVE_LIFO &&
                s->qlen >= cfg->adaptive_lifo_threshold);
  uint32_t a = newest ? s->qtail : s->qhead;
  g_att *x = &g->at[a];
  if (x->prev == GNIL) s->qhead = x->next;
  else g->at[x->prev].next = x->next;
  if (x->next == GNIL) s->qtail = x->prev;
  else g->at[x->next].prev = x->prev;
  s->qlen--;
  return a;
}

/* Whether controlled delay sheds an attempt that waited delay ticks. */
static int codel_sheds(const g_service *v, g_shard *s, int32_t now, int32_t delay) {
  if (v->codel_target < 0) return 0;
  switch (v->cfg->codel_variant) {
  case ENG_CODEL_RFC8289:
    return eng_codel_rfc8289_shed(&s->codel, now, delay, s->qlen, v->codel_target,
                                  v->codel_interval);
  case ENG_CODEL_FOLLY:
    return eng_codel_folly_shed(&s->folly, now, delay, v->codel_target, v->codel_interval);
  default: return eng_codel_fas_shed(&s->codel, now, delay, v->codel_target, v->codel_interval);
  }
}

/* Attempt a leaves its service unserved: its caller hears an overload
 * error at once (shed_reply = error), or nothing until its timeout. */
static void att_shed(eng_graph_run *g, g_service *v, uint32_t a) {
  g_att *x = &g->at[a];
  if (v->cfg->shed_reply == ENG_SHED_SILENT && x->waited) x->state = ST_SILENT;
  else att_reply(g, a, 0);
}

static void shard_next(eng_graph_run *g, g_service *v, uint32_t shard) {
  g_shard *s = &v->sh[shard];
  while (s->busy < v->cfg->workers && s->qhead != GNIL) {
    uint32_t a = queue_take(g, v, s);
    g_att *x = &g->at[a];
    v->queued--;
    int shed = x->cancelled; /* a hedge its caller cancelled: dropped, not counted */
    if (!shed && v->cfg->deadline_drop && x->deadline <= g->now) {
      v->sum.dropped++;
      v->cur[TR_SHED]++;
      shed = 1;
    } else if (!shed && codel_sheds(v, s, g->now, g->now - x->sent)) {
      v->sum.shed++;
      v->cur[TR_SHED]++;
      shed = 1;
    }
    if (shed) {
      v->load[shard]--;
      v->inflight--;
      if (x->cancelled) att_reply(g, a, 0);
      else att_shed(g, v, a);
      continue;
    }
    s->busy++;
    int32_t d = work_ticks(g, v, shard);
    work_begin(g, a, d);
  }
  if (s->qhead == GNIL) eng_codel_idle(&s->codel);
}

static void att_finish(eng_graph_run *g, uint32_t a, int ok) {
  g_att *x = &g->at[a];
  g_service *v = &g->svc[x->svc];
  if (x->svc == ENG_FRONT) { /* the front's work and its end are sim.c's: its error comes now */
    if (ok && v->error_rate > 0 && eng_rng_uniform(&g->rng) < v->error_rate) ok = 0;
    att_reply(g, a, ok);
    return;
  }
  uint32_t shard = x->shard;
  v->sh[shard].busy--;
  v->load[shard]--;
  v->inflight--;
  if (ok && v->error_rate > 0 && eng_rng_uniform(&g->rng) < v->error_rate) ok = 0;
  if (!ok) v->sum.errors++;
  att_reply(g, a, ok);
  shard_next(g, v, shard);
}

/* ---- calls ---- */

static void call_send(eng_graph_run *g, uint32_t ci);

static void attempt_over(const g_edge *e, uint32_t client);
static eng_breaker *edge_breaker(const g_edge *e, uint32_t client, uint32_t shard);

/* A copy stops being waited for: off its call's list. */
static void copy_unlink(eng_graph_run *g, g_call *c, uint32_t a) {
  uint32_t *p = &c->copies;
  while (*p != a) p = &g->at[*p].sib;
  *p = g->at[a].sib;
  g->at[a].waited = 0;
  c->n_out--;
}

static void call_end(eng_graph_run *g, uint32_t ci, int ok) {
  g_call *c = &g->cl[ci];
  uint32_t p = c->parent;
  /* Hedged copies still in flight are given up (their answers wasted);
   * hedge_cancel drops the queued ones. A half-open breaker's probe among
   * them gives its permit back; Envoy frees the retries they held. */
  const g_edge *e = &g->edge[c->edge];
  for (uint32_t a = c->copies, next; a != GNIL; a = next) {
    g_att *x = &g->at[a];
    next = x->sib;
    x->waited = 0;
    x->cancelled = (uint8_t)e->cfg->hedge_cancel;
    attempt_over(e, c->client);
    if (e->brk) eng_breaker_release(edge_breaker(e, c->client, x->shard), x->sent);
    if (e->lim_kind == ENG_LIMITER_ENVOY && x->try_no > 1)
      eng_limiter_on_failure(&e->lim[c->client], &e->lp, g->now, 1, 0);
    if (x->state == ST_SILENT) att_free(g, a); /* shed unanswered: nobody waits for it now */
  }
  if (!ok) {
    g_service *to = &g->svc[g->edge[c->edge].cfg->to];
    to->sum.failed_calls++;
    to->cur[TR_FAILED]++;
  }
  call_free(g, ci);
  g_att *x = &g->at[p];
  if (!ok) x->failed = 1;
  if (--x->pending == 0) {
    x->stage++;
    stage_run(g, p);
  }
}

static eng_breaker *edge_breaker(const g_edge *e, uint32_t client, uint32_t shard) {
  return &e->brk[(size_t)client * (size_t)e->brk_shards + shard];
}

/* The caller heard how an attempt sent at tick sent to shard ended (ok 0:
 * a failure): its breaker towards that shard records it. */
static void attempt_heard(eng_graph_run *g, const g_edge *e, uint32_t client, uint32_t shard,
                          int32_t sent, int ok) {
  eng_breaker_record(edge_breaker(e, client, shard), &e->bp, g->now, sent, !ok);
}

/* An attempt in flight stops being so for its caller (answered or given
 * up): Envoy's budget counts upstream requests. */
static void attempt_over(const g_edge *e, uint32_t client) {
  if (e->lim_kind == ENG_LIMITER_ENVOY) eng_limiter_on_upstream(&e->lim[client], &e->lp, -1);
  if (e->live) e->live[client]--;
}

/* Nothing more of call ci can go out: it fails once no copy of it is in
 * flight (one still out may answer). */
static void call_stop(eng_graph_run *g, uint32_t ci) {
  if (!g->cl[ci].n_out) call_end(g, ci, 0);
}

/* Whether call ci may send one more attempt now (a retry, or a hedged
 * copy): the token bucket or the limiter gives its leave, or it is
 * counted as refused. */
static int call_may_retry(eng_graph_run *g, uint32_t ci) {
  g_call *c = &g->cl[ci];
  const g_edge *e = &g->edge[c->edge];
  int ok = 1;
  if (e->tb_on) {
    double total = 0;
    ok = eng_limiter_tb_spend(&e->tokens[c->client], &total);
  } else if (e->lim_kind) {
    ok = eng_limiter_may_retry(&e->lim[c->client], &e->lp, g->now, c->after_timeout);
  }
  if (!ok) {
    g->svc[e->cfg->to].sum.budget_refused++;
    g->svc[e->cfg->to].cur[TR_BUDGET]++;
  }
  return ok;
}

/* Attempt try_no of call ci failed with kind (eng_failure): a retry, after
 * backoff, if the policy, the budget and the deadline allow one. A failure
 * retry_on does not name fails the call (hedging: cancelling its other
 * copies, as gRPC does after a fatal status). */
static void call_failed(eng_graph_run *g, uint32_t ci, int kind, int try_no) {
  g_call *c = &g->cl[ci];
  const g_edge *e = &g->edge[c->edge];
  const eng_call_edge *ce = e->cfg;
  int retryable = ce->retry_on & (1 << kind);
  /* gRPC's throttle counts the failures the client would retry, heard from
   * the callee; an open breaker's refusal is the client's own */
  if (e->lim_kind)
    eng_limiter_on_failure(&e->lim[c->client], &e->lp, g->now, try_no > 1,
                           retryable && kind != ENG_FAIL_BREAKER && kind != ENG_FAIL_OVERFLOW);
  c->after_timeout = kind == ENG_FAIL_TIMEOUT;
  if (!retryable) {
    call_end(g, ci, 0);
    return;
  }
  if (c->tries > ce->max_retries || g->now >= c->deadline || !call_may_retry(g, ci)) {
    call_stop(g, ci);
    return;
  }
  double sleep = eng_backoff_sleep(ce->backoff, ce->backoff_base_ms, ce->backoff_cap_ms,
                                   ce->backoff_multiplier, c->tries - 1, c->prev_sleep, &g->rng);
  c->prev_sleep = (float)sleep;
  int32_t delay = (int32_t)floor(sleep / g->c->tick_ms + 0.5);
  if (delay <= 0) {
    call_send(g, ci);
    return;
  }
  if ((int64_t)g->now + delay >= c->deadline) { /* it would wake past its deadline */
    /* never sent: Envoy frees the retry it held for it */
    if (e->lim_kind == ENG_LIMITER_ENVOY)
      eng_limiter_on_failure(&e->lim[c->client], &e->lp, g->now, 1, 0);
    call_stop(g, ci);
    return;
  }
  event_add(g, EV_RETRY, ci, c->gen, c->tries, g->now + delay);
}

/* gRFC A6 hedging: while no copy of call ci has answered, a further copy
 * every hedge_delay, up to hedge_attempts in flight and 1 + max_retries in
 * all, each with the limiter's leave like a retry (a refused one leaves
 * the copies out to carry on). */
static void call_hedge(eng_graph_run *g, uint32_t ci) {
  g_call *c = &g->cl[ci];
  const eng_call_edge *ce = g->edge[c->edge].cfg;
  if (!c->n_out || c->n_out >= ce->hedge_attempts || c->tries > ce->max_retries ||
      g->now >= c->deadline || !call_may_retry(g, ci))
    return;
  call_send(g, ci);
}

/* An attempt of call ci goes to its service: a worker, the queue, or a
 * full queue's refusal. */
static void call_send(eng_graph_run *g, uint32_t ci) {
  g_call *c = &g->cl[ci];
  const g_edge *e = &g->edge[c->edge];
  const eng_call_edge *ce = e->cfg;
  g_service *v = &g->svc[ce->to];
  if (e->lim_kind) {
    eng_limiter *l = &e->lim[c->client];
    if (!c->tries) eng_limiter_on_request(l, &e->lp, g->now);
    if (e->lim_kind == ENG_LIMITER_SRE &&
        !eng_limiter_admit(l, &e->lp, g->now, eng_rng_uniform(&g->rng))) {
      v->sum.budget_refused++; /* adaptive throttling refuses locally: the call fails unsent */
      v->cur[TR_BUDGET]++;
      call_stop(g, ci);
      return;
    }
  }
  uint32_t shard;
  if (isinf(v->cfg->capacity_factor)) {
    shard = v->ring.points[eng_ring_find(&v->ring, c->keyhash)].shard;
  } else {
    eng_route rt = eng_router_route(&v->ring, v->load, v->inflight, c->keyhash,
                                    v->cfg->capacity_factor, NULL);
    if (rt.shard < 0) { /* every shard at its bounded-load cap */
      c->tries++;
      v->sum.rejected++;
      v->cur[TR_REJ_ROUTER]++;
      call_failed(g, ci, ENG_FAIL_ROUTER, c->tries);
      return;
    }
    shard = (uint32_t)rt.shard;
  }
  c->tries++;
  if (e->live && e->live[c->client] >= e->max_live) {
    /* the client's own concurrency limit (Envoy's max_requests) fails it at once */
    v->sum.breaker_refused++;
    v->cur[TR_BREAKER]++;
    call_failed(g, ci, ENG_FAIL_OVERFLOW, c->tries);
    return;
  }
  if (e->brk && !eng_breaker_allow(edge_breaker(e, c->client, shard), &e->bp, g->now)) {
    v->sum.breaker_refused++;
    v->cur[TR_BREAKER]++;
    if (ce->brk.breaker_reject == ENG_BREAKER_REJECT_FAIL) {
      if (e->lim_kind) eng_limiter_on_failure(&e->lim[c->client], &e->lp, g->now, c->tries > 1, 0);
      call_stop(g, ci);
    } else {
      call_failed(g, ci, ENG_FAIL_BREAKER, c->tries); /* a failed attempt, retried (resilience4j) */
    }
    return;
  }
  v->sum.attempts++;
  v->cur[TR_ATT]++;
  if (c->out) {
    v->sum.retries++;
    v->cur[TR_RETRY]++;
  }
  else {
    c->out = 1; /* its first attempt that went out (an open breaker may have refused one) */
    v->sum.calls++;
    v->cur[TR_NEW]++;
    if (e->tb_on) {
      double total = 0;
      eng_limiter_tb_deposit(&e->tokens[c->client], &total, ce->budget_ratio,
                             ce->budget_max_tokens);
    }
  }
  int32_t expiry = e->timeout == NO_TICK ? NO_TICK : g->now + e->timeout;
  if (c->deadline < expiry) expiry = c->deadline;
  g_shard *s = &v->sh[shard];
  int lost = v->cfg->outage.count && in_window(&v->cfg->outage, (double)g->now * g->c->tick_ms);
  if (!lost && s->busy >= v->cfg->workers && s->qlen >= v->q_cap) {
    v->sum.rejected++;
    v->cur[TR_REJ_QUEUE]++;
    if (e->brk) attempt_heard(g, e, c->client, shard, g->now, 0);
    call_failed(g, ci, ENG_FAIL_REJECTED, c->tries);
    return;
  }
  if (e->lim_kind == ENG_LIMITER_ENVOY) eng_limiter_on_upstream(&e->lim[c->client], &e->lp, 1);
  if (e->live) e->live[c->client]++;
  uint32_t a = att_alloc(g);
  c = &g->cl[ci]; /* (pools do not move each other, but keep the habit) */
  g_att *x = &g->at[a];
  x->call = ci;
  x->call_gen = c->gen;
  x->keyhash = c->keyhash;
  x->sent = g->now;
  x->deadline = ce->deadline_propagation ? c->deadline : NO_TICK;
  x->svc = (uint16_t)ce->to;
  x->shard = (uint16_t)shard;
  x->pending = 0;
  x->try_no = c->tries;
  x->cancelled = 0;
  x->sib = c->copies;
  x->waited = 1;
  c->copies = a;
  c->n_out++;
  if (expiry != NO_TICK) event_add(g, EV_TIMEOUT, a, x->gen, 0, expiry);
  /* hedging: the next copy's timer, or (no delay) the next copy at once,
   * once this one is out and unless it ended the call at once */
  int hedge_now = ce->hedge_attempts > 1 && e->hedge_delay <= 0;
  uint32_t cgen = c->gen;
  if (ce->hedge_attempts > 1 && e->hedge_delay > 0)
    event_add(g, EV_HEDGE, ci, c->gen, c->tries, g->now + e->hedge_delay);
  if (lost) { /* an outage: nobody answers; its caller learns at its timeout */
    v->sum.lost++;
    v->cur[TR_LOST]++;
    x->state = ST_SILENT;
    if (hedge_now) call_hedge(g, ci);
    return;
  }
  v->load[shard]++;
  v->inflight++;
  if (s->busy < v->cfg->workers) {
    s->busy++;
    int32_t d = work_ticks(g, v, shard);
    work_begin(g, a, d);
    if (hedge_now && g->cl[ci].gen == cgen) call_hedge(g, ci);
    return;
  }
  x->state = ST_QUEUED;
  x->next = GNIL;
  x->prev = s->qtail;
  if (s->qhead == GNIL) s->qhead = a;
  else g->at[s->qtail].next = a;
  s->qtail = a;
  s->qlen++;
  v->queued++;
  if (hedge_now) call_hedge(g, ci);
}

static uint32_t child_key(eng_graph_run *g, uint32_t key, int32_t edge, int32_t j) {
  uint64_t x = g->key_seed ^ ((uint64_t)key << 20) ^ ((uint64_t)edge << 8) ^ (uint64_t)j;
  return (uint32_t)eng_splitmix64(&x);
}

/* Makes attempt a's calls of its current stage; with none left, its calls
 * are over: the rest of its work, or its failure. */
static void stage_run(eng_graph_run *g, uint32_t a) {
  for (;;) {
    g_att *x = &g->at[a];
    g_service *v = &g->svc[x->svc];
    if (x->failed || (int32_t)x->stage > v->last_stage) break;
    x->pending = 1; /* held while the stage's calls start: one may end at once */
    for (int32_t j = v->first_edge; j < v->first_edge + v->n_edges; j++) {
      int32_t ei = g->order[j];
      const g_edge *e = &g->edge[ei];
      x = &g->at[a]; /* the pool may have moved while the last call went out */
      if (e->cfg->stage != x->stage) continue;
      double f = e->cfg->fanout;
      int32_t n = (int32_t)f;
      if (f > n && eng_rng_uniform(&g->rng) < f - n) n++;
      for (int32_t k = 0; k < n; k++) {
        uint32_t ci = call_alloc(g);
        x = &g->at[a];
        g_call *c = &g->cl[ci];
        c->parent = a;
        c->parent_gen = x->gen;
        c->copies = GNIL;
        c->n_out = 0;
        c->keyhash = child_key(g, x->keyhash, ei, k);
        c->edge = (uint16_t)ei;
        c->tries = 0;
        c->out = 0;
        c->after_timeout = 0;
        c->prev_sleep = 0;
        c->client = x->shard; /* the caller's process: its shard */
        int32_t dl = e->deadline == NO_TICK ? NO_TICK : g->now + e->deadline;
        if (e->cfg->deadline_propagation && x->deadline < dl) dl = x->deadline;
        c->deadline = dl;
        x->pending++;
        if (g->now >= dl) call_end(g, ci, 0); /* no time left: never sent */
        else call_send(g, ci);
      }
    }
    x = &g->at[a];
    if (--x->pending) return; /* the stage's last call to end goes on (call_end) */
    x->stage++;
  }
  g_att *x = &g->at[a];
  if (x->failed) {
    att_finish(g, a, 0);
    return;
  }
  if (x->svc == ENG_FRONT || x->post <= 0) {
    att_finish(g, a, 1);
    return;
  }
  x->state = ST_POST;
  g->svc[x->svc].busy_ticks += x->post;
  event_add(g, EV_WORK, a, x->gen, 0, g->now + x->post);
}

/* Attempt a answers its caller: the front's to sim.c, another's to its
 * call (if the call still waits for it: not timed out, not ended). */
static void att_reply(eng_graph_run *g, uint32_t a, int ok) {
  g_att *x = &g->at[a];
  if (x->svc == ENG_FRONT) {
    if (g->n_done == g->done_cap) {
      size_t n = g->done_cap ? g->done_cap * 2 : 256;
      eng_graph_done *d = realloc(g->done, n * sizeof *d);
      if (!d) longjmp(*g->oom, 1);
      g->done = d;
      g->done_cap = n;
    }
    g->done[g->n_done++] = (eng_graph_done){x->call, x->call_gen, ok ? x->post : 0, ok};
    att_free(g, a);
    return;
  }
  g_service *v = &g->svc[x->svc];
  uint32_t ci = x->call, shard = x->shard;
  int32_t sent = x->sent, try_no = x->try_no;
  g_call *c = &g->cl[ci];
  int waited = x->waited; /* (a copy given up is off its call's list) */
  if (waited) copy_unlink(g, c, a);
  att_free(g, a);
  if (!waited) {
    if (ok) {
      v->sum.wasted++;
      v->cur[TR_WASTED]++;
    }
    return;
  }
  const g_edge *e = &g->edge[c->edge];
  attempt_over(e, c->client);
  if (e->brk) attempt_heard(g, e, c->client, shard, sent, ok);
  if (ok) {
    v->sum.successes++;
    v->cur[TR_SUCC]++;
    if (e->lim_kind)
      eng_limiter_on_success(&e->lim[c->client], &e->lp, g->now, try_no > 1, c->after_timeout);
    call_end(g, ci, 1);
  } else {
    call_failed(g, ci, ENG_FAIL_SHED, try_no);
  }
}

/* ---- sim.c's side ---- */

void eng_graph_front_start(eng_graph_run *g, int32_t now, uint32_t i, uint32_t gen,
                           uint32_t keyhash, uint32_t shard, int32_t d, int32_t expiry) {
  g->now = now;
  uint32_t a = att_alloc(g);
  g_att *x = &g->at[a];
  x->call = i;
  x->call_gen = gen;
  x->keyhash = keyhash;
  x->sent = now;
  x->deadline = expiry;
  x->svc = ENG_FRONT;
  x->shard = (uint16_t)shard;
  x->pending = 0;
  work_begin(g, a, d);
}

static void on_event(eng_graph_run *g, const g_event *e) {
  if (e->kind == EV_WORK) {
    g_att *x = &g->at[e->id];
    if (x->gen != e->id_gen) return;
    if (x->state == ST_PRE) {
      x->state = ST_CALLS;
      stage_run(g, e->id);
    } else {
      att_finish(g, e->id, 1);
    }
    return;
  }
  if (e->kind == EV_TIMEOUT) {
    g_att *x = &g->at[e->id];
    if (x->gen != e->id_gen || !x->waited) return; /* answered, or given up */
    uint32_t ci = x->call;
    g_call *c = &g->cl[ci];
    const g_edge *ed = &g->edge[c->edge];
    g->svc[ed->cfg->to].sum.timeouts++;
    g->svc[ed->cfg->to].cur[TR_TIMEOUT]++;
    copy_unlink(g, c, e->id); /* it goes on at its server; its answer is wasted */
    attempt_over(ed, c->client);
    if (ed->brk) attempt_heard(g, ed, c->client, x->shard, x->sent, 0);
    int try_no = x->try_no;
    if (x->state == ST_SILENT) att_free(g, e->id); /* shed unanswered: heard of only now */
    call_failed(g, ci, ENG_FAIL_TIMEOUT, try_no);
    return;
  }
  g_call *c = &g->cl[e->id];
  if (c->gen != e->id_gen || c->tries != e->tries) return; /* ended, or a later attempt's */
  if (e->kind == EV_RETRY) call_send(g, e->id);
  else call_hedge(g, e->id);
}

void eng_graph_tick(eng_graph_run *g, int32_t now) {
  g->now = now;
  uint32_t *b = &g->wheel[(uint32_t)now & (WHEEL - 1)];
  uint32_t e = *b;
  *b = GNIL;
  while (e != GNIL) {
    uint32_t next = g->ev[e].next;
    if (g->ev[e].due != now) { /* a later lap */
      g->ev[e].next = *b;
      *b = e;
    } else {
      g_event copy = g->ev[e];
      ev_free(g, e);
      on_event(g, &copy);
    }
    e = next;
  }
}

const eng_graph_done *eng_graph_take(eng_graph_run *g, size_t *n) {
  *n = g->n_done;
  g->n_done = 0;
  return g->done;
}
