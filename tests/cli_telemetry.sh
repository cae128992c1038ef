#!/usr/bin/env bash
# cli_telemetry.sh — service = empirical and rate_profile from the command
# line: every broken or hostile telemetry file of tests/telemetry/bad/ (its
# EXPECT lists each with what must be said) is refused with
# "FILE:LINE: what is wrong" and exit status 2, within 10 s and 1 GiB of
# address space each; files beyond the caps (64 MiB, 10,000 series) are
# made here and refused the same way; the good files of tests/telemetry/good/
# are accepted and run, and a rate profile's arrivals follow it.
# Usage: bash cli_telemetry.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
SRC=$2
T=$(mktemp -d /tmp/cli_telemetry.XXXXXX)
trap 'rm -rf "$T"' EXIT
failures=0
quick=(--set horizon_ms=200 --set warmup_ms=50 --set baseline_ms=100 --set surge=none
  --set brownout=none)

# The memory cap: 1 GiB of address space, but none under a sanitizer
# (its shadow memory needs terabytes; the Release build checks the cap).
vmem=1048576
if is_sanitized "$BIN"; then vmem=unlimited; fi

# bounded FILE KEY [SET...]: sim with KEY=FILE under the time and memory caps
bounded() {
  local file=$1 key=$2
  shift 2
  local extra=("$@")
  timeout 10 bash -c 'ulimit -v "$0"; exec "$@"' "$vmem" "$BIN" sim "${quick[@]}" \
    --set service=empirical "${extra[@]}" --set "$key=$file" >"$T/out" 2>"$T/err"
}

# refused FILE KEY FRAGMENT [SET...]: exit 2 and "FILE:LINE: ... FRAGMENT"
refused() {
  local file=$1 key=$2 frag=$3
  shift 3
  local extra=()
  [ "$key" = rate_profile ] && extra=(--set service=exponential)
  bounded "$file" "$key" "${extra[@]}" "$@"
  local rc=$?
  if [ "$rc" != 2 ]; then
    fail "$file: exit $rc, want 2; stderr: $(head -c 400 "$T/err")"
    return
  fi
  if [ "${frag:0:1}" = ":" ]; then
    grep -qF -- "$file$frag" "$T/err" ||
      fail "$file: want '$file$frag'; got: $(head -c 400 "$T/err")"
  elif [ "$frag" != "-" ]; then
    local msg
    msg=$(cat "$T/err")
    [[ "$msg" == *"$file:"[0-9]*": "*"$frag"* ]] ||
      fail "$file: want '$file:LINE: ...$frag'; got: $(head -c 400 "$T/err")"
  fi
}

