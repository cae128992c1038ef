/*
 * cmd_sim.c — `stormsweep sim`: one run, its summary in words or JSON, and
 * optionally its per-tick metrics as CSV. With no scenario file it runs the
 * seed study's scenario, which is also the engine's defaults.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_import.h"
#include "cli.h"
#include "decision.h"
#include "fmt_outfile.h"
#include "eng.h"
#include "scenario_file.h"
#include "textsafe.h"

static void sim_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep sim [SCENARIO.ini] [--policy NAME] [--client FILE]\n"
          "                      [--client-lenient]\n"
          "                      [--set KEY=VALUE]... [--seed N] [--ticks-csv FILE] [--json]\n"
          "                      [--show-settings]\n"
          "                      [--list-settings]\n\n"
          "Simulates one run and prints its summary: outcome (recovered / slow / metastable /\n"
          "collapsed / undetermined; docs/model.md \"The outcome rule\") and why, recovery\n"
          "time after the last fault clears or time to collapse, retry amplification,\n"
          "goodput, router balance and the Little's Law check. Without SCENARIO.ini it runs\n"
          "the built-in seed study's scenario (16 shards x 8 workers, 0.7 load, 5x surge and\n"
          "one shard stalled for 500 ms from 2 s).\n\n"
          "  SCENARIO.ini        settings in a [scenario] section (key = value); a sweep file's\n"
          "                      [grid] and [sweep] are ignored, with a warning\n"
          "  --policy NAME       a preset of several settings (default naive):\n");
  cli_help_presets(out, 22);
  fprintf(out,
          "  --client FILE       the retry policy you ship: a gRPC service config (JSON) or an\n"
          "                      Envoy retry_policy + circuit_breakers (YAML or JSON), mapped\n"
          "                      onto settings after --policy (the mapping goes to stderr;\n"
          "                      docs/client-import.md); A->B=FILE: the policy of the\n"
          "                      call edge A->B of a call graph (docs/call-graphs.md)\n"
          "  --client-lenient    an unknown field in the --client file is a note, not an error\n"
          "  --set KEY=VALUE     change one setting (repeatable; applied after the file)\n"
          "  --seed N            run seed (default 1)\n"
          "  --ticks-csv FILE    write every per-tick metric as CSV (one row per tick; \"-\":\n"
          "                      standard output); an existing FILE only with --force\n"
          "  -f, --force         replace an existing --ticks-csv FILE\n"
          "  --json              print the summary as one JSON object (with the effective\n"
          "                      settings and where each came from, and \"latency\": request\n"
          "                      latency quantiles and error rates per phase)\n"
          "  --slo TERMS         judge the run by what users see, e.g.\n"
          "                      \"p99<=200ms,errors<=0.1%%\": passed_slo is then the user\n"
          "                      recovery time (every term holds again for recovery_hold_ms)\n"
          "                      <= slo_ms\n"
          "  --show-settings     print the effective settings, each with where it came from\n"
          "                      (default, FILE:LINE, --policy, --client FILE, --set), and\n"
          "                      do not simulate\n"
          "  --list-settings     list every setting with its default and meaning\n"
          "Options take --opt VALUE or --opt=VALUE.\n");
}

static void list_settings(void) {
  eng_config d;
  eng_config_defaults(&d);
  printf("# defaults (a scenario file and --set change them; 'sim --show-settings' shows the\n"
         "# effective values)\n");
  const char *group = "";
  for (size_t i = 0; i < eng_settings_count(); i++) {
    const eng_setting *s = eng_settings_at(i);
    if (strcmp(group, s->group)) {
      group = s->group;
      printf("\n[%s]\n", group);
    }
    char val[256];
    eng_config_get(&d, s->key, val, sizeof val);
    printf("  %-24s = %-12s %s\n", s->key, val, s->help);
    if (s->type == ENG_SET_PRESET) cli_help_presets(stdout, 42);
  }
  printf("\n# call graphs: a service's settings are NAME.key ([service NAME]), its calls'\n"
         "# A->B.key ([call A->B]); the keys each has are in docs/call-graphs.md\n");
}

/* ---- where each effective setting came from ---------------------------- */

