/*
 * test_textsafe.c — the escaping of untrusted text (analysis/textsafe.c):
 * known answers for each sink (gnuplot, terminal, CSV, JSON) and UTF-8
 * cutting, then the sinks' promises checked on every single byte and on
 * many random byte strings: gnuplot text never holds a quote, backtick or
 * control byte; terminal text never holds a control character; JSON is
 * always valid UTF-8 with no raw control character; a cut never splits a
 * character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "textsafe.h"

/* ---- helpers ---- */

/* RFC 3629 well-formedness, written independently of textsafe.c. */
static int utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    size_t k;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      k = 1;
    } else if (c == 0xE0) {
      k = 2, lo = 0xA0;
    } else if (c == 0xED) {
      k = 2, hi = 0x9F;
    } else if (c >= 0xE1 && c <= 0xEF) {
      k = 2;
    } else if (c == 0xF0) {
      k = 3, lo = 0x90;
    } else if (c == 0xF4) {
      k = 3, hi = 0x8F;
    } else if (c >= 0xF1 && c <= 0xF3) {
      k = 3;
    } else {
      return 0;
    }
    if (i + k >= n) return 0; /* truncated */
    if (s[i + 1] < lo || s[i + 1] > hi) return 0;
    for (size_t j = 2; j <= k; j++)
      if (s[i + j] < 0x80 || s[i + j] > 0xBF) return 0;
    i += k + 1;
  }
  return 1;
}

/* Runs one FILE sink on s and returns what it wrote (caller frees). */
static char *sink(void (*fn)(FILE *, const char *), const char *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  fn(f, s);
  fclose(f);
  return buf;
}

static void term_keep(FILE *f, const char *s) { ana_term_fputs(f, s, 1); }
static void term_flat(FILE *f, const char *s) { ana_term_fputs(f, s, 0); }

#define assert_sink(fn, in, want)                                                              \
  do {                                                                                         \
    char *got_ = sink(fn, in);                                                                 \
    assert_string_equal(got_, want);                                                           \
    free(got_);                                                                                \
  } while (0)

