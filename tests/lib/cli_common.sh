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
