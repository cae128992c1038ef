#!/usr/bin/env bash
# cli_refine.sh — `refine` and `run --refine` from the outside, on a small
# sweep (4 points x 10 replicates of 2 s on 4 shards): the result does not
# depend on the thread count (-j1 = -j2) nor on how the screening sweep was
# made (run --slice x3 + merge + refine = run --refine); a second refine of
# a decided file changes nothing; SIGINT mid-round exits 130, prints the
# command that continues, and continuing gives the uninterrupted file; so
# does SIGKILL; `run --resume` and `merge` refuse a refined file by name; a
# slice file and changed targets are refused (exit 2); load is a scenario
# axis, so the proof is robust (budget_ratio=0.1 at both loads); recommend
# names the proven point with its proof and the report lists the refined points.
# Usage: bash cli_refine.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_refine.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# Everything but /timing and the root attributes created and command_line.
same_results() {
  local obj
  for obj in /runs /points /points_text /axes /refine; do
    h5diff "$1" "$2" "$obj" "$obj" >"$T/diff" 2>&1 || fail "h5diff $obj: $1 and $2 differ: $(head -c 400 "$T/diff")"
  done
  for m in $(h5ls "$1/ticks" | awk '{print $1}'); do
    h5diff "$1" "$2" "/ticks/$m" "/ticks/$m" >/dev/null 2>&1 || fail "h5diff /ticks/$m: $1 and $2 differ"
  done
  for a in n_runs complete sweep_text; do
    [ "$(h5dump -a /$a "$1" | grep '(0)')" = "$(h5dump -a /$a "$2" | grep '(0)')" ] ||
      fail "root attribute $a differs between $1 and $2"
  done
}

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

tiny_sweep "refine-test" "load = 0.5, 0.8" "budget_ratio = 0.1, inf" >tiny.ini
LOOSE=(--min-pass 0.9 --max-metastable 0.1)

# ---- thread count, slices + merge, run --refine ----
expect_exit 0 "$BIN" run tiny.ini -o screen.h5 -j 2 -q
cp screen.h5 j1.h5
cp screen.h5 j2.h5
expect_exit 0 "$BIN" refine j2.h5 "${LOOSE[@]}" -j 2
# load is a scenario axis: the proof covers budget_ratio=0.1 at both loads.
expect_in "$T/out" "PROVEN (robust: at each of its 2 scenario values, every one proven)"
expect_in "$T/out" "point 0 (load=0.5 budget_ratio=0.1)"
expect_in "$T/out" "point 2 (load=0.8 budget_ratio=0.1)"
expect_in "$T/out" "SPRT crossing the accept bound: LLR "
expect_exit 0 "$BIN" refine j1.h5 "${LOOSE[@]}" -j 1 -q
same_results j1.h5 j2.h5
n=$(h5dump -a /n_runs j2.h5 | grep '(0)' | awk '{print $2}')
[ "${n:-0}" -gt 40 ] || fail "refine appended no runs (n_runs = $n)"
h5dump -a /complete j2.h5 | grep -q '(0): 1' || fail "a refined file is not marked complete"

# Confirmation runs store their /runs summary row alone: no /ticks rows
# (they read -1, the fill value; no chunk is allocated) unless --ticks; the
# decision is the same either way (report, below, draws its curves from
# the runs that store rows).
tick0() { h5dump -d /ticks/attempts -s "$2,0" -c "1,1" "$1" | grep "^ *($2,0):" | awk '{print $NF}'; }
[ "$(tick0 j2.h5 39)" != -1 ] || fail "screening run 39 lost its /ticks rows"
[ "$(tick0 j2.h5 $((n - 1)))" = -1 ] || fail "confirmation run $((n - 1)) stores /ticks rows"
cp screen.h5 jt.h5
expect_exit 0 "$BIN" refine jt.h5 "${LOOSE[@]}" -j 2 -q --ticks
[ "$(tick0 jt.h5 $((n - 1)))" != -1 ] || fail "refine --ticks: run $((n - 1)) has no /ticks rows"
h5diff j2.h5 jt.h5 /runs /runs >/dev/null 2>&1 || fail "refine --ticks changed /runs"
[ "$(size_of j2.h5)" -lt "$(size_of jt.h5)" ] ||
  fail "summary confirmation runs did not shrink the file ($(size_of j2.h5) vs $(size_of jt.h5) bytes)"

