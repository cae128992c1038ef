/*
 * grid.c — grid axes and points: expands an axis's list ("10, 50, inf",
 * lin(START, STOP, N), log(START, STOP, N)) into the values eng_config_set
 * accepts, numbers the cartesian product of the axes (first axis slowest),
 * builds the configuration of a point and validates every point before a
 * sweep starts.
 *
 * Values are normalised through the engine's own parser and printer
 * (eng_config_set then eng_config_get), so "1e3" and "1000", or "inf" and
 * "infinity", are the same value: duplicates are caught and the text stored
 * in the result file is the one the engine would print. Window lists and
 * presets keep their text: eng_config_get's windows use %g, which could round.
 * Duplicates are found by sorting the values' identities, so a long axis
 * costs O(n log n).
 *
 * Validation (swp_sweep_check) refuses, before anything runs: an axis of
 * more than a million values, a grid of more than SWP_MAX_POINTS points or
 * SWP_MAX_RUNS runs, any point eng_config_validate rejects, a point whose
 * tick length differs, and a point one run of which needs more than half
 * the machine's physical memory (memory_check, on the engine's estimate;
 * the most any thread holds is kept for the driver's check of -j). It also
 * notes which axes are live somewhere (eng_setting_live): swp_sweep_dead_axes
 * names the others for list and run to refuse. A message names the line of
 * the first setting key it mentions that the sweep sets — so a default
 * surge that a short horizon_ms cuts off blames the horizon_ms line — or
 * the --set/--grid override that set it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "swp_internal.h"

/* Longest axis: a million values is far past any study, and bounds the
 * memory an axis list can ask for (lin(0, 1, 1000000) twice is refused). */
#define SWP_AXIS_MAX_VALUES 1000000

void swp_axis_clear(swp_axis *ax) {
  for (size_t i = 0; i < ax->count; i++) free(ax->values[i]);
  free(ax->values);
  free(ax->spec);
  ax->values = NULL;
  ax->spec = NULL;
  ax->count = 0;
}

/* ---- list items ---- */

/* A growable list of strings. */
typedef struct strlist {
  char **v;
  size_t n, cap;
} strlist;

static int strlist_push(strlist *l, const char *s, size_t len) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 8;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
  }
  char *c = malloc(len + 1);
  if (!c) return -1;
  memcpy(c, s, len);
  c[len] = 0;
  l->v[l->n++] = c;
  return 0;
}

