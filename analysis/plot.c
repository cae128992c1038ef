/*
 * plot.c — see plot.h. gnuplot runs as a child process in the private build
 * directory; the parent polls it and the stop flag, so Ctrl-C stops a long
 * plot at once without a signal handler in the library (the command's
 * handler only raises the flag).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plot.h"
#include "textsafe.h"

/* The last non-empty line of dir/gnuplot.log, escaped, for the message. */
static void log_last_line(const char *dir, char *buf, size_t len) {
  char path[4096], line[512], last[512] = "";
  int w = snprintf(path, sizeof path, "%s/gnuplot.log", dir);
  int fd = w > 0 && (size_t)w < sizeof path ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (!f && fd >= 0) close(fd);
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[strspn(line, " \t^")]) snprintf(last, sizeof last, "%s", line);
  }
  if (f) fclose(f);
  ana_term_text(buf, len, last[0] ? last : "(no message)");
}

int ana_gnuplot_run(const char *program, const char *dir, const char *script,
                    const volatile sig_atomic_t *stop, char *err, size_t errlen) {
  if (!program) program = "gnuplot";
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, errlen, "cannot start %s: %s", program, strerror(errno));
    return -1;
  }
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(126);
    int fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execlp(program, program, script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      snprintf(err, errlen, "waiting for %s: %s", program, strerror(errno));
      kill(pid, SIGKILL);
      return -1;
    }
    int sig = stop ? (int)*stop : 0;
    if (sig) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return sig;
    }
    struct timespec nap = {0, 5 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    snprintf(err, errlen, "cannot run '%s' (is gnuplot installed and on PATH?)", program);
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char last[600];
    log_last_line(dir, last, sizeof last);
    snprintf(err, errlen, "%s failed on %s: %s", program, script, last);
    return -1;
  }
  return 0;
}
