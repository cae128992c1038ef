#!/usr/bin/env bash
# cli_mpi.sh — `mpirun -np 2 stormsweep run` (2 ranks x 1 OpenMP thread)
# writes one file whose result datasets equal `stormsweep run -j 2` of the
# same sweep (h5diff), also for a slice and for --resume of a sweep
# interrupted by Ctrl-C to mpirun. Skipped (exit 0) when the binary was built without
# MPI (-DSTORMSWEEP_MPI=ON; scripts/test-mpi.sh builds and runs it).
# Usage: bash cli_mpi.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
if ! "$BIN" run --help 2>/dev/null | grep -q "built with MPI"; then
  echo "cli_mpi: skipped (stormsweep built without MPI; see scripts/test-mpi.sh)"
  exit 0
fi
if ! command -v mpirun >/dev/null 2>&1; then
  echo "cli_mpi: FAIL: stormsweep was built with MPI but mpirun is not on PATH" >&2
  exit 1
fi
T=$(mktemp -d /tmp/cli_mpi.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
export OMP_NUM_THREADS=1
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 2)

expect_exit() {
  local want=$1
  shift
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "'$*' exited $got, want $want; stderr: $(head -c 800 "$T/err")"
  fi
}

same_results() {
  local obj
  for obj in /runs /points /points_text /axes /ticks; do
    h5diff "$1" "$2" "$obj" "$obj" >"$T/diff" 2>&1 || fail "h5diff $obj: $1 and $2 differ: $(head -c 400 "$T/diff")"
  done
  local n=0
  for m in $(h5ls "$1/ticks" | awk '{print $1}'); do
    n=$((n + 1))
    h5diff "$1" "$2" "/ticks/$m" "/ticks/$m" >/dev/null 2>&1 || fail "h5diff /ticks/$m: $1 and $2 differ"
  done
  [ "$n" -ge 19 ] || fail "$1 has $n /ticks datasets"
}

cat >tiny.ini <<'EOF'
[sweep]
name = tiny
replicates = 6
seed = 9

[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300
backoff = full

[grid]
budget_ratio = 0.1, inf
backoff_cap_ms = 0, 1000
EOF

expect_exit 0 "$BIN" run tiny.ini -o omp.h5 -j 2 -q
expect_exit 0 "${MPIRUN[@]}" "$BIN" run tiny.ini -o mpi.h5
expect_in "$T/err" "24 runs in"
expect_in "$T/err" "2 ranks"
same_results omp.h5 mpi.h5
h5dump -a /timing/ranks mpi.h5 | grep -q '(0): 2' || fail "/timing/ranks of mpi.h5 is not 2"

# A slice under MPI, merged with one run without.
expect_exit 0 "${MPIRUN[@]}" "$BIN" run tiny.ini --slice 0/2 -o s0.h5 -q
expect_exit 0 "$BIN" run tiny.ini --slice 1/2 -o s1.h5 -q
expect_exit 0 "$BIN" merge s0.h5 s1.h5 -o merged.h5 -q
same_results omp.h5 merged.h5

# Bad usage: rank 0 says why, every rank exits, nothing is written.
expect_exit 2 "${MPIRUN[@]}" "$BIN" run tiny.ini -o bad.h5 --slice 2/2
expect_in "$T/err" "slices are numbered from 0 to N-1"
[ -e bad.h5 ] && fail "bad usage under MPI created a file"
expect_exit 2 "${MPIRUN[@]}" "$BIN" run tiny.ini -o mpi.h5
expect_in "$T/err" "mpi.h5: already exists"

# SIGTERM to every rank (what a batch scheduler's cancel does, and what
# mpirun sends on Ctrl-C, only later): rank 0 finishes the runs in flight,
# closes the file and prints the command that finishes it; --resume under
# MPI then completes it. (A file-size limit cannot be tested here: it also
# breaks mpirun's own shared-memory files.)
cat >r.ini <<'EOF2'
[sweep]
replicates = 300
seed = 11
[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300
[grid]
budget_ratio = 0.1, inf
EOF2
expect_exit 0 "$BIN" run r.ini -o ref.h5 -j 2 -q
full=$(stat -c %s ref.h5)
"${MPIRUN[@]}" "$BIN" run r.ini -o int.h5 --commit-interval 0.05 >"$T/bg.out" 2>"$T/bg.err" &
pid=$!
reached=0
while kill -0 "$pid" 2>/dev/null; do
  if [ "$(stat -c %s int.h5 2>/dev/null || echo 0)" -ge $((full / 4)) ]; then
    reached=1
    ranks=$(pgrep -P "$pid")
    if [ -n "$ranks" ]; then kill -TERM $ranks; else kill -INT "$pid"; fi
    break
  fi
  sleep 0.02
done
wait "$pid"
if [ "$reached" = 1 ]; then
  expect_in "$T/bg.err" "interrupted (SIGTERM)"
  expect_in "$T/bg.err" "mpirun -np 2 stormsweep run r.ini -o int.h5 --commit-interval 0.05 --resume"
  expect_exit 0 "${MPIRUN[@]}" "$BIN" run r.ini -o int.h5 --resume
  expect_in "$T/err" "(resumed: "
  same_results ref.h5 int.h5
else
  fail "the MPI run ended before it could be interrupted: $(head -c 400 "$T/bg.err")"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_mpi: all checks passed"
