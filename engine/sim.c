/*
 * sim.c — one run of the sharded cluster, tick by tick.
 *
 * Everything a run touches lives in struct eng_run, reused across runs so a
 * sweep thread allocates only while its buffers grow.
 *
 * Attempts are records in one pool, addressed by 32-bit index, recycled
 * through a free list; a generation counter tells a recycled record from the
 * one a stale reference meant. Each tick runs, in order:
 *   1. fault edges that start or end at this tick;
 *   2. the timing wheel's bucket: service completions and delayed retries;
 *   3. request deadlines (request mode: one FIFO, every request gets the
 *      same deadline after its start), then client timeouts: one FIFO,
 *      since every attempt gets the same timeout, so the oldest outstanding
 *      attempt is always at its head (O(1), no cancellation: answered
 *      attempts are skipped lazily), then hedge timers (one FIFO again);
 *   4. new requests: a Poisson count, then one attempt each (and, with a
 *      hedge delay of 0, their further copies);
 *   5. the tick's metrics.
 * Completions come before deadlines and timeouts, so an attempt answered
 * exactly at its timeout succeeds: success <=> time in system <= timeout
 * (or the rest of its request's deadline, when shorter). After every
 * event, overload errors of attempts it shed reach their clients
 * (replies_drain), which may retry at once.
 *
 * Service times are drawn in continuous time and rounded to ticks by
 * floor(x + U), which keeps their mean exact; a zero-tick service finishes in
 * the tick it started. The wheel has WHEEL_SIZE buckets; an event further
 * ahead than that waits in its bucket for the right lap (the check is one
 * compare), so no horizon or queue depth makes an event cost more.
 *
 * Where nothing changes by itself between events (skip_ok), a run of empty
 * ticks is passed over in one step (skip_empty): each still draws its
 * arrival uniform, so the results are bit-identical to running every tick
 * (tests/test_skip.c; eng_run_set_skipping turns it off).
 */
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "eng.h"
#include "backoff.h"
#include "graph.h"
#include "breaker.h"
#include "codel.h"
#include "latency_hist.h"
#include "limiter.h"
#include "recovery.h"
#include "request.h"
#include "rng.h"
#include "router.h"
#include "telemetry_tables.h"
#include "variates.h"

#define NIL UINT32_MAX
#define WHEEL_BITS 12
#define WHEEL_SIZE (1u << WHEEL_BITS)
#define WHEEL_MASK (WHEEL_SIZE - 1)

enum { EV_COMPLETE = 0, EV_RETRY = 1, EV_USER = 2, EV_REQ_RETRY = 3 };
enum { STREAM_ARRIVALS = 1, STREAM_SERVICE = 2, STREAM_CLIENT = 3, STREAM_RING = 4, STREAM_USERS = 5 };

typedef struct attempt {
  uint32_t next;       /* wheel bucket, shard queue, reply list or free list link */
  uint32_t gen;        /* bumped on free: stale timeout entries are skipped */
  uint32_t keyhash;
  uint32_t client;
  int32_t sent;        /* tick the attempt was sent (and admitted) */
  int32_t born;        /* tick its request was first sent (its latency's start) */
  int32_t due;         /* wheel event tick */
  uint16_t shard;
  uint16_t epoch;      /* shard epoch at admission: a crash invalidates it */
  uint16_t attempt_no; /* 0 = first try; max_retries goes up to 1000 */
  uint8_t kind;        /* wheel event kind */
  uint8_t after_timeout; /* a retry sent because its predecessor timed out (aws refunds) */
  /* the four a new attempt clears, side by side: one store */
  uint8_t at_server;   /* admitted and not yet finished or lost */
  uint8_t abandoned;   /* the client timed it out */
  uint8_t lost_load;   /* lost, and still in the router's load until its timeout */
  uint8_t x;           /* X_* flags */
  union {
    float prev_sleep;  /* decorrelated jitter's previous sleep, ms */
    uint32_t req;      /* request mode: its request record (which keeps prev_sleep) */
  };
} attempt;

enum {
  X_LOST = 1,   /* lost to a crash or an outage: its timeout is an ENG_FAIL_LOST */
  X_STALE = 2,  /* request mode: the server knows its deadline passed (deadline_drop) */
  X_CANCEL = 4, /* request mode: the client cancelled it (hedge_cancel) */
  X_REPLY = 8,  /* on the reply list: its overload error is on the way to the client */
  X_GRAPH = 16, /* call graphs: on the reply list, its calls ended (graph_reply) */
  X_ERROR = 32, /* ... and one of them failed: it answers with an error */
};

typedef struct shard {
  uint32_t qhead, qtail;
  int32_t qlen, busy;
  double speed;                   /* service rate now: 1 healthy, brownout_factor, 0 stalled */
  eng_codel codel;                /* controlled delay (codel_variant fail_at_scale, rfc8289) */
  uint16_t epoch;
  uint8_t crashed;
  uint8_t profiled;               /* the brownout shard: service follows its speed profile */
  int64_t admitted;
} shard;

/* The brownout shard's speed over the whole run, piecewise constant between
 * fault edges and known in advance: work in service progresses at the
 * speed of the moment, so its completion tick is where the cumulative work
 * V(t) = integral of the speed reaches V(start) + service time. */
#define BO_SEGS (2 * ENG_MAX_WINDOWS + 1)
typedef struct speed_profile {
  int32_t n, cur;           /* segments, and the one holding the current tick */
  int32_t t[BO_SEGS];       /* segment k covers ticks [t[k], t[k+1]) (the last: to the end) */
  double v[BO_SEGS];        /* V(t[k]) */
  double speed[BO_SEGS];
} speed_profile;

typedef struct edge {
  int32_t tick;
  int8_t kind, on;
} edge;

#define CAP_MEMO 256 /* router caps remembered, by load */

enum { F_SURGE, F_BROWNOUT, F_CRASH, F_DETECT, F_OUTAGE, F_HOT, F_KINDS };

/* The summary's totals over a run's ticks (run_summarize): fed from the
 * per-tick rows after the run, or tick by tick when it keeps none. */
typedef struct run_totals {
  int64_t newr, att, succ, fail, newr_after, att_after;
  double base_in_flight; /* in flight summed over the baseline window */
} run_totals;

struct eng_run {
  const eng_config *cfg;
  int32_t ticks, now;
  /* A run that needs more memory than it may have fails alone: the grow
   * paths jump back to eng_run_simulate, which returns the error. */
  jmp_buf oom;
  size_t mem_limit;    /* bytes the attempt pool and timeout queue may take */
  eng_rng r_arr, r_svc, r_cli;
  uint32_t ring_seed;

  attempt *at;
  uint32_t at_cap, at_free;

  uint32_t wheel[WHEEL_SIZE];

  uint64_t *tq; /* timeout FIFO: index | gen << 32 */
  uint32_t tq_cap, tq_head, tq_len;

  shard *sh;
  int32_t *loads;
  uint8_t *healthy;
  size_t sh_cap, loads_cap, healthy_cap, excluded_cap;
  int64_t in_flight;   /* admitted and not finished (the router's "in flight") */
  int64_t route_load;  /* the router's L: in_flight plus lost attempts it still counts */
  int64_t total_queued;
  eng_ring ring;

  eng_breaker *brk;
  int32_t *client_open; /* open breakers per client */
  uint8_t *excluded;    /* scratch: shards a client's breakers exclude */
  double *tokens;
  size_t brk_cap, client_open_cap, tokens_cap;
  int32_t open_breakers;
  double tokens_total;

  edge *edges;
  size_t edges_cap;
  int32_t n_edges, edge_pos;
  int32_t fault_on[F_KINDS];

  speed_profile bo;   /* of shard bo_shard, when brownouts are set */
  int32_t bo_shard;   /* -1: no brownout */
  uint32_t reply_head, reply_tail; /* shed attempts whose overload error the client gets now */

  /* converted parameters */
  double svc_mean_ticks, lognorm_mu, lam_base;
  eng_poisson_rate arrivals; /* the request rate now (surges change it) */
  const eng_empirical *emp;  /* service = empirical: its table, and ms to ticks */
  double emp_scale;
  const eng_rate_profile *prof; /* rate_profile: requests/s over time, and to per tick */
  double prof_scale;
  size_t prof_cursor;
  double q_cap;
  int32_t timeout_ticks, codel_target, codel_interval, detect_ticks;
  uint8_t codel_folly;    /* controlled delay is on with codel_variant = folly */
  eng_codel_folly *folly; /* per shard, when codel_folly */
  size_t folly_cap;
  int may_lose;           /* crashes are scheduled: work in service may be lost */
  int32_t cap_healthy;    /* the healthy-shard count cap_memo holds caps for (-1: none) */
  struct {
    int64_t load;         /* route_load this entry's cap was computed for (-1: none) */
    int32_t cap;          /* eng_router_cap at that load */
  } cap_memo[CAP_MEMO];   /* direct-mapped by route_load */

  /* metrics */
  int32_t *metrics;      /* ENG_M_COUNT x rows_n; not allocated without rows */
  size_t metrics_cap;
  /* below one row per tick (eng_run_set_row_ticks) the outcome rule and
   * the summary's totals are fed tick by tick instead of from the rows, so
   * memory does not grow with the horizon */
  uint8_t ticks_off;
  uint8_t keep_shardq; /* record_shard_queues, and rows are kept */
  /* eng_run_set_row_ticks: 0 no rows, 1 a row per tick, k > 1 a row per k
   * ticks (rows_n of them), accumulated as the ticks pass (the rule is then
   * streamed, as without rows) */
  int32_t row_every, rows_n;
  int32_t levels[ENG_M_USER_FIRST], n_levels; /* the metrics that are levels */
  eng_recovery_stream rs;
  run_totals tot;
  eng_recovery_params rule; /* the outcome rule's windows for this run */
  int32_t *win_user;     /* ENG_M_USER_COUNT x lat_windows: each window's user view */
  size_t win_user_cap;
  int32_t *shard_queues; /* ticks x shards, optional */
  size_t shard_queues_cap;
  int32_t cur[ENG_M_COUNT];

  /* Little's law over the baseline window */
  int32_t base_begin, base_end;
  int32_t little_begin, little_end; /* the baseline window less a tail margin */
  uint32_t little_len; /* little_end - little_begin: one unsigned compare tests the window */
  int64_t little_admitted, little_sojourn_sum, little_done;
  double little_in_system;

  int64_t events, hops_total, admissions;
  uint8_t skip_ok;     /* empty ticks may be skipped (skip_empty): nothing changes by itself */
  uint8_t skip_off;    /* eng_run_set_skipping(r, 0): every tick runs (kept across runs) */
  double keys_remapped;
  int32_t succ_peak_load;
  eng_zig zig; /* exponential ziggurat tables, built once per context */
  eng_zipf zipf;
  eng_breaker_params brk_params;

  /* Closed-loop users and the retry limiters other than the
   * inline token bucket; all of it sits behind r->hooks. */
  uint8_t hooks;     /* closed model or a limiter: request starts and ends are reported */
  uint8_t closed;    /* client_model = closed */
  uint8_t tb_on;     /* the budget_ratio token bucket is the limiter, and finite */
  int32_t lim_kind;  /* eng_retry_limiter */
  eng_limiter *lim;  /* per client */
  size_t lim_cap;
  eng_limiter_params lim_params;
  eng_rng r_usr;     /* think times and start offsets */
  uint32_t *idle;    /* per client: records of users whose request is in flight */
  int32_t *users;    /* per client: users alive */
  size_t idle_cap, users_cap;
  int64_t users_base, users_surge; /* users over all clients, outside / inside a surge */
  uint32_t ready_head, ready_tail; /* users whose next request goes out this tick */
  double think_ticks, cycle_ticks; /* cycle: the start spread without think time */

  /* Request mode (request.h), for deadlines, hedging, retry_on,
   * the client concurrency limit and Envoy's budget; off by default. */
  uint8_t reqs;
  uint8_t drop_abandoned; /* deadline_drop, or request mode (cancelled copies) */
  uint64_t seed;
  eng_request_pool rp;
  eng_timer_fifo dl, hq;  /* deadlines, hedge timers */
  int32_t *live;          /* per client: copies in flight */
  size_t live_cap;
  int32_t deadline_ticks; /* 0: no deadline */
  int32_t hedge_ticks, hedges, max_live;

  /* What users see: each request's latency goes into the segment's
   * histogram (lh[LH_SEG]; allocated with the context). A segment ends at
   * every window end and phase boundary: it is then added to its window's
   * (lh[LH_WIN]) and its phase's (lh[1 + phase]), so a request costs one
   * add; the window's series are computed at its end. */
  eng_lat_hist *lh;
  int64_t seg_st[ENG_ST_COUNT]; /* the segment's requests by final status */
  int32_t seg_phase, seg_next;  /* its phase (-1: none), the next phase boundary */
  eng_latency_phase ph[ENG_PHASE_COUNT];
  int32_t ph_begin[ENG_PHASE_COUNT], ph_end[ENG_PHASE_COUNT];
  int32_t lat_wticks, lat_windows, lat_next; /* window length, count, the next one's end */
  int64_t lat_fin, lat_fail;   /* the current window's requests */
  double *lat_series;          /* ENG_L_COUNT x lat_windows */
  size_t lat_series_cap;
  double user_recovery_ms;

  /* Call graphs (graph.h): the services behind this one; off (NULL
   * graph_on) for a single tier, whose engine never reaches it. */
  uint8_t graph_on;
  eng_graph_run *graph;
  eng_service_summary *svc_sum; /* after the run: 1 + n_services */
  size_t svc_sum_cap;
};

enum { LH_SEG = 0, LH_WIN = 1 + ENG_PHASE_COUNT, LH_COUNT }; /* eng_run.lh */

/* ------------------------------------------------------------------------ */
/* memory                                                                    */

eng_run *eng_run_create(void) {
  eng_run *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->row_every = 1;
  eng_zig_init(&r->zig);
  r->lh = malloc(LH_COUNT * sizeof *r->lh);
  if (!r->lh) {
    free(r);
    return NULL;
  }
  for (int k = 0; k < LH_COUNT; k++) eng_lh_init(&r->lh[k]);
  return r;
}

void eng_run_destroy(eng_run *r) {
  if (!r) return;
  free(r->at);
  free(r->tq);
  free(r->sh);
  free(r->loads);
  free(r->healthy);
  eng_ring_free(&r->ring);
  free(r->brk);
  free(r->client_open);
  free(r->excluded);
  free(r->tokens);
  free(r->lim);
  free(r->idle);
  free(r->users);
  free(r->edges);
  free(r->metrics);
  free(r->win_user);
  eng_recovery_free(&r->rs);
  free(r->shard_queues);
  free(r->folly);
  eng_request_pool_free(&r->rp);
  eng_timer_fifo_free(&r->dl);
  eng_timer_fifo_free(&r->hq);
  free(r->live);
  free(r->lh);
  free(r->lat_series);
  eng_graph_destroy(r->graph);
  free(r->svc_sum);
  free(r);
}

/* Request mode (request.h): what needs a record per request. */
static int uses_requests(const eng_config *c) {
  return !isinf(c->deadline_ms) || c->hedge_attempts > 1 ||
         c->retry_on != ENG_RETRY_ON_DEFAULT ||
         (!isinf(c->max_requests_per_client) && c->max_requests_per_client < INT32_MAX) ||
         c->retry_limiter == ENG_LIMITER_ENVOY;
}

/* Records of a pool that starts at 4096 and doubles (every one is touched:
 * the free list runs through them all). */
static double pool_records(double live) {
  double n = 4096;
  while (n < live) n *= 2;
  return n;
}

static void recovery_params(const eng_config *c, int32_t ticks, int32_t base_begin,
                            int32_t base_end, eng_recovery_params *out);

