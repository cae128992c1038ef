/*
 * writelock.h — stormsweep's own "one writer per result file" lock, held for
 * the writer's lifetime and independent of HDF5's file locking (which users
 * turn off with HDF5_USE_FILE_LOCKING=FALSE on Lustre and NFS).
 *
 * The lock is an open-file-description fcntl lock (F_OFD_SETLK) on a
 * companion file FILE.lock, not on FILE itself: HDF5 may emulate its flock
 * with fcntl locks on NFS, which would then conflict with ours in the same
 * process, and FILE is replaced by rename when it is rebuilt or created. The
 * kernel drops the lock when the process dies however it dies, so a stale
 * FILE.lock left by SIGKILL never blocks anyone; a clean release unlinks it.
 */
#ifndef STORMSWEEP_WRITELOCK_H
#define STORMSWEEP_WRITELOCK_H

#include <stddef.h>

#include "fmt.h"

/* The lock's API is public: fmt.h. */

#endif
