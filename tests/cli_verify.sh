#!/usr/bin/env bash
# cli_verify.sh — `stormsweep verify` from the outside: exit 0 when the
# targets are proven, 1 when refuted, 3 undecided at --max-runs (with the
# intervals), 2 on bad usage; the JUnit report parses (with a file name that
# needs escaping) and counts the failures; -j1 and -j2 give the same verdict
# and run count; SIGINT exits 130 with the evidence so far, and --resume
# continues the file without rerunning a run and ends as an uninterrupted
# verify does (same verdict, same runs in the file).
# Usage: bash cli_verify.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_verify.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# A small cluster with a short storm: a run takes a few ms. Loose targets
# (P(pass) >= 0.9, P(bad) <= 0.1) are proven after 32 clean runs.
cat >small.ini <<'EOF'
[sweep]
name = verify-small
seed = 5

[scenario]
shards = 4
horizon_ms = 3000
surge = 800+300
brownout = 800+300
EOF
LOOSE=(--min-pass 0.9 --max-metastable 0.1)

# ---- exit codes ----
expect_exit 0 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" -j 2
expect_in "$T/out" "verdict        PROVEN after 32 runs: P(pass) >= 0.9 and P(bad) <= 0.1, each by its SPRT crossing the accept bound: LLR 3.050 and 3.050 >= ln(1/alpha) = 2.996"
expect_in "$T/out" "proof          P(pass) >= 0.9 proven: SPRT crossed the accept bound, LLR 3.050 >= 2.996 (alpha 0.05, beta 0.1; H0 not-pass rate 0.1, H1 0.01)"
expect_in "$T/out" "               P(bad) <= 0.1 proven: SPRT crossed the accept bound, LLR 3.050 >= 2.996 (alpha 0.05, beta 0.1; H0 bad rate 0.1, H1 0.01)"
expect_in "$T/out" "P(pass)        1.0000 (32 of 32); one-sided 95% lower bound 0.9106 (Clopper-Pearson; evidence beside the SPRT, which decides)"
# No two-sided interval (whose lower end may lie below the target) next to PROVEN.
if grep -qF "95% interval" "$T/out"; then fail "verify prints a two-sided interval: $(cat "$T/out")"; fi
expect_exit 1 "$BIN" verify small.ini --policy naive "${LOOSE[@]}" -j 2
expect_in "$T/out" "REFUTED after 1 run: P(pass) >= 0.9 and P(bad) <= 0.1 missed: each one's SPRT crossed the reject bound"
expect_in "$T/out" "failing runs"
# The seed printed for a failing run reproduces it with sim.
seed=$(sed -n 's/^  0: seed \([0-9]*\), metastable$/\1/p' "$T/out")
if [ -z "$seed" ]; then
  fail "no seed for the failing replicate 0 in: $(cat "$T/out")"
else
  "$BIN" sim small.ini --policy naive --seed "$seed" --json >sim.json 2>&1
  grep -q '"outcome": "metastable"' sim.json || fail "sim --seed $seed does not reproduce the failing run"
fi
expect_exit 3 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" --max-runs 10 -j 2
expect_in "$T/out" "UNDECIDED after 10 runs (--max-runs 10 spent)"
expect_in "$T/out" "verdict        UNDECIDED after 10 runs (--max-runs 10 spent): no target's SPRT has crossed a bound yet"
expect_in "$T/out" "P(pass)        1.0000 (10 of 10); one-sided 95% lower bound 0.7411"

expect_exit 2 "$BIN" verify --no-such-option
expect_exit 2 "$BIN" verify small.ini --min-pass 1.5
expect_exit 2 "$BIN" verify small.ini --alpha 0.7
expect_in "$T/err" "alpha"
# A horizon too short after the faults to class a run that is not back: refused, never guessed.
expect_exit 2 "$BIN" verify --set horizon_ms=3000
expect_in "$T/err" "could not be classed"
expect_exit 2 "$BIN" verify small.ini --max-runs 0
expect_exit 2 "$BIN" verify small.ini --resume
expect_exit 2 "$BIN" verify small.ini --set vnode=3
expect_exit 2 "$BIN" verify small.ini extra.ini
expect_exit 2 "$BIN" verify small.ini --set budget_ratio
cat >grid.ini <<'EOF'
[grid]
vnodes = 10, 50
EOF
expect_exit 2 "$BIN" verify grid.ini
expect_in "$T/err" "fix the axes with --set"
expect_exit 0 "$BIN" verify grid.ini --set vnodes=50 --set shards=4 --set horizon_ms=3000 \
  --set surge=800+300 --set brownout=800+300 --policy guarded "${LOOSE[@]}" -q
expect_exit 0 "$BIN" verify --help