void eng_run_memory(const eng_config *c, int32_t row_ticks, eng_memory *m) {
  memset(m, 0, sizeof *m);
  double ticks = eng_config_ticks(c), ns = c->shards, nc = c->clients;
  double surge = c->surge.count && c->surge_factor > 1 ? c->surge_factor : 1;
  double rows = row_ticks > 0 ? ceil(ticks / row_ticks) : 0;
  m->per_tick = rows * ENG_M_COUNT * sizeof(int32_t);
  if (row_ticks != 1) {
    /* the outcome rule's windows instead of the rows (the baseline's place
     * does not change their sizes) */
    eng_recovery_params p;
    recovery_params(c, (int32_t)ticks, 0, 0, &p);
    m->per_tick += eng_recovery_bytes(&p);
  }
  m->shard_queues = c->record_shard_queues ? rows * ns * sizeof(int32_t) : 0;
  /* The ring and the radix sort's copy of it, and a lookup table of up to
   * 2^20 entries (router.c). */
  double points = ns * c->vnodes;
  m->ring = points * 2 * sizeof(eng_ring_point) + fmin(points * 2, 1 << 20) * sizeof(uint32_t);
  m->breakers = c->brk.breaker != ENG_BREAKER_OFF ? nc * ns * sizeof(eng_breaker) : 0;
  m->tables = ns * (sizeof(shard) + sizeof(int32_t) + 2 +
                    (c->codel_variant == ENG_CODEL_FOLLY ? sizeof(eng_codel_folly) : 0)) +
              nc * (sizeof(int32_t) * 3 + sizeof(double) + sizeof(eng_limiter) + sizeof(uint32_t)) +
              sizeof(eng_run);
  /* Attempts alive at once. Without a fault and below capacity the queues
   * stay short: those in service and about a service time of arrivals.
   * Otherwise a retry storm is possible, and then an attempt lives from
   * its send until it is answered or, abandoned at its timeout, leaves its
   * queue: as many as are sent within a timeout, but no more than the
   * queues and workers hold (the rest are refused at once), and never
   * more than were ever sent. A closed model's users wait in attempt
   * records too. */
  double rate = eng_config_arrival_rps(c) * c->tick_ms / 1000.0 * surge;
  double in_service = ns * c->workers, live;
  int faults = c->surge.count || c->brownout.count || c->crash.count || c->outage.count ||
               c->hot_key.count;
  if (!faults && rate < eng_config_capacity_rps(c) * c->tick_ms / 1000.0) {
    live = in_service + rate * (c->service_mean_ms / c->tick_ms + 1.0);
  } else {
    double sent = rate * (c->max_retries + 1.0);
    double wait = fmin(fmin(c->timeout_ms, c->deadline_ms) / c->tick_ms + 1.0, ticks);
    live = sent * wait;
    if (isfinite(c->queue_capacity)) live = fmin(live, ns * c->queue_capacity);
    live = fmin(live + in_service, sent * ticks + in_service);
  }
  if (c->client_model == ENG_CLIENT_CLOSED) live += (double)eng_config_users(c) * surge;
  m->live = live;
  /* The records, and an entry each in the timeout FIFO; in request mode a
   * request record and its timers too (at most one request per attempt). */
  m->attempts = pool_records(live) * sizeof(attempt) + live * sizeof(uint64_t);
  if (uses_requests(c)) m->attempts += live * (sizeof(eng_request) + 2 * sizeof(eng_timer));
  double wticks = fmax(1, floor(c->latency_window_ms / c->tick_ms + 0.5));
  m->latency = LH_COUNT * sizeof(eng_lat_hist) +
               ceil(ticks / wticks) * ENG_L_COUNT * sizeof(double);
  if (c->graph.n_services) {
    double traces, records;
    eng_graph_memory(c, ticks, &traces, &records);
    m->per_tick += traces;
    m->attempts += records;
  }
  m->total = m->per_tick + m->shard_queues + m->ring + m->breakers + m->tables + m->attempts +
             m->latency;
}

void eng_memory_max(eng_memory *acc, const eng_memory *m) {
  acc->per_tick = fmax(acc->per_tick, m->per_tick);
  acc->shard_queues = fmax(acc->shard_queues, m->shard_queues);
  acc->ring = fmax(acc->ring, m->ring);
  acc->breakers = fmax(acc->breakers, m->breakers);
  acc->tables = fmax(acc->tables, m->tables);
  acc->attempts = fmax(acc->attempts, m->attempts);
  acc->live = fmax(acc->live, m->live);
  acc->latency = fmax(acc->latency, m->latency);
  acc->total = acc->per_tick + acc->shard_queues + acc->ring + acc->breakers + acc->tables +
               acc->attempts + acc->latency;
}

static _Noreturn void fatal_oom(eng_run *r) { longjmp(r->oom, 1); }

/* Grows *p to hold need elements (doubling); contents are kept. */
static int ensure(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * elem);
  if (!q) return -1;
  *p = q;
  *cap = n;
  return 0;
}

/* Doubles the attempt pool; new records go on the free list. */
static void pool_grow(eng_run *r) {
  uint32_t old = r->at_cap, n = old ? old * 2 : 4096;
  if (n > (uint32_t)1 << 31 || (size_t)n * sizeof(attempt) > r->mem_limit) fatal_oom(r);
  attempt *p = realloc(r->at, (size_t)n * sizeof *p);
  if (!p) fatal_oom(r);
  r->at = p;
  for (uint32_t i = old; i < n; i++) {
    p[i].next = i + 1 < n ? i + 1 : r->at_free;
    p[i].gen = 0;
  }
  r->at_free = old;
  r->at_cap = n;
}

static inline uint32_t at_alloc(eng_run *r) {
  if (r->at_free == NIL) pool_grow(r);
  uint32_t i = r->at_free;
  r->at_free = r->at[i].next;
  return i;
}

static inline void at_free(eng_run *r, uint32_t i) {
  attempt *a = &r->at[i];
  a->gen++;
  a->next = r->at_free;
  r->at_free = i;
}

static inline void wheel_insert(eng_run *r, uint32_t i, int32_t due, int kind) {
  attempt *a = &r->at[i];
  a->due = due;
  a->kind = (uint8_t)kind;
  uint32_t *b = &r->wheel[(uint32_t)due & WHEEL_MASK];
  a->next = *b;
  *b = i;
}

/* Doubles the timeout FIFO, unrolling it to start at 0 (rare: kept out of
 * line so that the push below stays a few instructions, inlined). */
static __attribute__((noinline)) void tq_grow(eng_run *r) {
  uint32_t n = r->tq_cap ? r->tq_cap * 2 : 4096;
  if ((size_t)n * sizeof(uint64_t) > r->mem_limit) fatal_oom(r);
  uint64_t *q = malloc((size_t)n * sizeof *q);
  if (!q) fatal_oom(r);
  for (uint32_t k = 0; k < r->tq_len; k++) q[k] = r->tq[(r->tq_head + k) & (r->tq_cap - 1)];
  free(r->tq);
  r->tq = q;
  r->tq_cap = n;
  r->tq_head = 0;
}

static inline void tq_push(eng_run *r, uint32_t i) {
  if (r->tq_len == r->tq_cap) tq_grow(r);
  r->tq[(r->tq_head + r->tq_len) & (r->tq_cap - 1)] = i | (uint64_t)r->at[i].gen << 32;
  r->tq_len++;
}

/* ------------------------------------------------------------------------ */
/* random variates                                                           */

/* Completion time, in ticks from now, of work x (ticks at full speed) that
 * starts now on the brownout shard: where V reaches V(now) + x, skipping
 * stalled segments. Segments are at most 2 x 8 + 1, and the scan starts
 * from the current one, so this is O(1). */
static __attribute__((noinline)) double profile_finish(speed_profile *p, int32_t now, double x) {
  while (p->cur + 1 < p->n && p->t[p->cur + 1] <= now) p->cur++;
  int32_t k = p->cur;
  double target = p->v[k] + p->speed[k] * (double)(now - p->t[k]) + x;
  for (; k + 1 < p->n; k++)
    if (p->speed[k] > 0 && p->v[k + 1] >= target) break;
  if (!(p->speed[k] > 0)) return 2e9; /* stalled to the end of the run */
  return (double)p->t[k] + (target - p->v[k]) / p->speed[k] - (double)now;
}

/* rate_profile: this tick's arrival rate from the profile at the tick's
 * time (a cursor walks its points, so O(1) per tick), times any surge. */
static __attribute__((noinline)) void profile_rate(eng_run *r, int32_t t) {
  double rps = eng_rate_profile_at(r->prof, (double)t * r->cfg->tick_ms, &r->prof_cursor);
  double lam = rps * r->prof_scale * (r->fault_on[F_SURGE] ? r->cfg->surge_factor : 1);
  if (lam != r->arrivals.lam) eng_poisson_prep(&r->arrivals, lam);
}

/* Service work in ticks at full speed, and the rounding fraction, for the
 * distributions other than the exponential (out of line). */
static __attribute__((noinline)) double service_other(eng_run *r, double *frac) {
  double x;
  if (r->cfg->service_dist == ENG_SERVICE_DET) {
    x = r->svc_mean_ticks;
  } else if (r->emp) {
    x = eng_empirical_draw(r->emp, &r->r_svc) * r->emp_scale;
  } else {
    x = exp(r->lognorm_mu + r->cfg->service_sigma * eng_rng_normal(&r->r_svc));
  }
  *frac = eng_rng_uniform(&r->r_svc);
  return x;
}

/* Inlined into both places that start work: the exponential (the default)
 * is a ziggurat draw and a multiply, and a call would cost as much. */
static inline __attribute__((always_inline)) int32_t service_ticks(eng_run *r, const shard *s) {
  double x, frac;
  if (__builtin_expect(r->cfg->service_dist == ENG_SERVICE_EXP, 1))
    x = eng_zig_exp1(&r->zig, &r->r_svc, &frac) * r->svc_mean_ticks;
  else
    x = service_other(r, &frac);
  if (__builtin_expect(s->profiled, 0)) x = profile_finish(&r->bo, r->now, x);
  double d = x + frac; /* >= 0, so truncation is floor() without a libm call */
  return d > 1e9 ? 1000000000 : (int32_t)d;
}

/* ------------------------------------------------------------------------ */
/* circuit breakers                                                          */

static inline eng_breaker *brk_get(eng_run *r, uint32_t client, uint32_t s) {
  return &r->brk[(size_t)client * (size_t)r->cfg->shards + s];
}

static void brk_record(eng_run *r, uint32_t client, uint32_t s, int32_t sent, int failed) {
  int d = eng_breaker_record(brk_get(r, client, s), &r->brk_params, r->now, sent, failed);
  r->open_breakers += d;
  r->client_open[client] += d;
}

/* ------------------------------------------------------------------------ */
/* shards                                                                    */

static inline int shard_stalled(const shard *s) { return !(s->speed > 0); }

static int32_t ticks_saturate(double t);
static void client_issue(eng_run *r, uint32_t i);
static void hook_success(eng_run *r, const attempt *a);
static void hook_request_end(eng_run *r, uint32_t client);
static void user_wake(eng_run *r, uint32_t u);
static uint32_t req_failed(eng_run *r, uint32_t i, int kind, int32_t shard_id, int reuse);
static void req_refused(eng_run *r, uint32_t i, int st);
static void req_start(eng_run *r, uint32_t i);
static void req_sent(eng_run *r, uint32_t i);
static void req_succeeded(eng_run *r, uint32_t i);
static void req_retry_due(eng_run *r, uint32_t i);
static void replies_drain(eng_run *r);

/* A request that started at tick born ended now with status st. */
static inline void latency_record(eng_run *r, int32_t born, int st) {
  eng_lh_add(&r->lh[LH_SEG], (uint64_t)(r->now - born)); /* ticks: ms at the window's end */
  r->seg_st[st]++;
}

/* The final status of a request whose last attempt failed with kind. */
static const uint8_t status_of_failure[ENG_FAIL_KINDS] = {
    [ENG_FAIL_TIMEOUT] = ENG_ST_TIMEOUT,  [ENG_FAIL_REJECTED] = ENG_ST_REJECTED,
    [ENG_FAIL_SHED] = ENG_ST_SHED,        [ENG_FAIL_ROUTER] = ENG_ST_REJECTED,
    [ENG_FAIL_BREAKER] = ENG_ST_BREAKER,  [ENG_FAIL_LOST] = ENG_ST_TIMEOUT,
    [ENG_FAIL_OVERFLOW] = ENG_ST_REJECTED,
};

/* A request (started at tick born) ended without success, with status st. */
static inline void request_failed(eng_run *r, uint32_t client, int32_t born, int st) {
  r->cur[ENG_M_FAILED]++;
  latency_record(r, born, st);
  if (r->hooks) hook_request_end(r, client);
}

/* An admitted attempt leaves its shard: answered, or shed. */
static inline void shard_release(eng_run *r, attempt *a) {
  r->loads[a->shard]--;
  r->in_flight--;
  r->route_load--;
  a->at_server = 0;
  if ((uint32_t)(a->sent - r->little_begin) < r->little_len) {
    r->little_sojourn_sum += r->now - a->sent;
    r->little_done++;
  }
}

static inline __attribute__((always_inline)) void attempt_answered(eng_run *r, uint32_t i) {
  attempt *a = &r->at[i];
  shard_release(r, a);
  if (a->abandoned) {
    r->cur[ENG_M_WASTED]++;
  } else {
    r->cur[ENG_M_SUCCESSES]++;
    latency_record(r, a->born, ENG_ST_OK);
    if (r->cfg->brk.breaker != ENG_BREAKER_OFF) brk_record(r, a->client, a->shard, a->sent, 0);
    if (r->hooks) hook_success(r, a);
  }
  at_free(r, i);
}

static __attribute__((noinline)) void attempt_shed(eng_run *r, uint32_t i) {
  attempt *a = &r->at[i];
  shard_release(r, a);
  r->cur[ENG_M_SHED]++;
  if (a->abandoned) {
    at_free(r, i);
  } else if (r->cfg->shed_reply == ENG_SHED_ERROR) {
    /* An overload error the client hears at once. It is handled after the
     * current event (replies_drain), not here: its retry could be shed by
     * this same shard, and recursion would grow with the queue. */
    a->next = NIL;
    a->x |= X_REPLY;
    if (r->reply_tail == NIL) r->reply_head = i;
    else r->at[r->reply_tail].next = i;
    r->reply_tail = i;
  }
  /* shed_reply = silent: the client learns at its timeout, as with a real drop */
}

/* folly's Codel (codel.h) is asked for every attempt that starts service,
 * with the ticks it waited. */
static inline int codel_folly(eng_run *r, shard *s, int32_t delay) {
  return eng_codel_folly_shed(&r->folly[s - r->sh], r->now, delay, r->codel_target,
                              r->codel_interval);
}

/* Whether the queue head should be shed rather than served (deadline drop,
 * controlled delay). */
static int shard_should_shed(eng_run *r, shard *s, const attempt *a) {
  if (a->abandoned && r->drop_abandoned) {
    /* request mode: a cancelled copy is dropped (2: no shed counted), and
     * deadline_drop sheds what the server knows to be past its deadline */
    if (!r->reqs) return 1;
    int d = a->x & X_CANCEL ? 2 : r->cfg->deadline_drop && (a->x & X_STALE);
    if (d) return d;
  }
  if (r->codel_target < 0) return 0;
  int32_t delay = r->now - a->sent;
  if (r->cfg->codel_variant == ENG_CODEL_RFC8289)
    return eng_codel_rfc8289_shed(&s->codel, r->now, delay, s->qlen, r->codel_target,
                                  r->codel_interval);
  if (r->cfg->codel_variant == ENG_CODEL_FOLLY) return codel_folly(r, s, delay);
  return eng_codel_fas_shed(&s->codel, r->now, delay, r->codel_target, r->codel_interval);
}

static inline void shard_start(eng_run *r, shard *s, uint32_t i);

/* Starts queued work while workers are free. */
static void shard_pump(eng_run *r, shard *s) {
  while (s->busy < r->cfg->workers && s->qhead != NIL && !shard_stalled(s)) {
    uint32_t i = s->qhead;
    attempt *a = &r->at[i];
    s->qhead = a->next;
    if (s->qhead == NIL) s->qtail = NIL;
    /* The new head waited long enough to leave the cache; fetch it now, it
     * is the next one this shard starts. */
    else __builtin_prefetch(&r->at[s->qhead]);
    s->qlen--;
    r->total_queued--;
    int shed = shard_should_shed(r, s, a);
    if (shed) {
      if (shed == 2) { /* a cancelled copy leaves unserved and unshed */
        shard_release(r, a);
        at_free(r, i);
      } else {
        attempt_shed(r, i);
      }
      continue;
    }
    shard_start(r, s, i);
  }
  if (s->qhead == NIL) eng_codel_idle(&s->codel);
}

static void front_start(eng_run *r, shard *s, uint32_t i, int32_t d);

