/*
 * request.c — the request records' pool and the timer FIFOs (request.h).
 */
#include <stdlib.h>
#include <string.h>

#include "request.h"

void eng_request_pool_reset(eng_request_pool *p) {
  for (uint32_t i = 0; i < p->cap; i++) p->rq[i].next = i + 1 < p->cap ? i + 1 : ENG_REQ_NIL;
  p->free = p->cap ? 0 : ENG_REQ_NIL;
}

void eng_request_pool_free(eng_request_pool *p) {
  free(p->rq);
  *p = (eng_request_pool){0};
}

/* Doubles the pool; new records go on the free list with generation 0. */
static int pool_grow(eng_request_pool *p) {
  uint32_t old = p->cap, n = old ? old * 2 : 1024;
  if (n > (uint32_t)1 << 30) return -1;
  eng_request *q = realloc(p->rq, (size_t)n * sizeof *q);
  if (!q) return -1;
  for (uint32_t i = old; i < n; i++) {
    q[i].next = i + 1 < n ? i + 1 : p->free;
    q[i].gen = 0;
  }
  p->rq = q;
  p->free = old;
  p->cap = n;
  return 0;
}

uint32_t eng_request_alloc(eng_request_pool *p) {
  if ((p->free == ENG_REQ_NIL || !p->cap) && pool_grow(p)) return ENG_REQ_NIL;
  uint32_t i = p->free;
  eng_request *q = &p->rq[i];
  p->free = q->next;
  uint32_t gen = q->gen;
  memset(q, 0, sizeof *q);
  q->gen = gen;
  q->next = ENG_REQ_NIL;
  q->deadline = ENG_REQ_NO_DEADLINE;
  q->hedge_due = -1;
  return i;
}

void eng_request_release(eng_request_pool *p, uint32_t i) {
  eng_request *q = &p->rq[i];
  q->gen++;
  q->next = p->free;
  p->free = i;
}

void eng_timer_fifo_free(eng_timer_fifo *f) {
  free(f->q);
  *f = (eng_timer_fifo){0};
}

int eng_timer_fifo_push(eng_timer_fifo *f, uint32_t ref, uint32_t gen, int32_t due) {
  if (f->len == f->cap) {
    uint32_t n = f->cap ? f->cap * 2 : 1024;
    if (n > (uint32_t)1 << 30) return -1;
    eng_timer *q = malloc((size_t)n * sizeof *q);
    if (!q) return -1;
    for (uint32_t k = 0; k < f->len; k++) q[k] = f->q[(f->head + k) & (f->cap - 1)];
    free(f->q);
    f->q = q;
    f->cap = n;
    f->head = 0;
  }
  f->q[(f->head + f->len) & (f->cap - 1)] = (eng_timer){ref, gen, due};
  f->len++;
  return 0;
}
