#!/usr/bin/env bash
# cli_merge.sh — `merge` against bad usage and hostile inputs: --help,
# unknown options, no parts, no -o; a missing file, a text file, a truncated
# file, an empty file, an HDF5 file of another layout (no stormsweep
# attributes; /ticks recompressed without our filters) — each refused with a
# message naming the file, exit 2, no crash (no HDF5 error dump) and no
# output file left behind.
# Usage: bash cli_merge.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_merge.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# expect_refused FILE TEXT : merging a good part with FILE fails cleanly.
expect_refused() {
  rm -f out.h5 out.h5.partial*
  expect_exit 2 "$BIN" merge part-0.h5 "$1" -o out.h5
  expect_in "$T/err" "$2"
  grep -q "HDF5-DIAG" "$T/err" && fail "merge printed an HDF5 error dump for $1"
  [ -e out.h5 ] || compgen -G "out.h5.partial*" >/dev/null && fail "a refused merge ($1) left an output file"
  [ "$(wc -l <"$T/err")" -le 4 ] || fail "merge of $1: too many lines: $(cat "$T/err")"
}

cat >tiny.ini <<'EOF'
[sweep]
replicates = 2
seed = 3
[scenario]
shards = 4
horizon_ms = 2000
surge = 800+300
brownout = 800+300
[grid]
budget_ratio = 0.1, inf
EOF

# ---- usage ----
expect_exit 0 "$BIN" merge --help
expect_in "$T/out" "usage: stormsweep merge PART.h5... -o FILE"
expect_in "$T/out" "--slice"
expect_exit 0 "$BIN" --help
expect_in "$T/out" "merge"
expect_exit 2 "$BIN" merge
expect_in "$T/err" "no part files given"
expect_exit 2 "$BIN" merge a.h5
expect_in "$T/err" "-o FILE is required"
expect_exit 2 "$BIN" merge a.h5 -o
expect_in "$T/err" "-o needs a value"
expect_exit 2 "$BIN" merge a.h5 -o x.h5 --bogus
expect_in "$T/err" "unknown option '--bogus'"

expect_exit 0 "$BIN" run tiny.ini --slice 0/2 -o part-0.h5 -q
expect_exit 0 "$BIN" run tiny.ini --slice 1/2 -o part-1.h5 -q
expect_exit 0 "$BIN" merge part-0.h5 part-1.h5 -o good.h5 -q

# ---- hostile inputs ----
expect_refused missing.h5 "missing.h5: cannot read: No such file or directory"
echo "not an HDF5 file at all" >text.h5
expect_refused text.h5 "text.h5: not an HDF5 file"
: >empty.h5
expect_refused empty.h5 "empty.h5: not an HDF5 file"
size=$(stat -c %s part-1.h5)
head -c $((size / 2)) part-1.h5 >half.h5
expect_refused half.h5 "half.h5:"
head -c 1000 part-1.h5 >head.h5
expect_refused head.h5 "head.h5:"
# An HDF5 file without our attributes: one dataset copied out of a part.
h5copy -i part-1.h5 -o other.h5 -s /points -d /points >/dev/null 2>&1 || fail "h5copy failed"
expect_refused other.h5 "other.h5: not a stormsweep result file (no 'format' attribute)"
# Our attributes, but /ticks stored with other filters: chunks cannot be
# copied raw, so it is refused as another layout.
if h5repack -f /ticks/attempts:GZIP=6 part-1.h5 repacked.h5 >/dev/null 2>&1; then
  expect_refused repacked.h5 "repacked.h5: not a stormsweep result file of this layout"
else
  fail "h5repack failed"
fi
# A directory.
mkdir adir
expect_refused adir "adir"
# Nothing above changed the good parts.
expect_exit 0 "$BIN" merge part-0.h5 part-1.h5 -o good2.h5 -q
for obj in /runs /ticks /points; do
  h5diff good.h5 good2.h5 $obj $obj >/dev/null 2>&1 || fail "merge results changed ($obj)"
done
# The output directory does not exist: a write failure, exit 1, nothing left.
expect_exit 1 "$BIN" merge part-0.h5 part-1.h5 -o nodir/x.h5
expect_in "$T/err" "nodir/x.h5"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_merge: all checks passed"
