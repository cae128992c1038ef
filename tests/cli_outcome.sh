#!/usr/bin/env bash
# cli_outcome.sh — the outcome rule's reference cases through `stormsweep
# sim --json` (docs/model.md "The outcome rule"): each case
# gets the class the rule defines, with the figures that explain
# it. Usage: bash cli_outcome.sh STORMSWEEP_BIN SOURCE_DIR
set -euo pipefail
bin="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# check NAME PYTHON_CONDITION ARGS...: runs sim --json ARGS, evaluates the
# condition with the summary as d.
check() {
  local name="$1" cond="$2"; shift 2
  if ! "$bin" sim --json "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"; then
    fail "$name: 'stormsweep sim --json $*' failed: $(head -c 300 "$tmp/$name.err")"
    return
  fi
  python3 - "$tmp/$name.json" "$cond" <<'PY' || fail "$name: '$cond' does not hold for: $(tr -d '\n' <"$tmp/$name.json" | head -c 600)"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

# No retries at load 0.97 drains slowly: slow, not metastable.
check item4 'd["outcome"] == "slow" and d["amplification"] == 1 and d["late_load"] < 1' \
  --set max_retries=0 --set load=0.97
# ... and with the time to finish, it recovers.
check item4_long 'd["outcome"] == "recovered" and d["recovery_ms"] > 10000' \
  --set max_retries=0 --set load=0.97 --set horizon_ms=40000
# Item 5: 500 ms after clearance cannot tell slow from metastable.
check item5 'd["outcome"] == "undetermined" and d["recovery_ms"] is None' \
  --set max_retries=0 --set surge=9000+500 --set brownout=9000+500
# Item 6: breakers open, zero goodput for seconds: not recovered until
# goodput is back (about 4.5 s later), so it does not pass the SLO.
check item6 'd["outcome"] == "recovered" and d["recovery_ms"] > 4000 and not d["passed_slo"]' \
  --set breaker=fail_fast --set breaker_cooldown_ms=5000
# The naive seed scenario stays metastable.
check naive 'd["outcome"] == "metastable" and d["late_amplification"] > 3' --policy naive
# The Metafor example collapses without a fault (10 ms ticks keep it fast).
m18=(--set shards=1 --set workers=1 --set vnodes=1 --set clients=1 --set service_mean_ms=100
     --set rate_rps=9.5 --set timeout_ms=3000 --set max_retries=4 --set queue_capacity=100
     --set surge=none --set brownout=none --set horizon_ms=1000000 --set tick_ms=10)
check metafor 'd["outcome"] == "collapsed" and 0 < d["collapse_ms"] < 1e6 and not d["passed_slo"] and d["recovery_threshold"] <= 50' \
  "${m18[@]}"
check metafor_8 'd["outcome"] == "recovered" and d["collapse_ms"] is None' \
  "${m18[@]}" --set rate_rps=8 --set max_retries=0
# The text form says why.
"$bin" sim "${m18[@]}" >"$tmp/metafor.txt" || fail "metafor text: exit $?"
grep -q 'collapsed            at [0-9]* ms, without a fault' "$tmp/metafor.txt" || fail "metafor text lacks the collapse line"

if [ "$fails" -gt 0 ]; then echo "cli_outcome.sh: $fails check(s) failed"; exit 1; fi
echo "cli_outcome.sh: all checks passed"
