/*
 * eng_config.h — the scenario of one run as plain data, and the table of
 * named settings through which files and command lines change it.
 *
 * Every field a user can change has exactly one entry in the settings table
 * (config.c): its key, type, bounds, default and help. Sweep files, --set and
 * grid axes all go through eng_config_set, so "any setting can be an axis"
 * holds by construction. Defaults are the built-in seed study.
 */
#ifndef STORMSWEEP_ENG_CONFIG_H
#define STORMSWEEP_ENG_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define ENG_MAX_WINDOWS 8      /* fault windows per fault kind */
#define ENG_MAX_SHARDS 4096
#define ENG_MAX_VNODES 65536
#define ENG_MAX_HEDGE 8        /* hedge_attempts at most (gRPC caps maxAttempts at 5) */
#define ENG_TEXT_MAX 200       /* bytes of a text setting (a file name, a series) with its NUL */

typedef enum {
  ENG_SERVICE_EXP,
  ENG_SERVICE_DET,
  ENG_SERVICE_LOGNORMAL,
  ENG_SERVICE_EMPIRICAL /* from service_histogram (docs/telemetry.md) */
} eng_service_dist;

/* Tables read from telemetry files (engine/telemetry_tables.h): shared,
 * immutable, kept for the process's life. */
struct eng_empirical;
struct eng_rate_profile;
typedef enum { ENG_KEYS_UNIFORM, ENG_KEYS_ZIPF } eng_key_dist;
typedef enum { ENG_QUEUE_FIFO, ENG_QUEUE_LIFO, ENG_QUEUE_ADAPTIVE_LIFO } eng_queue_discipline;
/* New kinds go at the end: result files store an enum axis by its index. */
typedef enum {
  ENG_BACKOFF_NONE,
  ENG_BACKOFF_FULL,
  ENG_BACKOFF_EQUAL,
  ENG_BACKOFF_DECORRELATED,
  ENG_BACKOFF_GRPC, /* gRFC A6 (2024): min(cap, base m^n) x U(0.8, 1.2) */
  ENG_BACKOFF_ENVOY /* Envoy's JitteredExponentialBackOffStrategy, whole ms */
} eng_backoff;
typedef enum { ENG_BREAKER_OFF, ENG_BREAKER_FAIL_FAST, ENG_BREAKER_NEXT_SHARD } eng_breaker_mode;
/* Modelling choices where real systems differ; the first of each is the default. */
typedef enum { ENG_CODEL_FAIL_AT_SCALE, ENG_CODEL_RFC8289, ENG_CODEL_FOLLY } eng_codel_variant;
typedef enum { ENG_SHED_ERROR, ENG_SHED_SILENT } eng_shed_reply;
typedef enum { ENG_ROUTER_LOAD_SENT, ENG_ROUTER_LOAD_ADMITTED } eng_router_load;
typedef enum { ENG_BREAKER_REJECT_FAIL, ENG_BREAKER_REJECT_RETRY } eng_breaker_reject;
/* How a half-open breaker's probes decide (breaker.h). */
typedef enum { ENG_BREAKER_HALFOPEN_ANY_FAILURE, ENG_BREAKER_HALFOPEN_FAILURE_RATE } eng_breaker_halfopen;
/* How clients generate load, and which retry limiter they ship. */
typedef enum { ENG_CLIENT_OPEN, ENG_CLIENT_CLOSED } eng_client_model;
typedef enum {
  ENG_LIMITER_TOKEN_BUCKET, /* budget_ratio / budget_max_tokens */
  ENG_LIMITER_GRPC,         /* gRFC A6 retry throttling */
  ENG_LIMITER_FINAGLE,      /* Finagle / tower RetryBudget */
  ENG_LIMITER_ENVOY,        /* Envoy / Gateway API concurrent retry budget */
  ENG_LIMITER_SRE,          /* SRE book adaptive client throttling */
  ENG_LIMITER_AWS           /* AWS SDK standard-mode retry quota */
} eng_retry_limiter;

/* The failures an attempt can meet, by name (retry_on). Each
 * one's gRPC status and Envoy retry_on condition are in docs/clients.md. */
