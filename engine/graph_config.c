/*
 * graph_config.c — the settings of call graphs (docs/call-graphs.md).
 *
 * A service's settings are addressed "NAME.key" and the calls from A to B
 * "A->B.key", in files, --set and grid axes alike. The first service a
 * configuration names is the front: the cluster the plain settings
 * describe, so "api.workers" is "workers" once api is the front. Any other
 * name is a downstream service, created with the defaults when first
 * named; "A.calls = B, C | D" lists A's calls (stages in order, '|' within
 * a stage in parallel) and creates the edges, whose client policy then
 * takes "A->B.key".
 *
 * The keys mirror the plain settings (same type, bounds and help: the one
 * settings table in config.c) and are stored in eng_service or
 * eng_call_edge; what only a graph has (calls, at, error_rate, fanout) has
 * its rows here.
 */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "breaker.h"
#include "config_err.h"
#include "graph_config.h"
#include "setting_store.h"

typedef struct mirror {
  const char *key;
  size_t offset;
} mirror;

#define SOFF(f) offsetof(eng_service, f)
#define EOFF(f) offsetof(eng_call_edge, f)

/* The plain settings a downstream service has, and where it keeps them. */
static const mirror service_keys[] = {
    {"shards", SOFF(shards)},
    {"workers", SOFF(workers)},
    {"service", SOFF(service_dist)},
    {"service_mean_ms", SOFF(service_mean_ms)},
    {"service_sigma", SOFF(service_sigma)},
    {"queue_capacity", SOFF(queue_capacity)},
    {"deadline_drop", SOFF(deadline_drop)},
    {"vnodes", SOFF(vnodes)},
    {"brownout", SOFF(brownout)},
    {"brownout_factor", SOFF(brownout_factor)},
    {"brownout_shard", SOFF(brownout_shard)},
    {"outage", SOFF(outage)},
    {"queue_discipline", SOFF(queue_discipline)},
    {"adaptive_lifo_threshold", SOFF(adaptive_lifo_threshold)},
    {"codel_target_ms", SOFF(codel_target_ms)},
    {"codel_interval_ms", SOFF(codel_interval_ms)},
    {"codel_variant", SOFF(codel_variant)},
    {"shed_reply", SOFF(shed_reply)},
    {"capacity_factor", SOFF(capacity_factor)},
};

/* The client policy an edge has. */
static const mirror edge_keys[] = {
    {"timeout_ms", EOFF(timeout_ms)},
    {"deadline_ms", EOFF(deadline_ms)},
    {"deadline_propagation", EOFF(deadline_propagation)},
    {"retry_on", EOFF(retry_on)},
    {"max_retries", EOFF(max_retries)},
    {"backoff", EOFF(backoff)},
    {"backoff_base_ms", EOFF(backoff_base_ms)},
    {"backoff_cap_ms", EOFF(backoff_cap_ms)},
    {"backoff_multiplier", EOFF(backoff_multiplier)},
    {"budget_ratio", EOFF(budget_ratio)},
    {"budget_max_tokens", EOFF(budget_max_tokens)},
    {"retry_limiter", EOFF(retry_limiter)},
    {"grpc_max_tokens", EOFF(lim.grpc_max_tokens)},
    {"grpc_token_ratio", EOFF(lim.grpc_token_ratio)},
    {"finagle_ttl_ms", EOFF(lim.finagle_ttl_ms)},
    {"finagle_min_retries_per_s", EOFF(lim.finagle_min_retries_per_s)},
    {"finagle_percent_can_retry", EOFF(lim.finagle_percent_can_retry)},
    {"envoy_budget_percent", EOFF(lim.envoy_budget_percent)},
    {"envoy_min_retry_concurrency", EOFF(lim.envoy_min_retry_concurrency)},
    {"sre_k", EOFF(lim.sre_k)},
    {"sre_window_ms", EOFF(lim.sre_window_ms)},
    {"aws_quota_tokens", EOFF(lim.aws_quota_tokens)},
    {"aws_retry_cost", EOFF(lim.aws_retry_cost)},
    {"aws_timeout_cost", EOFF(lim.aws_timeout_cost)},
    {"aws_success_refund", EOFF(lim.aws_success_refund)},
    {"breaker", EOFF(brk.breaker)},
    {"breaker_window", EOFF(brk.breaker_window)},
    {"breaker_min_calls", EOFF(brk.breaker_min_calls)},
    {"breaker_threshold", EOFF(brk.breaker_threshold)},
    {"breaker_cooldown_ms", EOFF(brk.breaker_cooldown_ms)},
    {"breaker_probes", EOFF(brk.breaker_probes)},
    {"breaker_reject", EOFF(brk.breaker_reject)},
    {"breaker_halfopen", EOFF(brk.breaker_halfopen)},
    {"max_requests_per_client", EOFF(max_requests_per_client)},
    {"hedge_attempts", EOFF(hedge_attempts)},
    {"hedge_delay_ms", EOFF(hedge_delay_ms)},
    {"hedge_cancel", EOFF(hedge_cancel)},
};