/* A fixed-seed generator for the random strings (xorshift64). */
static uint64_t next(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* ---- UTF-8 ---- */

static void test_utf8_seq(void **state) {
  (void)state;
  uint32_t cp = 0;
  assert_int_equal(ana_utf8_seq("A", 1, &cp), 1);
  assert_int_equal(cp, 'A');
  assert_int_equal(ana_utf8_seq("\xc3\xa9", 2, &cp), 2);
  assert_int_equal(cp, 0xE9);
  assert_int_equal(ana_utf8_seq("\xe2\x82\xac", 3, &cp), 3);
  assert_int_equal(cp, 0x20AC);
  assert_int_equal(ana_utf8_seq("\xf0\x9f\x98\x80", 4, &cp), 4);
  assert_int_equal(cp, 0x1F600);
  assert_int_equal(ana_utf8_seq("\xc0\x80", 2, NULL), 0);         /* overlong NUL */
  assert_int_equal(ana_utf8_seq("\xe0\x80\xaf", 3, NULL), 0);     /* overlong / */
  assert_int_equal(ana_utf8_seq("\xed\xa0\x80", 3, NULL), 0);     /* surrogate */
  assert_int_equal(ana_utf8_seq("\xf4\x90\x80\x80", 4, NULL), 0); /* > U+10FFFF */
  assert_int_equal(ana_utf8_seq("\xe2\x82", 2, NULL), 0);         /* truncated */
  assert_int_equal(ana_utf8_seq("\x80", 1, NULL), 0);             /* lone continuation */
  assert_int_equal(ana_utf8_seq("\xff", 1, NULL), 0);
}

static void test_cut_at_boundary(void **state) {
  (void)state;
  const char *s = "a\xc3\xa9\xe2\x82\xac"; /* a é € : 1 + 2 + 3 bytes */
  assert_int_equal(ana_utf8_cut(s, 0), 0);
  assert_int_equal(ana_utf8_cut(s, 1), 1);
  assert_int_equal(ana_utf8_cut(s, 2), 1);
  assert_int_equal(ana_utf8_cut(s, 3), 3);
  assert_int_equal(ana_utf8_cut(s, 5), 3);
  assert_int_equal(ana_utf8_cut(s, 6), 6);
  assert_int_equal(ana_utf8_cut(s, 100), 6);
  char out[8];
  ana_text_copy(out, 5, s);
  assert_string_equal(out, "a\xc3\xa9");
  /* A writer's cut mid-character at the end is dropped, not passed on. */
  ana_text_copy(out, sizeof out, "ab\xe2\x82");
  assert_string_equal(out, "ab");
  ana_text_copy(out, sizeof out, "ab\xf0\x9f\x98");
  assert_string_equal(out, "ab");
  ana_text_copy(out, 1, "abc");
  assert_string_equal(out, "");
  /* 64-byte labels of 2-byte characters: 63 usable bytes hold 31 of them. */
  char label[200] = "", cut[64];
  for (int i = 0; i < 40; i++) strcat(label, "\xc3\xa9");
  ana_text_copy(cut, sizeof cut, label);
  assert_int_equal(strlen(cut), 62);
  assert_true(utf8_valid((const unsigned char *)cut, strlen(cut)));
}

/* ---- gnuplot ---- */

static void test_gp_text_known(void **state) {
  (void)state;
  char out[128];
  ana_gp_text(out, sizeof out, "10\nsystem(\"touch /tmp/x\")\n#");
  assert_string_equal(out, "10system(_touch /tmp/x_)#");
  ana_gp_text(out, sizeof out, "it's `id` \"q\"");
  assert_string_equal(out, "it_s _id_ _q_");
  ana_gp_text(out, sizeof out, "a\r\x1b[31m\x7f\xc2\x9b" "b\xff\xc3\xa9");
  assert_string_equal(out, "a[31mb\xc3\xa9");
  ana_gp_text(out, 3, "\xc3\xa9\xc3\xa9"); /* room for one character only */
  assert_string_equal(out, "\xc3\xa9");
}

/* ---- terminal ---- */

static void test_term_known(void **state) {
  (void)state;
  char out[128];
  ana_term_text(out, sizeof out, "\x1b[2K\rRECOMMENDED: point 7");
  assert_string_equal(out, "\\x1b[2K\\x0dRECOMMENDED: point 7");
  ana_term_text(out, sizeof out, "x\xc2\x9b" "1m\x7f\xe2\x80\xae\xff\xc3\xa9\n");
  assert_string_equal(out, "x\\xc2\\x9b1m\\x7f\\xe2\\x80\\xae\\xff\xc3\xa9\\x0a");
  ana_term_text(out, 7, "\x1b\x1b"); /* never half an escape */
  assert_string_equal(out, "\\x1b");
  assert_sink(term_keep, "line 1\nline\r2\n", "line 1\nline\\x0d2\n");
  assert_sink(term_flat, "line 1\n", "line 1\\x0a");
}

/* ---- CSV ---- */

static void test_csv_known(void **state) {
  (void)state;
  assert_sink(ana_csv_cell, "=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\"");
  assert_sink(ana_csv_cell, "=1+2", "'=1+2");
  assert_sink(ana_csv_cell, "+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0");
  assert_sink(ana_csv_cell, "-2+3", "'-2+3");
  assert_sink(ana_csv_cell, "@SUM(A1)", "'@SUM(A1)");
  assert_sink(ana_csv_cell, "\tx", "'\tx");
  assert_sink(ana_csv_cell, "\rx", "\"'\rx\"");
  assert_sink(ana_csv_cell, " =1", "' =1");
  assert_sink(ana_csv_cell, "x\ry", "\"x\ry\"");
  assert_sink(ana_csv_cell, "a,b", "\"a,b\"");
  /* Numbers and plain words stay as they are. */
  assert_sink(ana_csv_cell, "-5", "-5");
  assert_sink(ana_csv_cell, "-0.25", "-0.25");
  assert_sink(ana_csv_cell, "+1e3", "+1e3");
  assert_sink(ana_csv_cell, "-inf", "-inf");
  assert_sink(ana_csv_cell, "inf", "inf");
  assert_sink(ana_csv_cell, "guarded", "guarded");
  assert_sink(ana_csv_cell, "", "");
}

/* ---- JSON ---- */

/* JSON strings are written by jansson after ana_json_text made the text
 * valid UTF-8: invalid bytes, DEL and C1 controls become U+FFFD (raw, as
 * jansson writes non-ASCII), C0 controls are jansson's escapes. */
#define FFFD "\xef\xbf\xbd"
static void test_json_known(void **state) {
  (void)state;
  assert_sink(ana_json_string, "a\"b\\c\nd\te", "\"a\\\"b\\\\c\\nd\\te\"");
  assert_sink(ana_json_string, "\x1b[1m\x7f", "\"\\u001B[1m" FFFD "\"");
  assert_sink(ana_json_string, "\xff\xc3" "A\xe2\x82", "\"" FFFD FFFD "A" FFFD FFFD "\"");
  assert_sink(ana_json_string, "\xc3\xa9\xe2\x82\xac", "\"\xc3\xa9\xe2\x82\xac\"");
  assert_sink(ana_json_string, "\xed\xa0\x80", "\"" FFFD FFFD FFFD "\""); /* surrogate */
  assert_sink(ana_json_string, "\xc2\x9b" "1m\xe2\x80\xae", "\"" FFFD "1m" FFFD "\""); /* C1 CSI, RLO */
  assert_sink(ana_json_string, NULL, "\"\"");
  /* numbers: no NaN or infinity in JSON, whole numbers without a fraction */
  const double nums[] = {NAN, INFINITY, -INFINITY, 1500, 0.95, -3, 1e300};
  const char *const want[] = {"null", "null", "null", "1500", "0.95", "-3", "1e300"};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
    json_t *v = ana_json_number(nums[i]);
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
    json_decref(v);
    assert_non_null(t);
    assert_string_equal(t, want[i]);
    free(t);
  }
}