static inline __attribute__((always_inline)) void shard_start(eng_run *r, shard *s, uint32_t i) {
  int32_t d = service_ticks(r, s);
  if (__builtin_expect(r->graph_on, 0)) {
    front_start(r, s, i, d);
    return;
  }
  if (d == 0) { /* finished within the tick; the worker stays free */
    attempt_answered(r, i);
    return;
  }
  s->busy++;
  wheel_insert(r, i, r->now + d, EV_COMPLETE);
}

/* Starts a just-admitted attempt at once. Its timeout entry is needed only
 * if it can still time out: when it is answered by its timeout (completions
 * come before timeouts in a tick) and no crash can lose it meanwhile, the
 * entry would only be skipped as stale. Leaving it out changes nothing but
 * the work: entries keep their order, and stale ones count for nothing. */
static inline __attribute__((always_inline)) void shard_start_sent(eng_run *r, shard *s,
                                                                    uint32_t i) {
  int32_t d = service_ticks(r, s);
  if (__builtin_expect(r->graph_on, 0)) {
    tq_push(r, i); /* its calls may outlast any timeout */
    front_start(r, s, i, d);
    return;
  }
  if (d == 0) { /* finished within the tick; the worker stays free */
    attempt_answered(r, i);
    return;
  }
  if (d > r->timeout_ticks || r->may_lose) tq_push(r, i);
  s->busy++;
  wheel_insert(r, i, r->now + d, EV_COMPLETE);
}

static void shard_enqueue(eng_run *r, shard *s, uint32_t i) {
  attempt *a = &r->at[i];
  int lifo = r->cfg->queue_discipline == ENG_QUEUE_LIFO ||
             (r->cfg->queue_discipline == ENG_QUEUE_ADAPTIVE_LIFO &&
              s->qlen >= r->cfg->adaptive_lifo_threshold);
  if (s->qhead == NIL) {
    a->next = NIL;
    s->qhead = s->qtail = i;
  } else if (lifo) {
    a->next = s->qhead;
    s->qhead = i;
  } else {
    a->next = NIL;
    r->at[s->qtail].next = i;
    s->qtail = i;
  }
  s->qlen++;
  r->total_queued++;
}

static void on_complete(eng_run *r, uint32_t i) {
  attempt *a = &r->at[i];
  shard *s = &r->sh[a->shard];
  if (a->epoch != s->epoch) { /* its shard crashed meanwhile: the answer never comes */
    if (r->cfg->router_load == ENG_ROUTER_LOAD_SENT) {
      /* the router counted it since the crash; now it waits for its timeout */
      if (a->abandoned) {
        r->loads[a->shard]--;
        r->route_load--;
      } else {
        a->lost_load = 1;
      }
    }
    if (a->abandoned) {
      at_free(r, i);
    } else {
      a->at_server = 0;
      a->x |= X_LOST;
    }
    return;
  }
  s->busy--;
  attempt_answered(r, i);
  /* shard_pump with its common case, nothing queued, inlined */
  if (s->qhead != NIL) {
    shard_pump(r, s);
  } else {
    eng_codel_idle(&s->codel);
  }
}

/* Crash: queued and in-service work is gone; clients find out by timeout.
 * With router_load = sent the router keeps counting it until then: queued
 * attempts become lost ones here, those in service at their would-be
 * completion (on_complete), both leaving the load at their timeout. */
static void shard_crash(eng_run *r, int32_t k) {
  shard *s = &r->sh[k];
  int keep = r->cfg->router_load == ENG_ROUTER_LOAD_SENT;
  int32_t gone = 0;
  for (uint32_t i = s->qhead; i != NIL;) {
    attempt *a = &r->at[i];
    uint32_t next = a->next;
    a->at_server = 0;
    if (a->abandoned) {
      at_free(r, i);
      gone++;
    } else {
      a->lost_load = (uint8_t)keep;
      a->x |= X_LOST;
    }
    i = next;
  }
  r->total_queued -= s->qlen;
  r->in_flight -= s->qlen + s->busy;
  if (!keep) gone = r->loads[k];
  r->loads[k] -= gone;
  r->route_load -= gone;
  s->qhead = s->qtail = NIL;
  s->qlen = s->busy = 0;
  s->epoch++;
  s->crashed = 1;
}

/* ------------------------------------------------------------------------ */
/* clients                                                                   */

/* The sleep before the retry that follows retries_made retries (backoff is
 * on and its cap above 0): one draw from the client stream. Envoy's scheme
 * takes a whole 64-bit number, as its random() % interval does. */
static inline double backoff_draw(eng_run *r, int retries_made, double prev_sleep) {
  const eng_config *c = r->cfg;
  return eng_backoff_sleep(c->backoff, c->backoff_base_ms, c->backoff_cap_ms,
                           c->backoff_multiplier, retries_made, prev_sleep, &r->r_cli);
}

/* client_send's failures name their kind by the shard: a full queue's
 * shard, -1 for the router's refusal, FAIL_BREAKER for an open breaker's
 * (breaker_reject = retry), FAIL_OVERFLOW for the client's concurrency
 * limit; no variable for the kind on the hot path. */
enum { FAIL_OF_SHARD = -1, FAIL_BREAKER = -2, FAIL_OVERFLOW = -3 };
/* on_timeout's kind: a timeout, or lost when the attempt was (X_LOST) */
enum { FAIL_TIMED_OUT = -4 };

/* The client's view of a failed attempt: breaker bookkeeping, then a retry
 * (budget permitting, after backoff) or the request's failure. Returns the
 * retry to send at once, or NIL (scheduled later, or none).
 *
 * reuse (a constant at every call): the caller is done with record i, so the
 * retry takes over the record itself (a new generation, so the timeout
 * entry of the failed attempt goes stale as it would on a free) instead of
 * allocating one and freeing i; with no retry, i is freed here. */
static inline __attribute__((always_inline)) uint32_t client_failed(eng_run *r, uint32_t i,
                                                                     int kind, int32_t shard_id,
                                                                     int reuse) {
  const eng_config *c = r->cfg;
  attempt *a = &r->at[i];
  if (kind == FAIL_OF_SHARD) /* computed only where it is used */
    kind = shard_id >= 0 ? ENG_FAIL_REJECTED
           : shard_id == FAIL_BREAKER ? ENG_FAIL_BREAKER
                                      : ENG_FAIL_ROUTER;
  else if (kind == FAIL_TIMED_OUT)
    kind = a->x & X_LOST ? ENG_FAIL_LOST : ENG_FAIL_TIMEOUT;
  if (shard_id >= 0 && c->brk.breaker != ENG_BREAKER_OFF)
    brk_record(r, a->client, (uint32_t)shard_id, a->sent, 1);
  if (r->lim_kind)
    eng_limiter_on_failure(&r->lim[a->client], &r->lim_params, r->now, a->attempt_no > 0,
                           kind != ENG_FAIL_BREAKER && kind != ENG_FAIL_OVERFLOW);
  if (a->attempt_no >= c->max_retries) {
    request_failed(r, a->client, a->born, status_of_failure[kind]);
    if (reuse) at_free(r, i);
    return NIL;
  }
  if (r->tb_on ? !eng_limiter_tb_spend(&r->tokens[a->client], &r->tokens_total)
               : r->lim_kind && !eng_limiter_may_retry(&r->lim[a->client], &r->lim_params,
                                                       r->now, a->abandoned)) {
    r->cur[ENG_M_REJ_BUDGET]++;
    request_failed(r, a->client, a->born, ENG_ST_BUDGET);
    if (reuse) at_free(r, i);
    return NIL;
  }
  double sleep = backoff_draw(r, a->attempt_no, a->prev_sleep);
  uint32_t j;
  attempt *b;
  if (reuse) {
    j = i;
    b = a;
    b->gen++;
  } else {
    j = at_alloc(r);
    a = &r->at[i]; /* the pool may have moved */
    b = &r->at[j];
    b->keyhash = a->keyhash;
    b->client = a->client;
    b->born = a->born;
  }
  b->attempt_no = (uint16_t)(a->attempt_no + 1);
  b->prev_sleep = (float)sleep;
  b->after_timeout = a->abandoned;
  b->at_server = 0;
  b->abandoned = 0;
  b->lost_load = 0;
  b->x = 0;
  if (sleep == 0) return j; /* no backoff: sent at once */
  /* ticks_saturate(floor(y)) for y >= 0.5, by truncation: no libm call */
  double y = sleep / c->tick_ms + 0.5;
  int32_t delay = y >= 1e9 ? 1000000000 : (int32_t)y;
  if (delay <= 0) return j;
  wheel_insert(r, j, r->now + delay, EV_RETRY);
  return NIL;
}

/* The router's cap for the current load. It changes only every healthy /
 * capacity_factor units of load, and the load moves over a narrow range
 * most of the time, so caps are remembered per load (direct-mapped, exact:
 * an entry is used only for the very load and healthy count it was
 * computed for) instead of dividing again for nearly every attempt. */
static __attribute__((noinline)) int32_t cap_update(eng_run *r) {
  if (r->ring.healthy != r->cap_healthy) {
    for (int k = 0; k < CAP_MEMO; k++) r->cap_memo[k].load = -1;
    r->cap_healthy = r->ring.healthy;
  }
  int64_t load = r->route_load;
  int32_t cap = eng_router_cap(r->cfg->capacity_factor, load, r->ring.healthy);
  r->cap_memo[(uint64_t)load & (CAP_MEMO - 1)].load = load;
  r->cap_memo[(uint64_t)load & (CAP_MEMO - 1)].cap = cap;
  return cap;
}

/* Sends attempt i: breaker, router, shard. A fast failure (open breaker,
 * refusal, full queue) goes straight back to the client, whose immediate
 * retry is sent by the same loop rather than by recursion. Inlined into
 * new_request, which sends most attempts; client_issue is the out-of-line
 * copy for the other callers.
 *
 * rq (a constant): the request-mode copy (client_send_req), which also
 * applies the client's concurrency limit and tells its request about each
 * copy sent; the default copy has none of that code, not even a test. */
static inline __attribute__((always_inline)) void client_send_t(eng_run *r, uint32_t i,
                                                                 const int rq) {
  const eng_config *c = r->cfg;
  for (;;) {
    attempt *a = &r->at[i];
    r->events++;
    if (r->lim_kind == ENG_LIMITER_SRE &&
        !eng_limiter_admit(&r->lim[a->client], &r->lim_params, r->now, eng_rng_uniform(&r->r_cli))) {
      /* adaptive throttling refuses locally: the request fails unsent */
      r->cur[ENG_M_REJ_BUDGET]++;
      if (rq) {
        req_refused(r, i, ENG_ST_BUDGET);
        return;
      }
      request_failed(r, a->client, a->born, ENG_ST_BUDGET);
      at_free(r, i);
      return;
    }
    if (rq && r->live[a->client] >= r->max_live) {
      /* the client's own concurrency limit (Envoy's max_requests) fails it at once */
      r->cur[ENG_M_REJ_BREAKER]++;
      i = req_failed(r, i, FAIL_OF_SHARD, FAIL_OVERFLOW, 1);
      if (i == NIL) return;
      continue;
    }
    const uint8_t *excl = NULL;
    if (c->brk.breaker == ENG_BREAKER_NEXT_SHARD && r->client_open[a->client]) {
      for (int32_t k = 0; k < c->shards; k++)
        r->excluded[k] =
            (uint8_t)eng_breaker_refuses(brk_get(r, a->client, (uint32_t)k), &r->brk_params, r->now);
      excl = r->excluded;
    }
    size_t slot = (uint64_t)r->route_load & (CAP_MEMO - 1);
    int32_t cap = r->cap_memo[slot].cap;
    if (__builtin_expect(
            r->cap_memo[slot].load != r->route_load || r->ring.healthy != r->cap_healthy, 0))
      cap = cap_update(r);
    eng_route rt = eng_router_route_built(&r->ring, r->loads, cap, a->keyhash, excl);
    int32_t fail_shard = -1;
    if (rt.shard >= 0 && c->brk.breaker != ENG_BREAKER_OFF &&
        !eng_breaker_allow(brk_get(r, a->client, (uint32_t)rt.shard), &r->brk_params, r->now)) {
      r->cur[ENG_M_REJ_BREAKER]++;
      if (c->brk.breaker_reject == ENG_BREAKER_REJECT_FAIL) { /* fail fast: the request fails */
        /* a local refusal, never retried: gRPC C-core records no failure for
         * such a load-balancer drop; Envoy frees the retry it held */
        if (r->lim_kind)
          eng_limiter_on_failure(&r->lim[a->client], &r->lim_params, r->now, a->attempt_no > 0,
                                 0);
        if (rq) {
          req_refused(r, i, ENG_ST_BREAKER);
          return;
        }
        request_failed(r, a->client, a->born, ENG_ST_BREAKER);
        at_free(r, i);
        return;
      }
      fail_shard = FAIL_BREAKER; /* retried like any failed attempt (resilience4j) */
    } else {
      r->cur[ENG_M_ATTEMPTS]++;
      if (a->attempt_no) r->cur[ENG_M_RETRIES]++;
      if (rq) req_sent(r, i);
      if (rt.shard < 0) {
        r->cur[ENG_M_REJ_ROUTER]++;
      } else {
        a->shard = (uint16_t)rt.shard;
        a->sent = r->now;
        shard *s = &r->sh[rt.shard];
        if (r->fault_on[F_OUTAGE] || s->crashed) {
          r->cur[ENG_M_LOST]++;
          a->at_server = 0;
          a->x |= X_LOST;
          if (c->router_load == ENG_ROUTER_LOAD_SENT) { /* outstanding until its timeout */
            a->lost_load = 1;
            r->loads[rt.shard]++;
            r->route_load++;
          }
          tq_push(r, i);
          return;
        }
        int free_worker = s->busy < c->workers && !shard_stalled(s);
        if (free_worker || s->qlen < r->q_cap) {
          r->cur[ENG_M_HOPS] += rt.hops;
          r->hops_total += rt.hops;
          r->admissions++;
          s->admitted++;
          r->loads[rt.shard]++;
          r->in_flight++;
          r->route_load++;
          if ((uint32_t)(r->now - r->little_begin) < r->little_len) r->little_admitted++;
          a->at_server = 1;
          a->epoch = s->epoch;
          if (free_worker && s->qhead == NIL) {
            /* folly's Codel sees every start, also those that did not wait */
            if (__builtin_expect(r->codel_folly, 0)) codel_folly(r, s, 0);
            shard_start_sent(r, s, i);
          } else {
            tq_push(r, i);
            shard_enqueue(r, s, i);
            /* all workers busy (or stalled): shard_pump would start nothing */
            if (free_worker) shard_pump(r, s);
          }
          return;
        }
        r->cur[ENG_M_REJ_QUEUE_FULL]++;
        fail_shard = rt.shard;
      }
    }
    i = rq ? req_failed(r, i, FAIL_OF_SHARD, fail_shard, 1)
           : client_failed(r, i, FAIL_OF_SHARD, fail_shard, 1);
    if (i == NIL) return;
  }
}

static inline __attribute__((always_inline)) void client_send(eng_run *r, uint32_t i) {
  client_send_t(r, i, 0);
}

static __attribute__((noinline)) void client_send_req(eng_run *r, uint32_t i) {
  client_send_t(r, i, 1);
}

/* The out-of-line send of the default engine (a retry after its backoff,
 * or after a timeout); request mode sends through client_send_req. */
static __attribute__((noinline)) void client_issue(eng_run *r, uint32_t i) { client_send(r, i); }

/* on_timeout's work, as a constant-mode copy. */
static inline __attribute__((always_inline)) void timeout_t(eng_run *r, uint32_t i, const int rq) {
  attempt *a = &r->at[i];
  a->abandoned = 1;
  if (a->lost_load) {
    r->loads[a->shard]--;
    r->route_load--;
    a->lost_load = 0;
  }
  r->cur[ENG_M_TIMEOUTS]++;
  /* still queued or in service: the record stays until the shard is done */
  uint32_t retry;
  if (rq)
    retry = req_failed(r, i, FAIL_TIMED_OUT, a->shard, !a->at_server);
  else
    retry = a->at_server ? client_failed(r, i, FAIL_TIMED_OUT, a->shard, 0)
                         : client_failed(r, i, FAIL_TIMED_OUT, a->shard, 1);
  if (retry == NIL) return;
  if (rq) client_send_req(r, retry);
  else client_issue(r, retry);
}