/* One entry per setting: its printed value when last marked and the origin
 * of that value. A stage (the file's line, --policy, one --set) claims the
 * key it names and every setting whose value it changed (a preset such as
 * policy sets several). */
typedef struct origins {
  size_t n;
  char (*val)[256];
  char (*from)[320];
} origins;

static int origins_init(origins *o, const eng_config *cfg) {
  o->n = eng_settings_count();
  o->val = calloc(o->n, sizeof *o->val);
  o->from = calloc(o->n, sizeof *o->from);
  if (!o->val || !o->from) return -1;
  for (size_t i = 0; i < o->n; i++) {
    eng_config_get(cfg, eng_settings_at(i)->key, o->val[i], sizeof o->val[i]);
    snprintf(o->from[i], sizeof o->from[i], "default");
  }
  return 0;
}

static void origins_free(origins *o) {
  free(o->val);
  free(o->from);
}

static void origins_mark(origins *o, const eng_config *cfg, const char *key, const char *from) {
  /* (a service's or a call's key names no plain setting, though its row
   * in the table is the plain one's) */
  const eng_setting *named = key && !strchr(key, '.') ? eng_settings_find(key) : NULL;
  for (size_t i = 0; i < o->n; i++) {
    const eng_setting *s = eng_settings_at(i);
    char v[256];
    eng_config_get(cfg, s->key, v, sizeof v);
    /* A preset is claimed only by the stage that names it: its reported
     * value ("custom") changes with the settings it covers, but it was set
     * where it was named. */
    if (s->type == ENG_SET_PRESET && s != named) continue;
    if (s == named || strcmp(v, o->val[i])) {
      snprintf(o->from[i], sizeof o->from[i], "%s", from);
      memcpy(o->val[i], v, sizeof v);
    }
  }
}

typedef struct file_trace {
  origins *o;
  const eng_config *cfg;
  const char *path;
} file_trace;

static void on_file_key(void *user, const char *key, int line) {
  file_trace *t = user;
  char from[320];
  snprintf(from, sizeof from, "%s:%d", t->path, line);
  origins_mark(t->o, t->cfg, key, from);
}

static void show_settings(const origins *o, const eng_config *cfg) {
  printf("# effective settings: value, then where it came from (default, FILE:LINE, --policy,\n"
         "# --client FILE FIELD, --set)\n");
  const char *group = "";
  for (size_t i = 0; i < o->n; i++) {
    const eng_setting *s = eng_settings_at(i);
    if (strcmp(group, s->group)) {
      group = s->group;
      printf("\n[%s]\n", group);
    }
    char now[256];
    eng_config_get(cfg, s->key, now, sizeof now);
    if (s->type == ENG_SET_PRESET && strcmp(now, o->val[i]))
      /* the preset named there, then some of its settings changed */
      printf("  %-24s = %-12s %s (%s, then edited: see the settings it covers)\n", s->key, now,
             o->from[i], o->val[i]);
    else
      printf("  %-24s = %-12s %s\n", s->key, o->val[i], o->from[i]);
  }
  char key[128], v[256];
  for (size_t i = 0; !eng_graph_key(cfg, i, key, sizeof key); i++) {
    if (!i) printf("\n[call graph] (docs/call-graphs.md)\n");
    eng_config_get(cfg, key, v, sizeof v);
    printf("  %-32s = %s\n", key, v);
  }
}