/* What only services of a graph have; offsets into eng_service (the front
 * keeps at and error_rate in eng_graph). calls has no storage: edges. */
static const eng_setting service_own[] = {
    {"calls", ENG_SET_TEXT, 0, 0, 0, NULL, "cluster",
     "the services this one calls, in order: 'b, c' calls b then c, 'b | c' both at once; "
     "none = a leaf"},
    {"at", ENG_SET_DOUBLE, SOFF(at), 0, 1, NULL, "cluster",
     "share of the service's own work done before its calls (0: calls first, 1: after)"},
    {"error_rate", ENG_SET_DOUBLE, SOFF(error_rate), 0, 1, NULL, "faults",
     "share of attempts that end in an error after their work (an error reply)"},
    /* (downstream: -1 slows every shard, a brownout of the whole service) */
    {"brownout_shard", ENG_SET_INT, SOFF(brownout_shard), -1, ENG_MAX_SHARDS - 1, NULL,
     "faults", "the shard a brownout hits; -1: all of the service's shards"},
};

static const eng_setting edge_own[] = {
    {"fanout", ENG_SET_DOUBLE, EOFF(fanout), 0, 16, NULL, "cluster",
     "calls per caller attempt: 2 = two calls at once, 0.3 = one call in 30% of attempts"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A parsed graph key: the service (or the edge's two services) and the setting. */
typedef struct gkey {
  char a[ENG_NAME_MAX], b[ENG_NAME_MAX]; /* b[0] == 0: a service key */
  const char *rest;
} gkey;

static int name_char(int ch) { return isalnum(ch) || ch == '_'; }

static int name_copy(const char *p, size_t n, char *out) {
  if (!n || n >= ENG_NAME_MAX || isdigit((unsigned char)p[0])) return -1;
  for (size_t i = 0; i < n; i++)
    if (!name_char((unsigned char)p[i])) return -1;
  memcpy(out, p, n);
  out[n] = 0;
  return 0;
}

static int key_split(const char *key, gkey *k) {
  const char *dot = strchr(key, '.');
  if (!dot || !dot[1]) return -1;
  const char *arrow = strstr(key, "->");
  k->b[0] = 0;
  k->rest = dot + 1;
  if (arrow && arrow < dot) {
    if (name_copy(key, (size_t)(arrow - key), k->a) ||
        name_copy(arrow + 2, (size_t)(dot - arrow - 2), k->b))
      return -1;
    return 0;
  }
  return name_copy(key, (size_t)(dot - key), k->a);
}

static const mirror *mirror_find(const mirror *m, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(m[i].key, key)) return &m[i];
  return NULL;
}

static const eng_setting *own_find(const eng_setting *t, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(t[i].key, key)) return &t[i];
  return NULL;
}

static const eng_setting *plain_find(const char *key) { return eng__settings_find_plain(key); }

/* The front takes every server setting (cluster, router) of the plain table. */
static const eng_setting *front_plain(const char *rest) {
  const eng_setting *s = plain_find(rest);
  if (!s || s->type == ENG_SET_PRESET) return NULL;
  if (!strcmp(s->group, "cluster") || !strcmp(s->group, "router") ||
      mirror_find(service_keys, COUNT(service_keys), rest))
    return s;
  return NULL;
}

const eng_setting *eng__graph_setting(const char *key) {
  gkey k;
  if (key_split(key, &k)) return NULL;
  if (k.b[0]) {
    if (mirror_find(edge_keys, COUNT(edge_keys), k.rest)) return plain_find(k.rest);
    return own_find(edge_own, COUNT(edge_own), k.rest);
  }
  const eng_setting *own = own_find(service_own, COUNT(service_own), k.rest);
  if (own) return own;
  return front_plain(k.rest); /* a downstream service takes a subset: eng__graph_set says */
}

/* Service index of name in g: ENG_FRONT, k + 1, or -1. */
static int service_index(const eng_graph *g, const char *name) {
  if (g->front[0] && !strcmp(g->front, name)) return ENG_FRONT;
  for (int k = 0; k < g->n_services; k++)
    if (!strcmp(g->svc[k].name, name)) return k + 1;
  return -1;
}

static int edge_index(const eng_graph *g, int from, int to) {
  for (int e = 0; e < g->n_edges; e++)
    if (g->edge[e].from == from && g->edge[e].to == to) return e;
  return -1;
}

static void service_defaults(eng_service *s, const char *name) {
  eng_config d;
  eng_config_defaults(&d);
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->shards = d.shards;
  s->workers = d.workers;
  s->service_dist = d.service_dist;
  s->service_mean_ms = d.service_mean_ms;
  s->service_sigma = d.service_sigma;
  s->queue_capacity = d.queue_capacity;
  s->deadline_drop = d.deadline_drop;
  s->vnodes = d.vnodes;
  s->brownout_factor = d.brownout_factor;
  s->brownout_shard = d.brownout_shard;
  s->outage = d.outage;
  s->queue_discipline = d.queue_discipline;
  s->adaptive_lifo_threshold = d.adaptive_lifo_threshold;
  s->codel_target_ms = d.codel_target_ms;
  s->codel_interval_ms = d.codel_interval_ms;
  s->codel_variant = d.codel_variant;
  s->shed_reply = d.shed_reply;
  s->capacity_factor = d.capacity_factor;
}

static void edge_defaults(eng_call_edge *e, int from, int to, int stage) {
  eng_config d;
  eng_config_defaults(&d);
  memset(e, 0, sizeof *e);
  e->from = from;
  e->to = to;
  e->stage = stage;
  e->timeout_ms = d.timeout_ms;
  e->deadline_ms = d.deadline_ms;
  e->deadline_propagation = d.deadline_propagation;
  e->retry_on = d.retry_on;
  e->max_retries = d.max_retries;
  e->backoff = d.backoff;
  e->backoff_base_ms = d.backoff_base_ms;
  e->backoff_cap_ms = d.backoff_cap_ms;
  e->backoff_multiplier = d.backoff_multiplier;
  e->budget_ratio = d.budget_ratio;
  e->budget_max_tokens = d.budget_max_tokens;
  e->retry_limiter = d.retry_limiter;
  e->lim = d.lim;
  e->brk = d.brk;
  e->max_requests_per_client = d.max_requests_per_client;
  e->hedge_attempts = d.hedge_attempts;
  e->hedge_delay_ms = d.hedge_delay_ms;
  e->hedge_cancel = d.hedge_cancel;
  e->fanout = 1;
}

/* The index of service name, naming the front or creating it first. */
static int service_get(eng_graph *g, const char *name, char *err, size_t errlen) {
  int i = service_index(g, name);
  if (i >= 0) return i;
  if (!g->front[0]) {
    snprintf(g->front, sizeof g->front, "%s", name);
    return ENG_FRONT;
  }
  if (g->n_services >= ENG_MAX_SERVICES) {
    seterr(err, errlen, "%s: at most %d services behind the front one", name, ENG_MAX_SERVICES);
    return -1;
  }
  service_defaults(&g->svc[g->n_services], name);
  return ++g->n_services;
}

/* "b, c | d": the callees of from, stage by stage. Edges that stay keep
 * their policy; the others go. */
static int set_calls(eng_graph *g, int from, const char *value, char *err, size_t errlen) {
  int to[ENG_MAX_EDGES], stage[ENG_MAX_EDGES], n = 0, st = 0, words = 0;
  const char *p = value;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    if (*p == ',' || *p == '|') {
      if (!words) {
        seterr(err, errlen, "calls: '%c' with no service before it in '%s'", *p, value);
        return -1;
      }
      if (*p == ',') st++;
      words = 0;
      p++;
      continue;
    }
    size_t len = 0;
    while (p[len] && !strchr(" \t,|", p[len])) len++;
    char name[ENG_NAME_MAX];
    if (len == 4 && !strncmp(p, "none", 4) && n == 0) {
      p += len;
      continue;
    }
    if (words) st++; /* blanks between names: in order, as ',' */
    if (name_copy(p, len, name)) {
      seterr(err, errlen,
             "calls: '%.*s' is no service name (letters, digits and '_', at most %d, not "
             "starting with a digit)",
             (int)(len < 64 ? len : 64), p, ENG_NAME_MAX - 1);
      return -1;
    }
    int k = service_get(g, name, err, errlen);
    if (k < 0) return -1;
    if (k == from) {
      seterr(err, errlen, "calls: a service cannot call itself ('%s')", name);
      return -1;
    }
    for (int j = 0; j < n; j++)
      if (to[j] == k) {
        seterr(err, errlen, "calls: '%s' is listed twice (use fanout for several calls)", name);
        return -1;
      }
    if (n >= ENG_MAX_EDGES) {
      seterr(err, errlen, "calls: at most %d calls", ENG_MAX_EDGES);
      return -1;
    }
    to[n] = k;
    stage[n++] = st;
    words = 1;
    p += len;
  }
  if (n && !words) {
    seterr(err, errlen, "calls: '%s' ends with a separator", value);
    return -1;
  }
  /* keep the edges of other callers and those that stay, then add the new */
  eng_call_edge keep[ENG_MAX_EDGES];
  int m = 0;
  for (int e = 0; e < g->n_edges; e++) {
    const eng_call_edge *x = &g->edge[e];
    int stays = -1;
    for (int j = 0; j < n && x->from == from; j++)
      if (to[j] == x->to) stays = j;
    if (x->from != from || stays >= 0) keep[m] = *x;
    if (stays >= 0) keep[m].stage = stage[stays];
    if (x->from != from || stays >= 0) m++;
  }
  for (int j = 0; j < n; j++) {
    if (edge_index(g, from, to[j]) >= 0) continue;
    if (m >= ENG_MAX_EDGES) {
      seterr(err, errlen, "calls: a graph has at most %d call edges", ENG_MAX_EDGES);
      return -1;
    }
    edge_defaults(&keep[m++], from, to[j], stage[j]);
  }
  memcpy(g->edge, keep, (size_t)m * sizeof keep[0]);
  g->n_edges = m;
  return 0;
}