static __attribute__((noinline)) void on_timeout_req(eng_run *r, uint32_t i) {
  timeout_t(r, i, 1);
}

static void on_timeout(eng_run *r, uint32_t i) {
  if (__builtin_expect(r->reqs, 0)) {
    on_timeout_req(r, i);
    return;
  }
  timeout_t(r, i, 0);
}

/* Overload errors from shed attempts (shed_reply = error), in shed order;
 * a retry they trigger may be shed and answered in turn. Called between
 * events only, so no event handler ever recurses through a shard. */
static int graph_release(eng_run *r, uint32_t i);

static __attribute__((noinline)) void replies_deliver(eng_run *r) {
  while (r->reply_head != NIL) {
    uint32_t i = r->reply_head;
    r->reply_head = r->at[i].next;
    if (r->reply_head == NIL) r->reply_tail = NIL;
    r->at[i].x &= (uint8_t)~X_REPLY;
    /* a call graph's front attempt: done, or its error goes the way of a shed one's */
    if ((r->at[i].x & X_GRAPH) && !graph_release(r, i)) continue;
    if (r->at[i].abandoned) { /* request mode: its request gave it up meanwhile */
      at_free(r, i);
      continue;
    }
    if (r->reqs) {
      uint32_t retry = req_failed(r, i, ENG_FAIL_SHED, r->at[i].shard, 1);
      if (retry != NIL) client_send_req(r, retry);
      continue;
    }
    uint32_t retry = client_failed(r, i, ENG_FAIL_SHED, r->at[i].shard, 1);
    if (retry != NIL) client_issue(r, retry);
  }
}

static inline void replies_drain(eng_run *r) {
  if (r->reply_head != NIL) replies_deliver(r);
}

/* ------------------------------------------------------------------------ */
/* call graphs: the front's side (graph.h)                                    */

/* The results of the graph's last call: an attempt whose calls succeeded
 * does the rest of its own work (at once when none is left, through the
 * reply list, as events end only between events); one whose call failed
 * answers with an error. */
static void graph_results(eng_run *r) {
  size_t n;
  const eng_graph_done *d = eng_graph_take(r->graph, &n);
  for (size_t k = 0; k < n; k++) {
    uint32_t i = d[k].i;
    attempt *a = &r->at[i];
    if (a->gen != d[k].gen) continue; /* (a front record outlives its calls) */
    if (d[k].ok && d[k].post > 0) {
      wheel_insert(r, i, r->now + d[k].post, EV_COMPLETE);
      continue;
    }
    a->x |= (uint8_t)(X_GRAPH | X_REPLY | (d[k].ok ? 0 : X_ERROR));
    a->next = NIL;
    if (r->reply_tail == NIL) r->reply_head = i;
    else r->at[r->reply_tail].next = i;
    r->reply_tail = i;
  }
}

/* The front's attempt i starts its work of d ticks on shard s, holding its
 * worker until its calls and its work are done. */
static __attribute__((noinline)) void front_start(eng_run *r, shard *s, uint32_t i, int32_t d) {
  attempt *a = &r->at[i];
  s->busy++;
  int64_t expiry = (int64_t)a->sent + r->timeout_ticks;
  if (r->reqs && r->rp.rq[a->req].deadline < expiry) expiry = r->rp.rq[a->req].deadline;
  eng_graph_front_start(r->graph, r->now, i, a->gen, a->keyhash, (uint32_t)(s - r->sh), d,
                        expiry > INT32_MAX ? INT32_MAX : (int32_t)expiry);
  graph_results(r);
}

/* Front attempt i's calls ended now with no own work left (ok: it is
 * answered, 0), or one of them failed (X_ERROR): its worker goes to the
 * next queued attempt, and 1 says that its client now hears an error, which
 * replies_deliver hands on as it does a shed attempt's. */
static __attribute__((noinline)) int graph_release(eng_run *r, uint32_t i) {
  attempt *a = &r->at[i];
  shard *s = &r->sh[a->shard];
  int failed = a->x & X_ERROR;
  a->x &= (uint8_t)~(X_GRAPH | X_ERROR);
  if (!failed || a->epoch != s->epoch) { /* answered, or lost with its crashed shard */
    on_complete(r, i);
    return 0;
  }
  s->busy--;
  shard_release(r, a);
  if (s->qhead != NIL) shard_pump(r, s);
  return 1;
}

/* ------------------------------------------------------------------------ */
/* request mode: deadlines, hedging, retry_on, the client concurrency limit  */
/*
 * With deadline_ms, hedge_attempts > 1, a retry_on other than the default,
 * max_requests_per_client or the envoy limiter, every attempt points at a
 * request record (request.h) and the client's decisions go through the
 * functions below; without them none of this runs and the engine is the
 * one above, bit for bit. Request mode with none of its features binding
 * gives the same numbers as the default engine (tests/test_requests.c
 * checks that on the pinned runs).
 *
 * A request ends exactly once: its first success, a failure it does not
 * retry (a failure retry_on does not name; a retry limit or the limiter's
 * refusal when nothing else of it is in flight), or its deadline. When it
 * ends, its copies still in flight are given up: the client stops waiting
 * (abandoned). Copies that lost to another copy's answer or failure are
 * cancelled with hedge_cancel, so a shard drops a queued one unserved (one
 * already in service finishes, its answer wasted). A deadline gives its
 * copies up as timeouts (their timeout is the rest of the deadline), which
 * the server learns only with deadline_propagation.
 * A retry whose backoff would end at or after the deadline is not sent; if
 * nothing else of the request is in flight, it waits for its deadline, as a
 * gRPC call sleeping in a backoff does.
 */

enum { END_SUCCESS, END_FAILED, END_DEADLINE };

static __attribute__((noreturn, noinline)) void req_broken(const eng_run *r, uint32_t q,
                                                          const char *what) {
  fprintf(stderr, "stormsweep: request %u: %s (tick %d, seed %llu)\n", q, what, r->now,
          (unsigned long long)r->seed);
  abort();
}

/* A copy goes out (+1) or stops being in flight (-1) for its client: the
 * concurrency limit counts these, and so does Envoy's budget (upstream
 * requests, not requests sleeping in a backoff). */
static inline void live_add(eng_run *r, uint32_t client, int d) {
  r->live[client] += d;
  if (r->lim_kind == ENG_LIMITER_ENVOY)
    eng_limiter_on_upstream(&r->lim[client], &r->lim_params, d);
}

/* A new request's record, for attempt i (new_request has set it up). */
static __attribute__((noinline)) void req_start(eng_run *r, uint32_t i) {
  uint32_t qi = eng_request_alloc(&r->rp);
  if (qi == ENG_REQ_NIL) fatal_oom(r);
  eng_request *q = &r->rp.rq[qi];
  attempt *a = &r->at[i];
  q->client = a->client;
  q->keyhash = a->keyhash;
  q->made = 1;
  q->born = a->born;
  q->status = ENG_ST_TIMEOUT;
  a->req = qi;
  if (r->deadline_ticks) {
    q->deadline = r->now + r->deadline_ticks;
    if (eng_timer_fifo_push(&r->dl, qi, q->gen, q->deadline)) fatal_oom(r);
  }
}

/* Attempt i went to the router: it is a copy in flight until it is
 * answered, fails or is given up. Every way of sending checks that the
 * request has fewer than hedge_attempts copies out; a run that breaks that
 * stops here. With hedging its timer is armed (a later copy replaces it). */
static __attribute__((noinline)) void req_sent(eng_run *r, uint32_t i) {
  attempt *a = &r->at[i];
  eng_request *q = &r->rp.rq[a->req];
  if (q->out >= r->hedges || q->done) req_broken(r, a->req, "a copy beyond hedge_attempts");
  eng_request_copy_add(q, i, a->gen);
  live_add(r, a->client, 1);
  if (r->hedges > 1) {
    q->hedge_due = r->now + r->hedge_ticks;
    if (eng_timer_fifo_push(&r->hq, a->req, q->gen, q->hedge_due)) fatal_oom(r);
  }
}

/* Copy i of a request that ended: the client stops waiting for it. */
static void copy_give_up(eng_run *r, uint32_t i, uint32_t gen, int how) {
  const eng_config *c = r->cfg;
  attempt *a = &r->at[i];
  if (a->gen != gen || a->abandoned) req_broken(r, a->req, "lost track of a copy");
  a->abandoned = 1;
  live_add(r, a->client, -1);
  /* no token for gRPC (the call ended, nothing is retried); Envoy frees
   * the retry it held */
  if (r->lim_kind)
    eng_limiter_on_failure(&r->lim[a->client], &r->lim_params, r->now, a->attempt_no > 0, 0);
  if (how == END_DEADLINE) {
    r->cur[ENG_M_TIMEOUTS]++; /* its timeout was the rest of the deadline */
    if (c->deadline_propagation) a->x |= X_STALE;
    if (c->brk.breaker != ENG_BREAKER_OFF) brk_record(r, a->client, a->shard, a->sent, 1);
  } else if (c->brk.breaker != ENG_BREAKER_OFF) {
    /* a cancelled call is never recorded; a probe gives its permit back */
    eng_breaker_release(brk_get(r, a->client, a->shard), a->sent);
  }
  if (how != END_DEADLINE && c->hedge_cancel) a->x |= X_CANCEL; /* a hedge that lost */
  if (a->lost_load) { /* as its timeout would have: the router stops counting it */
    r->loads[a->shard]--;
    r->route_load--;
    a->lost_load = 0;
  }
  /* nothing else holds a copy that is neither at a shard nor on the reply
   * list (lost, or shed silently): its timeout entry goes stale */
  if (!a->at_server && !(a->x & X_REPLY)) at_free(r, i);
}

/* Request qi ends: its copies in flight are given up, the user (closed
 * model) hears of it, and the record goes unless a retry still sleeps. */
static void req_end(eng_run *r, uint32_t qi, int how) {
  eng_request *q = &r->rp.rq[qi];
  q->done = 1;
  while (q->out) {
    q->out--;
    copy_give_up(r, q->copy[q->out], q->copy_gen[q->out], how);
  }
  /* Envoy holds the retries a request scheduled until the request is
   * destroyed: those asleep in a backoff, and those whose backoff outlived
   * the deadline (never sent) */
  if (r->lim_kind == ENG_LIMITER_ENVOY)
    for (int k = q->held + q->pending; k > 0; k--)
      eng_limiter_on_failure(&r->lim[q->client], &r->lim_params, r->now, 1, 0);
  q->held = 0;
  if (how == END_SUCCESS) hook_request_end(r, q->client); /* latency_record: its answer */
  else request_failed(r, q->client, q->born, how == END_DEADLINE ? ENG_ST_DEADLINE : q->status);
  if (!q->pending) eng_request_release(&r->rp, qi);
}

/* An attempt of request qi ended and brings no retry: the request fails
 * when nothing of it is left in flight or asleep in a backoff. */
static void req_attempt_gone(eng_run *r, uint32_t qi) {
  const eng_request *q = &r->rp.rq[qi];
  if (!q->done && !q->out && !q->pending) req_end(r, qi, END_FAILED);
}

/* Attempt i was refused before it went out (sre_adaptive, an open breaker
 * with breaker_reject = fail): counted by the caller. */
static __attribute__((noinline)) void req_refused(eng_run *r, uint32_t i, int st) {
  uint32_t qi = r->at[i].req;
  at_free(r, i);
  r->rp.rq[qi].status = (uint8_t)st;
  req_attempt_gone(r, qi);
}

/* Copy i was answered in time (hook_success): the first success wins. */
static __attribute__((noinline)) void req_succeeded(eng_run *r, uint32_t i) {
  attempt *a = &r->at[i];
  uint32_t qi = a->req;
  if (!eng_request_copy_remove(&r->rp.rq[qi], i, a->gen))
    req_broken(r, qi, "an answer to a copy it did not send");
  live_add(r, a->client, -1);
  req_end(r, qi, END_SUCCESS);
}

/* client_failed in request mode (same contract): retry_on decides whether
 * the failure is retried at all; then the retry limit (attempts made, hedges
 * included), the limiter, the backoff and the deadline. */
static __attribute__((noinline)) uint32_t req_failed(eng_run *r, uint32_t i, int kind,
                                                     int32_t shard_id, int reuse) {
  const eng_config *c = r->cfg;
  attempt *a = &r->at[i];
  if (kind == FAIL_OF_SHARD)
    kind = shard_id >= 0               ? ENG_FAIL_REJECTED
           : shard_id == FAIL_BREAKER  ? ENG_FAIL_BREAKER
           : shard_id == FAIL_OVERFLOW ? ENG_FAIL_OVERFLOW
                                       : ENG_FAIL_ROUTER;
  else if (kind == FAIL_TIMED_OUT)
    kind = a->x & X_LOST ? ENG_FAIL_LOST : ENG_FAIL_TIMEOUT;
  uint32_t qi = a->req;
  eng_request *q = &r->rp.rq[qi];
  int local = kind == ENG_FAIL_BREAKER || kind == ENG_FAIL_OVERFLOW; /* never went out */
  if (!local) {
    if (!eng_request_copy_remove(q, i, a->gen)) req_broken(r, qi, "a failure of a copy it did not send");
    live_add(r, a->client, -1);
    if (a->abandoned) a->x |= X_STALE; /* its own timeout passed: the server knows that much */
  }
  if (shard_id >= 0 && c->brk.breaker != ENG_BREAKER_OFF)
    brk_record(r, a->client, (uint32_t)shard_id, a->sent, 1);
  int retryable = (c->retry_on >> kind) & 1;
  q->status = status_of_failure[kind];
  if (r->lim_kind)
    eng_limiter_on_failure(&r->lim[a->client], &r->lim_params, r->now, a->attempt_no > 0,
                           retryable && !local);
  if (!retryable && !local) { /* gRPC's fatal status, a condition Envoy's retry_on lacks */
    if (reuse) at_free(r, i);
    req_end(r, qi, END_FAILED);
    return NIL;
  }
  if (!retryable || q->made > c->max_retries) {
    if (reuse) at_free(r, i);
    req_attempt_gone(r, qi);
    return NIL;
  }
  if (r->tb_on ? !eng_limiter_tb_spend(&r->tokens[a->client], &r->tokens_total)
               : r->lim_kind && !eng_limiter_may_retry(&r->lim[a->client], &r->lim_params,
                                                       r->now, a->abandoned)) {
    r->cur[ENG_M_REJ_BUDGET]++;
    q->status = ENG_ST_BUDGET;
    if (reuse) at_free(r, i);
    req_attempt_gone(r, qi);
    return NIL;
  }
  double sleep = backoff_draw(r, q->backoffs, q->prev_sleep);
  q->backoffs++;
  int32_t delay = 0;
  if (sleep > 0) {
    double y = sleep / c->tick_ms + 0.5;
    delay = y >= 1e9 ? 1000000000 : (int32_t)y;
  }
  if ((int64_t)r->now + delay >= q->deadline) {
    /* it would wake at or after the deadline: never sent; with nothing else
     * in flight the request waits for its deadline */
    if (r->lim_kind == ENG_LIMITER_ENVOY) q->held++;
    if (reuse) at_free(r, i);
    return NIL;
  }
  uint32_t j;
  attempt *b;
  if (reuse) {
    j = i;
    b = a;
    b->gen++;
  } else {
    j = at_alloc(r);
    a = &r->at[i]; /* the pool may have moved */
    b = &r->at[j];
    b->keyhash = a->keyhash;
    b->client = a->client;
    b->req = qi;
    b->born = a->born;
  }
  b->attempt_no = q->made++;
  q->prev_sleep = (float)sleep;
  b->after_timeout = a->abandoned;
  b->at_server = 0;
  b->abandoned = 0;
  b->lost_load = 0;
  b->x = 0;
  if (delay <= 0) return j; /* sent at once */
  wheel_insert(r, j, r->now + delay, EV_REQ_RETRY);
  q->pending++;
  return NIL;
}

/* A retry's backoff is over (EV_REQ_RETRY). It goes out unless its request
 * ended meanwhile, or hedges filled its copies in flight. */
