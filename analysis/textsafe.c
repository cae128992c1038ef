/*
 * textsafe.c — escaping of untrusted text for each output sink (gnuplot,
 * CSV, JSON, terminal); see textsafe.h.
 *
 * Everything walks the input one UTF-8 character at a time with
 * ana_utf8_seq (RFC 3629 well-formedness: no overlongs, no surrogates,
 * nothing above U+10FFFF), so a character is either passed whole, escaped
 * whole or dropped whole, and a length limit never splits one.
 */
#include "textsafe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t ana_utf8_seq(const char *s, size_t avail, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  if (avail == 0) return 0;
  unsigned c = u[0];
  size_t n;
  uint32_t v, min;
  if (c < 0x80) {
    if (cp) *cp = c;
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    n = 2, v = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, v = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (avail < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((u[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (u[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  if (cp) *cp = v;
  return n;
}

/* Bytes available at s for one sequence: up to 4, stopping at the NUL. */
static size_t avail4(const char *s) {
  size_t n = 0;
  while (n < 4 && s[n]) n++;
  return n;
}

/* One character at s: its length (an invalid byte is one) and whether it
 * is well-formed. */
static size_t char_at(const char *s, uint32_t *cp, int *valid) {
  size_t n = ana_utf8_seq(s, avail4(s), cp);
  *valid = n > 0;
  if (!n) {
    *cp = (unsigned char)s[0];
    n = 1;
  }
  return n;
}

size_t ana_utf8_cut(const char *s, size_t max) {
  size_t i = 0;
  while (s[i]) {
    uint32_t cp;
    int valid;
    size_t n = char_at(s + i, &cp, &valid);
    if (i + n > max) break;
    i += n;
  }
  return i;
}

/* Expected length of a sequence starting with lead byte c (0: not a lead). */
static size_t lead_len(unsigned char c) {
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c >= 0xE0 && c <= 0xEF) return 3;
  if (c >= 0xF0 && c <= 0xF4) return 4;
  return 0;
}

void ana_text_copy(char *dst, size_t len, const char *src) {
  if (len == 0) return;
  size_t keep = ana_utf8_cut(src, len - 1);
  if (src[keep] == '\0') {
    /* A lead byte with fewer continuation bytes than it needs, at the end. */
    size_t j = keep, conts = 0;
    while (j > 0 && conts < 3 && ((unsigned char)src[j - 1] & 0xC0) == 0x80) j--, conts++;
    if (j > 0 && lead_len((unsigned char)src[j - 1]) > conts + 1) keep = j - 1;
  }
  memcpy(dst, src, keep);
  dst[keep] = '\0';
}

/* Characters no display should interpret: C0, DEL, C1, and the
 * bidirectional embeddings, overrides and isolates (they reorder what the
 * reader sees). */
static int is_control(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

void ana_gp_text(char *dst, size_t len, const char *src) {
  if (len == 0) return;
  size_t j = 0;
  for (size_t i = 0; src[i];) {
    uint32_t cp;
    int valid;
    size_t n = char_at(src + i, &cp, &valid);
    if (!valid || is_control(cp)) {
      i += n;
      continue;
    }
    if (j + n > len - 1) break;
    if (cp == '\'' || cp == '"' || cp == '`')
      dst[j++] = '_';
    else
      memcpy(dst + j, src + i, n), j += n;
    i += n;
  }
  dst[j] = '\0';
}

static const char hex[] = "0123456789abcdef";

/* Appends the terminal form of one character to dst (at most 16 bytes);
 * returns its length. */
static size_t term_char(const char *s, size_t n, int valid, uint32_t cp, char *out) {
  if (valid && !is_control(cp)) {
    memcpy(out, s, n);
    return n;
  }
  size_t k = 0;
  for (size_t b = 0; b < n; b++) {
    unsigned char c = (unsigned char)s[b];
    out[k++] = '\\';
    out[k++] = 'x';
    out[k++] = hex[c >> 4];
    out[k++] = hex[c & 15];
  }
  return k;
}

void ana_term_text(char *dst, size_t len, const char *src) {
  if (len == 0) return;
  size_t j = 0;
  for (size_t i = 0; src[i];) {
    uint32_t cp;
    int valid;
    size_t n = char_at(src + i, &cp, &valid);
    char piece[16];
    size_t k = term_char(src + i, n, valid, cp, piece);
    if (j + k > len - 1) break;
    memcpy(dst + j, piece, k);
    j += k;
    i += n;
  }
  dst[j] = '\0';
}

void ana_term_fputs(FILE *f, const char *s, int keep_newlines) {
  for (size_t i = 0; s && s[i];) {
    uint32_t cp;
    int valid;
    size_t n = char_at(s + i, &cp, &valid);
    if (keep_newlines && s[i] == '\n') {
      fputc('\n', f);
    } else {
      char piece[16];
      fwrite(piece, 1, term_char(s + i, n, valid, cp, piece), f);
    }
    i += n;
  }
}

/* A piece ends inside a character when its last bytes are a lead byte and
 * fewer continuation bytes than the lead announces: their count (0: none). */
static size_t cut_tail(const char *s, size_t n) {
  for (size_t k = 1; k <= 3 && k <= n; k++) {
    unsigned char c = (unsigned char)s[n - k];
    if ((c & 0xC0) == 0x80) continue;
    return lead_len(c) > k ? k : 0;
  }
  return 0;
}

/* The character at s (avail bytes, NULs included: a stream is not a C
 * string) in its terminal form; newlines pass, since the stream is whole
 * program output. Returns the bytes of s consumed. */
static size_t stream_char(const char *s, size_t avail, char *out, size_t *o) {
  unsigned char c = (unsigned char)s[0];
  if ((c >= 0x20 && c < 0x7F) || c == '\n') {
    out[(*o)++] = (char)c;
    return 1;
  }
  uint32_t cp;
  size_t n = ana_utf8_seq(s, avail < 4 ? avail : 4, &cp);
  int valid = n > 0;
  if (!valid) cp = c, n = 1;
  *o += term_char(s, n, valid, cp, out + *o);
  return n;
}

size_t ana_term_stream_put(ana_term_stream *st, const char *s, size_t n, char *out) {
  size_t o = 0, i = 0;
  while (st->held) {
    /* Complete the held character with the continuation bytes that follow. */
    size_t need = lead_len((unsigned char)st->bytes[0]);
    while (st->held < need && i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
      st->bytes[st->held++] = s[i++];
    if (st->held < need && i == n) return o; /* still open: wait for more */
    char piece[4];
    size_t len = st->held;
    memcpy(piece, st->bytes, len);
    st->held = 0;
    for (size_t k = 0; k < len;) k += stream_char(piece + k, len - k, out, &o);
  }
  size_t keep = cut_tail(s + i, n - i);
  for (size_t end = n - keep; i < end;) i += stream_char(s + i, end - i, out, &o);
  memcpy(st->bytes, s + i, keep);
  st->held = keep;
  return o;
}

size_t ana_term_stream_end(ana_term_stream *st, char *out) {
  size_t o = 0, len = st->held;
  st->held = 0;
  for (size_t k = 0; k < len;) k += stream_char(st->bytes + k, len - k, out, &o);
  return o;
}

/* Whole cell a number as strtod reads it ("-1.5", "-inf", "1e3"). */
static int is_number(const char *s) {
  if (!*s || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
    return 0;
  char *end = NULL;
  (void)strtod(s, &end);
  return end != s && *end == '\0';
}

void ana_csv_cell(FILE *f, const char *s) {
  if (!s) s = "";
  const char *p = s;
  while (*p == ' ') p++;
  int formula = (*p == '=' || *p == '+' || *p == '-' || *p == '@' || *s == '\t' || *s == '\r') &&
                !is_number(s);
  int quote = strpbrk(s, ",\"\r\n") != NULL;
  if (quote) fputc('"', f);
  if (formula) fputc('\'', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  if (quote) fputc('"', f);
}

/* JSON itself is written by libjansson; what it cannot do is take text
 * that is not UTF-8, so file text is made valid first. Invalid bytes, DEL
 * C1 controls and bidirectional overrides become U+FFFD (jansson escapes
 * C0 controls itself, but would pass the others raw to a terminal that
 * shows the output). */
json_t *ana_json_text(const char *s) {
  size_t len = s ? strlen(s) : 0;
  char *buf = malloc(len * 3 + 1); /* an invalid byte (1) becomes U+FFFD (3) */
  if (!buf) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    uint32_t cp;
    int valid;
    size_t n = char_at(s + i, &cp, &valid);
    if (!valid || (cp >= 0x20 && is_control(cp))) {
      memcpy(buf + o, "\xEF\xBF\xBD", 3);
      o += 3;
    } else {
      memcpy(buf + o, s + i, n);
      o += n;
    }
    i += n;
  }
  buf[o] = 0;
  json_t *v = json_stringn(buf, o);
  free(buf);
  return v;
}

json_t *ana_json_number(double v) {
  if (!isfinite(v)) return json_null();
  /* whole numbers as integers: 1500, not jansson's 1500.0 */
  if (v == floor(v) && fabs(v) < 1e15) return json_integer((json_int_t)v);
  return json_real(v);
}

int ana_json_set(json_t *obj, const char *key, json_t *value) {
  json_t *k = ana_json_text(key);
  int rc = k && value ? json_object_set_new(obj, json_string_value(k), value) : -1;
  if (rc && value && !k) json_decref(value);
  json_decref(k);
  return rc;
}

int ana_json_print(FILE *f, json_t *root, int indent) {
  size_t flags = JSON_REAL_PRECISION(10) | (indent ? JSON_INDENT(indent) : JSON_COMPACT);
  int rc = root ? json_dumpf(root, f, flags) : -1;
  if (!rc) rc = fputc('\n', f) == EOF ? -1 : 0;
  json_decref(root);
  return rc;
}

void ana_json_string(FILE *f, const char *s) {
  json_t *v = ana_json_text(s);
  if (v) json_dumpf(v, f, JSON_ENCODE_ANY);
  json_decref(v);
}