static void write_ticks_csv(const eng_run *run, const eng_config *cfg, FILE *f) {
  /* The user-view metrics come as the windows' series in ms below, not as
   * the file's us and ppm. */
  fprintf(f, "tick,time_ms");
  for (int m = 0; m < ENG_M_USER_FIRST; m++) fprintf(f, ",%s", eng_metric_get_info(m)->name);
  /* record_shard_queues = on: one more column per shard, its queue depth. */
  const int32_t *shardq = eng_run_shard_queues(run);
  int32_t S = shardq ? cfg->shards : 0;
  for (int32_t k = 0; k < S; k++) fprintf(f, ",shard_queue_%d", k);
  /* A call graph: each service's traces behind the front, NAME.metric. */
  int32_t NS = eng_run_services(run);
  for (int32_t k = 1; k < NS; k++)
    for (int q = 0; q < ENG_SV_COUNT; q++) fprintf(f, ",%s.%s", cfg->graph.svc[k - 1].name,
              eng_metric_get_info(eng_service_trace_metric((eng_service_trace)q))->name);
  /* Then the latency windows' series: each tick's row has its window's. */
  for (int l = 0; l < ENG_L_COUNT; l++) fprintf(f, ",%s", eng_lat_series_info(l)->name);
  fputc('\n', f);
  const double *lat[ENG_L_COUNT];
  for (int l = 0; l < ENG_L_COUNT; l++) lat[l] = eng_run_latency(run, l);
  int32_t wticks = (int32_t)floor(eng_run_latency_window_ms(run) / cfg->tick_ms + 0.5);
  if (wticks < 1) wticks = 1;
  int32_t T = eng_run_ticks(run);
  const int32_t *cols[ENG_M_USER_FIRST];
  for (int m = 0; m < ENG_M_USER_FIRST; m++) cols[m] = eng_run_metric(run, m);
  size_t st = 1;
  for (int32_t t = 0; t < T; t++) {
    fprintf(f, "%d,%g", t, t * cfg->tick_ms);
    for (int m = 0; m < ENG_M_USER_FIRST; m++) fprintf(f, ",%d", cols[m][t]);
    for (int32_t k = 0; k < S; k++) fprintf(f, ",%d", shardq[(size_t)t * (size_t)S + (size_t)k]);
    for (int32_t k = 1; k < NS; k++)
      for (int q = 0; q < ENG_SV_COUNT; q++)
        fprintf(f, ",%d", eng_run_service_trace(run, k, (eng_service_trace)q, &st)[(size_t)t * st]);
    for (int l = 0; l < ENG_L_COUNT; l++) {
      double v = lat[l][t / wticks];
      if (isnan(v)) fputc(',', f); /* no request ended in the window */
      else fprintf(f, ",%.10g", v);
    }
    fputc('\n', f);
  }
}

static void json_num(json_t *o, const char *key, double v) {
  json_object_set_new(o, key, ana_json_number(v));
}

/* What users saw in each phase of the run (eng_latency_phase). */
static json_t *latency_json(const eng_run *run) {
  json_t *l = json_object();
  json_num(l, "window_ms", eng_run_latency_window_ms(run));
  const eng_slo *slo = &eng_run_config(run)->user_slo;
  if (slo->n) {
    char text[256];
    ana_slo_format(slo, text, sizeof text);
    json_object_set_new(l, "slo", ana_json_text(text));
  }
  /* null without --slo, or when the terms never held again */
  json_num(l, "user_recovery_ms", eng_run_user_recovery_ms(run));
  for (int k = 0; k < ENG_PHASE_COUNT; k++) {
    const eng_latency_phase *p = eng_run_latency_phase(run, k);
    json_t *o = json_object();
    json_num(o, "begin_ms", p->begin_ms);
    json_num(o, "end_ms", p->end_ms);
    json_object_set_new(o, "requests", json_integer((json_int_t)p->finished));
    json_object_set_new(o, "failed", json_integer((json_int_t)p->failed));
    json_num(o, "error_rate", p->error_rate);
    json_num(o, "p50_ms", p->p50_ms);
    json_num(o, "p90_ms", p->p90_ms);
    json_num(o, "p99_ms", p->p99_ms);
    json_num(o, "p999_ms", p->p999_ms);
    json_num(o, "max_ms", p->max_ms);
    json_t *st = json_object();
    for (int q = 0; q < ENG_ST_COUNT; q++)
      json_object_set_new(st, eng_status_name(q), json_integer((json_int_t)p->status[q]));
    json_object_set_new(o, "status", st);
    json_object_set_new(l, eng_phase_name(k), o);
  }
  return l;
}

