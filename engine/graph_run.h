/*
 * graph_run.h — a call graph run's records, shared by the files of the
 * graph (internal to the engine): graph.c simulates them, graph_summary.c
 * reports on them (per-tick traces, per-service summaries, memory).
 */
#ifndef STORMSWEEP_GRAPH_RUN_H
#define STORMSWEEP_GRAPH_RUN_H

#include <setjmp.h>
#include <stdint.h>

#include "breaker.h"
#include "codel.h"
#include "graph.h"
#include "limiter.h"
#include "rng.h"
#include "router.h"

#define GNIL UINT32_MAX
#define WHEEL 4096u
#define NO_TICK INT32_MAX

enum { ST_QUEUED, ST_PRE, ST_CALLS, ST_POST, ST_SILENT }; /* an attempt's state (silent: shed
                                                                 unanswered, its record kept
                                                                 until its caller's timeout) */
enum { EV_WORK, EV_TIMEOUT, EV_RETRY, EV_HEDGE }; /* event kinds (work, timeout: an attempt's) */
enum { STREAM_GRAPH = 16 };                     /* beside sim.c's streams */

typedef struct g_att {
  uint32_t next, prev;    /* shard queue (next: newer) or free list */
  uint32_t gen;
  uint32_t call, call_gen; /* the call it answers (the front: sim.c's attempt and gen) */
  uint32_t keyhash;
  int32_t sent;
  int32_t deadline;       /* the deadline it knows (NO_TICK: none) */
  int32_t post;           /* its own work after its calls, ticks */
  uint16_t svc, shard;
  uint8_t state, stage, failed;
  uint8_t waited;         /* its call waits for it: one of the call's copies in flight */
  uint8_t cancelled;      /* given up with hedge_cancel: dropped unserved if still queued */
  uint16_t pending;       /* calls of the stage not yet ended, plus one while they start */
  uint16_t try_no;        /* which of its call's attempts it is (1: the first) */
  uint32_t sib;           /* the next copy in flight of the same call */
} g_att;

typedef struct g_call {
  uint32_t next, gen;     /* free list */
  uint32_t parent, parent_gen;
  uint32_t copies;        /* its attempts in flight (g_att.sib), GNIL: none */
  uint32_t keyhash;
  int32_t deadline;       /* NO_TICK: none */
  float prev_sleep;       /* decorrelated jitter's previous sleep, ms */
  uint16_t edge, tries, client;
  uint8_t after_timeout;  /* its last attempt timed out (AWS prices that retry apart) */
  uint8_t out;            /* an attempt of it went out */
  uint8_t n_out;          /* attempts in flight: more than one only when hedging */
} g_call;

typedef struct g_event {
  uint32_t next, gen, id, id_gen; /* gen: the record's own; id_gen: its call's or attempt's */
  int32_t due;
  uint16_t tries;
  uint8_t kind;
} g_event;

typedef struct g_shard {
  uint32_t qhead, qtail;  /* oldest, newest */
  int32_t qlen, busy;
  eng_codel codel;
  eng_codel_folly folly;
} g_shard;

/* A service's per-tick traces (eng_service_trace), for the outcome rule and
 * eng_run_service_trace. */
enum {
  TR_QUEUE = ENG_SV_QUEUE,
  TR_SUCC = ENG_SV_SUCCESSES,
  TR_NEW = ENG_SV_CALLS,
  TR_ATT = ENG_SV_ATTEMPTS,
  TR_WASTED = ENG_SV_WASTED,
  TR_RULE = TR_WASTED + 1, /* the outcome rule's, kept a column each; the rest tick by tick */
  TR_RETRY = ENG_SV_RETRIES,
  TR_TIMEOUT = ENG_SV_TIMEOUTS,
  TR_REJ_QUEUE = ENG_SV_REJECTED_QUEUE,
  TR_REJ_ROUTER = ENG_SV_REJECTED_ROUTER,
  TR_BREAKER = ENG_SV_REJECTED_BREAKER,
  TR_BUDGET = ENG_SV_REJECTED_BUDGET,
  TR_SHED = ENG_SV_SHED,
  TR_LOST = ENG_SV_LOST,
  TR_FAILED = ENG_SV_FAILED,
  TR_IN_FLIGHT = ENG_SV_IN_FLIGHT,
  TR_COUNT = ENG_SV_COUNT
};

typedef struct g_service {
  const eng_service *cfg;
  g_shard *sh;
  eng_ring ring;
  double mean_ticks, mu, q_cap, error_rate, at;
  int32_t *load;        /* per shard: attempts it holds (in service and queued), for the router */
  int64_t inflight;     /* their sum */
  int32_t codel_target, codel_interval; /* ticks; codel_target -1: off */
  int32_t queued, first_edge, n_edges; /* its calls: edges[first_edge ..] by stage */
  int32_t last_stage;
  int32_t bo_on;        /* in a brownout now */
  int32_t cur[TR_COUNT];
  int32_t *tr;          /* TR_RULE x ticks (a column each: the outcome rule reads them) */
  int32_t *tx;          /* ticks x (TR_COUNT - TR_RULE): one line of stores a tick */
  eng_service_summary sum;
  double busy_ticks;
} g_service;

typedef struct g_edge {
  const eng_call_edge *cfg;
  int32_t timeout, deadline; /* ticks; NO_TICK: none */
  double *tokens;            /* per client process of the caller */
  int tb_on;
  int32_t lim_kind;          /* a limiter.h limiter (0, the token bucket: tokens instead) */
  eng_limiter_params lp;
  eng_limiter *lim;          /* per client process of the caller */
  eng_breaker_params bp;
  eng_breaker *brk;          /* per client process x callee shard; NULL: no breakers */
  int32_t brk_shards;        /* the callee's shards: brk's row length */
  int32_t *live;             /* attempts in flight per client process (NULL: no limit) */
  int32_t max_live;
  int32_t hedge_delay;       /* ticks between hedged copies (hedging: cfg->hedge_attempts > 1) */
} g_edge;

struct eng_graph_run {
  const eng_config *c;
  int32_t now, ticks;
  jmp_buf *oom;
  eng_rng rng;
  uint64_t key_seed;
  g_service svc[ENG_MAX_SERVICES + 1]; /* [ENG_FRONT]: the front's calls and totals */
  int32_t n_svc;
  g_edge edge[ENG_MAX_EDGES];
  int32_t order[ENG_MAX_EDGES];        /* edges by (caller, stage) */
  g_att *at;
  uint32_t at_cap, at_free;
  g_call *cl;
  uint32_t cl_cap, cl_free;
  g_event *ev;
  uint32_t ev_cap, ev_free;
  uint32_t wheel[WHEEL];
  eng_graph_done *done;
  size_t n_done, done_cap;
  double front_totals[ENG_M_COUNT];
};

#endif
