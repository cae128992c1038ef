#!/usr/bin/env bash
# cli_recommend.sh — `recommend` on a refined file answers only what was
# tested: its proof for targets no stricter than the design's (the design
# records its SLO; a file written before that still reads), and for
# stricter targets (--min-pass, --max-metastable, --slo-ms) the answer
# judged again from the runs, never called proven; every option is honoured
# or refused (--prefer names an axis and one of its values). The answer
# explains itself: cost rule, safe set by axis, the axes that do not change
# it, a grid-edge warning, --prefer, and the headroom (skipped with
# --no-headroom, bounded by --headroom-runs).
# Usage: bash cli_recommend.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_recommend.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

tiny_sweep "recommend-test" "budget_ratio = 0.1, inf" "backoff_cap_ms = 0, 1000" >tiny.ini
# Claims "proven" anywhere but in "not proven".
claims_proof() { sed 's/[Nn][Oo][Tt] [Pp][Rr][Oo][Vv][Ee][Nn]//g' "$1" | grep -i "proven"; }

expect_exit 0 "$BIN" run tiny.ini -o r.h5 -j 2 -q --refine --min-pass 0.9 --max-metastable 0.1
expect_in "$T/out" "PROVEN"
h5dump -a /refine/slo_ms r.h5 | grep -q '(0): 1500' || fail "/refine does not record slo_ms 1500"

# The design's own targets (not given: taken from the design): proven.
expect_exit 0 "$BIN" recommend r.h5 --no-headroom
expect_in "$T/out" "RECOMMENDED (proven)"
# Looser targets: the proof covers them, and says so.
expect_exit 0 "$BIN" recommend r.h5 --no-headroom --min-pass 0.8 --max-metastable 0.2 --slo-ms 1800
expect_in "$T/out" "RECOMMENDED (proven)"
expect_in "$T/out" "no stricter than the design's"
# Stricter targets, each alone: never "proven".
for args in "--min-pass 0.95" "--min-pass 0.999" "--max-metastable 0.05" "--slo-ms 1000" \
  "--min-pass 0.99 --max-metastable 0.01"; do
  # shellcheck disable=SC2086
  expect_exit 0 "$BIN" recommend r.h5 --no-headroom $args
  if claims_proof "$T/out" >"$T/claims"; then
    fail "recommend $args (stricter than the design) claims a proof: $(head -3 "$T/claims")"
  fi
  expect_in "$T/out" "NOT PROVEN FOR THESE TARGETS"
  expect_in "$T/out" "run refine with them on a fresh copy of the sweep"
done
expect_exit 0 "$BIN" recommend r.h5 --no-headroom --slo-ms 1000
expect_in "$T/out" "slo_ms = 1000 in the sweep"
# analyze and report take the same answer.
expect_exit 0 "$BIN" analyze r.h5 --min-pass 0.999
if claims_proof "$T/out" >"$T/claims"; then fail "analyze --min-pass 0.999 claims a proof"; fi

# A file refined before the design recorded its SLO: still read, still proven.
if python3 -c 'import h5py' 2>/dev/null; then
  cp r.h5 old.h5
  python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r+"); del f["refine"].attrs["slo_ms"]' old.h5
  expect_exit 0 "$BIN" recommend old.h5 --no-headroom
  expect_in "$T/out" "RECOMMENDED (proven)"
  expect_exit 0 "$BIN" recommend old.h5 --no-headroom --slo-ms 1000
  if claims_proof "$T/out" >/dev/null; then fail "old file, --slo-ms 1000: claims a proof"; fi
  # A recorded SLO that is not the sweep's is damage.
  cp r.h5 bad.h5
  python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r+"); f["refine"].attrs["slo_ms"] = 900.0' bad.h5
  expect_exit 2 "$BIN" recommend bad.h5 --no-headroom
  expect_in "$T/err" "slo_ms 900"
fi

# Options: honoured or refused.
expect_exit 2 "$BIN" recommend r.h5 --prefer vnodes=150
expect_in "$T/err" "'vnodes' is not an axis"
expect_exit 2 "$BIN" recommend r.h5 --prefer budget_ratio=0.3
expect_in "$T/err" "not a value of that axis"
expect_exit 2 "$BIN" recommend r.h5 --prefer budget_ratio
expect_exit 2 "$BIN" recommend r.h5 --headroom-runs 1
expect_exit 2 "$BIN" analyze r.h5 --prefer budget_ratio=0.1

# The explanation.
expect_exit 0 "$BIN" recommend r.h5 --no-headroom
expect_in "$T/out" "Cost rule: among the settings that meet the targets"
expect_in "$T/out" "Safe set: "
expect_in "$T/out" "budget_ratio: 0.1 only (0.1; not inf)"
expect_in "$T/out" "backoff_cap_ms does not change the answer here"
expect_in "$T/out" "budget_ratio matters: with budget_ratio = inf instead of 0.1"
expect_in "$T/out" "warning: budget_ratio = 0.1 is the smallest value swept"
expect_in "$T/out" "(every combination of these values is in the safe set)"
grep -q "Headroom" "$T/out" && fail "--no-headroom still ran the headroom search"
expect_exit 0 "$BIN" recommend r.h5 --no-headroom --prefer backoff_cap_ms=1000
expect_in "$T/out" "Preferred (--prefer backoff_cap_ms=1000): point"
expect_in "$T/out" "backoff_cap_ms=1000 — in the safe set"
# Headroom: fresh runs along load, bounded, the same on any thread count.
expect_exit 0 "$BIN" recommend r.h5 --headroom-runs 64 -j 1
expect_in "$T/out" "Headroom (fresh runs of point"
grep -E "passes (up to|beyond) load" "$T/out" >"$T/h1" || fail "no headroom line: $(tail -3 "$T/out")"
expect_exit 0 "$BIN" recommend r.h5 --headroom-runs 64 -j 2
grep -E "passes (up to|beyond) load" "$T/out" >"$T/h2"
cmp -s "$T/h1" "$T/h2" || fail "headroom differs between -j 1 and -j 2: $(cat "$T/h1" "$T/h2")"
grep -qE "— 64 runs|64 runs" "$T/h1" || fail "headroom spent more than --headroom-runs: $(cat "$T/h1")"

if [ "$failures" -gt 0 ]; then
  echo "cli_recommend: $failures failure(s)"
  exit 1
fi
echo "cli_recommend: ok"
