#!/usr/bin/env bash
# cli_shared_args.sh — a seed and a thread count mean the same in every
# command that takes them: "--seed 010" is ten (decimal, never octal) for
# sim, route, verify and boundary, and "-j 4x" / "-j 5000000000" get the
# same error from run, refine, verify, boundary and bench (--threads).
# Usage: bash cli_shared_args.sh BIN SRC
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_shared_args.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
cat >t.ini <<'EOF'
[sweep]
replicates = 3
seed = 2
[scenario]
shards = 4
horizon_ms = 3000
surge = 800+300
brownout = 800+300
[grid]
budget_ratio = 0.1, inf
EOF
expect_exit 0 "$BIN" run t.ini -o f.h5 -q

# ---- the same error for a thread count that is not one ----
for cmd in run refine verify boundary bench; do
  opt=-j
  [ "$cmd" = bench ] && opt=--threads
  arg=t.ini
  [ "$cmd" = refine ] && arg=f.h5
  [ "$cmd" = verify ] || [ "$cmd" = bench ] && arg=
  for bad in 4x 5000000000 0 -1 ""; do
    # shellcheck disable=SC2086
    expect_exit 2 "$BIN" $cmd $arg "$opt" "$bad"
    expect_in "$T/err" "stormsweep $cmd: $opt: expected a whole number from 1 to 4096, got '$bad'"
  done
done

# ---- the same error for a seed that is not one ----
for cmd in sim route verify boundary; do
  for bad in 010x 18446744073709551616 -1 1e3; do
    expect_exit 2 "$BIN" $cmd --seed "$bad"
    expect_in "$T/err" "stormsweep $cmd: --seed: expected a whole number from 0 to"
    expect_in "$T/err" "got '$bad'"
  done
done

# ---- --seed 010 is ten everywhere: the same results as --seed 10, not 8 ----
# sim: the whole JSON but the wall-clock time.
sim_json() { "$BIN" sim --seed "$1" --json | grep -v '"wall_ms"'; }
sim_json 010 >s010 && sim_json 10 >s10 && sim_json 8 >s8
cmp -s s010 s10 || fail "sim --seed 010 differs from --seed 10"
cmp -s s010 s8 && fail "sim --seed 010 is read as octal (same as --seed 8)"
# route: the placement of the same keys.
for s in 010 10 8; do
  "$BIN" route --keys 200 --seed "$s" >"r$s" 2>&1 ||
    fail "route --seed $s failed: $(head -c 300 "r$s")"
done
cmp -s r010 r10 || fail "route --seed 010 differs from --seed 10"
# verify: the runs it keeps (their seeds are in /runs).
for s in 010 10 8; do
  "$BIN" verify --policy guarded --seed "$s" --max-runs 3 -o "v$s.h5" -q >/dev/null 2>&1
  h5dump -d /runs "v$s.h5" 2>&1 | tail -n +2 >"v$s.txt"
  grep -q DATASET "v$s.txt" || fail "verify --seed $s kept no /runs"
done
cmp -s v010.txt v10.txt || fail "verify --seed 010 ran other seeds than --seed 10"
cmp -s v010.txt v8.txt && fail "verify --seed 010 is read as octal (same runs as --seed 8)"
# boundary: the runs of its search.
for s in 010 10 8; do
  expect_exit 0 "$BIN" boundary t.ini --axis capacity_factor --range 1:2 --max-runs 32 \
    --batch 16 --no-plot -o "b$s.h5" -q --seed "$s" --set budget_ratio=0.1
  h5dump -d /boundary/runs "b$s.h5" 2>&1 | tail -n +2 >"b$s.txt"
  grep -q DATASET "b$s.txt" || fail "boundary --seed $s wrote no runs"
done
cmp -s b010.txt b10.txt || fail "boundary --seed 010 ran other seeds than --seed 10"
cmp -s b010.txt b8.txt && fail "boundary --seed 010 is read as octal (same runs as --seed 8)"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
