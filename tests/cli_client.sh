#!/usr/bin/env bash
# cli_client.sh — `--client FILE` from the outside: every broken config in
# tests/client/bad/ gives exactly the message in EXPECTED.tsv
# ("FILE: path.to.field: what is wrong") and exit 2, through sim, run, list
# and verify; only regular files are read (a FIFO fails at once); an
# unknown field is an error on every command and a note with
# --client-lenient; text from the file reaches the terminal escaped; the
# shipped examples print their mapping; sim --show-settings names --client
# FILE and the field as the origin of each imported setting, and an
# imported setting loses to --set and to a grid axis; a gRPC client with a
# deadline and UNAVAILABLE only does not retry its timeouts.
# Usage: bash cli_client.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
SRC=$2
T=$(mktemp -d /tmp/cli_client.XXXXXX)
trap 'rm -rf "$T"' EXIT
failures=0

# ---- broken files: the exact message and exit 2 ----
cd "$SRC/tests/client/bad" || exit 1
n=0
while IFS=$'\t' read -r file msg; do
  [ -n "$file" ] || continue
  n=$((n + 1))
  expect_exit 2 "$BIN" sim --client "$file" --show-settings
  want="stormsweep sim: --client $file: $msg"
  got=$(tail -n 1 "$T/err")
  [ "$got" = "$want" ] || fail "$file:"$'\n'"  got  $got"$'\n'"  want $want"
  [ -s "$T/out" ] && fail "$file: printed settings on stdout despite the error"
done <EXPECTED.tsv
[ "$n" -ge 20 ] || fail "only $n broken files checked"
# every broken file has its expectation
for f in *; do
  [ "$f" = EXPECTED.tsv ] && continue
  grep -q "^$f"$'\t' EXPECTED.tsv || fail "$f has no line in EXPECTED.tsv"
done
# the same messages through run, list and verify
expect_exit 2 "$BIN" run --client grpc-attempts-one.json -o "$T/r.h5"
expect_in "$T/err" "stormsweep run: --client grpc-attempts-one.json: methodConfig[0].retryPolicy.maxAttempts: must be greater than 1"
[ -e "$T/r.h5" ] && fail "run created its output despite a bad --client"
expect_exit 2 "$BIN" list --client envoy-duration-ms.yaml
expect_in "$T/err" "stormsweep list: --client envoy-duration-ms.yaml: retry_policy.per_try_timeout: not a protobuf duration"
expect_exit 2 "$BIN" verify --client envoy-retries-negative.yaml --max-runs 2
expect_in "$T/err" "stormsweep verify: --client envoy-retries-negative.yaml: retry_policy.num_retries: must not be negative, got -1"
# a file that is not there, a directory, and a file over 1 MiB
expect_exit 2 "$BIN" sim --client "$T/none.json"
expect_in "$T/err" "none.json: cannot read: No such file or directory"
head -c 1100000 /dev/zero | tr '\0' ' ' >"$T/big.yaml"
expect_exit 2 "$BIN" sim --client "$T/big.yaml"
expect_in "$T/err" "big.yaml: larger than 1048576 bytes"
expect_exit 2 "$BIN" run --client
expect_in "$T/err" "--client needs a value"

# ---- only regular files: a FIFO (or a link to one) fails at once, not blocking ----
mkfifo "$T/fifo"
ln -s "$T/fifo" "$T/fifo-link.json"
for f in "$T/fifo" "$T/fifo-link.json"; do
  timeout 10 "$BIN" sim --client "$f" >"$T/out" 2>"$T/err"
  rc=$?
  [ "$rc" = 2 ] || fail "sim --client $(basename "$f") exited $rc, want 2 at once (124: it blocked)"
  expect_in "$T/err" "$(basename "$f"): not a regular file (a FIFO)"
done
expect_exit 2 "$BIN" sim --client "$T"
expect_in "$T/err" "not a regular file (a directory)"

# ---- an unknown field is an error on every command; --client-lenient makes it a note ----
bad=envoy-typo-retry-budjet.yaml
want="--client $bad: circuit_breakers.thresholds[0].retry_budjet: unknown field (did you mean 'retry_budget'?)"
note="note: circuit_breakers.thresholds[0].retry_budjet: unknown field, ignored (did you mean 'retry_budget'?)"
printf '[sweep]\nreplicates = 1\n[scenario]\nshards = 2\nhorizon_ms = 3000\nsurge = none\nbrownout = none\n' >"$T/tiny.ini"
for cmd in sim list run verify; do
  case $cmd in
    sim) args=(--show-settings) ;;
    list) args=("$T/tiny.ini") ;;
    run) args=("$T/tiny.ini" -o "$T/lenient.h5" -q) ;;
    verify) args=(--max-runs 2) ;;
  esac
  expect_exit 2 "$BIN" "$cmd" --client "$bad" "${args[@]}"
  expect_in "$T/err" "stormsweep $cmd: $want"
  "$BIN" "$cmd" --client "$bad" --client-lenient "${args[@]}" >"$T/out" 2>"$T/err"
  rc=$?
  [ "$rc" = 2 ] && fail "$cmd --client-lenient exited 2: $(head -c 400 "$T/err")"
  [ "$cmd" = run ] || expect_in "$T/err" "$note"
done
[ -s "$T/lenient.h5" ] || fail "run --client-lenient wrote no result file"
expect_exit 2 "$BIN" sim --client-lenient
expect_in "$T/err" "stormsweep sim: --client-lenient goes with --client FILE"