static __attribute__((noinline)) void req_retry_due(eng_run *r, uint32_t i) {
  uint32_t qi = r->at[i].req;
  eng_request *q = &r->rp.rq[qi];
  q->pending--;
  if (q->done || q->out >= r->hedges) {
    /* Envoy frees the retry it held (at the request's end if it ended) */
    if (!q->done && r->lim_kind)
      eng_limiter_on_failure(&r->lim[q->client], &r->lim_params, r->now, 1, 0);
    at_free(r, i);
    if (q->done && !q->pending) eng_request_release(&r->rp, qi);
    return;
  }
  client_send_req(r, i);
}

/* Deadlines due at this tick (stale entries at the head go too). */
static __attribute__((noinline)) void req_deadlines(eng_run *r) {
  const eng_timer *e;
  while ((e = eng_timer_fifo_head(&r->dl))) {
    uint32_t qi = e->ref, gen = e->gen;
    const eng_request *q = &r->rp.rq[qi];
    int stale = q->gen != gen || q->done;
    if (!stale && e->due > r->now) break;
    eng_timer_fifo_pop(&r->dl);
    if (stale) continue;
    r->events++;
    req_end(r, qi, END_DEADLINE);
    replies_drain(r);
  }
}

/* Hedge timers due at this tick: a request whose latest copy has waited
 * hedge_delay_ms without an answer sends another one, if it has fewer than
 * hedge_attempts in flight, attempts left and the limiter's leave (gRPC's
 * throttling applies to hedges). A copy sent here arms the next timer. */
static __attribute__((noinline)) void req_hedges(eng_run *r) {
  const eng_config *c = r->cfg;
  const eng_timer *e;
  while ((e = eng_timer_fifo_head(&r->hq))) {
    uint32_t qi = e->ref, gen = e->gen;
    int32_t due = e->due;
    eng_request *q = &r->rp.rq[qi];
    int stale = q->gen != gen || q->done || q->hedge_due != due;
    if (!stale && due > r->now) break;
    eng_timer_fifo_pop(&r->hq);
    if (stale) continue;
    q->hedge_due = -1;
    if (!q->out || q->out >= r->hedges || q->made > c->max_retries || r->now >= q->deadline)
      continue;
    if (r->tb_on ? !eng_limiter_tb_spend(&r->tokens[q->client], &r->tokens_total)
                 : r->lim_kind &&
                       !eng_limiter_may_retry(&r->lim[q->client], &r->lim_params, r->now, 0)) {
      r->cur[ENG_M_REJ_BUDGET]++;
      continue;
    }
    uint32_t j = at_alloc(r);
    attempt *b = &r->at[j];
    b->keyhash = q->keyhash;
    b->client = q->client;
    b->req = qi;
    b->born = q->born;
    b->attempt_no = q->made++;
    b->after_timeout = 0;
    b->at_server = 0;
    b->abandoned = 0;
    b->lost_load = 0;
    b->x = 0;
    r->events++;
    client_send_req(r, j);
    replies_drain(r);
  }
}

/* A new request's key hash and client: all its draws from the arrivals
 * stream, which nothing else draws from while a tick's requests go out. */
static inline void request_draw(eng_run *r, uint32_t *keyhash, uint32_t *client) {
  const eng_config *c = r->cfg;
  uint64_t key;
  if (r->fault_on[F_HOT] && eng_rng_uniform(&r->r_arr) < c->hot_key_share)
    key = 0;
  else if (c->key_dist == ENG_KEYS_ZIPF)
    key = eng_zipf_draw(&r->zipf, &r->r_arr) - 1;
  else if (c->keys > UINT32_MAX)
    key = eng_rng_below64(&r->r_arr, (uint64_t)c->keys);
  else
    key = UINT64_MAX; /* drawn below with the client */
  /* One draw gives the client (low half) and a uniform key (high half). */
  uint64_t x = eng_rng_next(&r->r_arr);
  if (key == UINT64_MAX) key = ((x >> 32) * (uint64_t)c->keys) >> 32;
  *keyhash = eng_key_hash(key, r->ring_seed);
  *client = (uint32_t)(((x & 0xFFFFFFFFu) * (uint64_t)c->clients) >> 32);
}

/* rq (a constant): request mode, whose copy is new_request_req. */
static inline __attribute__((always_inline)) void new_request_t(eng_run *r, uint32_t keyhash,
                                                                 uint32_t client, const int rq) {
  const eng_config *c = r->cfg;
  uint32_t i = at_alloc(r);
  attempt *a = &r->at[i];
  a->keyhash = keyhash;
  a->client = client;
  a->born = r->now;
  a->attempt_no = 0;
  a->after_timeout = 0;
  a->at_server = 0;
  a->abandoned = 0;
  a->lost_load = 0;
  a->x = 0;
  a->prev_sleep = 0;
  r->cur[ENG_M_NEW_REQUESTS]++;
  if (r->tb_on)
    eng_limiter_tb_deposit(&r->tokens[a->client], &r->tokens_total, c->budget_ratio,
                           c->budget_max_tokens);
  if (r->lim_kind) eng_limiter_on_request(&r->lim[a->client], &r->lim_params, r->now);
  if (rq) {
    req_start(r, i);
    client_send_req(r, i);
    return;
  }
  client_send(r, i);
}

static inline void new_request(eng_run *r, uint32_t keyhash, uint32_t client) {
  new_request_t(r, keyhash, client, 0);
}

static __attribute__((noinline)) void new_request_req(eng_run *r, uint32_t keyhash,
                                                      uint32_t client) {
  new_request_t(r, keyhash, client, 1);
}

/* ------------------------------------------------------------------------ */
/* limiter hooks and closed-loop users                                      */

static __attribute__((noinline)) void hook_success(eng_run *r, const attempt *a) {
  if (r->lim_kind)
    eng_limiter_on_success(&r->lim[a->client], &r->lim_params, r->now, a->attempt_no > 0,
                           a->after_timeout);
  if (r->reqs) {
    req_succeeded(r, (uint32_t)(a - r->at)); /* ends the request */
    return;
  }
  hook_request_end(r, a->client);
}

/* User record u goes out again after d ticks: through the wheel, or this
 * tick's ready list when d = 0. */
static void user_schedule(eng_run *r, uint32_t u, int32_t d) {
  if (d > 0) {
    wheel_insert(r, u, r->now + d, EV_USER);
    return;
  }
  r->at[u].next = NIL;
  if (r->ready_tail == NIL) r->ready_head = u;
  else r->at[r->ready_tail].next = u;
  r->ready_tail = u;
}

/* Exponential think time in ticks, rounded by floor(x + U) so its mean is
 * think_ms exactly. */
static int32_t think_draw(eng_run *r) {
  if (!(r->think_ticks > 0)) return 0;
  double frac, x = eng_zig_exp1(&r->zig, &r->r_usr, &frac) * r->think_ticks;
  return ticks_saturate(x + frac);
}

/* A request of client k ended: one of its users starts thinking. */
static __attribute__((noinline)) void hook_request_end(eng_run *r, uint32_t k) {
  if (!r->closed) return;
  uint32_t u = r->idle[k];
  if (u == NIL) {
    fprintf(stderr, "stormsweep: client %u ended a request no user had sent (tick %d)\n", k,
            r->now);
    abort();
  }
  r->idle[k] = r->at[u].next;
  user_schedule(r, u, think_draw(r));
}

/* Users per client: the total (base or surge) spread as evenly as it goes. */
static int32_t user_target(const eng_run *r, uint32_t k) {
  int64_t total = r->fault_on[F_SURGE] ? r->users_surge : r->users_base;
  int64_t n = r->cfg->clients;
  return (int32_t)(total / n + ((int64_t)k < total % n));
}

/* Brings every client up to its target. A new user starts as if it had
 * been thinking all along: an exponential think time is memoryless, so its
 * remaining think is another one (the stationary start); without think
 * time, at a uniform offset within one service time. */
static void users_grow(eng_run *r) {
  for (int32_t k = 0; k < r->cfg->clients; k++)
    while (r->users[k] < user_target(r, (uint32_t)k)) {
      uint32_t u = at_alloc(r);
      r->at[u].client = (uint32_t)k;
      r->users[k]++;
      user_schedule(r, u, r->think_ticks > 0 ? think_draw(r)
                                             : ticks_saturate(eng_rng_uniform(&r->r_usr) *
                                                              r->cycle_ticks));
    }
}

/* The closed model's request of client k (new_request with a given client). */
static void closed_request(eng_run *r, uint32_t k) {
  const eng_config *c = r->cfg;
  uint64_t key;
  if (r->fault_on[F_HOT] && eng_rng_uniform(&r->r_arr) < c->hot_key_share)
    key = 0;
  else if (c->key_dist == ENG_KEYS_ZIPF)
    key = eng_zipf_draw(&r->zipf, &r->r_arr) - 1;
  else
    key = eng_rng_below64(&r->r_arr, (uint64_t)c->keys);
  if (r->reqs) new_request_req(r, eng_key_hash(key, r->ring_seed), k);
  else new_request(r, eng_key_hash(key, r->ring_seed), k);
}

/* A user's think time is over: it sends its next request, or leaves when
 * its client has more users than the target (after a surge). It leaves with
 * probability excess / users, so the users who stay send at the target's
 * rate from the surge's end on, rather than all waiting for the extra ones
 * to leave first. */
static void user_wake(eng_run *r, uint32_t u) {
  uint32_t k = r->at[u].client;
  int32_t target = user_target(r, k);
  if (r->users[k] > target &&
      eng_rng_uniform(&r->r_usr) * r->users[k] < (double)(r->users[k] - target)) {
    r->users[k]--;
    at_free(r, u);
    return;
  }
  r->at[u].next = r->idle[k];
  r->idle[k] = u;
  closed_request(r, k);
}

/* The users ready at this tick. Users whose request ends while these go
 * out (it failed at once, or took no time) wait for the next tick, so a
 * tick always ends. */
static __attribute__((noinline)) void users_ready_drain(eng_run *r) {
  uint32_t u = r->ready_head;
  r->ready_head = r->ready_tail = NIL;
  while (u != NIL) {
    uint32_t next = r->at[u].next;
    r->events++;
    user_wake(r, u);
    replies_drain(r);
    u = next;
  }
}

static __attribute__((noinline)) int32_t limiter_level_sum(eng_run *r) {
  int64_t sum = 0;
  for (int32_t k = 0; k < r->cfg->clients; k++)
    sum += eng_limiter_level(&r->lim[k], &r->lim_params, r->now);
  return sum > INT32_MAX ? INT32_MAX : (int32_t)sum;
}

/* ------------------------------------------------------------------------ */
/* faults                                                                    */

/* Runs have at most 1e8 ticks, so 1e9 ticks means "never"; saturating there
 * keeps sums such as start + detection delay inside int32. */
static int32_t ticks_saturate(double t) {
  return t >= 1e9 ? 1000000000 : t <= -1e9 ? -1000000000 : (int32_t)t;
}

static int32_t ms_to_tick(const eng_config *c, double ms) {
  return ticks_saturate(floor(ms / c->tick_ms + 0.5));
}

static int edge_cmp(const void *x, const void *y) {
  const edge *a = x, *b = y;
  if (a->tick != b->tick) return a->tick < b->tick ? -1 : 1;
  /* ends before starts at the same tick, then by kind: a fixed order */
  if (a->on != b->on) return a->on < b->on ? -1 : 1;
  return a->kind - b->kind;
}

static int edges_build(eng_run *r) {
  const eng_config *c = r->cfg;
  const eng_windows *ws[F_KINDS] = {&c->surge, &c->brownout, &c->crash, NULL, &c->outage,
                                    &c->hot_key};
  size_t need = 1;
  for (int k = 0; k < F_KINDS; k++)
    if (ws[k]) need += 2 * (size_t)ws[k]->count * (k == F_CRASH ? 2 : 1);
  if (ensure((void **)&r->edges, &r->edges_cap, need, sizeof *r->edges)) return -1;
  edge *e = r->edges;
  int32_t n = 0;
  for (int k = 0; k < F_KINDS; k++) {
    if (!ws[k]) continue;
    for (int w = 0; w < ws[k]->count; w++) {
      int32_t a = ms_to_tick(c, ws[k]->w[w].start_ms);
      int32_t b = ms_to_tick(c, ws[k]->w[w].start_ms + ws[k]->w[w].duration_ms);
      if (b <= a) continue;
      e[n++] = (edge){a, (int8_t)k, 1};
      e[n++] = (edge){b, (int8_t)k, 0};
      if (k == F_CRASH && a + r->detect_ticks < b)
        e[n++] = (edge){a + r->detect_ticks, F_DETECT, 1}, e[n++] = (edge){b, F_DETECT, 0};
    }
  }
  qsort(e, (size_t)n, sizeof *e, edge_cmp);
  r->may_lose = 0;
  for (int32_t k = 0; k < n; k++) r->may_lose |= e[k].kind == F_CRASH;
  r->n_edges = n;
  r->edge_pos = 0;
  return 0;
}

/* The brownout shard's speed profile from the brownout windows (the same
 * tick conversion as edges_build, so the profile and the edges agree). */
static void profile_build(eng_run *r) {
  const eng_config *c = r->cfg;
  speed_profile *p = &r->bo;
  r->bo_shard = -1;
  p->n = 1;
  p->cur = 0;
  p->t[0] = 0;
  p->v[0] = 0;
  p->speed[0] = 1;
  int32_t cuts[2 * ENG_MAX_WINDOWS], ncut = 0;
  int32_t wa[ENG_MAX_WINDOWS], wb[ENG_MAX_WINDOWS], nw = 0;
  for (int w = 0; w < c->brownout.count; w++) {
    int32_t a = ms_to_tick(c, c->brownout.w[w].start_ms);
    int32_t b = ms_to_tick(c, c->brownout.w[w].start_ms + c->brownout.w[w].duration_ms);
    if (b <= a) continue;
    wa[nw] = a, wb[nw] = b, nw++;
    cuts[ncut++] = a, cuts[ncut++] = b;
  }
  if (!nw) return;
  r->bo_shard = c->brownout_shard;
  r->sh[r->bo_shard].profiled = 1;
  for (int i = 1; i < ncut; i++) /* insertion sort of at most 16 ticks */
    for (int j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
      int32_t x = cuts[j];
      cuts[j] = cuts[j - 1], cuts[j - 1] = x;
    }
  for (int i = -1; i < ncut; i++) {
    int32_t at = i < 0 ? 0 : cuts[i];
    int32_t k = 0;
    if (i >= 0) {
      if (at == p->t[p->n - 1]) continue; /* no empty segment */
      k = p->n++;
      p->t[k] = at;
      p->v[k] = p->v[k - 1] + p->speed[k - 1] * (double)(at - p->t[k - 1]);
    }
    int on = 0;
    for (int w = 0; w < nw; w++) on |= wa[w] <= at && at < wb[w];
    p->speed[k] = on ? c->brownout_factor : 1;
  }
}

static void ring_rebuild(eng_run *r) {
  if (eng_ring_build(&r->ring, r->cfg->shards, r->cfg->vnodes, r->healthy, r->ring_seed))
    fatal_oom(r);
}

/* Share of the hash space whose first point clockwise belongs to shard k. */
static double ring_share(const eng_ring *ring, uint32_t k) {
  double share = 0;
  for (int32_t p = 0; p < ring->count; p++) {
    if (ring->points[p].shard != k) continue;
    uint32_t prev = ring->points[p ? p - 1 : ring->count - 1].hash;
    share += (double)(uint32_t)(ring->points[p].hash - prev);
  }
  return ring->count == 1 ? 1.0 : share / 4294967296.0;
}

static void fault_edge(eng_run *r, const edge *e) {
  const eng_config *c = r->cfg;
  int delta = e->on ? 1 : -1;
  r->fault_on[e->kind] += delta;
  switch (e->kind) {
  case F_SURGE:
    if (!r->prof) /* a profile sets the rate every tick (profile_rate) */
      eng_poisson_prep(&r->arrivals, r->lam_base * (r->fault_on[F_SURGE] ? c->surge_factor : 1));
    if (r->closed) users_grow(r); /* users leave lazily, as they wake */
    break;
  case F_BROWNOUT: {
    /* Work in service needs nothing here: its completion tick was computed
     * from the whole speed profile (profile_finish). A stalled shard starts
     * no work, so its queue waits for the end of the stall. */
    shard *s = &r->sh[c->brownout_shard];
    int was_stalled = shard_stalled(s);
    s->speed = r->fault_on[F_BROWNOUT] ? c->brownout_factor : 1;
    if (was_stalled && !shard_stalled(s)) shard_pump(r, s);
    break;
  }
  case F_CRASH:
    if (e->on && r->fault_on[F_CRASH] == 1) {
      shard_crash(r, c->crash_shard);
    } else if (!e->on && !r->fault_on[F_CRASH]) {
      r->sh[c->crash_shard].crashed = 0;
      if (!r->healthy[c->crash_shard]) {
        r->healthy[c->crash_shard] = 1;
        ring_rebuild(r);
      }
    }
    break;
  case F_DETECT:
    if (e->on && r->fault_on[F_CRASH] && r->healthy[c->crash_shard]) {
      r->keys_remapped += ring_share(&r->ring, (uint32_t)c->crash_shard);
      r->healthy[c->crash_shard] = 0;
      ring_rebuild(r);
    }
    break;
  default: break;
  }
}

