/*
 * recommend_explain.c — the recommendation explains itself
 * (recommend_explain.h).
 *
 * The safe set is every point that meets the targets on the evidence: runs,
 * none collapsed, and the observed P(pass) (an undetermined run does not
 * pass) and P(bad) (metastable, collapsed or undetermined: the set the
 * --max-metastable target bounds) meet the targets. It is not a proof (twenty runs of twenty
 * passing show only P(pass) >= 0.83 at 95%); it says where the data puts the
 * good settings, summarised per axis by the values that occur in it.
 *
 * At the chosen point each axis is changed alone, the others held: an axis
 * whose every other value is also in the safe set does not change the
 * answer there; otherwise the values that leave it are named. A chosen
 * value at the smallest or largest value swept of an axis that matters is
 * at the edge of the grid: what lies beyond was not tried.
 *
 * --prefer KEY=VALUE (in order of importance) chooses among the safe set:
 * the point matching the most important preferences, then the cost rule.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "recommend_explain.h"
#include "textsafe.h"

int ana_reco_on_evidence(const ana_point_stats *ps, const ana_reco_opts *o) {
  /* An undetermined run counts as not passing (it is in n - n_pass). */
  return ps->n > 0 && ps->n_coll == 0 && ps->p_pass >= o->min_pass && ps->p_bad <= o->max_meta;
}

/* ---- the grid's values per axis ---- */

typedef struct axis_levels {
  size_t n;
  double *v;   /* sorted ascending */
  size_t *ex;  /* a point index with that value (for its label) */
  int numeric; /* every label reads as a number: ranges make sense */
} axis_levels;

static int same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static double val(const fmt_results *r, size_t p, size_t a) { return r->values[p * r->n_axes + a]; }

static int label_numeric(const fmt_results *r, size_t a, size_t p) {
  char lab[64], *end;
  ana_value_label(r, a, p, lab, sizeof lab);
  strtod(lab, &end);
  return end != lab && *end == '\0';
}

static int levels_make(axis_levels *L, const fmt_results *r, size_t a) {
  memset(L, 0, sizeof *L);
  size_t np = r->n_points ? r->n_points : 1;
  L->v = malloc(np * sizeof *L->v);
  L->ex = malloc(np * sizeof *L->ex);
  if (!L->v || !L->ex) return -1;
  L->numeric = 1;
  for (size_t p = 0; p < r->n_points; p++) {
    double x = val(r, p, a);
    size_t i = 0;
    while (i < L->n && !same(L->v[i], x)) i++;
    if (i < L->n) continue;
    /* insert sorted (NaN last) */
    size_t at = L->n;
    while (at > 0 && (isnan(L->v[at - 1]) || (!isnan(x) && L->v[at - 1] > x))) at--;
    memmove(L->v + at + 1, L->v + at, (L->n - at) * sizeof *L->v);
    memmove(L->ex + at + 1, L->ex + at, (L->n - at) * sizeof *L->ex);
    L->v[at] = x;
    L->ex[at] = p;
    L->n++;
    if (!label_numeric(r, a, p)) L->numeric = 0;
  }
  return 0;
}

static long level_of(const axis_levels *L, double x) {
  for (size_t i = 0; i < L->n; i++)
    if (same(L->v[i], x)) return (long)i;
  return -1;
}

/* The point with p's values but value x on axis a, or -1. */
static long neighbour(const fmt_results *r, size_t p, size_t a, double x) {
  for (size_t q = 0; q < r->n_points; q++) {
    size_t b = 0;
    for (; b < r->n_axes; b++)
      if (!same(val(r, q, b), b == a ? x : val(r, p, b))) break;
    if (b == r->n_axes) return (long)q;
  }
  return -1;
}

static void label(const fmt_results *r, size_t a, size_t p, char *buf, size_t len) {
  char v[64];
  ana_value_label(r, a, p, v, sizeof v);
  ana_term_text(buf, len, v);
}

static void name_of(const fmt_results *r, size_t a, char *buf, size_t len) {
  ana_term_text(buf, len, r->axes[a]);
}

