/*
 * writelock.c — the one-writer lock of a result file (see writelock.h).
 *
 * Protocol: open (or create) FILE.lock, take a write lock on its first byte
 * with F_OFD_SETLK (no waiting), then check that the descriptor still is the
 * file named FILE.lock — a releasing writer unlinks it while holding the
 * lock, so a process that opened the old one in between would otherwise hold
 * a lock nobody else can see; it then simply tries again.
 *
 * The lock belongs to the file, not to the name it was given: FILE is the
 * name with its symbolic links followed (fmt_path_resolved), and a file with
 * more than one name (a hard link) is never written — each name would have
 * a lock of its own, and writing one name changes the other's content.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "fmt.h"
#include "writelock.h"

struct fmt_lock {
  int fd;
  char *name;
};

static char *lock_name(const char *path) {
  char *file = fmt_path_resolved(path);
  char *name = file ? fmt_path_suffixed(file, ".lock") : NULL;
  free(file);
  return name;
}

/* 0, or -1 with a message when the file path names has other names. */
static int single_name(const char *path, char *err, size_t errlen) {
  struct stat st;
  if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_nlink <= 1) return 0;
  swp_seterr(err, errlen,
             "%s: the file has %lu names (hard links, e.g. a cp -al or rsync --link-dest "
             "backup): writing it would change every one of them, and another name would be a "
             "second writer. Give it a copy of its own first: cp --preserve=all %s %s.copy && mv "
             "%s.copy %s",
             path, (unsigned long)st.st_nlink, path, path, path, path);
  return -1;
}

static struct flock first_byte(short type) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 1;
  return fl;
}

int fmt_lock_acquire(fmt_lock **lock, const char *path, char *err, size_t errlen) {
  *lock = NULL;
  if (single_name(path, err, errlen)) return -1;
  char *name = lock_name(path);
  if (!name) {
    swp_seterr(err, errlen, "%s: out of memory", path);
    return -1;
  }
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      swp_seterr(err, errlen, "%s: cannot create its lock file %s: %s", path, name,
                 strerror(errno));
      free(name);
      return -1;
    }
    struct flock fl = first_byte(F_WRLCK);
    if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
      int e = errno;
      close(fd);
      if (e == EAGAIN || e == EACCES) {
        swp_seterr(err, errlen,
                   "%s: another stormsweep process is writing it (it holds %s); wait for it to "
                   "finish or stop it first",
                   path, name);
        free(name);
        return 1;
      }
      if (e == EINVAL || e == ENOLCK || e == EOPNOTSUPP) {
        /* A file system without fcntl locks: nothing to lock with. */
        swp_seterr(err, errlen, "%s: cannot lock %s: %s", path, name, strerror(e));
        free(name);
        return -1;
      }
      swp_seterr(err, errlen, "%s: cannot lock %s: %s", path, name, strerror(e));
      free(name);
      return -1;
    }
    struct stat a, b;
    if (fstat(fd, &a) == 0 && lstat(name, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino) {
      fmt_lock *l = malloc(sizeof *l);
      if (!l) {
        close(fd);
        free(name);
        swp_seterr(err, errlen, "%s: out of memory", path);
        return -1;
      }
      l->fd = fd;
      l->name = name;
      *lock = l;
      return 0;
    }
    close(fd); /* released and unlinked meanwhile: take the new one */
  }
  swp_seterr(err, errlen, "%s: its lock file %s keeps changing; is another process writing it?",
             path, name);
  free(name);
  return 1;
}

void fmt_lock_release(fmt_lock *lock) {
  if (!lock) return;
  unlink(lock->name); /* while still holding it: see the protocol above */
  close(lock->fd);
  free(lock->name);
  free(lock);
}

int fmt_lock_held_elsewhere(const char *path) {
  char *name = lock_name(path);
  if (!name) return 0;
  int fd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  free(name);
  if (fd < 0) return 0;
  struct flock fl = first_byte(F_WRLCK);
  int held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  close(fd);
  return held;
}