static void format_calls(const eng_graph *g, int from, char *buf, size_t len) {
  size_t used = 0;
  int last = -1, any = 0;
  buf[0] = 0;
  for (int st = 0; st <= ENG_MAX_EDGES; st++)
    for (int e = 0; e < g->n_edges; e++) {
      const eng_call_edge *x = &g->edge[e];
      if (x->from != from || x->stage != st) continue;
      const char *name = x->to == ENG_FRONT ? g->front : g->svc[x->to - 1].name;
      const char *sep = !any ? "" : st == last ? " | " : ", ";
      used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", sep, name);
      last = st;
      any = 1;
    }
  if (!any) snprintf(buf, len, "none");
}

/* Where key's value lives in c (creating nothing), with its setting. */
static void *field_of(eng_config *c, const gkey *k, const eng_setting **s, char *err,
                      size_t errlen, int create) {
  eng_graph *g = &c->graph;
  int a = create ? service_get(g, k->a, err, errlen) : service_index(g, k->a);
  if (a < 0) {
    if (!create) seterr(err, errlen, "no service '%s'", k->a);
    return NULL;
  }
  if (k->b[0]) {
    int b = service_index(g, k->b);
    int e = b < 0 ? -1 : edge_index(g, a, b);
    if (e < 0) {
      seterr(err, errlen, "%s->%s.%s: %s does not call %s (list it in %s.calls first)", k->a,
             k->b, k->rest, k->a, k->b, k->a);
      return NULL;
    }
    const mirror *m = mirror_find(edge_keys, COUNT(edge_keys), k->rest);
    *s = m ? plain_find(k->rest) : own_find(edge_own, COUNT(edge_own), k->rest);
    if (!*s) {
      seterr(err, errlen,
             "%s->%s.%s: a call edge has timeout_ms, deadline_ms, deadline_propagation, "
             "retry_on, max_retries, backoff, backoff_base_ms, backoff_cap_ms, "
             "backoff_multiplier, budget_ratio, budget_max_tokens, retry_limiter and its "
             "grpc_*, finagle_*, envoy_*, sre_* and aws_* settings, breaker and its "
             "breaker_* settings, max_requests_per_client, hedge_attempts, hedge_delay_ms, "
             "hedge_cancel and fanout",
             k->a, k->b, k->rest);
      return NULL;
    }
    return (char *)&g->edge[e] + (m ? m->offset : (*s)->offset);
  }
  const eng_setting *own = own_find(service_own, COUNT(service_own), k->rest);
  if (a == ENG_FRONT) {
    if (own && !strcmp(own->key, "brownout_shard")) own = NULL; /* the front's is sim.c's */
    *s = own ? own : front_plain(k->rest);
    if (!*s) {
      seterr(err, errlen, "%s.%s: a service has the cluster and router settings, calls, at "
                          "and error_rate (see docs/call-graphs.md)",
             k->a, k->rest);
      return NULL;
    }
    if (!own) return (char *)c + (*s)->offset;
    if (!strcmp(own->key, "at")) return &g->front_at;
    if (!strcmp(own->key, "error_rate")) return &g->front_error_rate;
    return g; /* calls: no storage of its own */
  }
  eng_service *sv = &g->svc[a - 1];
  const mirror *m = mirror_find(service_keys, COUNT(service_keys), k->rest);
  *s = own ? own : m ? plain_find(k->rest) : NULL;
  if (!*s) {
    seterr(err, errlen,
           "%s.%s: a downstream service has shards, workers, service, service_mean_ms, "
           "service_sigma, queue_capacity, deadline_drop, vnodes, brownout, brownout_factor, "
           "brownout_shard, calls, at and error_rate",
           k->a, k->rest);
    return NULL;
  }
  return own ? (!strcmp(own->key, "calls") ? (void *)g : (char *)sv + own->offset)
             : (char *)sv + m->offset;
}

