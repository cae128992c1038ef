#!/usr/bin/env bash
# cli_boundary.sh — `stormsweep boundary` from the outside: exit status 2
# with a message for bad usage (missing --axis/--range, an unknown or
# non-numeric axis, a bad range, a --log range through zero, an invalid far
# end, an existing output), the /boundary layout (h5py), one plot per
# combination, identical results for -j1 and -j2, a sweep file whose other
# axes give one boundary per combination; the effect plots of `report`; and
# crn = on through slices, merge and --resume.
# Usage: bash cli_boundary.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_boundary.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# A quick scenario: a quiet cluster with deterministic 5 ms service, whose
# success ratio steps from 1 to 0 as the timeout drops below 4.95 ms.
Q=(--set surge=none --set brownout=none --set service=deterministic --set load=0.05
   --set max_retries=0 --set tick_ms=0.1 --set horizon_ms=2000 --goodput-below 0.5)

expect_exit 0 "$BIN" boundary --help
expect_in "$T/out" "usage: stormsweep boundary"
expect_exit 2 "$BIN" boundary
expect_in "$T/err" "--axis KEY and --range LO:HI are required"
expect_exit 2 "$BIN" boundary --axis timeout --range 1:20
expect_in "$T/err" "unknown setting"
expect_exit 2 "$BIN" boundary --axis service --range 1:20
expect_in "$T/err" "not a numeric setting"
expect_exit 2 "$BIN" boundary --axis timeout_ms --range 20:1
expect_in "$T/err" "--range"
expect_exit 2 "$BIN" boundary --axis timeout_ms --range 0:20 --log
expect_in "$T/err" "positive"
expect_exit 2 "$BIN" boundary --axis load --range 0.1:2000000
expect_in "$T/err" "--range 0.1:2000000"
expect_exit 2 "$BIN" boundary --axis timeout_ms --range 1:20 --level 1.5
expect_exit 2 "$BIN" boundary --axis timeout_ms --range 1:20 --bogus
expect_in "$T/err" "unknown option"
expect_exit 2 "$BIN" boundary --axis timeout_ms --range 1:20 --set nosuch=1
expect_in "$T/err" "nosuch"
# A dead axis, searched or swept, is refused as list and run refuse it, or
# warned with --allow-dead-axes (budget_ratio is read by token_bucket only).
expect_exit 2 "$BIN" boundary --set retry_limiter=envoy --axis budget_ratio --range 0.01:1
expect_in "$T/err" "--axis budget_ratio: the axis cannot change any run: retry_limiter = envoy"
expect_in "$T/err" "--allow-dead-axes"
cat >deadgrid.ini <<'EOF'
[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300
retry_limiter = envoy
[grid]
budget_ratio = 0.01, inf
EOF
expect_exit 2 "$BIN" boundary deadgrid.ini --axis load --range 0.5:0.9
expect_in "$T/err" "deadgrid.ini:8: budget_ratio: the axis cannot change any run"
[ -e boundary.h5 ] && fail "a refused boundary left boundary.h5"
expect_exit 0 "$BIN" boundary --set retry_limiter=envoy --axis budget_ratio --range 0.01:1 \
  --allow-dead-axes --max-runs 64 --no-plot -q -j 2 -o dead.h5
expect_in "$T/err" "warning: --axis budget_ratio: the axis cannot change any run"

# A run, its layout and its plot.
expect_exit 0 "$BIN" boundary --axis timeout_ms --range 1:20 "${Q[@]}" -j 1 -o a.h5
expect_in "$T/out" "crossing 4.95"
expect_in "$T/out" "runs spent:"
expect_in "$T/out" "uniform grid of equal precision"
[ -s a-c0.png ] || fail "no plot a-c0.png"
expect_exit 2 "$BIN" boundary --axis timeout_ms --range 1:20 "${Q[@]}" -o a.h5
expect_in "$T/err" "exists"
expect_exit 0 "$BIN" boundary --axis timeout_ms --range 1:20 "${Q[@]}" -j 2 --no-plot -o b.h5
h5diff a.h5 b.h5 /boundary/runs /boundary/runs >/dev/null 2>&1 || fail "-j1 and -j2 runs differ"
h5diff a.h5 b.h5 /boundary/crossing /boundary/crossing >/dev/null 2>&1 ||
  fail "-j1 and -j2 crossings differ"

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if "$PY" -c 'import h5py' 2>/dev/null; then
  "$PY" - a.h5 <<'PYEOF' || fail "/boundary layout is not as documented"
import sys, h5py, math
f = h5py.File(sys.argv[1], "r")
g = f["boundary"]
for name in ["crossing", "interval_lo", "interval_hi", "status", "interval_open", "coef",
             "runs_spent", "uniform_equivalent", "combinations", "runs"]:
    assert name in g, name
assert g.attrs["axis"] in (b"timeout_ms", "timeout_ms")
assert g["crossing"].shape == (1, 1)
lo, est, hi = g["interval_lo"][0, 0], g["crossing"][0, 0], g["interval_hi"][0, 0]
assert lo <= est <= hi and lo <= 4.95 <= hi, (lo, est, hi)
assert g["coef"].shape == (1, 1, 2)
runs = g["runs"][:]
assert len(runs) == g["runs_spent"][0]
for col in ["combination", "run", "x", "seed", "outcome", "passed", "recovery_ms", "response"]:
    assert col in runs.dtype.names, col
assert all(1 <= x <= 20 for x in runs["x"])
# the response is the step: success ratio < 0.5 exactly when the timeout is below 4.95 ms
assert all(int(r[0]) == (x < 4.95) for x, r in zip(runs["x"], runs["response"]))
u = g["uniform_equivalent"][0, 0]
assert u[0] == u[1] * u[2] and u[0] > g["runs_spent"][0]
PYEOF
fi

# A sweep file: one boundary per combination of the other axes.
cat >two.ini <<'EOF'
[sweep]
seed = 5
[scenario]
surge = none
brownout = none
service = deterministic
load = 0.05
max_retries = 0
tick_ms = 0.1
horizon_ms = 2000
[grid]
service_mean_ms = 4, 8
EOF
expect_exit 0 "$BIN" boundary two.ini --axis timeout_ms --range 1:20 --goodput-below 0.5 \
  --no-plot -o two.h5
expect_in "$T/out" "2 combinations"
expect_in "$T/out" "service_mean_ms=4"
expect_in "$T/out" "crossing 3.95"
expect_in "$T/out" "crossing 7.95"

# Effect plots in `report`: one per axis, next to the heat map in index.html.
cat >eff.ini <<'EOF'
[sweep]
replicates = 2
seed = 3
[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300
[grid]
budget_ratio = 0.1, inf
backoff_cap_ms = 0, 1000
EOF
expect_exit 0 "$BIN" run eff.ini --allow-dead-axes -q -j 2 -o eff.h5
expect_exit 0 "$BIN" report eff.h5 -o rep
for a in 0 1; do
  [ -s "rep/effect_$a.png" ] && [ -s "rep/effect_$a.svg" ] || fail "report drew no effect_$a plot"
  expect_in rep/index.html "effect_$a.png"
  [ "$(wc -l <"rep/effect_$a.dat")" = 3 ] || fail "effect_$a.dat: expected a header and 2 levels"
done
expect_in rep/index.html "P(pass), P(recovered), P(slow), P(bad) and P(collapsed) by budget_ratio"

# crn = on survives slices, merge and --resume; a file of the other kind is refused.
cat >crn.ini <<'EOF'
[sweep]
replicates = 3
seed = 9
crn = on
[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300
[grid]
budget_ratio = 0.1, inf
EOF
expect_exit 0 "$BIN" run crn.ini -q -j 2 -o crn-full.h5
expect_exit 0 "$BIN" run crn.ini -q -j 1 --slice 0/2 -o crn-p0.h5
expect_exit 0 "$BIN" run crn.ini -q -j 1 --slice 1/2 -o crn-p1.h5
expect_exit 0 "$BIN" merge crn-p0.h5 crn-p1.h5 -o crn-m.h5 -q
for obj in /runs /ticks; do
  h5diff crn-full.h5 crn-m.h5 $obj $obj >/dev/null 2>&1 || fail "crn: merged slices differ ($obj)"
done
expect_exit 0 "$BIN" run crn.ini -q --resume -o crn-full.h5
expect_exit 2 "$BIN" run crn.ini -q --set crn=off --resume -o crn-full.h5
expect_in "$T/err" "crn = on"

# Its response is P(bad), collapsed runs included: over load 0.5..3 of the
# default (naive) scenario every run is bad, metastable at low load and
# collapsed at high load. Counting metastable runs alone found a "crossing"
# where they turn into collapsed ones (about load 1.04).
printf '[scenario]\nshards = 4\nhorizon_ms = 4000\n' >bad.ini
expect_exit 0 "$BIN" boundary bad.ini --axis load --range 0.5:3 --max-runs 300 -j 2 -o bad.h5
expect_in "$T/out" "P(bad) = 0.5                     crossing none in range (every run had the same outcome)"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_boundary: all checks passed"
