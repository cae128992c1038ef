#!/usr/bin/env bash
# cli_user_slo.sh — SLO terms on what users see, judged two ways that must
# agree: verify runs its seeds with --slo (the engine judges each run), and
# analyze --slo judges the same file again from its stored per-window series
# (the same counts of passing runs, in a case where all pass and one where
# none does); the stored user recovery time of a run is what sim prints for
# its seed; terms the series cannot judge and files without the series are
# refused with one line; report draws the latency and error-rate bands.
# Usage: bash cli_user_slo.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
SRC=$2
PY=/usr/bin/python3
T=$(mktemp -d /tmp/cli_user_slo.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

SLO="p99<=100ms,errors<=0.5%"
passed_in() { # FILE [analyze options]: passing runs of its one point
  "$BIN" analyze "$@" --json | "$PY" -c \
    'import json,sys; d=json.load(sys.stdin); print(sum(p["passed"] for p in d["points"]))'
}
for ms in 300 100; do
  rm -f v$ms.h5
  # --record full: analyze --slo below rejudges the runs from every tick of
  # their user-view rows (verify -o stores summary rows by default).
  "$BIN" verify --policy guarded --slo "$SLO" --set slo_ms=$ms --max-runs 24 -j 2 \
    -o v$ms.h5 --record full >v$ms.out 2>v$ms.err
  want=$(sed -n 's/^runs *[0-9]*: \([0-9]*\) passed.*/\1/p' v$ms.out)
  [ -n "$want" ] || { fail "verify at slo_ms $ms printed no runs line: $(cat v$ms.out v$ms.err)"; continue; }
  n=$(sed -n 's/^runs *\([0-9]*\):.*/\1/p' v$ms.out)
  # analyze counts every run the file holds (verify may have simulated a
  # batch beyond the one that decided): compare shares.
  got=$(passed_in v$ms.h5 --slo "$SLO" --slo-ms $ms)
  total=$("$BIN" analyze v$ms.h5 --json | "$PY" -c \
    'import json,sys; print(sum(p["runs"] for p in json.load(sys.stdin)["points"]))')
  if [ "$want" = 0 ]; then
    [ "$got" = 0 ] || fail "slo_ms $ms: verify passed none, analyze --slo passes $got"
  else
    [ "$want" = "$n" ] && [ "$got" = "$total" ] ||
      fail "slo_ms $ms: verify passed $want of $n, analyze --slo $got of $total"
  fi
done
# With the queue check instead, the 100 ms file's runs do not all fail the
# same way: the judgement really changed.
q=$(passed_in v100.h5 --slo-ms 100)
[ -n "$q" ] || fail "analyze without --slo gave nothing"

# The first run's stored user recovery time is sim's for its seed.
"$PY" - v300.h5 >seed.txt <<'PYEOF' || fail "reading /runs: $(cat seed.txt)"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["runs"][0]
    print(int(r["seed"]), repr(float(r["user_recovery_ms"])))
PYEOF
read -r seed stored <seed.txt
"$BIN" sim --policy guarded --set slo_ms=300 --slo "$SLO" --seed "$seed" --json >sim.json
simv=$("$PY" -c 'import json,sys; print(repr(float(json.load(open("sim.json"))["latency"]["user_recovery_ms"])))')
[ "$simv" = "$stored" ] || fail "run 0 (seed $seed): stored user_recovery_ms $stored, sim $simv"

# Refusals: one line, exit 2.
expect_exit 2 "$BIN" analyze v300.h5 --slo "p95<=100ms"
expect_in "$T/err" "the latency series hold p50, p90, p99 and p99.9"
expect_exit 2 "$BIN" recommend "$SRC/tests/data/format1.h5" --slo "$SLO"
expect_in "$T/err" "no user-view series"
[ "$(wc -l <"$T/err")" = 1 ] || fail "the old-file refusal is not one line: $(cat "$T/err")"

# The SLO line says what pass means.
"$BIN" recommend v300.h5 --slo "$SLO" --slo-ms 300 >reco.out 2>&1
expect_in reco.out "SLO on what users see: a run passes when p99<=100ms,errors<=0.5% holds again"

# report: latency and error-rate bands beside queue depth.
if "$BIN" report v300.h5 -o rep --slo "$SLO" --slo-ms 300 >rep.out 2>&1; then
  for p in latency_p99 error_rate queue_depth; do
    [ -s "rep/$p.png" ] || fail "report drew no $p.png"
  done
else
  fail "report failed: $(cat rep.out)"
fi

# refine --slo: the proofs judge runs by the terms, the design keeps them,
# recommend answers from them and calls another question not proven.
tiny_sweep "user-slo-refine" "load = 0.5" "budget_ratio = 0.1, inf" >tiny.ini
LOOSE=(--min-pass 0.9 --max-metastable 0.1)
EASY="p99<=2s,errors<=50%"
HARD="p50<=1us"
expect_exit 0 "$BIN" run tiny.ini -o screen.h5 -q
cp screen.h5 easy.h5
cp screen.h5 hard.h5
expect_exit 0 "$BIN" refine easy.h5 "${LOOSE[@]}" --slo "$EASY" -q
expect_in "$T/out" "SLO on what users see: a run passes when p99<=2000ms,errors<=50% holds again"
expect_in "$T/out" "PROVEN: point"
# No run can answer in 1 us: nothing is a candidate under these terms, while
# the queue check on the same runs proves a point.
expect_exit 0 "$BIN" refine hard.h5 "${LOOSE[@]}" --slo "$HARD" -q
expect_in "$T/out" "NO POINT QUALIFIES"
[ "$(h5dump -a /refine/user_slo hard.h5 | grep -c 'p50<=0.001ms')" = 1 ] ||
  fail "/refine/user_slo does not hold the terms: $(h5dump -a /refine/user_slo hard.h5)"
# A refined file keeps its terms: another --slo is refused, none continues.
expect_exit 2 "$BIN" refine easy.h5 --slo "$HARD" -q
expect_in "$T/err" "was refined judging runs by the SLO terms p99<=2000ms,errors<=50%"
expect_exit 0 "$BIN" refine easy.h5 -q
expect_in "$T/out" "PROVEN: point"
expect_exit 0 "$BIN" recommend easy.h5
expect_in "$T/out" "RECOMMENDED (proven)"
expect_in "$T/out" "P(pass 1500 ms SLO on p99<=2000ms,errors<=50%)"
expect_exit 0 "$BIN" recommend easy.h5 --slo "p99<=1s,errors<=50%"
expect_in "$T/out" "NOT PROVEN FOR THESE TARGETS"
expect_in "$T/out" "refine judged its runs by --slo p99<=2000ms,errors<=50%"
expect_exit 0 "$BIN" recommend hard.h5 --slo "$EASY"
expect_in "$T/out" "NOT PROVEN FOR THESE TARGETS"
# A file refined by the queue check is not proven under terms.
cp screen.h5 queue.h5
expect_exit 0 "$BIN" refine queue.h5 "${LOOSE[@]}" -q
expect_exit 2 "$BIN" refine queue.h5 --slo "$EASY" -q
expect_in "$T/err" "was refined judging runs by the queue-recovery check"
expect_exit 0 "$BIN" recommend queue.h5 --slo "$EASY"
expect_in "$T/out" "refine judged its runs by the queue-recovery check"
# Its confirmation runs store no /ticks rows (refine judged them by their
# summary rows), so the terms cannot judge them: they are left out, named;
# a file refined by terms keeps the rows its terms read.
expect_in "$T/out" "of refine's confirmation runs store no /ticks rows"
last_row() { "$BIN" analyze "$1" 2>/dev/null | head -1 | grep -o '[0-9]* finished runs' | awk '{print $1 - 1}'; }
r=$(last_row easy.h5)
h5dump -d /ticks/attempts -s "$r,0" -c "1,1" easy.h5 | grep -q "^ *($r,0): -1$" &&
  fail "easy.h5 was refined by terms, but its run $r stores no /ticks rows"

# boundary --slo: the engine judges pass by the terms (none pass in 1 us).
expect_exit 0 "$BIN" boundary --axis load --range 0.3:0.6 --max-runs 64 --batch 32 \
  --slo "$HARD" --no-plot -o bnd.h5 -q
expect_in "$T/out" "pass: p50<=0.001ms holds again"
passed=$("$PY" - <<'EOP'
import h5py
with h5py.File("bnd.h5") as f:
    print(int(f["/boundary/runs"]["passed"].sum()))
EOP
)
[ "$passed" = 0 ] || fail "boundary --slo $HARD: $passed runs passed"
expect_exit 2 "$BIN" boundary --axis load --range 0.3:0.6 --slo "$EASY" --goodput-below 0.5
expect_in "$T/err" "--goodput-below does not locate"

if [ "$failures" -gt 0 ]; then
  echo "cli_user_slo: $failures check(s) failed" >&2
  exit 1
fi
echo "cli_user_slo: all checks passed"
