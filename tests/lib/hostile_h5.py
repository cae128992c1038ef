#!/usr/bin/env python3
# hostile_h5.py — rewrites parts of a stormsweep result file the way an
# attacker with h5py could, for the shell tests of untrusted input
# (tests/cli_untrusted.sh). Texts are given with Python escapes ("\n",
# "\x1b", "\xff" is the raw byte 0xff), so any byte string can be written,
# invalid UTF-8 included (the compound types are built with h5py's
# low-level API, whose member names are bytes).
#
#   hostile_h5.py FILE label AXIS TEXT    every /points_text label of AXIS
#                                          := TEXT, "{}" standing for the old one
#   hostile_h5.py FILE rename AXIS NAME   column AXIS of /points and
#                                          /points_text renamed to NAME
import sys

import h5py
import numpy as np


def raw(text):
    return text.encode("latin-1").decode("unicode_escape").encode("latin-1")


def write(f, name, names, arr):
    """Replaces dataset name by arr (any field names) stored with member
    names `names` (bytes), in arr's layout."""
    tid = h5py.h5t.create(h5py.h5t.COMPOUND, arr.dtype.itemsize)
    for n, field in zip(names, arr.dtype.names):
        ftype, offset = arr.dtype.fields[field][:2]
        tid.insert(n, offset, h5py.h5t.py_create(ftype))
    del f[name]
    space = h5py.h5s.create_simple(arr.shape)
    ds = h5py.h5d.create(f.id, name.encode(), tid, space)
    ds.write(h5py.h5s.ALL, h5py.h5s.ALL, arr, mtype=tid)


def main():
    path, op, axis, text = sys.argv[1:5]
    with h5py.File(path, "r+") as f:
        if op == "label":
            old = f["points_text"][:]
            fields = old.dtype.names
            dt = np.dtype([("f%d" % i, "S256" if n == axis else old.dtype.fields[n][0])
                           for i, n in enumerate(fields)])
            new = np.zeros(old.shape, dtype=dt)
            for i, n in enumerate(fields):
                if n != axis:
                    new["f%d" % i] = old[n]
                else:
                    new["f%d" % i] = [raw(text).replace(b"{}", v) for v in old[n]]
            write(f, "points_text", [n.encode() for n in fields], new)
        elif op == "rename":
            for ds in ("points", "points_text"):
                if ds in f:
                    old = f[ds][:]
                    names = [raw(text) if n == axis else n.encode() for n in old.dtype.names]
                    write(f, ds, names, old)
        else:
            sys.exit("unknown operation " + op)


main()
