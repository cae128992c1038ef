#!/usr/bin/env python3
"""walkthrough.py — a stormsweep result file in xarray, pandas and matplotlib.

Opens a sweep's result file (format_version 2, docs/file-format.md), and
reproduces two things `stormsweep analyze` computes:
  * P(metastable) per budget_ratio value: the share of finished runs whose
    outcome is metastable (analyze's p_metastable of each grid point, when
    budget_ratio is the only axis; pooled over the other axes otherwise);
  * the median queue depth over the replicates, with a 5-95% band, over time;
and saves one figure of both.

Debian packages only (python3-xarray, python3-pandas, python3-matplotlib and
python3-netcdf4 or python3-h5netcdf); no pip.

usage: walkthrough.py RESULTS.h5 [FIGURE.png] [--json]
  --json   print the P(metastable) table as JSON (what tests/cli_walkthrough.sh
           compares with `stormsweep analyze --json`)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import xarray as xr  # noqa: E402

args = [a for a in sys.argv[1:] if a != "--json"]
as_json = "--json" in sys.argv[1:]
if not args:
    sys.exit("usage: walkthrough.py RESULTS.h5 [FIGURE.png] [--json]")
path = args[0]
figure = args[1] if len(args) > 1 else "walkthrough.png"

# The five lines a user needs (docs/file-format.md):
ds = xr.open_dataset(path, group="ticks")  # coords run, time_ms, point, budget_ratio(run), ...
# record = summary stores no per-tick rows (docs/file-format.md, "the record
# mode"): no variable names the run coordinates, so they are set here;
# every=MS rows are k x MS apart on time_ms, queue_depth at each window's
# end, so the band below reads them as it reads full rows.
curves = "queue_depth" in ds
if not curves:
    ds = ds.set_coords(list(ds.data_vars))
ds = ds.isel(run=(ds.outcome >= 0).values)  # finished runs (-1: not run yet)
p_meta = (ds.outcome == 2).groupby("budget_ratio").mean()  # 2 = metastable (flag_meanings)
if curves:
    band = ds.queue_depth.where(ds.queue_depth >= 0)  # -1: past a run's own horizon
    median = band.groupby("budget_ratio").median("run")

# The outcome codes, by name, from the variable's CF flags.
names = dict(zip(ds.outcome.attrs["flag_values"].tolist(), ds.outcome.attrs["flag_meanings"].split()))
assert names[2] == "metastable", names

runs = ds.outcome.groupby("budget_ratio").count()
table = pd.DataFrame(
    {"budget_ratio": p_meta.budget_ratio.values, "runs": runs.values, "p_metastable": p_meta.values}
)
if as_json:
    # As analyze --json writes settings: a number, or "inf".
    print(json.dumps([{"budget_ratio": "inf" if np.isinf(b) else float(b), "runs": int(n),
                       "p_metastable": float(p)}
                      for b, n, p in zip(table.budget_ratio, table.runs, table.p_metastable)]))
else:
    print(table.to_string(index=False))

if not curves:
    print(f"{path} stores no curves (record = summary): no queue-depth figure", file=sys.stderr)
    sys.exit(0)
# One figure: P(metastable) per budget_ratio, and the queue-depth bands.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
labels = ["inf" if np.isinf(b) else f"{b:g}" for b in table.budget_ratio]
left.bar(labels, table.p_metastable)
left.set_xlabel("budget_ratio")
left.set_ylabel("P(metastable)")
left.set_ylim(0, 1)
lo = band.groupby("budget_ratio").quantile(0.05, dim="run")
hi = band.groupby("budget_ratio").quantile(0.95, dim="run")
for i, b in enumerate(median.budget_ratio.values):
    t = median.time_ms.values / 1000.0
    right.fill_between(t, lo.isel(budget_ratio=i), hi.isel(budget_ratio=i), alpha=0.25)
    right.plot(t, median.isel(budget_ratio=i), label=f"budget_ratio {labels[i]}")
right.set_xlabel("time (s)")
right.set_ylabel(f"queue depth ({ds.queue_depth.attrs['units']}), median and 5-95%")
right.legend()
fig.tight_layout()
fig.savefig(figure, dpi=100)
print(f"wrote {figure}", file=sys.stderr)
