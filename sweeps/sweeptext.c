/*
 * sweeptext.c — the effective sweep as INI text (swp_sweep_format): the
 * file's own settings with the command-line overrides folded in, written so
 * that it parses back to the same sweep — the text a result file stores and
 * `list --ini` prints. Long lists wrap onto indented continuation lines
 * within the sweep-file grammar's line limit.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swp_internal.h"

int swp__looks_like_assignment(const char *v) {
  if (!isalpha((unsigned char)*v) && *v != '_') return 0;
  while (isalnum((unsigned char)*v) || *v == '_') v++;
  while (*v == ' ' || *v == '\t') v++;
  return *v == '=' || *v == ':';
}

typedef struct textbuf {
  char *s;
  size_t len, cap;
  int oom;
} textbuf;

static void tb_add(textbuf *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 1024;
    while (cap < t->len + n + 1) cap *= 2;
    char *v = realloc(t->s, cap);
    if (!v) {
      t->oom = 1;
      return;
    }
    t->s = v;
    t->cap = cap;
  }
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = 0;
}

static void tb_str(textbuf *t, const char *s) { tb_add(t, s, strlen(s)); }

/* Whether a continuation line may start with p: inih reads a line that
 * starts with ';' or '#' as a comment, the reader refuses an indented '[',
 * and the handler an indented "key = value". */
static int continuation_may_start(const char *p) {
  return *p && *p != ';' && *p != '#' && *p != '[' && !swp__looks_like_assignment(p);
}

/* Length of the next unbreakable piece of value at p, including the break
 * that ends it: in lists a break is ", " outside parentheses (the reader
 * joins continuation items with ", "); in text a single space between two
 * words (it joins continuation lines with one space, and inih strips every
 * blank around a line, so a break next to another blank would lose it). A break is only taken where the next line may
 * start. */
static size_t piece_length(const char *p, int list, int depth) {
  const char *q = p;
  for (; *q; q++) {
    if (*q == '(') depth++;
    if (*q == ')' && depth > 0) depth--;
    if (list) {
      if (*q == ',' && depth == 0 && q[1] == ' ' && continuation_may_start(q + 2))
        return (size_t)(q - p) + 2;
    } else if (*q == ' ' && q > p && !isspace((unsigned char)q[-1]) &&
               !isspace((unsigned char)q[1]) && continuation_may_start(q + 1)) {
      return (size_t)(q - p) + 1;
    }
  }
  return (size_t)(q - p);
}

/* "key = value", wrapped onto indented continuation lines at breaks (see
 * piece_length) near 100 columns, so that the text parses back to the same
 * value. A piece too long for a 4-blank indent gets a 1-blank one; a value
 * whose pieces cannot fit a line at all (only possible from a command-line
 * override, which checks with swp__wrapped_fits) would make a longer line. */
static void tb_wrapped(textbuf *t, const char *key, const char *value, int list) {
  const size_t width = 100;
  tb_str(t, key);
  /* "key = ;x" would read as an empty value with a comment. */
  tb_str(t, *value == ';' ? " =" : " = ");
  size_t col = strlen(key) + (*value == ';' ? 2 : 3);
  const char *p = value;
  int depth = 0, pending = 0;
  while (*p) {
    size_t n = piece_length(p, list, depth);
    int brk = p[n] != 0; /* the piece ends at a break: its last character is the blank */
    size_t shown = brk ? n - 1 : n;
    if (pending && col > 8 && col + 1 + shown > width) {
      size_t indent = 4 + shown > SWP_MAX_LINE ? 1 : 4;
      tb_str(t, indent == 1 ? "\n " : "\n    ");
      col = indent;
    } else if (pending) {
      tb_str(t, " ");
      col++;
    }
    tb_add(t, p, shown);
    col += shown;
    for (size_t i = 0; i < n; i++) {
      if (p[i] == '(') depth++;
      if (p[i] == ')' && depth > 0) depth--;
    }
    p += n;
    pending = brk;
  }
  tb_str(t, "\n");
}

/* Whether "key = value" formats into lines the reader accepts. */
int swp__wrapped_fits(const char *key, const char *value, int list) {
  textbuf t = {0};
  tb_wrapped(&t, key, value, list);
  int ok = !t.oom;
  for (const char *l = t.s; ok && l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    if (len > SWP_MAX_LINE) ok = 0;
    l += len + (nl ? 1 : 0);
  }
  free(t.s);
  return ok;
}

char *swp_sweep_format(const swp_sweep *sw) {
  textbuf t = {0};
  char num[64];
  tb_str(&t, "[sweep]\n");
  if (sw->name) tb_wrapped(&t, "name", sw->name, 0);
  if (sw->description) tb_wrapped(&t, "description", sw->description, 0);
  snprintf(num, sizeof num, "replicates = %lld\n", (long long)sw->replicates);
  tb_str(&t, num);
  if (sw->screen_up_to) { /* only when set: older texts stay equal */
    snprintf(num, sizeof num, "screen_up_to = %lld\n", (long long)sw->screen_up_to);
    tb_str(&t, num);
  }
  snprintf(num, sizeof num, "seed = %llu\n", (unsigned long long)sw->seed);
  tb_str(&t, num);
  if (sw->crn) tb_str(&t, "crn = on\n"); /* off is left out: older files' text is unchanged */
  if (sw->refine) tb_str(&t, "refine = on\n"); /* only when set: older texts stay equal */
  if (sw->record != SWP_RECORD_FULL) { /* full is left out: older texts stay equal */
    char rec[64];
    swp_record_text(sw, rec, sizeof rec);
    tb_str(&t, "record = ");
    tb_str(&t, rec);
    tb_str(&t, "\n");
  }
  if (sw->record_metrics) {
    char list[1024];
    swp_record_metrics_text(sw, list, sizeof list);
    tb_wrapped(&t, "record_metrics", list, 1);
  }
  if (sw->scenario_axes) tb_wrapped(&t, "scenario_axes", *sw->scenario_axes ? sw->scenario_axes : "none", 0);
  if (sw->tunable_axes) tb_wrapped(&t, "tunable_axes", *sw->tunable_axes ? sw->tunable_axes : "none", 0);
  /* only with telemetry files: other texts stay equal */
  if (sw->telemetry_digests) tb_wrapped(&t, "telemetry_digests", sw->telemetry_digests, 0);
  tb_str(&t, "\n[scenario]\n");
  for (size_t i = 0; i < sw->n_settings; i++)
    tb_wrapped(&t, sw->settings[i].key, sw->settings[i].value, 0);
  tb_str(&t, "\n[grid]\n");
  for (size_t a = 0; a < sw->n_axes; a++) tb_wrapped(&t, sw->axes[a].key, sw->axes[a].spec, 1);
  if (t.oom) {
    free(t.s);
    return NULL;
  }
  return t.s;
}