# ---- text from the file is escaped wherever it is printed ----
printf '{"methodConfig": [{"\\u001b[2J\\u001b[31mPROVEN": 1, "timeout": "1s", "retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.01s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}' >"$T/esc.json"
expect_exit 2 "$BIN" sim --client "$T/esc.json" --show-settings
expect_in "$T/err" 'methodConfig[0].\x1b[2J\x1b[31mPROVEN: unknown field in a gRPC MethodConfig'
grep -q $'\x1b' "$T/err" && fail "an escape sequence from the file reached the terminal (error)"
"$BIN" sim --client "$T/esc.json" --client-lenient --show-settings >"$T/out" 2>"$T/err"
expect_in "$T/err" 'note: methodConfig[0].\x1b[2J\x1b[31mPROVEN: unknown field, ignored'
grep -q $'\x1b' "$T/err" && fail "an escape sequence from the file reached the terminal (mapping)"

# ---- the examples: the mapping is printed ----
cd "$SRC" || exit 1
"$BIN" sim --client examples/grpc-service-config.json --show-settings >"$T/out" 2>"$T/err"
rc=$?
expect_in "$T/err" "--client examples/grpc-service-config.json (gRPC service config): source field -> setting"
expect_in "$T/err" "methodConfig[0].retryPolicy.maxAttempts = 4              -> max_retries = 3"
expect_in "$T/err" "retryThrottling.tokenRatio = 0.1                         -> grpc_token_ratio = 0.1"
"$BIN" sim --client examples/envoy-route.yaml --show-settings >"$T/out2" 2>"$T/err2"
rc2=$?
expect_in "$T/err2" "retry_policy.retry_back_off.base_interval = 0.025s       -> backoff_base_ms = 25"

if "$BIN" sim --list-settings | grep -q '^  retry_limiter '; then
  [ "$rc" = 0 ] || fail "sim --client grpc --show-settings exited $rc: $(cat "$T/err")"
  [ "$rc2" = 0 ] || fail "sim --client envoy --show-settings exited $rc2: $(cat "$T/err2")"
  grep -Eq '^  max_retries +=  *3 .*--client examples/grpc-service-config.json methodConfig\[0\]\.retryPolicy\.maxAttempts$' "$T/out" ||
    fail "show-settings lacks max_retries from --client: $(grep max_retries "$T/out")"
  grep -Eq '^  retry_limiter +=  *grpc ' "$T/out" || fail "retry_limiter is not grpc"
  grep -Eq '^  envoy_budget_percent +=  *20 ' "$T/out2" || fail "envoy_budget_percent is not 20"
  # --set wins over --client
  "$BIN" sim --client examples/grpc-service-config.json --set max_retries=1 --show-settings \
    >"$T/out3" 2>/dev/null
  grep -Eq '^  max_retries +=  *1 +--set$' "$T/out3" || fail "--set did not win over --client"
  # a grid axis wins over --client, a [scenario] line loses to it
  printf '[sweep]\nreplicates = 1\n[scenario]\nmax_retries = 9\nshards = 2\n[grid]\nbackoff_base_ms = 5, 7\n' >"$T/s.ini"
  "$BIN" list "$T/s.ini" --client examples/grpc-service-config.json --ini >"$T/ini" 2>/dev/null ||
    fail "list --client failed"
  grep -q '^max_retries = 3' "$T/ini" || fail "--client did not replace the [scenario] line: $(cat "$T/ini")"
  grep -q '^backoff_base_ms = 5, 7' "$T/ini" || fail "--client removed the grid axis: $(cat "$T/ini")"
  # end to end: a run of the seed scenario with the gRPC client
  expect_exit 0 "$BIN" sim --client examples/grpc-service-config.json --json
  expect_in "$T/out" '"retry_limiter": "grpc"'
else
  echo "SKIP: end-to-end --client checks (this build has no retry_limiter setting)"
  [ "$rc" = 2 ] || fail "sim --client without the limiter settings exited $rc, want 2"
  expect_in "$T/err" "this build has no setting"
fi

# ---- gRPC as shipped: one deadline, no per-attempt timeout, UNAVAILABLE only ----
# Every failure is a timeout here (unbounded queues, plain consistent
# hashing), and gRPC never retries its deadline: no retry after the faults.
printf '{"methodConfig": [{"name": [{"service": "kv.KeyValue"}], "timeout": "0.1s",\n  "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s", "maxBackoff": "1s",\n  "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}\n' >"$T/grpc100.json"
expect_exit 0 "$BIN" sim --client "$T/grpc100.json" --set queue_capacity=inf --set capacity_factor=inf
expect_in "$T/err" "methodConfig[0].retryPolicy.retryableStatusCodes = UNAVAILABLE -> retry_on = rejected+shed+router+lost"
expect_in "$T/err" "methodConfig[0].timeout = 0.1s                           -> deadline_ms = 100"
expect_in "$T/err" "(no per-attempt timeout: an attempt waits for the call's deadline, which is never retried) -> timeout_ms = none"
expect_in "$T/err" "(gRPC waits min(initialBackoff*mult^(n-1), maxBackoff) x U(0.8, 1.2) before retry n) -> backoff = grpc"
expect_in "$T/err" "note: methodConfig[0].retryPolicy.retryableStatusCodes: not retried: an attempt that times out"
amp=$(sed -n 's/.*retry amplification .*, \([0-9.]*\)x after the faults.*/\1/p' "$T/out")
awk -v a="${amp:-9}" 'BEGIN { exit !(a <= 1.01) }' ||
  fail "gRPC with a 0.1 s deadline retried after timeouts: amplification after the faults ${amp:-?}x, want 1.00x"

if [ "$failures" -gt 0 ]; then
  echo "cli_client: $failures failure(s)" >&2
  exit 1
fi
echo "cli_client: ok ($n broken files)"
