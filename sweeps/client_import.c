/*
 * client_import.c — `--client FILE`: a gRPC service config or an Envoy
 * retry policy mapped onto engine settings (client_import.h,
 * docs/client-import.md).
 *
 * JSON is read by libjansson and YAML by libyaml; a YAML document is turned
 * into the same jansson tree, so one mapper serves both and an error names
 * the same path whatever the syntax. Protobuf's JSON mapping accepts both
 * lowerCamelCase and the proto's snake_case field names, so every field is
 * looked up under both spellings and reported as the file spells it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <yaml.h>

#include "client_import.h"
#include "swp.h"

/* ---- messages ------------------------------------------------------------ */

/* File text in a message: printable ASCII kept, anything else as \xNN, so a
 * hostile key or value cannot drive the terminal. */
static void safe_copy(char *dst, size_t len, const char *src, size_t max_in) {
  size_t o = 0;
  if (!len) return;
  for (size_t i = 0; src && src[i] && i < max_in; i++) {
    unsigned char ch = (unsigned char)src[i];
    if (ch >= 0x20 && ch < 0x7f) {
      if (o + 1 >= len) break;
      dst[o++] = (char)ch;
    } else {
      if (o + 4 >= len) break;
      snprintf(dst + o, len - o, "\\x%02X", ch);
      o += 4;
    }
  }
  dst[o] = 0;
}

typedef struct ictx {
  char name[256]; /* the file, made safe */
  swp_client_map *m;
  char *err;
  size_t errlen;
  char path[256];
  size_t plen;
  int camel; /* name an absent field in lowerCamelCase (gRPC's docs) or snake_case (Envoy's) */
} ictx;

static size_t path_push(ictx *c, const char *field) {
  size_t old = c->plen;
  char safe[96];
  safe_copy(safe, sizeof safe, field, 64);
  int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "%s%s", c->plen ? "." : "", safe);
  if (n > 0) c->plen = c->plen + (size_t)n < sizeof c->path ? c->plen + (size_t)n : sizeof c->path - 1;
  return old;
}

static size_t path_index(ictx *c, size_t i) {
  size_t old = c->plen;
  int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "[%zu]", i);
  if (n > 0) c->plen = c->plen + (size_t)n < sizeof c->path ? c->plen + (size_t)n : sizeof c->path - 1;
  return old;
}

