/*
 * progress.c — the one progress line of long commands: runs done of the
 * total, rate, ETA and the storms seen so far, redrawn in place on a
 * terminal (nothing when stderr is not one, so logs stay clean).
 */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "drv.h"

void cli_duration_text(double s, char *buf, size_t len) {
  if (!isfinite(s) || s < 0) s = 0;
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void cli_bytes_text(double b, char *buf, size_t len) {
  if (b >= 1e12) snprintf(buf, len, "%.1f TB", b / 1e12);
  else if (b >= 1e9) snprintf(buf, len, "%.1f GB", b / 1e9);
  else if (b >= 1e6) snprintf(buf, len, "%.1f MB", b / 1e6);
  else snprintf(buf, len, "%.0f KB", b / 1e3);
}

int cli_progress_wanted(int quiet) { return !quiet && isatty(STDERR_FILENO); }

void cli_progress(void *user, const drv_progress *p) {
  (void)user;
  int64_t finished = p->done + p->failed;
  double rate = p->elapsed_s > 0 ? (double)finished / p->elapsed_s : 0;
  char eta[32], line[256], tail[64] = "";
  cli_duration_text(rate > 0 ? (double)(p->total - finished) / rate : 0, eta, sizeof eta);
  if (p->failed) snprintf(tail, sizeof tail, "  failed %lld", (long long)p->failed);
  /* Numbers only, and \r ESC[K on purpose: past the escaping stderr. */
  snprintf(line, sizeof line,
           "\r\033[K%lld/%lld runs (%.0f%%)  %.0f runs/s  ETA %s  metastable %lld  collapsed "
           "%lld%s",
           (long long)finished, (long long)p->total,
           p->total ? 100.0 * (double)finished / (double)p->total : 100.0, rate, eta,
           (long long)p->outcomes[ENG_OUTCOME_METASTABLE],
           (long long)p->outcomes[ENG_OUTCOME_COLLAPSED], tail);
  cli_term_control(line);
}

void cli_progress_end(void) { cli_term_control("\r\033[K"); }
