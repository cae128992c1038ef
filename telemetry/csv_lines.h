/*
 * csv_lines.h — the CSV both CSV readers take (internal): comma-separated
 * fields, blank lines and '#' comment lines skipped, a header line first.
 */
#ifndef STORMSWEEP_CSV_LINES_H
#define STORMSWEEP_CSV_LINES_H

#include <stddef.h>

#define CSV_MAX_FIELDS 8

typedef struct csv_row {
  size_t line, n;
  const char *f[CSV_MAX_FIELDS];
  size_t len[CSV_MAX_FIELDS];
} csv_row;

typedef struct csv_reader {
  const char *p, *end, *name;
  size_t line;
} csv_reader;

/* The next row with a field; 1 at the end, -1 on a line too long or with
 * more than CSV_MAX_FIELDS fields (message in err). */
int csv_next(csv_reader *r, csv_row *row, char *err, size_t errlen);

#endif
