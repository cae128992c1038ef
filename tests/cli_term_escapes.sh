#!/usr/bin/env bash
# cli_term_escapes.sh — no control character that a sweep file, a scenario,
# a client config, a result file or a command line chose reaches the
# terminal, from any command: values, keys and
# section names in error messages, [sweep] name and description in list
# and in the result file's readers, paths, option values. Every byte the
# tool writes goes through one escaper (cli/termout.c), so each case
# checks stdout and stderr whole: no ESC, BEL, CR, DEL, other C0 (newlines
# aside), C1 (raw or as UTF-8) or bidi override; and UTF-8 text passes.
#
# usage: bash tests/cli_term_escapes.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$(realpath "$1")
T=$(mktemp -d /tmp/cli_term_escapes.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# clean FILE WHAT: FILE is valid UTF-8 (a stray byte such as 0x9b is a C1
# CSI to some terminals) holding no control character but newlines.
clean() {
  /usr/bin/python3 - "$1" <<'EOF' ||
import re, sys
try:
    text = open(sys.argv[1], "rb").read().decode("utf-8", errors="strict")
except UnicodeDecodeError:
    sys.exit(1)
bad = re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)
sys.exit(1 if bad else 0)
EOF
    fail "$2: control characters reached the terminal: $(head -c 300 "$1" | od -c | head -6)"
}

# check WHAT COMMAND...: runs it; both streams clean, and it said something.
check() {
  local what=$1
  shift
  "$@" >"$T/out" 2>"$T/err" </dev/null
  clean "$T/out" "$what (stdout)"
  clean "$T/err" "$what (stderr)"
  [ -s "$T/out" ] || [ -s "$T/err" ] || fail "$what: printed nothing"
}

E=$'\x1b'
# The reproduction's files (esc/*.ini, fake_verdict.ini): an OSC title and
# a screen clear, SGR colours, a line erase that draws a fake verdict.
printf '[sweep]\nname = x\nreplicates = 2\n\n[scenario]\nservice = %s]0;PWNED\a%s[2Jexp\n' \
  "$E" "$E" >e1.ini
printf '[sweep]\nname = x\nreplicates = 2\n\n[scenario]\ntimeout_ms = %s[31mRED%s[0m\n' \
  "$E" "$E" >e2.ini
printf '[sweep]\nname = x\nreplicates = 2\n\n[scenario]\n%s[31mbogus%s[0m = 5\n' "$E" "$E" >e3.ini
printf '[sweep]\nname = x\nreplicates = 2\n\n[scenario]\nsurge = 1+%s[2J\n' "$E" >e4.ini
printf '[sweep]\nname = x\nreplicates = 2\n\n[grid]\nbudget_ratio = 0.1, %s[2Jx\n' "$E" >e5.ini
printf '[%s[2Jsec]\nx=1\n' "$E" >e7.ini
printf '[scenario]\nservice = %s[1G%s[2Kstormsweep verify: PROVEN after 332 runs%s[8m\n' \
  "$E" "$E" "$E" >fake_verdict.ini
# A valid sweep whose name and description carry escapes (and UTF-8, which
# must pass), small enough to run.
printf '[sweep]\nname = %s[2Jx \xc3\xa9t\xc3\xa9\n' "$E" >named.ini
printf 'description = d%s]0;T\a\xc2\x9b1m\xe2\x80\xaeZ\n' "$E" >>named.ini
printf 'replicates = 2\nseed = 3\n\n[scenario]\nshards = 2\nhorizon_ms = 600\n' >>named.ini
printf 'surge = 200+100\nbrownout = 200+100\n\n[grid]\nbudget_ratio = 0.1, inf\n' >>named.ini
# Client configs with an escape in a key and in a value (YAML), and one
# decoded from a JSON \u escape.
printf 'retry_policy:\n  num_retries: 2\n  "r%s[2Jx": 1\n' "$E" >key.yaml
printf 'retry_policy:\n  retry_on: "5xx,%s[2Jx"\n  num_retries: 2\n' "$E" >value.yaml
printf '{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 3, "x\\u001b[2J": 1}}]}\n' \
  >key.json

for f in e1 e2 e3 e4 e5 e7; do
  check "list $f.ini" "$BIN" list $f.ini
  check "run $f.ini" "$BIN" run $f.ini -o $f.h5 -q
done
check "verify fake_verdict.ini" "$BIN" verify fake_verdict.ini
check "verify e3.ini" "$BIN" verify e3.ini
check "sim fake_verdict.ini" "$BIN" sim fake_verdict.ini
check "sim --set" "$BIN" sim --set "service=${E}[2Jx"
check "boundary e1.ini" "$BIN" boundary e1.ini --range load=0.5:1
check "boundary --set" "$BIN" boundary --range load=0.5:1 --set "tick_ms=${E}[2J"
check "refine --min-pass" "$BIN" refine x.h5 --min-pass "${E}[2J"
check "route --keys" "$BIN" route --keys "1${E}[2J"
check "bench --set" "$BIN" bench --set "x${E}[2J"
check "bench --compare" "$BIN" bench --compare "./old${E}]0;T${E}\\"
check "merge of a missing part" "$BIN" merge "p${E}[2J.h5" -o m.h5
check "analyze of a missing file" "$BIN" analyze "a${E}[2J.h5"
check "unknown command" "$BIN" "cmd${E}[2J"
check "unknown option" "$BIN" run "--thread${E}[2J=2"
for c in key.yaml value.yaml key.json; do
  check "sim --client $c" "$BIN" sim --client $c
  check "run --client $c" "$BIN" run --client $c -o c.h5 -q
  check "verify --client $c" "$BIN" verify --client $c
done

# The valid sweep: list, then a result file holding the name and the
# description, read by every command that reads one.
check "list named.ini" "$BIN" list named.ini
expect_in "$T/out" "$(printf '\xc3\xa9t\xc3\xa9')" # UTF-8 passes as it is
expect_in "$T/out" '\x1b[2Jx'
check "list --print-ini named.ini" "$BIN" list --print-ini named.ini
expect_exit 0 "$BIN" run named.ini -o named.h5 -q
clean "$T/err" "run named.ini (stderr)"
check "run named.ini again" "$BIN" run named.ini -o named.h5
for cmd in analyze recommend; do check "$cmd named.h5" "$BIN" $cmd named.h5; done
check "report --x" "$BIN" report named.h5 -o rep --x "no${E}[2J"
check "refine named.h5" "$BIN" refine named.h5 --max-runs 8 -j 1
expect_exit 0 "$BIN" run named.ini --slice 0/2 -o "s0.h5" -q
check "merge of one slice" "$BIN" merge s0.h5 -o m.h5

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all terminal-escape checks passed"
