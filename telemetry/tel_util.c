/*
 * tel_util.c — bounded reading, UTF-8, messages, numbers, units and series
 * selectors for the telemetry readers (tel_util.h).
 */
#include "tel_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

void tel_err(char *err, size_t errlen, const char *name, size_t line, const char *fmt, ...) {
  if (!err || !errlen) return;
  int k = line ? snprintf(err, errlen, "%s:%zu: ", name, line)
               : snprintf(err, errlen, "%s: ", name);
  if (k < 0 || (size_t)k >= errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
  va_end(ap);
  /* A message quotes the file: it must stay one line that cannot move a
   * terminal's cursor, so control characters (C0, DEL, and C1 as UTF-8)
   * become '?'. */
  for (unsigned char *p = (unsigned char *)err; *p; p++) {
    if (*p < 0x20 || *p == 0x7f) *p = '?';
    else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) p[0] = p[1] = '?';
  }
}

int tel_read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen) {
  *buf = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    tel_err(err, errlen, path, 0, "cannot open: %s", strerror(errno));
    return -1;
  }
  size_t cap = 65536, n = 0;
  char *b = malloc(cap + 1);
  if (!b) goto oom;
  for (;;) {
    if (n == cap) {
      if (cap >= TEL_MAX_FILE_BYTES) {
        tel_err(err, errlen, path, 0, "larger than %u MiB, the most a telemetry file may be",
                TEL_MAX_FILE_BYTES >> 20);
        free(b);
        fclose(f);
        return -1;
      }
      size_t nc = cap * 2 > TEL_MAX_FILE_BYTES ? TEL_MAX_FILE_BYTES : cap * 2;
      char *nb = realloc(b, nc + 1);
      if (!nb) goto oom;
      b = nb;
      cap = nc;
    }
    size_t got = fread(b + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    tel_err(err, errlen, path, 0, "read error");
    free(b);
    fclose(f);
    return -1;
  }
  if (n == cap) { /* exactly at the cap: one more byte means too large */
    int c = fgetc(f);
    if (c != EOF && cap >= TEL_MAX_FILE_BYTES) {
      tel_err(err, errlen, path, 0, "larger than %u MiB, the most a telemetry file may be",
              TEL_MAX_FILE_BYTES >> 20);
      free(b);
      fclose(f);
      return -1;
    }
  }
  fclose(f);
  b[n] = 0;
  *buf = b;
  *len = n;
  return 0;
oom:
  free(b);
  fclose(f);
  tel_err(err, errlen, path, 0, "out of memory");
  return -1;
}

int tel_check_text(const char *name, const char *text, size_t len, char *err, size_t errlen) {
  const unsigned char *s = (const unsigned char *)text;
  size_t line = 1;
  for (size_t i = 0; i < len;) {
    unsigned c = s[i];
    if (c == '\n') line++;
    if (c == 0) {
      tel_err(err, errlen, name, line, "NUL byte: not a text file");
      return -1;
    }
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k = c >= 0xF0 && c <= 0xF4 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 && c < 0xE0 ? 1 : 0;
    if (!k || i + k >= len) {
      tel_err(err, errlen, name, line, "not valid UTF-8 (byte 0x%02x)", c);
      return -1;
    }
    unsigned cp = c & (k == 1 ? 0x1F : k == 2 ? 0x0F : 0x07);
    for (size_t j = 1; j <= k; j++) {
      if ((s[i + j] & 0xC0) != 0x80) {
        tel_err(err, errlen, name, line, "not valid UTF-8 (byte 0x%02x)", c);
        return -1;
      }
      cp = (cp << 6) | (s[i + j] & 0x3F);
    }
    if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (k == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
      tel_err(err, errlen, name, line, "not valid UTF-8 (overlong or surrogate sequence)");
      return -1;
    }
    i += k + 1;
  }
  return 0;
}

