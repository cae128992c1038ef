#!/usr/bin/env bash
# Engine cost against horizon and offered load (README "Performance"): one
# `stormsweep sim` per row, guarded policy, median wall time of 3 runs, and
# nanoseconds per simulated attempt. Cost should follow attempts linearly.
# Usage: scripts/scaling.sh [path/to/stormsweep]
set -euo pipefail
bin="${1:-$(dirname "$0")/../build/stormsweep}"
row() {
  local label="$1"; shift
  local best="" attempts=""
  for i in 1 2 3; do
    out=$("$bin" sim --policy guarded --json "$@")
    ms=$(sed -n 's/.*"wall_ms": \([0-9.e+-]*\).*/\1/p' <<<"$out")
    attempts=$(sed -n 's/.*"attempts": \([0-9]*\).*/\1/p' <<<"$out")
    best="$best $ms"
  done
  median=$(tr ' ' '\n' <<<"$best" | sed '/^$/d' | sort -g | sed -n 2p)
  awk -v l="$label" -v ms="$median" -v a="$attempts" \
    'BEGIN { printf "| %-34s | %10d | %10.1f | %8.1f |\n", l, a, ms, ms * 1e6 / a }'
}
echo "| run (guarded policy)               |   attempts |    wall ms | ns/attempt |"
echo "|------------------------------------|-----------:|-----------:|-----------:|"
row "horizon 10k ticks (seed study)"
row "horizon 100k ticks" --set horizon_ms=100000
row "horizon 1M ticks" --set horizon_ms=1000000
row "load 0.5x seed (0.35), 10k ticks" --set load=0.35
row "load 1x seed (0.7), 10k ticks" --set load=0.7
row "load 4x seed (2.8), 10k ticks" --set load=2.8
