#!/usr/bin/env bash
# cli_journal.sh — a journal belongs to one file, and a file to its lock
# (docs/durability.md), against real files and journals:
#  1 a stale journal (a killed first attempt, then a finished, refined file
#    copied over FILE) is refused by refine and run --resume: nothing of the
#    file is lost; a journal cut back to its header is refused the same way;
#  2 a journal record that is not the run it claims to be (a copy of another
#    run, a point the sweep lacks, an outcome no run has, chunks that do not
#    decode) is never written into the file, which stays incomplete;
#  3 FILE.journal as a hard link keeps the other name's content; as a
#    symbolic link it is refused and named as one;
#  4 a symlink to FILE shares FILE's lock; a file with two names is not
#    written;
#  5 a killed refine leaves a journal of its rows and /refine, from which a
#    file torn beyond opening is rebuilt with its rounds and design, keeping
#    its permissions; a finished refine leaves no journal;
#  6 a torn verify output resumes (rebuilt from its journal);
#  7 a record claiming a huge length in a sparse journal costs no memory;
#  8 the results reader refuses a run row whose seed is another run's.
# Usage: bash cli_journal.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
SRC=$2
T=$(mktemp -d /tmp/cli_journal.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
PY=/usr/bin/python3
JT="$PY $SRC/tests/lib/journal_tool.py"

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
finished_runs() { "$BIN" analyze "$1" 2>/dev/null | head -1 | grep -o '[0-9]* finished runs' | cut -d' ' -f1; }
complete_of() { h5dump -a /complete "$1" 2>/dev/null | grep -o '(0): [01]' | cut -d' ' -f2; }

# killed CMD... : starts CMD in the background and SIGKILLs it once the file
# named by $WATCH reaches $BYTES bytes (or it ends first).
killed() {
  "$@" >/dev/null 2>&1 &
  local p=$! i
  for i in $(seq 2000); do
    [ "$(size_of "$WATCH")" -ge "$BYTES" ] && break
    kill -0 $p 2>/dev/null || break
    sleep 0.005
  done
  kill -9 $p 2>/dev/null
  wait $p 2>/dev/null
}

cat >r.ini <<'EOF'
[sweep]
name = journal
replicates = 20
seed = 7

[scenario]
shards = 4
horizon_ms = 6000
load = 0.5
surge = 2000+300
surge_factor = 1.5
brownout = none

[grid]
budget_ratio = 0.1, inf
EOF
expect_exit 0 "$BIN" run r.ini -o ref.h5 -j 2 -q
expect_exit 0 "$BIN" refine ref.h5 -j 2 -q --max-runs 100
[ -e ref.h5.journal ] && fail "a finished refine keeps ref.h5.journal"
refined=$(finished_runs ref.h5)
[ "${refined:-0}" -gt 40 ] || fail "the refined file holds ${refined:-0} runs"

# ---- 1: stale journals ----
WATCH=F.h5.journal BYTES=60000 killed "$BIN" run r.ini -o F.h5 -j 1 -q --commit-interval 0.01
[ -e F.h5.journal ] || fail "a killed run left no journal"
cp F.h5.journal stale.journal
cp ref.h5 F.h5
expect_exit 2 "$BIN" refine F.h5 -j 1 -q
expect_in "$T/err" "F.h5: its journal F.h5.journal is not this file's"
expect_in "$T/err" "Nothing was changed"
[ "$(finished_runs F.h5)" = "$refined" ] || fail "refine with a stale journal changed F.h5: $(finished_runs F.h5) runs"
cp ref.h5 G.h5
"$BIN" run r.ini -o G0.h5 -j 1 -q --commit-interval 0.01 >/dev/null 2>&1 # a finished file of this sweep
cp G0.h5 G.h5
cp stale.journal G.h5.journal
expect_exit 2 "$BIN" run r.ini -o G.h5 --resume -j 1 -q
expect_in "$T/err" "is not this file's"
[ "$(finished_runs G.h5)" = 40 ] || fail "run --resume with a stale journal changed G.h5"
# The file's own journal, cut back to its header: it lacks every done run.
WATCH=H.h5.journal BYTES=60000 killed "$BIN" run r.ini -o H.h5 -j 1 -q --commit-interval 0.01
cp H.h5.journal own.journal
expect_exit 0 "$BIN" run r.ini -o H.h5 --resume -j 1 -q
cp own.journal H.h5.journal
$JT header-only H.h5.journal
expect_exit 2 "$BIN" run r.ini -o H.h5 --resume -j 1 -q
expect_in "$T/err" "is marked done in it but is not in its journal"
[ "$(finished_runs H.h5)" = 40 ] || fail "a header-only journal changed H.h5: $(finished_runs H.h5) runs"

# ---- 2: records that are not the runs they claim to be ----
WATCH=K.h5.journal BYTES=60000 killed "$BIN" run r.ini -o K.h5 -j 1 -q --commit-interval 0.01
n=$(finished_runs K.h5)
[ "${n:-40}" -lt 40 ] || fail "the killed run K.h5 is already complete"
# not_done FILE RUN: marks RUN not done in FILE, so resume restores it from
# the journal, whose latest record of RUN is then the crafted one.
not_done() {
  $PY - "$1" "$2" <<'EOF'
import h5py, sys
f = h5py.File(sys.argv[1], 'r+'); r = f['runs']; row = r[int(sys.argv[2])]
row['done'] = 0; r[int(sys.argv[2])] = row
EOF
}
for craft in "copy 3 39" "edit 3 point=999999" "edit 3 outcome=7" "garbage 3"; do
  cp K.h5 C.h5
  cp K.h5.journal C.h5.journal
  set -- $craft
  $JT "$1" C.h5.journal "${@:2}" 2>"$T/jt.err" || fail "journal_tool $craft: $(cat "$T/jt.err")"
  [ "$1" = copy ] || not_done C.h5 3
  "$BIN" run r.ini -o C.h5 --resume -j 1 -q >"$T/out" 2>"$T/err"
  rc=$?
  [ "$rc" != 0 ] || fail "resume with a crafted record ($craft) exited 0"
  expect_in "$T/err" "is not the run it claims to be"
  [ "$(complete_of C.h5)" = 1 ] && fail "a crafted record ($craft) ended in a complete file"
done

# ---- 3: journals that are links ----
mkdir snap
echo "yesterday's snapshot" >snap/keep.txt
ln snap/keep.txt L.h5.journal
expect_exit 1 "$BIN" run r.ini -o L.h5 -j 1 -q
expect_in "$T/err" "does not exist, but its journal L.h5.journal does"
expect_exit 0 "$BIN" run r.ini -o L.h5 -j 1 -q --force
grep -q yesterday snap/keep.txt || fail "creating L.h5 wrote through the hard-linked L.h5.journal"
cp K.h5 S.h5
truncate -s 300000 S.h5
mkdir -p else
cp K.h5.journal else/real.journal
ln -s else/real.journal S.h5.journal
expect_exit 2 "$BIN" run r.ini -o S.h5 --resume -j 1 -q
expect_in "$T/err" "is a symbolic link"
grep -q "has no journal" "$T/err" && fail "a symlinked journal is reported as no journal: $(cat "$T/err")"

# ---- 4: one file, one lock ----
cp ref.h5 U.h5
ln -s U.h5 A.h5
$PY - U.h5.lock >"$T/held" <<'EOF' &
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 1, 0))
print('held', flush=True)
time.sleep(30)
EOF
holder=$!
# Wait until the lock is held (not just until its file exists).
for i in $(seq 1000); do grep -q held "$T/held" 2>/dev/null && break; sleep 0.02; done
expect_exit 1 "$BIN" refine A.h5 -j 1 -q --max-runs 150
expect_in "$T/err" "another stormsweep process is writing it (it holds U.h5.lock)"
kill $holder 2>/dev/null
wait $holder 2>/dev/null
ln U.h5 B.h5
expect_exit 1 "$BIN" refine B.h5 -j 1 -q --max-runs 150
expect_in "$T/err" "the file has 2 names"
[ "$(finished_runs U.h5)" = "$refined" ] || fail "a refused refine changed U.h5"
rm -f B.h5

