/*
 * open.h — opening an existing result file for reading (or, for the groups
 * analysis writes back, for writing) with its identity checked; internal to
 * the format library.
 */
#ifndef STORMSWEEP_FMT_OPEN_H
#define STORMSWEEP_FMT_OPEN_H

#include <stddef.h>

#include <hdf5.h>

/* Opens path (H5F_ACC_RDONLY or H5F_ACC_RDWR) after checking it is a
 * regular file (a directory, FIFO or device is refused before any read, so
 * nothing blocks), an HDF5 file HDF5 can open (a truncated one gets HDF5's
 * own reason in the message), with a string format = "stormsweep-results"
 * and a whole format_version this build understands. Returns the file id,
 * or -1 with a one-line message in err. Also turns off HDF5's automatic
 * error-stack printing. */
hid_t fmt_open(const char *path, unsigned flags, int *format_version, char *err, size_t errlen);

#endif
