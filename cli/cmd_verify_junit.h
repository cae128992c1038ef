/*
 * cmd_verify_junit.h — verify's verdict as a JUnit XML report (--junit FILE),
 * written by cmd_verify_junit.c.
 */
#ifndef CMD_VERIFY_JUNIT_H
#define CMD_VERIFY_JUNIT_H

#include <stdint.h>

#include "seqtest.h"

/* What the report says: the test and the text beside it. */
typedef struct cli_verify_verdict {
  const ana_seq *seq;   /* the sequential test: one testcase per enabled target */
  const char *label;    /* the configuration (the suite's name) */
  uint64_t master_seed;
  double wall_s;        /* the suite's and every testcase's time */
  const char *word;     /* PROVEN, REFUTED, UNDECIDED or INTERRUPTED */
  int interrupted;
  const char *evidence; /* the evidence text: body of failures, system-out of passes */
} cli_verify_verdict;

/* Writes the report to path ("-": standard output) through cli_out_open; an
 * existing file is replaced only with force. Returns 0, or -1 after an
 * error line. */
int cli_verify_junit(const char *path, int force, const cli_verify_verdict *v);

#endif