int eng__graph_set(eng_config *c, const char *key, const char *value, char *err,
                   size_t errlen) {
  gkey k;
  if (key_split(key, &k)) {
    seterr(err, errlen,
           "'%s': a service setting is NAME.key and a call's A->B.key (names of letters, "
           "digits and '_')",
           key);
    return -1;
  }
  eng_graph before = c->graph;
  const eng_setting *s = NULL;
  void *field = field_of(c, &k, &s, err, errlen, 1);
  int rc = -1;
  if (field && !strcmp(s->key, "calls") && !k.b[0])
    rc = set_calls(&c->graph, service_index(&c->graph, k.a), value, err, errlen);
  else if (field && s->type == ENG_SET_TEXT)
    rc = eng__config_set_plain(c, k.rest, value, err, errlen); /* the front's histogram */
  else if (field)
    rc = eng__setting_parse(s, key, field, value, err, errlen);
  if (rc) c->graph = before; /* a failed set names no service */
  return rc;
}

const void *eng__graph_field(const eng_config *c, const char *key, const eng_setting **s) {
  gkey k;
  if (key_split(key, &k)) return NULL;
  return field_of((eng_config *)c, &k, s, NULL, 0, 0);
}

int eng__graph_get(const eng_config *c, const char *key, char *buf, size_t len) {
  gkey k;
  const eng_setting *s = NULL;
  if (!len || key_split(key, &k)) return -1;
  const void *field = field_of((eng_config *)c, &k, &s, NULL, 0, 0);
  if (!field) return -1;
  if (!strcmp(s->key, "calls") && !k.b[0])
    format_calls(&c->graph, service_index(&c->graph, k.a), buf, len);
  else
    eng__setting_format(s, field, buf, len);
  return 0;
}