/* ------------------------------------------------------------------------ */
/* the run                                                                   */

/* The closed model's users (users_grow says how they start). */
static int users_prepare(eng_run *r, uint64_t seed) {
  const eng_config *c = r->cfg;
  size_t n = (size_t)c->clients;
  if (ensure((void **)&r->idle, &r->idle_cap, n, sizeof *r->idle) ||
      ensure((void **)&r->users, &r->users_cap, n, sizeof *r->users))
    return -1;
  for (size_t k = 0; k < n; k++) r->idle[k] = NIL, r->users[k] = 0;
  eng_rng_seed(&r->r_usr, seed, STREAM_USERS);
  r->ready_head = r->ready_tail = NIL;
  r->think_ticks = c->think_ms / c->tick_ms;
  r->cycle_ticks = c->service_mean_ms / c->tick_ms;
  r->users_base = eng_config_users(c);
  r->users_surge = (int64_t)floor((double)r->users_base * c->surge_factor + 0.5);
  users_grow(r);
  return 0;
}

/* The phase of the segment that starts at tick t, and the next boundary. */
static void segment_phase(eng_run *r, int32_t t) {
  r->seg_phase = -1;
  r->seg_next = INT32_MAX;
  for (int k = 0; k < ENG_PHASE_COUNT; k++) {
    if (t >= r->ph_begin[k] && t < r->ph_end[k]) r->seg_phase = k;
    if (r->ph_begin[k] > t && r->ph_begin[k] < r->seg_next) r->seg_next = r->ph_begin[k];
    if (r->ph_end[k] > t && r->ph_end[k] < r->seg_next) r->seg_next = r->ph_end[k];
  }
}

/* What users see: the windows, the phases' ticks and empty histograms. */
static int latency_prepare(eng_run *r, int has_fault, int32_t fault_start) {
  const eng_config *c = r->cfg;
  r->lat_wticks = ms_to_tick(c, c->latency_window_ms);
  if (r->lat_wticks < 1) r->lat_wticks = 1;
  r->lat_windows = (int32_t)(((int64_t)r->ticks + r->lat_wticks - 1) / r->lat_wticks);
  if (ensure((void **)&r->lat_series, &r->lat_series_cap,
             (size_t)ENG_L_COUNT * (size_t)r->lat_windows, sizeof *r->lat_series) ||
      ensure((void **)&r->win_user, &r->win_user_cap,
             (size_t)ENG_M_USER_COUNT * (size_t)r->lat_windows, sizeof *r->win_user))
    return -1;
  r->user_recovery_ms = NAN;
  r->lat_next = r->lat_wticks < r->ticks ? r->lat_wticks : r->ticks;
  r->lat_fin = r->lat_fail = 0;
  int32_t clear = ms_to_tick(c, eng_config_fault_clear_ms(c));
  if (clear > r->ticks) clear = r->ticks;
  if (fault_start > r->ticks) fault_start = r->ticks;
  r->ph_begin[ENG_PHASE_BASELINE] = r->base_begin;
  r->ph_end[ENG_PHASE_BASELINE] = r->base_end;
  r->ph_begin[ENG_PHASE_DURING] = has_fault ? fault_start : r->ticks;
  r->ph_end[ENG_PHASE_DURING] = has_fault ? clear : r->ticks;
  r->ph_begin[ENG_PHASE_AFTER] = has_fault ? clear : r->ticks;
  r->ph_end[ENG_PHASE_AFTER] = r->ticks;
  for (int k = 0; k < LH_COUNT; k++) eng_lh_reset(&r->lh[k]);
  memset(r->ph, 0, sizeof r->ph);
  memset(r->seg_st, 0, sizeof r->seg_st);
  segment_phase(r, 0);
  return 0;
}

/* A latency in ticks as the whole us the result file stores (saturated). */
static int32_t ticks_to_us(double ticks, double tick_ms) {
  double us = floor(ticks * tick_ms * 1000.0 + 0.5);
  return us >= INT32_MAX ? INT32_MAX : (int32_t)us;
}

/* The window ending with this tick: its user-view metrics on each of its
 * ticks and its series, then an empty histogram. The series and any SLO
 * judge the stored values (us, ppm), so a result file judged later under the
 * same terms gives the same answer. */
static __attribute__((noinline)) void latency_window_close(eng_run *r) {
  int32_t w = r->now / r->lat_wticks;
  size_t W = (size_t)r->lat_windows;
  double *v = r->lat_series + w;
  const eng_lat_hist *h = &r->lh[LH_WIN];
  const double tick_ms = r->cfg->tick_ms;
  v[ENG_L_FINISHED * W] = (double)r->lat_fin;
  v[ENG_L_FAILED * W] = (double)r->lat_fail;
  double qv[ENG_USER_QUANTILES];
  int32_t u[ENG_M_USER_COUNT];
  eng_lh_quantiles(h, eng_user_quantiles, ENG_USER_QUANTILES, qv);
  for (int k = 0; k < ENG_USER_QUANTILES; k++) {
    u[k] = h->n ? ticks_to_us(qv[k], tick_ms) : -1;
    v[(ENG_L_P50 + k) * W] = h->n ? u[k] / 1000.0 : NAN;
  }
  double er = r->lat_fin ? (double)r->lat_fail / (double)r->lat_fin : NAN;
  u[ENG_USER_QUANTILES] = r->lat_fin ? (int32_t)floor(er * 1e6 + 0.5) : -1;
  v[ENG_L_ERROR_RATE * W] = er;
  v[ENG_L_SUCCESS_RATE * W] = 1.0 - er;
  size_t t0 = (size_t)w * (size_t)r->lat_wticks, t1 = (size_t)r->now + 1;
  /* rows of several ticks: each row this window touches (the window that
   * holds a row's last tick writes it last) */
  size_t k_ = r->row_every > 1 ? (size_t)r->row_every : 1;
  for (int k = 0; k < ENG_M_USER_COUNT; k++) {
    r->win_user[(size_t)k * W + (size_t)w] = u[k];
    if (!r->row_every || t1 <= t0) continue;
    int32_t *row = r->metrics + (size_t)(ENG_M_USER_FIRST + k) * (size_t)r->rows_n;
    for (size_t i = t0 / k_; i <= (t1 - 1) / k_; i++) row[i] = u[k];
  }
  eng_lh_reset(&r->lh[LH_WIN]);
  r->lat_fin = r->lat_fail = 0;
  r->lat_next = r->lat_next + r->lat_wticks < r->ticks ? r->lat_next + r->lat_wticks : r->ticks;
}

/* The segment ending with tick t (at a window end or a phase boundary):
 * into its window and its phase; then the window's series if it ends. */
static __attribute__((noinline)) void latency_flush(eng_run *r, int32_t t) {
  eng_lat_hist *seg = &r->lh[LH_SEG];
  int64_t n = (int64_t)seg->n;
  eng_lh_merge(&r->lh[LH_WIN], seg);
  r->lat_fin += n;
  r->lat_fail += n - r->seg_st[ENG_ST_OK];
  if (r->seg_phase >= 0) {
    eng_lh_merge(&r->lh[1 + r->seg_phase], seg);
    for (int k = 0; k < ENG_ST_COUNT; k++) r->ph[r->seg_phase].status[k] += r->seg_st[k];
  }
  eng_lh_reset(seg);
  memset(r->seg_st, 0, sizeof r->seg_st);
  if (t + 1 == r->seg_next) segment_phase(r, t + 1);
  if (t + 1 == r->lat_next) latency_window_close(r);
}

/* User recovery under cfg->user_slo, judged on the stored user-view rows
 * by the one rule (recovery.c), and what the summary keeps of it. */
static void user_recovery(eng_run *r, eng_summary *out) {
  const eng_config *c = r->cfg;
  int32_t clear = ms_to_tick(c, eng_config_fault_clear_ms(c));
  if (clear > r->ticks) clear = r->ticks;
  int32_t hold = ms_to_tick(c, c->recovery_hold_ms);
  out->latency_window_ms = r->lat_wticks * c->tick_ms;
  out->user_hold_ms = hold * c->tick_ms;
  out->clear_ms = clear * c->tick_ms;
  const int32_t *rows[ENG_M_USER_COUNT];
  for (int k = 0; k < ENG_M_USER_COUNT; k++)
    rows[k] = r->win_user + (size_t)k * (size_t)r->lat_windows;
  r->user_recovery_ms = eng_user_recovery_windows(&c->user_slo, rows, r->ticks, r->lat_wticks,
                                                  clear, hold, c->tick_ms);
  out->user_recovery_ms = r->user_recovery_ms;
  if (c->user_slo.n)
    out->passed_slo = eng_user_slo_passes(out->outcome, r->user_recovery_ms, c->slo_ms);
}

/* Each phase's quantiles and error rate from its histogram. */
static void latency_summarize(eng_run *r, eng_summary *out) {
  const eng_config *c = r->cfg;
  for (int k = 0; k < ENG_PHASE_COUNT; k++) {
    eng_latency_phase *p = &r->ph[k];
    const eng_lat_hist *h = &r->lh[1 + k];
    p->begin_ms = r->ph_begin[k] * c->tick_ms;
    p->end_ms = r->ph_end[k] * c->tick_ms;
    p->finished = (int64_t)h->n;
    p->failed = p->finished - p->status[ENG_ST_OK];
    p->p50_ms = h->n ? eng_lh_quantile(h, 0.5) * c->tick_ms : NAN;
    p->p90_ms = h->n ? eng_lh_quantile(h, 0.9) * c->tick_ms : NAN;
    p->p99_ms = h->n ? eng_lh_quantile(h, 0.99) * c->tick_ms : NAN;
    p->p999_ms = h->n ? eng_lh_quantile(h, 0.999) * c->tick_ms : NAN;
    p->max_ms = h->n ? eng_lh_max(h) * c->tick_ms : NAN;
    p->error_rate = h->n ? (double)p->failed / (double)p->finished : NAN;
    out->user[k] = (struct eng_user_phase){p->p50_ms, p->p90_ms, p->p99_ms, p->p999_ms,
                                           p->error_rate};
  }
}

/* run_prepare's per-client state: breakers, retry budgets and limiters, deadlines, hedges
 * and the request pool. Returns -1 when out of memory. */
static int clients_prepare(eng_run *r, const eng_config *c, uint64_t seed) {
  size_t ns = (size_t)c->shards;
  size_t nb = c->brk.breaker != ENG_BREAKER_OFF ? (size_t)c->clients * ns : 1;
  if (ensure((void **)&r->brk, &r->brk_cap, nb, sizeof *r->brk) ||
      ensure((void **)&r->client_open, &r->client_open_cap, (size_t)c->clients,
             sizeof *r->client_open) ||
      ensure((void **)&r->tokens, &r->tokens_cap, (size_t)c->clients, sizeof *r->tokens))
    return -1;
  memset(r->brk, 0, nb * sizeof *r->brk);
  r->open_breakers = 0;
  r->tokens_total = 0;
  r->lim_kind = c->retry_limiter;
  r->tb_on = r->lim_kind == ENG_LIMITER_TOKEN_BUCKET && !isinf(c->budget_ratio);
  r->closed = c->client_model == ENG_CLIENT_CLOSED;
  r->seed = seed;
  r->deadline_ticks = 0;
  if (!isinf(c->deadline_ms)) {
    r->deadline_ticks = ms_to_tick(c, c->deadline_ms);
    if (r->deadline_ticks < 1) r->deadline_ticks = 1;
  }
  r->hedges = c->hedge_attempts;
  r->hedge_ticks = ms_to_tick(c, c->hedge_delay_ms);
  r->max_live = isinf(c->max_requests_per_client) ? INT32_MAX
                                                  : (int32_t)c->max_requests_per_client;
  r->reqs = uses_requests(c);
  if (r->reqs) {
    eng_request_pool_reset(&r->rp);
    r->dl.head = r->dl.len = 0;
    r->hq.head = r->hq.len = 0;
    if (ensure((void **)&r->live, &r->live_cap, (size_t)c->clients, sizeof *r->live)) return -1;
    memset(r->live, 0, (size_t)c->clients * sizeof *r->live);
  }
  r->hooks = r->closed || r->lim_kind != ENG_LIMITER_TOKEN_BUCKET || r->reqs;
  r->drop_abandoned = c->deadline_drop || r->reqs;
  for (int32_t k = 0; k < c->clients; k++) {
    r->client_open[k] = 0;
    r->tokens[k] = r->tb_on ? c->budget_max_tokens : 0;
    r->tokens_total += r->tokens[k];
  }
  if (r->lim_kind) {
    if (ensure((void **)&r->lim, &r->lim_cap, (size_t)c->clients, sizeof *r->lim)) return -1;
    eng_limiter_params_init(&r->lim_params, c->retry_limiter, &c->lim, c->tick_ms);
    for (int32_t k = 0; k < c->clients; k++) eng_limiter_reset(&r->lim[k], &r->lim_params);
  }
  return 0;
}

/* The outcome rule's windows and thresholds for this run. */
static void recovery_params(const eng_config *c, int32_t ticks, int32_t base_begin,
                            int32_t base_end, eng_recovery_params *out) {
  /* The collapse window must hold enough requests for its goodput share to
   * mean something: trend_ms, or longer at low request rates. */
  double rate_per_tick = eng_config_arrival_rps(c) * c->tick_ms / 1000.0;
  double cw = rate_per_tick > 0 ? ceil(c->collapse_requests / rate_per_tick) : (double)ticks;
  int32_t trend = ms_to_tick(c, c->trend_ms);
  *out = (eng_recovery_params){
      .ticks = ticks,
      .base_begin = base_begin,
      .base_end = base_end,
      .warmup = ms_to_tick(c, c->warmup_ms),
      .fault_start = ms_to_tick(c, eng_config_fault_start_ms(c)),
      .clear = ms_to_tick(c, eng_config_fault_clear_ms(c)),
      .hold = ms_to_tick(c, c->recovery_hold_ms),
      .trend = trend,
      .collapse_window = cw > trend ? (cw < ticks ? (int32_t)cw : ticks) : trend,
      .tolerance = c->recovery_tolerance,
      .queue_cap = isinf(c->queue_capacity) ? INFINITY : 0.5 * c->shards * c->queue_capacity,
      .recovery_goodput = c->recovery_goodput,
      .metastable_goodput = c->metastable_goodput,
      .health_goodput = c->health_goodput,
      .health_amplification = c->health_amplification,
      .wasted_share = c->wasted_share,
      .drain_bound_ms = c->drain_bound_ms,
      .capacity = eng_config_capacity_rps(c) * c->tick_ms / 1000.0,
      .tick_ms = c->tick_ms,
      .slo_ms = c->slo_ms,
      .has_fault = eng_config_fault_clear_ms(c) > 0,
  };
  if (out->clear > ticks) out->clear = ticks;
  if (out->fault_start > ticks) out->fault_start = ticks;
}

/* n ticks from t with nothing counted and in_flight attempts in flight
 * (a run of empty ticks) into the summary's totals. */
static inline void totals_level(eng_run *r, int32_t t, int32_t n, int32_t in_flight) {
  int32_t a = t > r->base_begin ? t : r->base_begin;
  int32_t b = t + n < r->base_end ? t + n : r->base_end;
  if (b > a) r->tot.base_in_flight += (double)in_flight * (double)(b - a);
}

