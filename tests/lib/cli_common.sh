# cli_common.sh — helpers shared by the shell tests of the CLI (sourced, not
# run: ctest registers only tests/cli_*.sh). A failed check is counted in
# $failures and reported; the script exits non-zero at its end.

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

expect_exit() {
  local want=$1
  shift
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "'$*' exited $got, want $want; stderr: $(head -c 600 "$T/err")"
  fi
}

expect_in() {
  if ! grep -qF -- "$2" "$1"; then
    fail "$(basename "$1") lacks '$2'; it holds: $(head -c 800 "$1")"
  fi
}

# is_sanitized BIN: true when BIN is built with ASan or TSan, whose shadow
# memory needs terabytes of address space: no `ulimit -v` can hold it.
is_sanitized() {
  ldd "$1" 2>/dev/null | grep -qE 'lib[at]san'
}

# The small sweep the refine tests share (4 shards, 2 s, a surge and a
# brownout, 10 replicates, seed 3): tiny_sweep NAME GRID_LINE... prints it,
# named NAME ("" = unnamed), with those [grid] lines.
tiny_sweep() {
  local name=$1
  shift
  printf '[sweep]\n'
  [ -z "$name" ] || printf 'name = %s\n' "$name"
  printf 'replicates = 10\nseed = 3\n\n[scenario]\nshards = 4\nhorizon_ms = 2000\n'
  printf 'surge = 800+300\nbrownout = 800+300\ndeadline_drop = on\nbackoff = full\n\n[grid]\n'
  printf '%s\n' "$@"
}