/* Depth-first: 1 when a path from service v reaches a service on the
 * current path (a cycle); seen marks what was reached from the front. */
static int has_cycle(const eng_graph *g, int v, uint8_t *on_path, uint8_t *seen) {
  if (on_path[v]) return 1;
  if (seen[v]) return 0;
  seen[v] = on_path[v] = 1;
  for (int e = 0; e < g->n_edges; e++)
    if (g->edge[e].from == v && has_cycle(g, g->edge[e].to, on_path, seen)) return 1;
  on_path[v] = 0;
  return 0;
}

int eng__graph_validate(const eng_config *c, char *err, size_t errlen) {
  const eng_graph *g = &c->graph;
  if (!g->n_services) return 0;
  uint8_t on_path[ENG_MAX_SERVICES + 1] = {0}, seen[ENG_MAX_SERVICES + 1] = {0};
  if (has_cycle(g, ENG_FRONT, on_path, seen)) {
    seterr(err, errlen, "calls: the services call each other in a cycle (a call graph has none)");
    return -1;
  }
  for (int k = 0; k < g->n_services; k++) {
    const eng_service *s = &g->svc[k];
    if (!seen[k + 1]) {
      seterr(err, errlen, "service '%s' is never called: list it in a calls setting", s->name);
      return -1;
    }
    const eng_windows *fw[2] = {&s->brownout, &s->outage};
    for (int f = 0; f < 2; f++)
      for (int i = 0; i < fw[f]->count; i++)
        if (fw[f]->w[i].start_ms + fw[f]->w[i].duration_ms > c->horizon_ms) {
          seterr(err, errlen, "%s.%s: window %g+%g ends after the horizon (horizon_ms = %g)",
                 s->name, f ? "outage" : "brownout", fw[f]->w[i].start_ms,
                 fw[f]->w[i].duration_ms, c->horizon_ms);
          return -1;
        }
    if (s->brownout.count && s->brownout_shard >= s->shards) {
      seterr(err, errlen, "%s.brownout_shard: %d is not a shard (%s.shards = %d)", s->name,
             s->brownout_shard, s->name, s->shards);
      return -1;
    }
    if (s->service_dist == ENG_SERVICE_EMPIRICAL) {
      seterr(err, errlen,
             "%s.service = empirical: a service behind the front takes exponential, "
             "deterministic or lognormal work (a histogram is the front's, service_histogram)",
             s->name);
      return -1;
    }
  }
  for (int e = 0; e < g->n_edges; e++) {
    const eng_call_edge *x = &g->edge[e];
    const char *a = x->from == ENG_FRONT ? g->front : g->svc[x->from - 1].name;
    const char *b = g->svc[x->to - 1].name;
    if (x->timeout_ms < c->tick_ms || x->deadline_ms < c->tick_ms) {
      seterr(err, errlen, "%s->%s: timeout_ms and deadline_ms must be at least one tick (%g ms)",
             a, b, c->tick_ms);
      return -1;
    }
    if (x->brk.breaker == ENG_BREAKER_NEXT_SHARD) {
      seterr(err, errlen,
             "%s->%s.breaker: a call edge's breakers fail fast (fail_fast); next_shard, which "
             "routes around open breakers, is the front's clients' (docs/call-graphs.md)",
             a, b);
      return -1;
    }
    char what[2 * ENG_NAME_MAX + 8];
    snprintf(what, sizeof what, "%s->%s.", a, b);
    if (eng_breaker_settings_check(&x->brk, what, err, errlen)) return -1;
  }
  return 0;
}