for k in 0 1 2; do expect_exit 0 "$BIN" run tiny.ini --slice $k/3 -o part-$k.h5 -q; done
expect_exit 0 "$BIN" merge part-0.h5 part-1.h5 part-2.h5 -o merged.h5
expect_exit 2 "$BIN" refine part-1.h5 "${LOOSE[@]}"
expect_in "$T/err" "merge the slices first"
expect_exit 0 "$BIN" refine merged.h5 "${LOOSE[@]}" -q
expect_exit 0 "$BIN" run tiny.ini -o oneshot.h5 --refine "${LOOSE[@]}" -q
same_results merged.h5 oneshot.h5
same_results j2.h5 oneshot.h5

# [sweep] refine = on does the same as --refine.
sed 's/^seed = 3$/seed = 3\nrefine = on/' tiny.ini >on.ini
expect_exit 0 "$BIN" run on.ini -o on.h5 "${LOOSE[@]}" -q
h5ls on.h5/refine >/dev/null 2>&1 || fail "refine = on did not refine"

# ---- a decided file: nothing to do ----
before=$(md5sum <(h5dump -d /runs j2.h5))
expect_exit 0 "$BIN" refine j2.h5 -q
expect_in "$T/out" "PROVEN"
[ "$before" = "$(md5sum <(h5dump -d /runs j2.h5))" ] || fail "a second refine changed /runs"
expect_exit 2 "$BIN" refine j2.h5 --min-pass 0.95
expect_in "$T/err" "void the error bound"

# ---- refined files and the other commands ----
expect_exit 2 "$BIN" run tiny.ini -o j2.h5 --resume
expect_in "$T/err" "stormsweep refine j2.h5"
expect_exit 2 "$BIN" merge j2.h5 j1.h5 -o nope.h5
expect_in "$T/err" "appended by refine"
expect_exit 0 "$BIN" recommend j2.h5
expect_in "$T/out" "RECOMMENDED (proven)"
expect_in "$T/out" "fresh runs"
expect_in "$T/out" "and at point 2: load=0.8 budget_ratio=0.1 — proven on "
if command -v gnuplot >/dev/null; then
  expect_exit 0 "$BIN" report j2.h5 -o rep
  expect_in rep/index.html "Refined points"
  expect_in rep/index.html "(recommended)"
fi

# ---- interrupted rounds resume to the same file ----
# The kill lands a third of the way into refine's growth of the file:
# inside a round or between two; either way continuing must give the same.
cp screen.h5 base.h5
cp j2.h5 ref.h5
full=$(size_of ref.h5)
start=$(size_of base.h5)
target=$((start + (full - start) / 3))
for sig in INT KILL; do
  # On a fast machine refine may finish before the file reaches the target,
  # or between the check and the kill: try again, aiming earlier (right
  # after the first append), rather than report a race as a failure.
  interrupted=0
  aim=$target
  for attempt in 1 2 3; do
    cp base.h5 $sig.h5
    "$BIN" refine $sig.h5 "${LOOSE[@]}" -j 1 >"$T/bg.out" 2>"$T/bg.err" &
    pid=$!
    while kill -0 $pid 2>/dev/null && [ "$(size_of $sig.h5)" -lt $aim ]; do sleep 0.01; done
    if ! kill -$sig $pid 2>/dev/null; then
      wait $pid
      aim=$((start + 1))
      continue
    fi
    wait $pid
    rc=$?
    if [ $sig = INT ] && [ $rc = 0 ]; then # it ended as the signal came
      aim=$((start + 1))
      continue
    fi
    interrupted=1
    break
  done
  if [ $interrupted = 0 ]; then
    fail "refine of $sig.h5 ended before it could be interrupted (3 tries)"
    continue
  fi
  if [ $sig = INT ]; then
    [ $rc = 130 ] || fail "refine after SIGINT exited $rc, want 130"
    expect_in "$T/bg.err" "stormsweep refine $sig.h5"
  fi
  expect_exit 0 "$BIN" refine $sig.h5 "${LOOSE[@]}" -j 2 -q
  same_results ref.h5 $sig.h5
