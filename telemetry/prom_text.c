/*
 * prom_text.c — a latency histogram from the Prometheus text exposition
 * format (a scrape, or the text a promtool query or dump prints for one
 * instant): the classic histogram's cumulative NAME_bucket{le="..."}
 * samples, NAME_sum and NAME_count, one series chosen by its labels.
 *
 * The grammar is small and parsed by hand, line by line: comments and
 * # HELP / # TYPE lines, then samples NAME[{LABELS}] VALUE [TIMESTAMP].
 * Everything that is not a histogram (counters, gauges, summaries) is
 * skipped. A histogram series must have increasing le bounds, cumulative
 * counts that never decrease, a +Inf bucket and, when given, a _count equal
 * to it; each series may appear once (a second scrape of it in the same
 * file is refused: take one instant). Units come from the metric's name
 * (_seconds, _milliseconds, ...; seconds, Prometheus's base unit, when it
 * names none). Fuzzed by tests/fuzz/fuzz_promtext.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tel_util.h"

#define MAX_LABELS 64
#define HASH_SLOTS 32768 /* a power of two above 2 x TEL_MAX_SERIES */

typedef struct bucket {
  double le, cum;
} bucket;

typedef struct series {
  char *base;   /* metric name without _bucket / _sum / _count */
  char *labels; /* canonical text: name="value",... sorted, le left out */
  size_t n_labels;
  char **names, **values;
  bucket *b;
  size_t nb, cap;
  double sum, count;
  int has_sum, has_count;
  size_t line;     /* first line */
  size_t last_seq; /* histogram sample sequence number of its last sample */
} series;

typedef struct parser {
  const char *name;
  char *err;
  size_t errlen;
  series *s;
  size_t ns;
  int32_t slot[HASH_SLOTS]; /* index into s, -1 empty */
  size_t seq;
  /* names whose # TYPE is not histogram (summaries' _sum and _count) */
  char **other;
  size_t n_other;
} parser;

typedef struct label {
  char name[128];
  char *value; /* unescaped, malloc'd */
} label;

static uint64_t fnv(const char *a, const char *b) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = a; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;
  for (const char *p = b; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h;
}

static int is_metric_start(int c) { return isalpha(c) || c == '_' || c == ':'; }
static int is_metric_char(int c) { return isalnum(c) || c == '_' || c == ':'; }

static int label_cmp(const void *a, const void *b) {
  return strcmp(((const label *)a)->name, ((const label *)b)->name);
}

/* Escapes a label value as the text format writes it (for messages and the
 * canonical key). */
static size_t escape_value(const char *v, char *out, size_t cap) {
  size_t k = 0;
  for (const char *p = v; *p; p++) {
    const char *rep = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
    size_t m = rep ? strlen(rep) : 1;
    if (out && k + m < cap) memcpy(out + k, rep ? rep : p, m);
    k += m;
  }
  if (out && cap) out[k < cap ? k : cap - 1] = 0;
  return k;
}

static void free_labels(label *l, size_t n) {
  for (size_t i = 0; i < n; i++) free(l[i].value);
}

/* Parses {name="value",...} at *pp (just past the '{'). */
static int parse_labels(parser *P, size_t line, const char **pp, const char *end, label *l,
                        size_t *nl) {
  const char *p = *pp;
  *nl = 0;
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p < end && *p == '}') {
      p++;
      break;
    }
    if (p >= end || !(isalpha((unsigned char)*p) || *p == '_')) {
      tel_err(P->err, P->errlen, P->name, line, "expected a label name or '}'");
      return -1;
    }
    const char *q = p;
    while (q < end && (isalnum((unsigned char)*q) || *q == '_')) q++;
    if ((size_t)(q - p) >= sizeof l[0].name) {
      tel_err(P->err, P->errlen, P->name, line, "label name longer than 127 characters");
      return -1;
    }
    if (*nl == MAX_LABELS) {
      tel_err(P->err, P->errlen, P->name, line, "more than %d labels on one sample", MAX_LABELS);
      return -1;
    }
    label *cur = &l[*nl];
    memcpy(cur->name, p, (size_t)(q - p));
    cur->name[q - p] = 0;
    p = q;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p >= end || *p != '=') {
      tel_err(P->err, P->errlen, P->name, line, "expected '=' after label name '%s'", cur->name);
      return -1;
    }
    p++;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p >= end || *p != '"') {
      tel_err(P->err, P->errlen, P->name, line, "label %s: the value must be in double quotes",
              cur->name);
      return -1;
    }
    p++;
    const char *v0 = p;
    size_t vn = 0;
    while (p < end && *p != '"') {
      if (*p == '\\') {
        if (p + 1 >= end || !strchr("\\\"n", p[1])) {
          tel_err(P->err, P->errlen, P->name, line,
                  "label %s: unknown escape in its value (only \\\\, \\\" and \\n)", cur->name);
          return -1;
        }
        p++;
      }
      p++;
      vn++;
    }
    if (p >= end) {
      tel_err(P->err, P->errlen, P->name, line, "label %s: unterminated value", cur->name);
      return -1;
    }
    cur->value = malloc(vn + 1);
    if (!cur->value) {
      tel_err(P->err, P->errlen, P->name, line, "out of memory");
      return -1;
    }
    size_t k = 0;
    for (const char *r = v0; r < p; r++) {
      char c = *r;
      if (c == '\\') {
        c = *++r;
        if (c == 'n') c = '\n';
      }
      cur->value[k++] = c;
    }
    cur->value[k] = 0;
    for (size_t i = 0; i < *nl; i++)
      if (!strcmp(l[i].name, cur->name)) {
        free(cur->value);
        tel_err(P->err, P->errlen, P->name, line, "label %s given twice", cur->name);
        return -1;
      }
    (*nl)++;
    p++;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p < end && *p == ',') {
      p++;
      continue;
    }
    if (p < end && *p == '}') {
      p++;
      break;
    }
    tel_err(P->err, P->errlen, P->name, line, "expected ',' or '}' after label %s", cur->name);
    return -1;
  }
  *pp = p;
  return 0;
}

