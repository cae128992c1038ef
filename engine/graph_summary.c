/*
 * graph_summary.c — what a call graph run reports (graph.h): each
 * service's per-tick traces, written at the end of every tick; its summary,
 * the outcome rule on those traces (recovery.h) beside its counts; and the
 * memory a run of a configuration holds, for the driver's check.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph_run.h"

void eng_graph_tick_end(eng_graph_run *g, int32_t now, const int32_t *front_cur) {
  for (int m = 0; m < ENG_M_COUNT; m++)
    if (eng_metric_get_info((eng_metric)m)->sums) g->front_totals[m] += front_cur[m];
  if (front_cur[ENG_M_QUEUE_DEPTH] > g->svc[ENG_FRONT].sum.peak_queue)
    g->svc[ENG_FRONT].sum.peak_queue = front_cur[ENG_M_QUEUE_DEPTH];
  const size_t T = (size_t)g->ticks;
  for (int k = 1; k < g->n_svc; k++) {
    g_service *v = &g->svc[k];
    v->cur[TR_QUEUE] = v->queued;
    v->cur[TR_IN_FLIGHT] = (int32_t)v->inflight;
    if (v->queued > v->sum.peak_queue) v->sum.peak_queue = v->queued;
    for (int m = 0; m < TR_RULE; m++) v->tr[(size_t)m * T + (size_t)now] = v->cur[m];
    memcpy(v->tx + (size_t)now * (TR_COUNT - TR_RULE), v->cur + TR_RULE,
           (TR_COUNT - TR_RULE) * sizeof *v->cur);
    memset(v->cur, 0, sizeof v->cur);
  }
}

void eng_graph_summarize(eng_graph_run *g, const eng_recovery_params *rule,
                         const eng_summary *front, int k, eng_service_summary *out) {
  const eng_config *c = g->c;
  double per = front->new_requests > 0 ? 1.0 / (double)front->new_requests : NAN;
  if (k == ENG_FRONT) {
    *out = g->svc[ENG_FRONT].sum;
    snprintf(out->name, sizeof out->name, "%s", c->graph.front);
    const double *t = g->front_totals;
    out->outcome = front->outcome;
    out->recovery_ms = front->recovery_ms;
    out->calls = (int64_t)t[ENG_M_NEW_REQUESTS];
    out->attempts = (int64_t)t[ENG_M_ATTEMPTS];
    out->retries = (int64_t)t[ENG_M_RETRIES];
    out->successes = (int64_t)t[ENG_M_SUCCESSES];
    out->rejected = (int64_t)(t[ENG_M_REJ_QUEUE_FULL] + t[ENG_M_REJ_ROUTER]);
    out->dropped = (int64_t)t[ENG_M_SHED];
    out->timeouts = (int64_t)t[ENG_M_TIMEOUTS];
    out->wasted = (int64_t)t[ENG_M_WASTED];
    out->budget_refused = (int64_t)t[ENG_M_REJ_BUDGET];
    out->breaker_refused = (int64_t)t[ENG_M_REJ_BREAKER];
    out->failed_calls = (int64_t)t[ENG_M_FAILED];
    out->amplification = (double)out->attempts * per;
    out->work_ms = out->busy_share = NAN;
    return;
  }
  g_service *v = &g->svc[k];
  *out = v->sum;
  snprintf(out->name, sizeof out->name, "%s", v->cfg->name);
  const size_t T = (size_t)g->ticks;
  eng_recovery_traces tr = {
      .queue = v->tr + TR_QUEUE * T,
      .successes = v->tr + TR_SUCC * T,
      .new_requests = v->tr + TR_NEW * T,
      .attempts = v->tr + TR_ATT * T,
      .wasted = v->tr + TR_WASTED * T,
  };
  eng_recovery_params p = *rule;
  p.capacity = (double)v->cfg->shards * v->cfg->workers / v->mean_ticks;
  p.queue_cap = isinf(v->q_cap) ? INFINITY : v->q_cap * v->cfg->shards / 2;
  eng_summary s;
  memset(&s, 0, sizeof s);
  eng_recovery_assess(&tr, &p, &s);
  out->outcome = s.outcome;
  out->recovery_ms = s.recovery_ms;
  out->amplification = (double)out->attempts * per;
  out->work_ms = v->busy_ticks * c->tick_ms * per;
  double avail = (double)v->cfg->shards * v->cfg->workers * (double)g->ticks;
  out->busy_share = avail > 0 ? v->busy_ticks / avail : NAN;
}

void eng_graph_memory(const eng_config *c, double ticks, double *traces, double *records) {
  const eng_graph *gr = &c->graph;
  *traces = (double)gr->n_services * TR_COUNT * sizeof(int32_t) * ticks;
  /* attempts alive at once: every worker busy and every queue full, each
   * with its call and two events (its timeout, its work or a retry) */
  double live = 0;
  for (int k = 0; k < gr->n_services; k++) {
    const eng_service *s = &gr->svc[k];
    live += (double)s->shards * (s->workers + fmin(s->queue_capacity, 1e6));
  }
  *records = live * (sizeof(g_att) + sizeof(g_call) + 2 * sizeof(g_event)) + sizeof(eng_graph_run);
  /* each edge's limiters per caller process, and breakers per callee shard too */
  for (int e = 0; e < gr->n_edges; e++) {
    const eng_call_edge *ce = &gr->edge[e];
    double clients = ce->from == ENG_FRONT ? c->shards : gr->svc[ce->from - 1].shards;
    *records += clients * (sizeof(double) + (ce->retry_limiter ? sizeof(eng_limiter) : 0) +
                           (isinf(ce->max_requests_per_client) ? 0 : sizeof(int32_t)));
    if (ce->brk.breaker != ENG_BREAKER_OFF)
      *records += clients * gr->svc[ce->to - 1].shards * sizeof(eng_breaker);
  }
}

const int32_t *eng_graph_trace(const eng_graph_run *g, int k, int which, size_t *stride) {
  if (k < 1 || k >= g->n_svc || which < 0 || which >= TR_COUNT) return NULL;
  *stride = which < TR_RULE ? 1 : TR_COUNT - TR_RULE;
  if (which < TR_RULE) return g->svc[k].tr + (size_t)which * (size_t)g->ticks;
  return g->svc[k].tx + (which - TR_RULE);
}
