/*
 * outfile.c — the one way stormsweep writes a file or a directory of files
 * (fmt_outfile.h states the rules). Everything is built under a fresh name
 * that nobody else can have prepared (O_EXCL | O_NOFOLLOW, mkstemp,
 * mkdtemp) and renamed into place whole; without --force the rename refuses
 * to replace anything (RENAME_NOREPLACE, or link(2) where the file system
 * lacks it), with --force it is the atomic replacement rename(2) is.
 */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt_outfile.h"
#include "swp.h"

/* ---- primitives ---- */

char *fmt_path_suffixed(const char *path, const char *suffix) {
  size_t n = strlen(path), m = strlen(suffix);
  char *s = malloc(n + m + 1);
  if (s) {
    memcpy(s, path, n);
    memcpy(s + n, suffix, m + 1);
  }
  return s;
}

char *fmt_path_resolved(const char *path) {
  char *cur = strdup(path);
  for (int depth = 0; cur && depth < 40; depth++) {
    struct stat st;
    if (lstat(cur, &st) || !S_ISLNK(st.st_mode)) return cur;
    char target[PATH_MAX];
    ssize_t n = readlink(cur, target, sizeof target - 1);
    if (n <= 0) return cur;
    target[n] = 0;
    const char *slash = strrchr(cur, '/');
    char *next;
    if (target[0] == '/' || !slash) {
      next = strdup(target);
    } else {
      size_t dir = (size_t)(slash - cur) + 1, len = dir + (size_t)n + 1;
      next = malloc(len);
      if (next) {
        memcpy(next, cur, dir);
        memcpy(next + dir, target, (size_t)n + 1);
      }
    }
    free(cur);
    cur = next;
  }
  return cur; /* a loop: what ELOOP will say when it is opened */
}

int fmt_mkstemp_beside(const char *path, const char *tag, char **name) {
  size_t n = strlen(path) + strlen(tag) + 9;
  *name = malloc(n);
  if (!*name) {
    errno = ENOMEM;
    return -1;
  }
  snprintf(*name, n, "%s.%s-XXXXXX", path, tag);
  int fd = mkstemp(*name);
  if (fd < 0) {
    int e = errno;
    free(*name);
    *name = NULL;
    errno = e;
  }
  return fd;
}

int fmt_fsync_dir(const char *path) {
  char *copy = strdup(path);
  if (!copy) return -1;
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free(copy);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

int fmt_fsync_path(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

int fmt_rename_into_place(const char *from, const char *to, int replace) {
  int rc;
  if (replace) {
    rc = rename(from, to);
  } else {
    rc = renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
    if (rc && (errno == EINVAL || errno == ENOSYS)) {
      /* No RENAME_NOREPLACE here: link() refuses an existing name too. */
      rc = link(from, to);
      if (!rc) unlink(from);
    }
  }
  if (!rc) fmt_fsync_dir(to);
  return rc;
}

/* Removes the tree at name under dirfd without following any symbolic link
 * (a link is removed, never its target). */
static void tree_remove_at(int at, const char *name, int depth) {
  if (unlinkat(at, name, 0) == 0 || errno == ENOENT || depth > 16) return;
  int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    tree_remove_at(dirfd(d), e->d_name, depth + 1);
  }
  closedir(d);
  unlinkat(at, name, AT_REMOVEDIR);
}

void fmt_tree_remove(const char *path) {
  if (path && path[0]) tree_remove_at(AT_FDCWD, path, 0);
}

/* ---- one file ---- */

int fmt_outfile_begin(fmt_outfile *f, const char *path, unsigned flags, char *err,
                      size_t errlen) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->flags = flags;
  struct stat st;
  if (!path || !path[0]) {
    swp_seterr(err, errlen, "an output file needs a name");
    return -1;
  }
  if (!strcmp(path, "-")) { /* standard output: written as it comes */
    f->stream = stdout;
    f->is_stdout = 1;
    return 0;
  }
  if (lstat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      swp_seterr(err, errlen, "%s: is a directory", path);
      return -1;
    }
    if (!(flags & FMT_OUTFILE_FORCE)) {
      swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", path);
      return -1;
    }
  }
  f->final = strdup(path);
  if (!f->final) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  f->fd = fmt_mkstemp_beside(path, "new", &f->tmp);
  if (f->fd < 0) {
    swp_seterr(err, errlen, "%s: cannot create a file beside it: %s", path, strerror(errno));
    free(f->final);
    f->final = NULL;
    return -1;
  }
  /* mkstemp makes 0600; an output gets the mode a plain create would. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(f->fd, 0666 & ~mask) != 0) {
    swp_seterr(err, errlen, "%s: %s", f->tmp, strerror(errno));
    fmt_outfile_abandon(f);
    return -1;
  }
  return 0;
}

FILE *fmt_outfile_stream(fmt_outfile *f) {
  if (!f->stream && f->fd >= 0) {
    f->stream = fdopen(f->fd, "w");
    if (f->stream) f->fd = -1; /* the stream owns it now */
  }
  return f->stream;
}