/* The series of base and labels (le left out), created when new. */
static series *series_get(parser *P, size_t line, const char *base, const label *l, size_t nl,
                          int *created) {
  char key[8192];
  size_t k = 0;
  key[0] = 0;
  for (size_t i = 0; i < nl; i++) {
    if (!strcmp(l[i].name, "le")) continue;
    size_t need = strlen(l[i].name) + 4 + escape_value(l[i].value, NULL, 0);
    if (k + need >= sizeof key) {
      tel_err(P->err, P->errlen, P->name, line, "labels longer than %zu bytes", sizeof key - 1);
      return NULL;
    }
    k += (size_t)snprintf(key + k, sizeof key - k, "%s%s=\"", k ? "," : "", l[i].name);
    k += escape_value(l[i].value, key + k, sizeof key - k);
    key[k++] = '"';
    key[k] = 0;
  }
  uint64_t h = fnv(base, key);
  size_t slot = (size_t)h & (HASH_SLOTS - 1);
  while (P->slot[slot] >= 0) {
    series *s = &P->s[P->slot[slot]];
    if (!strcmp(s->base, base) && !strcmp(s->labels, key)) {
      *created = 0;
      return s;
    }
    slot = (slot + 1) & (HASH_SLOTS - 1);
  }
  if (P->ns == TEL_MAX_SERIES) {
    tel_err(P->err, P->errlen, P->name, line, "more than %d histogram series", TEL_MAX_SERIES);
    return NULL;
  }
  if ((P->ns & (P->ns - 1)) == 0) { /* grow at powers of two */
    series *ns = realloc(P->s, (P->ns ? 2 * P->ns : 1) * sizeof *ns);
    if (!ns) goto oom;
    P->s = ns;
  }
  series *s = &P->s[P->ns];
  memset(s, 0, sizeof *s);
  s->base = strdup(base);
  s->labels = strdup(key);
  s->line = line;
  s->sum = s->count = NAN;
  size_t m = 0;
  for (size_t i = 0; i < nl; i++) m += strcmp(l[i].name, "le") != 0;
  s->names = calloc(m ? m : 1, sizeof *s->names);
  s->values = calloc(m ? m : 1, sizeof *s->values);
  if (!s->base || !s->labels || !s->names || !s->values) {
    free(s->base), free(s->labels), free(s->names), free(s->values);
    goto oom;
  }
  for (size_t i = 0; i < nl; i++) {
    if (!strcmp(l[i].name, "le")) continue;
    s->names[s->n_labels] = strdup(l[i].name);
    s->values[s->n_labels] = strdup(l[i].value);
    s->n_labels++;
    if (!s->names[s->n_labels - 1] || !s->values[s->n_labels - 1]) {
      P->ns++; /* freed with the rest */
      goto oom;
    }
  }
  P->slot[slot] = (int32_t)P->ns++;
  *created = 1;
  return s;
oom:
  tel_err(P->err, P->errlen, P->name, line, "out of memory");
  return NULL;
}

static int is_other(const parser *P, const char *base) {
  for (size_t i = 0; i < P->n_other; i++)
    if (!strcmp(P->other[i], base)) return 1;
  return 0;
}