# ---- across scenario values: proven only when every value is ----
expect_exit 1 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" --grid load=0.5,0.7,0.95 -j 2
expect_in "$T/out" "across 3 scenario values"
expect_in "$T/out" "load=0.5                                 PROVEN after 32 runs"
expect_in "$T/out" "load=0.95                                REFUTED after"
expect_in "$T/out" "overall        REFUTED: misses the targets at 1 of 3 scenario values"
expect_exit 0 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" --grid load=0.5,0.7 -q
expect_in "$T/out" "overall        PROVEN at every one of the 2 scenario values"
# A scenario axis that cannot change any run is refused as list and run refuse it.
expect_exit 2 "$BIN" verify small.ini --policy guarded --grid hot_key_share=0.1,0.2 -q
expect_in "$T/err" "hot_key_share: the axis cannot change any run: hot_key = none"
expect_in "$T/err" "--allow-dead-axes"
expect_exit 3 "$BIN" verify small.ini --policy guarded --grid hot_key_share=0.1,0.2 -q \
  --allow-dead-axes --max-runs 4
expect_in "$T/err" "warning: --grid hot_key_share=0.1, 0.2: hot_key_share"
cat >scen.ini <<'EOF'
[sweep]
seed = 5
[scenario]
shards = 4
horizon_ms = 3000
surge = 800+300
brownout = 800+300
[grid]
load = 0.5, 0.7
EOF
expect_exit 0 "$BIN" verify scen.ini --policy guarded "${LOOSE[@]}" -q
expect_in "$T/out" "overall        PROVEN"
# A tunable axis with several values is not one configuration.
expect_exit 2 "$BIN" verify scen.ini --grid vnodes=10,20
expect_in "$T/err" "tunable axes vnodes"
# ... unless the sweep calls it a scenario axis.
sed 's/^seed = 5$/seed = 5\nscenario_axes = vnodes/' scen.ini >scen2.ini
expect_exit 0 "$BIN" verify scen2.ini --grid vnodes=50,150 --policy guarded "${LOOSE[@]}" -q
expect_in "$T/out" "across 4 scenario values"
expect_exit 2 "$BIN" verify scen.ini --policy guarded -o x.h5

# ---- JUnit ----
py=/usr/bin/python3
junit_check() { # FILE TESTS FAILURES
  "$py" - "$@" <<'PY' || fail "JUnit $1: $(cat "$1" 2>/dev/null | head -c 600)"
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
suites = doc.getElementsByTagName("testsuite")
assert len(suites) == 1, "one testsuite"
s = suites[0]
assert s.getAttribute("tests") == sys.argv[2], "tests=" + s.getAttribute("tests")
assert s.getAttribute("failures") == sys.argv[3], "failures=" + s.getAttribute("failures")
cases = s.getElementsByTagName("testcase")
assert len(cases) == int(sys.argv[2])
failed = sum(1 for c in cases if c.getElementsByTagName("failure"))
assert failed == int(sys.argv[3]), failed
if len(sys.argv) > 4:
    assert sys.argv[4] in s.getAttribute("name"), s.getAttribute("name")
PY
}
cp small.ini 'odd <&"name">.ini'
expect_exit 1 "$BIN" verify 'odd <&"name">.ini' --policy naive "${LOOSE[@]}" --junit naive.xml
junit_check naive.xml 2 2 'odd <&"name">.ini'
grep -q 'odd &lt;&amp;' naive.xml || fail "naive.xml does not escape the file name"
expect_in naive.xml 'type="refuted"'
expect_exit 0 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" --junit guarded.xml
junit_check guarded.xml 2 0
expect_exit 3 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" --max-runs 10 --junit undecided.xml
junit_check undecided.xml 2 2
expect_in undecided.xml 'type="undecided"'
# Only the metastability target: one testcase.
expect_exit 0 "$BIN" verify small.ini --policy guarded --min-pass 0 --max-metastable 0.1 --junit meta.xml
junit_check meta.xml 1 0
expect_exit 1 "$BIN" verify small.ini --policy guarded --junit /nonexistent/dir/x.xml "${LOOSE[@]}"

# ---- thread count changes nothing ----
# Targets near this configuration's own pass rate: the test needs a few
# hundred runs and several batches.
NEAR=(--policy guarded --min-pass 0.98 --max-metastable 0.02 --max-runs 600)
expect_exit_any() { "$@" >"$T/out" 2>"$T/err"; echo $?; }
rc1=$(expect_exit_any "$BIN" verify small.ini "${NEAR[@]}" -j 1)
v1=$(grep '^verdict' "$T/out")
rc2=$(expect_exit_any "$BIN" verify small.ini "${NEAR[@]}" -j 2)
v2=$(grep '^verdict' "$T/out")
[ "$rc1" = "$rc2" ] || fail "-j1 exited $rc1, -j2 $rc2"
[ -n "$v1" ] && [ "$v1" = "$v2" ] || fail "-j1 '$v1' but -j2 '$v2'"
case "$v1" in *"after 32 runs"* | *"after 1 run") fail "the -j test decided too early to mean much: $v1" ;; esac