static void path_pop(ictx *c, size_t old) {
  c->plen = old;
  c->path[old] = 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(ictx *c, const char *field, const char *fmt, ...) {
  char msg[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t old = field ? path_push(c, field) : c->plen;
  if (c->err && c->errlen) {
    if (c->plen)
      snprintf(c->err, c->errlen, "%s: %s: %s", c->name, c->path, msg);
    else
      snprintf(c->err, c->errlen, "%s: %s", c->name, msg);
  }
  path_pop(c, old);
  return -1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void note(ictx *c, const char *field, const char *fmt, ...) {
  swp_client_map *m = c->m;
  if (m->n_notes >= SWP_CLIENT_MAX_NOTES) return;
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t old = field ? path_push(c, field) : c->plen;
  snprintf(m->notes[m->n_notes++], sizeof m->notes[0], "%s: %s", c->plen ? c->path : "(top level)",
           msg);
  path_pop(c, old);
}

/* Appends (key, value) with the current path (plus field) as its source, or
 * with why as the source when the file does not state the value. */
static int entry(ictx *c, const char *key, const char *value, const char *field, const char *raw,
                 const char *why) {
  swp_client_map *m = c->m;
  if (m->n >= SWP_CLIENT_MAX_ENTRIES) return fail(c, NULL, "too many settings (internal limit)");
  swp_client_entry *e = &m->e[m->n++];
  snprintf(e->key, sizeof e->key, "%s", key);
  snprintf(e->value, sizeof e->value, "%s", value);
  if (why) {
    snprintf(e->source, sizeof e->source, "(%s)", why);
  } else {
    size_t old = field ? path_push(c, field) : c->plen;
    snprintf(e->source, sizeof e->source, "%s", c->path);
    path_pop(c, old);
  }
  safe_copy(e->raw, sizeof e->raw, raw ? raw : "", 48);
  return 0;
}

static int entry_num(ictx *c, const char *key, double v, const char *field, const char *raw,
                     const char *why) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.10g", v);
  return entry(c, key, buf, field, raw, why);
}

/* ---- YAML into a jansson tree ------------------------------------------ */

/* A plain YAML scalar's JSON type (the YAML 1.2 core schema: null, booleans,
 * integers, floats; .inf and .nan stay strings and fail as numbers later).
 * Quoted scalars are strings. */
static json_t *yaml_scalar(const yaml_event_t *ev) {
  const char *s = (const char *)ev->data.scalar.value;
  size_t n = ev->data.scalar.length;
  if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return json_stringn(s, n);
  if (strlen(s) != n) return json_stringn(s, n); /* a NUL inside: a string, refused later */
  if (!n || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
    return json_null();
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return json_true();
  if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return json_false();
  const char *p = s + (*s == '-' || *s == '+');
  int digits = 0, other = 0;
  for (const char *q = p; *q; q++) {
    if (isdigit((unsigned char)*q)) digits++;
    else if (*q == '.' || *q == 'e' || *q == 'E' || *q == '-' || *q == '+') other++;
    else return json_stringn(s, n);
  }
  if (!digits) return json_stringn(s, n);
  char *end;
  errno = 0;
  if (!other) {
    long long v = strtoll(s, &end, 10);
    if (!*end && !errno) return json_integer(v);
  }
  double d = strtod(s, &end);
  if (!*end && isfinite(d)) return json_real(d);
  return json_stringn(s, n);
}

typedef struct yctx {
  yaml_parser_t p;
  ictx *c;
} yctx;

static int yaml_fail(yctx *y, const yaml_event_t *ev, const char *what) {
  size_t line = ev ? ev->start_mark.line + 1 : y->p.problem_mark.line + 1;
  size_t col = ev ? ev->start_mark.column + 1 : y->p.problem_mark.column + 1;
  if (y->c->err && y->c->errlen)
    snprintf(y->c->err, y->c->errlen, "%s: line %zu column %zu: %s", y->c->name, line, col, what);
  return -1;
}

static int yaml_next(yctx *y, yaml_event_t *ev) {
  if (yaml_parser_parse(&y->p, ev)) return 0;
  char what[256];
  safe_copy(what, sizeof what, y->p.problem ? y->p.problem : "malformed YAML", 200);
  if (y->p.context) {
    char ctx[128];
    safe_copy(ctx, sizeof ctx, y->p.context, 100);
    size_t n = strlen(what);
    snprintf(what + n, sizeof what - n, " (%s)", ctx);
  }
  if (y->p.error == YAML_READER_ERROR) { /* bad encoding: libyaml gives an offset, no line */
    if (y->c->err && y->c->errlen)
      snprintf(y->c->err, y->c->errlen, "%s: byte %zu: %s (the file must be UTF-8 text)",
               y->c->name, y->p.problem_offset, what);
    return -1;
  }
  return yaml_fail(y, NULL, what);
}

/* The node that starts with ev (consumed) into *out. */
static int yaml_node(yctx *y, yaml_event_t *ev, json_t **out, int depth) {
  *out = NULL;
  if (depth > 64) {
    yaml_fail(y, ev, "nested more than 64 levels deep");
    yaml_event_delete(ev);
    return -1;
  }
  switch (ev->type) {
  case YAML_SCALAR_EVENT:
    *out = yaml_scalar(ev);
    if (!*out) {
      yaml_fail(y, ev, "not valid UTF-8 text");
      yaml_event_delete(ev);
      return -1;
    }
    yaml_event_delete(ev);
    return 0;
  case YAML_ALIAS_EVENT:
    yaml_fail(y, ev, "YAML aliases (*name) are not supported in a client config; write the "
                     "value out");
    yaml_event_delete(ev);
    return -1;
  case YAML_SEQUENCE_START_EVENT: {
    yaml_event_delete(ev);
    json_t *arr = json_array();
    for (;;) {
      yaml_event_t e;
      if (yaml_next(y, &e)) break;
      if (e.type == YAML_SEQUENCE_END_EVENT) {
        yaml_event_delete(&e);
        *out = arr;
        return 0;
      }
      json_t *item;
      if (yaml_node(y, &e, &item, depth + 1)) break;
      json_array_append_new(arr, item);
    }
    json_decref(arr);
    return -1;
  }
  case YAML_MAPPING_START_EVENT: {
    yaml_event_delete(ev);
    json_t *obj = json_object();
    for (;;) {
      yaml_event_t k;
      if (yaml_next(y, &k)) break;
      if (k.type == YAML_MAPPING_END_EVENT) {
        yaml_event_delete(&k);
        *out = obj;
        return 0;
      }
      if (k.type != YAML_SCALAR_EVENT) {
        yaml_fail(y, &k, "a mapping key must be a plain name");
        yaml_event_delete(&k);
        break;
      }
      char key[256];
      size_t klen = k.data.scalar.length;
      if (klen >= sizeof key || strlen((const char *)k.data.scalar.value) != klen) {
        yaml_fail(y, &k, "mapping key too long or holding a NUL byte");
        yaml_event_delete(&k);
        break;
      }
      memcpy(key, k.data.scalar.value, klen + 1);
      if (json_object_get(obj, key)) {
        char safe[128], what[200];
        safe_copy(safe, sizeof safe, key, 64);
        snprintf(what, sizeof what, "duplicate key '%s'", safe);
        yaml_fail(y, &k, what);
        yaml_event_delete(&k);
        break;
      }
      yaml_event_t v;
      yaml_mark_t kmark = k.start_mark;
      yaml_event_delete(&k);
      if (yaml_next(y, &v)) break;
      json_t *val;
      if (yaml_node(y, &v, &val, depth + 1)) break;
      if (json_object_set_new(obj, key, val)) {
        /* jansson refuses a key that is not UTF-8 (libyaml has checked the
         * stream, so this is a safety net) */
        yaml_event_t fake;
        memset(&fake, 0, sizeof fake);
        fake.start_mark = kmark;
        yaml_fail(y, &fake, "mapping key is not valid UTF-8");
        break;
      }
    }
    json_decref(obj);
    return -1;
  }
  default:
    yaml_fail(y, ev, "unexpected YAML structure");
    yaml_event_delete(ev);
    return -1;
  }
}

static json_t *yaml_load(ictx *c, const char *buf, size_t len) {
  yctx y;
  y.c = c;
  if (!yaml_parser_initialize(&y.p)) {
    fail(c, NULL, "out of memory");
    return NULL;
  }
  yaml_parser_set_input_string(&y.p, (const unsigned char *)buf, len);
  json_t *root = NULL;
  yaml_event_t ev;
  int docs = 0, ok = 0;
  for (;;) {
    if (yaml_next(&y, &ev)) break;
    yaml_event_type_t t = ev.type;
    if (t == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&ev);
      ok = 1;
      break;
    }
    if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
      yaml_event_delete(&ev);
      continue;
    }
    if (t == YAML_DOCUMENT_START_EVENT) {
      if (++docs > 1) {
        yaml_fail(&y, &ev, "more than one YAML document; give one client config per file");
        yaml_event_delete(&ev);
        break;
      }
      yaml_event_delete(&ev);
      continue;
    }
    if (yaml_node(&y, &ev, &root, 0)) break;
  }
  yaml_parser_delete(&y.p);
  if (!ok) {
    json_decref(root);
    return NULL;
  }
  if (!root) {
    fail(c, NULL, "empty file: expected a gRPC service config or an Envoy retry_policy");
    return NULL;
  }
  return root;
}

static json_t *json_load(ictx *c, const char *buf, size_t len) {
  json_error_t je;
  json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    char what[192];
    safe_copy(what, sizeof what, je.text, 160);
    if (c->err && c->errlen)
      snprintf(c->err, c->errlen, "%s: line %d column %d: %s", c->name, je.line, je.column, what);
  }
  return root;
}