/* "0, 10, 20" of the marked levels (mark NULL: all). */
static void list_levels(FILE *f, const fmt_results *r, size_t a, const axis_levels *L,
                        const int *mark, int want) {
  int any = 0;
  for (size_t i = 0; i < L->n; i++) {
    if (mark && !!mark[i] != want) continue;
    char lab[96];
    label(r, a, L->ex[i], lab, sizeof lab);
    fprintf(f, "%s%s", any ? ", " : "", lab);
    any = 1;
  }
}

/* One axis of the safe set: "any of 0, 10, 20, 1000", "<= 2 (1.1, 1.25, 2;
 * not inf)", ">= 50 (...)", "from 0.1 to 0.5 (...)" or "one of ...". */
static void axis_summary(FILE *f, const fmt_results *r, size_t a, const axis_levels *L,
                         const int *mark) {
  size_t k = 0, first = L->n, last = 0;
  for (size_t i = 0; i < L->n; i++)
    if (mark[i]) {
      k++;
      if (first == L->n) first = i;
      last = i;
    }
  char nm[256];
  name_of(r, a, nm, sizeof nm);
  fprintf(f, "    %s: ", nm);
  if (k == L->n) {
    fprintf(f, L->n == 1 ? "" : "any of ");
    list_levels(f, r, a, L, NULL, 1);
    fprintf(f, L->n == 1 ? " (the only value swept)\n" : "\n");
    return;
  }
  int contiguous = last - first + 1 == k;
  char lo[96], hi[96];
  label(r, a, L->ex[first], lo, sizeof lo);
  label(r, a, L->ex[last], hi, sizeof hi);
  if (k == 1)
    fprintf(f, "%s only", lo);
  else if (L->numeric && contiguous && first == 0)
    fprintf(f, "<= %s", hi);
  else if (L->numeric && contiguous && last == L->n - 1)
    fprintf(f, ">= %s", lo);
  else if (L->numeric && contiguous)
    fprintf(f, "from %s to %s", lo, hi);
  else
    fprintf(f, "one of");
  fprintf(f, " (");
  list_levels(f, r, a, L, mark, 1);
  fprintf(f, "; not ");
  list_levels(f, r, a, L, mark, 0);
  fprintf(f, ")\n");
}

/* ---- the explanation ---- */

static ana_cost_key cost(const fmt_results *r, const ana_point_stats *ps, long vn) {
  double v = vn >= 0 ? val(r, ps->index, (size_t)vn) : 0.0;
  return ana_cost_key_make(ps->amp.mean, 1.0 - ps->gp_during.mean, v, ps->point, ps->index);
}

/* Bit i (from the top) set when point p has preference i's value. */
static unsigned long pref_score(const fmt_results *r, size_t p, const ana_answer_opts *ao) {
  unsigned long sc = 0;
  for (size_t i = 0; i < ao->n_prefer && i < 63; i++)
    if (same(val(r, p, ao->prefer[i].axis), ao->prefer[i].value)) sc |= 1ul << (62 - i);
  return sc;
}

static void cost_rule(FILE *f) {
  fprintf(f, "  Cost rule: among the settings that meet the targets, the lowest retry "
             "amplification (to 0.01), then the most goodput during the fault (as a share "
             "of baseline, to 0.01), then the fewest vnodes, then the lowest point id; "
             "--prefer KEY=VALUE chooses among equally safe settings instead.\n");
}

/* Which cost key separates a (cheaper) from b. */
static void cost_decided(FILE *f, const ana_point_stats *a, const ana_cost_key *ka,
                         const ana_point_stats *b, const ana_cost_key *kb) {
  (void)a;
  (void)b;
  if (ka->amp != kb->amp)
    fprintf(f, "retry amplification (%.2f vs %.2f, to 0.01)", ka->amp, kb->amp);
  else if (ka->lost != kb->lost)
    fprintf(f, "goodput during the fault (%.2f vs %.2f of baseline, to 0.01; amplification "
               "equal)", 1.0 - ka->lost, 1.0 - kb->lost);
  else if (ka->vnodes != kb->vnodes)
    fprintf(f, "vnodes (%g vs %g; amplification and goodput during the fault equal to 0.01)",
            ka->vnodes, kb->vnodes);
  else
    fprintf(f, "the point id alone (a tie on every cost: any of them would do)");
}

