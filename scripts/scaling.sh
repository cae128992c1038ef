#!/usr/bin/env bash
# Engine cost against horizon and offered load (README "Performance"):
# `stormsweep bench --engine-only` per row (warm runs in one process, median
# over --runs seeds), guarded policy. Cost should follow the number of
# simulated attempts linearly: ns/attempt roughly constant.
# Usage: scripts/scaling.sh [path/to/stormsweep] [runs per row, default 5]
set -euo pipefail
bin="${1:-$(dirname "$0")/../build/stormsweep}"
runs="${2:-5}"
row() {
  local label="$1"; shift
  local sets=()
  for kv in "$@"; do sets+=(--set "$kv"); done
  out=$("$bin" bench --engine-only --json --runs "$runs" "${sets[@]}")
  g=$(tr -d '\n' <<<"$out" | sed 's/.*"guarded": {\([^}]*\)}.*/\1/')
  ms=$(sed 's/.*"median_ms": \([0-9.e+-]*\).*/\1/' <<<"$g")
  ns=$(sed 's/.*"ns_per_attempt": \([0-9.e+-]*\).*/\1/' <<<"$g")
  att=$(sed 's/.*"attempts_per_run": \([0-9.e+-]*\).*/\1/' <<<"$g")
  awk -v l="$label" -v ms="$ms" -v a="$att" -v ns="$ns" \
    'BEGIN { printf "| %-34s | %11.0f | %10.1f | %10.1f |\n", l, a, ms, ns }'
}
echo "| run (guarded policy, 1 thread)     |    attempts |    wall ms | ns/attempt |"
echo "|------------------------------------|------------:|-----------:|-----------:|"
row "horizon 10k ticks (seed study)"
row "horizon 100k ticks" horizon_ms=100000
row "horizon 1M ticks" horizon_ms=1000000
row "load 0.5x seed (0.35), 10k ticks" load=0.35
row "load 1x seed (0.7), 10k ticks" load=0.7
row "load 4x seed (2.8), 10k ticks" load=2.8