cd "$SRC/tests/telemetry" || exit 1
n=0
while IFS=$'\t' read -r file frag; do
  case "$file" in '#'* | '') continue ;; esac
  key=service_histogram
  case "$file" in bad/rate/*) key=rate_profile ;; esac
  extra=()
  case "$file" in *no-match*) extra=(--set 'rate_profile_series=job="web"') ;; esac
  refused "$file" "$key" "$frag" "${extra[@]}"
  n=$((n + 1))
done <bad/EXPECT
[ "$n" -ge 100 ] || fail "only $n hostile files in bad/EXPECT"

# ---- beyond the caps, made here ----
cd "$T" || exit 1
head -c $((64 * 1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >huge.prom
refused huge.prom service_histogram - # no line: the whole file is too large
grep -qF "huge.prom: larger than 64 MiB" "$T/err" || fail "huge.prom: $(cat "$T/err")"
awk 'BEGIN { for (i = 0; i <= 10000; i++)
  printf "x_seconds_bucket{i=\"%d\",le=\"+Inf\"} 1\n", i }' >series.prom
refused series.prom service_histogram ":10001: more than 10000 histogram series"
awk 'BEGIN { print "latency_ms"; for (i = 0; i <= 1000000; i++) print i % 97 }' >many.csv
refused many.csv service_histogram ":1000002: more than 1000000 latencies"

# ---- the good files ----
G=$SRC/tests/telemetry/good
for f in scrape.prom otel-histogram.json otel-exponential.json latencies.csv buckets.csv; do
  sel=()
  [ "$f" = scrape.prom ] && sel=(--set 'service_histogram_series=handler="/get"')
  bounded "$G/$f" service_histogram "${sel[@]}"
  rc=$?
  [ "$rc" = 0 ] || fail "$f: exit $rc; $(head -c 400 "$T/err")"
done
# one series of several must be chosen, and is named in the message
expect_exit 2 "$BIN" sim "${quick[@]}" --set service=empirical \
  --set "service_histogram=$G/scrape.prom"
expect_in "$T/err" "holds several histogram series: choose one with service_histogram_series"
expect_exit 2 "$BIN" sim "${quick[@]}" --set service=empirical \
  --set 'service_histogram_series=handler="/nope"' --set "service_histogram=$G/scrape.prom"
expect_in "$T/err" "scrape.prom:3: no histogram series matches service_histogram_series"
expect_exit 2 "$BIN" sim "${quick[@]}" --set service=empirical
expect_in "$T/err" "service = empirical needs service_histogram = FILE"
# the order of the two settings does not matter
expect_exit 0 "$BIN" sim "${quick[@]}" --set service=empirical \
  --set "service_histogram=$G/scrape.prom" --set 'service_histogram_series=handler="/get"' \
  --show-settings
expect_in "$T/out" "service_mean_ms          = 3 "
# did you mean, and --list-settings
expect_exit 2 "$BIN" sim --set service_histgram=x.prom
expect_in "$T/err" "did you mean 'service_histogram'?"
expect_exit 0 "$BIN" sim --list-settings
expect_in "$T/out" "rate_profile"
expect_in "$T/out" "service_histogram_series"

# a rate profile drives the arrivals: 1000/s, 3000/s from 90 s to 180 s
for f in rate.csv rate-range.json; do
  expect_exit 0 "$BIN" sim --set "rate_profile=$G/$f" --set horizon_ms=300000 --set tick_ms=10 \
    --set surge=none --set brownout=none --set warmup_ms=1000 --set baseline_ms=10000 --json
  got=$(grep -o '"new_requests": *[0-9]*' "$T/out" | grep -o '[0-9]*$')
  # the area under the profile: 60 x 1000 + 30 x 2000 + 90 x 3000 + 30 x 2000 + 90 x 1000
  want=540000
  [ -n "$got" ] && [ $((got > want * 99 / 100 && got < want * 101 / 100)) = 1 ] ||
    fail "$f: $got new requests, want about $want"
done
expect_exit 2 "$BIN" sim --set "rate_profile=$G/rate.csv" --set client_model=closed
expect_in "$T/err" "rate_profile: a measured rate drives the open model only"

# A text setting as a grid axis (a series selector; a file name alike) and
# a windows axis whose values share their start: each value is its own
# level. Their settings' numbers (NaN; the start) do not tell the values
# apart, so the file numbers them by index (numbers_are_indexes) and the
# labels still show the values.
# (the example names its files from the source directory)
(cd "$SRC" && "$BIN" run examples/telemetry/incident.ini -q -o "$T/axes.h5" \
  --grid 'service_histogram_series=handler="/get",handler="/health"' \
  --grid 'surge=70000+100000,70000+120000' --set replicates=1 --set horizon_ms=260000) ||
  fail "run over a text and a windows axis"
expect_exit 0 "$BIN" analyze "$T/axes.h5"
for want in 'handler="/get" runs      2' 'handler="/health" runs      2' \
  '70000+100000   runs      2' '70000+120000   runs      2'; do
  expect_in "$T/out" "$want"
done
/usr/bin/python3 - "$T/axes.h5" <<'PY' || fail "text and windows axes: /axes numbers are not the indexes"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    for k in ("service_histogram_series", "surge"):
        a = f["axes"][k]
        assert list(a.attrs["numbers"]) == [0.0, 1.0], (k, a.attrs["numbers"])
        assert a.attrs["numbers_are_indexes"] == 1, k
    assert sorted(set(f["points"]["surge"])) == [0.0, 1.0]
PY

# The files' content is part of the sweep (telemetry_digests in its text):
# resuming after the rate series changed is refused; unchanged, it resumes.
mkdir "$T/dg" && cp "$SRC"/examples/telemetry/* "$T/dg/" &&
  sed -i 's|examples/telemetry/||' "$T/dg/incident.ini"
dg_run() {
  (cd "$T/dg" && "$BIN" run incident.ini -q -o r.h5 --slice 0/2 --set replicates=2 \
    --set horizon_ms=200000 "$@")
}
dg_run >"$T/out" 2>"$T/err" || fail "slice 0/2 of the incident: $(head -c 300 "$T/err")"
h5dump -a sweep_text "$T/dg/r.h5" 2>/dev/null | grep -q 'telemetry_digests = scrape.prom xxh3:' ||
  fail "the stored sweep text has no telemetry_digests"
cp "$T/dg/incident-rate.csv" "$T/dg/rate.orig"
sed -i '$s/,.*$/,2001/' "$T/dg/incident-rate.csv"
dg_run --resume >"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "telemetry_digests = .*incident-rate.csv xxh3:" "$T/err" ||
  fail "resume after the rate series changed was not refused: $(head -c 300 "$T/err")"
cp "$T/dg/rate.orig" "$T/dg/incident-rate.csv"
dg_run --resume >"$T/out" 2>"$T/err" || fail "resume with the files as they were: $(head -c 300 "$T/err")"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "cli_telemetry: all passed ($n hostile files)"