/* ---- typed field access ------------------------------------------------- */

static const char *type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "a list";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "a whole number";
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

/* The lowerCamelCase spelling protobuf's JSON mapping gives a snake_case
 * field name ("retry_back_off" -> "retryBackOff"). */
static void camel_case(const char *snake, char *camel, size_t n) {
  size_t o = 0;
  for (const char *p = snake; *p && o + 1 < n; p++) {
    if (*p == '_' && p[1])
      camel[o++] = (char)toupper((unsigned char)*++p);
    else
      camel[o++] = *p;
  }
  camel[o] = 0;
}

static int name_is(const char *k, const char *snake) {
  char camel[96];
  camel_case(snake, camel, sizeof camel);
  return !strcmp(k, snake) || !strcmp(k, camel);
}

/* obj's field under its snake_case name or its lowerCamelCase spelling;
 * *shown gets the spelling found. NULL when absent (or null); -1 in *bad
 * when both spellings are given. */
static json_t *field(ictx *c, json_t *obj, const char *snake, char *shown, size_t n, int *bad) {
  char camel[96];
  camel_case(snake, camel, sizeof camel);
  json_t *a = json_object_get(obj, snake);
  json_t *b = strcmp(snake, camel) ? json_object_get(obj, camel) : NULL;
  if (a && b) {
    *bad = fail(c, camel, "given twice, as %s and %s", snake, camel);
    return NULL;
  }
  snprintf(shown, n, "%s", a ? snake : b ? camel : c->camel ? camel : snake);
  json_t *v = a ? a : b;
  return v && !json_is_null(v) ? v : NULL;
}

/* Looks a field up; sets *v (NULL when absent). Returns -1 after an error. */
#define FIELD(obj, snake, v, shown)                                                   \
  do {                                                                                \
    int bad_ = 0;                                                                     \
    (v) = field(c, (obj), (snake), (shown), sizeof(shown), &bad_);                    \
    if (bad_) return -1;                                                              \
  } while (0)

static int want_object(ictx *c, json_t *v, const char *shown) {
  if (json_is_object(v)) return 0;
  return fail(c, shown, "expected an object, got %s", type_name(v));
}

/* A whole number (a JSON integer, or a decimal string as protobuf's JSON
 * mapping allows for integer fields) in [lo, hi]. */
static int get_int(ictx *c, json_t *v, const char *shown, long long lo, long long hi,
                   long long *out, char *raw, size_t rawlen) {
  long long x;
  if (json_is_integer(v)) {
    x = json_integer_value(v);
  } else if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *end;
    errno = 0;
    x = strtoll(s, &end, 10);
    if (!*s || *end || errno || isspace((unsigned char)*s)) {
      char safe[64];
      safe_copy(safe, sizeof safe, s, 40);
      return fail(c, shown, "expected a whole number, got \"%s\"", safe);
    }
  } else if (json_is_real(v)) {
    return fail(c, shown, "expected a whole number, got %g", json_real_value(v));
  } else {
    return fail(c, shown, "expected a whole number, got %s", type_name(v));
  }
  if (x < lo || x > hi) {
    if (x < 0 && lo >= 0) return fail(c, shown, "must not be negative, got %lld", x);
    if (x > hi && (hi == INT32_MAX || hi == UINT32_MAX))
      return fail(c, shown, "%lld does not fit the field's 32 bits", x);
    return fail(c, shown, "must be from %lld to %lld, got %lld", lo, hi, x);
  }
  *out = x;
  snprintf(raw, rawlen, "%lld", x);
  return 0;
}

/* A finite number (JSON number, or a numeric string as protobuf allows)
 * greater than lo (or >= lo when closed) and at most hi. */
static int get_num(ictx *c, json_t *v, const char *shown, double lo, int closed, double hi,
                   double *out, char *raw, size_t rawlen) {
  double x;
  if (json_is_number(v)) {
    x = json_number_value(v);
  } else if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *end;
    x = strtod(s, &end);
    if (!*s || *end || isspace((unsigned char)*s) || !isfinite(x)) {
      char safe[64];
      safe_copy(safe, sizeof safe, s, 40);
      return fail(c, shown, "expected a finite number, got \"%s\"", safe);
    }
  } else {
    return fail(c, shown, "expected a number, got %s", type_name(v));
  }
  if (closed ? !(x >= lo) : !(x > lo)) {
    if (lo == 0) return fail(c, shown, "must be %s, got %g", closed ? "0 or more" : "positive", x);
    return fail(c, shown, "must be %s %g, got %g", closed ? "at least" : "more than", lo, x);
  }
  if (x > hi) return fail(c, shown, "must be at most %g, got %g", hi, x);
  *out = x;
  snprintf(raw, rawlen, "%.10g", x);
  return 0;
}

