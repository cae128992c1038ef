#!/usr/bin/env bash
# cli_hostile.sh — bad input through the CLI:
#  * bad sweep files and --set/--grid values given to `run` and `list` exit
#    2 with exactly one stderr line naming the file, line and key, and `run`
#    creates no output file (nothing at all appears in its directory);
#  * files that are not result files — text, empty, /dev/null, a directory,
#    a missing path, a FIFO, a truncated result — given to `analyze`,
#    `recommend` and `report` exit 2 with one line and no crash.
# test_validation.c and test_hostile.c check the same messages (and many
# more cases) through the libraries.
#
# usage: bash tests/cli_hostile.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=${1:?usage: cli_hostile.sh STORMSWEEP_BIN SOURCE_DIR}
WORK=$(mktemp -d /tmp/stormsweep_cli_hostile.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
failures=0
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"

# refuse WANT_STDERR -- COMMAND...: exit status 2, stderr exactly WANT_STDERR
# (one line), stdout empty.
refuse() {
  local want=$1
  shift 2
  local out err status
  out=$("$@" 2>"$WORK/stderr")
  status=$?
  err=$(cat "$WORK/stderr")
  if [ "$status" -ne 2 ]; then
    fail "'$*' exited $status, expected 2; stderr: $err"
  elif [ "$err" != "$want" ]; then
    fail "'$*' stderr:"$'\n'"  got      '$err'"$'\n'"  expected '$want'"
  elif [ -n "$out" ]; then
    fail "'$*' printed to stdout: $out"
  fi
}

# run_refuses SWEEP_FILE WANT_MESSAGE [OVERRIDES...]: `run` and `list` both
# refuse with "stormsweep CMD: WANT_MESSAGE", and `run` leaves no file.
run_refuses() {
  local sweep=$1 msg=$2
  shift 2
  local out="$WORK/out/results.h5"
  rm -rf "$WORK/out"
  mkdir -p "$WORK/out"
  refuse "stormsweep run: $msg" -- "$BIN" run "$sweep" -o "$out" -q "$@"
  if [ -n "$(ls -A "$WORK/out")" ]; then
    fail "run $sweep $* left files behind: $(ls -A "$WORK/out")"
  fi
  refuse "stormsweep list: $msg" -- "$BIN" list "$sweep" "$@"
}

sweep() { # sweep NAME TEXT: writes $WORK/NAME.ini
  printf '%b' "$2" >"$WORK/$1.ini"
}

# ---- bad sweep files ----
sweep unknown_key '[sweep]\nreplicates = 2\n[scenario]\nload = 0.5\nvnode = 10\n'
run_refuses "$WORK/unknown_key.ini" \
  "$WORK/unknown_key.ini:5: unknown setting 'vnode' in [scenario] (did you mean 'vnodes'?)"
sweep unknown_section '[scenarios]\nload = 0.5\n'
run_refuses "$WORK/unknown_section.ini" \
  "$WORK/unknown_section.ini:1: unknown section [scenarios] (did you mean [scenario]?)"
sweep malformed '[grid]\nvnodes = 10, 5o\n'
run_refuses "$WORK/malformed.ini" "$WORK/malformed.ini:2: vnodes: expected a whole number, got '5o'"
sweep c_below_one '[grid]\ncapacity_factor = 1.25, 0.9\n'
run_refuses "$WORK/c_below_one.ini" \
  "$WORK/c_below_one.ini:2: capacity_factor: must be >= 1 or inf, got 0.9"
sweep negative_rate '[scenario]\nrate_rps = -100\n'
run_refuses "$WORK/negative_rate.ini" \
  "$WORK/negative_rate.ini:2: rate_rps: must be between 0 and 1e+12, got -100"
sweep window '[scenario]\nload = 0.5\nhorizon_ms = 2200\n'
run_refuses "$WORK/window.ini" \
  "$WORK/window.ini:3: surge: window 2000+500 ends after the horizon (horizon_ms = 2200)"
sweep memory '[scenario]\nrecord_shard_queues = on\nshards = 4096\nhorizon_ms = 1e8\nsurge = none\nbrownout = none\n'
out=$("$BIN" run "$WORK/memory.ini" -o "$WORK/mem.h5" -q 2>&1)
status=$?
[ "$status" -eq 2 ] || fail "run memory.ini exited $status, expected 2: $out"
case "$out" in
  "stormsweep run: $WORK/memory.ini:2: record_shard_queues: one run needs about 1534.9 GB ("*"of memory; turn record_shard_queues off or shorten horizon_ms") ;;
  *) fail "run memory.ini: unexpected message '$out'" ;;
esac
[ -e "$WORK/mem.h5" ] && fail "run memory.ini created its output file"
sweep too_many '[sweep]\nreplicates = 1000000000\n[grid]\nvnodes = 10, 20\n'
run_refuses "$WORK/too_many.ini" \
  "$WORK/too_many.ini: 2 points x 1000000000 replicates is more than 1000000000 runs"
