#!/usr/bin/env bash
# cli_stage.sh — /runs stores each row's stage: 0 for the sweep's own runs,
# k for a fresh run appended by refine round k (the round /refine/round_start
# says its row lies in); a file written before the stage column (the same
# file with /runs rewritten without it) still reads, with the same counts
# and answers, and refine continues it; a stored stage that contradicts the
# row's replicate is refused as damage.
# Usage: bash cli_stage.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_stage.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
py=/usr/bin/python3
"$py" -c 'import h5py' 2>/dev/null || py=python3
if ! "$py" -c 'import h5py' 2>/dev/null; then
  echo "cli_stage: skipped (no python3 with h5py)"
  exit 0
fi

tiny_sweep "stage-test" "load = 0.5, 0.8" "budget_ratio = 0.1, inf" >tiny.ini
LOOSE=(--min-pass 0.9 --max-metastable 0.1)

expect_exit 0 "$BIN" run tiny.ini -o s.h5 -j 2 -q
expect_exit 0 "$BIN" refine s.h5 "${LOOSE[@]}" --parallel-candidates 1 -j 2 -q
# The stored stages: 0 for replicates 0..9, and for a fresh row the round
# whose first row is at or before it; several rounds, so k > 1 occurs.
"$py" - s.h5 <<'PY' || fail "stage column of s.h5"
import sys, bisect, h5py
f = h5py.File(sys.argv[1], "r")
runs = f["runs"][:]
assert "stage" in runs.dtype.names, "no stage column in /runs"
reps = int(f.attrs["replicates"])
starts = list(f["refine/round_start"][:])
assert len(starts) >= 2, "want several rounds, got %d" % len(starts)
for i, r in enumerate(runs):
    want = 0 if r["replicate"] < reps else bisect.bisect_right(starts, i)
    assert r["stage"] == want, "row %d: stage %d, want %d" % (i, r["stage"], want)
assert max(runs["stage"]) == len(starts)
PY

# The same file in the layout before the stage column.
cp s.h5 old.h5
"$py" - old.h5 <<'PY' || fail "rewriting old.h5 without the stage column"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    ds = f["runs"]
    r, attrs, chunks = ds[:], dict(ds.attrs), ds.chunks
    names = [n for n in r.dtype.names if n != "stage"]
    dt = np.dtype([(n, r.dtype.fields[n][0]) for n in names])
    fill = np.zeros((), dtype=dt)
    fill["ticks"], fill["recovery_ms"] = -1, np.nan
    new = np.zeros(len(r), dtype=dt)
    for n in names:
        new[n] = r[n]
    del f["runs"]
    d2 = f.create_dataset("runs", data=new, chunks=chunks, maxshape=(None,), fillvalue=fill)
    for k, v in attrs.items():
        d2.attrs[k] = v
PY
h5dump -H -d /runs old.h5 | grep -q '"stage"' && fail "old.h5 still has a stage column"
for cmd in analyze recommend; do
  opt=(); [ "$cmd" = recommend ] && opt=(--no-headroom)
  expect_exit 0 "$BIN" $cmd s.h5 "${opt[@]}"
  sed 's/s\.h5/FILE/g' "$T/out" >new.txt
  expect_exit 0 "$BIN" $cmd old.h5 "${opt[@]}"
  sed 's/old\.h5/FILE/g' "$T/out" >old.txt
  diff new.txt old.txt >d.txt || fail "$cmd reads the old layout otherwise: $(head -c 600 d.txt)"
done
expect_in "$T/out" "RECOMMENDED (proven)"
# refine continues an old-layout file (a decided one: nothing changes).
expect_exit 0 "$BIN" refine old.h5 "${LOOSE[@]}" -q
expect_in "$T/out" "PROVEN"

# A stored stage is read, and checked: screening (0) on a fresh replicate is damage.
cp s.h5 bad.h5
"$py" - bad.h5 <<'PY' || fail "damaging bad.h5"
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    ds = f["runs"]
    reps = int(f.attrs["replicates"])
    r = ds[:]
    i = [j for j in range(len(r)) if r[j]["replicate"] >= reps][0]
    row = r[i]
    row["stage"] = 0
    ds[i] = row
PY
expect_exit 2 "$BIN" analyze bad.h5
expect_in "$T/err" "stage 0 is not a stage of replicate"

[ "$failures" -eq 0 ] && echo "cli_stage: all passed" && exit 0
echo "cli_stage: $failures check(s) failed"
exit 1
