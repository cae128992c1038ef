#!/usr/bin/env bash
# cli_decisions.sh — tunable vs scenario axes end to end (docs/decisions.md),
# on shrunken copies of sweeps/load_ramp.ini and sweeps/hot_key.ini (4 shards,
# 3 s, a few replicates): recommend never names a scenario value (load,
# hot_key_share) as the thing to choose; it gives the robust answer and one
# per scenario value; the file records the roles (scenario_axes) and a
# [sweep] override changes them; analyze and report show the outcomes.
# Usage: bash cli_decisions.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
SRC=$2
T=$(mktemp -d /tmp/cli_decisions.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
SMALL=(--set shards=4 --set horizon_ms=3000 --set surge=800+300 --set brownout=800+300)

# ---- load_ramp: policy is the choice, load is the world ----
expect_exit 0 "$BIN" run "$SRC/sweeps/load_ramp.ini" "${SMALL[@]}" --set replicates=6 \
  --grid load=0.5,0.7,0.95 -o ramp.h5 -q -j 2
h5dump -a /scenario_axes ramp.h5 | grep -q '"load"' || fail "ramp.h5: no scenario_axes = load attribute"
expect_exit 0 "$BIN" recommend ramp.h5 --slo-ms 2000 --min-pass 0.5 --max-metastable 0.5
expect_in "$T/out" "Tunable axes (what you choose): policy. Scenario axes (what happens to you): load"
expect_in "$T/out" "Per scenario value (the cheapest tunable setting that qualifies there):"
expect_in "$T/out" "    load=0.5: policy="
grep -q "^RECOMMENDED: point" "$T/out" && fail "recommend still picks a point (a load): $(cat "$T/out")"
grep -q "ROBUST RECOMMENDATION.*load=" "$T/out" && fail "the robust answer names a load: $(cat "$T/out")"
# A [sweep] override makes load a tunable again: the old point answer.
sed 's/^seed = 1$/seed = 1\ntunable_axes = load/' "$SRC/sweeps/load_ramp.ini" >ramp_tun.ini
expect_exit 0 "$BIN" run ramp_tun.ini "${SMALL[@]}" --set replicates=6 --grid load=0.5,0.95 \
  -o ramp_tun.h5 -q -j 2
expect_exit 0 "$BIN" recommend ramp_tun.h5 --slo-ms 2000 --min-pass 0.5 --max-metastable 0.5
expect_in "$T/out" "RECOMMENDED: point"
grep -q "Scenario axes" "$T/out" && fail "tunable_axes = load ignored: $(head -c 600 "$T/out")"

# ---- hot_key: capacity_factor and vnodes are the choice ----
expect_exit 0 "$BIN" run "$SRC/sweeps/hot_key.ini" --set shards=4 --set horizon_ms=4000 \
  --set hot_key=1000+1000 --set replicates=4 --grid hot_key_share=0.02,0.2 \
  --grid capacity_factor=1.25,inf --grid vnodes=50 -o hot.h5 -q -j 2
expect_exit 0 "$BIN" recommend hot.h5 --min-pass 0.3 --max-metastable 0.7
expect_in "$T/out" "Scenario axes (what happens to you): hot_key_share"
grep -q "ROBUST RECOMMENDATION.*hot_key_share" "$T/out" && fail "robust answer picks hot_key_share: $(cat "$T/out")"
grep -q "^RECOMMENDED: point" "$T/out" && fail "recommend picks a point: $(cat "$T/out")"

# ---- outcomes in view ----
expect_exit 0 "$BIN" analyze ramp.h5 --slo-ms 2000
expect_in "$T/out" "P(recovered)"
expect_in "$T/out" "P(slow)"
if command -v gnuplot >/dev/null; then
  expect_exit 0 "$BIN" report ramp.h5 -o rep --slo-ms 2000
  grep -q "recovered slow collapsed undetermined" rep/heatmap.dat ||
    fail "report: the heat map data lacks the outcomes"
  grep -q "most runs slow" rep/plots.gp || fail "report: slow cells are not marked on the metastable map"
  for f in heatmap_bad heatmap_pass heatmap_recovered; do
    [ -s rep/$f.png ] || fail "report: no $f.png"
  done
fi

if [ "$failures" -gt 0 ]; then
  echo "cli_decisions: $failures failure(s)" >&2
  exit 1
fi
echo "cli_decisions: ok"
