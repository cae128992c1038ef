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
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swp_internal.h"

void swp_seterr(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

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

/* lin(START, STOP, N) / log(START, STOP, N): appends N formatted numbers. */
static int expand_range(const eng_setting *s, const char *item, strlist *out, char *err,
                        size_t errlen) {
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

/* Two values of s are the same setting when they leave a config equal. */
static int values_equal(const eng_setting *s, const eng_config *x, const eng_config *y) {
  const char *fx = (const char *)x + s->offset, *fy = (const char *)y + s->offset;
  switch (s->type) {
  case ENG_SET_WINDOWS: {
    const eng_windows *a = (const eng_windows *)fx, *b = (const eng_windows *)fy;
    if (a->count != b->count) return 0;
    for (int i = 0; i < a->count; i++)
      if (a->w[i].start_ms != b->w[i].start_ms || a->w[i].duration_ms != b->w[i].duration_ms)
        return 0;
    return 1;
  }
  case ENG_SET_PRESET: return !memcmp(x, y, sizeof *x); /* both from the same defaults */
  default: {
    char bx[256], by[256];
    eng_config_get(x, s->key, bx, sizeof bx);
    eng_config_get(y, s->key, by, sizeof by);
    return !strcmp(bx, by);
  }
  }
}

int swp_axis_expand(swp_axis *ax, const char *spec, char *err, size_t errlen) {
  const eng_setting *s = eng_settings_find(ax->key);
  if (!s) {
    swp_seterr(err, errlen, "unknown setting '%s'", ax->key);
    return -1;
  }
  strlist items = {0}, vals = {0};
  eng_config *cfgs = NULL;
  int rc = -1;
  const char *p = spec;
  while (isspace((unsigned char)*p)) p++;
  if (!*p) {
    swp_seterr(err, errlen, "%s: empty axis (give at least one value)", s->key);
    return -1;
  }
  if (split_items(spec, &items, err, errlen)) goto out;
  for (size_t i = 0; i < items.n; i++) {
    if (is_range(items.v[i])) {
      if (s->type != ENG_SET_INT && s->type != ENG_SET_INT64 && s->type != ENG_SET_DOUBLE &&
          s->type != ENG_SET_DOUBLE_INF) {
        swp_seterr(err, errlen, "%s: %s ranges need a numeric setting", s->key, items.v[i]);
        goto out;
      }
      if (expand_range(s, items.v[i], &vals, err, errlen)) goto out;
    } else if (strlist_push(&vals, items.v[i], strlen(items.v[i]))) {
      swp_seterr(err, errlen, "out of memory");
      goto out;
    }
  }
  cfgs = malloc(vals.n * sizeof *cfgs);
  char **norm = calloc(vals.n, sizeof *norm);
  if (!cfgs || !norm) {
    free(norm);
    swp_seterr(err, errlen, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < vals.n; i++) {
    eng_config_defaults(&cfgs[i]);
    if (eng_config_set(&cfgs[i], s->key, vals.v[i], err, errlen)) goto fail_norm;
    for (size_t j = 0; j < i; j++)
      if (values_equal(s, &cfgs[i], &cfgs[j])) {
        swp_seterr(err, errlen, "%s: value '%s' appears twice in the axis", s->key, vals.v[i]);
        goto fail_norm;
      }
    char buf[512];
    if (s->type == ENG_SET_WINDOWS || s->type == ENG_SET_PRESET)
      snprintf(buf, sizeof buf, "%s", vals.v[i]);
    else
      eng_config_get(&cfgs[i], s->key, buf, sizeof buf);
    norm[i] = strdup(buf);
    if (!norm[i]) {
      swp_seterr(err, errlen, "out of memory");
      goto fail_norm;
    }
  }
  /* The spec as items joined by ", " (ranges kept as written). */
  size_t total = 1;
  for (size_t i = 0; i < items.n; i++) total += strlen(items.v[i]) + 2;
  char *joined = malloc(total);
  if (!joined) {
    swp_seterr(err, errlen, "out of memory");
    goto fail_norm;
  }
  joined[0] = 0;
  for (size_t i = 0; i < items.n; i++) {
    if (i) strcat(joined, ", ");
    strcat(joined, items.v[i]);
  }
  swp_axis_clear(ax);
  ax->spec = joined;
  ax->values = norm;
  ax->count = vals.n;
  rc = 0;
  goto out;
fail_norm:
  for (size_t i = 0; i < vals.n; i++) free(norm[i]);
  free(norm);
out:
  free(cfgs);
  strlist_free(&items);
  strlist_free(&vals);
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

/* The line of the sweep file where key is set, for messages (0 if none). */
static int line_of_key(const swp_sweep *sw, const char *msg) {
  char key[64];
  size_t n = 0;
  while (msg[n] && (isalnum((unsigned char)msg[n]) || msg[n] == '_') && n < sizeof key - 1) {
    key[n] = msg[n];
    n++;
  }
  key[n] = 0;
  if (msg[n] != ':' && msg[n] != ' ') return 0;
  for (size_t a = 0; a < sw->n_axes; a++)
    if (!strcmp(sw->axes[a].key, key)) return sw->axes[a].line;
  for (size_t i = 0; i < sw->n_settings; i++)
    if (!strcmp(sw->settings[i].key, key)) return sw->settings[i].line;
  return 0;
}

int swp_sweep_check(swp_sweep *sw, char *err, size_t errlen) {
  char msg[512];
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
    if (!sw->axes[a].count) {
      swp_seterr(err, errlen, "%s: axis '%s' has no values", sw->source, sw->axes[a].key);
      return -1;
    }
    if (points > SWP_MAX_RUNS / (int64_t)sw->axes[a].count) {
      swp_seterr(err, errlen, "%s: the grid has more than %lld points", sw->source,
                 (long long)SWP_MAX_RUNS);
      return -1;
    }
    points *= (int64_t)sw->axes[a].count;
  }
  if (sw->replicates < 1 || points > SWP_MAX_RUNS / sw->replicates) {
    swp_seterr(err, errlen, "%s: %lld points x %lld replicates is more than %lld runs",
               sw->source, (long long)points, (long long)sw->replicates, (long long)SWP_MAX_RUNS);
    return -1;
  }
  sw->n_points = points;
  sw->ticks = 0;
  for (int64_t p = 0; p < points; p++) {
    eng_config cfg;
    char where[256];
    swp_sweep_point_describe(sw, p, where, sizeof where);
    int rc = swp_sweep_point_config(sw, p, &cfg, msg, sizeof msg);
    if (!rc) rc = eng_config_validate(&cfg, msg, sizeof msg);
    if (rc) {
      int line = line_of_key(sw, msg);
      char loc[300];
      if (line)
        snprintf(loc, sizeof loc, "%s:%d", sw->source, line);
      else
        snprintf(loc, sizeof loc, "%s", sw->source);
      if (sw->n_axes)
        swp_seterr(err, errlen, "%s: grid point %lld (%s): %s", loc, (long long)p, where, msg);
      else
        swp_seterr(err, errlen, "%s: %s", loc, msg);
      return -1;
    }
    int32_t ticks = eng_config_ticks(&cfg);
    if (p == 0) sw->tick_ms = cfg.tick_ms;
    if (cfg.tick_ms != sw->tick_ms) {
      swp_seterr(err, errlen,
                 "%s: tick_ms must be the same at every grid point (the /ticks datasets share "
                 "one time axis); got %g and %g",
                 sw->source, sw->tick_ms, cfg.tick_ms);
      return -1;
    }
    if (ticks > sw->ticks) sw->ticks = ticks;
  }
  sw->checked = 1;
  return 0;
}