/* ---- every byte, and random strings ---- */

static int has_control(const unsigned char *s) {
  for (; *s; s++)
    if (*s < 0x20 || *s == 0x7f) return 1;
  return 0;
}

/* The promises of each sink on one input. */
static void check_all_sinks(const char *in) {
  char gp[512], term[2048];
  ana_gp_text(gp, sizeof gp, in);
  assert_null(strpbrk(gp, "'\"`\n\r"));
  assert_false(has_control((const unsigned char *)gp));
  assert_true(utf8_valid((const unsigned char *)gp, strlen(gp)));

  ana_term_text(term, sizeof term, in);
  assert_false(has_control((const unsigned char *)term));
  assert_true(utf8_valid((const unsigned char *)term, strlen(term)));
  assert_null(strstr(term, "\xc2\x9b")); /* C1 CSI */

  char *j = sink(ana_json_string, in);
  size_t n = strlen(j);
  assert_true(n >= 2 && j[0] == '"' && j[n - 1] == '"');
  assert_false(has_control((const unsigned char *)j));
  assert_true(utf8_valid((const unsigned char *)j, n));
  for (size_t i = 1; i + 1 < n; i++) {
    if (j[i] == '"') fail_msg("unescaped quote in %s", j);
    if (j[i] == '\\') {
      assert_non_null(strchr("\"\\/bfnrtu", j[i + 1]));
      i++;
    }
  }
  free(j);

  char cut[16];
  ana_text_copy(cut, sizeof cut, in);
  assert_true(strlen(cut) < sizeof cut);
  assert_int_equal(memcmp(cut, in, strlen(cut)), 0);
}