/* Keys of service k (ENG_FRONT: the graph's own three) and of edge e. */
static size_t service_key_count(int k) {
  return k == ENG_FRONT ? COUNT(service_own) - 1 : COUNT(service_keys) + COUNT(service_own) - 1;
}

static const char *service_key_at(int k, size_t j) {
  if (j < COUNT(service_own) - 1) return service_own[j].key; /* calls, at, error_rate */
  j -= COUNT(service_own) - 1;
  (void)k;
  return service_keys[j].key; /* brownout_shard is among these */
}

int eng_graph_key(const eng_config *c, size_t i, char *key, size_t len) {
  const eng_graph *g = &c->graph;
  if (!g->n_services) return -1;
  for (int k = 0; k <= g->n_services; k++) {
    size_t n = service_key_count(k);
    if (i < n) {
      snprintf(key, len, "%s.%s", k == ENG_FRONT ? g->front : g->svc[k - 1].name,
               service_key_at(k, i));
      return 0;
    }
    i -= n;
  }
  size_t per = COUNT(edge_keys) + COUNT(edge_own);
  if (i >= per * (size_t)g->n_edges) return -1;
  const eng_call_edge *e = &g->edge[i / per];
  size_t j = i % per;
  snprintf(key, len, "%s->%s.%s", e->from == ENG_FRONT ? g->front : g->svc[e->from - 1].name,
           g->svc[e->to - 1].name, j < COUNT(edge_keys) ? edge_keys[j].key : edge_own[0].key);
  return 0;
}