/* # TYPE NAME KIND: remember names that are not histograms. */
static int type_line(parser *P, size_t line, const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  const char *n0 = p;
  while (p < end && is_metric_char((unsigned char)*p)) p++;
  size_t nn = (size_t)(p - n0);
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  const char *k0 = p;
  while (p < end && !isspace((unsigned char)*p)) p++;
  if (!nn || p == k0) {
    tel_err(P->err, P->errlen, P->name, line, "# TYPE needs a metric name and a type");
    return -1;
  }
  if ((size_t)(p - k0) == 9 && !memcmp(k0, "histogram", 9)) return 0;
  if (P->n_other >= 4 * TEL_MAX_SERIES) return 0; /* only a hint: stop remembering */
  char **no = realloc(P->other, (P->n_other + 1) * sizeof *no);
  if (!no) goto oom;
  P->other = no;
  if (!(P->other[P->n_other] = strndup(n0, nn))) goto oom;
  P->n_other++;
  return 0;
oom:
  tel_err(P->err, P->errlen, P->name, line, "out of memory");
  return -1;
}

static void series_text(const series *s, char *buf, size_t len) {
  if (s->labels[0]) snprintf(buf, len, "%s{%s}", s->base, s->labels);
  else snprintf(buf, len, "%s", s->base);
}

/* The value after a sample's name and labels, and an optional timestamp in ms that is
 * checked but not used. */
static int sample_value(parser *P, size_t line, const char *p, const char *end,
                        const char *name, double *vp) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  const char *v0 = p;
  while (p < end && !isspace((unsigned char)*p)) p++;
  if (tel_parse_number(v0, (size_t)(p - v0), vp)) {
    tel_err(P->err, P->errlen, P->name, line, "%s: '%.*s' is not a number", name,
            (int)((size_t)(p - v0) > 40 ? 40 : (size_t)(p - v0)), v0);
    return -1;
  }
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (p < end) { /* a timestamp in ms */
    const char *t0 = p;
    if (*p == '-') p++;
    while (p < end && isdigit((unsigned char)*p)) p++;
    const char *t1 = p;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    if (t1 == t0 || p < end) {
      tel_err(P->err, P->errlen, P->name, line, "unexpected text after the value of %s", name);
      return -1;
    }
  }
  return 0;
}

/* One _bucket sample of series s (its le label and count v): appended after checking that
 * buckets come in increasing le order with cumulative counts. */
static int bucket_sample(parser *P, size_t line, series *s, const char *what, const char *le,
                         double v) {
  double bound;
  if (tel_parse_number(le, strlen(le), &bound) || isnan(bound)) {
    tel_err(P->err, P->errlen, P->name, line, "%s: le=\"%.40s\" is not a number", what, le);
    return -1;
  }
  if (bound < 0) {
    tel_err(P->err, P->errlen, P->name, line, "%s: le=\"%.40s\" is negative: latencies are >= 0",
            what, le);
    return -1;
  }
  if (!isfinite(v)) {
    tel_err(P->err, P->errlen, P->name, line, "%s_bucket{le=\"%.40s\"} count is infinite", what,
            le);
    return -1;
  }
  if (s->nb) {
    const bucket *prev = &s->b[s->nb - 1];
    if (isinf(prev->le)) {
      tel_err(P->err, P->errlen, P->name, line,
              "%s has a bucket after its le=\"+Inf\" one (first at line %zu): a duplicate "
              "series, or buckets out of order",
              what, s->line);
      return -1;
    }
    if (!(bound > prev->le)) {
      tel_err(P->err, P->errlen, P->name, line,
              "%s: le=\"%.40s\" is not above the previous bucket's le=\"%g\": buckets must come "
              "in increasing le order, each once",
              what, le, prev->le);
      return -1;
    }
    if (v < prev->cum) {
      tel_err(P->err, P->errlen, P->name, line,
              "%s: the count of le=\"%.40s\" (%g) is below that of le=\"%g\" (%g): bucket "
              "counts are cumulative and never decrease",
              what, le, v, prev->le, prev->cum);
      return -1;
    }
  }
  if (s->nb == TEL_MAX_BUCKETS + 1) {
    tel_err(P->err, P->errlen, P->name, line, "%s: more than %d buckets", what, TEL_MAX_BUCKETS);
    return -1;
  }
  if (s->nb == s->cap) {
    size_t nc = s->cap ? 2 * s->cap : 16;
    bucket *nb = realloc(s->b, nc * sizeof *nb);
    if (!nb) {
      tel_err(P->err, P->errlen, P->name, line, "out of memory");
      return -1;
    }
    s->b = nb, s->cap = nc;
  }
  s->b[s->nb++] = (bucket){bound, v};
  return 0;
}