/* --prefer: the point of the safe set with the most important preferences
 * first (then the cheapest), printed with what it is; -1 when none has any
 * preferred value (the answer stays the cost rule's). */
static long explain_prefer(FILE *f, const fmt_results *r, const ana_summary *s,
                           const ana_reco_opts *o, const ana_answer_opts *ao, const int *safe,
                           const axis_levels *L, long vn, long base, int proven) {
  size_t np = s->n_points;
  long pick = -1;
  unsigned long best_sc = 0;
  ana_cost_key kp = {0};
  for (size_t p = 0; p < np; p++) {
    if (!safe[p]) continue;
    unsigned long sc = pref_score(r, p, ao);
    ana_cost_key k = cost(r, &s->points[p], vn);
    if (pick < 0 || sc > best_sc || (sc == best_sc && ana_cost_compare(&k, &kp) < 0))
      pick = (long)p, best_sc = sc, kp = k;
  }
  fprintf(f, "  Preferred (--prefer");
  for (size_t i = 0; i < ao->n_prefer; i++) {
    char nm[256], lab[96];
    name_of(r, ao->prefer[i].axis, nm, sizeof nm);
    long li = level_of(&L[ao->prefer[i].axis], ao->prefer[i].value);
    label(r, ao->prefer[i].axis, L[ao->prefer[i].axis].ex[li], lab, sizeof lab);
    fprintf(f, " %s=%s", nm, lab);
  }
  fprintf(f, "): ");
  if (pick < 0 || best_sc == 0) {
    fprintf(f, "no setting in the safe set has any of these values; the answer stays the "
               "cost rule's.\n");
  } else {
    char where[1024];
    ana_point_describe(r, (size_t)pick, where, sizeof where);
    const ana_point_stats *ps = &s->points[pick];
    size_t m = 0;
    for (size_t i = 0; i < ao->n_prefer; i++)
      m += same(val(r, (size_t)pick, ao->prefer[i].axis), ao->prefer[i].value);
    fprintf(f, "point %lld: %s — in the safe set (%lld of %lld runs passed, %lld "
               "bad), with %zu of the %zu preferred values; ",
            (long long)ps->point, where, (long long)ps->n_pass, (long long)ps->n,
            (long long)ps->n_bad, m, ao->n_prefer);
    if (pick == base && proven)
      fprintf(f, "it is the setting refine proved.\n");
    else if (ps->pass_exact.lo >= o->min_pass && ps->bad_exact.hi <= o->max_meta)
      fprintf(f, "it meets the targets with exact 95%% bounds (not corrected for the "
                 "choice).\n");
    else
      fprintf(f, "not proven: 'stormsweep verify' with these settings proves or refutes "
                 "one setting.\n");
    for (size_t i = 0; i < ao->n_prefer; i++)
      if (!same(val(r, (size_t)pick, ao->prefer[i].axis), ao->prefer[i].value)) {
        char nm[256];
        name_of(r, ao->prefer[i].axis, nm, sizeof nm);
        fprintf(f, "    (no setting in the safe set has %s as preferred together with the "
                   "more important preferences)\n", nm);
      }
    return pick;
  }
  return -1;
}

/* One axis at a time at the chosen point: whether changing it alone leaves
 * the safe set, and a warning when the chosen value is at the grid's edge
 * on an axis that matters. */
