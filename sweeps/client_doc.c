/*
 * client_doc.c — a client config document as a tree the mappers read
 * (client_doc.h): JSON is read by libjansson and YAML by libyaml, a YAML
 * document turned into the same jansson tree, so one mapper serves both and
 * an error names the same path whatever the syntax; and the readers of a
 * field — by its lowerCamelCase or snake_case name, as Protobuf's JSON
 * mapping accepts both — that check its type and range and say what is
 * wrong as FILE: path.to.field: message.
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

#include "client_doc.h"

/* ---- messages ------------------------------------------------------------ */

/* Text from the file goes into messages and notes as it is: every command
 * prints them through the one terminal escaper (analysis/textsafe.c, by
 * cli_error and by swp_client_print's caller), never raw. */

/* At most max bytes of src (a NUL ends it sooner), always terminated. */
static void raw_copy(char *dst, size_t len, const char *src, size_t max) {
  size_t n = 0;
  if (!len) return;
  while (src && src[n] && n < max && n + 1 < len) n++;
  if (n) memcpy(dst, src, n);
  dst[n] = 0;
}

size_t swp__cl_path_push(ictx *c, const char *field) {
  size_t old = c->plen;
  char name[96];
  raw_copy(name, sizeof name, field, 64);
  int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "%s%s", c->plen ? "." : "", name);
  if (n > 0)
    c->plen = c->plen + (size_t)n < sizeof c->path ? c->plen + (size_t)n : sizeof c->path - 1;
  return old;
}

size_t swp__cl_path_index(ictx *c, size_t i) {
  size_t old = c->plen;
  int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "[%zu]", i);
  if (n > 0)
    c->plen = c->plen + (size_t)n < sizeof c->path ? c->plen + (size_t)n : sizeof c->path - 1;
  return old;
}