int tel_parse_number(const char *s, size_t n, double *out) {
  char buf[64];
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, s, n);
  buf[n] = 0;
  const char *p = buf;
  int neg = 0;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
    *out = neg ? -INFINITY : INFINITY;
    return 0;
  }
  if (!strcasecmp(p, "nan")) {
    *out = NAN;
    return 0;
  }
  /* strtod also takes hex floats and "nan(...)": only decimal forms here */
  for (const char *q = p; *q; q++)
    if (!isdigit((unsigned char)*q) && !strchr(".eE+-", *q)) return -1;
  if (!isdigit((unsigned char)*p) && *p != '.') return -1;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (*end || end == buf || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

static int ends_with(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && !memcmp(s + n - k, suffix, k);
}

double tel_unit_ms(const char *name, size_t n) {
  if (ends_with(name, n, "_seconds") || ends_with(name, n, "_s") || ends_with(name, n, "_sec"))
    return 1000;
  if (ends_with(name, n, "_milliseconds") || ends_with(name, n, "_ms")) return 1;
  if (ends_with(name, n, "_microseconds") || ends_with(name, n, "_us")) return 1e-3;
  return 0;
}

double tel_unit_word_ms(const char *unit) {
  if (!unit) return 0;
  if (!strcmp(unit, "s")) return 1000;
  if (!strcmp(unit, "ms")) return 1;
  if (!strcmp(unit, "us")) return 1e-3;
  return 0;
}

static void sel_err(char *err, size_t errlen, const char *name, const char *sel, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
static void sel_err(char *err, size_t errlen, const char *name, const char *sel, const char *fmt,
                    ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tel_err(err, errlen, name, 0, "the series selector '%.100s': %s", sel, msg);
}

static int is_name_start(int c) { return isalpha(c) || c == '_'; }
/* '.' too: OpenTelemetry attribute keys and metric names have dots */
static int is_name_char(int c) { return isalnum(c) || c == '_' || c == '.'; }

int tel_selector_parse(const char *text, tel_selector *sel, const char *name, char *err,
                       size_t errlen) {
  memset(sel, 0, sizeof *sel);
  if (!text) return 0;
  const char *p = text;
#define BAD(...) return sel_err(err, errlen, name, text, __VA_ARGS__), -1
  while (isspace((unsigned char)*p)) p++;
  /* a metric name unless the text starts with a matcher name= */
  const char *q = p;
  while (is_name_char((unsigned char)*q) || *q == ':') q++;
  const char *r = q;
  while (isspace((unsigned char)*r)) r++;
  if (q > p && *r != '=' && is_name_start((unsigned char)*p)) {
    if ((size_t)(q - p) >= sizeof sel->metric) BAD("metric name longer than 127 characters");
    memcpy(sel->metric, p, (size_t)(q - p));
    p = q;
  }
  while (isspace((unsigned char)*p)) p++;
  int brace = *p == '{';
  if (brace) p++;
  for (;;) {
    while (isspace((unsigned char)*p) || *p == ',') p++;
    if (!*p || (brace && *p == '}')) break;
    if (!is_name_start((unsigned char)*p)) BAD("expected a label name, got '%.20s'", p);
    q = p;
    while (is_name_char((unsigned char)*q)) q++;
    if (sel->n == TEL_MAX_SELECTOR) BAD("at most %d label matchers", TEL_MAX_SELECTOR);
    if ((size_t)(q - p) >= sizeof sel->name[0]) BAD("label name longer than 63 characters");
    memcpy(sel->name[sel->n], p, (size_t)(q - p));
    p = q;
    while (isspace((unsigned char)*p)) p++;
    if (*p != '=') BAD("expected name=\"value\" (only '=' matchers), got '%.20s'", p);
    p++;
    while (isspace((unsigned char)*p)) p++;
    if (*p != '"') BAD("a label value must be in double quotes, got '%.20s'", p);
    p++;
    size_t k = 0;
    while (*p && *p != '"') {
      char c = *p++;
      if (c == '\\') {
        c = *p++;
        if (c == 'n') c = '\n';
        else if (c != '\\' && c != '"') BAD("unknown escape in a label value");
      }
      if (k + 1 >= sizeof sel->value[0]) BAD("label value longer than 255 characters");
      sel->value[sel->n][k++] = c;
    }
    if (*p != '"') BAD("unterminated label value");
    p++;
    sel->n++;
  }
  if (brace) {
    if (*p != '}') BAD("missing '}'");
    p++;
  }
  while (isspace((unsigned char)*p)) p++;
  if (*p) BAD("unexpected '%.20s' after the label matchers", p);
#undef BAD
  return 0;
}

int tel_selector_match(const tel_selector *sel, const char *metric, size_t n_labels,
                       const char *const *names, const char *const *values) {
  if (sel->metric[0] && (!metric || strcmp(sel->metric, metric))) return 0;
  for (size_t i = 0; i < sel->n; i++) {
    int ok = 0;
    for (size_t j = 0; j < n_labels && !ok; j++)
      ok = !strcmp(names[j], sel->name[i]) && !strcmp(values[j], sel->value[i]);
    if (!ok) return 0;
  }
  return 1;
}

int tel_hist_finish(tel_hist *h, const char *name, size_t line, char *err, size_t errlen) {
  if (!isfinite(h->lower) || h->lower < 0) {
    tel_err(err, errlen, name, line, "latencies must be >= 0");
    return -1;
  }
  double prev = h->lower, total = 0;
  for (size_t i = 0; i <= h->n; i++) {
    if (i < h->n) {
      if (!isfinite(h->le[i]) || h->le[i] < prev) {
        tel_err(err, errlen, name, line, "bucket bounds must be finite and increasing");
        return -1;
      }
      prev = h->le[i];
    }
    if (!isfinite(h->count[i]) || h->count[i] < 0) {
      tel_err(err, errlen, name, line, "bucket counts must be finite and >= 0");
      return -1;
    }
    total += h->count[i];
  }
  if (!(total > 0)) {
    tel_err(err, errlen, name, line, "the histogram holds no observations");
    return -1;
  }
  if (!isnan(h->sum) && (!isfinite(h->sum) || h->sum < 0)) {
    tel_err(err, errlen, name, line, "the sum of latencies must be finite and >= 0");
    return -1;
  }
  h->total = total;
  return 0;
}

void tel_hist_free(tel_hist *h) {
  if (!h) return;
  free(h->le);
  free(h->count);
  h->le = h->count = NULL;
  h->n = 0;
}

void tel_series_free(tel_series *s) {
  if (!s) return;
  free(s->t_s);
  free(s->rate);
  s->t_s = s->rate = NULL;
  s->n = 0;
}

/* Skips the JSON string starting at text[i] == '"'; returns the index past
 * it and its body [*b, *e). */
static size_t skip_string(const char *t, size_t len, size_t i, size_t *b, size_t *e) {
  *b = ++i;
  while (i < len && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
  *e = i < len ? i : len;
  return i < len ? i + 1 : len;
}

size_t tel_json_line(const char *t, size_t len, const char *target) {
  enum { MAXD = 64 };
  char path[512];
  size_t plen = 0, line = 1, i = 0, depth = 0;
  struct {
    char arr;
    size_t base, index;
  } st[MAXD];
  int want_key = 0; /* in an object, before a key */
  path[0] = 0;
  for (;;) {
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n'))
      line += t[i++] == '\n';
    if (i >= len) return 0;
    if (want_key) {
      if (t[i] == '}') {
        i++;
        goto close;
      }
      size_t b, e;
      i = skip_string(t, len, i, &b, &e);
      size_t base = st[depth - 1].base, k = e - b;
      if (base + 1 + k >= sizeof path) return 0;
      plen = base;
      if (plen) path[plen++] = '.';
      memcpy(path + plen, t + b, k);
      plen += k;
      path[plen] = 0;
      while (i < len && t[i] != ':') line += t[i++] == '\n';
      i++;
      want_key = 0;
      continue;
    }
    /* a value starts at i */
    if (!strcmp(path, target)) return line;
    if (t[i] == '{' || t[i] == '[') {
      if (depth == MAXD) return 0;
      st[depth].arr = t[i] == '[';
      st[depth].base = plen;
      st[depth].index = 0;
      depth++;
      i++;
      if (t[i - 1] == '{') {
        want_key = 1;
        continue;
      }
      while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n'))
        line += t[i++] == '\n';
      if (i < len && t[i] == ']') {
        i++;
        goto close;
      }
      plen += (size_t)snprintf(path + plen, sizeof path - plen, "[0]");
      if (plen >= sizeof path) return 0;
      continue;
    }
    if (t[i] == '"') {
      size_t b, e;
      i = skip_string(t, len, i, &b, &e);
    } else {
      while (i < len && !strchr(",]} \t\r\n", t[i])) i++;
    }
  after:
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n'))
      line += t[i++] == '\n';
    if (i >= len || !depth) return 0;
    if (t[i] == ',') {
      i++;
      if (st[depth - 1].arr) {
        plen = st[depth - 1].base;
        plen += (size_t)snprintf(path + plen, sizeof path - plen, "[%zu]", ++st[depth - 1].index);
        if (plen >= sizeof path) return 0;
      } else {
        want_key = 1;
      }
      continue;
    }
    i++; /* '}' or ']' */
  close:
    depth--;
    plen = st[depth].base;
    path[plen] = 0;
    goto after;
  }
}

void tel_json_err_line(const char *name, const char *text, size_t len, char *err, size_t errlen) {
  size_t n = strlen(name);
  if (!err || strncmp(err, name, n) || strncmp(err + n, ": at ", 5)) return;
  const char *p = err + n + 5, *e = strstr(p, ": ");
  if (!e || (size_t)(e - p) >= 512) return;
  char path[512];
  memcpy(path, p, (size_t)(e - p));
  path[e - p] = 0;
  size_t line = tel_json_line(text, len, path);
  if (!line) return;
  char *copy = strdup(err + n + 2);
  if (!copy) return;
  snprintf(err, errlen, "%s:%zu: %s", name, line, copy);
  free(copy);
}

json_t *tel_json_open(const char *name, const char *text, size_t len, const char *selector,
                      tel_selector *sel, char *err, size_t errlen) {
  if (tel_check_text(name, text, len, err, errlen)) return NULL;
  if (tel_selector_parse(selector, sel, name, err, errlen)) return NULL;
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) tel_err(err, errlen, name, je.line > 0 ? (size_t)je.line : 1, "%s", je.text);
  return root;
}