static void test_every_byte(void **state) {
  (void)state;
  for (int b = 1; b < 256; b++) {
    char in[4] = {'x', (char)b, 'y', 0};
    check_all_sinks(in);
  }
}

static void test_random_strings(void **state) {
  (void)state;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  static const char *const pieces[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc2\x9b",
                                       "\xe2\x80\xae", "'",     "`",   "\"", "\n", "\x1b["};
  for (int t = 0; t < 20000; t++) {
    char in[120];
    size_t len = next(&x) % 100, i = 0;
    while (i < len) {
      uint64_t r = next(&x);
      if (r % 3 == 0) {
        const char *p = pieces[(r >> 8) % (sizeof pieces / sizeof pieces[0])];
        size_t k = strlen(p);
        if (i + k > len) break;
        memcpy(in + i, p, k);
        i += k;
      } else {
        char c = (char)(1 + (r >> 16) % 255);
        in[i++] = c;
      }
    }
    in[i] = '\0';
    check_all_sinks(in);
  }
}

static int has_control_but_newline(const unsigned char *s) {
  for (; *s; s++)
    if ((*s < 0x20 && *s != '\n') || *s == 0x7f) return 1;
  return 0;
}

/* The stream form of in (n bytes) fed in pieces cut at a and b. */
static size_t stream3(const char *in, size_t n, size_t a, size_t b, char *out) {
  ana_term_stream st = {0};
  size_t o = ana_term_stream_put(&st, in, a, out);
  o += ana_term_stream_put(&st, in + a, b - a, out + o);
  o += ana_term_stream_put(&st, in + b, n - b, out + o);
  o += ana_term_stream_end(&st, out + o);
  out[o] = '\0';
  return o;
}

/* The escaping stream (stdout and stderr of the tool): wherever the pieces
 * are cut, what comes out is ana_term_fputs's multi-line form of the whole,
 * so a character split between two writes is neither split nor escaped. */
static void test_term_stream(void **state) {
  (void)state;
  char out[4 * 140];
  stream3("a\x1b[2J\xc3", 6, 2, 3, out);
  assert_string_equal(out, "a\\x1b[2J\\xc3"); /* a lone lead byte at the end */
  stream3("\xe2\x82\xac\n\x00\x07", 6, 1, 2, out);
  assert_string_equal(out, "\xe2\x82\xac\n\\x00\\x07");
  uint64_t x = 0xD1B54A32D192ED03ull;
  static const char *const pieces[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                       "\xc2\x9b", "\xe2\x80\xae", "\n",  "\x1b[", "\t"};
  for (int t = 0; t < 3000; t++) {
    char in[120];
    size_t len = next(&x) % 40, i = 0;
    while (i < len) {
      uint64_t r = next(&x);
      const char *p = pieces[(r >> 8) % (sizeof pieces / sizeof pieces[0])];
      size_t k = strlen(p);
      if (r % 3 == 0 && i + k <= len) {
        memcpy(in + i, p, k);
        i += k;
      } else {
        in[i++] = (char)(1 + (r >> 16) % 255);
      }
    }
    in[i] = '\0';
    char *want = sink(term_keep, in);
    for (size_t a = 0; a <= i; a++)
      for (size_t b = a; b <= i; b += 3) {
        stream3(in, i, a, b, out);
        assert_string_equal(out, want);
        assert_false(has_control_but_newline((const unsigned char *)out));
      }
    free(want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_seq),       cmocka_unit_test(test_cut_at_boundary),
      cmocka_unit_test(test_gp_text_known),  cmocka_unit_test(test_term_known),
      cmocka_unit_test(test_csv_known),      cmocka_unit_test(test_json_known),
      cmocka_unit_test(test_every_byte),     cmocka_unit_test(test_random_strings),
      cmocka_unit_test(test_term_stream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
