#!/usr/bin/env python3
"""crn-study.py — variance reduction from common random numbers (docs/reference.md
"Common random numbers").

Usage: crn-study.py DIR   (DIR holds sN-on.h5 and sN-off.h5: the same sweep
run with master seeds N = 1, 2, ... and crn = on / off; scripts/crn-study.sh
makes them).

Effect estimates are differences between adjacent levels of one axis with
every other axis fixed (each "contrast"), for four per-run quantities: the
metastable indicator (so the contrast is a difference of P(metastable)),
recovery time with runs that did not recover counted at the censoring time,
retry amplification and peak queue depth. Two variance estimates:

  across seeds: the sample variance, over the master seeds, of each
      contrast's estimate — the direct measure, no model needed;
  within file:  the paired standard error s_d^2 / R of the replicate-wise
      differences; with crn = off the pairs are independent and this is the
      unpaired variance (s1^2 + s2^2) / R in expectation.

Each is summed over the contrasts of an axis; the table shows off / on.
"""
import glob
import os
import sys

import h5py
import numpy as np


def load(path):
    f = h5py.File(path, "r")
    pts = f["points"][:]
    axes = [a.decode() if isinstance(a, bytes) else a for a in f.attrs["axes"]]
    runs = f["runs"][:]
    reps = int(f.attrs["replicates"])
    npts = int(f.attrs["n_points"])
    censor = 10000 - 2500  # horizon - fault clearance of the seed study
    rec = np.where(np.isnan(runs["recovery_ms"]), censor, runs["recovery_ms"])
    q = {
        "P(metastable)": (runs["outcome"] == 2).astype(float),
        "recovery ms": rec,
        "amplification": runs["amplification"].astype(float),
        "peak queue": runs["peak_queue"].astype(float),
    }
    order = np.lexsort((runs["replicate"], runs["point"]))
    q = {k: v[order].reshape(npts, reps) for k, v in q.items()}
    vals = np.array([[pts[a][i] for a in axes] for i in range(npts)], dtype=float)
    return axes, vals, q, reps


def contrasts(axes, vals):
    """(axis, point_a, point_b) for adjacent levels of each axis, others fixed."""
    out = []
    for ai, a in enumerate(axes):
        levels = sorted(set(vals[:, ai]))
        key = {}
        for p in range(len(vals)):
            rest = tuple(np.delete(vals[p], ai))
            key.setdefault(rest, {})[vals[p, ai]] = p
        for rest, byv in key.items():
            for l1, l2 in zip(levels, levels[1:]):
                if l1 in byv and l2 in byv:
                    out.append((a, byv[l1], byv[l2]))
    return out


def main():
    d = sys.argv[1]
    seeds = sorted({os.path.basename(p).split("-")[0] for p in glob.glob(os.path.join(d, "s*-on.h5"))})
    data = {m: [load(os.path.join(d, f"{s}-{m}.h5")) for s in seeds] for m in ("on", "off")}
    axes, vals, _, reps = data["on"][0]
    cs = contrasts(axes, vals)
    quantities = list(data["on"][0][2].keys())
    print(f"{len(seeds)} master seeds x {reps} replicates per point, {len(vals)} points, "
          f"{len(cs)} contrasts (adjacent levels of one axis, others fixed)")
    print(f"{'axis':16} {'quantity':14} {'across seeds: var off/on':>26} {'within file: var off/on':>26}")
    for a in axes + ["all"]:
        sel = [c for c in cs if a == "all" or c[0] == a]
        for qn in quantities:
            across = {}
            within = {}
            for m in ("on", "off"):
                est = np.array([[dd[2][qn][p2].mean() - dd[2][qn][p1].mean() for (_, p1, p2) in sel]
                                for dd in data[m]])  # seeds x contrasts
                across[m] = est.var(axis=0, ddof=1).sum()
                w = 0.0
                for dd in data[m]:
                    for (_, p1, p2) in sel:
                        diff = dd[2][qn][p2] - dd[2][qn][p1]
                        w += diff.var(ddof=1) / reps
                within[m] = w / len(data[m])
            def ratio(x):
                return f"{x['off'] / x['on']:.2f}" if x["on"] > 0 else ("-" if x["off"] == 0 else "inf")
            print(f"{a:16} {qn:14} {ratio(across):>26} {ratio(within):>26}")


if __name__ == "__main__":
    main()
