#!/usr/bin/env bash
# cli_durable.sh — what survives a power cut, a torn file and a second writer
# (docs/durability.md), against an uninterrupted reference run:
#  1 a power cut, simulated as a page mix of two snapshots of a live file
#    (with the journal as it was on disk), never resumes to complete = 1 with
#    data that differ from the reference: identical, or refused with a message;
#  2 a truncated file (by half, and by 1 byte) resumes to the identical data,
#    rebuilt from its journal, and says what it kept; analyze names the journal;
#  3 a second writer is refused (exit 1) with HDF5_USE_FILE_LOCKING=FALSE, and
#    analyze of a file being written says another process is writing it;
#  4 SIGTERM/SIGINT during merge leaves no OUT.partial-*;
#  5 a finished file has no journal or lock file; --force and merge replace a
#    stale journal, so it is never replayed into the wrong file.
# Usage: bash cli_durable.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_durable.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
PY=/usr/bin/python3

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# same_or_refused FILE RC: after a resume that exited RC, FILE must equal the
# reference and be complete, or the resume must have failed with a message.
same_or_refused() {
  local f=$1 rc=$2 obj bad=0
  if [ "$rc" != 0 ]; then
    [ -s "$T/err" ] || fail "$f: resume failed (exit $rc) without a message"
    h5dump -a /complete "$f" 2>/dev/null | grep -q '(0): 1' &&
      fail "$f: a refused resume left complete = 1"
    return
  fi
  for obj in /runs /ticks; do
    h5diff ref.h5 "$f" "$obj" "$obj" >/dev/null 2>&1 || { bad=1; fail "$f: $obj differs from the reference after resume (exit 0)"; break; }
  done
  h5dump -a /complete "$f" | grep -q '(0): 1' || fail "$f: resumed (exit 0) but not complete"
  [ -e "$f.journal" ] && fail "$f: a finished file keeps its journal"
  [ -e "$f.lock" ] && fail "$f: a finished writer leaves $f.lock"
  return $bad
}

# 2 points x 40 replicates of a small cluster, 2 s each; commits every
# 0.05 s so snapshots catch the file between and inside commits.
cat >r.ini <<'EOF'
[sweep]
name = durable
replicates = 40
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
[ -e ref.h5.journal ] && fail "a finished run keeps ref.h5.journal"
[ -e ref.h5.lock ] && fail "a finished run keeps ref.h5.lock"

# wait_size FILE BYTES PID: until FILE reaches BYTES (0: PID ended first).
wait_size() {
  while kill -0 "$3" 2>/dev/null; do
    [ "$(size_of "$1")" -ge "$2" ] && return 0
    sleep 0.01
  done
  return 1
}

# ---- 1: page mixes of two snapshots of a live file ----
"$BIN" run r.ini -o live.h5 -j 1 --commit-interval 0.05 -q 2>"$T/bg.err" &
pid=$!
if wait_size live.h5 $((full / 5)) $pid && cp live.h5 A.h5 &&
   wait_size live.h5 $((full * 3 / 5)) $pid && cp live.h5 B.h5 && cp live.h5.journal B.journal; then
  kill -9 $pid
  wait $pid 2>/dev/null
  for seed in 1 2 3 4 5 6 7 8; do
    $PY - A.h5 B.h5 "mix$seed.h5" "$seed" <<'EOF'
import random, sys
a = open(sys.argv[1], 'rb').read(); b = open(sys.argv[2], 'rb').read()
rng = random.Random(int(sys.argv[4])); out = bytearray(b)
for off in range(0, min(len(a), len(b)), 4096):
    if rng.random() < 0.5: out[off:off + 4096] = a[off:off + 4096]
open(sys.argv[3], 'wb').write(bytes(out))
EOF
    cp B.journal "mix$seed.h5.journal"
    "$BIN" run r.ini -o "mix$seed.h5" -j 2 --resume >"$T/out" 2>"$T/err"
    same_or_refused "mix$seed.h5" $?
  done
else
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  fail "the live run ended before both snapshots: $(head -c 300 "$T/bg.err")"
fi

