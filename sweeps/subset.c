/*
 * subset.c — which runs of a sweep one process executes: slices (--slice K/N,
 * the rule is documented in swp.h) and the runs a file already holds
 * (--resume).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swp_internal.h"

/* ---- slices ---- */

/* High 64 bits of the 128-bit product a x b, portably. */
static uint64_t mul_hi64(uint64_t a, uint64_t b) {
  uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
  uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

int64_t swp_slice_of(int64_t replicates, int64_t slice_count, int64_t run) {
  if (slice_count <= 1 || replicates < 1 || run < 0) return 0;
  uint64_t point = (uint64_t)(run / replicates), rep = (uint64_t)(run % replicates);
  uint64_t n = (uint64_t)slice_count;
  /* frac(point x 0.618...) in 64-bit fixed point, scaled to [0, n). */
  uint64_t offset = mul_hi64(point * 0x9E3779B97F4A7C15ull, n);
  return (int64_t)((rep % n + offset) % n);
}

int swp_slice_parse(const char *text, int64_t *index, int64_t *count, char *err, size_t errlen) {
  const char *slash = text ? strchr(text, '/') : NULL;
  char *end;
  if (!slash || slash == text || !slash[1]) goto syntax;
  errno = 0;
  long long k = strtoll(text, &end, 10);
  if (end != slash || errno || text[0] == '-' || text[0] == '+') goto syntax;
  long long n = strtoll(slash + 1, &end, 10);
  if (*end || errno || slash[1] == '-' || slash[1] == '+') goto syntax;
  if (n < 1 || n > SWP_MAX_RUNS) {
    swp_seterr(err, errlen, "'%s': the slice count N must be from 1 to %lld", text,
               (long long)SWP_MAX_RUNS);
    return -1;
  }
  if (k >= n) {
    swp_seterr(err, errlen, "'%s': slices are numbered from 0 to N-1 (here 0 to %lld)", text,
               n - 1);
    return -1;
  }
  *index = k;
  *count = n;
  return 0;
syntax:
  swp_seterr(err, errlen, "expected K/N (slice K of N, K from 0 to N-1, e.g. 0/4), got '%s'",
             text ? text : "");
  return -1;
}

int swp_subset_has(const swp_sweep *sw, const swp_subset *s, int64_t r) {
  if (!s) return 1;
  if (s->done && s->done[r]) return 0;
  return s->slice_count <= 1 || swp_slice_of(sw->replicates, s->slice_count, r) == s->slice_index;
}

int64_t swp_subset_count(const swp_sweep *sw, const swp_subset *s) {
  int64_t n_runs = swp_sweep_runs(sw), n = 0;
  for (int64_t r = 0; r < n_runs; r++) n += swp_subset_has(sw, s, r);
  return n;
}

