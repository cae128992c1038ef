#!/usr/bin/env bash
# cli_analysis.sh — exit codes and messages of `analyze`, `recommend` and
# `report`: usage errors and unusable files give one clear line and exit 2;
# on a tiny real sweep (made with `stormsweep run` when that command exists)
# the commands succeed, --csv/--json/--write produce what they promise, and
# "no point qualifies" still exits 0.
#
# usage: bash tests/cli_analysis.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=${1:?usage: cli_analysis.sh STORMSWEEP_BIN SOURCE_DIR}
WORK=$(mktemp -d /tmp/stormsweep_cli_analysis.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
failures=0

# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"

# expect STATUS NEEDLE -- COMMAND...: runs COMMAND, checks its exit status
# and that NEEDLE occurs in its stdout+stderr (NEEDLE may be empty).
expect() {
  local want=$1 needle=$2
  shift 3
  local out status
  out=$("$@" 2>&1)
  status=$?
  if [ "$status" -ne "$want" ]; then
    fail "'$*' exited $status, expected $want; output:"
    printf '%s\n' "$out" | head -20 >&2
  elif [ -n "$needle" ] && ! grep -qF -- "$needle" <<<"$out"; then
    fail "'$*' output lacks '$needle'; output:"
    printf '%s\n' "$out" | head -20 >&2
  fi
}

# expect_one_line_error COMMAND...: exit 2 with exactly one line on stderr.
expect_one_line_error() {
  local err status
  err=$("$@" 2>&1 >/dev/null)
  status=$?
  if [ "$status" -ne 2 ]; then
    fail "'$*' exited $status, expected 2"
  elif [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
    fail "'$*' should print one error line, printed:"
    printf '%s\n' "$err" >&2
  fi
}

# ---- help and usage errors (no file needed) ----
for cmd in analyze recommend report; do
  expect 0 "usage: stormsweep $cmd" -- "$BIN" "$cmd" --help
  expect 2 "missing" -- "$BIN" "$cmd"
  expect 2 "unknown option '--bogus'" -- "$BIN" "$cmd" x.h5 --bogus
  expect_one_line_error "$BIN" "$cmd" x.h5 --bogus
done
expect 2 "--slo-ms: expected a number" -- "$BIN" analyze x.h5 --slo-ms abc
expect 2 "--max-metastable: expected a probability from 0 to 1" -- "$BIN" recommend x.h5 --max-metastable 2
expect 2 "--interval: expected 'wilson' or 'exact'" -- "$BIN" analyze x.h5 --interval normal
expect 2 "--min-pass needs a value" -- "$BIN" recommend x.h5 --min-pass
expect 2 "unexpected argument 'b.h5'" -- "$BIN" analyze a.h5 b.h5
expect 0 "at least 368 runs per point" -- "$BIN" recommend --help

# ---- files that are not result files ----
expect 2 "cannot open" -- "$BIN" analyze "$WORK/missing.h5"
expect_one_line_error "$BIN" analyze "$WORK/missing.h5"
printf 'point,vnodes\n0,10\n' >"$WORK/table.csv"
for cmd in analyze recommend; do
  expect 2 "not an HDF5 file" -- "$BIN" "$cmd" "$WORK/table.csv"
  expect_one_line_error "$BIN" "$cmd" "$WORK/table.csv"
done
expect 2 "not an HDF5 file" -- "$BIN" report "$WORK/table.csv" -o "$WORK/rep0"
expect 2 "not an HDF5 file" -- "$BIN" analyze "$WORK/table.csv" --write
if [ "$(cat "$WORK/table.csv")" != "$(printf 'point,vnodes\n0,10')" ]; then
  fail "analyze --write modified a file that is not a result file"
fi

# ---- a real (tiny) sweep, when `run` exists ----
if ! "$BIN" run --help >/dev/null 2>&1; then
  echo "SKIP: 'stormsweep run' is not available; tested usage and bad files only"
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi
RES="$WORK/tiny.h5"
if ! "$BIN" run -o "$RES" -q -j 2 --set replicates=3 --set vnodes=50 --set capacity_factor=1.25 \
  --grid budget_ratio=0.1,inf --grid backoff_cap_ms=0,1000 >"$WORK/run.log" 2>&1; then
  fail "stormsweep run failed:"
  cat "$WORK/run.log" >&2
  exit 1
fi

expect 0 "Per grid point (4 points" -- "$BIN" analyze "$RES"
expect 0 "Parameter effects" -- "$BIN" analyze "$RES"
expect 0 " 1. budget_ratio" -- "$BIN" analyze "$RES"
expect 0 "Clopper-Pearson exact" -- "$BIN" analyze "$RES" --interval exact
# 3 runs per point can never prove 0.99: no point qualifies, still exit 0.
expect 0 "NO POINT QUALIFIES" -- "$BIN" recommend "$RES"
expect 0 "needs at least 368 runs per point" -- "$BIN" recommend "$RES"
expect 0 "Closest (not proven to meet the targets): point" -- "$BIN" recommend "$RES"
# Loose targets anything meets: a recommendation and a runner-up.
expect 0 "RECOMMENDED: point" -- "$BIN" recommend "$RES" --max-metastable 1 --min-pass 0
expect 0 "Runner-up: point" -- "$BIN" recommend "$RES" --max-metastable 1 --min-pass 0

# --csv
expect 0 "" -- "$BIN" analyze "$RES" --csv "$WORK/table_out.csv"
if ! head -1 "$WORK/table_out.csv" | grep -q '^point,budget_ratio,backoff_cap_ms,runs,'; then
  fail "CSV header wrong: $(head -1 "$WORK/table_out.csv")"
fi
if [ "$(wc -l <"$WORK/table_out.csv")" -ne 5 ]; then
  fail "CSV should have a header and 4 rows"
fi
expect 1 "cannot create a file beside it" -- "$BIN" analyze "$RES" --csv "$WORK/no/such/dir/x.csv"

# --json parses (when python3 is around to parse it)
"$BIN" analyze "$RES" --json >"$WORK/out.json" 2>"$WORK/json.err" || fail "analyze --json failed"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$WORK/out.json" <<'EOF' || fail "analyze --json is not the expected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["axes"] == ["budget_ratio", "backoff_cap_ms"], d["axes"]
assert len(d["points"]) == 4
assert all(p["runs"] == 3 for p in d["points"])
assert d["effects"][0]["rank"] == 1
assert "Targets:" in d["recommendation"]
EOF
fi

# Each point's axis values by name: a CSV column and a top-level
# JSON key per axis, equal to the grid point's values (point = the first
# axis varying slowest: 0 -> 0.1/0, 1 -> 0.1/1000, 2 -> inf/0, 3 -> inf/1000),
# so pandas or a spreadsheet needs no join with /points.
/usr/bin/python3 - "$WORK/table_out.csv" "$WORK/out.json" <<'EOF' || fail "analyze --csv/--json lack the axis values by name"
import csv, json, math, sys
want = {0: (0.1, 0.0), 1: (0.1, 1000.0), 2: (math.inf, 0.0), 3: (math.inf, 1000.0)}
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4, rows
for r in rows:
    assert (float(r["budget_ratio"]), float(r["backoff_cap_ms"])) == want[int(r["point"])], r
d = json.load(open(sys.argv[2]))
for p in d["points"]:
    # a numeric axis is numbers in JSON, null for infinity (never the string
    # "inf" beside numbers); settings_text keeps the labels
    got = tuple(math.inf if p[a] is None else p[a] for a in ("budget_ratio", "backoff_cap_ms"))
    assert got == want[p["point"]], p
    assert all(isinstance(p[a], (int, float)) or p[a] is None for a in d["axes"]), p
    assert all(p[a] == p["settings"][a] for a in d["axes"]), p
    assert p["settings_text"]["budget_ratio"] == ("inf" if got[0] == math.inf else "0.1"), p
try:
    import pandas
except ImportError:
    sys.exit(0)
df = pandas.DataFrame(d["points"])
assert {"budget_ratio", "backoff_cap_ms", "p_metastable"} <= set(df.columns), df.columns
t = pandas.read_csv(sys.argv[1])
assert sorted(t["backoff_cap_ms"]) == [0, 0, 1000, 1000], t
df.sort_values("budget_ratio")  # one type per column: sorting works
EOF

# --write stores /analysis, and a second --write replaces it
cp "$RES" "$WORK/before.h5"
expect 0 "Wrote /analysis" -- "$BIN" analyze "$RES" --write
expect 0 "Wrote /analysis" -- "$BIN" analyze "$RES" --write --slo-ms 4000
if command -v h5dump >/dev/null 2>&1; then
  h5dump -a /analysis/slo_ms "$RES" >"$WORK/slo.txt" 2>&1 || fail "h5dump found no /analysis/slo_ms"
  grep -q "4000" "$WORK/slo.txt" || fail "/analysis/slo_ms is not the last --slo-ms: $(cat "$WORK/slo.txt")"
  h5dump -H -d /analysis/points "$RES" >/dev/null 2>&1 || fail "no /analysis/points"
fi
if command -v h5diff >/dev/null 2>&1; then
  h5diff "$WORK/before.h5" "$RES" /runs /runs >/dev/null 2>&1 || fail "--write changed /runs"
fi
expect 0 "Per grid point" -- "$BIN" analyze "$RES"

# an HDF5 file that is not a stormsweep result (a copy of one table)
if command -v h5copy >/dev/null 2>&1; then
  h5copy -i "$RES" -o "$WORK/other.h5" -s /points -d /points >/dev/null 2>&1
  expect 2 "not a stormsweep result file" -- "$BIN" analyze "$WORK/other.h5"
  expect_one_line_error "$BIN" recommend "$WORK/other.h5"
fi

# report
expect 2 "missing -o DIR" -- "$BIN" report "$RES"
expect 2 "--x: 'bogus' is not an axis" -- "$BIN" report "$RES" -o "$WORK/rep" --x bogus
expect 2 "--points: " -- "$BIN" report "$RES" -o "$WORK/rep" --points 99
if command -v gnuplot >/dev/null 2>&1; then
  expect 0 "index.html" -- "$BIN" report "$RES" -o "$WORK/rep"
  for f in index.html heatmap_bad.png heatmap_bad.svg queue_depth.png \
    recovery_survival.png goodput.png; do
    [ -s "$WORK/rep/$f" ] || fail "report did not write $f"
  done
  grep -q 'heatmap_bad.png' "$WORK/rep/index.html" || fail "index.html lacks the heat map"
  expect 0 "index.html" -- "$BIN" report "$RES" -o "$WORK/rep2" --x backoff_cap_ms \
    --y budget_ratio --points 0,3
  [ -s "$WORK/rep2/band_queue_depth_3.dat" ] || fail "--points 0,3 drew no curve for point 3"
  : >"$WORK/notadir"
  expect 1 "not a directory" -- "$BIN" report "$RES" -o "$WORK/notadir"
else
  echo "SKIP: gnuplot not installed; report images not tested"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_analysis: all checks passed"
