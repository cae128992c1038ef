/*
 * cmd_sim.c — `stormsweep sim`: one run, its summary in words or JSON, and
 * optionally its per-tick metrics as CSV. With no scenario file it runs the
 * seed study's scenario (SPEC §3), which is also the engine's defaults.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "eng.h"
#include "scenario_file.h"

static void sim_usage(FILE *out) {
  fprintf(out,
          "usage: stormsweep sim [SCENARIO.ini] [--policy naive|guarded] [--set KEY=VALUE]...\n"
          "                      [--seed N] [--ticks-csv FILE] [--json] [--list-settings]\n\n"
          "Simulates one run and prints its summary: outcome (recovered / slow / metastable /\n"
          "collapsed / undetermined; README \"The outcome rule\") and why, recovery time after\n"
          "the last fault clears or time to collapse, retry amplification, goodput, router\n"
          "balance and the Little's Law check. Without SCENARIO.ini it runs the built-in seed\n"
          "study's scenario (16 shards x 8 workers, 0.7 load, 5x surge and one shard stalled\n"
          "for 500 ms from 2 s).\n\n"
          "  SCENARIO.ini        settings in a [scenario] section (key = value)\n"
          "  --policy NAME       naive (immediate retries, no budget) or guarded (10%% retry\n"
          "                      budget, full-jitter backoff 10 ms..1 s); default naive\n"
          "  --set KEY=VALUE     change one setting (repeatable; applied after the file)\n"
          "  --seed N            run seed (default 1)\n"
          "  --ticks-csv FILE    write every per-tick metric as CSV (one row per tick)\n"
          "  --json              print the summary as one JSON object\n"
          "  --list-settings     list every setting with its default and meaning\n");
}

static void list_settings(void) {
  eng_config d;
  eng_config_defaults(&d);
  const char *group = "";
  for (size_t i = 0; i < eng_settings_count(); i++) {
    const eng_setting *s = eng_settings_at(i);
    if (strcmp(group, s->group)) {
      group = s->group;
      printf("%s[%s]\n", i ? "\n" : "", group);
    }
    char val[256];
    eng_config_get(&d, s->key, val, sizeof val);
    printf("  %-24s = %-12s %s\n", s->key, val, s->help);
  }
}

static int write_ticks_csv(const eng_run *run, const eng_config *cfg, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return -1;
  }
  fprintf(f, "tick,time_ms");
  for (int m = 0; m < ENG_M_COUNT; m++) fprintf(f, ",%s", eng_metric_get_info(m)->name);
  fputc('\n', f);
  int32_t T = eng_run_ticks(run);
  const int32_t *cols[ENG_M_COUNT];
  for (int m = 0; m < ENG_M_COUNT; m++) cols[m] = eng_run_metric(run, m);
  for (int32_t t = 0; t < T; t++) {
    fprintf(f, "%d,%g", t, t * cfg->tick_ms);
    for (int m = 0; m < ENG_M_COUNT; m++) fprintf(f, ",%d", cols[m][t]);
    fputc('\n', f);
  }
  if (fclose(f)) {
    perror(path);
    return -1;
  }
  return 0;
}

static void json_num(const char *key, double v, int last) {
  if (isfinite(v))
    printf("  \"%s\": %.10g%s\n", key, v, last ? "" : ",");
  else
    printf("  \"%s\": null%s\n", key, last ? "" : ",");
}

static void print_json(const eng_config *cfg, const eng_summary *s, double wall_ms) {
  char pol[32];
  eng_config_get(cfg, "policy", pol, sizeof pol);
  printf("{\n  \"seed\": %llu,\n  \"policy\": \"%s\",\n  \"outcome\": \"%s\",\n"
         "  \"passed_slo\": %s,\n",
         (unsigned long long)s->seed, pol, eng_outcome_name(s->outcome),
         s->passed_slo ? "true" : "false");
  json_num("slo_ms", cfg->slo_ms, 0);
  json_num("recovery_ms", s->recovery_ms, 0);
  json_num("baseline_queue", s->baseline_queue, 0);
  json_num("recovery_threshold", s->recovery_threshold, 0);
  json_num("peak_queue", s->peak_queue, 0);
  json_num("amplification", s->amplification, 0);
  json_num("amplification_after", s->amplification_after, 0);
  json_num("goodput_baseline", s->goodput_baseline, 0);
  json_num("goodput_during", s->goodput_during, 0);
  json_num("goodput_after", s->goodput_after, 0);
  json_num("late_queue_trend", s->late_queue_trend, 0);
  json_num("max_mean_shard_load", s->max_mean_shard_load, 0);
  json_num("mean_hops", s->mean_hops, 0);
  json_num("little_L", s->little_L, 0);
  json_num("little_lambda_w", s->little_lambda_w, 0);
  json_num("little_rel_error", s->little_rel_error, 0);
  json_num("keys_remapped", s->keys_remapped, 0);
  json_num("successor_peak_load", s->successor_peak_load, 0);
  printf("  \"new_requests\": %lld,\n  \"attempts\": %lld,\n  \"successes\": %lld,\n"
         "  \"failed_requests\": %lld,\n  \"events\": %lld,\n",
         (long long)s->new_requests, (long long)s->attempts, (long long)s->successes,
         (long long)s->failed_requests, (long long)s->events);
  /* What the outcome rule decided on (README "The outcome rule"); drain_ms
   * is null both when recovered and when the backlog is not shrinking. */
  json_num("baseline_goodput_ratio", s->baseline_goodput_ratio, 0);
  json_num("baseline_amplification", s->baseline_amplification, 0);
  json_num("collapse_ms", s->collapse_ms, 0);
  json_num("collapse_watch_ms", s->collapse_watch_ms, 0);
  json_num("return_ms", s->return_ms, 0);
  json_num("late_goodput", s->late_goodput, 0);
  json_num("late_amplification", s->late_amplification, 0);
  json_num("late_wasted_share", s->late_wasted_share, 0);
  json_num("drain_ms", s->drain_ms, 0);
  json_num("late_load", s->late_load, 0);
  json_num("wall_ms", wall_ms, 1);
  printf("}\n");
}

