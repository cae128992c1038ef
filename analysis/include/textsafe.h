/*
 * textsafe.h — the one place where text taken from a result or sweep file
 * (axis names, labels, paths, versions) is made safe for the sink it goes
 * to: a gnuplot script, a CSV cell, a JSON string, a terminal.
 *
 * A file somebody else wrote may hold any bytes, so each sink gets its own
 * escaping and callers never format such text raw. All functions accept any
 * byte string (invalid UTF-8 included) and never write past len.
 */
#ifndef STORMSWEEP_TEXTSAFE_H
#define STORMSWEEP_TEXTSAFE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* Length (1-4) of the well-formed UTF-8 sequence at s, reading at most avail
 * bytes, with its code point in *cp (may be NULL); 0 when the bytes are not
 * well-formed UTF-8 (overlong, surrogate, above U+10FFFF, truncated). */
size_t ana_utf8_seq(const char *s, size_t avail, uint32_t *cp);

/* The longest prefix of s of at most max bytes that ends on a character
 * boundary (an invalid byte counts as one character). */
size_t ana_utf8_cut(const char *s, size_t max);

/* Copies src into dst (len bytes, always terminated), cutting only at a
 * character boundary and dropping a sequence left incomplete at the end of
 * src (a label a writer cut mid-character). */
void ana_text_copy(char *dst, size_t len, const char *src);

/* Text for inside a single-quoted gnuplot string: control bytes, C1
 * controls and invalid UTF-8 are dropped, ' " and ` become _, so the result
 * can never end the string, start a command substitution or a new line. */
void ana_gp_text(char *dst, size_t len, const char *src);

/* Text for a terminal: control characters (C0 including ESC, CR and LF,
 * DEL, C1, bidirectional overrides) and invalid UTF-8 bytes are written as
 * visible \xNN; never cuts an escape or a character. */
void ana_term_text(char *dst, size_t len, const char *src);

/* ana_term_text straight to f; with keep_newlines a '\n' is written as is
 * (for multi-line texts whose parts were escaped already). */
void ana_term_fputs(FILE *f, const char *s, int keep_newlines);

/* The terminal escaper over a byte stream that arrives in pieces (what a
 * FILE hands its writer): ana_term_text's rule, except that newlines pass
 * (the stream is a program's whole output, lines and all) and NULs are
 * escaped too; a character cut by the end of a piece is held until its
 * last bytes arrive, so it is neither split nor taken for invalid. */
typedef struct ana_term_stream {
  char bytes[4];
  size_t held; /* bytes of an unfinished character, 0-3 */
} ana_term_stream;
/* The terminal form of n bytes of s, after what st holds, into out (room
 * for 4 * (n + 3) bytes); returns its length. */
size_t ana_term_stream_put(ana_term_stream *st, const char *s, size_t n, char *out);
/* The end of the stream: what st still holds, escaped (room for 12 bytes). */
size_t ana_term_stream_end(ana_term_stream *st, char *out);

/* One CSV cell (RFC 4180): a non-numeric cell starting with = + - @ tab or
 * CR (after leading spaces) gets a leading ' so a spreadsheet does not take
 * it for a formula; a cell holding , " CR or LF is quoted. */
void ana_csv_cell(FILE *f, const char *s);

/* ---- JSON, written with libjansson ----
 * File text as a JSON string value: invalid UTF-8 bytes, DEL and C1
 * controls become U+FFFD (jansson accepts only UTF-8 and escapes only C0
 * controls). NULL gives "". Returns NULL only when out of memory. */
json_t *ana_json_text(const char *s);
/* A number; NaN and infinities become null (JSON has neither), whole
 * numbers print without a fraction. */
json_t *ana_json_number(double v);
/* json_object_set_new with a key made valid as by ana_json_text; steals
 * value. Returns 0 or -1. */
int ana_json_set(json_t *obj, const char *key, json_t *value);
/* Dumps root (10 significant digits; indent 0 = compact) and a newline,
 * then releases root. Returns 0 or -1. */
int ana_json_print(FILE *f, json_t *root, int indent);
/* One JSON string literal (ana_json_text dumped) to f. */
void ana_json_string(FILE *f, const char *s);

#endif