typedef enum {
  ENG_FAIL_TIMEOUT,  /* its timeout passed with no answer (also: shed silently) */
  ENG_FAIL_REJECTED, /* a full shard queue refused it */
  ENG_FAIL_SHED,     /* the shard shed it and said so (shed_reply = error) */
  ENG_FAIL_ROUTER,   /* the router refused it (cluster_capacity_exhausted) */
  ENG_FAIL_BREAKER,  /* an open circuit breaker refused it (breaker_reject = retry) */
  ENG_FAIL_LOST,     /* lost to a crashed shard or an outage; heard at its timeout */
  ENG_FAIL_OVERFLOW, /* the client's own concurrency limit refused it */
  ENG_FAIL_KINDS
} eng_failure;
#define ENG_RETRY_ON_ALL ((int32_t)((1u << ENG_FAIL_KINDS) - 1u))
/* Every failure the engine has always retried; not the new overflow. */
#define ENG_RETRY_ON_DEFAULT (ENG_RETRY_ON_ALL & ~(int32_t)(1u << ENG_FAIL_OVERFLOW))

/* A fault window in ms: [start_ms, start_ms + duration_ms). */
typedef struct eng_window {
  double start_ms, duration_ms;
} eng_window;

typedef struct eng_windows {
  int count;
  eng_window w[ENG_MAX_WINDOWS];
} eng_windows;

/* Service level terms on what users see (analysis/decision.c parses them
 * from text such as "p99<=200ms,errors<=0.1%"): a latency quantile at most
 * a limit in ms, or the error rate at most a fraction. With none, a run is
 * judged by the queue-recovery check alone. */
#define ENG_MAX_SLO_TERMS 8
typedef enum { ENG_SLO_LATENCY, ENG_SLO_ERRORS } eng_slo_kind;
typedef struct eng_slo_term {
  int32_t kind;    /* eng_slo_kind */
  double quantile; /* latency: 0 < q < 1 */
  double limit;    /* latency: ms; errors: failed / ended */
} eng_slo_term;
typedef struct eng_slo {
  int32_t n;
  eng_slo_term t[ENG_MAX_SLO_TERMS];
} eng_slo;
/* 0 when every term of slo is one the stored series can judge (latency
 * quantiles p50, p90, p99, p99.9; an error rate in [0, 1]); else -1 with
 * why (recovery.c). */
int eng_slo_check(const eng_slo *slo, char *err, size_t errlen);

/* Call graphs (docs/call-graphs.md): services behind the front one, and
 * the calls between them. The front service is the cluster the settings
 * above describe, and the external clients keep the client policy above;
 * a downstream service has its own server model, and each call edge its
 * own client policy, as the caller's processes keep it. With no service
 * declared (n_services = 0) a run is the single tier, unchanged. */
#define ENG_MAX_SERVICES 8      /* downstream services */
#define ENG_MAX_EDGES 16        /* call edges in a graph */
#define ENG_NAME_MAX 32         /* bytes of a service name with its NUL */
#define ENG_FRONT 0             /* the front service's index; downstream k is k + 1 */

/* A client's retry limiter (retry_limiter names which) and circuit
 * breakers, as the external clients and each call edge keep them. */
typedef struct eng_limiter_settings {
  double grpc_max_tokens, grpc_token_ratio;
  double finagle_ttl_ms, finagle_min_retries_per_s, finagle_percent_can_retry;
  double envoy_budget_percent;
  int32_t envoy_min_retry_concurrency;
  double sre_k, sre_window_ms;
  int32_t aws_quota_tokens, aws_retry_cost, aws_timeout_cost, aws_success_refund;
} eng_limiter_settings;

typedef struct eng_breaker_settings {
  int32_t breaker;          /* eng_breaker_mode */
  int32_t breaker_window, breaker_min_calls, breaker_probes;
  double breaker_threshold, breaker_cooldown_ms;
  int32_t breaker_reject;   /* eng_breaker_reject: is an open breaker's refusal retried */
  int32_t breaker_halfopen; /* eng_breaker_halfopen: how the half-open probes decide */
} eng_breaker_settings;

