/*
 * csv_lines.c — line and field splitting for the telemetry CSV readers
 * (csv_lines.h). No quoting: every field the readers take is a number or
 * a column name.
 */
#include "csv_lines.h"

#include <string.h>

#include "tel_util.h"

int csv_next(csv_reader *r, csv_row *row, char *err, size_t errlen) {
  while (r->p < r->end) {
    r->line++;
    const char *e = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!e) e = r->end;
    const char *s = r->p, *le = e;
    r->p = e < r->end ? e + 1 : r->end;
    if ((size_t)(le - s) > TEL_MAX_LINE) {
      tel_err(err, errlen, r->name, r->line, "line longer than %d bytes", TEL_MAX_LINE);
      return -1;
    }
    while (le > s && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t')) le--;
    while (s < le && (*s == ' ' || *s == '\t')) s++;
    if (s == le || *s == '#') continue;
    row->line = r->line;
    row->n = 0;
    for (;;) {
      const char *c = memchr(s, ',', (size_t)(le - s));
      const char *fe = c ? c : le;
      const char *a = s, *b = fe;
      while (a < b && (*a == ' ' || *a == '\t')) a++;
      while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
      if (row->n == CSV_MAX_FIELDS) {
        tel_err(err, errlen, r->name, r->line, "more than %d fields", CSV_MAX_FIELDS);
        return -1;
      }
      row->f[row->n] = a;
      row->len[row->n++] = (size_t)(b - a);
      if (!c) break;
      s = c + 1;
    }
    return 0;
  }
  return 1;
}