void swp__cl_path_pop(ictx *c, size_t old) {
  c->plen = old;
  c->path[old] = 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int swp__cl_fail(ictx *c, const char *field, const char *fmt, ...) {
  char msg[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t old = field ? swp__cl_path_push(c, field) : c->plen;
  if (c->err && c->errlen) {
    if (c->plen)
      snprintf(c->err, c->errlen, "%s: %s: %s", c->name, c->path, msg);
    else
      snprintf(c->err, c->errlen, "%s: %s", c->name, msg);
  }
  swp__cl_path_pop(c, old);
  return -1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void swp__cl_note(ictx *c, const char *field, const char *fmt, ...) {
  swp_client_map *m = c->m;
  if (m->n_notes >= SWP_CLIENT_MAX_NOTES) {
    m->notes_dropped++;
    return;
  }
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t old = field ? swp__cl_path_push(c, field) : c->plen;
  char *note = m->notes[m->n_notes++];
  int n = snprintf(note, sizeof m->notes[0], "%s: %s", c->plen ? c->path : "(top level)", msg);
  if (n >= (int)sizeof m->notes[0]) /* a long path and message: say it was cut */
    memcpy(note + sizeof m->notes[0] - 4, "...", 4);
  swp__cl_path_pop(c, old);
}

/* Appends (key, value) with the current path (plus field) as its source, or
 * with why as the source when the file does not state the value. */
int swp__cl_entry(ictx *c, const char *key, const char *value, const char *field, const char *raw,
                 const char *why) {
  swp_client_map *m = c->m;
  if (m->n >= SWP_CLIENT_MAX_ENTRIES)
    return swp__cl_fail(c, NULL, "too many settings (internal limit)");
  swp_client_entry *e = &m->e[m->n++];
  snprintf(e->key, sizeof e->key, "%s", key);
  snprintf(e->value, sizeof e->value, "%s", value);
  if (why) {
    snprintf(e->source, sizeof e->source, "(%s)", why);
  } else {
    size_t old = field ? swp__cl_path_push(c, field) : c->plen;
    snprintf(e->source, sizeof e->source, "%s", c->path);
    swp__cl_path_pop(c, old);
  }
  snprintf(e->raw, sizeof e->raw, "%s", raw ? raw : "");
  return 0;
}

int swp__cl_entry_num(ictx *c, const char *key, double v, const char *field, const char *raw,
                     const char *why) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.10g", v);
  return swp__cl_entry(c, key, buf, field, raw, why);
}

/* An entry whose source is a path saved earlier (not the current one). */
int swp__cl_entry_from(ictx *c, const char *key, const char *value, const char *src,
                       const char *raw) {
  char saved[sizeof c->path];
  size_t plen = c->plen;
  memcpy(saved, c->path, sizeof saved);
  c->plen = 0;
  c->path[0] = 0;
  int rc = swp__cl_entry(c, key, value, src, raw, NULL);
  memcpy(c->path, saved, sizeof saved);
  c->plen = plen;
  return rc;
}

void swp__cl_path_of(ictx *c, const char *field, char *out, size_t n) {
  size_t old = swp__cl_path_push(c, field);
  snprintf(out, n, "%s", c->path);
  swp__cl_path_pop(c, old);
}

/* The failures in retry_on's syntax ("rejected+shed+lost"), or "none". */
void swp__cl_fails_text(unsigned mask, char *buf, size_t n) {
  static const char *const names[ENG_FAIL_KINDS] = {"timeout", "rejected", "shed",    "router",
                                                    "breaker", "lost",     "overflow"};
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < ENG_FAIL_KINDS; i++)
    if (mask & (1u << i)) {
      char part[32];
      snprintf(part, sizeof part, "%s%s", used ? "+" : "", names[i]);
      swp__cl_cat(buf, n, &used, part);
    }
  if (!used) snprintf(buf, n, "none");
}

void swp__cl_cat(char *buf, size_t n, size_t *used, const char *text) {
  if (!n) return;
  int k = snprintf(buf + *used, *used < n ? n - *used : 0, "%s", text);
  if (k > 0) *used += (size_t)k;
  if (*used >= n) *used = n - 1;
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
  raw_copy(what, sizeof what, y->p.problem ? y->p.problem : "malformed YAML", 200);
  if (y->p.context) {
    char ctx[128];
    raw_copy(ctx, sizeof ctx, y->p.context, 100);
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
        char name[128], what[200];
        raw_copy(name, sizeof name, key, 64);
        snprintf(what, sizeof what, "duplicate key '%s'", name);
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

json_t *swp__cl_yaml_load(ictx *c, const char *buf, size_t len) {
  yctx y;
  y.c = c;
  if (!yaml_parser_initialize(&y.p)) {
    swp__cl_fail(c, NULL, "out of memory");
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
    swp__cl_fail(c, NULL, "empty file: expected a gRPC service config or an Envoy retry_policy");
    return NULL;
  }
  return root;
}

json_t *swp__cl_json_load(ictx *c, const char *buf, size_t len) {
  json_error_t je;
  json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    char what[192];
    raw_copy(what, sizeof what, je.text, 160);
    if (c->err && c->errlen)
      snprintf(c->err, c->errlen, "%s: line %d column %d: %s", c->name, je.line, je.column, what);
  }
  return root;
}

/* ---- typed field access ------------------------------------------------- */

const char *swp__cl_type_name(const json_t *v) {
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
json_t *swp__cl_field(ictx *c, json_t *obj, const char *snake, char *shown, size_t n, int *bad) {
  char camel[96];
  camel_case(snake, camel, sizeof camel);
  json_t *a = json_object_get(obj, snake);
  json_t *b = strcmp(snake, camel) ? json_object_get(obj, camel) : NULL;
  if (a && b) {
    *bad = swp__cl_fail(c, camel, "given twice, as %s and %s", snake, camel);
    return NULL;
  }
  snprintf(shown, n, "%s", a ? snake : b ? camel : c->camel ? camel : snake);
  json_t *v = a ? a : b;
  return v && !json_is_null(v) ? v : NULL;
}


int swp__cl_want_object(ictx *c, json_t *v, const char *shown) {
  if (json_is_object(v)) return 0;
  return swp__cl_fail(c, shown, "expected an object, got %s", swp__cl_type_name(v));
}

/* A decimal number as JSON writes one, -?digits[.digits][(e|E)[+-]digits],
 * optionally with a leading '+' or the YAML forms ".5" and "5.": no hex
 * ("0x10"), no "inf" or "nan", no spaces. */
static int decimal_text(const char *s) {
  const char *p = s + (*s == '-' || *s == '+');
  size_t ip = 0, fp = 0;
  while (isdigit((unsigned char)p[ip])) ip++;
  p += ip;
  if (*p == '.') {
    p++;
    while (isdigit((unsigned char)p[fp])) fp++;
    p += fp;
  }
  if (!ip && !fp) return 0;
  if (*p == 'e' || *p == 'E') {
    p++;
    p += *p == '-' || *p == '+';
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
  }
  return !*p;
}

/* A whole number (a JSON integer, or a decimal string as protobuf's JSON
 * mapping allows for integer fields) in [lo, hi]. */
int swp__cl_get_int(ictx *c, json_t *v, const char *shown, long long lo, long long hi,
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
      char text[64];
      raw_copy(text, sizeof text, s, 40);
      return swp__cl_fail(c, shown, "expected a whole number, got \"%s\"", text);
    }
  } else if (json_is_real(v)) {
    return swp__cl_fail(c, shown, "expected a whole number, got %g", json_real_value(v));
  } else {
    return swp__cl_fail(c, shown, "expected a whole number, got %s", swp__cl_type_name(v));
  }
  if (x < lo || x > hi) {
    if (x < 0 && lo >= 0) return swp__cl_fail(c, shown, "must not be negative, got %lld", x);
    if (x > hi && (hi == INT32_MAX || hi == UINT32_MAX))
      return swp__cl_fail(c, shown, "%lld does not fit the field's 32 bits", x);
    return swp__cl_fail(c, shown, "must be from %lld to %lld, got %lld", lo, hi, x);
  }
  *out = x;
  snprintf(raw, rawlen, "%lld", x);
  return 0;
}

/* A finite number (JSON number, or a decimal string as protobuf allows)
 * greater than lo (or >= lo when closed) and at most hi. */
int swp__cl_get_num(ictx *c, json_t *v, const char *shown, double lo, int closed, double hi,
                   double *out, char *raw, size_t rawlen) {
  double x;
  if (json_is_number(v)) {
    x = json_number_value(v);
  } else if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char text[64];
    raw_copy(text, sizeof text, s, 40);
    if (!decimal_text(s))
      return swp__cl_fail(c, shown, "expected a decimal number, got \"%s\"", text);
    x = strtod(s, NULL);
    if (!isfinite(x)) return swp__cl_fail(c, shown, "expected a finite number, got \"%s\"", text);
  } else {
    return swp__cl_fail(c, shown, "expected a number, got %s", swp__cl_type_name(v));
  }
  if (closed ? !(x >= lo) : !(x > lo)) {
    if (lo == 0)
      return swp__cl_fail(c, shown, "must be %s, got %g", closed ? "0 or more" : "positive", x);
    return swp__cl_fail(c, shown, "must be %s %g, got %g", closed ? "at least" : "more than", lo,
                        x);
  }
  if (x > hi) return swp__cl_fail(c, shown, "must be at most %g, got %g", hi, x);
  *out = x;
  snprintf(raw, rawlen, "%.10g", x);
  return 0;
}

