#!/usr/bin/env bash
# cli_grammar.sh — one option grammar (every
# command): "--opt value", "--opt=value" and
# the underscore spelling "--opt_name" all work; an unknown option exits 2
# with "stormsweep CMD: ... unknown option". Usage: bash cli_grammar.sh BIN SRC
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_grammar.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
cat >tiny.ini <<'EOF'
[sweep]
replicates = 3
seed = 2
[scenario]
shards = 4
horizon_ms = 3000
surge = 800+300
brownout = 800+300
[grid]
budget_ratio = 0.1, inf
EOF
expect_exit 0 "$BIN" run tiny.ini -o f.h5 -q
for cmd in analyze recommend; do
  for form in "--slo-ms 2000" "--slo-ms=2000" "--slo_ms=2000" "--slo_ms 2000"; do
    # shellcheck disable=SC2086
    expect_exit 0 "$BIN" $cmd f.h5 $form --min-pass=0.5
    expect_in "$T/out" "2000 ms"
  done
  expect_exit 2 "$BIN" $cmd f.h5 --no-such-option
  expect_in "$T/err" "stormsweep $cmd: unknown option '--no-such-option'"
done
for form in "--max-runs 0" "--max-runs=0" "--max_runs=0"; do
  cp f.h5 r.h5
  # shellcheck disable=SC2086
  expect_exit 0 "$BIN" refine r.h5 $form --min_pass=0.5 --max-metastable 0.5 -q
done
expect_exit 2 "$BIN" refine f.h5 --no-such-option
expect_in "$T/err" "stormsweep refine: unknown option"
for form in "--max-runs 4" "--max-runs=4" "--max_runs=4"; do
  # shellcheck disable=SC2086
  expect_exit 1 "$BIN" verify tiny.ini --set budget_ratio=0.1 $form --min_pass=0.5 -q
  expect_in "$T/out" "REFUTED after"
done
expect_exit 2 "$BIN" verify tiny.ini --no-such-option
expect_in "$T/err" "stormsweep verify: unknown option '--no-such-option'"

# The other commands: "--opt=value" and the underscore spelling everywhere
# (main.c respells --some_opt as --some-opt before any command parses).
expect_exit 0 "$BIN" run tiny.ini --output=g.h5 --commit_interval=1 --threads=1 -q
expect_exit 0 "$BIN" run tiny.ini --slice=0/2 --output=s0.h5 -q
expect_exit 0 "$BIN" run tiny.ini --slice 1/2 --output s1.h5 -q
expect_exit 0 "$BIN" merge s0.h5 s1.h5 --output=m.h5
expect_exit 0 "$BIN" list tiny.ini --grid=budget_ratio=0.2,0.3
expect_in "$T/out" "0.3"
expect_exit 0 "$BIN" report g.h5 --output=rep
[ -f rep/index.html ] || fail "report --output=rep wrote no rep/index.html"
expect_exit 0 "$BIN" sim --seed=3 --set=horizon_ms=3000 --set=surge=none --set=brownout=none
expect_exit 0 "$BIN" boundary --axis=budget_ratio --range=0.1:1 --max_runs=40 --set=horizon_ms=3000
expect_exit 0 "$BIN" route --capacity_factor=1.25 --keys=1000
expect_exit 0 "$BIN" route --capacity-factor 1.25 --keys 1000
for cmd in run list merge report sim boundary route bench; do
  expect_exit 2 "$BIN" $cmd --no_such_option
  expect_in "$T/err" "stormsweep $cmd: "
  expect_in "$T/err" "no-such-option"
done
if [ "$failures" -gt 0 ]; then
  echo "cli_grammar: $failures failure(s)" >&2
  exit 1
fi
echo "cli_grammar: ok"