typedef struct eng_service {
  char name[ENG_NAME_MAX];
  int32_t shards, workers, service_dist, vnodes, deadline_drop, brownout_shard;
  double service_mean_ms, service_sigma, queue_capacity;
  double error_rate;       /* share of attempts that fail with an error after their work */
  double at;               /* share of its own work done before its calls (0: calls first) */
  eng_windows brownout;    /* slowed to brownout_factor (the shard brownout_shard, or all: -1) */
  double brownout_factor;
  eng_windows outage;      /* attempts sent to it are lost (their callers time out) */
  int32_t queue_discipline, codel_variant, shed_reply; /* the front's meanings */
  double adaptive_lifo_threshold, codel_target_ms, codel_interval_ms;
  double capacity_factor;  /* bounded-load routing over its shards; inf: plain hashing */
} eng_service;

typedef struct eng_call_edge {
  int32_t from, to;        /* service indexes (ENG_FRONT, or downstream k + 1) */
  int32_t stage;           /* the caller's calls go stage by stage; one stage's in parallel */
  double timeout_ms, deadline_ms;
  int32_t deadline_propagation; /* the callee gets the rest of the caller's deadline */
  int32_t retry_on, max_retries, backoff;
  double backoff_base_ms, backoff_cap_ms, backoff_multiplier;
  int32_t retry_limiter;   /* eng_retry_limiter, per client process of the caller (its shard) */
  double budget_ratio, budget_max_tokens; /* token_bucket's */
  eng_limiter_settings lim; /* the other limiters' */
  eng_breaker_settings brk; /* per client process of the caller and shard of the callee */
  double max_requests_per_client; /* attempts in flight per client process; inf: no limit */
  int32_t hedge_attempts;  /* copies of a call in flight at most; 1: no hedging */
  double hedge_delay_ms;   /* a further copy when none answered within this */
  int32_t hedge_cancel;    /* 1: copies in flight when the call ends are cancelled */
  double fanout;           /* calls per caller attempt: whole part, and the fraction's chance of one more */
} eng_call_edge;

typedef struct eng_graph {
  char front[ENG_NAME_MAX]; /* the front service's name ("" until a service is named) */
  double front_at;          /* the front's at */
  double front_error_rate;  /* the front's error_rate */
  int32_t n_services, n_edges;
  eng_service svc[ENG_MAX_SERVICES];
  eng_call_edge edge[ENG_MAX_EDGES];
} eng_graph;