/* A protobuf JSON Duration: decimal seconds with at most 9 fractional
 * digits and an "s" suffix, e.g. "0.1s", "2s", "0.000500s". Must be
 * positive. Gives milliseconds. */
static int get_duration(ictx *c, json_t *v, const char *shown, double *ms, char *raw,
                        size_t rawlen) {
  if (!json_is_string(v))
    return fail(c, shown, "expected a duration string such as \"0.1s\", got %s", type_name(v));
  const char *s = json_string_value(v);
  char safe[64];
  safe_copy(safe, sizeof safe, s, 40);
  const char *p = s;
  int neg = *p == '-';
  if (neg) p++;
  size_t ip = 0, fp = 0;
  while (isdigit((unsigned char)p[ip])) ip++;
  const char *q = p + ip;
  if (*q == '.') {
    q++;
    while (isdigit((unsigned char)q[fp])) fp++;
    q += fp;
  }
  if (!ip || (q[-1] == '.') || fp > 9 || strcmp(q, "s"))
    return fail(c, shown,
                "not a protobuf duration: expected seconds with an 's' suffix, such as \"0.1s\" "
                "(got \"%s\")",
                safe);
  double sec = strtod(p, NULL);
  if (neg && sec > 0) return fail(c, shown, "must be positive, got \"%s\"", safe);
  if (!(sec > 0)) return fail(c, shown, "must be positive, got \"%s\"", safe);
  if (sec > 315576000000.0)
    return fail(c, shown, "out of range for a protobuf duration (\"%s\")", safe);
  *ms = sec * 1000;
  snprintf(raw, rawlen, "%s", safe);
  return 0;
}

/* Notes every field of obj that is neither read (read[], snake_case names)
 * nor known to be unmodelled (unmodelled[]): a typo shows up as "unknown". */
static void note_others(ictx *c, json_t *obj, const char *const *read,
                        const char *const *unmodelled) {
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    int hit = 0;
    for (size_t i = 0; read && read[i] && !hit; i++) hit = name_is(k, read[i]);
    for (size_t i = 0; unmodelled && unmodelled[i] && !hit; i++)
      if (name_is(k, unmodelled[i])) {
        hit = 1;
        note(c, k, "not modelled, ignored");
      }
    if (!hit) note(c, k, "unknown field, ignored");
  }
}

/* ---- gRPC service config (gRFC A6) ------------------------------------- */