/* Call graphs: each service's run, the front first (null for a single tier). */
static json_t *services_json(const eng_run *run) {
  if (!eng_run_services(run)) return json_null();
  const eng_config *cfg = eng_run_config(run);
  json_t *a = json_array();
  for (int32_t k = 0; k < eng_run_services(run); k++) {
    eng_service_summary v;
    eng_run_service(run, k, &v);
    json_t *o = json_object();
    char key[ENG_NAME_MAX + 8], calls[256];
    snprintf(key, sizeof key, "%s.calls", v.name);
    if (eng_config_get(cfg, key, calls, sizeof calls)) snprintf(calls, sizeof calls, "none");
    json_object_set_new(o, "name", ana_json_text(v.name));
    json_object_set_new(o, "calls", ana_json_text(calls));
    json_object_set_new(o, "outcome", ana_json_text(eng_outcome_name(v.outcome)));
    json_num(o, "recovery_ms", v.recovery_ms);
    json_num(o, "amplification", v.amplification);
    const struct {
      const char *name;
      int64_t v;
    } counts[] = {{"calls_in", v.calls},       {"attempts", v.attempts},
                  {"retries", v.retries},      {"successes", v.successes},
                  {"errors", v.errors},        {"rejected", v.rejected},
                  {"dropped", v.dropped},      {"shed", v.shed},
                  {"lost", v.lost},            {"timeouts", v.timeouts},
                  {"wasted", v.wasted},        {"budget_refused", v.budget_refused},
                  {"breaker_refused", v.breaker_refused}, {"failed_calls", v.failed_calls}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
      json_object_set_new(o, counts[i].name, json_integer((json_int_t)counts[i].v));
    json_num(o, "work_ms_per_request", v.work_ms);
    json_num(o, "busy_share", v.busy_share);
    json_num(o, "peak_queue", v.peak_queue);
    json_array_append_new(a, o);
  }
  return a;
}

/* The amplification chain and each service's outcome, for the text summary. */
static void print_services(const eng_run *run) {
  int32_t n = eng_run_services(run);
  if (!n) return;
  printf("  services             attempts per user request, front first:");
  for (int32_t k = 0; k < n; k++) {
    eng_service_summary v;
    eng_run_service(run, k, &v);
    printf("%s %s %.3g", k ? " ->" : "", v.name, v.amplification);
  }
  printf("\n");
  for (int32_t k = 0; k < n; k++) {
    eng_service_summary v;
    eng_run_service(run, k, &v);
    printf("    %-18s %-12s %lld attempts (%lld retries), %lld answered, %lld errors, "
           "%lld timed out, %lld rejected, %lld dropped, %lld refused by budgets",
           v.name, eng_outcome_name(v.outcome), (long long)v.attempts, (long long)v.retries,
           (long long)v.successes, (long long)v.errors, (long long)v.timeouts,
           (long long)v.rejected, (long long)v.dropped, (long long)v.budget_refused);
    if (v.breaker_refused) printf(", %lld refused by breakers", (long long)v.breaker_refused);
    if (v.shed) printf(", %lld shed", (long long)v.shed);
    if (v.lost) printf(", %lld lost", (long long)v.lost);
    if (!isnan(v.work_ms))
      printf("; %.3g ms of work per user request, workers %.1f%% busy", v.work_ms,
             100 * v.busy_share);
    printf("\n");
  }
}

static void print_json(const eng_run *run, const eng_config *cfg, const eng_summary *s,
                       double wall_ms, const origins *o) {
  char pol[32];
  eng_config_get(cfg, "policy", pol, sizeof pol);
  json_t *j = json_object();
  json_object_set_new(j, "seed", json_integer((json_int_t)s->seed));
  json_object_set_new(j, "policy", ana_json_text(pol));
  json_object_set_new(j, "outcome", ana_json_text(eng_outcome_name(s->outcome)));
  json_object_set_new(j, "passed_slo", json_boolean(s->passed_slo));
  json_num(j, "slo_ms", cfg->slo_ms);
  json_num(j, "recovery_ms", s->recovery_ms);
  json_num(j, "baseline_queue", s->baseline_queue);
  json_num(j, "recovery_threshold", s->recovery_threshold);
  json_num(j, "peak_queue", s->peak_queue);
  json_num(j, "amplification", s->amplification);
  json_num(j, "amplification_after", s->amplification_after);
  json_num(j, "goodput_baseline", s->goodput_baseline);
  json_num(j, "goodput_baseline_per_s", s->goodput_baseline * 1000 / cfg->tick_ms);
  json_num(j, "goodput_during", s->goodput_during);
  json_num(j, "goodput_after", s->goodput_after);
  json_num(j, "late_queue_trend", s->late_queue_trend);
  json_num(j, "max_mean_shard_load", s->max_mean_shard_load);
  json_num(j, "mean_hops", s->mean_hops);
  json_num(j, "little_L", s->little_L);
  json_num(j, "little_lambda_w", s->little_lambda_w);
  json_num(j, "little_lambda", s->little_lambda);
  json_num(j, "little_w_ms", s->little_w_ms);
  json_num(j, "little_rel_error", s->little_rel_error);
  json_num(j, "keys_remapped", s->keys_remapped);
  json_num(j, "successor_peak_load", s->successor_peak_load);
  json_object_set_new(j, "new_requests", json_integer((json_int_t)s->new_requests));
  json_object_set_new(j, "attempts", json_integer((json_int_t)s->attempts));
  json_object_set_new(j, "successes", json_integer((json_int_t)s->successes));
  json_object_set_new(j, "failed_requests", json_integer((json_int_t)s->failed_requests));
  json_object_set_new(j, "events", json_integer((json_int_t)s->events));
  /* What the outcome rule decided on (docs/model.md "The outcome rule"); drain_ms
   * is null both when recovered and when the backlog is not shrinking. */
  json_num(j, "baseline_goodput_ratio", s->baseline_goodput_ratio);
  json_num(j, "baseline_amplification", s->baseline_amplification);
  json_num(j, "collapse_ms", s->collapse_ms);
  json_num(j, "collapse_watch_ms", s->collapse_watch_ms);
  json_num(j, "return_ms", s->return_ms);
  json_num(j, "late_goodput", s->late_goodput);
  json_num(j, "late_amplification", s->late_amplification);
  json_num(j, "late_wasted_share", s->late_wasted_share);
  json_num(j, "drain_ms", s->drain_ms);
  json_num(j, "late_load", s->late_load);
  json_object_set_new(j, "latency", latency_json(run));
  json_object_set_new(j, "services", services_json(run));
  /* the effective settings as printed by eng_config_get, and their origins
   * (an origin may quote a file name: made valid UTF-8 first) */
  json_t *settings = json_object(), *from = json_object();
  for (size_t i = 0; i < o->n; i++) {
    ana_json_set(settings, eng_settings_at(i)->key, ana_json_text(o->val[i]));
    ana_json_set(from, eng_settings_at(i)->key, ana_json_text(o->from[i]));
  }
  char key[128], v[256];
  for (size_t i = 0; !eng_graph_key(cfg, i, key, sizeof key); i++) {
    eng_config_get(cfg, key, v, sizeof v);
    ana_json_set(settings, key, ana_json_text(v));
  }
  json_object_set_new(j, "settings", settings);
  json_object_set_new(j, "settings_from", from);
  json_num(j, "wall_ms", wall_ms);
  ana_json_print(stdout, j, 2);
}

static void print_text(const eng_run *run, const eng_config *cfg, const eng_summary *s,
                       double wall_ms) {
  char pol[32];
  eng_config_get(cfg, "policy", pol, sizeof pol);
  printf("stormsweep sim: seed %llu, policy %s, %d shards x %d workers, %d ticks of %g ms\n\n",
         (unsigned long long)s->seed, pol, cfg->shards, cfg->workers, eng_config_ticks(cfg),
         cfg->tick_ms);
  printf("  outcome              %s\n", eng_outcome_name(s->outcome));
  printf("  baseline health      goodput %.3f of new requests, amplification %.2fx before the "
         "first fault\n",
         s->baseline_goodput_ratio, s->baseline_amplification);
  if (s->outcome == ENG_OUTCOME_COLLAPSED) {
    if (s->collapse_ms > 0)
      printf("  collapsed            at %.0f ms, without a fault", s->collapse_ms);
    else
      printf("  collapsed            never healthy before the first fault");
    if (isfinite(s->return_ms))
      printf("; back to healthy %.0f ms later\n", s->return_ms);
    else
      printf("; no return by the horizon\n");
  } else if (isfinite(s->recovery_ms)) {
    printf("  recovery time        %.0f ms after the last fault cleared (%s the %.0f ms SLO)\n",
           s->recovery_ms, s->passed_slo ? "within" : "over", cfg->slo_ms);
  } else {
    printf("  recovery time        not recovered by the horizon\n");
    printf("  last %5.0f ms        goodput %.0f%% of baseline, amplification %.2fx, wasted %.0f%% "
           "of completions\n",
           cfg->trend_ms, 100 * s->late_goodput, s->late_amplification,
           100 * s->late_wasted_share);
    if (isfinite(s->drain_ms) && !(s->late_load >= 1))
      printf("  backlog              draining: at the threshold ~%.0f ms after the horizon "
             "(attempts %.2f of capacity)\n",
             s->drain_ms, s->late_load);
    else if (s->late_load >= 1)
      printf("  backlog              not draining: attempts %.2f of capacity\n", s->late_load);
    else
      printf("  backlog              not shrinking (queue trend x%.2f)\n", s->late_queue_trend);
  }
  printf("  queue depth          baseline %.1f, recovered at <= %.0f, peak %.0f\n",
         s->baseline_queue, s->recovery_threshold, s->peak_queue);
  printf("  retry amplification  %.2fx over the run, %.2fx after the faults (attempts sent per "
         "request)\n",
         s->amplification, s->amplification_after);
  printf("  goodput              %.0f/s answered in time at baseline; %.0f%% of it during the "
         "faults, %.0f%% after\n",
         s->goodput_baseline * 1000 / cfg->tick_ms, 100 * s->goodput_during,
         100 * s->goodput_after);
  printf("  requests             %lld new, %lld attempts, %lld answered in time, %lld failed\n",
         (long long)s->new_requests, (long long)s->attempts, (long long)s->successes,
         (long long)s->failed_requests);
  printf("  router               max/mean shard load %.3f, %.3f hops per admission\n",
         s->max_mean_shard_load, s->mean_hops);
  if (cfg->crash.count)
    printf("  failover             %.1f%% of keys remapped, successor peak load %.2fx baseline\n",
           100 * s->keys_remapped, s->successor_peak_load);
  /* What users saw: one "p99 X ms, Y% errors" per phase with requests. */
  printf("  users saw            ");
  static const char *const where[3] = {"at baseline", "during the faults", "after"};
  for (int k = 0, first = 1; k < 3; k++) {
    const struct eng_user_phase *u = &s->user[k];
    if (isnan(u->p99_ms)) continue;
    printf("%sp99 %.0f ms, %.1f%% errors %s\n", first ? "" : "                       ",
           u->p99_ms, 100 * u->error_rate, where[k]);
    first = 0;
  }
  if (cfg->user_slo.n) {
    char terms[256];
    ana_slo_format(&cfg->user_slo, terms, sizeof terms);
    if (isnan(s->user_recovery_ms))
      printf("  user recovery        %s never held again for the hold window\n", terms);
    else
      printf("  user recovery        %s holds again %.0f ms after the last fault cleared "
             "(%s the %.0f ms SLO)\n",
             terms, s->user_recovery_ms, s->user_recovery_ms <= cfg->slo_ms ? "within" : "over",
             cfg->slo_ms);
  }
  printf("  Little's Law         over the baseline window (before the first fault): L = %.3f,\n"
         "                       lambda W = %.3f (%.3f/ms x %.3f ms), relative error %.2e\n",
         s->little_L, s->little_lambda_w, s->little_lambda, s->little_w_ms, s->little_rel_error);
  print_services(run);
  printf("  cost                 %.1f ms wall, %lld events\n", wall_ms, (long long)s->events);
}

/* Applies the file, then --policy, then --client, then each --set in
 * order, recording where each setting came from. Returns 0 or an exit
 * status (reported). */
static int sim_configure(eng_config *cfg, origins *o, const char *file, const char *policy,
                         const char *client, unsigned client_flags, char **sets, int n_sets) {
  char err[512];
  if (file) {
    file_trace t = {o, cfg, file};
    eng_scenario_skipped sk;
    if (eng_scenario_load_traced(cfg, file, on_file_key, &t, &sk, err, sizeof err)) {
      fprintf(stderr, "stormsweep sim: %s\n", err);
      return 2;
    }
    if (sk.grid_line || sk.sweep_line)
      fprintf(stderr,
              "stormsweep sim: warning: %s:%d: [%s] ignored: sim runs the [scenario] section "
              "once (sweep the file with 'stormsweep run %s')\n",
              file, sk.grid_line ? sk.grid_line : sk.sweep_line,
              sk.grid_line && sk.sweep_line ? "grid] and [sweep" : sk.grid_line ? "grid" : "sweep",
              file);
  }
  if (policy) {
    if (eng_config_set(cfg, "policy", policy, err, sizeof err)) {
      fprintf(stderr, "stormsweep sim: --policy: %s\n", err);
      return 2;
    }
    origins_mark(o, cfg, "policy", "--policy");
  }
  if (client) {
    swp_client_map map;
    if (swp_client_load_target(client, client_flags, &map, err, sizeof err)) {
      cli_error("sim", "--client %s", err);
      return 2;
    }
    swp_client_print(&map, client, stderr, ana_term_fputs);
    for (size_t i = 0; i < map.n; i++) {
      swp_client_map one = map;
      one.n = 1;
      one.e[0] = map.e[i];
      if (swp_client_apply(&one, client, cfg, err, sizeof err)) {
        cli_error("sim", "--client %s", err);
        return 2;
      }
      char from[320];
      snprintf(from, sizeof from, "--client %.100s %.200s", client, map.e[i].source);
      origins_mark(o, cfg, map.e[i].key, from);
    }
  }
  for (int i = 0; i < n_sets; i++) {
    const char *eq = strchr(sets[i], '=');
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(eq - sets[i]), sets[i]);
    if (eng_config_set(cfg, key, eq + 1, err, sizeof err)) {
      fprintf(stderr, "stormsweep sim: --set: %s\n", err);
      return 2;
    }
    origins_mark(o, cfg, key, "--set");
  }
  if (eng_config_validate(cfg, err, sizeof err)) {
    fprintf(stderr, "stormsweep sim: %s\n", err);
    return 2;
  }
  if (cfg->service_dist == ENG_SERVICE_EMPIRICAL) {
    /* The histogram is the service time itself, not deconvolved. */
    fprintf(stderr, "stormsweep sim: warning: service = empirical takes ");
    ana_term_fputs(stderr, cfg->service_histogram, 0);
    fprintf(stderr, " as the servers' own service time: it must be measured at low load, where "
                    "queueing adds little (docs/telemetry.md)\n");
  }
  return 0;
}