# ---- interrupt and resume ----
rcref=$(expect_exit_any "$BIN" verify small.ini "${NEAR[@]}" -j 2 -o ref.h5)
vref=$(grep '^verdict' "$T/out")
"$BIN" verify small.ini "${NEAR[@]}" -j 1 -o int.h5 >int.out 2>int.err &
pid=$!
# Wait for the first committed batch (its progress line), then interrupt.
for _ in $(seq 1 500); do
  grep -q "runs, open" int.err 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
kill -INT "$pid" 2>/dev/null
wait "$pid"
rcint=$?
if [ "$rcint" = 130 ]; then
  grep -q "INTERRUPTED after" int.out || fail "SIGINT did not print the evidence so far: $(cat int.out)"
  grep -q -- "--resume" int.err || fail "SIGINT did not say how to continue: $(cat int.err)"
  sim1=$(sed -n 's/.* \([0-9]*\) runs simulated.*/\1/p' int.out)
  rcres=$(expect_exit_any "$BIN" verify small.ini "${NEAR[@]}" -j 2 -o int.h5 --resume)
  [ "$rcres" = "$rcref" ] || fail "resumed verify exited $rcres, uninterrupted $rcref"
  vres=$(grep '^verdict' "$T/out")
  [ "$vres" = "$vref" ] || fail "resumed '$vres', uninterrupted '$vref'"
  back=$(sed -n 's/.*, \([0-9]*\) read back from.*/\1/p' "$T/out")
  sim2=$(sed -n 's/.* \([0-9]*\) runs simulated.*/\1/p' "$T/out")
  [ "$back" = "$sim1" ] || fail "the interrupted verify simulated $sim1 runs, the resume read back '$back'"
  # No run twice, none lost, and the runs the test used agree with the
  # uninterrupted file's run for run.
  "$py" - int.h5 ref.h5 "$sim1" "$sim2" <<'PY' || fail "int.h5 and ref.h5 disagree"
import sys, h5py
a, b = (h5py.File(p, "r")["runs"][:] for p in sys.argv[1:3])
done_a = a["done"] != 0
assert done_a.sum() == int(sys.argv[3]) + int(sys.argv[4]), (done_a.sum(), sys.argv[3:])
both = done_a & (b["done"] != 0)
for k in ("seed", "outcome", "passed_slo", "recovery_ms", "attempts"):
    assert (a[k][both] == b[k][both]).all(), k
PY
else
  fail "SIGINT during verify exited $rcint, want 130 (ended too soon? $(tail -c 300 int.out))"
fi
# --resume refuses a file of another configuration.
expect_exit 1 "$BIN" verify small.ini --policy naive --min-pass 0.98 --max-metastable 0.02 \
  --max-runs 600 -o int.h5 --resume
expect_exit 2 "$BIN" verify small.ini "${NEAR[@]}" -o ref.h5
expect_in "$T/err" "already exists"

# ---- --slo: runs judged by what users see ----
expect_exit 0 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" -j 2 \
  --slo "p99 <= 500ms, errors <= 1%" --junit slo.xml
expect_in "$T/out" \
  "configuration  small.ini, policy guarded, slo p99<=500ms,errors<=1% (master seed 5)"
expect_in "$T/out" "verdict        PROVEN after 32 runs"
python3 -c 'import sys, xml.dom.minidom as m
assert m.parse(sys.argv[1]).documentElement.getAttribute("failures") == "0"' slo.xml ||
  { echo "FAIL: --slo JUnit report" >&2; failures=$((failures + 1)); }
# no run gets its p99 back under 20 ms for the hold window within slo_ms
expect_exit 1 "$BIN" verify small.ini --policy guarded "${LOOSE[@]}" -j 2 --slo "p99<=20ms"
expect_in "$T/out" "REFUTED after 1 run"
expect_exit 2 "$BIN" verify small.ini --slo "p99<200ms"
expect_in "$T/err" "stormsweep verify: --slo: term 'p99<200ms': expected NAME<=LIMIT"
expect_exit 2 "$BIN" verify small.ini --slo "p99<=200"
expect_in "$T/err" "expected a time with a unit"

if [ "$failures" -gt 0 ]; then
  echo "cli_verify: $failures check(s) failed" >&2
  exit 1
fi
echo "cli_verify: all checks passed"
