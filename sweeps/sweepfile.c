/*
 * sweepfile.c — reads sweep files (grammar in swp.h), applies command-line
 * overrides and prints the effective sweep back as INI text.
 *
 * libinih does the INI syntax, but Debian builds it without line numbers in
 * the handler and with a 200-byte line buffer, so we feed it through our own
 * reader (ini_parse_stream): the reader counts lines, refuses over-long lines
 * (which inih would silently split) and checks section names itself, since
 * inih never reports an empty section. The handler only records entries
 * (with their line); values are validated after the whole file is read, so
 * indented continuation lines can extend a value first.
 *
 * The effective text (swp_sweep_format) must parse back to the same sweep
 * (tests/fuzz/fuzz_sweepfile.c asserts it): it wraps long values only at a
 * single blank (or ", " in lists) before text that may start a
 * continuation line, and command-line values that no sweep file could hold
 * (control characters, " ;", a word longer than a line) are refused.
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swp_internal.h"

/* ---- sweep lifecycle ---- */

void swp_sweep_init(swp_sweep *sw) {
  memset(sw, 0, sizeof *sw);
  sw->replicates = SWP_DEFAULT_REPLICATES;
  sw->seed = SWP_DEFAULT_SEED;
  eng_config_defaults(&sw->base);
}

void swp_sweep_free(swp_sweep *sw) {
  for (size_t i = 0; i < sw->n_settings; i++) {
    free(sw->settings[i].key);
    free(sw->settings[i].value);
  }
  for (size_t a = 0; a < sw->n_axes; a++) {
    swp_axis_clear(&sw->axes[a]);
    free(sw->axes[a].key);
  }
  free(sw->settings);
  free(sw->axes);
  free(sw->source);
  free(sw->source_text);
  free(sw->name);
  free(sw->description);
  free(sw->scenario_axes);
  free(sw->telemetry_digests);
  free(sw->tunable_axes);
  memset(sw, 0, sizeof *sw);
}

/* ---- parsing ---- */

enum { SEC_NONE, SEC_SWEEP, SEC_SCENARIO, SEC_GRID, SEC_UNKNOWN };
static const char *const section_names[] = {"", "sweep", "scenario", "grid"};
static const char *const sweep_keys[] = {"name", "description", "replicates", "seed", "crn",
                                         "refine", "screen_up_to", "scenario_axes",
                                         "tunable_axes", "telemetry_digests", "record",
                                         "record_metrics", NULL};

/* A raw entry as read: validated after the whole file is read. */
typedef struct entry {
  int section;
  char *key;
  char *value;
  int line;
} entry;

typedef struct parse_ctx {
  const char *source;
  const char *p;        /* reader cursor */
  int line;             /* line last handed to inih */
  int indented;         /* that line starts with blanks and is not a comment */
  entry *entries;
  size_t n, cap;
  int last;             /* index of the entry the last handler call touched, -1 none */
  int fail_line;        /* first error we found (0 none) */
  char msg[512];
} parse_ctx;

static int fail(parse_ctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(parse_ctx *c, int line, const char *fmt, ...) {
  if (c->fail_line) return 0;
  c->fail_line = line;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg, sizeof c->msg, fmt, ap);
  va_end(ap);
  return 0;
}

const char *const *swp_sweep_keys(void) { return sweep_keys; }

/* "name, description, ... or tunable_axes", for a message. */
static void sweep_keys_describe(char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; sweep_keys[i] && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s",
                             !i ? "" : sweep_keys[i + 1] ? ", " : " or ", sweep_keys[i]);
}

/* Call graphs: [service NAME] and [call A->B] hold scenario settings of
 * one service or edge, read as "NAME.key" and "A->B.key" (the engine's
 * graph settings check the names). Returns 1 and the key prefix, 0 for
 * another section, -1 for a graph section without its name. */
static int graph_section(const char *name, char *prefix, size_t len) {
  const char *rest = NULL;
  if (!strncmp(name, "service", 7) && (!name[7] || name[7] == ' ')) rest = name + 7;
  else if (!strncmp(name, "call", 4) && (!name[4] || name[4] == ' ')) rest = name + 4;
  if (!rest) return 0;
  while (*rest == ' ') rest++;
  size_t n = strlen(rest);
  while (n && rest[n - 1] == ' ') n--;
  if (!n || n + 2 > len || memchr(rest, ' ', n) || memchr(rest, '.', n) ||
      (name[0] == 'c') != (strstr(rest, "->") != NULL))
    return -1;
  memcpy(prefix, rest, n);
  prefix[n] = '.';
  prefix[n + 1] = 0;
  return 1;
}