static void strlist_free(strlist *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* Splits at commas outside parentheses; items are trimmed. */
static int split_items(const char *spec, strlist *items, char *err, size_t errlen) {
  const char *p = spec;
  for (;;) {
    int depth = 0;
    const char *q = p;
    while (*q && !(*q == ',' && depth == 0)) {
      if (*q == '(') depth++;
      if (*q == ')' && depth > 0) depth--;
      q++;
    }
    const char *a = p, *b = q;
    while (a < b && isspace((unsigned char)*a)) a++;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    if (a == b) {
      swp_seterr(err, errlen, "empty value in the list '%s'", spec);
      return -1;
    }
    if (strlist_push(items, a, (size_t)(b - a))) {
      swp_seterr(err, errlen, "out of memory");
      return -1;
    }
    if (!*q) return 0;
    p = q + 1;
  }
}

static int parse_number(const char *s, double *out) {
  while (isspace((unsigned char)*s)) s++;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s) return -1;
  while (isspace((unsigned char)*end)) end++;
  if (*end || errno == ERANGE || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* lin(START, STOP, N) / log(START, STOP, N): appends N formatted numbers,
 * unless that would take the list past limit values: then the N values are
 * only counted in *skipped (a range is counted before it is expanded). */
static int expand_range(const eng_setting *s, const char *item, strlist *out, size_t limit,
                        size_t *skipped, char *err, size_t errlen) {
  int is_log = item[1] == 'o';
  const char *fn = is_log ? "log" : "lin";
  size_t len = strlen(item);
  if (item[len - 1] != ')') goto syntax;
  char args[256];
  size_t alen = len - 5; /* without "lin(" and ")" */
  if (alen >= sizeof args) goto syntax;
  memcpy(args, item + 4, alen);
  args[alen] = 0;
  char *parts[3];
  int np = 0;
  for (char *p = args; np < 3;) {
    parts[np++] = p;
    char *c = strchr(p, ',');
    if (!c) break;
    *c = 0;
    p = c + 1;
  }
  if (np != 3 || strchr(parts[2], ',')) goto syntax;
  double a, b, nd;
  if (parse_number(parts[0], &a) || parse_number(parts[1], &b) || parse_number(parts[2], &nd))
    goto syntax;
  if (nd < 1 || nd != floor(nd) || nd > 1e6) {
    swp_seterr(err, errlen, "%s: %s: N must be a whole number from 1 to 1000000", s->key, item);
    return -1;
  }
  if (is_log && (a <= 0 || b <= 0)) {
    swp_seterr(err, errlen, "%s: %s: log ranges need START and STOP > 0", s->key, item);
    return -1;
  }
  int n = (int)nd;
  if (*skipped || out->n + (size_t)n > limit) {
    *skipped += (size_t)n;
    return 0;
  }
  int whole = s->type == ENG_SET_INT || s->type == ENG_SET_INT64;
  for (int i = 0; i < n; i++) {
    double f = n == 1 ? 0 : (double)i / (n - 1);
    double v = is_log ? exp(log(a) + f * (log(b) - log(a))) : a + f * (b - a);
    if (n > 1 && i == n - 1) v = b; /* the end point exactly, whatever the rounding */
    char buf[64];
    if (whole)
      snprintf(buf, sizeof buf, "%.0f", floor(v + 0.5));
    else
      snprintf(buf, sizeof buf, "%.12g", v); /* drops 0.30000000000000004 noise */
    if (strlist_push(out, buf, strlen(buf))) {
      swp_seterr(err, errlen, "out of memory");
      return -1;
    }
  }
  return 0;
syntax:
  swp_seterr(err, errlen, "%s: expected %s(START, STOP, N) with three numbers, got '%s'", s->key,
             fn, item);
  return -1;
}

static int is_range(const char *item) {
  return (!strncmp(item, "lin(", 4) || !strncmp(item, "log(", 4));
}

/* Identity of a value for duplicate detection: two values are the same
 * setting when they leave a config equal. Numbers and enums compare by the
 * engine's own (round-tripping) printout; windows by their exact bits (%a),
 * since "2000+500" and "2e3+5e2" are one window; a preset by the name
 * eng_config_get reports after applying it, which is what it changes. */
static int value_identity(const eng_setting *s, const eng_config *cfg, char *buf, size_t len) {
  if (s->type != ENG_SET_WINDOWS) return eng_config_get(cfg, s->key, buf, len);
  const eng_windows *w = (const eng_windows *)((const char *)cfg + s->offset);
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < w->count && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%a+%a;", w->w[i].start_ms,
                             w->w[i].duration_ms);
  return 0;
}

typedef struct ident {
  const char *key;
  size_t index;
} ident;

static int cmp_ident(const void *x, const void *y) {
  const ident *a = x, *b = y;
  int c = strcmp(a->key, b->key);
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Index of the first value (in list order) that repeats an earlier one among
 * the first n, or n when none does. Sorting keeps this O(n log n): a
 * lin(..., 1000000) axis must not cost 10^12 comparisons. */
static size_t first_duplicate(char *const *keys, size_t n, int *oom) {
  *oom = 0;
  if (n < 2) return n;
  ident *v = malloc(n * sizeof *v);
  if (!v) {
    *oom = 1;
    return n;
  }
  for (size_t i = 0; i < n; i++) v[i] = (ident){keys[i], i};
  qsort(v, n, sizeof *v, cmp_ident);
  size_t best = n;
  for (size_t i = 1; i < n; i++)
    if (!strcmp(v[i].key, v[i - 1].key) && v[i].index < best) {
      /* v[i - 1] is the earliest of its run of equal keys only at the run's
       * start; the second-earliest is the one that "appears twice" first. */
      if (i < 2 || strcmp(v[i - 2].key, v[i].key)) best = v[i].index;
    }
  free(v);
  return best;
}

int64_t swp_axis_count(const char *key, const char *spec) {
  const eng_setting *s = eng_settings_find(key);
  strlist items = {0}, none = {0};
  size_t count = 0;
  if (s && !split_items(spec, &items, NULL, 0))
    for (size_t i = 0; i < items.n; i++) {
      size_t before = count;
      if (!is_range(items.v[i]) || expand_range(s, items.v[i], &none, 0, &count, NULL, 0) ||
          count == before)
        count = before + 1;
    }
  strlist_free(&items);
  strlist_free(&none);
  return (int64_t)count;
}

int swp_axis_expand(swp_axis *ax, const char *spec, int64_t other_points, char *err,
                    size_t errlen) {
  const eng_setting *s = eng_settings_find(ax->key);
  if (!s) {
    swp_seterr(err, errlen, "unknown setting '%s'", ax->key);
    return -1;
  }
  strlist items = {0}, vals = {0}, norm = {0}, ids = {0};
  int rc = -1;
  const char *p = spec;
  while (isspace((unsigned char)*p)) p++;
  if (!*p) {
    swp_seterr(err, errlen, "%s: empty axis (give at least one value)", s->key);
    return -1;
  }
  if (split_items(spec, &items, err, errlen)) goto out;
  /* The running product of the grid is bounded before any value is made,
   * so sixteen lin(..., 1000000) axes cost one axis's count, not 10^96. */
  if (other_points < 1) other_points = 1;
  size_t limit = SWP_AXIS_MAX_VALUES;
  int by_grid = 0;
  if (SWP_MAX_POINTS / other_points < (int64_t)limit) {
    limit = (size_t)(SWP_MAX_POINTS / other_points);
    by_grid = 1;
  }
  size_t skipped = 0;
  for (size_t i = 0; i < items.n; i++) {
    if (is_range(items.v[i])) {
      if (s->type != ENG_SET_INT && s->type != ENG_SET_INT64 && s->type != ENG_SET_DOUBLE &&
          s->type != ENG_SET_DOUBLE_INF) {
        swp_seterr(err, errlen, "%s: %s ranges need a numeric setting", s->key, items.v[i]);
        goto out;
      }
      if (expand_range(s, items.v[i], &vals, limit, &skipped, err, errlen)) goto out;
    } else if (skipped || vals.n >= limit) {
      skipped++;
    } else if (strlist_push(&vals, items.v[i], strlen(items.v[i]))) {
      swp_seterr(err, errlen, "out of memory");
      goto out;
    }
  }
  if (skipped) {
    if (by_grid)
      swp_seterr(err, errlen,
                 "%s: its %zu values take the grid past %lld points (the most a sweep may have; "
                 "use fewer values or replicates instead)",
                 s->key, vals.n + skipped, (long long)SWP_MAX_POINTS);
    else
      swp_seterr(err, errlen, "%s: more than %d values in one axis", s->key, SWP_AXIS_MAX_VALUES);
    rc = by_grid ? -2 : -1;
    goto out;
  }
  /* Parse every value; a value that does not parse is reported after any
   * duplicate before it, as a left-to-right reading would find them. */
  size_t bad = vals.n;
  char bad_msg[512] = "";
  eng_config defaults;
  eng_config_defaults(&defaults);
  for (size_t i = 0; i < vals.n; i++) {
    eng_config cfg = defaults;
    if (eng_config_set(&cfg, s->key, vals.v[i], bad_msg, sizeof bad_msg)) {
      bad = i;
      break;
    }
    char buf[512], id[512];
    if (s->type == ENG_SET_WINDOWS || s->type == ENG_SET_PRESET)
      snprintf(buf, sizeof buf, "%s", vals.v[i]);
    else
      eng_config_get(&cfg, s->key, buf, sizeof buf);
    value_identity(s, &cfg, id, sizeof id);
    if (strlist_push(&norm, buf, strlen(buf)) || strlist_push(&ids, id, strlen(id))) {
      swp_seterr(err, errlen, "out of memory");
      goto out;
    }
  }
  int oom;
  size_t dup = first_duplicate(ids.v, norm.n, &oom);
  if (oom) {
    swp_seterr(err, errlen, "out of memory");
    goto out;
  }
  if (dup < norm.n) {
    swp_seterr(err, errlen, "%s: value '%s' appears twice in the axis", s->key, vals.v[dup]);
    goto out;
  }
  if (bad < vals.n) {
    swp_seterr(err, errlen, "%s", bad_msg);
    goto out;
  }
  /* The spec as items joined by ", " (ranges kept as written). */
  size_t total = 1;
  for (size_t i = 0; i < items.n; i++) total += strlen(items.v[i]) + 2;
  char *joined = malloc(total);
  if (!joined) {
    swp_seterr(err, errlen, "out of memory");
    goto out;
  }
  joined[0] = 0;
  for (size_t i = 0, used = 0; i < items.n; i++) {
    used += (size_t)snprintf(joined + used, total - used, "%s%s", i ? ", " : "", items.v[i]);
  }
  swp_axis_clear(ax);
  ax->spec = joined;
  ax->values = norm.v;
  ax->count = norm.n;
  norm.v = NULL;
  norm.n = 0;
  rc = 0;
out:
  strlist_free(&items);
  strlist_free(&vals);
  strlist_free(&norm);
  strlist_free(&ids);
  return rc;
}

/* ---- points ---- */

void swp_sweep_point_indexes(const swp_sweep *sw, int64_t point, size_t *idx) {
  /* Mixed radix with the last axis as the fastest digit. */
  for (size_t a = sw->n_axes; a-- > 0;) {
    idx[a] = (size_t)(point % (int64_t)sw->axes[a].count);
    point /= (int64_t)sw->axes[a].count;
  }
}

int swp_sweep_point_config(const swp_sweep *sw, int64_t point, eng_config *cfg, char *err,
                           size_t errlen) {
  *cfg = sw->base;
  int64_t rest = point;
  /* Apply in axis order, but the digits come out last-axis first. */
  size_t ix[SWP_MAX_AXES];
  if (sw->n_axes > SWP_MAX_AXES) {
    swp_seterr(err, errlen, "more than %d axes", SWP_MAX_AXES);
    return -1;
  }
  for (size_t a = sw->n_axes; a-- > 0;) {
    ix[a] = (size_t)(rest % (int64_t)sw->axes[a].count);
    rest /= (int64_t)sw->axes[a].count;
  }
  int rc = 0;
  for (size_t a = 0; a < sw->n_axes && !rc; a++)
    rc = eng_config_set(cfg, sw->axes[a].key, sw->axes[a].values[ix[a]], err, errlen);
  return rc;
}

int swp_axis_numbers(const swp_sweep *sw, size_t a, double *out) {
  const swp_axis *ax = &sw->axes[a];
  int distinct = 1;
  for (size_t v = 0; v < ax->count; v++) {
    eng_config cfg = sw->base;
    out[v] = eng_config_set(&cfg, ax->key, ax->values[v], NULL, 0)
                 ? NAN
                 : eng_config_get_number(&cfg, ax->key);
    if (isnan(out[v])) distinct = 0;
    for (size_t u = 0; u < v && distinct; u++)
      if (out[u] == out[v]) distinct = 0;
  }
  if (distinct) return 0;
  for (size_t v = 0; v < ax->count; v++) out[v] = (double)v;
  return 1;
}

void swp_sweep_point_describe(const swp_sweep *sw, int64_t point, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  if (!sw->n_axes) {
    snprintf(buf, len, "the scenario");
    return;
  }
  size_t ix[SWP_MAX_AXES];
  if (sw->n_axes > SWP_MAX_AXES) return;
  swp_sweep_point_indexes(sw, point, ix);
  for (size_t a = 0; a < sw->n_axes && used < len; a++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", a ? " " : "", sw->axes[a].key,
                             sw->axes[a].values[ix[a]]);
}

/* Where a point's problem comes from, for messages: the first setting key
 * in msg that the sweep sets (a [scenario] entry or an axis) gives
 * "FILE:LINE", or "--set KEY=VALUE" / "--grid KEY=..." when an override set
 * it; a message naming no such key gives just the file. Cross-field
 * messages name the key they blame first ("surge: window ... ends after the
 * horizon (horizon_ms = 1000)"), so a default surge blames the horizon_ms
 * line. */
static void problem_locate(const swp_sweep *sw, const char *msg, char *loc, size_t len) {
  for (const char *p = msg; *p;) {
    if (!isalpha((unsigned char)*p) && *p != '_') {
      p++;
      continue;
    }
    char word[64];
    size_t n = 0;
    while ((isalnum((unsigned char)p[n]) || p[n] == '_')) {
      if (n < sizeof word - 1) word[n] = p[n];
      n++;
    }
    word[n < sizeof word ? n : sizeof word - 1] = 0;
    p += n;
    if (!eng_settings_find(word)) continue;
    for (size_t a = 0; a < sw->n_axes; a++)
      if (!strcmp(sw->axes[a].key, word)) {
        if (sw->axes[a].line)
          snprintf(loc, len, "%s:%d", sw->source, sw->axes[a].line);
        else
          snprintf(loc, len, "--grid %s=%s", word, sw->axes[a].spec);
        return;
      }
    for (size_t i = 0; i < sw->n_settings; i++)
      if (!strcmp(sw->settings[i].key, word)) {
        if (sw->settings[i].line)
          snprintf(loc, len, "%s:%d", sw->source, sw->settings[i].line);
        else
          snprintf(loc, len, "--set %s=%s", word, sw->settings[i].value);
        return;
      }
  }
  snprintf(loc, len, "%s", sw->source);
}

/* ---- memory ---- */

#define GB (1024.0 * 1024.0 * 1024.0)

/* Physical memory in bytes; 0 when the system does not say. */
static double physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}

/* The call graph's services of point p's cfg (the front first) into the
 * sweep's list at the first point, compared with it after: the
 * /ticks/service_<metric> datasets label their service dimension once, so
 * every point names the same services in the same order. */
static int service_names_check(swp_sweep *sw, int64_t p, const eng_config *cfg, char *msg,
                               size_t len) {
  const eng_graph *g = &cfg->graph;
  int32_t n = g->n_services ? g->n_services + 1 : 0;
  if (p == 0) {
    sw->services = n;
    for (int32_t k = 0; k < n; k++)
      snprintf(sw->service_names[k], ENG_NAME_MAX, "%s", k ? g->svc[k - 1].name : g->front);
    return 0;
  }
  int same = n == sw->services;
  for (int32_t k = 0; same && k < n; k++)
    same = !strcmp(sw->service_names[k], k ? g->svc[k - 1].name : g->front);
  if (!same)
    snprintf(msg, len, "grid point %lld declares other services than grid point 0 (every point "
             "of a sweep must have the same services, in the same order, so /ticks can label "
             "them once): sweep their settings, not their names or the calls that add one",
             (long long)p);
  return same ? 0 : -1;
}

/* Refuses a point one run of which cannot fit in half the machine's
 * memory, whatever the threads: the engine's estimate of the run
 * (eng_run_memory). How many threads fit in the memory available when the
 * sweep starts is the driver's check (drv_memory_check), which adds its
 * own buffers. The message blames the largest part. */
static int memory_check(const eng_config *c, const eng_memory *m, int32_t row_ticks,
                        double phys, char *msg, size_t len) {
  if (phys <= 0 || m->total <= phys / 2) return 0;
  char what[200];
  const char *key, *advice;
  double most = m->per_tick;
  key = "horizon_ms";
  if (row_ticks == 1)
    snprintf(what, sizeof what, "%d ticks x %d bytes of per-tick metrics",
             (int)eng_config_ticks(c), (int)(ENG_M_COUNT * sizeof(int32_t)));
  else if (row_ticks > 1)
    snprintf(what, sizeof what, "%d rows of %d ticks x %d bytes of metrics",
             (int)((eng_config_ticks(c) + row_ticks - 1) / row_ticks), (int)row_ticks,
             (int)(ENG_M_COUNT * sizeof(int32_t)));
  else
    snprintf(what, sizeof what, "the outcome rule's windows over %d ticks",
             (int)eng_config_ticks(c));
  advice = "shorten horizon_ms or lengthen tick_ms";
  if (m->shard_queues > most) {
    most = m->shard_queues;
    key = "record_shard_queues";
    snprintf(what, sizeof what, "%d %s x %d shards x 4 bytes of per-shard queue depths",
             (int)(m->shard_queues / (4.0 * c->shards)), row_ticks > 1 ? "rows" : "ticks",
             (int)c->shards);
    advice = "turn record_shard_queues off or shorten horizon_ms";
  }
  if (m->breakers > most) {
    most = m->breakers;
    key = "breaker";
    snprintf(what, sizeof what, "%d clients x %d shards circuit breakers", (int)c->clients,
             (int)c->shards);
    advice = "lower clients or shards, or turn the breaker off";
  }
  if (m->ring > most) {
    most = m->ring;
    key = "vnodes";
    snprintf(what, sizeof what, "%d shards x %d vnodes ring points", (int)c->shards,
             (int)c->vnodes);
    advice = "lower vnodes";
  }
  if (m->attempts > most) {
    key = c->rate_rps > 0 ? "rate_rps" : "load";
    snprintf(what, sizeof what, "about %.3g attempts alive at once", m->live);
    advice = "lower the arrival rate, max_retries, timeout_ms or queue_capacity";
  }
  snprintf(msg, len,
           "%s: one run needs about %.1f GB (%s), more than half of this machine's %.1f GB of "
           "memory; %s",
           key, m->total / GB, what, phys / GB, advice);
  return -1;
}

int64_t swp_sweep_runs_declared(const swp_sweep *sw) {
  int64_t points = 1;
  for (size_t a = 0; a < sw->n_axes; a++) {
    int64_t c = (int64_t)sw->axes[a].count;
    if (c < 1 || points > SWP_MAX_POINTS / c) return -1;
    points *= c;
  }
  if (sw->replicates < 1 || points > SWP_MAX_RUNS / sw->replicates) return -1;
  return points * sw->replicates;
}

int swp_sweep_check(swp_sweep *sw, char *err, size_t errlen) {
  char msg[512], loc[300];
  sw->checked = 0;
  eng_config_defaults(&sw->base);
  for (size_t i = 0; i < sw->n_settings; i++) {
    const swp_setting *s = &sw->settings[i];
    if (eng_config_set(&sw->base, s->key, s->value, msg, sizeof msg)) {
      if (s->line)
        swp_seterr(err, errlen, "%s:%d: %s", sw->source, s->line, msg);
      else
        swp_seterr(err, errlen, "--set %s=%s: %s", s->key, s->value, msg);
      return -1;
    }
  }
  if (sw->n_axes > SWP_MAX_AXES) {
    swp_seterr(err, errlen, "%s: %zu axes; at most %d", sw->source, sw->n_axes, SWP_MAX_AXES);
    return -1;
  }
  int64_t points = 1;
  for (size_t a = 0; a < sw->n_axes; a++) {
    const swp_axis *ax = &sw->axes[a];
    if (!ax->count) {
      swp_seterr(err, errlen, "%s: axis '%s' has no values", sw->source, ax->key);
      return -1;
    }
    if (points > SWP_MAX_POINTS / (int64_t)ax->count) {
      if (ax->line)
        snprintf(loc, sizeof loc, "%s:%d", sw->source, ax->line);
      else
        snprintf(loc, sizeof loc, "--grid %s=...", ax->key);
      swp_seterr(err, errlen,
                 "%s: %s: its %zu values take the grid past %lld points (the most a sweep may "
                 "have; use fewer values or replicates instead)",
                 loc, ax->key, ax->count, (long long)SWP_MAX_POINTS);
      return -1;
    }
    points *= (int64_t)ax->count;
  }
  if (sw->replicates < 1 || points > SWP_MAX_RUNS / sw->replicates) {
    swp_seterr(err, errlen, "%s: %lld points x %lld replicates is more than %lld runs",
               sw->source, (long long)points, (long long)sw->replicates, (long long)SWP_MAX_RUNS);
    return -1;
  }
  if (sw->screen_up_to && sw->screen_up_to <= sw->replicates) {
    swp_seterr(err, errlen, "%s: screen_up_to = %lld must be more than replicates = %lld "
               "(sequential screening adds replicates up to it), or off", sw->source,
               (long long)sw->screen_up_to, (long long)sw->replicates);
    return -1;
  }
  sw->n_points = points;
  sw->ticks = 0;
  sw->shard_queues = 0;
  sw->services = 0;
  memset(&sw->run_memory, 0, sizeof sw->run_memory);
  memset(sw->axis_live, 0, sizeof sw->axis_live);
  size_t live_left = sw->n_axes; /* axes not yet seen live: once seen, not asked again */
  double phys = physical_memory();
  for (int64_t p = 0; p < points; p++) {
    eng_config cfg;
    int rc = swp_sweep_point_config(sw, p, &cfg, msg, sizeof msg);
    if (!rc) rc = eng_config_validate(&cfg, msg, sizeof msg);
    int32_t ticks = rc ? 0 : eng_config_ticks(&cfg);
    eng_memory mem;
    if (!rc) {
      int32_t row_ticks = swp_record_row_ticks(sw, cfg.tick_ms);
      eng_run_memory(&cfg, row_ticks >= 0 ? row_ticks : 1, &mem); /* (a bad every= fails below) */
      rc = memory_check(&cfg, &mem, row_ticks, phys, msg, sizeof msg);
    }
    if (!rc && p == 0) sw->tick_ms = cfg.tick_ms;
    if (!rc && cfg.tick_ms != sw->tick_ms) {
      snprintf(msg, sizeof msg,
               "tick_ms must be the same at every grid point (the /ticks datasets share one "
               "time axis); got %g and %g",
               sw->tick_ms, cfg.tick_ms);
      rc = -1;
    }
    if (rc) {
      problem_locate(sw, msg, loc, sizeof loc);
      if (sw->n_axes) {
        /* Described only here: formatting every point would double the
         * cost of checking a large grid. */
        char where[256];
        swp_sweep_point_describe(sw, p, where, sizeof where);
        swp_seterr(err, errlen, "%s: grid point %lld (%s): %s", loc, (long long)p, where, msg);
      } else {
        swp_seterr(err, errlen, "%s: %s", loc, msg);
      }
      return -1;
    }
    for (size_t a = 0; live_left && a < sw->n_axes; a++)
      if (!sw->axis_live[a] && eng_setting_live(&cfg, sw->axes[a].key, NULL, 0)) {
        sw->axis_live[a] = 1;
        live_left--;
      }
    eng_memory_max(&sw->run_memory, &mem);
    if (ticks > sw->ticks) sw->ticks = ticks;
    if (cfg.record_shard_queues && cfg.shards > sw->shard_queues) sw->shard_queues = cfg.shards;
    if (service_names_check(sw, p, &cfg, msg, sizeof msg)) {
      swp_seterr(err, errlen, "%s: %s", sw->source, msg);
      return -1;
    }
  }
  /* Summary files store no per-tick rows, so no per-shard or per-service ones either. */
  if (sw->record == SWP_RECORD_SUMMARY) sw->shard_queues = sw->services = 0;
  if (points && swp_record_check(sw, msg, sizeof msg)) {
    if (sw->record_line) swp_seterr(err, errlen, "%s:%d: %s", sw->source, sw->record_line, msg);
    else swp_seterr(err, errlen, "%s: %s", sw->source, msg);
    return -1;
  }
  if (swp__telemetry_digests(sw, err, errlen)) return -1;
  sw->checked = 1;
  return 0;
}

int swp_sweep_dead_axes(const swp_sweep *sw, char *err, size_t errlen) {
  int dead = 0;
  size_t used = 0;
  if (err && errlen) err[0] = 0;
  if (!sw->checked || !sw->n_points) return 0;
  eng_config cfg;
  char msg[512];
  if (swp_sweep_point_config(sw, 0, &cfg, msg, sizeof msg)) return 0;
  for (size_t a = 0; a < sw->n_axes; a++) {
    if (sw->axis_live[a]) continue;
    const swp_axis *ax = &sw->axes[a];
    char why[400], loc[300];
    eng_setting_live(&cfg, ax->key, why, sizeof why);
    if (ax->line)
      snprintf(loc, sizeof loc, "%s:%d", sw->source, ax->line);
    else
      snprintf(loc, sizeof loc, "--grid %s=%s", ax->key, ax->spec);
    if (err && used < errlen)
      used += (size_t)snprintf(err + used, errlen - used,
                               "%s%s: %s: the axis cannot change any run: %s%s", dead ? "\n" : "",
                               loc, ax->key, why, sw->n_points > 1 ? " (at every grid point)" : "");
    dead++;
  }
  return dead;
}