# ---- 2: truncated files ----
"$BIN" run r.ini -o cut.h5 -j 1 --commit-interval 0.05 -q 2>"$T/bg.err" &
pid=$!
if wait_size cut.h5 $((full / 2)) $pid; then
  kill -INT $pid
  wait $pid 2>/dev/null
  [ -e cut.h5.journal ] || fail "an interrupted run must keep its journal"
  for cut in half byte; do
    cp cut.h5 "$cut.h5"
    cp cut.h5.journal "$cut.h5.journal"
    if [ $cut = half ]; then truncate -s $(($(size_of cut.h5) / 2)) "$cut.h5"; else truncate -s -1 "$cut.h5"; fi
    if [ $cut = byte ]; then
      expect_exit 2 "$BIN" analyze "$cut.h5"
      expect_in "$T/err" "journal"
    fi
    "$BIN" run r.ini -o "$cut.h5" -j 2 --resume >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc = 0 ] || fail "the $cut-truncated file does not resume (exit $rc): $(head -c 400 "$T/err")"
    expect_in "$T/err" "rebuilt it from $cut.h5.journal, keeping the"
    same_or_refused "$cut.h5" $rc
  done
else
  fail "the run ended before it was half-way: $(head -c 300 "$T/bg.err")"
fi

# ---- 3: a second writer, with HDF5's locking off ----
HDF5_USE_FILE_LOCKING=FALSE "$BIN" run r.ini -o two.h5 -j 1 --commit-interval 0.05 -q 2>"$T/bg.err" &
pid=$!
if wait_size two.h5 $((full / 5)) $pid; then
  HDF5_USE_FILE_LOCKING=FALSE "$BIN" run r.ini -o two.h5 -j 1 --resume >"$T/out" 2>"$T/err"
  rc=$?
  kill -0 $pid 2>/dev/null && { [ $rc = 1 ] || fail "a second writer (--resume) exited $rc, want 1: $(head -c 300 "$T/err")"; }
  kill -0 $pid 2>/dev/null && expect_in "$T/err" "another stormsweep process is writing it"
  HDF5_USE_FILE_LOCKING=FALSE "$BIN" run r.ini -o two.h5 -j 1 --force >"$T/out" 2>"$T/err"
  rc=$?
  kill -0 $pid 2>/dev/null && { [ $rc = 1 ] || fail "a second writer (--force) exited $rc, want 1: $(head -c 300 "$T/err")"; }
  wait $pid
  rc=$?
  [ $rc = 0 ] || fail "the first writer failed (exit $rc): $(head -c 300 "$T/bg.err")"
  same_or_refused two.h5 0
else
  fail "the first writer ended too soon: $(head -c 300 "$T/bg.err")"
fi

# analyze of a file being written (HDF5's locking on, as by default)
"$BIN" run r.ini -o busy.h5 -j 1 --commit-interval 0.05 -q 2>"$T/bg.err" &
pid=$!
if wait_size busy.h5 $((full / 5)) $pid; then
  "$BIN" analyze busy.h5 >"$T/out" 2>"$T/err"
  rc=$?
  kill -0 $pid 2>/dev/null && { [ $rc = 2 ] || fail "analyze of a file being written exited $rc, want 2"; expect_in "$T/err" "another process is writing it"; }
fi
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null

# ---- 4: merge interrupted ----
expect_exit 0 "$BIN" run r.ini -o s0.h5 --slice 0/2 -q
expect_exit 0 "$BIN" run r.ini -o s1.h5 --slice 1/2 -q
for sig in TERM INT; do
  rm -f m.h5
  "$BIN" merge s0.h5 s1.h5 -o m.h5 -q 2>"$T/bg.err" &
  pid=$!
  while kill -0 $pid 2>/dev/null && ! ls m.h5.partial-* >/dev/null 2>&1; do sleep 0.002; done
  kill -$sig $pid 2>/dev/null
  wait $pid 2>/dev/null
  ls m.h5.partial-* >/dev/null 2>&1 && fail "merge on SIG$sig left $(ls m.h5.partial-*)"
  [ -e m.h5.lock ] && [ -e m.h5 ] && fail "a finished merge leaves m.h5.lock"
done

# ---- 5: stale journals are replaced, never replayed ----
printf 'stale' >j.h5.journal
expect_exit 0 "$BIN" merge s0.h5 s1.h5 -o j.h5 -q
[ -e j.h5.journal ] && fail "merge kept a stale j.h5.journal beside its output"
expect_exit 0 "$BIN" run r.ini -o j.h5 --resume -q
same_or_refused j.h5 0
"$BIN" run r.ini -o f.h5 -j 1 --commit-interval 0.05 -q 2>"$T/bg.err" &
pid=$!
wait_size f.h5 $((full / 3)) $pid
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
expect_exit 0 "$BIN" run r.ini -o f.h5 --force -q
same_or_refused f.h5 0

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo "cli_durable: all checks passed"