static int section_lookup(const char *name) {
  for (int i = SEC_SWEEP; i <= SEC_GRID; i++)
    if (!strcmp(name, section_names[i])) return i;
  char prefix[80];
  if (graph_section(name, prefix, sizeof prefix) == 1) return SEC_SCENARIO;
  return SEC_UNKNOWN;
}

/* fgets for a string that counts lines and checks section headers. */
static char *reader(char *str, int num, void *stream) {
  parse_ctx *c = stream;
  if (!*c->p || c->fail_line) return NULL;
  const char *nl = strchr(c->p, '\n');
  size_t len = nl ? (size_t)(nl - c->p) + 1 : strlen(c->p);
  c->line++;
  size_t content = len - (nl ? 1 : 0);
  if (content > 0 && c->p[content - 1] == '\r') content--;
  if (content > SWP_MAX_LINE || len + 1 > (size_t)num) {
    fail(c, c->line, "line longer than %d characters (continue a long list on indented lines)",
         SWP_MAX_LINE);
    return NULL;
  }
  memcpy(str, c->p, len);
  str[len] = 0;
  c->p += len;
  const char *s = str;
  if (c->line == 1 && !memcmp(s, "\xEF\xBB\xBF", 3)) s += 3; /* inih skips a BOM there too */
  const char *bol = s;
  /* Blanks as inih sees them (isspace), so "indented" means what it means to inih. */
  while (isspace((unsigned char)*s)) s++;
  int blank = !*s;
  int comment = *s == ';' || *s == '#';
  c->indented = s > bol && !blank && !comment;
  if (*s == '[' && s > bol) {
    fail(c, c->line, "a section header must start at the beginning of its line");
    return NULL;
  }
  if (*s == '[') {
    const char *e = strchr(s, ']');
    if (e) {
      char name[64];
      size_t n = (size_t)(e - s - 1);
      if (n >= sizeof name) n = sizeof name - 1;
      memcpy(name, s + 1, n);
      name[n] = 0;
      char prefix[80];
      if (graph_section(name, prefix, sizeof prefix) < 0) {
        fail(c, c->line,
             "[%s] needs its name: [service NAME] for a service, [call A->B] for its calls",
             name);
        return NULL;
      }
      if (section_lookup(name) == SEC_UNKNOWN) {
        static const char *const known[] = {"sweep", "scenario", "grid", NULL};
        const char *best = eng_suggest(name, known, (size_t)-1);
        if (best && *name)
          fail(c, c->line, "unknown section [%s] (did you mean [%s]?)", name, best);
        else
          fail(c, c->line,
               "unknown section [%s] (expected [sweep], [scenario], [grid], [service NAME] or "
               "[call A->B])",
               name);
        return NULL;
      }
    }
  }
  return str;
}

static int find_entry(const parse_ctx *c, int section, const char *key) {
  for (size_t i = 0; i < c->n; i++)
    if (c->entries[i].section == section && !strcmp(c->entries[i].key, key)) return (int)i;
  return -1;
}

static int is_sweep_key(const char *key) {
  for (int i = 0; sweep_keys[i]; i++)
    if (!strcmp(key, sweep_keys[i])) return 1;
  return 0;
}

/* An indented "key = value" line is a continuation for inih; say so. */

