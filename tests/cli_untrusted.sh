#!/usr/bin/env bash
# cli_untrusted.sh — result files and output places somebody else prepared
# (the output side). Every hostile file is made here from a tiny
# sweep (tests/lib/hostile_h5.py rewrites it with h5py) and every check is:
# the documented exit code, no marker file created, no victim file changed.
#  1, 2  a newline, quote or backtick in a /points_text label or a /points
#        column name never becomes a gnuplot command (report);
#  3     merge never writes through, nor removes, a file or link at
#        OUT.partial, also when it fails half-way;
#  4     report -o DIR never writes through symbolic links, refuses a DIR
#        others can write to or that holds other files, replaces an earlier
#        report whole, and on SIGTERM/SIGINT kills gnuplot and leaves the old
#        report as it was (exit 143/130);
#  12    CSV cells that a spreadsheet would run as formulas get a ' prefix;
#  13    --json is valid UTF-8 whatever bytes the labels and names hold;
#  14    no control character from the file reaches the terminal.
# A file the reader refuses (exit 2, one line) also passes: what matters is
# that nothing unsafe happens.
#
# usage: bash tests/cli_untrusted.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$(realpath "$1")
SRC=$(realpath "${2:-$(dirname "${BASH_SOURCE[0]}")/..}")
T=$(mktemp -d /tmp/cli_untrusted.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
umask 022
failures=0
PY=/usr/bin/python3
HOSTILE="$SRC/tests/lib/hostile_h5.py"
have_h5py=0
"$PY" -c 'import h5py' 2>/dev/null && have_h5py=1
have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

cat >tiny.ini <<'EOF'
[sweep]
replicates = 2
seed = 3
[scenario]
shards = 2
horizon_ms = 600
surge = 200+100
brownout = 200+100
[grid]
vnodes = 10, 50
budget_ratio = 0.1, inf
capacity_factor = 1.1, 2
EOF
expect_exit 0 "$BIN" run tiny.ini -o base.h5 -q

# hostile NAME OP AXIS TEXT: NAME.h5 = base.h5 rewritten by hostile_h5.py.
hostile() {
  cp base.h5 "$1.h5" && "$PY" "$HOSTILE" "$1.h5" "$2" "$3" "$4" ||
    fail "could not make the hostile file $1.h5"
}

# ok_or_refused COMMAND...: exit 0, or exit 2 with one stderr line (the
# reader may refuse such a file); output in $T/out and $T/err.
ok_or_refused() {
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" = 2 ]; then
    [ "$(wc -l <"$T/err")" -le 1 ] || fail "'$*' refused with more than one line: $(cat "$T/err")"
  elif [ "$got" != 0 ]; then
    fail "'$*' exited $got, want 0 (or 2 refused); stderr: $(head -c 600 "$T/err")"
  fi
  return "$got"
}

# no_markers: none of the commands a hostile file carried has run.
no_markers() {
  local m
  for m in "$T"/M*; do
    [ -e "$m" ] && fail "$1: a command from the file ran (created $(basename "$m"))"
  done
  rm -f "$T"/M*
}

# terminal_clean FILE WHAT: no C0 control but newline, no DEL, no C1 (as
# UTF-8 or as a raw byte).
terminal_clean() {
  if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$1" ||
    LC_ALL=C grep -qP '\xc2[\x80-\x9f]|\x9b' "$1"; then
    fail "$2: control characters reached the terminal: $(head -c 300 "$1" | od -c | head -5)"
  fi
}

# gp_clean DIR: plots.gp has no line that runs something.
gp_clean() {
  [ -f "$1/plots.gp" ] || return 0
  if grep -qE '^[[:space:]]*(!|system|`)' "$1/plots.gp" || grep -q '`' "$1/plots.gp"; then
    fail "$1/plots.gp holds a command from the file: $(grep -nE '^[[:space:]]*(!|system)|`' "$1/plots.gp" | head -3)"
  fi
}

if [ "$have_h5py" = 1 ] && [ "$have_gnuplot" = 1 ]; then
  # ---- 1: a newline in a label (in the curve titles; on the heat map's
  # axis it used to stop gnuplot before the command) ----
  hostile lab label vnodes "{}\\nsystem(\"touch $T/M1\")\\n!touch $T/M1b\\n#"
  if ok_or_refused "$BIN" report lab.h5 -o rep1 --x budget_ratio --y capacity_factor; then
    gp_clean rep1
  fi
  no_markers "report of a label with a newline"
  if ok_or_refused "$BIN" report lab.h5 -o rep1b --x vnodes; then gp_clean rep1b; fi
  no_markers "report of a label with a newline on the heat map"

  # ---- 2: a column name with newline, quote and backtick ----
  hostile col rename vnodes "v'\\nsystem(\"touch $T/M2\")\\n!touch $T/M2b\\n#\`touch $T/M2c\`'"
  if ok_or_refused "$BIN" report col.h5 -o rep2; then gp_clean rep2; fi
  no_markers "report of a column name with a newline"
  hostile quote rename vnodes "v' . system('touch $T/M3') . '\`touch $T/M3b\`"
  if ok_or_refused "$BIN" report quote.h5 -o rep3; then gp_clean rep3; fi
  no_markers "report of a column name with quotes and backticks"
fi

if [ "$have_h5py" = 1 ]; then
  # ---- 12: CSV formula injection ----
  hostile csv rename vnodes '=HYPERLINK("http://evil.example/","x")'
  "$PY" "$HOSTILE" csv.h5 label budget_ratio '@SUM(1+1)*cmd|{}\r-2+3'
  if ok_or_refused "$BIN" analyze csv.h5 --csv out.csv; then
    "$PY" - out.csv <<'EOF' || fail "analyze --csv wrote a cell a spreadsheet runs as a formula"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 9, "expected 9 rows, got %d: %r" % (len(rows), rows)
for row in rows:
    for cell in row:
        if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
            try:
                float(cell)
            except ValueError:
                sys.exit("formula cell: %r" % cell)
EOF
  fi

  # ---- 13: invalid JSON ----
  hostile json label vnodes '{}\xff\xfe\xc3'
  "$PY" "$HOSTILE" json.h5 label budget_ratio "$(printf 'é%.0s' {1..40})"
  "$PY" "$HOSTILE" json.h5 rename vnodes 'v\xe2\x82'
  if ok_or_refused "$BIN" analyze json.h5 --json; then
    "$PY" - "$T/out" <<'EOF' || fail "analyze --json printed invalid JSON (or invalid UTF-8)"
import json, sys
json.loads(open(sys.argv[1], "rb").read().decode("utf-8", errors="strict"))
EOF
  fi

  # ---- 14: terminal escapes ----
  hostile term label budget_ratio '{}\x1b[2K\rRECOMMENDED: point 0\x1b]0;owned\x07\xc2\x9b31m\x9b'
  "$PY" "$HOSTILE" term.h5 rename vnodes 'vn\x1b[8m\r\n'
  for cmd in analyze recommend; do
    ok_or_refused "$BIN" "$cmd" term.h5
    terminal_clean "$T/out" "$cmd stdout"
    terminal_clean "$T/err" "$cmd stderr"
  done
  "$BIN" report term.h5 -o rep14 --x nosuchaxis >"$T/out" 2>"$T/err"
  terminal_clean "$T/err" "report --x error listing the axes"
fi

# ---- 3: merge and OUT.partial ----
expect_exit 0 "$BIN" run tiny.ini --slice 0/2 -o p0.h5 -q
expect_exit 0 "$BIN" run tiny.ini --slice 1/2 -o p1.h5 -q
echo precious >victim.txt
ln -s victim.txt merged.h5.partial
expect_exit 0 "$BIN" merge p0.h5 p1.h5 -o merged.h5 -q
[ "$(cat victim.txt)" = precious ] || fail "merge wrote through the symlink merged.h5.partial"
[ -L merged.h5.partial ] || fail "merge removed the user's merged.h5.partial link"
expect_exit 0 "$BIN" analyze merged.h5
echo mine >kept.h5.partial
expect_exit 0 "$BIN" merge p0.h5 p1.h5 -o kept.h5 -q
[ "$(cat kept.h5.partial)" = mine ] || fail "merge overwrote or removed the user's kept.h5.partial"
expect_exit 2 "$BIN" merge p0.h5 -o failed.h5 -q # a slice is missing
echo mine >failed.h5.partial
expect_exit 2 "$BIN" merge p0.h5 -o failed.h5 -q
[ "$(cat failed.h5.partial 2>/dev/null)" = mine ] || fail "a failed merge removed failed.h5.partial"
# A merge failing half-way (file-size limit) removes only its own file.
echo mine >full.h5.partial
(
  trap '' XFSZ
  ulimit -f 100
  exec "$BIN" merge p0.h5 p1.h5 -o full.h5 -q --no-space-check
) >"$T/out" 2>"$T/err"
got=$?
[ "$got" = 1 ] || fail "merge over a file-size limit exited $got, want 1: $(cat "$T/err")"
[ "$(cat full.h5.partial 2>/dev/null)" = mine ] || fail "a failed merge removed full.h5.partial"
[ -e full.h5 ] && fail "a failed merge left full.h5"
leftover=$(ls -A | grep -E '\.partial-' || true)
[ -z "$leftover" ] || fail "merge left temporary files: $leftover"

# ---- 4: report -o DIR ----
if [ "$have_gnuplot" = 1 ]; then
  # Links planted in an existing directory.
  mkdir planted
  for f in index.html plots.gp gnuplot.log heatmap_bad.png; do
    echo "victim $f" >"victim_$f"
    ln -s "$T/victim_$f" "planted/$f"
  done
  expect_exit 1 "$BIN" report base.h5 -o planted
  expect_in "$T/err" "refusing"
  for f in index.html plots.gp gnuplot.log heatmap_bad.png; do
    [ "$(cat "victim_$f")" = "victim $f" ] || fail "report wrote through the link planted/$f"
  done
  # DIR itself a link, a directory others can write to, one holding other work.
  mkdir elsewhere
  ln -s elsewhere linked
  expect_exit 1 "$BIN" report base.h5 -o linked
  expect_in "$T/err" "symbolic link"
  [ -z "$(ls -A elsewhere)" ] || fail "report wrote through the link DIR"
  mkdir -m 0777 shared
  expect_exit 1 "$BIN" report base.h5 -o shared
  expect_in "$T/err" "others can write"
  [ -z "$(ls -A shared)" ] || fail "report wrote into a directory others can write to"
  if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir theirs
    chown nobody theirs
    expect_exit 1 "$BIN" report base.h5 -o theirs
    expect_in "$T/err" "belongs to another user"
    [ -z "$(ls -A theirs)" ] || fail "report wrote into another user's directory"
  fi
  mkdir work
  echo notes >work/notes.txt
  expect_exit 1 "$BIN" report base.h5 -o work/
  [ "$(ls -A work)" = notes.txt ] && [ "$(cat work/notes.txt)" = notes ] ||
    fail "report changed a directory that is not a report"
  # A fresh report, then replacing it.
  expect_exit 0 "$BIN" report base.h5 -o rep
  expect_in "$T/out" "Wrote rep/index.html"
  [ -s rep/index.html ] && [ -s rep/heatmap_bad.png ] || fail "report wrote no report"
  [ "$(stat -c %a rep)" = 755 ] || fail "report directory has mode $(stat -c %a rep), want 755"
  expect_exit 0 "$BIN" report base.h5 -o rep --points 1
  [ -s rep/band_queue_depth_1.dat ] || fail "the second report did not replace the first"
  [ -e rep/band_queue_depth_0.dat ] && fail "the replaced report kept files of the first"
  leftover=$(ls -A | grep -E '^\.rep\.' || true)
  [ -z "$leftover" ] || fail "report left temporary directories: $leftover"

  # Interrupted while gnuplot runs: gnuplot killed, the old report whole.
  mkdir fakebin
  cat >fakebin/gnuplot <<EOF
#!/bin/sh
echo \$\$ >"$T/gnuplot.pid"
exec sleep 60
EOF
  chmod +x fakebin/gnuplot
  snapshot() { (cd rep && find . -type f -exec md5sum {} + | sort); }
  before=$(snapshot)
  for sig in TERM INT; do
    rm -f gnuplot.pid
    PATH="$T/fakebin:$PATH" "$BIN" report base.h5 -o rep --points 2 >"$T/out" 2>"$T/err" &
    pid=$!
    for _ in $(seq 400); do
      [ -s gnuplot.pid ] && break
      sleep 0.05
    done
    [ -s gnuplot.pid ] || fail "the fake gnuplot never started"
    kill -"$sig" "$pid"
    wait "$pid"
    got=$?
    want=$([ "$sig" = TERM ] && echo 143 || echo 130)
    [ "$got" = "$want" ] || fail "report on SIG$sig exited $got, want $want"
    gp=$(cat gnuplot.pid 2>/dev/null)
    if [ -n "$gp" ] && kill -0 "$gp" 2>/dev/null; then
      fail "report on SIG$sig left gnuplot running"
      kill "$gp"
    fi
    [ "$(snapshot)" = "$before" ] || fail "report on SIG$sig changed the old report"
    leftover=$(ls -A | grep -E '^\.rep\.' || true)
    [ -z "$leftover" ] || fail "report on SIG$sig left temporary directories: $leftover"
  done
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_untrusted: all checks passed"