static int sample_line(parser *P, size_t line, const char *p, const char *end) {
  const char *n0 = p;
  if (!is_metric_start((unsigned char)*p)) {
    tel_err(P->err, P->errlen, P->name, line, "expected a metric name, '#' or a blank line");
    return -1;
  }
  while (p < end && is_metric_char((unsigned char)*p)) p++;
  size_t nn = (size_t)(p - n0);
  if (nn > 200) {
    tel_err(P->err, P->errlen, P->name, line, "metric name longer than 200 characters");
    return -1;
  }
  char name[256];
  memcpy(name, n0, nn);
  name[nn] = 0;
  label l[MAX_LABELS];
  size_t nl = 0;
  int rc = -1;
  if (p < end && *p == '{') {
    p++;
    if (parse_labels(P, line, &p, end, l, &nl)) goto out;
  }
  if (p >= end || (*p != ' ' && *p != '\t')) {
    tel_err(P->err, P->errlen, P->name, line, "expected a space and a value after %s", name);
    goto out;
  }
  double v;
  if (sample_value(P, line, p, end, name, &v)) goto out;
  const char *kind = NULL;
  if (nn > 7 && !strcmp(name + nn - 7, "_bucket")) kind = "_bucket";
  else if (nn > 4 && !strcmp(name + nn - 4, "_sum")) kind = "_sum";
  else if (nn > 6 && !strcmp(name + nn - 6, "_count")) kind = "_count";
  if (!kind) {
    rc = 0;
    goto out;
  }
  name[nn - strlen(kind)] = 0; /* the base name */
  if (is_other(P, name)) {
    rc = 0;
    goto out;
  }
  const char *le = NULL;
  for (size_t i = 0; i < nl; i++)
    if (!strcmp(l[i].name, "le")) le = l[i].value;
  if (kind[1] == 'b' && !le) {
    rc = 0; /* not a classic histogram bucket */
    goto out;
  }
  qsort(l, nl, sizeof *l, label_cmp);
  int created;
  series *s = series_get(P, line, name, l, nl, &created);
  if (!s) goto out;
  char what[512];
  series_text(s, what, sizeof what);
  P->seq++;
  if (!created && s->last_seq != P->seq - 1) {
    tel_err(P->err, P->errlen, P->name, line,
            "%s appears again (first at line %zu): a duplicate series (give one scrape)", what,
            s->line);
    goto out;
  }
  s->last_seq = P->seq;
  if (isnan(v)) {
    tel_err(P->err, P->errlen, P->name, line, "%s%s is NaN", what, kind);
    goto out;
  }
  if (v < 0) {
    tel_err(P->err, P->errlen, P->name, line, "%s%s is negative (%g)", what, kind, v);
    goto out;
  }
  if (kind[1] == 's') {
    if (s->has_sum) {
      tel_err(P->err, P->errlen, P->name, line, "%s_sum given twice", what);
      goto out;
    }
    if (!isfinite(v)) {
      tel_err(P->err, P->errlen, P->name, line, "%s_sum is infinite", what);
      goto out;
    }
    s->sum = v, s->has_sum = 1;
    rc = 0;
    goto out;
  }
  if (kind[1] == 'c') {
    if (s->has_count) {
      tel_err(P->err, P->errlen, P->name, line, "%s_count given twice", what);
      goto out;
    }
    if (!isfinite(v)) {
      tel_err(P->err, P->errlen, P->name, line, "%s_count is infinite", what);
      goto out;
    }
    s->count = v, s->has_count = 1;
    rc = 0;
    goto out;
  }
  if (bucket_sample(P, line, s, what, le, v)) goto out;
  rc = 0;
out:
  free_labels(l, nl);
  return rc;
}

static void parser_free(parser *P) {
  for (size_t i = 0; i < P->ns; i++) {
    series *s = &P->s[i];
    for (size_t j = 0; j < s->n_labels; j++) free(s->names[j]), free(s->values[j]);
    free(s->names), free(s->values), free(s->base), free(s->labels), free(s->b);
  }
  free(P->s);
  for (size_t i = 0; i < P->n_other; i++) free(P->other[i]);
  free(P->other);
}