sweep empty_axis '[grid]\nvnodes =\n'
run_refuses "$WORK/empty_axis.ini" "$WORK/empty_axis.ini:2: vnodes: empty axis (give at least one value)"
sweep dup_axis '[grid]\nvnodes = 10\nload = 0.5, 0.6\nvnodes = 20\n'
run_refuses "$WORK/dup_axis.ini" "$WORK/dup_axis.ini:4: duplicate axis 'vnodes' (first at line 2)"
printf '[sweep]\nname = a\0b\n' >"$WORK/nul.ini"
run_refuses "$WORK/nul.ini" "$WORK/nul.ini: contains NUL bytes; not a sweep file"
run_refuses "$WORK/missing.ini" "$WORK/missing.ini: cannot open: No such file or directory"

# ---- bad overrides (on the built-in seed study and on a file) ----
sweep ok '[sweep]\nreplicates = 2\n[grid]\nvnodes = 10, 50\n'
run_refuses "$WORK/ok.ini" "--set: unknown setting 'capacity_factr' (did you mean 'capacity_factor'?)" \
  --set capacity_factr=2
run_refuses "$WORK/ok.ini" "--set vnodes=0: vnodes: must be between 1 and 65536, got 0" --set vnodes=0
run_refuses "$WORK/ok.ini" "--grid vnodes=10,,20: empty value in the list '10,,20'" --grid vnodes=10,,20
run_refuses "$WORK/ok.ini" \
  "--set horizon_ms=1000: grid point 0 (vnodes=10): surge: window 2000+500 ends after the horizon (horizon_ms = 1000)" \
  --set horizon_ms=1000
mkdir -p "$WORK/out"
refuse "stormsweep run: --grid capacity_factor=0.5,1: capacity_factor: must be >= 1 or inf, got 0.5" -- \
  "$BIN" run -o "$WORK/out/seed.h5" -q --grid capacity_factor=0.5,1
[ -e "$WORK/out/seed.h5" ] && fail "run with a bad --grid created its output file"

# ---- files that are not result files ----
printf 'point,vnodes\n0,10\n' >"$WORK/table.h5"
: >"$WORK/empty.h5"
mkfifo "$WORK/fifo.h5"
for cmd in analyze recommend report; do
  extra=()
  [ "$cmd" = report ] && extra=(-o "$WORK/report")
  refuse "stormsweep $cmd: $WORK/table.h5: not an HDF5 file (expected a stormsweep result file)" -- \
    "$BIN" "$cmd" "$WORK/table.h5" "${extra[@]}"
  refuse "stormsweep $cmd: $WORK/empty.h5: not an HDF5 file (expected a stormsweep result file)" -- \
    "$BIN" "$cmd" "$WORK/empty.h5" "${extra[@]}"
  refuse "stormsweep $cmd: /dev/null: not a regular file (expected a stormsweep result file)" -- \
    "$BIN" "$cmd" /dev/null "${extra[@]}"
  refuse "stormsweep $cmd: $WORK: is a directory, not a stormsweep result file" -- \
    "$BIN" "$cmd" "$WORK" "${extra[@]}"
  refuse "stormsweep $cmd: $WORK/nope.h5: cannot open: No such file or directory" -- \
    "$BIN" "$cmd" "$WORK/nope.h5" "${extra[@]}"
  # A FIFO must not block: give it 10 s at most.
  refuse "stormsweep $cmd: $WORK/fifo.h5: not a regular file (expected a stormsweep result file)" -- \
    timeout 10 "$BIN" "$cmd" "$WORK/fifo.h5" "${extra[@]}"
done

# ---- a truncated result file ----
if "$BIN" run "$WORK/ok.ini" -o "$WORK/res.h5" -q --set horizon_ms=3000 >"$WORK/run.log" 2>&1; then
  head -c 5000 "$WORK/res.h5" >"$WORK/trunc.h5"
  for cmd in analyze recommend report; do
    extra=()
    [ "$cmd" = report ] && extra=(-o "$WORK/report")
    out=$("$BIN" "$cmd" "$WORK/trunc.h5" "${extra[@]}" 2>&1 >/dev/null)
    status=$?
    [ "$status" -eq 2 ] || fail "$cmd trunc.h5 exited $status, expected 2: $out"
    case "$out" in
      "stormsweep $cmd: $WORK/trunc.h5: cannot open HDF5 file: truncated or damaged? (HDF5: truncated file: eof = 5000,"*")") ;;
      *) fail "$cmd trunc.h5: unexpected message '$out'" ;;
    esac
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "$cmd trunc.h5 printed more than one line"
  done
  [ -e "$WORK/report" ] && fail "report of a bad file created its output directory"
  # analyze --write must not touch a file it cannot read
  before=$(cksum <"$WORK/trunc.h5")
  "$BIN" analyze "$WORK/trunc.h5" --write >/dev/null 2>&1
  [ "$(cksum <"$WORK/trunc.h5")" = "$before" ] || fail "analyze --write modified a truncated file"
else
  fail "could not run a tiny sweep: $(cat "$WORK/run.log")"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_hostile: all checks passed"