# ---- 5: a killed refine, then a file torn beyond opening ----
# Twice: confirmation runs that store their summary row alone (the default:
# records without chunks, so the journal grows slowly past the copy of the
# file it starts with) and, with --ticks, their /ticks rows too.
for mode in summary ticks; do
  cp ref.h5 R.h5
  start=$(size_of R.h5)
  if [ $mode = ticks ]; then args=(--ticks) bytes=$((start + start / 2)); else args=() bytes=$((start * 4 / 5)); fi
  WATCH=R.h5.journal BYTES=$bytes killed "$BIN" refine R.h5 -j 1 -q --max-runs 3000 "${args[@]}"
  [ -e R.h5.journal ] || fail "$mode: a killed refine left no journal"
  $JT info R.h5.journal >"$T/info" 2>&1
  grep -q "appends=[1-9]" "$T/info" || fail "$mode: the refine journal holds no appended rows: $(cat "$T/info")"
  grep -q "groups=1" "$T/info" || fail "$mode: the refine journal holds no /refine: $(cat "$T/info")"
  truncate -s 100000 R.h5
  chmod 640 R.h5
  expect_exit 0 "$BIN" refine R.h5 -j 1 --max-runs 200 "${args[@]}"
  expect_in "$T/err" "R.h5 was damaged (HDF5 cannot open it); rebuilt it from R.h5.journal"
  [ "$(stat -c %a R.h5)" = 640 ] || fail "$mode: the rebuilt R.h5 has mode $(stat -c %a R.h5), not 640"
  [ -e R.h5.journal ] && fail "$mode: a finished refine session keeps R.h5.journal"
  h5dump -a /refine/alpha R.h5 >/dev/null 2>&1 || fail "$mode: the rebuilt R.h5 has no /refine design"
  rounds=$(h5dump -d /refine/round_start R.h5 2>/dev/null | grep -c '(')
  [ "${rounds:-0}" -ge 1 ] || fail "$mode: the rebuilt R.h5 has no rounds"
  expect_exit 0 "$BIN" recommend R.h5
  # The last confirmation run: no rows by default (it reads the fill value,
  # -1), its rows with --ticks.
  last=$(($(finished_runs R.h5) - 1))
  v=$(h5dump -d /ticks/attempts -s "$last,0" -c "1,1" R.h5 | grep "^ *($last,0):" | awk '{print $NF}')
  if [ $mode = ticks ]; then [ "$v" != -1 ] || fail "ticks: run $last has no /ticks rows"
  else [ "$v" = -1 ] || fail "summary: run $last stores /ticks rows ($v)"; fi
