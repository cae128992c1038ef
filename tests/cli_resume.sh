#!/usr/bin/env bash
# cli_resume.sh — interrupted sweeps and `run --resume` from the outside:
# SIGKILL part-way leaves a file HDF5 opens and --resume completes to the
# uninterrupted result (h5diff of every result dataset); SIGINT exits 130 and
# prints the exact command that finishes the file, which works; SIGTERM
# exits 143; an interrupted slice is named by merge until it is resumed;
# --resume refuses another sweep or seed (file untouched), a missing file
# and --force, and says so for a complete file (exit 0); a file-size limit
# (ulimit -f, as a full disk) fails cleanly (exit 1) and the file resumes;
# too little free space is refused before anything is written.
# Usage: bash cli_resume.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_resume.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

same_results() {
  local obj
  for obj in /runs /points /points_text /axes /ticks; do
    h5diff "$1" "$2" "$obj" "$obj" >"$T/diff" 2>&1 || fail "h5diff $obj: $1 and $2 differ: $(head -c 400 "$T/diff")"
  done
  for m in $(h5ls "$1/ticks" | awk '{print $1}'); do
    h5diff "$1" "$2" "/ticks/$m" "/ticks/$m" >/dev/null 2>&1 || fail "h5diff /ticks/$m: $1 and $2 differ"
  done
  h5dump -a /complete "$2" | grep -q '(0): 1' || fail "$2 is not marked complete"
}

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# start_until FILE BYTES CMD... : starts CMD in the background and returns
# (pid in $pid) once FILE has grown to BYTES — the run is then part-way,
# whatever the machine's speed. Fails the test if CMD ends first.
start_until() {
  local file=$1 bytes=$2
  shift 2
  "$@" >"$T/bg.out" 2>"$T/bg.err" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    [ "$(size_of "$file")" -ge "$bytes" ] && return 0
    sleep 0.02
  done
  fail "'$*' ended before $file reached $bytes bytes: $(head -c 300 "$T/bg.err")"
  return 1
}

# 2 points x 100 replicates of a small cluster, 2 s each: a few seconds in
# all, even under sanitizers; commits every 0.05 s so a kill finds some.
cat >r.ini <<'EOF'
[sweep]
name = resume
replicates = 100
seed = 11

[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300

[grid]
budget_ratio = 0.1, inf
EOF
expect_exit 0 "$BIN" run r.ini -o ref.h5 -j 2 -q
full=$(size_of ref.h5)
[ "$full" -gt 100000 ] || fail "ref.h5 is only $full bytes"

# ---- SIGKILL part-way, then --resume ----
if start_until kill.h5 $((full * 2 / 5)) "$BIN" run r.ini -o kill.h5 -j 1 --commit-interval 0.05; then
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  h5dump -H kill.h5 >/dev/null 2>&1 || fail "after SIGKILL, HDF5 cannot open kill.h5"
  h5dump -a /complete kill.h5 | grep -q '(0): 0' || fail "a killed file must be marked incomplete"
  expect_exit 0 "$BIN" run r.ini -o kill.h5 -j 2 --resume
  had=$(sed -n 's/.*(resumed: \([0-9]*\) runs were already there).*/\1/p' "$T/err")
  if [ -z "$had" ] || [ "$had" -le 0 ] || [ "$had" -ge 200 ]; then
    fail "the killed file should hold some but not all 200 runs; resume said: $(cat "$T/err")"
  fi
  same_results ref.h5 kill.h5
fi

# ---- --resume of a complete file ----
before=$(md5sum <kill.h5)
expect_exit 0 "$BIN" run r.ini -o kill.h5 --resume
expect_in "$T/err" "kill.h5: already complete: it holds all 200 runs; nothing to do"
[ "$(md5sum <kill.h5)" = "$before" ] || fail "--resume of a complete file modified it"

# ---- SIGTERM, and the file is never overwritten without --force ----
if start_until term.h5 $((full * 2 / 5)) "$BIN" run r.ini -o term.h5 -j 1 --commit-interval 0.05; then
  kill -TERM "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" = 143 ] || fail "SIGTERM: exit $rc, want 143: $(cat "$T/bg.err")"
  expect_in "$T/bg.err" "interrupted (SIGTERM)"
  expect_in "$T/bg.err" "stormsweep run r.ini -o term.h5 -j 1 --commit-interval 0.05 --resume"
  expect_exit 2 "$BIN" run r.ini -o term.h5
  expect_in "$T/err" "term.h5: already exists (use --force to overwrite); --resume finishes"
  # Refusals: another sweep definition, another seed, --force with --resume.
  before=$(md5sum <term.h5)
  expect_exit 2 "$BIN" run r.ini -o term.h5 --resume --set load=0.6
  expect_in "$T/err" "term.h5: belongs to another sweep definition: this sweep has 'load = 0.6'"
  expect_exit 2 "$BIN" run r.ini -o term.h5 --resume --set seed=12
  expect_in "$T/err" "term.h5: belongs to another sweep: its master seed is 11, this sweep's is 12"
  expect_exit 2 "$BIN" run r.ini -o term.h5 --resume --slice 0/2
  expect_in "$T/err" "holds the whole sweep, but this command runs slice 0/2"
  expect_exit 2 "$BIN" run r.ini -o term.h5 --resume --force
  expect_in "$T/err" "--resume continues the file and --force replaces it"
  [ "$(md5sum <term.h5)" = "$before" ] || fail "a refused --resume modified term.h5"
  expect_exit 0 "$BIN" run r.ini -o term.h5 --resume -q
  same_results ref.h5 term.h5