static int append_continuation(parse_ctx *c, entry *e, const char *raw) {
  /* This inih passes continuation lines on with their inline comment: cut
   * it as it does on the first line (a ';' after a blank), so that
   * "   50, 150 ; big" means what "vnodes = 10 ; small" does. */
  char buf[SWP_MAX_LINE + 8];
  snprintf(buf, sizeof buf, "%s", raw);
  for (char *p = buf + 1; *p; p++)
    if (*p == ';' && isspace((unsigned char)p[-1])) {
      *p = 0;
      break;
    }
  for (size_t n = strlen(buf); n > 0 && isspace((unsigned char)buf[n - 1]);) buf[--n] = 0;
  if (!*buf) return 1; /* a comment only */
  const char *value = buf;
  if (swp__looks_like_assignment(value))
    return fail(c, c->line,
                "indented line continues the value of '%s' (line %d); remove the indentation "
                "to start a new key",
                e->key, e->line);
  size_t a = strlen(e->value), b = strlen(value);
  char *v = realloc(e->value, a + b + 3);
  if (!v) return fail(c, c->line, "out of memory");
  /* Lists continue with more items; other values with more words. */
  const char *sep = " ";
  if (e->section == SEC_GRID) {
    while (a > 0 && (v[a - 1] == ',' || v[a - 1] == ' ')) a--;
    while (*value == ',' || *value == ' ') value++;
    sep = ", ";
  }
  v[a] = 0;
  if (a > 0) strcat(v, sep); /* "key =" then the value on indented lines: no leading blank */
  strcat(v, value);
  e->value = v;
  return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
  parse_ctx *c = user;
  if (c->fail_line) return 1; /* report only the first problem */
  int sec = section_lookup(section);
  char prefix[80], dotted[160];
  if (graph_section(section, prefix, sizeof prefix) == 1) {
    size_t pl = strlen(prefix), nl = strlen(name);
    if (pl + nl >= sizeof dotted)
      return fail(c, c->line, "'%.60s...' in [%s] is no setting (too long)", name, section);
    /* memcpy, not snprintf: the length is checked, and gcc's
     * -Wformat-truncation cannot see that */
    memcpy(dotted, prefix, pl);
    memcpy(dotted + pl, name, nl + 1);
    name = dotted;
  }
  if (!*section) sec = SEC_NONE;
  if (c->indented && c->last >= 0 && c->entries[c->last].section == sec &&
      !strcmp(c->entries[c->last].key, name))
    return append_continuation(c, &c->entries[c->last], value);
  if (sec == SEC_NONE)
    return fail(c, c->line, "'%s' is outside a section (put it under [sweep], [scenario] or [grid])",
                name);
  if (sec == SEC_UNKNOWN) /* the reader checks headers; this catches any it could not see */
    return fail(c, c->line, "'%s' is in unknown section [%s]", name, section);
  if (sec == SEC_SWEEP && !is_sweep_key(name)) {
    if (eng_settings_find(name))
      return fail(c, c->line, "'%s' is a scenario setting: put it in [scenario] or [grid]", name);
    const char *sug = eng_suggest(name, sweep_keys, (size_t)-1);
    if (sug)
      return fail(c, c->line, "unknown key '%s' in [sweep] (did you mean '%s'?)", name, sug);
    char keys[256];
    sweep_keys_describe(keys, sizeof keys);
    return fail(c, c->line, "unknown key '%s' in [sweep] (expected %s)", name, keys);
  }
  if (sec != SEC_SWEEP && !eng_settings_find(name) && strchr(name, '.'))
    return fail(c, c->line,
                "unknown setting '%s' in [%s] (a service has its server settings, calls, at "
                "and error_rate; a call its client policy and fanout: docs/call-graphs.md)",
                name, section);
  if (sec != SEC_SWEEP && !eng_settings_find(name)) {
    if (is_sweep_key(name))
      return fail(c, c->line, "'%s' belongs in [sweep]", name);
    const char *sug = eng_settings_suggest(name);
    if (sug)
      return fail(c, c->line, "unknown setting '%s' in [%s] (did you mean '%s'?)", name,
                  section_names[sec], sug);
    sug = eng_suggest(name, sweep_keys, (size_t)-1);
    if (sug)
      return fail(c, c->line, "unknown setting '%s' in [%s] (did you mean '%s' in [sweep]?)",
                  name, section_names[sec], sug);
    return fail(c, c->line,
                "unknown setting '%s' in [%s] (see 'stormsweep sim --list-settings')", name,
                section_names[sec]);
  }
  int dup = find_entry(c, sec, name);
  if (dup >= 0) {
    if (sec == SEC_GRID)
      return fail(c, c->line, "duplicate axis '%s' (first at line %d)", name,
                  c->entries[dup].line);
    return fail(c, c->line, "duplicate key '%s' in [%s] (first at line %d)", name,
                section_names[sec], c->entries[dup].line);
  }
  int other = sec == SEC_GRID ? find_entry(c, SEC_SCENARIO, name)
              : sec == SEC_SCENARIO ? find_entry(c, SEC_GRID, name)
                                    : -1;
  if (other >= 0)
    return fail(c, c->line, "'%s' is both a [scenario] setting and a [grid] axis (lines %d and %d)",
                name, c->entries[other].line, c->line);
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 32;
    entry *v = realloc(c->entries, cap * sizeof *v);
    if (!v) return fail(c, c->line, "out of memory");
    c->entries = v;
    c->cap = cap;
  }
  entry *e = &c->entries[c->n];
  e->section = sec;
  e->key = strdup(name);
  e->value = strdup(value);
  e->line = c->line;
  if (!e->key || !e->value) {
    free(e->key);
    free(e->value);
    return fail(c, c->line, "out of memory");
  }
  c->last = (int)c->n++;
  return 1;
}