int swp__cl_get_bool(ictx *c, json_t *v, const char *shown, int *out) {
  if (!json_is_boolean(v))
    return swp__cl_fail(c, shown, "expected true or false, got %s", swp__cl_type_name(v));
  *out = json_is_true(v);
  return 0;
}

/* A protobuf JSON Duration: decimal seconds with at most 9 fractional
 * digits and an "s" suffix, e.g. "0.1s", "2s", "0.000500s". Positive, or
 * with zero_ok also "0s". Gives milliseconds. */
int swp__cl_get_duration(ictx *c, json_t *v, const char *shown, int zero_ok, double *ms,
                        char *raw, size_t rawlen) {
  if (!json_is_string(v))
    return swp__cl_fail(c, shown, "expected a duration string such as \"0.1s\", got %s",
                        swp__cl_type_name(v));
  const char *s = json_string_value(v);
  char text[64];
  raw_copy(text, sizeof text, s, 40);
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
    return swp__cl_fail(c, shown,
                "not a protobuf duration: expected seconds with an 's' suffix, such as \"0.1s\" "
                "(got \"%s\")",
                text);
  double sec = strtod(p, NULL);
  const char *want = zero_ok ? "0s or more" : "positive";
  if (neg && sec > 0) return swp__cl_fail(c, shown, "must be %s, got \"%s\"", want, text);
  if (!(sec > 0) && !zero_ok) return swp__cl_fail(c, shown, "must be %s, got \"%s\"", want, text);
  if (sec > 315576000000.0)
    return swp__cl_fail(c, shown, "out of range for a protobuf duration (\"%s\")", text);
  *ms = sec * 1000;
  snprintf(raw, rawlen, "%s", text);
  return 0;
}