/* sim's run and output stage: simulates the configured scenario, prints its summary and
 * writes --ticks-csv. Returns the command's exit status. */
static int sim_run_output(const eng_config *cfg, const origins *o, uint64_t seed, const char *csv,
                          int force, int json) {
  /* Opened before simulating: a bad path fails at once, not after the run. */
  fmt_outfile csv_out;
  FILE *csv_f = NULL;
  if (csv && !(csv_f = cli_out_open(&csv_out, "sim", "--ticks-csv", csv, force))) return 1;
  eng_run *run = eng_run_create();
  if (!run) {
    fprintf(stderr, "stormsweep sim: out of memory\n");
    if (csv_f) fmt_outfile_abandon(&csv_out);
    return 1;
  }
  /* Per-tick rows are only for --ticks-csv: without it the run's memory
   * does not grow with the horizon. */
  eng_run_set_row_ticks(run, csv_f != NULL);
  eng_summary sum;
  char err[512];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = eng_run_simulate(run, cfg, seed, &sum, err, sizeof err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc) {
    fprintf(stderr, "stormsweep sim: %s\n", err);
    if (csv_f) fmt_outfile_abandon(&csv_out);
    eng_run_destroy(run);
    return 2;
  }
  double wall_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  if (json)
    print_json(run, cfg, &sum, wall_ms, o);
  else
    print_text(run, cfg, &sum, wall_ms);
  rc = 0;
  fflush(stdout); /* the summary first when --ticks-csv is "-" */
  if (csv_f) {
    write_ticks_csv(run, cfg, csv_f);
    if (cli_out_close(&csv_out, "sim", "--ticks-csv")) rc = 1;
  }
  eng_run_destroy(run);
  return rc;
}

