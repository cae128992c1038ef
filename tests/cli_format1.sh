#!/usr/bin/env bash
# cli_format1.sh — result files of format_version 1 (the layout before
# axis names were stored) stay readable: analyze, recommend and report read the fixture
# tests/data/format1.h5, written by stormsweep 0.1.0 from tests/data/format1.ini
# (2 points x 4 replicates: budget_ratio 0.1 recovers, inf ends metastable),
# and give the figures that release gave; resume, refine and merge refuse
# to mix it with the current format.
#
# usage: bash tests/cli_format1.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=${1:?usage: cli_format1.sh STORMSWEEP_BIN SOURCE_DIR}
SRC=${2:?usage: cli_format1.sh STORMSWEEP_BIN SOURCE_DIR}
F1="$SRC/tests/data/format1.h5"
WORK=$(mktemp -d /tmp/stormsweep_cli_format1.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
failures=0
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
# has FILE NEEDLE: FILE contains NEEDLE (fixed string).
has() { grep -qF -- "$2" "$1" || { fail "$1 lacks '$2':"; head -c 2000 "$1" >&2; echo >&2; }; }

cp "$F1" "$WORK/f1.h5"
if "$BIN" analyze "$WORK/f1.h5" >"$WORK/a.txt" 2>&1; then
  has "$WORK/a.txt" "2 grid points, 8 finished runs; format_version 1"
else
  fail "analyze of a format 1 file exited $?:"; cat "$WORK/a.txt" >&2
fi
if "$BIN" analyze "$WORK/f1.h5" --json >"$WORK/a.json" 2>"$WORK/a.err"; then
  has "$WORK/a.json" '"format_version":1'
  # The release's figures: point 0 (budget 0.1) 4/4 recovered, p50 2691 ms;
  # point 1 (no budget) 4/4 metastable.
  has "$WORK/a.json" '"point":0,'
  has "$WORK/a.json" '"runs":4,"screening_runs":4,"fresh_runs":0,"recovered":4,"slow":0,"metastable":0'
  has "$WORK/a.json" '"recovery_p50_ms":2691'
  has "$WORK/a.json" '"runs":4,"screening_runs":4,"fresh_runs":0,"recovered":0,"slow":0,"metastable":4'
else
  fail "analyze --json of a format 1 file failed:"; cat "$WORK/a.err" >&2
fi
if "$BIN" recommend "$WORK/f1.h5" --max-metastable 1 --min-pass 0 >"$WORK/r.txt" 2>&1; then
  has "$WORK/r.txt" "RECOMMENDED: point 0: budget_ratio=0.1"
else
  fail "recommend of a format 1 file exited $?:"; cat "$WORK/r.txt" >&2
fi
if "$BIN" report "$WORK/f1.h5" -o "$WORK/rep" >"$WORK/p.txt" 2>&1; then
  [ -s "$WORK/rep/index.html" ] || fail "report of a format 1 file wrote no index.html"
  has "$WORK/rep/band_queue_depth_1.dat" ""
else
  fail "report of a format 1 file exited $?:"; cat "$WORK/p.txt" >&2
fi
# Writers refuse to mix the layouts, with a message that says so, and leave
# the file as it was: resume and refine (which continue the file) and merge
# (which would copy it into a format 2 file).
mix="format_version 1, but this stormsweep"
for cmd in "run $SRC/tests/data/format1.ini -o $WORK/f1.h5 --resume -q" "refine $WORK/f1.h5 -q" \
  "merge $WORK/f1.h5 $WORK/f1.h5 -o $WORK/merged.h5"; do
  # shellcheck disable=SC2086
  "$BIN" $cmd >"$WORK/mix.out" 2>&1
  status=$?
  [ "$status" -eq 2 ] || fail "'$cmd' on a format 1 file exited $status, want 2"
  has "$WORK/mix.out" "$mix"
  has "$WORK/mix.out" "do not mix the two layouts"
done
[ -e "$WORK/merged.h5" ] && fail "merge of a format 1 file left an output file"
# The fixture itself is untouched by reading it (and by the refusals).
cmp -s "$F1" "$WORK/f1.h5" || fail "reading changed the format 1 file"
[ "$failures" -eq 0 ] && echo "cli_format1: all passed" && exit 0
exit 1