/* Tick t's values v into the summary's totals. */
static inline void totals_add(eng_run *r, int32_t t, const int32_t *v) {
  run_totals *s = &r->tot;
  s->newr += v[ENG_M_NEW_REQUESTS];
  s->att += v[ENG_M_ATTEMPTS];
  s->succ += v[ENG_M_SUCCESSES];
  s->fail += v[ENG_M_FAILED];
  if (t >= r->rule.clear) {
    s->newr_after += v[ENG_M_NEW_REQUESTS];
    s->att_after += v[ENG_M_ATTEMPTS];
  }
  totals_level(r, t, 1, v[ENG_M_IN_FLIGHT]);
}

/* run_prepare's measuring windows: the baseline before the fault (or over most of a run
 * without one) and the Little's Law window inside it. */
static void windows_prepare(eng_run *r, const eng_config *c, int has_fault, int32_t fs) {
  r->base_end = has_fault ? fs : (int32_t)(0.9 * r->ticks);
  int32_t bl = ms_to_tick(c, c->baseline_ms);
  r->base_begin = r->base_end - bl;
  int32_t warm = ms_to_tick(c, c->warmup_ms);
  if (r->base_begin < warm) r->base_begin = warm;
  if (r->base_end - r->base_begin < 10) r->base_begin = 0;
  if (r->base_end <= r->base_begin)
    r->base_end = r->base_begin + 1 < r->ticks ? r->base_begin + 1 : r->ticks;
  /* Little's Law compares a window's time-average L with lambda W of the
   * attempts admitted in it; attempts still in the system when the window
   * ends make the two differ, and a fault right after the window would
   * stretch them. A margin of the timeout (or 20 service times) lets those
   * finish first. */
  int32_t margin = r->timeout_ticks;
  if (margin < (int32_t)(20 * r->svc_mean_ticks)) margin = (int32_t)(20 * r->svc_mean_ticks);
  if (margin > (r->base_end - r->base_begin) / 4) margin = (r->base_end - r->base_begin) / 4;
  r->little_begin = r->base_begin;
  r->little_end = r->base_end - margin;
  r->little_len = r->little_end > r->little_begin ? (uint32_t)(r->little_end - r->little_begin) : 0;
  r->little_admitted = r->little_sojourn_sum = r->little_done = 0;
  r->little_in_system = 0;
}

static int run_prepare(eng_run *r, const eng_config *c, uint64_t seed, char *err, size_t errlen) {
  if (eng_config_validate(c, err, errlen)) return -1;
  r->cfg = c;
  r->ticks = eng_config_ticks(c);
  r->now = 0;
  eng_rng_seed(&r->r_arr, seed, STREAM_ARRIVALS);
  eng_rng_seed(&r->r_svc, seed, STREAM_SERVICE);
  eng_rng_seed(&r->r_cli, seed, STREAM_CLIENT);
  eng_rng ring_rng;
  eng_rng_seed(&ring_rng, seed, STREAM_RING);
  r->ring_seed = (uint32_t)(eng_rng_next(&ring_rng) >> 32);

  /* attempts: keep the pool, rebuild the free list */
  if (!r->at_cap) pool_grow(r);
  for (uint32_t i = 0; i < r->at_cap; i++) r->at[i].next = i + 1 < r->at_cap ? i + 1 : NIL;
  r->at_free = 0;
  for (uint32_t b = 0; b < WHEEL_SIZE; b++) r->wheel[b] = NIL;
  r->tq_head = r->tq_len = 0;

  size_t ns = (size_t)c->shards;
  if (ensure((void **)&r->sh, &r->sh_cap, ns, sizeof *r->sh) ||
      ensure((void **)&r->loads, &r->loads_cap, ns, sizeof *r->loads) ||
      ensure((void **)&r->healthy, &r->healthy_cap, ns, 1) ||
      ensure((void **)&r->excluded, &r->excluded_cap, ns, 1))
    goto oom;
  for (size_t k = 0; k < ns; k++) {
    r->sh[k] = (shard){.qhead = NIL, .qtail = NIL, .speed = 1};
    eng_codel_init(&r->sh[k].codel);
    r->loads[k] = 0;
    r->healthy[k] = 1;
    r->excluded[k] = 0;
  }
  r->in_flight = r->route_load = r->total_queued = 0;
  r->reply_head = r->reply_tail = NIL;
  ring_rebuild(r);

  if (clients_prepare(r, c, seed)) goto oom;

  r->svc_mean_ticks = c->service_mean_ms / c->tick_ms;
  r->lognorm_mu = log(r->svc_mean_ticks) - 0.5 * c->service_sigma * c->service_sigma;
  r->lam_base = r->closed ? 0 : eng_config_arrival_rps(c) * c->tick_ms / 1000.0;
  eng_poisson_prep(&r->arrivals, r->lam_base);
  r->emp = c->service_dist == ENG_SERVICE_EMPIRICAL ? c->svc_table : NULL;
  r->emp_scale = r->emp ? r->svc_mean_ticks / r->emp->mean_ms : 0;
  r->prof = r->closed || !c->rate_profile[0] ? NULL : c->rate_table;
  r->prof_scale = c->rate_scale * c->tick_ms / 1000.0;
  r->prof_cursor = 0;
  r->q_cap = isinf(c->queue_capacity) ? 1e18 : c->queue_capacity;
  r->cap_healthy = -1; /* no cap computed yet: the first routing clears cap_memo */
  r->timeout_ticks = ms_to_tick(c, c->timeout_ms);
  if (r->timeout_ticks < 1) r->timeout_ticks = 1;
  r->codel_target = isinf(c->codel_target_ms) ? -1 : ms_to_tick(c, c->codel_target_ms);
  r->codel_interval = ms_to_tick(c, c->codel_interval_ms);
  r->codel_folly = r->codel_target >= 0 && c->codel_variant == ENG_CODEL_FOLLY;
  if (r->codel_folly) {
    if (ensure((void **)&r->folly, &r->folly_cap, ns, sizeof *r->folly)) goto oom;
    for (size_t k = 0; k < ns; k++) eng_codel_folly_init(&r->folly[k]);
  }
  r->detect_ticks = ms_to_tick(c, c->crash_detect_ms);
  if (c->key_dist == ENG_KEYS_ZIPF) eng_zipf_init(&r->zipf, c->zipf_s, (double)c->keys);
  eng_breaker_params_init(&r->brk_params, &c->brk, ms_to_tick(c, c->brk.breaker_cooldown_ms));
  memset(r->fault_on, 0, sizeof r->fault_on);
  if (edges_build(r)) goto oom;
  profile_build(r);

  r->ticks_off = r->row_every != 1;
  r->rows_n = r->row_every ? (int32_t)(((int64_t)r->ticks + r->row_every - 1) / r->row_every) : 0;
  if (r->row_every &&
      ensure((void **)&r->metrics, &r->metrics_cap, (size_t)ENG_M_COUNT * (size_t)r->rows_n,
             sizeof *r->metrics))
    goto oom;
  /* a row of several ticks sums its counters from 0 (levels and the user
   * view are written over) */
  if (r->row_every > 1) memset(r->metrics, 0, (size_t)ENG_M_COUNT * r->rows_n * sizeof *r->metrics);
  r->keep_shardq = c->record_shard_queues && r->row_every;
  if (r->keep_shardq &&
      ensure((void **)&r->shard_queues, &r->shard_queues_cap, (size_t)r->rows_n * ns,
             sizeof *r->shard_queues))
    goto oom;
  r->n_levels = 0;
  for (int m = 0; m < ENG_M_USER_FIRST; m++)
    if (!eng_metric_get_info((eng_metric)m)->sums) r->levels[r->n_levels++] = m;

  int32_t fs = ms_to_tick(c, eng_config_fault_start_ms(c));
  int has_fault = eng_config_fault_clear_ms(c) > 0;
  windows_prepare(r, c, has_fault, fs);
  if (latency_prepare(r, has_fault, fs)) goto oom;
  memset(&r->tot, 0, sizeof r->tot);
  recovery_params(c, r->ticks, r->base_begin, r->base_end, &r->rule);
  if (r->ticks_off && eng_recovery_begin(&r->rs, &r->rule)) goto oom;
  r->events = r->hops_total = r->admissions = 0;
  r->keys_remapped = 0;
  r->succ_peak_load = 0;
  r->graph_on = c->graph.n_services > 0;
  if (r->graph_on) {
    if (!r->graph && !(r->graph = eng_graph_create())) goto oom;
    if (eng_graph_prepare(r->graph, c, seed, r->ticks, &r->oom)) goto oom;
  }
  /* (the graph's events are not the wheel's: a call graph runs every tick) */
  r->skip_ok = !r->skip_off && !r->reqs && !r->closed && !r->prof &&
               r->lim_kind == ENG_LIMITER_TOKEN_BUCKET && !r->graph_on;
  if (r->closed && users_prepare(r, seed)) goto oom;
  return 0;
oom:
  snprintf(err, errlen, "out of memory preparing a run of %d shards and %d ticks", c->shards,
           r->ticks);
  return -1;
}

/* The tick's n new requests of the open model. Keys are drawn two requests
 * ahead (in the same order as one by one), so that the ring's lookup table
 * entry and then its points are fetched while earlier requests go out: the
 * router's two dependent loads miss the L1 cache for many keys. (The ring
 * changes only at fault edges.) rq: request mode (arrivals_req). */
static inline __attribute__((always_inline)) void arrivals_t(eng_run *r, int64_t n, const int rq) {
  const uint32_t *lut = r->ring.lut;
  const eng_ring_point *pts = r->ring.points;
  const int shift = 32 - r->ring.lut_bits;
  uint32_t h0 = 0, c0 = 0, h1 = 0, c1 = 0, h2 = 0, c2 = 0;
  if (n > 0) request_draw(r, &h0, &c0);
  if (n > 1) {
    request_draw(r, &h1, &c1);
    __builtin_prefetch(&lut[h1 >> shift]);
  }
  for (int64_t k = 0; k < n; k++) {
    if (k + 2 < n) {
      request_draw(r, &h2, &c2);
      __builtin_prefetch(&lut[h2 >> shift]);
    }
    if (k + 1 < n) __builtin_prefetch(&pts[lut[h1 >> shift]]);
    if (rq) new_request_req(r, h0, c0);
    else new_request(r, h0, c0);
    replies_drain(r);
    h0 = h1, c0 = c1, h1 = h2, c1 = c2;
  }
}

static __attribute__((noinline)) void arrivals_req(eng_run *r, int64_t n) { arrivals_t(r, n, 1); }

/* Rows of several ticks (eng_run_set_row_ticks): tick t's metrics into
 * row t / k, counters summed (saturating: they are never negative) and
 * levels written over, so the row ends with its last tick's. */
static void rows_add(eng_run *r, int32_t t) {
  const size_t R = (size_t)r->rows_n, i = (size_t)(t / r->row_every);
  int32_t *row = r->metrics + i;
  for (int m = 0; m < ENG_M_USER_FIRST; m++) {
    int32_t *cell = row + (size_t)m * R;
    if (eng_metric_get_info((eng_metric)m)->sums) {
      int64_t v = (int64_t)*cell + r->cur[m];
      *cell = v > INT32_MAX ? INT32_MAX : (int32_t)v;
    } else {
      *cell = r->cur[m];
    }
  }
}

/* The empty ticks [t0, t1) into rows of several ticks: counters add
 * nothing; levels and the shards' queues hold still, so every row the span
 * touches takes their values (a later tick of the row writes over them). */
static void rows_idle(eng_run *r, int32_t t0, int32_t t1) {
  const size_t R = (size_t)r->rows_n;
  const size_t i0 = (size_t)(t0 / r->row_every), i1 = (size_t)((t1 - 1) / r->row_every);
  for (int32_t k = 0; k < r->n_levels; k++) {
    int32_t *row = r->metrics + (size_t)r->levels[k] * R, v = r->cur[r->levels[k]];
    for (size_t i = i0; i <= i1; i++) row[i] = v;
  }
  if (r->keep_shardq) {
    const size_t S = (size_t)r->cfg->shards;
    for (size_t i = i0; i <= i1; i++)
      for (size_t k = 0; k < S; k++) r->shard_queues[i * S + k] = r->sh[k].qlen;
  }
}

/* run_tick's tick, with u >= 0 the first uniform of its arrival count
 * (already drawn by skip_empty), else -1. */
static void run_tick(eng_run *r, double u) {
  const eng_config *c = r->cfg;
  int32_t t = r->now;
  memset(r->cur, 0, sizeof r->cur);

  while (r->edge_pos < r->n_edges && r->edges[r->edge_pos].tick <= t) {
    fault_edge(r, &r->edges[r->edge_pos]);
    r->edge_pos++;
    replies_drain(r);
  }
  if (__builtin_expect(r->graph_on, 0)) {
    eng_graph_tick(r->graph, t);
    graph_results(r);
    replies_drain(r);
  }

  uint32_t *bucket = &r->wheel[(uint32_t)t & WHEEL_MASK];
  uint32_t i = *bucket;
  *bucket = NIL;
  while (i != NIL) {
    attempt *a = &r->at[i];
    uint32_t next = a->next;
    if (a->due != t) { /* a later lap of the wheel */
      a->next = *bucket;
      *bucket = i;
    } else {
      r->events++;
      if (a->kind == EV_COMPLETE)
        on_complete(r, i);
      else if (a->kind == EV_RETRY)
        client_issue(r, i);
      else if (a->kind == EV_USER)
        user_wake(r, i);
      else
        req_retry_due(r, i);
      replies_drain(r);
    }
    i = next;
  }

  if (r->reqs) req_deadlines(r);

  int32_t deadline = t - r->timeout_ticks;
  while (r->tq_len) {
    uint64_t e = r->tq[r->tq_head];
    uint32_t k = (uint32_t)e;
    attempt *a = &r->at[k];
    if (a->gen == (uint32_t)(e >> 32) && !a->abandoned) {
      if (a->sent > deadline) break;
      r->tq_head = (r->tq_head + 1) & (r->tq_cap - 1);
      r->tq_len--;
      r->events++;
      on_timeout(r, k);
      replies_drain(r);
    } else {
      r->tq_head = (r->tq_head + 1) & (r->tq_cap - 1);
      r->tq_len--;
    }
  }

  if (r->reqs && r->hedges > 1) req_hedges(r);

  if (__builtin_expect(r->prof != NULL, 0)) profile_rate(r, t);
  int64_t n = u < 0 ? eng_poisson_draw(&r->r_arr, &r->arrivals)
                    : eng_poisson_finish(&r->r_arr, &r->arrivals, u);
  r->events += n;
  if (__builtin_expect(r->reqs, 0)) arrivals_req(r, n);
  else arrivals_t(r, n, 0);
  if (r->closed && r->ready_head != NIL) users_ready_drain(r);
  if (r->reqs && r->hedges > 1) req_hedges(r); /* copies of this tick's requests, delay 0 */

  /* metrics */
  r->cur[ENG_M_QUEUE_DEPTH] = (int32_t)r->total_queued;
  r->cur[ENG_M_IN_FLIGHT] = (int32_t)r->in_flight;
  int32_t mx = 0;
  for (int32_t k = 0; k < c->shards; k++) mx = r->sh[k].qlen > mx ? r->sh[k].qlen : mx;
  r->cur[ENG_M_MAX_SHARD_QUEUE] = mx;
  r->cur[ENG_M_OPEN_BREAKERS] = r->open_breakers;
  /* (a level never below 0 truncates to its floor: no libm call a tick) */
  double tok = r->tokens_total + 1e-9;
  r->cur[ENG_M_BUDGET_TOKENS] = r->lim_kind ? limiter_level_sum(r)
                                : !r->tb_on ? 0
                                            : (int32_t)(tok >= 0 ? tok : floor(tok));
  if (r->ticks_off) {
    const int32_t *v = r->cur;
    eng_recovery_tick(&r->rs, v[ENG_M_QUEUE_DEPTH], v[ENG_M_SUCCESSES], v[ENG_M_NEW_REQUESTS],
                      v[ENG_M_ATTEMPTS], v[ENG_M_WASTED]);
    totals_add(r, t, v);
    if (r->row_every > 1) rows_add(r, t);
  } else {
    int32_t *row = r->metrics + t; /* metric m of tick t is row[m * ticks] */
    const size_t T = (size_t)r->ticks;
    /* (the user-view rows are written when their latency window closes) */
    for (int m = 0; m < ENG_M_USER_FIRST; m++) row[(size_t)m * T] = r->cur[m];
  }
  if (r->keep_shardq) {
    size_t row = (size_t)(r->row_every > 1 ? t / r->row_every : t);
    for (int32_t k = 0; k < c->shards; k++)
      r->shard_queues[row * (size_t)c->shards + (size_t)k] = r->sh[k].qlen;
  }
  if (t >= r->little_begin && t < r->little_end) r->little_in_system += (double)r->in_flight;
  if (__builtin_expect(r->graph_on, 0)) eng_graph_tick_end(r->graph, t, r->cur);
  if (r->fault_on[F_DETECT])
    for (int32_t k = 0; k < c->shards; k++)
      if (r->healthy[k] && r->sh[k].qlen + r->sh[k].busy > r->succ_peak_load)
        r->succ_peak_load = r->sh[k].qlen + r->sh[k].busy;
  if (t + 1 == r->lat_next || t + 1 == r->seg_next) latency_flush(r, t);
}