int cmd_sim(int argc, char **argv) {
  enum { O_POLICY = 256, O_SET, O_SEED, O_CSV, O_JSON, O_LIST, O_SHOW, O_CLIENT, O_LENIENT,
         O_SLO };
  static const struct option longopts[] = {
      {"policy", required_argument, NULL, O_POLICY},
      {"client", required_argument, NULL, O_CLIENT},
      {"client-lenient", no_argument, NULL, O_LENIENT},
      {"set", required_argument, NULL, O_SET},
      {"seed", required_argument, NULL, O_SEED},
      {"ticks-csv", required_argument, NULL, O_CSV},
      {"json", no_argument, NULL, O_JSON},
      {"slo", required_argument, NULL, O_SLO},
      {"force", no_argument, NULL, 'f'},
      {"list-settings", no_argument, NULL, O_LIST},
      {"show-settings", no_argument, NULL, O_SHOW},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *file = NULL, *csv = NULL, *policy = NULL, *client = NULL;
  uint64_t seed = 1;
  int json = 0, force = 0, list = 0, show = 0, n_sets = 0, c;
  unsigned client_flags = 0;
  eng_slo slo = {0};
  char **sets = calloc((size_t)argc + 1, sizeof *sets);
  if (!sets) {
    fprintf(stderr, "stormsweep sim: out of memory\n");
    return 1;
  }
  cli_opts_begin(argc, argv);
  while ((c = cli_getopt("sim", argc, argv, ":fh", longopts)) != -1) {
    switch (c) {
    case 'h': sim_usage(stdout); free(sets); return 0;
    case O_JSON: json = 1; break;
    case 'f': force = 1; break;
    case O_LIST: list = 1; break;
    case O_SHOW: show = 1; break;
    case O_POLICY: policy = optarg; break;
    case O_CLIENT: client = optarg; break;
    case O_LENIENT: client_flags |= SWP_CLIENT_LENIENT; break;
    case O_CSV: csv = optarg; break;
    case O_SLO: {
      char err[256];
      if (ana_slo_parse(optarg, &slo, err, sizeof err)) {
        fprintf(stderr, "stormsweep sim: %s\n", err);
        free(sets);
        return 2;
      }
      break;
    }
    case O_SET: {
      const char *eq = strchr(optarg, '=');
      if (!eq || eq == optarg) {
        /* "--set breaker fail_fast": the value would be taken for a file */
        const char *next = optind < argc && argv[optind][0] != '-' && !eq ? argv[optind] : NULL;
        if (next)
          fprintf(stderr,
                  "stormsweep sim: --set needs KEY=VALUE, got '%s' (did you mean --set %s=%s?)\n",
                  optarg, optarg, next);
        else
          fprintf(stderr, "stormsweep sim: --set needs KEY=VALUE, got '%s'\n", optarg);
        free(sets);
        return 2;
      }
      sets[n_sets++] = optarg;
      break;
    }
    case O_SEED:
      if (cli_parse_seed("sim", "--seed", optarg, &seed)) {
        free(sets);
        return 2;
      }
      break;
    default: free(sets); return 2;
    }
  }
  if (optind < argc) file = argv[optind++];
  if (optind < argc) {
    fprintf(stderr, "stormsweep sim: unexpected argument '%s' (one SCENARIO.ini at most)\n",
            argv[optind]);
    free(sets);
    return 2;
  }
  if (client_flags && !client) {
    cli_error("sim", "--client-lenient goes with --client FILE");
    free(sets);
    return 2;
  }
  if (list) {
    list_settings();
    if (file || policy || client || n_sets)
      fprintf(stderr, "stormsweep sim: note: --list-settings lists the defaults; "
                      "--show-settings shows the settings with your file and options applied\n");
    free(sets);
    return 0;
  }

  eng_config cfg;
  eng_config_defaults(&cfg);
  origins o;
  if (origins_init(&o, &cfg)) {
    fprintf(stderr, "stormsweep sim: out of memory\n");
    free(sets);
    origins_free(&o);
    return 1;
  }
  int rc = sim_configure(&cfg, &o, file, policy, client, client_flags, sets, n_sets);
  cfg.user_slo = slo;
  free(sets);
  if (rc || show) {
    if (!rc) show_settings(&o, &cfg);
    origins_free(&o);
    return rc;
  }
  rc = sim_run_output(&cfg, &o, seed, csv, force, json);
  origins_free(&o);
  return rc;
}
