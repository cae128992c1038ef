/*
 * stop.c — the stop flag of every long command: SIGINT and SIGTERM set it and
 * nothing else, so a command finishes the runs in flight, writes what it
 * has and says how to continue; the libraries only poll the flag. The first
 * signal resets its handler (SA_RESETHAND), so a second Ctrl-C kills at once.
 */
#include <string.h>

#include "cli.h"

/* A signal handler may touch only file-scope state of type sig_atomic_t. */
static volatile sig_atomic_t stop_signal;
static struct sigaction old_int, old_term, old_xfsz;
static int installed;

static void on_signal(int sig) { stop_signal = sig; }

const volatile sig_atomic_t *cli_stop_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  stop_signal = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  /* A file-size limit then fails the write (EFBIG), like a full disk, rather
   * than killing the process mid-write. */
  sa.sa_handler = SIG_IGN;
  sa.sa_flags = 0;
  sigaction(SIGXFSZ, &sa, &old_xfsz);
  installed = 1;
  return &stop_signal;
}

int cli_stop_signal(void) { return stop_signal; }

void cli_stop_restore(void) {
  if (!installed) return;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGXFSZ, &old_xfsz, NULL);
  installed = 0;
}
