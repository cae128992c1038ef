#!/usr/bin/env bash
# cli_slices.sh — `run --slice K/N` and `merge` from the outside: three slices
# run separately and merged equal one run of the sweep in every result
# dataset (h5diff /runs /points /points_text /axes and each
# /ticks/*); bad --slice values; merging parts of another sweep (different
# setting, different seed) is refused with no output file; a missing slice
# and a duplicated slice are named; --force and refusing to overwrite.
# (An unfinished part is tested in cli_resume.sh.)
# Usage: bash cli_slices.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_slices.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# expect_exit CODE CMD... : runs CMD, keeps stdout/stderr in $T/out, $T/err.
# same_results A B : every result dataset of A and B compares equal.
same_results() {
  local obj
  for obj in /runs /points /points_text /axes; do
    h5diff "$1" "$2" "$obj" "$obj" >"$T/diff" 2>&1 || fail "h5diff $obj: $1 and $2 differ: $(head -c 400 "$T/diff")"
  done
  local n=0
  for m in $(h5ls "$1/ticks" | awk '{print $1}'); do
    n=$((n + 1))
    h5diff "$1" "$2" "/ticks/$m" "/ticks/$m" >"$T/diff" 2>&1 || fail "h5diff /ticks/$m: $1 and $2 differ: $(head -c 400 "$T/diff")"
  done
  [ "$n" -ge 19 ] || fail "$1 has $n /ticks datasets, want 19"
}

# 3 points x 3 replicates, 2 s each on 4 shards: quick even under sanitizers.
cat >tiny.ini <<'EOF'
[sweep]
name = tiny
replicates = 3
seed = 5

[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300

[grid]
budget_ratio = 0.1, 0.5, inf
EOF

# ---- bad --slice values: exit 2, a message, no file ----
for bad in 3/3 -1/3 a/3 1/0 2 1/3x ""; do
  expect_exit 2 "$BIN" run tiny.ini --slice "$bad" -o bad.h5
  expect_in "$T/err" "--slice"
done
expect_exit 2 "$BIN" run tiny.ini --slice 3/3 -o bad.h5
expect_in "$T/err" "slices are numbered from 0 to N-1 (here 0 to 2)"
expect_exit 2 "$BIN" run tiny.ini --slice x/3 -o bad.h5
expect_in "$T/err" "expected K/N"
[ -e bad.h5 ] && fail "a bad --slice must not create the output"
expect_exit 0 "$BIN" run --help
expect_in "$T/out" "--slice K/N"
expect_in "$T/out" "--resume"

# ---- three slices, merged, equal one run ----
expect_exit 0 "$BIN" run tiny.ini -o full.h5 -j 2 -q
total=0
for k in 0 1 2; do
  expect_exit 0 "$BIN" run tiny.ini --slice $k/3 -o part-$k.h5 -j 1
  expect_in "$T/err" "(slice $k/3:"
  n=$(sed -n 's/^stormsweep run: \([0-9]*\) runs in.*/\1/p' "$T/err")
  total=$((total + ${n:-0}))
  h5dump -a /slice part-$k.h5 >"$T/attr" 2>&1
  expect_in "$T/attr" "\"$k/3\""
done
[ "$total" = 9 ] || fail "the three slices ran $total runs, want 9"
# A part keeps the full shape: 9 rows, its own runs done.
h5dump -H -d /runs part-0.h5 >"$T/h" 2>&1
expect_in "$T/h" "( 9 )"
expect_exit 0 "$BIN" merge part-2.h5 part-0.h5 part-1.h5 -o merged.h5
expect_in "$T/err" "3 parts, 9 runs -> merged.h5"
same_results full.h5 merged.h5
h5dump -a /complete merged.h5 | grep -q '(0): 1' || fail "merged.h5 is not marked complete"
# Only /timing and the command line / creation time differ from one run.
h5diff --exclude-path /timing full.h5 merged.h5 >"$T/diff" 2>&1
if grep -v -e 'command_line' -e 'created' -e 'instance' -e 'differences found' "$T/diff" | grep -q .; then
  fail "unexpected differences between full.h5 and merged.h5: $(head -c 600 "$T/diff")"
fi
# A slicing into more parts than runs: some parts are empty, still merges.
for k in 0 1 2 3 4 5 6 7 8 9 10; do
  expect_exit 0 "$BIN" run tiny.ini --slice $k/11 -o p11-$k.h5 -q
done
expect_exit 0 "$BIN" merge p11-*.h5 -o merged11.h5 -q
same_results full.h5 merged11.h5

# ---- refused merges write nothing ----
expect_exit 0 "$BIN" run tiny.ini --slice 2/3 --set seed=6 -o seed6.h5 -q
expect_exit 2 "$BIN" merge part-0.h5 part-1.h5 seed6.h5 -o bad1.h5
expect_in "$T/err" "come from different sweeps: master seed 5 vs 6"
[ -e bad1.h5 ] || compgen -G "bad1.h5.partial*" >/dev/null && fail "a refused merge (seed) left a file"
expect_exit 0 "$BIN" run tiny.ini --slice 2/3 --set load=0.6 -o load.h5 -q
expect_exit 2 "$BIN" merge part-0.h5 part-1.h5 load.h5 -o bad2.h5
expect_in "$T/err" "come from different sweeps"
expect_in "$T/err" "load = 0.6"
[ -e bad2.h5 ] && fail "a refused merge (sweep) left a file"
expect_exit 2 "$BIN" merge part-0.h5 part-2.h5 -o bad3.h5
expect_in "$T/err" "missing slice 1/3"
expect_in "$T/err" "nothing written"
[ -e bad3.h5 ] && fail "a merge with a missing slice left a file"
cp part-1.h5 copy-1.h5
expect_exit 2 "$BIN" merge part-0.h5 part-1.h5 part-2.h5 copy-1.h5 -o bad4.h5
expect_in "$T/err" "are in both part-1.h5 (slice 1/3) and copy-1.h5 (slice 1/3): that slice is given twice"
[ -e bad4.h5 ] && fail "a merge with a duplicated slice left a file"
expect_exit 2 "$BIN" merge part-0.h5 part-1.h5 part-2.h5 part-1.h5 -o bad5.h5
expect_in "$T/err" "are the same file, given twice"
expect_exit 2 "$BIN" merge part-0.h5 part-1.h5 full.h5 -o bad6.h5
expect_in "$T/err" "each run must come from exactly one part"
expect_exit 0 "$BIN" run tiny.ini --slice 1/2 -o half.h5 -q
expect_exit 2 "$BIN" merge part-0.h5 half.h5 -o bad7.h5
expect_in "$T/err" "parts of one slicing have the same N"
# The whole sweep in one file merges to itself.
expect_exit 0 "$BIN" merge full.h5 -o single.h5 -q
same_results full.h5 single.h5

# ---- never overwrite without --force ----
before=$(md5sum <merged.h5)
expect_exit 2 "$BIN" merge part-0.h5 part-1.h5 part-2.h5 -o merged.h5
expect_in "$T/err" "merged.h5: already exists (use --force to overwrite)"
[ "$(md5sum <merged.h5)" = "$before" ] || fail "a refused merge modified merged.h5"
expect_exit 0 "$BIN" merge part-0.h5 part-1.h5 part-2.h5 -o merged.h5 --force -q
same_results full.h5 merged.h5
expect_exit 2 "$BIN" merge part-0.h5 part-1.h5 part-2.h5 -o part-1.h5 --force
expect_in "$T/err" "part-1.h5 is one of the parts"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_slices: all checks passed"