/* ---- which fields an object may have -------------------------------------- */

/* Checks every field of obj (whose path is the current one): read[] are the
 * ones the mapper reads, known[] the ones it does not model (each noted with
 * its reason); any other is unknown — an error naming the nearest known
 * spelling (eng_suggest, the one did-you-mean rule), or with
 * SWP_CLIENT_LENIENT a note. what names the message ("a gRPC MethodConfig"). */
int swp__cl_check_fields(ictx *c, json_t *obj, const char *what, const char *const *read,
                        const swp__cl_known *known) {
  enum { MAXN = 96 };
  char spell[2 * MAXN][64];
  const char *cands[2 * MAXN + 1];
  size_t n = 0;
  for (size_t i = 0; read && read[i] && n + 2 <= 2 * MAXN; i++) {
    snprintf(spell[n], sizeof spell[n], "%s", read[i]);
    camel_case(read[i], spell[n + 1], sizeof spell[n + 1]);
    n += 2;
  }
  for (size_t i = 0; known && known[i].snake && n + 2 <= 2 * MAXN; i++) {
    snprintf(spell[n], sizeof spell[n], "%s", known[i].snake);
    camel_case(known[i].snake, spell[n + 1], sizeof spell[n + 1]);
    n += 2;
  }
  /* the file's own style first: its suggestion is spelt the way it writes */
  size_t k = 0;
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t i = pass ? !c->camel : (size_t)c->camel; i < n; i += 2) cands[k++] = spell[i];
  cands[k] = NULL;
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    int hit = 0;
    for (size_t i = 0; read && read[i] && !hit; i++) hit = name_is(key, read[i]);
    for (size_t i = 0; known && known[i].snake && !hit; i++)
      if (name_is(key, known[i].snake)) {
        hit = 1;
        swp__cl_note(c, key, "%s", known[i].note ? known[i].note : "not modelled, ignored");
      }
    if (hit) continue;
    const char *best = eng_suggest(key, cands, k);
    char hint[128] = "";
    if (best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
    if (c->flags & SWP_CLIENT_LENIENT) {
      swp__cl_note(c, key, "unknown field, ignored%s", hint);
      continue;
    }
    if (best) return swp__cl_fail(c, key, "unknown field%s", hint);
    return swp__cl_fail(c, key,
                        "unknown field in %s (--client-lenient ignores unknown fields)", what);
  }
  return 0;
}