done

# ---- sequential screening (screen_up_to) ----
# 8 points, stage 1 of 4 replicates, stage 2 up to 12 where 4 leave a point
# open; fresh runs from replicate 12. The same file at -j1 and -j2; a second
# refine changes nothing; every point holds 4 or 12 screening replicates
# (0..3 or 0..11, none missing), some but not all of them 12; the text says so.
cat >seq.ini <<'EOF'
[sweep]
name = seqscreen-test
replicates = 4
screen_up_to = 12
seed = 5

[scenario]
shards = 4
horizon_ms = 4000
load = 0.8
surge = 800+300
brownout = 800+300
deadline_drop = on
backoff = full
slo_ms = 450

[grid]
budget_ratio = 0.05, 0.1, 0.2, 0.3
backoff_cap_ms = 100, 1000
EOF
expect_exit 0 "$BIN" run seq.ini -o seq1.h5 -j 1 --refine "${LOOSE[@]}"
cp "$T/err" seq1.err
cp "$T/out" seq1.out
expect_in seq1.err "round: screening stage 2: "
expect_in seq1.err "up to 12 replicates each (those 4 replicates left open, neither refuted nor meeting the targets, and the 8 cheapest that met them)"
expect_in seq1.out "(screening: 4 replicates each, up to 12 for "
expect_exit 0 "$BIN" run seq.ini -o seq2.h5 -j 2 -q --refine "${LOOSE[@]}"
same_results seq1.h5 seq2.h5
cp seq1.h5 seq1-again.h5
expect_exit 0 "$BIN" refine seq1-again.h5 "${LOOSE[@]}"
same_results seq1.h5 seq1-again.h5
# point, replicate, done of every row
h5dump -d /runs seq1.h5 2>/dev/null | tr -d ' \n' |
  grep -o '{[0-9]*,[0-9]*,[0-9]*,[0-9]*,[0-9]*,' | tr -d '{' |
  awk -F, '{ print $2 "," $3 "," $5 }' >seq.rows
[ -s seq.rows ] || fail "no /runs rows read from seq1.h5"
awk -F, '$3 == 1 && $2 < 12 { n[$1]++; if ($2 + 0 > m[$1]) m[$1] = $2 + 0 }
  END {
    open = 0; all = 0
    for (p in n) {
      all++
      if (!((n[p] == 4 && m[p] == 3) || (n[p] == 12 && m[p] == 11))) {
        print "point " p ": " n[p] " screening runs up to replicate " m[p]; bad = 1
      }
      if (n[p] == 12) open++
    }
    if (open == 0) { print "no point got the second stage"; bad = 1 }
    if (open == all) { print "every point got the second stage"; bad = 1 }
    exit bad
  }' seq.rows >seq.check || fail "screening replicates: $(cat seq.check)"
# The second stage's rows count as screening in every command (their stored
# stage is 0), not as refine's fresh runs.
want=$(awk -F, '$3 == 1 && $2 < 12' seq.rows | wc -l)
got=$("$BIN" analyze seq1.h5 --json | python3 -c \
  'import json,sys; print(sum(p["screening_runs"] for p in json.load(sys.stdin)["points"]))')
[ "$got" = "$want" ] || fail "analyze counts $got screening runs, the file holds $want below 12"
# analyze and recommend read the file; screen_up_to must be above replicates
expect_exit 0 "$BIN" analyze seq1.h5
expect_exit 0 "$BIN" recommend seq1.h5
expect_exit 2 "$BIN" list seq.ini --set screen_up_to=4
expect_in "$T/err" "screen_up_to = 4 must be more than replicates = 4"
expect_exit 0 "$BIN" list tiny.ini --ini
grep -q screen_up_to "$T/out" && fail "a fixed sweep's text names screen_up_to"
expect_exit 0 "$BIN" list seq.ini --ini
expect_in "$T/out" "screen_up_to = 12"

if [ "$failures" -gt 0 ]; then
  echo "cli_refine: $failures failure(s)" >&2
  exit 1
fi
echo "cli_refine: ok"
