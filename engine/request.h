/*
 * request.h — what a client knows about one request across its attempts,
 * for the client features that need more than the attempt in flight: a
 * request deadline over every attempt and backoff wait, hedged copies in
 * flight together, and the client's own concurrency limit (docs/clients.md).
 *
 * Without those features (the defaults) a request is just its attempt
 * record in sim.c and none of this is used. With any of them the run is in
 * *request mode*: every attempt points at one eng_request, which holds
 *   - the deadline tick, and the hedge timer's next tick;
 *   - how many attempts the request made (first, retries and hedges: all
 *     count against max_retries) and how many retries it scheduled (the
 *     backoff's exponent), and the previous sleep (decorrelated jitter);
 *   - its copies in flight — attempts sent and not yet answered, failed or
 *     given up — as (record, generation) pairs, at most ENG_MAX_HEDGE, so
 *     the request can give them up when it ends;
 *   - retries sleeping in a backoff, which keep the record alive after the
 *     request ended (they find it done when they wake).
 * A record is freed when the request has ended and no retry is pending.
 *
 * Timers are FIFOs of (record, generation, due tick): a deadline is a fixed
 * time after its request's start and a hedge timer a fixed time after its
 * copy's send, and both happen in tick order, so each FIFO is sorted by
 * construction and every operation is O(1). Stale entries (a freed or ended
 * request, a hedge timer that a later copy replaced) are skipped when they
 * reach the head. Buffers only grow; nothing is global, one pool per run.
 */
#ifndef STORMSWEEP_REQUEST_H
#define STORMSWEEP_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "eng_config.h"

#define ENG_REQ_NIL UINT32_MAX
#define ENG_REQ_NO_DEADLINE INT32_MAX

typedef struct eng_request {
  uint32_t gen;       /* bumped when the record is freed: FIFO entries go stale */
  uint32_t next;      /* free list link */
  uint32_t client, keyhash;
  int32_t deadline;   /* tick at which an open request fails; ENG_REQ_NO_DEADLINE */
  int32_t hedge_due;  /* tick the latest hedge timer fires; -1: none armed */
  float prev_sleep;   /* decorrelated jitter's previous sleep, ms */
  uint16_t made;      /* attempts made: the first, retries, hedges */
  uint16_t backoffs;  /* retries scheduled after a failure (the backoff exponent) */
  uint8_t out;        /* copies in flight */
  uint8_t pending;    /* retries sleeping in a backoff */
  uint8_t done;       /* ended: first success, final failure or deadline */
  uint8_t held;       /* envoy: retries not sent (past the deadline) that hold a slot */
  uint8_t status;     /* eng_status if it fails now: its latest failure's */
  int32_t born;       /* tick of its first send (its latency's start) */
  uint32_t copy[ENG_MAX_HEDGE];     /* copies in flight: attempt record ... */
  uint32_t copy_gen[ENG_MAX_HEDGE]; /* ... and its generation when sent */
} eng_request;

typedef struct eng_request_pool {
  eng_request *rq;
  uint32_t cap, free;
} eng_request_pool;

/* Empties the pool (every record free), keeping its memory. */
void eng_request_pool_reset(eng_request_pool *p);
void eng_request_pool_free(eng_request_pool *p);
/* A fresh record (fields zero, deadline none, no hedge timer); ENG_REQ_NIL
 * when the pool cannot grow. May move p->rq. */
uint32_t eng_request_alloc(eng_request_pool *p);
void eng_request_release(eng_request_pool *p, uint32_t q);

/* The copy list: add a copy just sent (out must be below ENG_MAX_HEDGE),
 * remove one that ended (1 when it was there). */
static inline void eng_request_copy_add(eng_request *q, uint32_t rec, uint32_t gen) {
  q->copy[q->out] = rec;
  q->copy_gen[q->out] = gen;
  q->out++;
}

static inline int eng_request_copy_remove(eng_request *q, uint32_t rec, uint32_t gen) {
  for (uint32_t k = 0; k < q->out; k++)
    if (q->copy[k] == rec && q->copy_gen[k] == gen) {
      q->out--;
      q->copy[k] = q->copy[q->out];
      q->copy_gen[k] = q->copy_gen[q->out];
      return 1;
    }
  return 0;
}

/* ---- timer FIFOs ---- */

typedef struct eng_timer {
  uint32_t ref, gen; /* the request record and its generation when armed */
  int32_t due;
} eng_timer;

typedef struct eng_timer_fifo {
  eng_timer *q;
  uint32_t cap, head, len; /* cap is a power of two */
} eng_timer_fifo;

void eng_timer_fifo_free(eng_timer_fifo *f);
/* Appends; due must not be below the last entry's. -1 when it cannot grow. */
int eng_timer_fifo_push(eng_timer_fifo *f, uint32_t ref, uint32_t gen, int32_t due);

static inline const eng_timer *eng_timer_fifo_head(const eng_timer_fifo *f) {
  return f->len ? &f->q[f->head] : NULL;
}

static inline void eng_timer_fifo_pop(eng_timer_fifo *f) {
  f->head = (f->head + 1) & (f->cap - 1);
  f->len--;
}

#endif