static void print_text(const eng_config *cfg, const eng_summary *s, double wall_ms) {
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
  printf("  retry amplification  %.2fx over the run, %.2fx after the faults\n", s->amplification,
         s->amplification_after);
  printf("  goodput              %.1f/tick at baseline; %.0f%% of it during the faults, %.0f%% "
         "after\n",
         s->goodput_baseline, 100 * s->goodput_during, 100 * s->goodput_after);
  printf("  requests             %lld new, %lld attempts, %lld answered in time, %lld failed\n",
         (long long)s->new_requests, (long long)s->attempts, (long long)s->successes,
         (long long)s->failed_requests);
  printf("  router               max/mean shard load %.3f, %.3f hops per admission\n",
         s->max_mean_shard_load, s->mean_hops);
  if (cfg->crash.count)
    printf("  failover             %.1f%% of keys remapped, successor peak load %.2fx baseline\n",
           100 * s->keys_remapped, s->successor_peak_load);
  printf("  Little's Law         L = %.3f, lambda W = %.3f, relative error %.2e\n", s->little_L,
         s->little_lambda_w, s->little_rel_error);
  printf("  cost                 %.1f ms wall, %lld events\n", wall_ms, (long long)s->events);
}

int cmd_sim(int argc, char **argv) {
  eng_config cfg;
  eng_config_defaults(&cfg);
  const char *file = NULL, *csv = NULL, *policy = NULL;
  uint64_t seed = 1;
  int json = 0;
  char err[512];
  /* The file is applied first, then --policy, then --set in order. */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      sim_usage(stdout);
      return 0;
    } else if (!strcmp(a, "--list-settings")) {
      list_settings();
      return 0;
    } else if (a[0] != '-' && !file) {
      file = a;
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--set") || !strcmp(a, "--seed") || !strcmp(a, "--ticks-csv") ||
               !strcmp(a, "--policy")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "stormsweep sim: %s needs a value\n", a);
        return 2;
      }
      i++;
      if (!strcmp(a, "--seed")) {
        char *end;
        unsigned long long v = strtoull(argv[i], &end, 10);
        if (!*argv[i] || *end || argv[i][0] == '-') {
          fprintf(stderr, "stormsweep sim: --seed: expected a non-negative whole number, got '%s'\n",
                  argv[i]);
          return 2;
        }
        seed = v;
      } else if (!strcmp(a, "--ticks-csv")) {
        csv = argv[i];
      } else if (!strcmp(a, "--policy")) {
        policy = argv[i];
      }
    } else {
      fprintf(stderr, "stormsweep sim: unknown option '%s' (see 'stormsweep sim --help')\n", a);
      return 2;
    }
  }
  if (file && eng_scenario_load(&cfg, file, err, sizeof err)) {
    fprintf(stderr, "stormsweep sim: %s\n", err);
    return 2;
  }
  if (policy && eng_config_set(&cfg, "policy", policy, err, sizeof err)) {
    fprintf(stderr, "stormsweep sim: --policy: %s\n", err);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--set")) {
      if (!strcmp(argv[i], "--seed") || !strcmp(argv[i], "--ticks-csv") ||
          !strcmp(argv[i], "--policy"))
        i++;
      continue;
    }
    const char *kv = argv[++i];
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
      fprintf(stderr, "stormsweep sim: --set: expected KEY=VALUE, got '%s'\n", kv);
      return 2;
    }
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    if (eng_config_set(&cfg, key, eq + 1, err, sizeof err)) {
      fprintf(stderr, "stormsweep sim: --set: %s\n", err);
      return 2;
    }
  }
  if (eng_config_validate(&cfg, err, sizeof err)) {
    fprintf(stderr, "stormsweep sim: %s\n", err);
    return 2;
  }
  eng_run *run = eng_run_create();
  if (!run) {
    fprintf(stderr, "stormsweep sim: out of memory\n");
    return 1;
  }
  eng_summary sum;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = eng_run_simulate(run, &cfg, seed, &sum, err, sizeof err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc) {
    fprintf(stderr, "stormsweep sim: %s\n", err);
    eng_run_destroy(run);
    return 2;
  }
  double wall_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  if (json)
    print_json(&cfg, &sum, wall_ms);
  else
    print_text(&cfg, &sum, wall_ms);
  rc = 0;
  if (csv && write_ticks_csv(run, &cfg, csv)) rc = 1;
  eng_run_destroy(run);
  return rc;
}
