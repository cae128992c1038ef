#!/usr/bin/env bash
# cli_walkthrough.sh — the result file in xarray: on a small sweep
# made here,
#  * examples/walkthrough.py runs, saves its figure, and its P(metastable)
#    per budget_ratio equals `analyze --json`'s p_metastable of each point;
#  * xr.open_dataset(FILE, group="ticks") gives coordinates run and time_ms,
#    run-indexed point, replicate, seed, outcome and budget_ratio, whose values
#    agree with /points and /runs (read with h5py and pandas as tables); the
#    counts stay int32; every variable has CF units and long_name;
#  * analyze --write's /analysis/points has each point's axis values by name;
#  * ncdump -h lists every group of the file.
# Skipped only when Debian's python modules are missing (scripts/setup.sh
# installs them, so CI runs it).
#
# usage: bash tests/cli_walkthrough.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=${1:?usage: cli_walkthrough.sh STORMSWEEP_BIN SOURCE_DIR}
SRC=${2:?usage: cli_walkthrough.sh STORMSWEEP_BIN SOURCE_DIR}
PY=/usr/bin/python3
if ! [ -x "$PY" ] || ! "$PY" -c 'import xarray, pandas, matplotlib, h5py' 2>/dev/null; then
  echo "SKIP: Debian's python3-xarray / python3-pandas / python3-matplotlib / python3-h5py are missing (scripts/setup.sh installs them)"
  exit 0
