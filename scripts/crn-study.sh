#!/usr/bin/env bash
# crn-study.sh — runs the seed study with replicates = 5 for master seeds
# 1-4, with crn = on and off (8 sweeps of 1200 runs), and prints the variance
# reduction table of scripts/crn-study.py (docs/reference.md "Common random numbers").
# Usage: scripts/crn-study.sh [DIR] (default crn-study/); needs build/stormsweep (or $STORMSWEEP_BIN)
# and python3 with h5py.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-crn-study}
mkdir -p "$dir"
for s in 1 2 3 4; do
  for c in on off; do
    [ -f "$dir/s$s-$c.h5" ] ||
      "${STORMSWEEP_BIN:-$src/build/stormsweep}" run --set replicates=5 --set seed=$s --set crn=$c -q -o "$dir/s$s-$c.h5"
  done
done
py=python3
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import h5py' 2>/dev/null && py=/usr/bin/python3
"$py" "$src/scripts/crn-study.py" "$dir"
