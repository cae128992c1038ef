#!/usr/bin/env bash
# Profile-guided build of stormsweep (CMake option STORMSWEEP_PGO):
#   1. an instrumented build (STORMSWEEP_PGO=GENERATE) in BUILD-pgo-gen;
#   2. training: the engine on the seed study's guarded and naive policies,
#      a fault mix (crash, outage, CoDel, breakers) and a small sweep with
#      HDF5 output, on one thread;
#   3. the optimised build (STORMSWEEP_PGO=USE) in BUILD.
# Results are bit-identical to a plain build (test_golden checks it); docs/performance.md
# has the measured gain.
# Usage: scripts/pgo.sh [BUILD dir, default build-pgo] [extra cmake args...]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$src/build-pgo}"; shift || true
gen="$out-gen"
prof="$out-profile"
rm -rf "$prof"
cmake -S "$src" -B "$gen" -DCMAKE_BUILD_TYPE=Release -DSTORMSWEEP_PGO=GENERATE \
  -DSTORMSWEEP_PGO_DIR="$prof" -DBUILD_TESTING=OFF "$@" >/dev/null
cmake --build "$gen" -j"$(nproc)" --target stormsweep
bin="$gen/stormsweep"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" bench --engine-only --runs 10 >/dev/null 2>&1
for extra in "crash=3000+1000" "outage=2500+300" "codel_target_ms=5" "breaker=next_shard" \
             "backoff=decorrelated --set budget_ratio=0.2"; do
  # shellcheck disable=SC2086
  "$bin" bench --engine-only --runs 2 --set $extra >/dev/null 2>&1
done
cat > "$tmp/train.ini" <<'INI'
[sweep]
replicates = 2
[scenario]
deadline_drop = on
backoff = full
[grid]
budget_ratio = 0.1, inf
backoff_cap_ms = 0, 1000
INI
"$bin" run "$tmp/train.ini" -o "$tmp/train.h5" -j 1 --quiet
cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DSTORMSWEEP_PGO=USE \
  -DSTORMSWEEP_PGO_DIR="$prof" "$@" >/dev/null
cmake --build "$out" -j"$(nproc)"
echo "pgo: optimised build in $out (profiles in $prof)"