static void explain_axes(FILE *f, const fmt_results *r, const ana_point_stats *cp, size_t np,
                         const int *safe, const axis_levels *L, int *mark, long chosen) {
  size_t na = r->n_axes;
  fprintf(f, "  At point %lld, one axis changed at a time:\n", (long long)cp->point);
  int any_indifferent = 0;
  for (size_t a = 0; a < na; a++) {
    char nm[256];
    name_of(r, a, nm, sizeof nm);
    if (L[a].n < 2) continue;
    size_t n_fail = 0, n_missing = 0;
    memset(mark, 0, (np + 1) * sizeof *mark);
    for (size_t i = 0; i < L[a].n; i++) {
      long q = neighbour(r, (size_t)chosen, a, L[a].v[i]);
      mark[i] = q >= 0 && safe[q];
      if (q < 0) n_missing++;
      else if (!safe[q] && q != chosen) n_fail++;
      if (q == chosen) mark[i] = 1;
    }
    if (n_fail == 0 && n_missing == 0) {
      fprintf(f, "    %s does not change the answer here: every value swept (", nm);
      list_levels(f, r, a, &L[a], NULL, 1);
      fprintf(f, ") meets the targets on the evidence\n");
      any_indifferent = 1;
      continue;
    }
    char lab[96];
    label(r, a, (size_t)chosen, lab, sizeof lab);
    fprintf(f, "    %s matters: with %s = ", nm, nm);
    list_levels(f, r, a, &L[a], mark, 0);
    fprintf(f, " instead of %s the point %s the safe set\n", lab,
            n_fail ? "leaves" : "is not in the grid or not in");
    /* Grid edge: the chosen value is the smallest or largest swept. */
    long li = level_of(&L[a], val(r, (size_t)chosen, a));
    if (L[a].numeric && (li == 0 || li == (long)L[a].n - 1))
      fprintf(f, "    warning: %s = %s is the %s value swept and %s matters here: values %s "
                 "it were not tried, and the best one may lie there\n",
              nm, lab, li == 0 ? "smallest" : "largest", nm, li == 0 ? "below" : "above");
  }
  if (!any_indifferent)
    fprintf(f, "    (every axis changes the answer here)\n");
}

long ana_reco_explain(FILE *f, const ana_reco *rec, const fmt_results *r, const ana_summary *s,
                      const ana_reco_opts *o, const ana_answer_opts *ao, long base,
                      int proven) {
  if (rec->split.n_tun > 0 || s->n_points == 0 || r->n_axes == 0) return base;
  size_t np = s->n_points, na = r->n_axes;
  int *safe = calloc(np, sizeof *safe);
  axis_levels *L = calloc(na, sizeof *L);
  int *mark = calloc(np + 1, sizeof *mark);
  long chosen = base;
  if (!safe || !L || !mark) goto out;
  for (size_t a = 0; a < na; a++)
    if (levels_make(&L[a], r, a)) goto out;
  long vn = -1;
  for (size_t a = 0; a < na; a++)
    if (!strcmp(r->axes[a], "vnodes")) vn = (long)a;
  size_t n_safe = 0;
  long cheapest = -1;
  ana_cost_key kc = {0};
  for (size_t p = 0; p < np; p++) {
    safe[p] = ana_reco_on_evidence(&s->points[p], o);
    if (!safe[p]) continue;
    n_safe++;
    ana_cost_key k = cost(r, &s->points[p], vn);
    if (cheapest < 0 || ana_cost_compare(&k, &kc) < 0) cheapest = (long)p, kc = k;
  }
  fprintf(f, "Why:\n");
  cost_rule(f);
  fprintf(f, "  Safe set: %zu of %zu points meet the targets on the evidence (no run "
             "collapsed, observed P(pass) >= %g and P(bad) <= %g; evidence, not a "
             "proof)%s\n",
          n_safe, np, o->min_pass, o->max_meta, n_safe ? ":" : ".");
  size_t product = n_safe ? 1 : 0;
  for (size_t a = 0; a < na && n_safe; a++) {
    size_t k = 0;
    memset(mark, 0, (np + 1) * sizeof *mark);
    for (size_t p = 0; p < np; p++)
      if (safe[p]) mark[level_of(&L[a], val(r, p, a))] = 1;
    for (size_t i = 0; i < L[a].n; i++) k += (size_t)mark[i];
    product *= k;
    axis_summary(f, r, a, &L[a], mark);
  }
  if (n_safe && na > 1)
    fprintf(f, product == n_safe
                   ? "    (every combination of these values is in the safe set)\n"
                   : "    (not every combination of these values is: %zu of the %zu are)\n",
            n_safe, product);

  /* --prefer: among the safe set, the most important preferences first. */
  if (ao->n_prefer > 0) {
    long pick = explain_prefer(f, r, s, o, ao, safe, L, vn, base, proven);
    if (pick >= 0) chosen = pick;
  }
  if (chosen < 0) {
    fprintf(f, "  (No point is recommended, so there is no setting to explain further.)\n");
    goto out;
  }
  const ana_point_stats *cp = &s->points[chosen];
  if (!safe[chosen])
    fprintf(f, "  Point %lld is not in the safe set itself (its runs include a failure).\n",
            (long long)cp->point);
  if (cheapest >= 0 && cheapest != chosen) {
    ana_cost_key k0 = cost(r, cp, vn);
    if (ana_cost_compare(&kc, &k0) < 0) {
      char where[1024];
      ana_point_describe(r, (size_t)cheapest, where, sizeof where);
      fprintf(f, "  Cheaper in the safe set but not chosen (%s): point %lld: %s, cheaper by ",
              ao->n_prefer ? "not preferred"
              : proven     ? "not the setting refine proved"
                           : "it does not meet the targets with exact 95% bounds",
              (long long)s->points[cheapest].point, where);
      cost_decided(f, &s->points[cheapest], &kc, cp, &k0);
      fprintf(f, ".\n");
    }
  }
  /* Settings as cheap as the chosen one but for the tie-breaks. */
  {
    ana_cost_key k0 = cost(r, cp, vn);
    size_t ties = 0;
    for (size_t p = 0; p < np; p++) {
      if (!safe[p] || (long)p == chosen) continue;
      ana_cost_key k = cost(r, &s->points[p], vn);
      ties += k.amp == k0.amp && k.lost == k0.lost;
    }
    if (ties)
      fprintf(f, "  %zu other setting%s of the safe set tie%s with point %lld on retry "
                 "amplification and goodput during the fault (to 0.01): among them the choice "
                 "is only the tie-break (vnodes, then the point id)%s.\n",
              ties, ties == 1 ? "" : "s", ties == 1 ? "s" : "", (long long)cp->point,
              ao->n_prefer ? "" : "; --prefer picks among them");
  }
  /* The runner-up of the safe set after the chosen point, and what separates them. */
  {
    long next = -1;
    ana_cost_key k0 = cost(r, cp, vn), kn = {0};
    for (size_t p = 0; p < np; p++) {
      if (!safe[p] || (long)p == chosen) continue;
      ana_cost_key k = cost(r, &s->points[p], vn);
      if (ana_cost_compare(&k, &k0) < 0) continue;
      if (next < 0 || ana_cost_compare(&k, &kn) < 0) next = (long)p, kn = k;
    }
    if (next >= 0) {
      char where[1024];
      ana_point_describe(r, (size_t)next, where, sizeof where);
      fprintf(f, "  Next by the cost rule in the safe set: point %lld: %s; point %lld is "
                 "cheaper by ", (long long)s->points[next].point, where, (long long)cp->point);
      cost_decided(f, cp, &k0, &s->points[next], &kn);
      fprintf(f, ".\n");
    }
  }
  explain_axes(f, r, cp, np, safe, L, mark, chosen);
out:
  if (L)
    for (size_t a = 0; a < na; a++) {
      free(L[a].v);
      free(L[a].ex);
    }
  free(L);
  free(safe);
  free(mark);
  return chosen;
}

