#!/usr/bin/env bash
# cli_export.sh — `stormsweep export --prometheus`: a run of a result file
# exported and read back as service = empirical (its mean survives); -o is
# never written over without --force; a bad file, a run the file does not
# hold, bad options and a run that no longer reproduces (the histogram file
# it names was changed) are refused with exit status 2.
# Usage: bash cli_export.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=$1
T=$(mktemp -d /tmp/cli_export.XXXXXX)
trap 'rm -rf "$T"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_rc() { # WANT WHAT CMD...
  local want=$1 what=$2
  shift 2
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ "$rc" = "$want" ] || fail "$what: exit $rc, expected $want ($(head -c 300 "$T/err"))"
}
cat >"$T/s.ini" <<INI
[scenario]
shards = 1
workers = 64
service = exponential
service_mean_ms = 2
load = 0.05
tick_ms = 0.02
surge = none
brownout = none
max_retries = 0
timeout_ms = 1e4
queue_capacity = inf
horizon_ms = 20000
warmup_ms = 500
baseline_ms = 20000
[grid]
policy = naive, guarded
[sweep]
replicates = 1
INI
expect_rc 0 "run" "$BIN" run "$T/s.ini" -o "$T/r.h5" -q
expect_rc 0 "export run 1" "$BIN" export --prometheus "$T/r.h5" 1 -o "$T/e.prom"
grep -q '^# TYPE stormsweep_request_duration_seconds histogram$' "$T/e.prom" || fail "no TYPE line"
grep -q 'policy="guarded"' "$T/e.prom" || fail "run 1 is not labelled policy guarded"
grep -q 'le="+Inf"' "$T/e.prom" || fail "no +Inf bucket"
# read back: the mean of the histogram is the service mean (2 ms) within 2%
"$BIN" sim --set service=empirical --set service_histogram="$T/e.prom" --show-settings 2>/dev/null \
  | awk '$1 == "service_mean_ms" { m = $3 } END { if (!(m > 1.96 && m < 2.04)) exit 1 }' \
  || fail "the exported histogram's mean is not 2 ms"
expect_rc 1 "-o over an existing file" "$BIN" export --prometheus "$T/r.h5" 1 -o "$T/e.prom"
expect_rc 0 "-o --force" "$BIN" export --prometheus "$T/r.h5" 1 -o "$T/e.prom" --force
expect_rc 0 "--buckets engine" "$BIN" export --prometheus "$T/r.h5" 0 --buckets engine
expect_rc 0 "--buckets list" "$BIN" export --prometheus "$T/r.h5" 0 --buckets 0.001,0.01,0.1
[ "$(grep -c _bucket "$T/out")" = 4 ] || fail "--buckets of 3 bounds: not 4 bucket lines"
expect_rc 2 "no such run" "$BIN" export --prometheus "$T/r.h5" 7
grep -q "no run 7" "$T/err" || fail "no such run: message"
expect_rc 2 "not a result file" "$BIN" export --prometheus "$T/s.ini" 0
expect_rc 2 "no format" "$BIN" export "$T/r.h5" 0
expect_rc 2 "bad phase" "$BIN" export --prometheus "$T/r.h5" 0 --phase later
expect_rc 2 "bad buckets" "$BIN" export --prometheus "$T/r.h5" 0 --buckets 0.1,0.01
expect_rc 2 "bad metric" "$BIN" export --prometheus "$T/r.h5" 0 --metric 'a b'
# a run from a histogram file that changed since does not reproduce
cp "$T/e.prom" "$T/h.prom"
sed -e 's|^service = exponential|service = empirical\nservice_histogram = '"$T"'/h.prom|' \
  -e 's|^policy = naive, guarded|policy = naive|' "$T/s.ini" >"$T/h.ini"
expect_rc 0 "run from a histogram" "$BIN" run "$T/h.ini" -o "$T/h.h5" -q
expect_rc 0 "export it" "$BIN" export --prometheus "$T/h.h5" 0
"$BIN" export --prometheus "$T/r.h5" 0 -o "$T/h.prom" --force 2>/dev/null # other counts
expect_rc 2 "changed histogram" "$BIN" export --prometheus "$T/h.h5" 0
grep -q "a telemetry file its sweep reads changed since" "$T/err" || fail "changed histogram: message"
[ "$failures" = 0 ] && echo "cli_export: all passed"
exit $((failures > 0))