static const char *const grpc_codes[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED", NULL};

static int grpc_codes_check(ictx *c, json_t *v, const char *shown) {
  if (!json_is_array(v)) return fail(c, shown, "expected a list of status codes, got %s",
                                     type_name(v));
  if (!json_array_size(v))
    return fail(c, shown, "must name at least one status code (gRFC A6)");
  size_t old = path_push(c, shown);
  size_t i;
  json_t *code;
  json_array_foreach(v, i, code) {
    size_t o2 = path_index(c, i);
    int ok = 0;
    if (json_is_integer(code)) {
      ok = json_integer_value(code) >= 1 && json_integer_value(code) <= 16;
    } else if (json_is_string(code)) {
      for (int k = 1; grpc_codes[k]; k++)
        if (!strcasecmp(json_string_value(code), grpc_codes[k])) ok = 1;
    }
    if (!ok) {
      char safe[64] = "";
      if (json_is_string(code)) safe_copy(safe, sizeof safe, json_string_value(code), 40);
      if (json_is_string(code))
        fail(c, NULL, "unknown gRPC status code \"%s\" (expected a name such as UNAVAILABLE)",
             safe);
      else
        fail(c, NULL, "expected a status code name or number 1-16, got %s", type_name(code));
      path_pop(c, old);
      return -1;
    }
    path_pop(c, o2);
  }
  path_pop(c, old);
  return 0;
}

static int map_grpc_policy(ictx *c, json_t *rp, int *per_attempt) {
  char shown[96], raw[64];
  json_t *v;
  /* maxAttempts: gRFC A6 requires > 1 and treats values above 5 as 5 */
  FIELD(rp, "max_attempts", v, shown);
  if (!v) return fail(c, shown, "missing (required: attempts including the first, 2 to 5)");
  long long attempts;
  if (get_int(c, v, shown, 0, INT32_MAX, &attempts, raw, sizeof raw)) return -1;
  if (attempts < 2)
    return fail(c, shown, "must be greater than 1 (gRPC rejects the retry policy), got %lld",
                attempts);
  if (attempts > 5) {
    note(c, shown, "%lld capped at 5, as gRPC does (gRFC A6)", attempts);
    attempts = 5;
  }
  if (entry_num(c, "max_retries", (double)(attempts - 1), shown, raw, NULL)) return -1;
  /* gRPC's backoff: attempt n waits U(0, min(initialBackoff * mult^(n-1), maxBackoff)) */
  double base, cap, mult;
  char rbase[64], rcap[64], rmult[64];
  FIELD(rp, "initial_backoff", v, shown);
  if (!v) return fail(c, shown, "missing (required, e.g. \"0.1s\")");
  if (get_duration(c, v, shown, &base, rbase, sizeof rbase)) return -1;
  char s_base[96];
  snprintf(s_base, sizeof s_base, "%s", shown);
  FIELD(rp, "max_backoff", v, shown);
  if (!v) return fail(c, shown, "missing (required, e.g. \"1s\")");
  if (get_duration(c, v, shown, &cap, rcap, sizeof rcap)) return -1;
  char s_cap[96];
  snprintf(s_cap, sizeof s_cap, "%s", shown);
  FIELD(rp, "backoff_multiplier", v, shown);
  if (!v) return fail(c, shown, "missing (required, e.g. 2)");
  if (get_num(c, v, shown, 0, 0, 1e6, &mult, rmult, sizeof rmult)) return -1;
  char s_mult[96];
  snprintf(s_mult, sizeof s_mult, "%s", shown);
  FIELD(rp, "retryable_status_codes", v, shown);
  if (!v) return fail(c, shown, "missing (required: the status codes to retry)");
  if (grpc_codes_check(c, v, shown)) return -1;
  note(c, shown, "not modelled: stormsweep retries every failed or timed-out attempt");
  if (entry(c, "backoff", "full", NULL, "", "gRPC waits U(0, min(initialBackoff*mult^(n-1), "
                                            "maxBackoff)) before retry n")) return -1;
  if (entry_num(c, "backoff_base_ms", base, s_base, rbase, NULL)) return -1;
  if (entry_num(c, "backoff_cap_ms", cap, s_cap, rcap, NULL)) return -1;
  if (entry_num(c, "backoff_multiplier", mult, s_mult, rmult, NULL)) return -1;
  /* per-attempt timeout: perAttemptRecvTimeout (gRFC A6 update) is one;
   * methodConfig.timeout bounds the whole call, the closest we have */
  double ms;
  FIELD(rp, "per_attempt_recv_timeout", v, shown);
  if (v) {
    if (get_duration(c, v, shown, &ms, raw, sizeof raw)) return -1;
    if (entry_num(c, "timeout_ms", ms, shown, raw, NULL)) return -1;
  }
  static const char *const rp_read[] = {"max_attempts", "initial_backoff", "max_backoff",
                                        "backoff_multiplier", "retryable_status_codes",
                                        "per_attempt_recv_timeout", NULL};
  note_others(c, rp, rp_read, NULL);
  *per_attempt = v != NULL;
  return 0;
}

/* methodConfig[i].timeout: the deadline of the whole call, retries
 * included; the closest stormsweep has is the per-attempt timeout_ms. */
static int map_grpc_timeout(ictx *c, json_t *mc, int per_attempt) {
  char shown[96], raw[64];
  json_t *t;
  double ms;
  FIELD(mc, "timeout", t, shown);
  if (!t) return 0;
  if (get_duration(c, t, shown, &ms, raw, sizeof raw)) return -1;
  if (per_attempt) {
    note(c, shown, "ignored: perAttemptRecvTimeout gives the per-attempt timeout");
    return 0;
  }
  note(c, shown, "gRPC's deadline covers the whole call with its retries; stormsweep's "
                 "timeout_ms is per attempt");
  return entry_num(c, "timeout_ms", ms, shown, raw, NULL);
}

static int map_grpc(ictx *c, json_t *root) {
  char shown[96], mshown[96];
  json_t *mcs, *thr;
  FIELD(root, "method_config", mcs, mshown);
  if (!mcs) return fail(c, mshown, "missing: a service config needs a methodConfig with a "
                                   "retryPolicy for gRPC to retry");
  if (!json_is_array(mcs)) return fail(c, mshown, "expected a list, got %s", type_name(mcs));
  size_t old = path_push(c, mshown);
  size_t i, chosen = (size_t)-1;
  json_t *mc;
  json_array_foreach(mcs, i, mc) {
    size_t o2 = path_index(c, i);
    if (!json_is_object(mc)) {
      fail(c, NULL, "expected an object, got %s", type_name(mc));
      return -1;
    }
    json_t *rp, *hp;
    FIELD(mc, "retry_policy", rp, shown);
    char hshown[96];
    FIELD(mc, "hedging_policy", hp, hshown);
    if (rp && hp) return fail(c, NULL, "has both retryPolicy and hedgingPolicy (gRPC allows one)");
    if (hp) note(c, hshown, "hedging is not modelled, ignored");
    if (rp) {
      if (chosen == (size_t)-1) {
        chosen = i;
        size_t o3 = path_push(c, shown);
        if (want_object(c, rp, NULL)) return -1;
        int per_attempt = 0;
        if (map_grpc_policy(c, rp, &per_attempt)) return -1;
        path_pop(c, o3);
        if (map_grpc_timeout(c, mc, per_attempt)) return -1;
      } else {
        note(c, shown, "ignored: only the first retryPolicy (methodConfig[%zu]) is simulated",
             chosen);
      }
    }
    path_pop(c, o2);
  }
  if (chosen == (size_t)-1)
    return fail(c, NULL, "no entry has a retryPolicy (without one gRPC does not retry)");
  path_pop(c, old);
  /* retryThrottling (gRFC A6): maxTokens in (0, 1000], tokenRatio > 0 */
  FIELD(root, "retry_throttling", thr, shown);
  if (thr) {
    if (want_object(c, thr, shown)) return -1;
    size_t o = path_push(c, shown);
    char tshown[96], rshown[96], rtok[64], rratio[64];
    json_t *mt, *tr;
    double tokens, ratio;
    FIELD(thr, "max_tokens", mt, tshown);
    if (!mt) return fail(c, tshown, "missing (required: more than 0, at most 1000)");
    if (get_num(c, mt, tshown, 0, 0, 1000, &tokens, rtok, sizeof rtok)) return -1;
    FIELD(thr, "token_ratio", tr, rshown);
    if (!tr) return fail(c, rshown, "missing (required, e.g. 0.1)");
    if (get_num(c, tr, rshown, 0, 0, 1e6, &ratio, rratio, sizeof rratio)) return -1;
    static const char *const thr_read[] = {"max_tokens", "token_ratio", NULL};
    note_others(c, thr, thr_read, NULL);
    if (entry(c, "retry_limiter", "grpc", NULL, "", "retryThrottling is present")) return -1;
    if (entry_num(c, "grpc_max_tokens", tokens, tshown, rtok, NULL)) return -1;
    if (entry_num(c, "grpc_token_ratio", ratio, rshown, rratio, NULL)) return -1;
    path_pop(c, o);
  } else {
    if (entry(c, "retry_limiter", "token_bucket", NULL, "",
              "no retryThrottling: gRPC retries without a budget")) return -1;
    if (entry(c, "budget_ratio", "inf", NULL, "", "no retryThrottling: no retry budget"))
      return -1;
  }
  static const char *const root_read[] = {"method_config", "retry_throttling", NULL};
  static const char *const root_other[] = {"load_balancing_config", "load_balancing_policy",
                                           "health_check_config", NULL};
  note_others(c, root, root_read, root_other);
  return 0;
}

/* ---- Envoy route retry_policy + cluster circuit breakers ----------------- */

static int map_envoy_policy(ictx *c, json_t *rp) {
  char shown[96], raw[64];
  json_t *v;
  long long n;
  /* num_retries defaults to 1 (RetryPolicy docs) */
  FIELD(rp, "num_retries", v, shown);
  if (v) {
    if (get_int(c, v, shown, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
    if (entry_num(c, "max_retries", (double)n, shown, raw, NULL)) return -1;
  } else if (entry(c, "max_retries", "1", NULL, "", "num_retries not given: Envoy's default 1")) {
    return -1;
  }
  FIELD(rp, "per_try_timeout", v, shown);
  if (v) {
    double ms;
    if (get_duration(c, v, shown, &ms, raw, sizeof raw)) return -1;
    if (entry_num(c, "timeout_ms", ms, shown, raw, NULL)) return -1;
  }
  FIELD(rp, "retry_on", v, shown);
  if (!v)
    note(c, shown, "missing: Envoy retries only on the conditions listed here; imported as if "
                   "every failure were retriable");
  else if (!json_is_string(v))
    return fail(c, shown, "expected a string such as \"5xx,reset\", got %s", type_name(v));
  else
    note(c, shown, "not modelled: stormsweep retries every failed or timed-out attempt");
  /* retry_back_off: base_interval required in it; max_interval 10x base by
   * default; without it Envoy uses base 25 ms (router filter docs). Envoy
   * draws retry n's wait from U(0, (2^n - 1) base), capped; the nearest
   * stormsweep backoff is full jitter U(0, min(cap, base 2^(n-1))). */
  FIELD(rp, "retry_back_off", v, shown);
  double base = 25, cap;
  if (v) {
    if (want_object(c, v, shown)) return -1;
    size_t o = path_push(c, shown);
    char bshown[96], mshown[96], rb[64], rm[64];
    json_t *b, *mx;
    FIELD(v, "base_interval", b, bshown);
    if (!b) return fail(c, bshown, "missing (required in retry_back_off, e.g. \"0.025s\")");
    if (get_duration(c, b, bshown, &base, rb, sizeof rb)) return -1;
    if (entry(c, "backoff", "full", NULL, "", "Envoy's fully jittered exponential back-off"))
      return -1;
    if (entry_num(c, "backoff_base_ms", base, bshown, rb, NULL)) return -1;
    FIELD(v, "max_interval", mx, mshown);
    if (mx) {
      if (get_duration(c, mx, mshown, &cap, rm, sizeof rm)) return -1;
      if (cap < base)
        return fail(c, mshown, "must be at least base_interval (%s), got \"%s\"", rb, rm);
      if (entry_num(c, "backoff_cap_ms", cap, mshown, rm, NULL)) return -1;
    } else if (entry_num(c, "backoff_cap_ms", 10 * base, NULL, "",
                         "max_interval not given: Envoy's default 10 x base_interval")) {
      return -1;
    }
    static const char *const bo_read[] = {"base_interval", "max_interval", NULL};
    note_others(c, v, bo_read, NULL);
    path_pop(c, o);
  } else {
    if (entry(c, "backoff", "full", NULL, "", "Envoy's fully jittered exponential back-off"))
      return -1;
    if (entry(c, "backoff_base_ms", "25", NULL, "", "no retry_back_off: Envoy's default 25 ms"))
      return -1;
    if (entry(c, "backoff_cap_ms", "250", NULL, "",
              "no retry_back_off: Envoy's default 10 x base_interval"))
      return -1;
  }
  if (entry(c, "backoff_multiplier", "2", NULL, "", "Envoy doubles the back-off range per retry"))
    return -1;
  static const char *const rp_read[] = {"num_retries", "per_try_timeout", "retry_on",
                                        "retry_back_off", NULL};
  static const char *const rp_other[] = {
      "retry_priority", "retry_host_predicate", "retry_options_predicates",
      "host_selection_retry_max_attempts", "retriable_status_codes", "retriable_headers",
      "retriable_request_headers", "rate_limited_retry_back_off", "per_try_idle_timeout", NULL};
  note_others(c, rp, rp_read, rp_other);
  return 0;
}

/* circuit_breakers.thresholds[] (the DEFAULT priority entry): retry_budget
 * {budget_percent {value} 20 %, min_retry_concurrency 3}, or without a
 * budget the max_retries threshold (3 concurrent retries by default). */
static int map_envoy_breakers(ictx *c, json_t *cb, const char *cb_shown) {
  char shown[96], raw[64];
  json_t *th = NULL, *list = NULL;
  if (cb) {
    if (want_object(c, cb, cb_shown)) return -1;
    size_t o = path_push(c, cb_shown);
    FIELD(cb, "thresholds", list, shown);
    if (list && !json_is_array(list))
      return fail(c, shown, "expected a list, got %s", type_name(list));
    char tshown[96];
    snprintf(tshown, sizeof tshown, "%s", shown);
    size_t i, idx = 0;
    json_t *t;
    json_array_foreach(list, i, t) {
      size_t o2 = path_push(c, tshown);
      path_index(c, i);
      if (!json_is_object(t)) return fail(c, NULL, "expected an object, got %s", type_name(t));
      json_t *pr;
      FIELD(t, "priority", pr, shown);
      if (pr && !json_is_string(pr))
        return fail(c, shown, "expected DEFAULT or HIGH, got %s", type_name(pr));
      if (pr && strcmp(json_string_value(pr), "DEFAULT") && strcmp(json_string_value(pr), "HIGH"))
        return fail(c, shown, "expected DEFAULT or HIGH");
      if (pr && !strcmp(json_string_value(pr), "HIGH"))
        note(c, NULL, "HIGH priority: not modelled, ignored");
      else if (th)
        note(c, NULL, "ignored: a second DEFAULT-priority threshold");
      else {
        th = t;
        idx = i;
      }
      path_pop(c, o2);
    }
    if (th) {
      path_push(c, tshown);
      path_index(c, idx);
      json_t *rb;
      char rshown[96];
      FIELD(th, "retry_budget", rb, rshown);
      if (rb) {
        if (want_object(c, rb, rshown)) return -1;
        size_t o3 = path_push(c, rshown);
        json_t *bp, *mrc;
        char bshown[96], mshown2[96];
        FIELD(rb, "budget_percent", bp, bshown);
        if (entry(c, "retry_limiter", "envoy", NULL, "", "retry_budget is present")) return -1;
        if (bp) {
          if (want_object(c, bp, bshown)) return -1;
          size_t o4 = path_push(c, bshown);
          json_t *val;
          char vshown[96];
          double pct;
          FIELD(bp, "value", val, vshown);
          if (!val) return fail(c, vshown, "missing (a percentage from 0 to 100)");
          if (get_num(c, val, vshown, 0, 1, 100, &pct, raw, sizeof raw)) return -1;
          if (entry_num(c, "envoy_budget_percent", pct, vshown, raw, NULL)) return -1;
          path_pop(c, o4);
        } else if (entry(c, "envoy_budget_percent", "20", NULL, "",
                         "budget_percent not given: Envoy's default 20 %")) {
          return -1;
        }
        FIELD(rb, "min_retry_concurrency", mrc, mshown2);
        long long n;
        if (mrc) {
          if (get_int(c, mrc, mshown2, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
          if (entry_num(c, "envoy_min_retry_concurrency", (double)n, mshown2, raw, NULL))
            return -1;
        } else if (entry(c, "envoy_min_retry_concurrency", "3", NULL, "",
                         "min_retry_concurrency not given: Envoy's default 3")) {
          return -1;
        }
        static const char *const rb_read[] = {"budget_percent", "min_retry_concurrency", NULL};
        note_others(c, rb, rb_read, NULL);
        path_pop(c, o3);
        return 0;
      }
      json_t *mr;
      FIELD(th, "max_retries", mr, shown);
      if (mr) {
        long long n;
        if (get_int(c, mr, shown, 0, UINT32_MAX, &n, raw, sizeof raw)) return -1;
        if (entry(c, "retry_limiter", "envoy", NULL, "",
                  "no retry_budget: the max_retries circuit breaker caps concurrent retries"))
          return -1;
        if (entry(c, "envoy_budget_percent", "0", NULL, "", "no retry_budget")) return -1;
        return entry_num(c, "envoy_min_retry_concurrency", (double)n, shown, raw, NULL);
      }
    }
    path_pop(c, o);
  }
  if (entry(c, "retry_limiter", "envoy", NULL, "",
            "no retry_budget: Envoy's max_retries circuit breaker caps concurrent retries"))
    return -1;
  if (entry(c, "envoy_budget_percent", "0", NULL, "", "no retry_budget")) return -1;
  return entry(c, "envoy_min_retry_concurrency", "3", NULL, "",
               "no max_retries threshold: Envoy's default 3 concurrent retries");
}

static int map_envoy(ictx *c, json_t *root) {
  char shown[96], cshown[96], rshown[96];
  json_t *rp, *cb, *route;
  FIELD(root, "retry_policy", rp, shown);
  FIELD(root, "route", route, rshown);
  size_t old = c->plen;
  if (!rp && route && json_is_object(route)) {
    path_push(c, rshown);
    FIELD(route, "retry_policy", rp, shown);
    if (!rp) path_pop(c, old);
  }
  if (!rp) return fail(c, shown, "missing: an Envoy client config needs the route's retry_policy");
  if (want_object(c, rp, shown)) return -1;
  path_push(c, shown);
  if (map_envoy_policy(c, rp)) return -1;
  path_pop(c, old);
  FIELD(root, "circuit_breakers", cb, cshown);
  if (map_envoy_breakers(c, cb, cshown)) return -1;
  path_pop(c, old);
  return 0;
}

/* ---- entry points --------------------------------------------------------- */

const char *swp_client_kind_name(int kind) {
  return kind == SWP_CLIENT_GRPC    ? "gRPC service config"
         : kind == SWP_CLIENT_ENVOY ? "Envoy retry policy"
                                    : "client config";
}

int swp_client_parse(const char *name, const char *buf, size_t len, swp_client_map *m,
                     char *err, size_t errlen) {
  ictx c;
  memset(m, 0, sizeof *m);
  memset(&c, 0, sizeof c);
  safe_copy(c.name, sizeof c.name, name ? name : "client config", 200);
  c.m = m;
  c.err = err;
  c.errlen = errlen;
  if (err && errlen) err[0] = 0;
  if (len > SWP_CLIENT_MAX_BYTES)
    return fail(&c, NULL, "larger than %d bytes: not a client retry config",
                SWP_CLIENT_MAX_BYTES);
  size_t i = 0;
  if (len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) i = 3; /* a byte-order mark */
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')) i++;
  if (memchr(buf, 0, len)) {
    if (err && errlen) snprintf(err, errlen, "%s: holds a NUL byte: not a text file", c.name);
    return -1;
  }
  /* JSON when it opens like JSON (jansson's errors are the clearer), else
   * YAML; an Envoy YAML file is a mapping, never a bare '{' document. */
  json_t *root = i < len && (buf[i] == '{' || buf[i] == '[') ? json_load(&c, buf + i, len - i)
                                                             : yaml_load(&c, buf, len);
  if (!root) return -1;
  int rc;
  if (!json_is_object(root)) {
    rc = fail(&c, NULL, "expected an object (a gRPC service config or an Envoy retry_policy), "
                        "got %s", type_name(root));
  } else {
    char shown[96];
    int bad = 0;
    int grpc = field(&c, root, "method_config", shown, sizeof shown, &bad) ||
               field(&c, root, "retry_throttling", shown, sizeof shown, &bad);
    int envoy = field(&c, root, "retry_policy", shown, sizeof shown, &bad) ||
                field(&c, root, "circuit_breakers", shown, sizeof shown, &bad) ||
                field(&c, root, "route", shown, sizeof shown, &bad);
    if (bad) {
      rc = -1;
    } else if (grpc && envoy) {
      rc = fail(&c, NULL, "holds both gRPC (methodConfig) and Envoy (retry_policy) fields; give "
                          "one client config");
    } else if (grpc) {
      m->kind = SWP_CLIENT_GRPC;
      c.camel = 1;
      rc = map_grpc(&c, root);
    } else if (envoy) {
      m->kind = SWP_CLIENT_ENVOY;
      rc = map_envoy(&c, root);
    } else {
      rc = fail(&c, NULL, "neither a gRPC service config (methodConfig) nor an Envoy route "
                          "(retry_policy)");
    }
  }
  json_decref(root);
  return rc;
}

int swp_client_load(const char *path, swp_client_map *m, char *err, size_t errlen) {
  char safe[256];
  safe_copy(safe, sizeof safe, path, 200);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot read: %s", safe, strerror(errno));
    return -1;
  }
  size_t cap = SWP_CLIENT_MAX_BYTES + 1;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    snprintf(err, errlen, "%s: out of memory", safe);
    return -1;
  }
  size_t n = fread(buf, 1, cap, f);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    snprintf(err, errlen, "%s: cannot read", safe);
    return -1;
  }
  int rc = swp_client_parse(path, buf, n, m, err, errlen);
  free(buf);
  return rc;
}

int swp_client_apply(const swp_client_map *m, const char *name, eng_config *cfg, char *err,
                     size_t errlen) {
  char safe[256];
  safe_copy(safe, sizeof safe, name, 200);
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char msg[384];
    if (!eng_settings_find(e->key)) {
      snprintf(err, errlen,
               "%s: %s: this build has no setting '%s' (it needs the client limiter settings)",
               safe, e->source, e->key);
      return -1;
    }
    if (eng_config_set(cfg, e->key, e->value, msg, sizeof msg)) {
      snprintf(err, errlen, "%s: %s: %s", safe, e->source, msg);
      return -1;
    }
  }
  return 0;
}

int swp_client_apply_sweep(const swp_client_map *m, const char *name, swp_sweep *sw, char *err,
                           size_t errlen) {
  char safe[256];
  safe_copy(safe, sizeof safe, name, 200);
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char msg[512];
    if (!eng_settings_find(e->key)) {
      snprintf(err, errlen,
               "%s: %s: this build has no setting '%s' (it needs the client limiter settings)",
               safe, e->source, e->key);
      return -1;
    }
    if (swp_sweep_scenario_set(sw, e->key, e->value, msg, sizeof msg)) {
      snprintf(err, errlen, "%s: %s: %s", safe, e->source, msg);
      return -1;
    }
  }
  return 0;
}

int swp_client_keys_known(const swp_client_map *m) {
  for (size_t i = 0; i < m->n; i++)
    if (!eng_settings_find(m->e[i].key)) return 0;
  return 1;
}

void swp_client_print(const swp_client_map *m, const char *name, FILE *out) {
  char safe[256];
  safe_copy(safe, sizeof safe, name, 200);
  fprintf(out, "--client %s (%s): source field -> setting\n", safe,
          swp_client_kind_name(m->kind));
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char lhs[400];
    if (e->raw[0])
      snprintf(lhs, sizeof lhs, "%s = %s", e->source, e->raw);
    else
      snprintf(lhs, sizeof lhs, "%s", e->source);
    fprintf(out, "  %-56s -> %s = %s\n", lhs, e->key, e->value);
  }
  for (size_t i = 0; i < m->n_notes; i++) fprintf(out, "  note: %s\n", m->notes[i]);
}