fi
T=$(mktemp -d /tmp/cli_walkthrough.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"

# 3 budget ratios x 3 replicates on a small, short cluster: passing,
# in-between and metastable points; one axis, so walkthrough's groups are
# analyze's points.
cat >small.ini <<'INI'
[sweep]
name = walkthrough
replicates = 3
seed = 11

[scenario]
shards = 4
horizon_ms = 5000
capacity_factor = 1.25

[grid]
budget_ratio = 0.1, 0.5, inf
INI
"$BIN" run small.ini -o small.h5 -q -j 2 2>run.err || { fail "run failed: $(cat run.err)"; exit 1; }
"$BIN" analyze small.h5 --json >analyze.json 2>analyze.err || fail "analyze --json failed: $(cat analyze.err)"

# ---- the walkthrough: its numbers are analyze's ----
if "$PY" "$SRC/examples/walkthrough.py" small.h5 fig.png --json >walk.json 2>walk.err; then
  [ -s fig.png ] || fail "walkthrough.py saved no figure"
  "$PY" - analyze.json walk.json >cmp.out 2>&1 <<'PYEOF' || fail "walkthrough and analyze disagree: $(cat cmp.out)"
import json, sys
analyze = json.load(open(sys.argv[1]))
walk = json.load(open(sys.argv[2]))
want = {p["settings_text"]["budget_ratio"]: (p["runs"], p["p_metastable"]) for p in analyze["points"]}
got = {str(w["budget_ratio"]): (w["runs"], w["p_metastable"]) for w in walk}
assert len(want) == 3 and got == want, (got, want)
print("ok", got)
PYEOF
else
  fail "walkthrough.py failed: $(cat walk.err)"
fi

# ---- the layout, as xarray, pandas and h5py see it ----
"$PY" - small.h5 >xr.out 2>&1 <<'PYEOF' || fail "xarray view of the file: $(cat xr.out)"
import sys
import h5py, numpy as np, pandas as pd, xarray as xr
path = sys.argv[1]
ds = xr.open_dataset(path, group="ticks")
coords = set(ds.coords)
want = {"run", "time_ms", "point", "replicate", "seed", "outcome", "budget_ratio"}
assert want <= coords, ("coordinates", sorted(coords))
assert set(ds.dims) == {"run", "time_ms"}, ds.dims
for c in ["point", "replicate", "seed", "outcome", "budget_ratio"]:
    assert ds[c].dims == ("run",), (c, ds[c].dims)
assert ds.run.dtype == np.int64 and ds.time_ms.dtype == np.float64
assert ds.point.dtype == np.int64 and ds.replicate.dtype == np.int32
assert ds.seed.dtype == np.uint64 and ds.outcome.dtype == np.int8
assert ds.budget_ratio.dtype == np.float64
metrics = [v for v in ds.data_vars]
assert len(metrics) == 24, metrics
# What users see: latency quantiles (us) and the error rate (ppm) per window,
# -1 where no request ended; some requests end in every window here.
assert ds.latency_p99_us.attrs["units"] == "us" and ds.error_rate_ppm.attrs["units"] == "1e-6"
p99 = ds.latency_p99_us.isel(run=0).values
assert (p99 > 0).all() and (ds.latency_p50_us.isel(run=0).values <= p99).all()
for v in metrics:
    assert ds[v].dtype == np.int32, (v, ds[v].dtype)   # no _FillValue decoding to float64
    assert ds[v].dims == ("run", "time_ms"), (v, ds[v].dims)
for v in list(ds.data_vars) + list(ds.coords):
    assert ds[v].attrs.get("units"), (v, "units")
    assert ds[v].attrs.get("long_name"), (v, "long_name")
assert ds.time_ms.attrs["units"] == "ms" and ds.queue_depth.attrs["units"] == "attempts"
assert ds.time_ms.size == 5000 and ds.time_ms.values[1] == 1.0
# Per-run axis values against /points, outcomes against /runs (pandas tables).
with h5py.File(path, "r") as f:
    points = pd.DataFrame(f["points"][:]).set_index("point")
    runs = pd.DataFrame(f["runs"][:])
assert list(points.columns) == ["budget_ratio"], points.columns
assert np.array_equal(ds.point.values, runs["point"].values)
assert np.array_equal(ds.replicate.values, runs["replicate"].values)
assert np.array_equal(ds.seed.values, runs["seed"].values)
assert np.array_equal(ds.outcome.values, runs["outcome"].values.astype(np.int8))
assert np.array_equal(ds.budget_ratio.values, points.loc[ds.point.values, "budget_ratio"].values)
assert list(np.unique(ds.budget_ratio.values)) == [0.1, 0.5, np.inf]
flags = dict(zip(ds.outcome.attrs["flag_values"].tolist(), ds.outcome.attrs["flag_meanings"].split()))
assert flags[-1] == "not_run" and flags[2] == "metastable", flags
# Both engines Debian ships read it alike.
for engine in ["netcdf4", "h5netcdf"]:
    try:
        other = xr.open_dataset(path, group="ticks", engine=engine)
    except ValueError as e:  # that engine is not installed
        print("engine", engine, "not available:", e)
        continue
    assert set(other.coords) == coords and other.queue_depth.dtype == np.int32, engine
print("ok")
PYEOF

# ---- /analysis carries each point's axis values by name ----
"$BIN" analyze small.h5 --write >/dev/null 2>write.err || fail "analyze --write failed: $(cat write.err)"
"$PY" - small.h5 >an.out 2>&1 <<'PYEOF' || fail "/analysis/points: $(cat an.out)"
import sys
import h5py, numpy as np, pandas as pd
with h5py.File(sys.argv[1], "r") as f:
    an = pd.DataFrame(f["analysis/points"][:]).set_index("point")
    points = pd.DataFrame(f["points"][:]).set_index("point")
assert "budget_ratio" in an.columns, list(an.columns)
assert np.array_equal(an.loc[points.index, "budget_ratio"].values, points["budget_ratio"].values)
print("ok")
PYEOF

# ---- ncdump -h shows every group ----
if command -v ncdump >/dev/null; then
  if ncdump -h small.h5 >ncdump.out 2>&1; then
    for g in $("$PY" -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r"); print(" ".join(k for k in f if isinstance(f[k], h5py.Group)))' small.h5); do
      grep -q "^group: $g {" ncdump.out || fail "ncdump -h does not show group /$g"
    done
    grep -q "int queue_depth(run, time_ms)" ncdump.out || fail "ncdump -h lacks queue_depth(run, time_ms)"
    grep -q "double budget_ratio(run)" ncdump.out || fail "ncdump -h lacks budget_ratio(run)"
  else
    fail "ncdump -h failed: $(head -5 ncdump.out)"
  fi
else
  echo "SKIP (ncdump part): netcdf-bin is missing (scripts/setup.sh installs it)"
fi

[ "$failures" -eq 0 ] && echo "cli_walkthrough: all passed" && exit 0
exit 1
