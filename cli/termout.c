/*
 * termout.c — the one way text reaches the terminal: main replaces stdout
 * and stderr by streams that pass every byte through the terminal escaper
 * (textsafe.h, ana_term_stream_put) on its way to file descriptors 1 and 2.
 *
 * Commands print values, keys, section names, labels and paths that sweep
 * files, client configs and result files chose, in messages and in tables;
 * escaping each at its printf would leave every new printf a way to put an
 * escape sequence on someone's screen (a fake verdict line). Here no
 * command, library or message can forget: ESC, BEL, CR, DEL, C1 controls,
 * tabs, bidirectional overrides and invalid UTF-8 always show as \xNN,
 * while ordinary UTF-8 and newlines pass unchanged. The only control
 * sequences written are the program's own (cli_term_control: the progress
 * line).
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "textsafe.h"

/* One escaped stream: its descriptor and the character it may hold. */
typedef struct term_sink {
  int fd;
  ana_term_stream st;
} term_sink;

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Input is escaped in slices small enough for one stack buffer (the
 * escaped form is at most four times as long). */
#define SLICE 2048

static ssize_t sink_write(void *cookie, const char *buf, size_t n) {
  term_sink *t = cookie;
  char out[4 * (SLICE + 3)];
  for (size_t i = 0; i < n; i += SLICE) {
    size_t len = n - i < SLICE ? n - i : SLICE;
    if (write_all(t->fd, out, ana_term_stream_put(&t->st, buf + i, len, out))) return -1;
  }
  return (ssize_t)n;
}

static int sink_close(void *cookie) {
  term_sink *t = cookie;
  char out[16];
  return write_all(t->fd, out, ana_term_stream_end(&t->st, out));
}

/* The two sinks live as long as the process: the streams on them are never
 * closed (see cli_term_install), so nothing is allocated for them. */
static term_sink sinks[2];

/* A stream on fd through the escaper t, buffered as mode says; NULL when
 * out of memory. */
static FILE *escaped_stream(term_sink *t, int fd, int mode) {
  memset(t, 0, sizeof *t);
  t->fd = fd;
  cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
  FILE *f = fopencookie(t, "w", io);
  if (!f) return NULL;
  setvbuf(f, NULL, mode, BUFSIZ);
  return f;
}

int cli_term_install(void) {
  fflush(stdout);
  fflush(stderr);
  /* Buffered as the C library buffers the originals: stdout by line on a
   * terminal and in blocks elsewhere, stderr not at all (so messages and
   * the progress line, written to the descriptor directly, keep their
   * order). */
  FILE *out = escaped_stream(&sinks[0], STDOUT_FILENO, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
  FILE *err = escaped_stream(&sinks[1], STDERR_FILENO, _IONBF);
  if (!out || !err) {
    if (out) fclose(out);
    if (err) fclose(err);
    return -1;
  }
  /* glibc documents stdout and stderr as variables a program may set; the
   * originals stay open (their descriptors are the sinks') and unused. The
   * new ones are never closed, so that atexit handlers (HDF5's) can still
   * print: at exit the C library flushes them; only a character left
   * unfinished by the very last byte is lost, and it was invalid anyway. */
  stdout = out;
  stderr = err;
  return 0;
}

void cli_term_control(const char *s) {
  fflush(stderr);
  (void)write_all(STDERR_FILENO, s, strlen(s));
}