typedef struct eng_config {
  /* time */
  double tick_ms, horizon_ms;
  /* cluster */
  int32_t shards, workers;
  int32_t service_dist; /* eng_service_dist */
  double service_mean_ms, service_sigma;
  char service_histogram[ENG_TEXT_MAX];        /* "" = none */
  char service_histogram_series[ENG_TEXT_MAX]; /* "" = the only one */
  const struct eng_empirical *svc_table;       /* loaded from service_histogram */
  double queue_capacity; /* inf = unbounded */
  int32_t queue_discipline; /* eng_queue_discipline */
  double adaptive_lifo_threshold; /* queue length at which adaptive LIFO flips */
  double codel_target_ms, codel_interval_ms; /* target inf = CoDel off */
  int32_t deadline_drop; /* 1: shards drop queued attempts the client abandoned */
  int32_t codel_variant; /* eng_codel_variant */
  int32_t shed_reply;    /* eng_shed_reply: what the client of a shed attempt hears */
  /* router */
  int32_t vnodes;
  double capacity_factor; /* inf = plain consistent hashing */
  int32_t router_load;    /* eng_router_load: what counts as a shard's load */
  /* traffic */
  double load;     /* fraction of capacity; used when rate_rps is 0 */
  double rate_rps; /* absolute arrival rate, overrides load when > 0 */
  char rate_profile[ENG_TEXT_MAX];        /* "" = none: a constant rate */
  char rate_profile_series[ENG_TEXT_MAX]; /* "" = the only one */
  double rate_scale;                      /* multiplies the profile's rates */
  const struct eng_rate_profile *rate_table; /* loaded from rate_profile */
  int64_t keys;
  int32_t key_dist; /* eng_key_dist */
  double zipf_s;
  int32_t clients;
  int32_t client_model; /* eng_client_model */
  int32_t concurrency;  /* closed: users per client process; 0 = from load */
  double think_ms;      /* closed: mean think time between a user's requests */
  /* client policy */
  double timeout_ms;        /* per attempt; inf = none (the remaining deadline) */
  double deadline_ms;       /* per request, over every attempt and backoff; inf = none */
  int32_t deadline_propagation; /* 1: the server knows the request's deadline */
  int32_t retry_on;         /* bit set of eng_failure: the failures that are retried */
  int32_t hedge_attempts;   /* copies of a request in flight at most; 1 = no hedging */
  double hedge_delay_ms;    /* a further copy when none answered within this */
  int32_t hedge_cancel;     /* 1: copies still in flight when a request ends are cancelled */
  double max_requests_per_client; /* attempts in flight per client process; inf = no limit */
  int32_t max_retries;
  int32_t backoff; /* eng_backoff */
  double backoff_base_ms, backoff_cap_ms;
  double backoff_multiplier; /* full/equal jitter: base * multiplier^n */
  double budget_ratio;      /* inf = no retry budget */
  double budget_max_tokens; /* bucket capacity per client */
  int32_t retry_limiter;    /* eng_retry_limiter */
  eng_limiter_settings lim;
  eng_breaker_settings brk;
  /* faults */
  eng_windows surge;   double surge_factor;
  eng_windows brownout; double brownout_factor; int32_t brownout_shard;
  eng_windows crash;   int32_t crash_shard; double crash_detect_ms;
  eng_windows outage;
  eng_windows hot_key; double hot_key_share;
  /* measurement */
  double warmup_ms, baseline_ms;
  double recovery_tolerance, recovery_hold_ms;
  double slo_ms;
  double latency_window_ms;                  /* window of the latency / error series */
  eng_slo user_slo; /* not a setting: commands take it as --slo (none: the queue check) */
  double trend_ms, metastable_goodput;
  double recovery_goodput;                   /* hold-window goodput share of baseline */
  double health_goodput, health_amplification; /* what a healthy baseline shows */
  double wasted_share;                       /* wasted share of completions that sustains */
  double drain_bound_ms;                     /* longer projected drain: not draining */
  double collapse_requests;                  /* expected new requests per collapse window */
  int32_t record_shard_queues;
  double memory_limit_mb;                    /* a run needing more fails alone (inf: none) */
  eng_graph graph;  /* set through "NAME.key" and "A->B.key" (graph_config.c) */
} eng_config;

typedef enum {
  ENG_SET_INT,     /* int32 */
  ENG_SET_INT64,   /* int64 */
  ENG_SET_DOUBLE,  /* finite double */
  ENG_SET_DOUBLE_INF, /* double, "inf" (or "none") allowed */
  ENG_SET_ENUM,    /* int32 index into a NULL-terminated name list */
  ENG_SET_WINDOWS, /* "START+DURATION ..." in ms, or "none" */
  ENG_SET_PRESET,  /* a name that sets several other settings (policy) */
  ENG_SET_FLAGS,   /* int32 bit set over a name list: "NAME+NAME...", "all" or "none"
                      (',' and '|' also separate names; '+' is how it prints, so a
                      value fits in a comma-separated grid axis) */
  ENG_SET_TEXT     /* char[ENG_TEXT_MAX]: a file name or a series selector; "none" or ""
                      = unset. The telemetry files are read when set. */
} eng_setting_type;

typedef struct eng_setting {
  const char *key;
  eng_setting_type type;
  size_t offset;            /* into eng_config (unused for presets) */
  double min, max;          /* inclusive bounds for numbers */
  const char *const *names; /* enum / preset names */
  const char *group;        /* "time", "cluster", ... for help and README */
  const char *help;
} eng_setting;

void eng_config_defaults(eng_config *cfg);