fi
expect_exit 2 "$BIN" run r.ini -o nothing.h5 --resume
expect_in "$T/err" "nothing.h5: does not exist: nothing to resume"
[ -e nothing.h5 ] && fail "--resume of a missing file created it"
echo "plain text" >noth5.h5
expect_exit 2 "$BIN" run r.ini -o noth5.h5 --resume
expect_in "$T/err" "noth5.h5: not an HDF5 file"

# ---- SIGINT on a slice: exit 130, the command to finish it; merge names it ----
expect_exit 0 "$BIN" run r.ini --slice 1/2 -o s1.h5 -q
slice_full=$(size_of s1.h5)
if start_until s0.h5 $((slice_full * 2 / 5)) "$BIN" run r.ini --slice 0/2 -o s0.h5 -j 1 --commit-interval 0.05; then
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" = 130 ] || fail "SIGINT: exit $rc, want 130: $(cat "$T/bg.err")"
  expect_in "$T/bg.err" "interrupted (SIGINT)"
  expect_in "$T/bg.err" "(incomplete); finish it with:"
  again=$(grep -A1 "finish it with:" "$T/bg.err" | tail -1 | sed 's/^ *//')
  [ "$again" = "stormsweep run r.ini --slice 0/2 -o s0.h5 -j 1 --commit-interval 0.05 --resume" ] ||
    fail "SIGINT printed '$again' as the command to resume"
  expect_exit 2 "$BIN" merge s0.h5 s1.h5 -o merged.h5
  expect_in "$T/err" "s0.h5 (slice 0/2) lacks"
  expect_in "$T/err" "finish it with: stormsweep run r.ini --slice 0/2 -o s0.h5"
  [ -e merged.h5 ] && fail "merge with an unfinished part left a file"
  # The printed command, as printed, finishes it.
  read -r -a words <<<"${again#stormsweep }"
  expect_exit 0 "$BIN" "${words[@]}"
  expect_exit 0 "$BIN" merge s0.h5 s1.h5 -o merged.h5 -q
  same_results ref.h5 merged.h5
fi

# ---- a file-size limit (as a full disk): exit 1, the file resumes ----
rm -f lim.h5
(
  trap '' XFSZ
  ulimit -f $((full / 2048))
  exec "$BIN" run r.ini -o lim.h5 -j 2 --commit-interval 0.05
) >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 1 ] || fail "a file-size limit: exit $rc, want 1: $(head -c 600 "$T/err")"
expect_in "$T/err" "File too large"
expect_in "$T/err" "keeps the"
expect_in "$T/err" "stormsweep run r.ini -o lim.h5 -j 2 --commit-interval 0.05 --resume"
grep -q "HDF5-DIAG" "$T/err" && fail "a failed write printed an HDF5 error dump"
h5dump -H lim.h5 >/dev/null 2>&1 || fail "after a failed write, HDF5 cannot open lim.h5"
expect_exit 0 "$BIN" run r.ini -o lim.h5 -j 2 --resume
same_results ref.h5 lim.h5
# A limit too small for the file's skeleton: nothing is left behind. One
# thread: LLVM's libomp (the TSan build's) maps a file of its own when it
# starts its thread pool, and under this limit that mapping faults.
rm -f tiny.h5
(
  trap '' XFSZ
  ulimit -f 40
  exec "$BIN" run r.ini -o tiny.h5 -j 1
) >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 1 ] || fail "a tiny file-size limit: exit $rc, want 1: $(head -c 600 "$T/err")"
expect_in "$T/err" "File too large"
[ -e tiny.h5 ] && fail "a file that could not be created was left behind"

# ---- not enough free space: refused before anything is written ----
expect_exit 2 "$BIN" run r.ini -o huge.h5 --set replicates=50000000 --set horizon_ms=100000
expect_in "$T/err" "not enough disk space for huge.h5"
expect_in "$T/err" "--no-space-check"
[ -e huge.h5 ] && fail "a sweep that cannot fit created its file"
expect_exit 2 "$BIN" run r.ini -o huge.h5 --set replicates=50000000 --set horizon_ms=100000 --force
expect_in "$T/err" "not enough disk space"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_resume: all checks passed"