const char *fmt_outfile_tmp_name(const fmt_outfile *f) { return f->tmp; }

int fmt_outfile_commit(fmt_outfile *f, char *err, size_t errlen) {
  if (f->is_stdout) {
    int bad = fflush(stdout) != 0 || ferror(stdout);
    f->stream = NULL;
    f->is_stdout = 0;
    if (bad) swp_seterr(err, errlen, "standard output: write failed");
    return bad ? -1 : 0;
  }
  if (!f->tmp) {
    swp_seterr(err, errlen, "%s: nothing to commit", f->final ? f->final : "output");
    return -1;
  }
  int bad = 0, e = 0;
  if (f->stream) {
    bad = fflush(f->stream) != 0 || ferror(f->stream) || fsync(fileno(f->stream)) != 0;
    if (bad) e = errno;
    if (fclose(f->stream) != 0 && !bad) bad = 1, e = errno;
    f->stream = NULL;
  } else if (f->fd >= 0) {
    bad = fsync(f->fd) != 0;
    if (bad) e = errno;
    close(f->fd);
    f->fd = -1;
  } else {
    bad = fmt_fsync_path(f->tmp) != 0; /* written by name (HDF5) */
    if (bad) e = errno;
  }
  if (bad) {
    swp_seterr(err, errlen, "%s: write failed: %s", f->final, strerror(e ? e : EIO));
    fmt_outfile_abandon(f);
    return -1;
  }
  if (fmt_rename_into_place(f->tmp, f->final, (f->flags & FMT_OUTFILE_FORCE) != 0)) {
    e = errno;
    if (e == EEXIST)
      swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", f->final);
    else
      swp_seterr(err, errlen, "%s: cannot put it in place: %s", f->final, strerror(e));
    fmt_outfile_abandon(f);
    return -1;
  }
  free(f->tmp);
  f->tmp = NULL;
  free(f->final);
  f->final = NULL;
  return 0;
}

void fmt_outfile_abandon(fmt_outfile *f) {
  if (!f) return;
  if (f->is_stdout) f->stream = NULL;
  if (f->stream) fclose(f->stream);
  if (f->fd >= 0) close(f->fd);
  if (f->tmp) unlink(f->tmp);
  free(f->tmp);
  free(f->final);
  memset(f, 0, sizeof *f);
  f->fd = -1;
}

/* ---- a directory of files ---- */

/* Whether dir is empty (and a directory we can open without following a link). */
static int dir_is_empty(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return 0;
  }
  int empty = 1;
  struct dirent *e;
  while (empty && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  closedir(d);
  return empty;
}

int fmt_outdir_begin(fmt_outdir *od, const char *dir, int (*is_ours)(const char *dir),
                     char *err, size_t errlen) {
  memset(od, 0, sizeof *od);
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 0 || n >= sizeof od->final) {
    swp_seterr(err, errlen, "'%s' is not a usable directory name", dir);
    return -1;
  }
  memcpy(od->final, dir, n);
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s", od->final);
  snprintf(b, sizeof b, "%s", od->final);
  snprintf(od->parent, sizeof od->parent, "%s", dirname(a));
  snprintf(od->base, sizeof od->base, "%s", basename(b));
  if (!strcmp(od->base, ".") || !strcmp(od->base, "..") || !strcmp(od->base, "/")) {
    swp_seterr(err, errlen, "%s: name the directory itself (not . or .. or /)", dir);
    return -1;
  }
  struct stat st;
  if (lstat(od->final, &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      swp_seterr(err, errlen, "%s: is a symbolic link; refusing to write through it", dir);
      return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
      swp_seterr(err, errlen, "%s: exists and is not a directory", dir);
      return -1;
    }
    if (st.st_uid != geteuid()) {
      swp_seterr(err, errlen, "%s: belongs to another user; refusing to replace it", dir);
      return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
      swp_seterr(err, errlen, "%s: others can write to it; refusing to use it", dir);
      return -1;
    }
    if (!dir_is_empty(od->final) && !(is_ours && is_ours(od->final))) {
      swp_seterr(err, errlen, "%s: holds files stormsweep did not write there; refusing to "
                 "replace it", dir);
      return -1;
    }
    od->replace = 1;
  } else if (errno != ENOENT) {
    swp_seterr(err, errlen, "%s: %s", dir, strerror(errno));
    return -1;
  }
  int w = snprintf(od->tmp, sizeof od->tmp, "%s/.%s.tmp-XXXXXX", od->parent, od->base);
  if (w < 0 || (size_t)w >= sizeof od->tmp) {
    swp_seterr(err, errlen, "'%s' is too long a name", dir);
    od->tmp[0] = '\0';
    return -1;
  }
  if (!mkdtemp(od->tmp)) {
    swp_seterr(err, errlen, "%s: cannot create a directory there: %s", od->parent,
               strerror(errno));
    od->tmp[0] = '\0';
    return -1;
  }
  return 0;
}