/* Checks series s as a whole and turns it into h. */
static int series_finish(parser *P, const series *s, tel_hist *h) {
  char what[512];
  series_text(s, what, sizeof what);
  const bucket *last = &s->b[s->nb - 1];
  if (!isinf(last->le)) {
    tel_err(P->err, P->errlen, P->name, s->line,
            "%s has no le=\"+Inf\" bucket (the text format requires one: it counts every "
            "observation)",
            what);
    return -1;
  }
  if (s->has_count && s->count != last->cum) {
    tel_err(P->err, P->errlen, P->name, s->line,
            "%s_count (%g) differs from its le=\"+Inf\" bucket (%g)", what, s->count, last->cum);
    return -1;
  }
  double unit = tel_unit_ms(s->base, strlen(s->base));
  if (unit == 0) unit = 1000; /* seconds, Prometheus's base unit */
  memset(h, 0, sizeof *h);
  h->n = s->nb - 1;
  h->le = malloc((h->n ? h->n : 1) * sizeof *h->le);
  h->count = malloc((h->n + 1) * sizeof *h->count);
  if (!h->le || !h->count) {
    tel_hist_free(h);
    tel_err(P->err, P->errlen, P->name, s->line, "out of memory");
    return -1;
  }
  double prev = 0;
  for (size_t i = 0; i < s->nb; i++) {
    if (i < h->n) h->le[i] = s->b[i].le * unit;
    h->count[i] = s->b[i].cum - prev;
    prev = s->b[i].cum;
  }
  h->sum = s->has_sum ? s->sum * unit : NAN;
  if (tel_hist_finish(h, P->name, s->line, P->err, P->errlen)) {
    tel_hist_free(h);
    return -1;
  }
  return 0;
}

static int select_series(parser *P, const char *selector, size_t lines, tel_hist *out) {
  tel_selector sel;
  if (tel_selector_parse(selector, &sel, P->name, P->err, P->errlen)) return -1;
  size_t hist = 0, match = 0, first = 0, second = 0;
  for (size_t i = 0; i < P->ns; i++) {
    if (!P->s[i].nb) continue; /* _sum / _count of something with no buckets */
    hist++;
    if (!tel_selector_match(&sel, P->s[i].base, P->s[i].n_labels,
                            (const char *const *)P->s[i].names,
                            (const char *const *)P->s[i].values))
      continue;
    if (match++ == 0) first = i;
    else if (match == 2) second = i;
  }
  char a[512], b[512];
  if (!hist) {
    tel_err(P->err, P->errlen, P->name, lines ? lines : 1,
            "no histogram in the file (no NAME_bucket samples with an le label)");
    return -1;
  }
  if (!match) {
    size_t i = 0;
    while (!P->s[i].nb) i++;
    series_text(&P->s[i], a, sizeof a);
    tel_err(P->err, P->errlen, P->name, P->s[i].line,
            "no histogram series matches service_histogram_series '%.200s' (this one is %.200s)",
            selector ? selector : "", a);
    return -1;
  }
  if (match > 1) {
    series_text(&P->s[first], a, sizeof a);
    series_text(&P->s[second], b, sizeof b);
    tel_err(P->err, P->errlen, P->name, P->s[second].line,
            "%zu histogram series match; choose one with service_histogram_series (e.g. %.200s "
            "or %.200s)",
            match, a, b);
    return -2;
  }
  return series_finish(P, &P->s[first], out);
}

int tel_prom_text_parse(const char *name, const char *text, size_t len, const char *selector,
                        tel_hist *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (tel_check_text(name, text, len, err, errlen)) return -1;
  parser *P = calloc(1, sizeof *P);
  if (!P) {
    tel_err(err, errlen, name, 0, "out of memory");
    return -1;
  }
  P->name = name, P->err = err, P->errlen = errlen;
  memset(P->slot, 0xff, sizeof P->slot);
  int rc = -1;
  size_t line = 0;
  const char *p = text, *end = text + len;
  while (p < end) {
    line++;
    const char *e = memchr(p, '\n', (size_t)(end - p));
    if (!e) e = end;
    const char *le = e;
    if (le > p && le[-1] == '\r') le--;
    if ((size_t)(le - p) > TEL_MAX_LINE) {
      tel_err(err, errlen, name, line, "line longer than %d bytes", TEL_MAX_LINE);
      goto out;
    }
    const char *q = p;
    while (q < le && (*q == ' ' || *q == '\t')) q++;
    if (q < le && *q == '#') {
      q++;
      while (q < le && (*q == ' ' || *q == '\t')) q++;
      if (le - q >= 5 && !memcmp(q, "TYPE", 4) && (q[4] == ' ' || q[4] == '\t') &&
          type_line(P, line, q + 4, le))
        goto out;
    } else if (q < le) {
      if (sample_line(P, line, q, le)) goto out;
    }
    p = e < end ? e + 1 : end;
  }
  rc = select_series(P, selector, line, out);
out:
  parser_free(P);
  free(P);
  return rc;
}