/* The role of a setting as a sweep axis (docs/decisions.md): a tunable is
 * something the operator chooses (client policy, router, cluster), a
 * scenario setting is something the world chooses (traffic, faults) or the
 * measurement itself (time, measurement). recommend, refine and verify ask
 * for a choice of tunables that holds at every scenario value. The rule is
 * by group, so a new row of the table gets its role from its group; a
 * sweep's [sweep] scenario_axes / tunable_axes override it per file. */
typedef enum { ENG_ROLE_TUNABLE = 0, ENG_ROLE_SCENARIO = 1 } eng_setting_role;
eng_setting_role eng_setting_role_of(const eng_setting *s);
/* The default role of key; unknown keys are tunable. */
eng_setting_role eng_setting_role_find(const char *key);

size_t eng_settings_count(void);
const eng_setting *eng_settings_at(size_t i);
const eng_setting *eng_settings_find(const char *key);
/* 1 when key's value names a file the run reads (service_histogram,
 * rate_profile): its content is part of the configuration. */
int eng_setting_names_file(const char *key);
/* Closest known key by edit distance, for "did you mean" messages; NULL if none is close. */
const char *eng_settings_suggest(const char *key);
/* The one "did you mean" rule of stormsweep: the candidate among the first n
 * of cands (or up to a NULL) nearest to word by edit distance, ignoring case
 * — one edit for words of up to 4 characters, two up to 8, three beyond, or a
 * candidate containing the word (or the reverse) — else NULL. */
const char *eng_suggest(const char *word, const char *const *cands, size_t n);

/* Whether setting key can change a run of cfg, given cfg's other settings:
 * the one rule of which settings are live (next to the settings table in
 * config.c). Returns 1 when it can (unknown keys too); 0 when no value of
 * key changes what the clients and servers do, with the reason in why:
 * "retry_limiter = envoy, and budget_ratio is read by the token_bucket
 * limiter only". A sweep refuses an axis that is dead at every grid point. */
int eng_setting_live(const eng_config *cfg, const char *key, char *why, size_t len);

/* Call graphs: the i-th key ("store.workers", "api->store.max_retries")
 * of cfg's services and edges, for listing them all; -1 past the last (and
 * for a single tier). */
int eng_graph_key(const eng_config *cfg, size_t i, char *key, size_t len);

/* Parses value for key into cfg. Returns 0, or -1 with a message such as
 * "capacity_factor: must be >= 1 or inf, got 0.5". */
int eng_config_set(eng_config *cfg, const char *key, const char *value, char *err, size_t errlen);
/* Formats the current value of key (as eng_config_set would accept it, but
 * for policy's "custom": settings changed one by one, which set refuses). */
int eng_config_get(const eng_config *cfg, const char *key, char *buf, size_t len);
/* Numeric value of a setting for tables: enums give their index, windows the
 * first start (NaN when none), presets NaN. */
double eng_config_get_number(const eng_config *cfg, const char *key);

/* The settings a preset value sets ("budget_ratio=0.1", ... up to NULL),
 * for help texts; NULL when key is no preset or name none of its values. */
const char *const *eng_preset_settings(const char *key, const char *name);

/* Cross-field checks (fault windows inside the horizon, shard indexes, ...). */
int eng_config_validate(const eng_config *cfg, char *err, size_t errlen);

/* Derived quantities. */
int32_t eng_config_ticks(const eng_config *cfg);
double eng_config_capacity_rps(const eng_config *cfg); /* shards*workers/service mean */
/* rate_rps, or load*capacity (a rate_profile: its peak x rate_scale); closed model with explicit concurrency: the
 * request rate its users offer when nothing queues, users / (service + think) */
double eng_config_arrival_rps(const eng_config *cfg);
/* Closed model: users over all client processes (concurrency x clients, or
 * the number whose zero-queueing request rate is load x capacity). */
int64_t eng_config_users(const eng_config *cfg);
/* End of the last fault window in ms (0 when there is no fault). */
double eng_config_fault_clear_ms(const eng_config *cfg);
double eng_config_fault_start_ms(const eng_config *cfg); /* horizon when none */

#endif
