/*
 * ana_h5.h — HDF5 helpers shared by the analysis modules that touch files
 * (reader.c, store.c); internal to the analysis library.
 */
#ifndef STORMSWEEP_ANA_H5_H
#define STORMSWEEP_ANA_H5_H

#include <stddef.h>

#include <hdf5.h>

/* Opens path (H5F_ACC_RDONLY or H5F_ACC_RDWR) after checking it is a
 * regular file (a directory, FIFO or device is refused before any read, so
 * nothing blocks), an HDF5 file HDF5 can open (a truncated one gets HDF5's
 * own reason in the message), with a string format = "stormsweep-results"
 * and a whole format_version this build understands. Returns the file id,
 * or -1 with a one-line message in err. Also turns off HDF5's automatic
 * error-stack printing. */
hid_t ana_h5_open(const char *path, unsigned flags, int *format_version, char *err,
                  size_t errlen);

#endif
