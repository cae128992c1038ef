/*
 * seqtest.h — the sequential test behind every "proven" claim:
 * `verify` (one configuration) and `refine` (candidates of a grid) both
 * decide with it, one run at a time, in replicate order.
 *
 * A claim is "this configuration meets the targets": P(pass) >= min_pass
 * and P(bad) <= max_meta (a bad run — metastable, collapsed or
 * undetermined, decision.h — counts as bad and as not passing). Each
 * target is a Wald SPRT on the Bernoulli "bad" event (not passing; bad):
 *
 *   H0: bad rate q = q0 (the target missed at its boundary: q0 = 1 - min_pass,
 *       resp. q0 = max_meta)
 *   H1: bad rate q = q1 = q0 / ratio (comfortably inside the target)
 *
 *   after n runs with k bad:  LLR = k ln(q1/q0) + (n - k) ln((1-q1)/(1-q0))
 *   proven  when LLR >= ln(1 / alpha)
 *   refuted when LLR <= ln(beta / (1 - alpha))
 *
 * so P(proven | q >= q0) <= alpha exactly (the likelihood ratio is a
 * martingale under H0; Ville's inequality bounds its ever reaching 1/alpha,
 * however often the test looks) and P(refuted | q <= q1) <= about beta.
 * Wald's usual upper boundary ln((1 - beta)/alpha) only gives
 * alpha/(1 - beta) = 5.6% for a stated 5%, so it is not used. The
 * claim needs both targets proven; it is refuted as soon as either is.
 * Proving each at level alpha proves both at level alpha (an
 * intersection-union test), so no correction is needed for the pair.
 * A disabled target (min_pass <= 0, max_meta >= 1) is proven from the start.
 *
 * Screening and multiple candidates are the caller's part: data used to
 * choose a candidate must not be fed to its test (refine confirms on fresh
 * replicates), and when several candidates are tested the caller spends
 * alpha across them (refine gives the candidate of cost rank i, i = 1, 2,
 * ..., alpha / 2^i, so the family's error stays <= alpha).
 *
 * Pure functions on plain structs: no I/O, no globals, thread-safe.
 */
#ifndef STORMSWEEP_SEQTEST_H
#define STORMSWEEP_SEQTEST_H

#include <stdint.h>

#define ANA_SEQ_ALPHA 0.05 /* default: P(claim | a target is missed) */
#define ANA_SEQ_BETA 0.10  /* default: P(refuted | ratio times inside) */
#define ANA_SEQ_RATIO 10.0 /* default: H1 bad rate = boundary / ratio */

typedef struct ana_seq_design {
  double min_pass; /* claim P(pass) >= min_pass; <= 0 disables */
  double max_meta; /* claim P(bad) <= max_meta; >= 1 disables */
  double alpha;    /* in (0, 0.5) */
  double beta;     /* in (0, 0.5) */
  double ratio;    /* > 1 */
} ana_seq_design;

typedef enum ana_seq_state {
  ANA_SEQ_OPEN = 0,    /* keep sampling */
  ANA_SEQ_PROVEN = 1,  /* the target(s) are met, at confidence 1 - alpha */
  ANA_SEQ_REFUTED = 2  /* the target(s) are missed */
} ana_seq_state;

/* One SPRT (one target). */
typedef struct ana_sprt {
  int enabled;
  double q0, q1;          /* bad rate under H0 and H1 */
  double step_bad, step_good; /* LLR increments */
  double upper, lower;    /* ln((1-beta)/alpha), ln(beta/(1-alpha)) */
  double llr;
  int64_t n, bad;
  ana_seq_state state;
  int64_t decided_at;     /* n when state left OPEN; 0 while open */
} ana_sprt;

/* The claim: both targets. */
typedef struct ana_seq {
  ana_seq_design d;
  ana_sprt pass, meta;
  int64_t n;              /* runs fed */
  ana_seq_state state;    /* combined */
  int64_t decided_at;
} ana_seq;

/* Fills in defaults for zero fields (alpha, beta, ratio); returns 0, or -1
 * with a message when a value is out of range. */
int ana_seq_design_check(ana_seq_design *d, char *err, unsigned long errlen);

void ana_seq_init(ana_seq *s, const ana_seq_design *d);

/* Feeds one run (runs must come in replicate order); a no-op once the claim
 * is decided. passed: recovered within the SLO; metastable: a bad run
 * (metastable, collapsed or undetermined). Returns the combined state. */
ana_seq_state ana_seq_add(ana_seq *s, int passed, int metastable);

/* Runs a point with no bad run needs before it is proven (planning,
 * messages, and `refine`'s batch sizes). */
int64_t ana_seq_runs_to_prove(const ana_seq_design *d);

/* "SPRT q0=0.01 vs q1=0.001 for P(not pass) and P(bad), alpha=0.05,
 * beta=0.1: proven after 332 runs without a failure" — one line for
 * reports. */
void ana_seq_describe(const ana_seq_design *d, char *buf, unsigned long len);

/* The two targets by name: "P(pass) >= 0.99", "P(bad) <= 0.01" (bad =
 * metastable, collapsed or undetermined: decision.h). pass: 1 for the
 * P(pass) target, 0 for the P(bad) one. */
void ana_seq_target_name(const ana_seq_design *d, int pass, char *buf, unsigned long len);

/* The claim: "P(pass) >= 0.99 and P(bad) <= 0.01" (or the one target on, or
 * "no target"). */
void ana_seq_claim(const ana_seq_design *d, char *buf, unsigned long len);

/* Where one target's test stands, stating the bound its LLR was compared
 * with: "P(pass) >= 0.99 proven: SPRT crossed the accept bound, LLR 3.005 >=
 * 2.996 (alpha 0.05, beta 0.1; H0 not-pass rate 0.01, H1 0.001)", "...
 * refuted: SPRT crossed the reject bound, LLR -2.303 <= -2.251 (...)", or
 * "... open: LLR 1.234, between the reject bound -2.251 and the accept bound
 * 2.996 (...)". pass as for ana_seq_target_name; "" for a target that is
 * off. */
void ana_seq_target_status(const ana_seq *s, int pass, char *buf, unsigned long len);

/* Both targets' ana_seq_target_status, joined by "; ". */
void ana_seq_status(const ana_seq *s, char *buf, unsigned long len);

/* What a decided claim rests on, for verdict lines: "P(pass) >= 0.99 and
 * P(bad) <= 0.01, each by its SPRT crossing the accept bound: LLR 3.005 and
 * 3.005 >= ln(1/alpha) = 2.996", "P(pass) >= 0.99 missed: its SPRT crossed
 * the reject bound: LLR -2.303 <= ln(beta/(1 - alpha)) = -2.251", or, open,
 * "no target's SPRT has crossed a bound yet". */
void ana_seq_verdict(const ana_seq *s, char *buf, unsigned long len);

const char *ana_seq_state_name(ana_seq_state s); /* "open", "proven", "refuted" */

#endif