/* An empty tick: no fault edge, nothing in its wheel bucket (not even an
 * event of a later lap, whose reinsertion order matters), no timeout due,
 * no latency window or phase ending, and no arrival. In an open-model run
 * without a rate profile, request records or a limiter other than the token
 * bucket, nothing changes by itself between events (breakers, CoDel, the
 * brownout profile and the bucket look at the time only when an event calls
 * them; closed users, hedges, deadlines and profiles are what skip_ok rules
 * out), so such a tick's metrics are the previous tick's gauges and zero
 * counters, and its only effects are one arrival uniform and dropping stale
 * timeout heads. */
/* The metrics of the empty ticks [t0, t1), written per metric as constant
 * runs; r->cur still holds tick t0 - 1's. The user-view rows are left to
 * latency_window_close, which writes every tick of a window when it closes
 * (and windows tile the run). Little's sum adds whole numbers, so one
 * product equals the per-tick sum exactly; the peak successor load cannot
 * grow on a tick where no shard's queue changes. */
static void fill_empty(eng_run *r, int32_t t0, int32_t t1) {
  const size_t T = (size_t)r->ticks, n = (size_t)(t1 - t0);
  /* Runs between events are a few ticks long: each row gets a fixed block
   * of FILL_BLOCK stores (two vector stores) whenever the row has that many
   * ticks left, and a loop only beyond it. Stores past t1 are harmless:
   * every tick of these rows is written again, in order, by its own tick or
   * a later fill, and nothing reads them before the run ends. */
  enum { FILL_BLOCK = 8 };
  const int whole = (size_t)t0 + FILL_BLOCK <= T;
  if (r->ticks_off) {
    /* nothing counted, the levels held: what reads r->cur here reads only
     * levels (run_tick clears the counters before it counts again) */
    eng_recovery_idle(&r->rs, r->cur[ENG_M_QUEUE_DEPTH], t1 - t0);
    totals_level(r, t0, t1 - t0, r->cur[ENG_M_IN_FLIGHT]);
    if (r->row_every > 1) rows_idle(r, t0, t1);
  } else {
    /* counters 0, levels kept: cheaper than a test per metric */
    int32_t level[ENG_M_USER_FIRST];
    memcpy(level, r->cur, sizeof level);
    memset(r->cur, 0, sizeof level);
    for (int32_t k = 0; k < r->n_levels; k++) r->cur[r->levels[k]] = level[r->levels[k]];
  }
  for (int m = 0; m < ENG_M_USER_FIRST && !r->ticks_off; m++) {
    int32_t *row = r->metrics + (size_t)m * T + (size_t)t0, v = r->cur[m];
    size_t k = 0;
    if (whole)
      for (; k < FILL_BLOCK; k++) row[k] = v;
    for (; k < n; k++) row[k] = v;
  }
  if (r->keep_shardq && r->row_every == 1) {
    const size_t S = (size_t)r->cfg->shards;
    const int32_t *prev = r->shard_queues + (size_t)(t0 - 1) * S;
    for (int32_t t = t0; t < t1; t++)
      memcpy(r->shard_queues + (size_t)t * S, prev, S * sizeof *prev);
  }
  int32_t a = t0 > r->little_begin ? t0 : r->little_begin;
  int32_t b = t1 < r->little_end ? t1 : r->little_end;
  if (b > a) r->little_in_system += (double)r->in_flight * (double)(b - a);
}

/* Advances r->now over empty ticks from r->now (> 0), drawing each one's
 * first arrival uniform exactly as its tick would: the random streams,
 * and so the results, are those of the tick-by-tick loop. Returns the
 * uniform of the tick it stopped at when that tick has arrivals (the tick
 * then finishes the draw), else -1. The cost of an empty tick falls from
 * the whole tick to one uniform, one bucket load and its metric stores;
 * a tick with events costs one bucket load more (in the caller). */
static __attribute__((noinline)) double skip_empty(eng_run *r) {
  const int32_t t0 = r->now; /* its bucket is empty (the caller looked) */
  int32_t limit = (r->lat_next < r->seg_next ? r->lat_next : r->seg_next) - 1;
  if (r->ticks < limit) limit = r->ticks;
  if (r->edge_pos < r->n_edges && r->edges[r->edge_pos].tick < limit)
    limit = r->edges[r->edge_pos].tick;
  /* The first live timeout bounds the skip. The stale heads before it are
   * dropped only if tick t0 is skipped: t0's own timeout pass would drop
   * them then, after its events, and the FIFO's length decides when it
   * grows (and so when a memory limit is hit). */
  uint32_t head = r->tq_head, len = r->tq_len;
  for (; len; len--, head = (head + 1) & (r->tq_cap - 1)) {
    uint64_t e = r->tq[head];
    const attempt *a = &r->at[(uint32_t)e];
    if (a->gen == (uint32_t)(e >> 32) && !a->abandoned) {
      int64_t due = (int64_t)a->sent + r->timeout_ticks;
      if (due < limit) limit = (int32_t)due;
      break;
    }
  }
  /* eng_rng_uniform's v = x 2^-53 > e exactly when the integer x is above
   * floor(e 2^53): the same draws, compared without a conversion */
  const uint64_t e53 = (uint64_t)(r->arrivals.exp_neg_lam * 0x1.0p53);
  const int draws = r->arrivals.lam > 0;
  int32_t t = t0;
  double u = -1;
  eng_rng g = r->r_arr; /* a local copy stays in registers */
  while (t < limit && r->wheel[(uint32_t)t & WHEEL_MASK] == NIL) {
    if (draws) {
      uint64_t x = eng_rng_next(&g) >> 11;
      if (x > e53) { /* this tick has arrivals: it runs, from v */
        u = (double)x * 0x1.0p-53;
        break;
      }
    }
    t++;
  }
  r->r_arr = g;
  if (t > t0) {
    r->tq_head = head;
    r->tq_len = len;
    fill_empty(r, t0, t);
  }
  r->now = t;
  return u;
}

static void run_summarize(eng_run *r, uint64_t seed, eng_summary *out) {
  const eng_config *c = r->cfg;
  memset(out, 0, sizeof *out);
  out->seed = seed;
  if (r->ticks_off) {
    eng_recovery_end(&r->rs, out);
  } else {
    /* the rows are there: the rule and the totals read them now, through
     * the same code a run without rows feeds as it goes */
    const int32_t *m = r->metrics;
    size_t T = (size_t)r->ticks;
    eng_recovery_traces tr = {
        .queue = m + ENG_M_QUEUE_DEPTH * T,
        .successes = m + ENG_M_SUCCESSES * T,
        .new_requests = m + ENG_M_NEW_REQUESTS * T,
        .attempts = m + ENG_M_ATTEMPTS * T,
        .wasted = m + ENG_M_WASTED * T,
    };
    eng_recovery_assess(&tr, &r->rule, out);
    memset(&r->tot, 0, sizeof r->tot);
    for (size_t t = 0; t < T; t++) {
      int32_t v[ENG_M_COUNT];
      v[ENG_M_NEW_REQUESTS] = m[ENG_M_NEW_REQUESTS * T + t];
      v[ENG_M_ATTEMPTS] = m[ENG_M_ATTEMPTS * T + t];
      v[ENG_M_SUCCESSES] = m[ENG_M_SUCCESSES * T + t];
      v[ENG_M_FAILED] = m[ENG_M_FAILED * T + t];
      v[ENG_M_IN_FLIGHT] = m[ENG_M_IN_FLIGHT * T + t];
      totals_add(r, (int32_t)t, v);
    }
  }
  const run_totals *tot = &r->tot;
  int64_t newr = tot->newr, att = tot->att, newr_after = tot->newr_after,
          att_after = tot->att_after;
  out->new_requests = newr;
  out->attempts = att;
  out->successes = tot->succ;
  out->failed_requests = tot->fail;
  out->amplification = newr ? (double)att / (double)newr : NAN;
  out->amplification_after = newr_after ? (double)att_after / (double)newr_after : NAN;

  double mean_adm = 0, max_adm = 0;
  for (int32_t k = 0; k < c->shards; k++) {
    mean_adm += (double)r->sh[k].admitted;
    if (r->sh[k].admitted > max_adm) max_adm = (double)r->sh[k].admitted;
  }
  mean_adm /= c->shards;
  out->max_mean_shard_load = mean_adm > 0 ? max_adm / mean_adm : NAN;
  out->mean_hops = r->admissions ? (double)r->hops_total / (double)r->admissions : NAN;

  double span = r->base_end - r->base_begin;
  double lspan = r->little_end > r->little_begin ? r->little_end - r->little_begin : 1;
  out->little_L = r->little_in_system / lspan;
  double lambda = r->little_admitted / lspan;
  double W = r->little_done ? (double)r->little_sojourn_sum / (double)r->little_done : NAN;
  out->little_lambda_w = lambda * W;
  out->little_lambda = lambda / c->tick_ms;
  out->little_w_ms = W * c->tick_ms;
  out->little_rel_error = out->little_L > 0 ? fabs(out->little_L - out->little_lambda_w) / out->little_L : NAN;

  out->keys_remapped = r->keys_remapped;
  double base_shard_load = tot->base_in_flight / (span * c->shards);
  out->successor_peak_load =
      c->crash.count && base_shard_load > 0 ? r->succ_peak_load / base_shard_load : NAN;
  out->events = r->events;
}

int eng_run_simulate(eng_run *r, const eng_config *c, uint64_t seed, eng_summary *out, char *err,
                     size_t errlen) {
  r->mem_limit = isinf(c->memory_limit_mb) ? SIZE_MAX : (size_t)(c->memory_limit_mb * 1048576.0);
  r->now = 0;
  if (setjmp(r->oom)) {
    /* Everything the run holds belongs to r and stays freeable; the next
     * run prepares it anew. */
    snprintf(err, errlen, "out of memory at tick %d of %d (%s)", r->now, r->ticks,
             isinf(c->memory_limit_mb) ? "the machine refused more" : "memory_limit_mb reached");
    return -1;
  }
  if (run_prepare(r, c, seed, err, errlen)) return -1;
  for (r->now = 0; r->now < r->ticks; r->now++) {
    double u = -1;
    /* Skipping needs the tick's arrival count to be decided by its first
     * uniform (or to draw none), and the previous tick's metrics in cur. */
    if (r->skip_ok && r->now > 0 && r->wheel[(uint32_t)r->now & WHEEL_MASK] == NIL &&
        (!(r->arrivals.lam > 0) || eng_poisson_by_inversion(&r->arrivals))) {
      u = skip_empty(r);
      if (r->now >= r->ticks) break;
    }
    run_tick(r, u);
  }
  run_summarize(r, seed, out);
  latency_summarize(r, out);
  user_recovery(r, out);
  if (r->graph_on) {
    size_t n = (size_t)c->graph.n_services + 1;
    if (ensure((void **)&r->svc_sum, &r->svc_sum_cap, n, sizeof *r->svc_sum)) {
      snprintf(err, errlen, "out of memory summarizing the services");
      return -1;
    }
    for (size_t k = 0; k < n; k++)
      eng_graph_summarize(r->graph, &r->rule, out, (int)k, &r->svc_sum[k]);
  }
  return 0;
}

int32_t eng_run_services(const eng_run *r) {
  return r->graph_on ? r->cfg->graph.n_services + 1 : 0;
}

const int32_t *eng_run_service_trace(const eng_run *r, int32_t k, eng_service_trace which,
                                     size_t *stride) {
  return r->graph_on ? eng_graph_trace(r->graph, k, which, stride) : NULL;
}

eng_metric eng_service_trace_metric(eng_service_trace which) {
  static const eng_metric mirror[ENG_SV_COUNT] = {
      ENG_M_QUEUE_DEPTH,   ENG_M_SUCCESSES,   ENG_M_NEW_REQUESTS, ENG_M_ATTEMPTS,
      ENG_M_WASTED,        ENG_M_RETRIES,     ENG_M_TIMEOUTS,     ENG_M_REJ_QUEUE_FULL,
      ENG_M_REJ_ROUTER,    ENG_M_REJ_BREAKER, ENG_M_REJ_BUDGET,   ENG_M_SHED,
      ENG_M_LOST,          ENG_M_FAILED,      ENG_M_IN_FLIGHT};
  return (unsigned)which < ENG_SV_COUNT ? mirror[which] : ENG_M_COUNT;
}

/* A downstream service's traces are kept per tick (the outcome rule reads
 * them so); rows of several ticks combine them as rows_add does the
 * front's metrics. */
int eng_run_service_rows(const eng_run *r, int32_t k, eng_service_trace which, int32_t *out) {
  eng_metric m = eng_service_trace_metric(which);
  int32_t rows = eng_run_rows(r);
  if (m == ENG_M_COUNT || k < 0 || k >= eng_run_services(r) || rows <= 0) return -1;
  if (k == ENG_FRONT) {
    memcpy(out, eng_run_metric(r, m), (size_t)rows * sizeof *out);
    return 0;
  }
  size_t st = 1;
  const int32_t *tr = eng_run_service_trace(r, k, which, &st);
  const int32_t every = r->row_every, T = r->ticks;
  const int sums = eng_metric_get_info(m)->sums;
  for (int32_t i = 0; i < rows; i++) {
    int32_t t0 = i * every, t1 = t0 + every < T ? t0 + every : T;
    int64_t v = 0;
    for (int32_t t = t0; t < t1; t++) v = sums ? v + tr[(size_t)t * st] : tr[(size_t)t * st];
    out[i] = v > INT32_MAX ? INT32_MAX : (int32_t)v;
  }
  return 0;
}

int eng_run_service(const eng_run *r, int32_t k, eng_service_summary *out) {
  if (k < 0 || k >= eng_run_services(r)) return -1;
  *out = r->svc_sum[k];
  return 0;
}

const int32_t *eng_run_metric(const eng_run *r, eng_metric m) {
  if ((unsigned)m >= ENG_M_COUNT || !r->metrics || !r->row_every) return NULL;
  return r->metrics + (size_t)m * (size_t)r->rows_n;
}

int32_t eng_run_rows(const eng_run *r) { return r->row_every ? r->rows_n : 0; }

int32_t eng_run_ticks(const eng_run *r) { return r->ticks; }

void eng_run_set_skipping(eng_run *r, int on) { r->skip_off = !on; }

void eng_run_set_row_ticks(eng_run *r, int32_t k) { r->row_every = k > 0 ? k : 0; }

const int32_t *eng_run_shard_queues(const eng_run *r) {
  return r->cfg && r->keep_shardq ? r->shard_queues : NULL;
}

int32_t eng_run_latency_windows(const eng_run *r) { return r->lat_series ? r->lat_windows : 0; }

double eng_run_latency_window_ms(const eng_run *r) {
  return r->cfg ? r->lat_wticks * r->cfg->tick_ms : NAN;
}

const double *eng_run_latency(const eng_run *r, eng_lat_series s) {
  if ((unsigned)s >= ENG_L_COUNT || !r->lat_series) return NULL;
  return r->lat_series + (size_t)s * (size_t)r->lat_windows;
}

const eng_latency_phase *eng_run_latency_phase(const eng_run *r, int phase) {
  return (unsigned)phase < ENG_PHASE_COUNT ? &r->ph[phase] : NULL;
}

/* The phase's histogram, for its export (latency_hist.c). */
const eng_lat_hist *eng_run_phase_hist(const eng_run *r, int phase) {
  return (unsigned)phase < ENG_PHASE_COUNT && r->lh ? &r->lh[1 + phase] : NULL;
}

double eng_run_user_recovery_ms(const eng_run *r) { return r->user_recovery_ms; }

const eng_config *eng_run_config(const eng_run *r) { return r->cfg; }