done
chmod 644 R.h5

# ---- 6: a torn verify output ----
cat >v.ini <<'EOF'
[scenario]
shards = 4
horizon_ms = 30000
load = 0.5
surge = 2000+300
surge_factor = 1.5
brownout = none
EOF
WATCH=V.h5.journal BYTES=2000000 killed "$BIN" verify v.ini -o V.h5 -j 1 -q
if [ -e V.h5.journal ]; then
  truncate -s $(($(size_of V.h5) / 2)) V.h5
  "$BIN" verify v.ini -o V.h5 --resume -j 1 -q >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc = 0 ] || [ $rc = 1 ] || fail "verify --resume of a torn file exited $rc: $(head -c 300 "$T/err")"
  expect_in "$T/err" "rebuilt it from V.h5.journal"
  grep -q "^stormsweep verify: V.h5: cannot open" "$T/err" && fail "verify --resume refused a torn file: $(cat "$T/err")"
else
  fail "the killed verify left no journal"
fi

# ---- 7: a sparse journal declaring a huge record ----
cp K.h5 Z.h5
cp K.h5.journal Z.h5.journal
$JT huge Z.h5.journal 4000000000
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f "%M" -o "$T/rss" "$BIN" run r.ini -o Z.h5 --resume -j 1 -q >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc = 0 ] || fail "resume with a sparse journal tail exited $rc: $(head -c 300 "$T/err")"
  [ "$(tail -1 "$T/rss")" -lt 300000 ] || fail "a sparse journal made resume use $(tail -1 "$T/rss") KB"
fi
[ "$(complete_of Z.h5)" = 1 ] || fail "Z.h5 did not complete after its sparse tail was cut"

# ---- 8: a run row with another run's seed ----
cp ref.h5 W.h5
$PY - W.h5 <<'EOF'
import h5py, sys
f = h5py.File(sys.argv[1], 'r+'); r = f['runs']; a = r[3]; b = r[30]
b['seed'] = a['seed']; r[30] = b
EOF
expect_exit 2 "$BIN" analyze W.h5
expect_in "$T/err" "is not the seed of point 1 replicate 10"

[ "$failures" = 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo "cli_journal: all checks passed"
