/*
 * graph.h — the services behind the front one in a call graph (graph.c),
 * as sim.c drives them.
 *
 * The front service is sim.c's cluster, with its clients, limiters,
 * breakers and metrics unchanged. When one of its attempts starts its work
 * (d ticks), sim.c hands it here (eng_graph_front_start); the graph makes
 * the front's calls, and every call's attempts, retries, timeouts and work
 * at the services downstream, and reports back through eng_graph_take
 * whether the attempt's calls succeeded and how much of its own work is
 * left. sim.c calls eng_graph_tick at the start of every tick (the graph's
 * events due then) and eng_graph_tick_end after its metrics; the graph
 * never calls sim.c.
 */
#ifndef STORMSWEEP_GRAPH_H
#define STORMSWEEP_GRAPH_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "eng.h"
#include "recovery.h"

typedef struct eng_graph_run eng_graph_run;

eng_graph_run *eng_graph_create(void);
void eng_graph_destroy(eng_graph_run *g);

/* A run of c's graph from seed, for ticks ticks; growing memory past what
 * is free jumps to *oom. Returns 0, or -1 when the run cannot be set up. */
int eng_graph_prepare(eng_graph_run *g, const eng_config *c, uint64_t seed, int32_t ticks,
                      jmp_buf *oom);

/* The front's attempt (i, gen), on front shard `shard`, key keyhash, starts
 * its own work of d ticks at tick now; its caller gives up at tick expiry
 * (INT32_MAX: never). */
void eng_graph_front_start(eng_graph_run *g, int32_t now, uint32_t i, uint32_t gen,
                           uint32_t keyhash, uint32_t shard, int32_t d, int32_t expiry);
void eng_graph_tick(eng_graph_run *g, int32_t now);
/* The tick's end: the graph's per-tick traces, and the front's counters
 * of the tick (sim.c's, ENG_M_COUNT of them) for the front's totals. */
void eng_graph_tick_end(eng_graph_run *g, int32_t now, const int32_t *front_cur);

/* A front attempt whose calls ended: ok, and the own work left (ticks). */
typedef struct eng_graph_done {
  uint32_t i, gen;
  int32_t post;
  int32_t ok;
} eng_graph_done;
/* The results since the last take (*n of them; the array is the graph's
 * until its next call). */
const eng_graph_done *eng_graph_take(eng_graph_run *g, size_t *n);

/* After the run: service k's summary (ENG_FRONT: the front's counts, with
 * its outcome from front, the run's summary; k = 1 .. n_services: the
 * outcome rule on the service's own traces, with the run's windows). */
void eng_graph_summarize(eng_graph_run *g, const eng_recovery_params *rule,
                         const eng_summary *front, int k, eng_service_summary *out);

/* Service k's trace which (eng_service_trace) of the last run, or NULL. */
const int32_t *eng_graph_trace(const eng_graph_run *g, int k, int which, size_t *stride);

/* What a run of c's graph holds at most: its per-tick traces, and its
 * records (bytes), for eng_run_memory. */
void eng_graph_memory(const eng_config *c, double ticks, double *traces, double *records);

#endif
