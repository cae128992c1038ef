#!/usr/bin/env bash
# cli_untrusted3.sh — what refine and recommend say about a refine that did
# not finish and about runs that cannot be judged (M4 and M5):
#  * M4: after SIGINT stops refine in the middle of a round, `recommend`
#    says refine was interrupted and names the command that continues — not
#    that refine "stopped at its run budget" — and the file is not taken for
#    damaged (its /refine record describes the rows before that round);
#    continuing gives the proof. A refine that did stop at --max-runs still
#    says it stopped at its run budget.
#  * M5: refine names undetermined runs as undetermined, never as
#    metastable (decision.h: they count against P(metastable), but are
#    their own class).
# (test_verdicts.c covers planted and damaged /refine groups.)
# Usage: bash cli_untrusted3.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_untrusted3.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

expect_not_in() {
  if grep -qF -- "$2" "$1"; then
    fail "$(basename "$1") holds '$2': $(head -c 800 "$1")"
  fi
}

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# ---- M4: interrupted, not out of budget ----
# 2 points x 20 replicates; refine appends one round of about 900 runs.
cat >r.ini <<'EOF'
[sweep]
name = interrupted
replicates = 20
seed = 7

[scenario]
shards = 4
horizon_ms = 6000
load = 0.5
surge = 2000+300
surge_factor = 1.5
brownout = none

[grid]
budget_ratio = 0.1, inf
EOF
expect_exit 0 "$BIN" run r.ini -o R.h5 -j 1 -q
start=$(size_of R.h5)
interrupted=0
for attempt in 1 2 3; do
  cp R.h5 I.h5
  "$BIN" refine I.h5 -j 1 -q >"$T/bg.out" 2>"$T/bg.err" &
  pid=$!
  # The round's rows are appended first (the file grows), then run.
  while kill -0 $pid 2>/dev/null && [ "$(size_of I.h5)" -le "$start" ]; do sleep 0.01; done
  sleep 0.2
  kill -INT $pid 2>/dev/null
  wait $pid
  rc=$?
  if [ $rc = 130 ]; then
    interrupted=1
    break
  fi
done
if [ $interrupted = 0 ]; then
  fail "refine of I.h5 ended before SIGINT could stop it (3 tries; last exit $rc)"
else
  for cmd in recommend analyze; do
    expect_exit 0 "$BIN" $cmd I.h5
    expect_in "$T/out" "UNDECIDED: refine was interrupted before it decided"
    expect_in "$T/out" "continue with 'stormsweep refine I.h5'"
    expect_not_in "$T/out" "run budget"
  done
  expect_exit 0 "$BIN" refine I.h5 -j 1 -q
  expect_exit 0 "$BIN" recommend I.h5
  expect_in "$T/out" "RECOMMENDED (proven): point 0"
  expect_not_in "$T/out" "interrupted"
fi

cp R.h5 B.h5
expect_exit 0 "$BIN" refine B.h5 -j 1 -q --max-runs 16
expect_in "$T/out" "UNDECIDED: --max-runs 16 spent"
expect_exit 0 "$BIN" recommend B.h5
expect_in "$T/out" "UNDECIDED: refine stopped at its run budget (16 fresh runs)"
expect_not_in "$T/out" "interrupted"

# ---- M5: undetermined runs are not metastable ----
# The faults clear at 1100 ms of 2000: too little time after them to judge
# a run, so every run is undetermined.
cat >u.ini <<'EOF'
[sweep]
name = undetermined
replicates = 6
seed = 11

[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300

[grid]
budget_ratio = 0.1, inf
EOF
expect_exit 0 "$BIN" run u.ini -o U.h5 -j 1 -q
expect_exit 0 "$BIN" analyze U.h5
expect_in "$T/out" "0/0/0/0+6u"
expect_exit 0 "$BIN" refine U.h5 -j 1 -q
expect_in "$T/out" "0 of 6 screening runs passing, 6 undetermined"
expect_not_in "$T/out" "6 metastable"
expect_not_in "$T/out" "collapsed"
expect_exit 0 "$BIN" recommend U.h5
expect_in "$T/out" "NO POINT QUALIFIES (refined)"

if [ "$failures" -gt 0 ]; then
  echo "cli_untrusted3: $failures failure(s)" >&2
  exit 1
fi
echo "cli_untrusted3: ok"
