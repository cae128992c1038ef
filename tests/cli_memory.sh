#!/usr/bin/env bash
# cli_memory.sh — the memory check counts every thread: each of -j N threads holds one run, so a sweep whose N runs (and
# the driver's buffers) do not fit in the memory this process may take is
# refused before anything is created, by every command that runs sweeps
# (run, verify, boundary, refine, bench), with the estimate, the memory
# available and the -j that would fit. Before, only one run was checked:
# -j 2 passed and aborted (or failed runs) once the rings were built.
#
# A 4096-shard x 4096-vnode ring is about 270 MB per run; ulimit -v 1 GB
# stands in for a small machine, so -j 1 fits and -j 4 does not, and no
# refused command allocates anything.
#
# usage: bash tests/cli_memory.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$(realpath "$1")
# A sanitizer's shadow memory needs terabytes of address space, so no
# ulimit -v can stand in for a small machine there: the Release build runs
# this test.
if is_sanitized "$BIN"; then
  echo "cli_memory: not run under a sanitizer (ulimit -v cannot hold its shadow memory)"
  exit 0
fi
T=$(mktemp -d /tmp/cli_memory.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
LIMIT_KB=1000000

cat >ring.ini <<'EOF'
[sweep]
name = ring
replicates = 2
seed = 1
[scenario]
shards = 4096
vnodes = 4096
workers = 1
horizon_ms = 200
surge = none
brownout = none
load = 0.01
EOF
# The same with a run for each of 4 threads (threads beyond the runs hold none).
sed 's/^replicates = 2/replicates = 4/' ring.ini >ring4.ini

# limited WANT COMMAND...: COMMAND under ulimit -v exits WANT.
limited() {
  local want=$1
  shift
  (ulimit -v $LIMIT_KB && exec timeout 300 "$@") >"$T/out" 2>"$T/err"
  local got=$?
  [ "$got" = "$want" ] || fail "'$*' under ulimit -v $LIMIT_KB exited $got, want $want; " \
    "stderr: $(head -c 600 "$T/err")"
}

# refused CMD: the message names the threads, the estimate, the limit and a -j that fits.
refused() {
  local msg
  msg=$(grep -m1 -E "stormsweep $1: .*-j 4: 4 threads x [0-9.]+ GB per run" "$T/err")
  if [ -z "$msg" ]; then
    fail "$1 -j 4: no refusal naming 4 threads and the GB per run; stderr: $(head -c 600 "$T/err")"
    return
  fi
  case "$msg" in
    *"need about "*" GB, more than the "*" GB of memory left under the address-space limit "*)
      case "$msg" in *"(ulimit -v); -j "[0-9]*" would fit") ;; *) fail "$1: no -j that fits: $msg" ;; esac ;;
    *) fail "$1 -j 4: the refusal lacks the memory available or the -j that fits: $msg" ;;
  esac
}

# One run fits: -j 1 under the limit completes (and makes the file refine needs).
limited 0 "$BIN" run ring.ini -o one.h5 -j 1 -q
expect_exit 0 "$BIN" analyze one.h5

limited 2 "$BIN" run ring4.ini -o four.h5 -j 4 -q
refused run
[ -e four.h5 ] && fail "run -j 4 created its output file before refusing"

limited 2 "$BIN" verify ring.ini -j 4 -o v.h5 -q
refused verify
[ -e v.h5 ] && fail "verify -j 4 created its output file before refusing"

limited 2 "$BIN" boundary ring.ini --axis vnodes --range 100:4096 -j 4 -o bnd -q
refused boundary

limited 1 "$BIN" refine one.h5 -j 4 --max-runs 8
refused refine

# bench's sweep runs the seed study; -j 64 of it does not fit in 1 GB either.
limited 1 "$BIN" bench --threads 64 --runs 1 --replicates 1 --no-decision
grep -qE "stormsweep bench: sweep failed: -j 64: 64 threads x .* -j [0-9]+ would fit" "$T/err" ||
  fail "bench --threads 64: no refusal naming the threads; stderr: $(head -c 600 "$T/err")"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all memory checks passed"