int ana_prefer_parse(const fmt_results *r, const char *arg, ana_prefer *p, char *err,
                     size_t errlen) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) {
    snprintf(err, errlen, "--prefer: expected KEY=VALUE, got '%s'", arg);
    return -1;
  }
  size_t kl = (size_t)(eq - arg);
  long a = -1;
  for (size_t i = 0; i < r->n_axes; i++)
    if (strlen(r->axes[i]) == kl && !strncmp(r->axes[i], arg, kl)) a = (long)i;
  if (a < 0) {
    snprintf(err, errlen, "--prefer: '%.*s' is not an axis of %s", (int)kl, arg, r->path);
    return -1;
  }
  char *end;
  double num = strtod(eq + 1, &end);
  int is_num = end != eq + 1 && *end == '\0';
  for (size_t q = 0; q < r->n_points; q++) {
    char lab[64];
    ana_value_label(r, (size_t)a, q, lab, sizeof lab);
    double x = val(r, q, (size_t)a);
    if (!strcmp(lab, eq + 1) || (is_num && same(x, num))) {
      p->axis = (size_t)a;
      p->value = x;
      return 0;
    }
  }
  snprintf(err, errlen, "--prefer: %.*s = '%s' is not a value of that axis in %s", (int)kl, arg,
           eq + 1, r->path);
  return -1;
}
