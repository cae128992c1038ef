#!/usr/bin/env bash
# Engine cost against horizon, cluster size and offered load
# (docs/performance.md): `stormsweep bench --engine-only` per row (warm runs in
# one process, median over --runs seeds), guarded policy. Cost should follow
# the number of simulated attempts linearly: ns/attempt roughly constant.
# Each row is its own process, so its peak RSS (getrusage ru_maxrss) is that
# row's: the 10^6-tick run of 256 shards must stay under 1 GiB.
# Usage: scripts/scaling.sh [path/to/stormsweep] [runs per row, default 5]
#        SCALING_QUICK=1 skips the 10^6-tick rows (minutes each on a loaded machine).
set -euo pipefail
bin="${1:-$(dirname "$0")/../build/stormsweep}"
runs="${2:-5}"
# One table row from bench's JSON (read with Python's json module).
row() {
  local label="$1" r="$2"; shift 2
  local sets=()
  for kv in "$@"; do sets+=(--set "$kv"); done
  "$bin" bench --guarded-only --json --runs "$r" "${sets[@]}" | /usr/bin/python3 -c '
import json, sys
b = json.load(sys.stdin)["engine"]; g = b["guarded"]
print("| %-36s | %13.0f | %11.1f | %10.1f | %7.0f |" % (sys.argv[1], g["attempts_per_run"],
      g["median_ms"], g["ns_per_attempt"], b["peak_rss_kb"] / 1024))' "$label"
}
echo "| run (guarded policy, 1 thread)       |      attempts |     wall ms | ns/attempt | peak MB |"
echo "|--------------------------------------|--------------:|------------:|-----------:|--------:|"
row "16 shards, 10^4 ticks (seed study)" "$runs"
row "16 shards, 10^5 ticks" "$runs" horizon_ms=100000
[ -n "${SCALING_QUICK:-}" ] || row "16 shards, 10^6 ticks" 1 horizon_ms=1000000
row "256 shards, 10^4 ticks" "$runs" shards=256
row "256 shards, 10^5 ticks" 1 shards=256 horizon_ms=100000
[ -n "${SCALING_QUICK:-}" ] || row "256 shards, 10^6 ticks" 1 shards=256 horizon_ms=1000000
row "load 0.5x seed (0.35), 10^4 ticks" "$runs" load=0.35
row "load 1x seed (0.7), 10^4 ticks" "$runs" load=0.7
row "load 4x seed (2.8), 10^4 ticks" "$runs" load=2.8