static int parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  while (isspace((unsigned char)*s)) s++;
  if (!isdigit((unsigned char)*s)) return -1;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  while (isspace((unsigned char)*end)) end++;
  if (*end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int swp_parse_seed(const char *s, uint64_t *out) {
  while (isspace((unsigned char)*s)) s++;
  if (!isdigit((unsigned char)*s)) return -1;
  /* Decimal, or hexadecimal after 0x: a leading zero is not octal. */
  int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (hex && !isxdigit((unsigned char)s[2])) return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
  while (isspace((unsigned char)*end)) end++;
  if (*end || errno) return -1;
  *out = v;
  return 0;
}

/* Whether the comma-separated list holds name (blanks around items ignored). */
static int list_has(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    const char *e = p;
    while (*e && *e != ',') e++;
    const char *t = e;
    while (t > p && (t[-1] == ' ' || t[-1] == '\t')) t--;
    if ((size_t)(t - p) == n && !strncmp(p, name, n)) return 1;
    p = e;
  }
  return 0;
}

/* scenario_axes / tunable_axes: a list of setting keys, normalised to
 * "a, b"; "none" (or nothing) is an empty list. */
static int role_list_apply(swp_sweep *sw, const char *key, const char *value, char *msg,
                           size_t len) {
  char **dst = !strcmp(key, "scenario_axes") ? &sw->scenario_axes : &sw->tunable_axes;
  const char *other = dst == &sw->scenario_axes ? sw->tunable_axes : sw->scenario_axes;
  size_t cap = strlen(value) + 1;
  char *out = calloc(cap + 2, 1), *item = malloc(cap);
  if (!out || !item) {
    free(out);
    free(item);
    swp_seterr(msg, len, "out of memory");
    return -1;
  }
  size_t used = 0;
  for (const char *p = value; *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    if (!*p) break;
    const char *e = p;
    while (*e && *e != ',') e++;
    const char *t = e;
    while (t > p && (t[-1] == ' ' || t[-1] == '\t')) t--;
    memcpy(item, p, (size_t)(t - p));
    item[t - p] = '\0';
    p = e;
    if (!strcmp(item, "none")) continue;
    if (!eng_settings_find(item)) {
      const char *sug = eng_settings_suggest(item);
      swp_seterr(msg, len, "%s: '%s' is not a setting%s%s%s", key, item,
                 sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
      goto bad;
    }
    if (list_has(other, item)) {
      swp_seterr(msg, len, "%s: '%s' is also listed in %s", key, item,
                 dst == &sw->scenario_axes ? "tunable_axes" : "scenario_axes");
      goto bad;
    }
    if (list_has(out, item)) continue;
    used += (size_t)snprintf(out + used, cap + 2 - used, "%s%s", used ? ", " : "", item);
  }
  free(item);
  free(*dst);
  *dst = out;
  return 0;
bad:
  free(item);
  free(out);
  return -1;
}

int swp_sweep_axis_is_scenario(const swp_sweep *sw, const char *key) {
  if (list_has(sw->scenario_axes, key)) return 1;
  if (list_has(sw->tunable_axes, key)) return 0;
  return eng_setting_role_find(key) == ENG_ROLE_SCENARIO;
}

/* Applies a [sweep] key; msg gets "key: problem". */
static int sweep_key_apply(swp_sweep *sw, const char *key, const char *value, char *msg,
                           size_t len) {
  if (!strcmp(key, "replicates")) {
    int64_t r;
    if (parse_int64(value, 1, 1000000000, &r)) {
      swp_seterr(msg, len, "replicates: expected a whole number from 1 to 1000000000, got '%s'",
                 value);
      return -1;
    }
    sw->replicates = r;
  } else if (!strcmp(key, "screen_up_to")) {
    int64_t r = 0;
    if (strcmp(value, "off") && strcmp(value, "0") && parse_int64(value, 2, 1000000000, &r)) {
      swp_seterr(msg, len, "screen_up_to: expected off or a whole number from 2 to 1000000000 "
                 "(more than replicates), got '%s'", value);
      return -1;
    }
    sw->screen_up_to = r;
  } else if (!strcmp(key, "seed")) {
    uint64_t s;
    if (swp_parse_seed(value, &s)) {
      swp_seterr(msg, len, "seed: expected a whole number from 0 to 2^64-1 (decimal or 0x hex), "
                           "got '%s'", value);
      return -1;
    }
    sw->seed = s;
  } else if (!strcmp(key, "crn")) {
    if (strcmp(value, "on") && strcmp(value, "off")) {
      swp_seterr(msg, len, "crn: expected on or off, got '%s'", value);
      return -1;
    }
    sw->crn = !strcmp(value, "on");
  } else if (!strcmp(key, "refine")) {
    if (!strcmp(value, "on") || !strcmp(value, "yes") || !strcmp(value, "true") ||
        !strcmp(value, "1"))
      sw->refine = 1;
    else if (!strcmp(value, "off") || !strcmp(value, "no") || !strcmp(value, "false") ||
             !strcmp(value, "0"))
      sw->refine = 0;
    else {
      swp_seterr(msg, len, "refine: expected on or off, got '%s'", value);
      return -1;
    }
  } else if (!strcmp(key, "scenario_axes") || !strcmp(key, "tunable_axes")) {
    return role_list_apply(sw, key, value, msg, len);
  } else if (!strcmp(key, "record") || !strcmp(key, "record_metrics")) {
    return swp_record_apply(sw, key, value, msg, len);
  } else {
    /* telemetry_digests as a stored text says it; swp_sweep_check recomputes it */
    char **dst = !strcmp(key, "name")                ? &sw->name
                 : !strcmp(key, "telemetry_digests") ? &sw->telemetry_digests
                                                     : &sw->description;
    char *v = strdup(value);
    if (!v) {
      swp_seterr(msg, len, "out of memory");
      return -1;
    }
    free(*dst);
    *dst = v;
  }
  return 0;
}

static int settings_push(swp_sweep *sw, const char *key, const char *value, int line) {
  swp_setting *v = realloc(sw->settings, (sw->n_settings + 1) * sizeof *v);
  if (!v) return -1;
  sw->settings = v;
  swp_setting *s = &v[sw->n_settings];
  s->key = strdup(key);
  s->value = strdup(value);
  s->line = line;
  if (!s->key || !s->value) {
    free(s->key);
    free(s->value);
    return -1;
  }
  sw->n_settings++;
  return 0;
}

static swp_axis *axes_push(swp_sweep *sw, const char *key, int line) {
  swp_axis *v = realloc(sw->axes, (sw->n_axes + 1) * sizeof *v);
  if (!v) return NULL;
  sw->axes = v;
  swp_axis *a = &v[sw->n_axes];
  memset(a, 0, sizeof *a);
  a->key = strdup(key);
  if (!a->key) return NULL;
  a->line = line;
  sw->n_axes++;
  return a;
}

/* Validates the recorded entries in file order and moves them into sw. */
static int entries_apply(swp_sweep *sw, parse_ctx *c, char *err, size_t errlen) {
  char msg[512];
  eng_config scratch;
  eng_config_defaults(&scratch);
  /* The grid's size first, from counts alone: a text of a few hundred
   * bytes must not make a million values per axis before it is refused. */
  int64_t points = 1;
  for (size_t i = 0; i < c->n; i++) {
    const entry *e = &c->entries[i];
    if (e->section != SEC_GRID) continue;
    int64_t n = swp_axis_count(e->key, e->value);
    if (n < 1) n = 1;
    if (points > SWP_MAX_POINTS / n) {
      swp_seterr(err, errlen,
                 "%s:%d: %s: its %lld values take the grid past %lld points (the most a sweep "
                 "may have; use fewer values or replicates instead)",
                 c->source, e->line, e->key, (long long)n, (long long)SWP_MAX_POINTS);
      return -1;
    }
    points *= n;
  }
  for (size_t i = 0; i < c->n; i++) {
    entry *e = &c->entries[i];
    int rc = 0;
    if (e->section == SEC_SWEEP) {
      if (!sw->sweep_line) sw->sweep_line = e->line;
      if (!strcmp(e->key, "record")) sw->record_line = e->line;
      rc = sweep_key_apply(sw, e->key, e->value, msg, sizeof msg);
    } else if (e->section == SEC_SCENARIO) {
      rc = eng_config_set(&scratch, e->key, e->value, msg, sizeof msg);
      if (!rc && settings_push(sw, e->key, e->value, e->line)) {
        swp_seterr(msg, sizeof msg, "out of memory");
        rc = -1;
      }
    } else {
      int64_t others = 1;
      for (size_t k = 0; k < sw->n_axes && others <= SWP_MAX_POINTS; k++)
        others *= sw->axes[k].count ? (int64_t)sw->axes[k].count : 1;
      swp_axis *a = axes_push(sw, e->key, e->line);
      if (!a) {
        swp_seterr(msg, sizeof msg, "out of memory");
        rc = -1;
      } else {
        rc = swp_axis_expand(a, e->value, others, msg, sizeof msg);
      }
    }
    if (rc) {
      swp_seterr(err, errlen, "%s:%d: %s", c->source, e->line, msg);
      return -1;
    }
  }
  return 0;
}

int swp_sweep_parse_string(swp_sweep *sw, const char *text, const char *source, char *err,
                           size_t errlen) {
  parse_ctx c = {0};
  c.source = source;
  c.p = text;
  c.last = -1;
  sw->source = strdup(source);
  sw->source_text = strdup(text);
  if (!sw->source || !sw->source_text) {
    swp_seterr(err, errlen, "%s: out of memory", source);
    return -1;
  }
  int rc = ini_parse_stream(reader, &c, handler, &c);
  int result = -1;
  if (rc > 0 && (!c.fail_line || rc < c.fail_line))
    swp_seterr(err, errlen, "%s:%d: expected '[section]' or 'key = value'", source, rc);
  else if (c.fail_line)
    swp_seterr(err, errlen, "%s:%d: %s", source, c.fail_line, c.msg);
  else if (rc < 0)
    swp_seterr(err, errlen, "%s: out of memory", source);
  else
    result = entries_apply(sw, &c, err, errlen);
  for (size_t i = 0; i < c.n; i++) {
    free(c.entries[i].key);
    free(c.entries[i].value);
  }
  free(c.entries);
  return result;
}

int swp_sweep_parse_file(swp_sweep *sw, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    swp_seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (len + 1 >= cap) {
      if (cap > (64u << 20)) {
        free(buf);
        fclose(f);
        swp_seterr(err, errlen, "%s: larger than 64 MiB; not a sweep file", path);
        return -1;
      }
      char *b = realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - 1 - len, f);
    len += got;
    if (got == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    free(buf);
    swp_seterr(err, errlen, "%s: cannot read%s", path, bad ? " (I/O error)" : " (out of memory)");
    return -1;
  }
  buf[len] = 0;
  if (memchr(buf, 0, len)) {
    free(buf);
    swp_seterr(err, errlen, "%s: contains NUL bytes; not a sweep file", path);
    return -1;
  }
  int rc = swp_sweep_parse_string(sw, buf, path, err, errlen);
  free(buf);
  return rc;
}

int swp_sweep_parse_seed_study(swp_sweep *sw, char *err, size_t errlen) {
  return swp_sweep_parse_string(sw, swp_seed_study_text(), "built-in seed study", err, errlen);
}

/* ---- command-line overrides ---- */

/* Splits "key=value" into trimmed parts, both into buffers. */
static int split_assignment(const char *s, char *key, size_t keylen, char *value,
                            size_t valuelen) {
  const char *eq = strchr(s, '=');
  if (!eq) return -1;
  const char *a = s, *b = eq;
  while (a < b && isspace((unsigned char)*a)) a++;
  while (b > a && isspace((unsigned char)b[-1])) b--;
  if (a == b || (size_t)(b - a) >= keylen) return -1;
  memcpy(key, a, (size_t)(b - a));
  key[b - a] = 0;
  a = eq + 1;
  b = a + strlen(a);
  while (a < b && isspace((unsigned char)*a)) a++;
  while (b > a && isspace((unsigned char)b[-1])) b--;
  if ((size_t)(b - a) >= valuelen) return -1;
  memcpy(value, a, (size_t)(b - a));
  value[b - a] = 0;
  return 0;
}

/* An override value ends up in the effective sweep text stored with the
 * results, which must parse back to the same sweep: refuse what a sweep-file
 * line cannot hold (a line break or other control character, or " ;", which
 * starts a comment). NULL when fine, else what is wrong. */
static const char *override_value_problem(const char *v) {
  for (const char *p = v; *p; p++) {
    if (iscntrl((unsigned char)*p) && *p != '\t') return "contains a control character";
    if (*p == ';' && p > v && isspace((unsigned char)p[-1]))
      return "contains ' ;', which would start a comment in the sweep file";
  }
  return NULL;
}

static void axis_remove(swp_sweep *sw, size_t i) {
  swp_axis_clear(&sw->axes[i]);
  free(sw->axes[i].key);
  memmove(&sw->axes[i], &sw->axes[i + 1], (sw->n_axes - i - 1) * sizeof *sw->axes);
  sw->n_axes--;
}

static void setting_remove(swp_sweep *sw, size_t i) {
  free(sw->settings[i].key);
  free(sw->settings[i].value);
  memmove(&sw->settings[i], &sw->settings[i + 1],
          (sw->n_settings - i - 1) * sizeof *sw->settings);
  sw->n_settings--;
}

static void unknown_key_message(const char *opt, const char *key, char *err, size_t errlen) {
  const char *sug = eng_settings_suggest(key);
  const char *sweep_sug = eng_suggest(key, sweep_keys, (size_t)-1);
  if (sug)
    swp_seterr(err, errlen, "%s: unknown setting '%s' (did you mean '%s'?)", opt, key, sug);
  else if (sweep_sug)
    swp_seterr(err, errlen, "%s: unknown setting '%s' (did you mean '%s'?)", opt, key, sweep_sug);
  else
    swp_seterr(err, errlen, "%s: unknown setting '%s' (see 'stormsweep sim --list-settings')", opt,
               key);
}


/* Whether key = value is a setting the sweep's scenario can take: set on
 * the scenario so far (a call edge's key needs its services and calls). */
static int scenario_value_check(const swp_sweep *sw, const char *key, const char *value,
                                char *msg, size_t len) {
  eng_config scratch;
  eng_config_defaults(&scratch);
  char ignore[256];
  for (size_t i = 0; i < sw->n_settings; i++)
    eng_config_set(&scratch, sw->settings[i].key, sw->settings[i].value, ignore, sizeof ignore);
  return eng_config_set(&scratch, key, value, msg, len);
}

/* --set after its text is split and checked. */
static int set_apply(swp_sweep *sw, const char *assignment, const char *key, const char *value,
                     char *err, size_t errlen) {
  char msg[512];
  sw->checked = 0;
  if (!is_sweep_key(key) && !eng_settings_find(key)) {
    unknown_key_message("--set", key, err, errlen);
    return -1;
  }
  if (!swp__wrapped_fits(key, value, 0)) {
    swp_seterr(err, errlen,
               "--set %s: the value has a word too long for a sweep-file line (at most %d "
               "characters)",
               key, SWP_MAX_LINE - 4);
    return -1;
  }
  if (is_sweep_key(key)) {
    if (sweep_key_apply(sw, key, value, msg, sizeof msg)) {
      swp_seterr(err, errlen, "--set %s: %s", assignment, msg);
      return -1;
    }
    return 0;
  }
  if (scenario_value_check(sw, key, value, msg, sizeof msg)) {
    swp_seterr(err, errlen, "--set %s: %s", assignment, msg);
    return -1;
  }
  for (size_t i = 0; i < sw->n_axes; i++)
    if (!strcmp(sw->axes[i].key, key)) axis_remove(sw, i--);
  for (size_t i = 0; i < sw->n_settings; i++)
    if (!strcmp(sw->settings[i].key, key)) setting_remove(sw, i--);
  /* Appended, so it applies after (and wins over) every file setting. */
  if (settings_push(sw, key, value, 0)) {
    swp_seterr(err, errlen, "--set %s: out of memory", assignment);
    return -1;
  }
  return 0;
}

int swp_sweep_scenario_set(swp_sweep *sw, const char *key, const char *value, char *err,
                           size_t errlen) {
  char msg[512];
  sw->checked = 0;
  if (is_sweep_key(key) || !eng_settings_find(key)) {
    swp_seterr(err, errlen, "%s: not a scenario setting", key);
    return -1;
  }
  if (!swp__wrapped_fits(key, value, 0)) {
    swp_seterr(err, errlen, "%s: the value is too long for a sweep-file line", key);
    return -1;
  }
  if (scenario_value_check(sw, key, value, msg, sizeof msg)) {
    swp_seterr(err, errlen, "%s", msg);
    return -1;
  }
  /* Replaces the file's line; the grid's axis of key (if any) still wins. */
  for (size_t i = 0; i < sw->n_settings; i++)
    if (!strcmp(sw->settings[i].key, key)) setting_remove(sw, i--);
  if (settings_push(sw, key, value, 0)) {
    swp_seterr(err, errlen, "%s: out of memory", key);
    return -1;
  }
  return 0;
}

int swp_sweep_override_set(swp_sweep *sw, const char *assignment, char *err, size_t errlen) {
  char key[128];
  size_t vlen = strlen(assignment) + 1;
  char *value = malloc(vlen);
  if (!value) {
    swp_seterr(err, errlen, "--set: out of memory");
    return -1;
  }
  int rc = -1;
  const char *problem;
  if (split_assignment(assignment, key, sizeof key, value, vlen))
    swp_seterr(err, errlen, "--set %s: expected KEY=VALUE", assignment);
  else if ((problem = override_value_problem(value)))
    swp_seterr(err, errlen, "--set %s: the value %s", key, problem);
  else
    rc = set_apply(sw, assignment, key, value, err, errlen);
  free(value);
  return rc;
}

/* --grid after its text is split and checked: replaces or appends the axis. */
static int grid_apply(swp_sweep *sw, const char *assignment, const char *key, const char *value,
                      char *msg, size_t msglen, char *err, size_t errlen) {
  sw->checked = 0;
  if (is_sweep_key(key)) {
    swp_seterr(err, errlen, "--grid %s: '%s' is not a scenario setting; use --set %s=...",
               assignment, key, key);
    return -1;
  }
  if (!eng_settings_find(key)) {
    unknown_key_message("--grid", key, err, errlen);
    return -1;
  }
  if (!*value) {
    swp_seterr(err, errlen, "--grid %s: empty axis (give at least one value)", assignment);
    return -1;
  }
  swp_axis fresh = {0};
  char keybuf[128];
  snprintf(keybuf, sizeof keybuf, "%s", key);
  fresh.key = keybuf;
  int64_t others = 1;
  for (size_t k = 0; k < sw->n_axes && others <= SWP_MAX_POINTS; k++)
    if (strcmp(sw->axes[k].key, key) != 0)
      others *= sw->axes[k].count ? (int64_t)sw->axes[k].count : 1;
  int erc = swp_axis_expand(&fresh, value, others, msg, msglen);
  if (erc == -2) {
    swp_seterr(err, errlen, "--grid %s=...: %s", key, msg);
    return -1;
  }
  if (erc) {
    swp_seterr(err, errlen, "--grid %s: %s", assignment, msg);
    return -1;
  }
  if (!swp__wrapped_fits(key, fresh.spec, 1)) {
    swp_axis_clear(&fresh);
    swp_seterr(err, errlen,
               "--grid %s: a value is too long for a sweep-file line (at most %d characters)", key,
               SWP_MAX_LINE - 4);
    return -1;
  }
  swp_axis *a = NULL;
  for (size_t i = 0; i < sw->n_axes; i++)
    if (!strcmp(sw->axes[i].key, key)) a = &sw->axes[i];
  if (!a) a = axes_push(sw, key, 0);
  if (!a) {
    swp_axis_clear(&fresh);
    swp_seterr(err, errlen, "--grid %s: out of memory", assignment);
    return -1;
  }
  swp_axis_clear(a);
  a->spec = fresh.spec;
  a->values = fresh.values;
  a->count = fresh.count;
  a->line = 0;
  for (size_t i = 0; i < sw->n_settings; i++)
    if (!strcmp(sw->settings[i].key, key)) setting_remove(sw, i--);
  return 0;
}

int swp_sweep_override_grid(swp_sweep *sw, const char *assignment, char *err, size_t errlen) {
  char key[128], msg[512];
  /* A list may be long (the effective text wraps it over several lines). */
  size_t vlen = strlen(assignment) + 1;
  char *value = malloc(vlen);
  if (!value) {
    swp_seterr(err, errlen, "--grid: out of memory");
    return -1;
  }
  int rc = -1;
  if (split_assignment(assignment, key, sizeof key, value, vlen)) {
    swp_seterr(err, errlen, "--grid %s: expected KEY=V1,V2,...", assignment);
    goto out;
  }
  const char *problem = override_value_problem(value);
  if (problem) {
    swp_seterr(err, errlen, "--grid %s: the value %s", key, problem);
    goto out;
  }
  rc = grid_apply(sw, assignment, key, value, msg, sizeof msg, err, errlen);
out:
  free(value);
  return rc;
}

/* ---- strings from files somebody else wrote ---- */

const char *swp_text_problem(const char *s, size_t max_len, int multiline) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = 0;
  while (p[n]) {
    if (n >= max_len) return "is too long";
    unsigned c = p[n];
    if (c < 0x80) {
      if ((c < 0x20 && !(multiline && (c == '\n' || c == '\t'))) || c == 0x7f)
        return "holds a control character";
      n++;
      continue;
    }
    /* The length and the smallest code point of each lead byte: anything
     * else (a stray continuation, an overlong form, a surrogate, past
     * U+10FFFF) is not UTF-8. */
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (!len) return "is not valid UTF-8";
    uint32_t cp = c & (0x7f >> len);
    for (size_t k = 1; k < len; k++) {
      if ((p[n + k] & 0xc0) != 0x80) return "is not valid UTF-8";
      cp = (cp << 6) | (p[n + k] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return "is not valid UTF-8";
    /* C1 controls, and the line separators and bidirectional overrides
     * that make a terminal show other text than the bytes say. */
    if (cp <= 0x9f || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
        (cp >= 0x2066 && cp <= 0x2069))
      return "holds a control character";
    if (n + len > max_len) return "is too long";
    n += len;
  }
  return NULL;
}