int fmt_outdir_private(fmt_outdir *od, const char *path, char *err, size_t errlen) {
  memset(od, 0, sizeof *od);
  char a[4096], b[4096];
  if (!path[0] || strlen(path) >= sizeof a) {
    swp_seterr(err, errlen, "'%s' is not a usable file name", path);
    return -1;
  }
  snprintf(a, sizeof a, "%s", path);
  snprintf(b, sizeof b, "%s", path);
  snprintf(od->parent, sizeof od->parent, "%s", dirname(a));
  snprintf(od->base, sizeof od->base, "%s", basename(b));
  int w = snprintf(od->tmp, sizeof od->tmp, "%s/.%s.tmp-XXXXXX", od->parent, od->base);
  if (w < 0 || (size_t)w >= sizeof od->tmp || !mkdtemp(od->tmp)) {
    swp_seterr(err, errlen, "%s: cannot create a directory there: %s", od->parent,
               strerror(errno));
    od->tmp[0] = '\0';
    return -1;
  }
  return 0;
}

FILE *fmt_dir_file_create(const char *dir, const char *name, char *err, size_t errlen) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    swp_seterr(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
  }
  return f;
}

int fmt_dir_file_close(FILE *f, const char *dir, const char *name, char *err, size_t errlen) {
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad) swp_seterr(err, errlen, "%s/%s: write failed", dir, name);
  return bad ? -1 : 0;
}

int fmt_outdir_install(fmt_outdir *od, char *err, size_t errlen) {
  mode_t mask = umask(0);
  umask(mask);
  if (chmod(od->tmp, 0777 & ~mask) != 0) {
    swp_seterr(err, errlen, "%s: %s", od->tmp, strerror(errno));
    return -1;
  }
  if (!od->replace) {
    if (fmt_rename_into_place(od->tmp, od->final, 0) != 0) {
      swp_seterr(err, errlen, "%s: cannot create: %s", od->final, strerror(errno));
      return -1;
    }
    od->tmp[0] = '\0';
    return 0;
  }
  if (renameat2(AT_FDCWD, od->tmp, AT_FDCWD, od->final, RENAME_EXCHANGE) == 0) {
    fmt_tree_remove(od->tmp); /* now the earlier one */
    od->tmp[0] = '\0';
    fmt_fsync_dir(od->final);
    return 0;
  }
  if (errno != EINVAL && errno != ENOSYS) {
    swp_seterr(err, errlen, "%s: cannot replace: %s", od->final, strerror(errno));
    return -1;
  }
  /* No exchange on this file system: move the old one aside, then in. */
  char old[8192];
  int w = snprintf(old, sizeof old, "%s/.%s.old-XXXXXX", od->parent, od->base);
  if (w < 0 || (size_t)w >= sizeof old || !mkdtemp(old) || rename(od->final, old) != 0) {
    swp_seterr(err, errlen, "%s: cannot replace: %s", od->final, strerror(errno));
    return -1;
  }
  if (rename(od->tmp, od->final) != 0) {
    swp_seterr(err, errlen, "%s: cannot replace: %s", od->final, strerror(errno));
    if (rename(old, od->final) != 0) { /* the old one stays aside, named in the message */
    }
    return -1;
  }
  od->tmp[0] = '\0';
  fmt_tree_remove(old);
  fmt_fsync_dir(od->final);
  return 0;
}

int fmt_outdir_install_file(fmt_outdir *od, const char *name, const char *dest, unsigned flags,
                            char *err, size_t errlen) {
  char from[8192];
  snprintf(from, sizeof from, "%s/%s", od->tmp, name);
  struct stat st;
  if (lstat(dest, &st) == 0 && S_ISDIR(st.st_mode)) {
    swp_seterr(err, errlen, "%s: is a directory", dest);
    return -1;
  }
  mode_t mask = umask(0);
  umask(mask);
  if (chmod(from, 0666 & ~mask) != 0 || fmt_fsync_path(from) != 0) {
    swp_seterr(err, errlen, "%s: %s", from, strerror(errno));
    return -1;
  }
  if (fmt_rename_into_place(from, dest, (flags & FMT_OUTFILE_FORCE) != 0)) {
    if (errno == EEXIST)
      swp_seterr(err, errlen, "%s: already exists (use --force to overwrite)", dest);
    else
      swp_seterr(err, errlen, "%s: cannot put it in place: %s", dest, strerror(errno));
    return -1;
  }
  return 0;
}

void fmt_outdir_abandon(fmt_outdir *od) {
  if (od && od->tmp[0]) fmt_tree_remove(od->tmp);
  if (od) od->tmp[0] = '\0';
}
