/*
 * tel_util.h — what the telemetry readers share (internal): bounded file
 * reading, the UTF-8 check, "FILE:LINE: ..." messages, numbers, unit
 * suffixes, the series selector and the last checks of a histogram.
 */
#ifndef STORMSWEEP_TEL_UTIL_H
#define STORMSWEEP_TEL_UTIL_H

#include <stddef.h>

#include "tel.h"

void tel_err(char *err, size_t errlen, const char *name, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The whole file (NUL-terminated, at most TEL_MAX_FILE_BYTES). */
int tel_read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen);

/* 0 when text is valid UTF-8 with no NUL byte; else -1 and the line. */
int tel_check_text(const char *name, const char *text, size_t len, char *err, size_t errlen);

/* A number the text formats write: decimal or exponent form, NaN, +Inf,
 * -Inf (any case). The whole of [s, s + n) must be the number. */
int tel_parse_number(const char *s, size_t n, double *out);

/* Milliseconds per unit of a metric or column name by its suffix
 * ("_seconds", "_s", "_milliseconds", "_ms", "_microseconds", "_us"), or of
 * an OpenTelemetry unit ("s", "ms", "us"); 0 when it names none. */
double tel_unit_ms(const char *name, size_t n);
double tel_unit_word_ms(const char *unit);

typedef struct tel_selector {
  char metric[128];
  size_t n;
  char name[TEL_MAX_SELECTOR][64];
  char value[TEL_MAX_SELECTOR][256];
} tel_selector;

/* Parses "[METRIC] [{]name="value", ...[}]"; NULL or "" selects all.
 * Messages name the file (name) the selector was given for. */
int tel_selector_parse(const char *text, tel_selector *sel, const char *name, char *err,
                       size_t errlen);
/* 1 when metric and the labels (n pairs) satisfy sel. */
int tel_selector_match(const tel_selector *sel, const char *metric, size_t n_labels,
                       const char *const *names, const char *const *values);

/* The checks every histogram gets before it is handed out: finite bounds
 * that never decrease, counts >= 0, some values at all, a sum that is not
 * negative. */
int tel_hist_finish(tel_hist *h, const char *name, size_t line, char *err, size_t errlen);

/* The line on which the JSON value at path (as the readers name it:
 * key.key[3].key) starts in text, which jansson already accepted; 0 when
 * there is none. */
size_t tel_json_line(const char *text, size_t len, const char *path);

/* Rewrites a reader's "NAME: at PATH: ..." message as "NAME:LINE: at
 * PATH: ..." with the line of PATH in text. */
void tel_json_err_line(const char *name, const char *text, size_t len, char *err, size_t errlen);

/* The first steps of each JSON reader: the text checked (tel_check_text),
 * the selector parsed into *sel, the document loaded with duplicate keys
 * refused (a syntax error named at its line). The document, or NULL with
 * err. */
struct json_t;
struct json_t *tel_json_open(const char *name, const char *text, size_t len,
                             const char *selector, tel_selector *sel, char *err, size_t errlen);

#endif
