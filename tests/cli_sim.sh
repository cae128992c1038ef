#!/usr/bin/env bash
# cli_sim.sh — `stormsweep sim` from the outside: outcomes in words and JSON,
# the per-tick CSV, and exit status 2 with a clear one-line message for every
# kind of bad input (unknown or malformed settings, unknown options, a bad
# scenario file, which must name file:line and the key).
# Usage: bash cli_sim.sh STORMSWEEP_BIN SOURCE_DIR
set -euo pipefail

bin="$1"
src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}

# run NAME EXPECTED_STATUS ARGS... : runs the CLI, keeps stdout/stderr in
# $tmp/NAME.out / .err, and checks the exit status.
run() {
  local name="$1" want="$2"
  shift 2
  local rc=0
  "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  if [ "$rc" != "$want" ]; then
    fail "$name: 'stormsweep $*' exited $rc, expected $want; stderr: $(head -c 400 "$tmp/$name.err")"
    return 1
  fi
  return 0
}

# expect_in FILE TEXT WHAT : FILE contains TEXT (fixed string).
expect_in() {
  if ! grep -qF -- "$2" "$1"; then
    fail "$3: expected '$2' in $(basename "$1"), got: $(head -c 400 "$1")"
  fi
}

# usage_error NAME MESSAGE ARGS... : exit 2, MESSAGE on stderr as one line,
# nothing on stdout.
usage_error() {
  local name="$1" msg="$2"
  shift 2
  if run "$name" 2 "$@"; then
    expect_in "$tmp/$name.err" "$msg" "$name"
    local lines
    lines="$(wc -l <"$tmp/$name.err")"
    [ "$lines" -eq 1 ] || fail "$name: expected a one-line message, got $lines lines"
    [ ! -s "$tmp/$name.out" ] || fail "$name: printed to stdout on bad input: $(head -c 200 "$tmp/$name.out")"
  fi
}

# ---- outcomes --------------------------------------------------------------
if run naive 0 sim --policy naive; then
  expect_in "$tmp/naive.out" "metastable" "sim --policy naive"
  expect_in "$tmp/naive.out" "outcome" "sim --policy naive"
fi

if run json 0 sim --json --seed 3; then
  python3 - "$tmp/json.out" <<'EOF' || fail "sim --json: not valid JSON with the expected fields"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] in ("recovered", "slow", "metastable"), d.get("outcome")
assert d["outcome"] == "metastable", d["outcome"]
assert d["seed"] == 3, d["seed"]
assert d["policy"] == "naive", d["policy"]
assert d["recovery_ms"] is None  # NaN is written as null
assert d["new_requests"] > 0 and d["attempts"] >= d["new_requests"]
assert d["successes"] + d["failed_requests"] <= d["new_requests"]
assert 3.5 <= d["amplification_after"] <= 4.1, d["amplification_after"]
EOF
fi

# --json output must also parse when the run recovers (numbers, not NaN)
if run json_rec 0 sim --json --set max_retries=0; then
  python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["outcome"] == "recovered", d["outcome"]
assert isinstance(d["recovery_ms"], (int, float)) and d["recovery_ms"] > 0, d["recovery_ms"]
' <"$tmp/json_rec.out" || fail "sim --json --set max_retries=0: expected a recovered run with a number for recovery_ms"
fi

# ---- per-tick CSV ----------------------------------------------------------
if run csv 0 sim --set horizon_ms=3000 --ticks-csv "$tmp/ticks.csv"; then
  if [ ! -f "$tmp/ticks.csv" ]; then
    fail "--ticks-csv: no file written"
  else
    lines="$(wc -l <"$tmp/ticks.csv")"
    [ "$lines" -eq 3001 ] || fail "--ticks-csv: $lines lines, expected 3000 ticks + 1 header = 3001"
    head -n 1 "$tmp/ticks.csv" | grep -q 'queue_depth' || fail "--ticks-csv: header lacks queue_depth: $(head -n 1 "$tmp/ticks.csv")"
    python3 - "$tmp/ticks.csv" <<'EOF' || fail "--ticks-csv: malformed rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 3000, len(rows)
assert [int(r["tick"]) for r in rows] == list(range(3000))
width = len(rows[0])
assert all(len(r) == width and None not in r for r in rows)
assert all(int(r["max_shard_queue"]) <= int(r["queue_depth"]) for r in rows)
assert sum(int(r["new_requests"]) for r in rows) > 0
EOF
  fi
fi
# an unwritable CSV path is a runtime failure (1), not a crash
run csv_bad 1 sim --set horizon_ms=3000 --ticks-csv "$tmp/no/such/dir/ticks.csv" || true

# ---- bad input: exit 2, clear message on stderr ----------------------------
usage_error set_unknown "unknown setting 'bogus'" sim --set bogus=1
usage_error set_typo "did you mean 'capacity_factor'?" sim --set capacty_factor=2
usage_error set_load "load: must be between 0 and 1e+06, got -1" sim --set load=-1
usage_error set_c "capacity_factor: must be >= 1 or inf, got 0.5" sim --set capacity_factor=0.5
usage_error set_vnodes "vnodes: must be between 1 and 65536, got 0" sim --set vnodes=0
usage_error set_rate "rate_rps: must be between 0 and 1e+12, got -5" sim --set rate_rps=-5
usage_error set_noeq "--set needs KEY=VALUE, got 'load'" sim --set load
usage_error set_malformed "load: expected a number, got 'abc'" sim --set load=abc
usage_error set_missing "--set needs a value" sim --set
usage_error nonsense "unknown option '--nonsense'" sim --nonsense
usage_error policy_bad "policy: must be one of naive, guarded, got 'careful'" sim --policy careful
usage_error seed_bad "--seed: expected a whole number from 0 to 18446744073709551615 (or 0x hexadecimal), got '-3'" sim --seed -3
usage_error window_past "surge: window 9800+500 ends after the horizon (horizon_ms = 10000)" sim --set surge=9800+500
usage_error no_file "$tmp/missing.ini" sim "$tmp/missing.ini"

# a scenario file with an unknown key: the message names file:line and the key
cat >"$tmp/bad.ini" <<'EOF'
; a scenario with a typo on line 4
[scenario]
load = 0.5
capacty_factor = 2
EOF
usage_error file_key "$tmp/bad.ini:4: unknown setting 'capacty_factor' in [scenario] (did you mean 'capacity_factor'?)" sim "$tmp/bad.ini"

cat >"$tmp/badval.ini" <<'EOF'
[scenario]
shards = 8

vnodes = 0
EOF
usage_error file_value "$tmp/badval.ini:4: vnodes: must be between 1 and 65536, got 0" sim "$tmp/badval.ini"

# a good scenario file is applied, and --set overrides it
cat >"$tmp/good.ini" <<'EOF'
[scenario]
max_retries = 0
horizon_ms = 5000
EOF
if run file_good 0 sim --json "$tmp/good.ini" --set horizon_ms=6000; then
  python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["amplification"] == 1, d["amplification"]          # max_retries = 0 from the file
# horizon from --set: 17.92 requests/ms for 6000 ms, x5 during the 500 ms surge
want = 17.92 * (6000 + 4 * 500)
assert abs(d["new_requests"] - want) < 0.03 * want, (d["new_requests"], want)
' <"$tmp/file_good.out" || fail "scenario file + --set: settings not applied as expected: $(head -c 300 "$tmp/file_good.out")"
fi

# ---- help and settings list ------------------------------------------------
if run help 0 sim --help; then
  expect_in "$tmp/help.out" "usage: stormsweep sim" "sim --help"
fi
if run list 0 sim --list-settings; then
  for key in shards workers load timeout_ms max_retries capacity_factor vnodes budget_ratio backoff_cap_ms surge brownout; do
    grep -qE "^  $key +=" "$tmp/list.out" || fail "--list-settings: no line for $key"
  done
  expect_in "$tmp/list.out" "capacity_factor          = 1.25" "--list-settings default of capacity_factor"
fi

# ---- one grammar: --opt=value, '_' or '-' in names ------------------
if run eq_form 0 sim --json --seed=3 --policy=guarded --set=horizon_ms=4000 &&
  run space_form 0 sim --json --seed 3 --policy guarded --set horizon_ms=4000; then
  python3 - "$tmp/eq_form.out" "$tmp/space_form.out" <<'EOF' || fail "sim --opt=value and --opt value differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d.pop("wall_ms")
assert a == b and a["seed"] == 3 and a["policy"] == "guarded", (a.get("seed"), a.get("policy"))
EOF
fi
run underscore_opt 0 sim --set horizon_ms=3000 --ticks_csv="$tmp/u.csv" &&
  { [ -f "$tmp/u.csv" ] || fail "--ticks_csv=FILE wrote no file"; }
usage_error json_value "--json takes no value" sim --json=1
usage_error two_files "unexpected argument" sim "$tmp/good.ini" "$tmp/good.ini"
if run bench_eq 0 bench --engine-only --runs=2 --set=horizon_ms=3000 --json; then
  python3 -c 'import json, sys; assert json.load(sys.stdin)["engine"]["runs_per_policy"] == 2' \
    <"$tmp/bench_eq.out" || fail "bench --runs=2: not 2 runs per policy"
fi
usage_error bench_set "--set needs KEY=VALUE, got 'load'" bench --engine-only --set load

# ---- what sim simulated: --show-settings, settings in --json ---------
cat >"$tmp/sweep.ini" <<'EOF'
; a sweep file: sim runs its [scenario] and ignores [grid] and [sweep]
[scenario]
load = 0.5
vnodes = 40

[grid]
policy = naive, guarded

[sweep]
replicates = 3
EOF
if run show 0 sim "$tmp/sweep.ini" --policy guarded --set vnodes=10 --show-settings; then
  grep -qE "^  vnodes +=  ?10 +--set$" "$tmp/show.out" || fail "--show-settings: vnodes not 10 from --set: $(grep vnodes "$tmp/show.out")"
  grep -qF "$tmp/sweep.ini:3" <(grep -E '^  load +=  ?0.5 ' "$tmp/show.out") || fail "--show-settings: load not 0.5 from sweep.ini:3: $(grep -E '^  load ' "$tmp/show.out")"
  grep -qE "^  budget_ratio +=  ?0.1 +--policy$" "$tmp/show.out" || fail "--show-settings: budget_ratio not from --policy: $(grep budget_ratio "$tmp/show.out")"
  grep -qE "^  shards +=  ?16 +default$" "$tmp/show.out" || fail "--show-settings: shards not a default: $(grep -E '^  shards ' "$tmp/show.out")"
  expect_in "$tmp/show.err" "$tmp/sweep.ini:7: [grid] and [sweep] ignored" "sim SWEEP.ini warns about [grid]"
  ! grep -q "outcome" "$tmp/show.out" || fail "--show-settings simulated"
fi
if run json_settings 0 sim --json "$tmp/good.ini" --set vnodes=10; then
  python3 - "$tmp/json_settings.out" "$tmp/good.ini" <<'EOF' || fail "sim --json: effective settings or their origins wrong"
import json, sys
d = json.load(open(sys.argv[1]))
s, f = d["settings"], d["settings_from"]
assert s["vnodes"] == "10" and f["vnodes"] == "--set", (s["vnodes"], f["vnodes"])
assert s["max_retries"] == "0" and f["max_retries"] == sys.argv[2] + ":2", f["max_retries"]
assert s["shards"] == "16" and f["shards"] == "default", f["shards"]
EOF
fi
if run list_after_set 0 sim --set vnodes=10 --list-settings; then
  expect_in "$tmp/list_after_set.out" "# defaults" "--list-settings says it lists defaults"
  expect_in "$tmp/list_after_set.err" "--show-settings" "--list-settings with --set points to --show-settings"
fi

# ---- errors ----------------------------------------------------------
usage_error set_space "--set needs KEY=VALUE, got 'breaker' (did you mean --set breaker=fail_fast?)" sim --set breaker fail_fast
printf '\211HDF\r\n\032\n\000\000\000\000\377\377binary' >"$tmp/results.h5"
usage_error hdf5 "$tmp/results.h5: an HDF5 result file, not a scenario" sim "$tmp/results.h5"
# an unwritable --ticks-csv fails before simulating: no summary, the sim: prefix
if run csv_early 1 sim --ticks-csv "$tmp/no/such/dir/x.csv"; then
  [ ! -s "$tmp/csv_early.out" ] || fail "--ticks-csv to a missing directory simulated first: $(head -c 200 "$tmp/csv_early.out")"
  expect_in "$tmp/csv_early.err" "stormsweep sim: --ticks-csv: $tmp/no/such/dir/x.csv: cannot create" "--ticks-csv error"
fi

# ---- units and definitions ---------------------------------------------
if run units 0 sim --set horizon_ms=4000 && run units_tick 0 sim --set horizon_ms=4000 --set tick_ms=0.5 --json &&
  run units_json 0 sim --set horizon_ms=4000 --json; then
  expect_in "$tmp/units.out" "Little's Law         over the baseline window" "Little's Law line"
  expect_in "$tmp/units.out" "(attempts sent per request)" "amplification line"
  grep -qE "goodput +[0-9]+/s answered in time at baseline" "$tmp/units.out" || fail "goodput not per second: $(grep goodput "$tmp/units.out")"
  python3 - "$tmp/units_json.out" "$tmp/units_tick.out" <<'EOF' || fail "sim --json: little_lambda, little_w_ms or goodput_baseline_per_s wrong"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert abs(a["little_lambda"] * a["little_w_ms"] - a["little_L"]) < 0.05 * a["little_L"], a
# per second does not depend on the tick: 17.92 requests/ms offered at load 0.7
for d in (a, b):
    assert 0.9 * 17920 < d["goodput_baseline_per_s"] < 1.1 * 17920, d["goodput_baseline_per_s"]
EOF
fi

# What users see: --json has latency quantiles and error rates per phase,
# --ticks-csv the windowed series (each tick's row has its window's values).
if run latency 0 sim --set horizon_ms=4000 --json --ticks-csv "$tmp/lat.csv"; then
  python3 - "$tmp/latency.out" "$tmp/lat.csv" <<'EOF' || fail "sim: latency per phase or per window wrong"
import csv, json, math, sys
d = json.load(open(sys.argv[1]))
lat = d["latency"]
assert lat["window_ms"] == 100, lat
b, du, af = lat["baseline"], lat["during"], lat["after"]
assert (b["begin_ms"], b["end_ms"], du["begin_ms"], du["end_ms"], af["end_ms"]) == (500, 2000, 2000, 2500, 4000), lat
assert b["requests"] > 10000 and b["error_rate"] < 0.01, b
assert 0 < b["p50_ms"] <= b["p90_ms"] <= b["p99_ms"] <= b["p999_ms"] <= b["max_ms"], b
assert du["error_rate"] > 0.5 and du["failed"] == du["requests"] - du["status"]["ok"], du
assert sum(du["status"].values()) == du["requests"], du
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 4000
for key in ("requests_ended", "requests_failed", "latency_p50", "latency_p90", "latency_p99",
            "latency_p999", "error_rate", "success_rate"):
    assert key in rows[0], key
# window 25 (2500..2600 ms): the same values on each of its rows
w = rows[2500:2600]
assert len({r["latency_p99"] for r in w}) == 1 and len({r["error_rate"] for r in w}) == 1
assert float(rows[1000]["error_rate"]) == 0 and float(rows[2100]["error_rate"]) > 0.5
ended = sum(float(rows[t]["requests_ended"]) for t in range(0, 4000, 100))
assert abs(ended - (d["successes"] + d["failed_requests"])) <= d["new_requests"] * 0.02 + 1, ended
EOF
fi

if [ "$fails" -ne 0 ]; then
  echo "cli_sim.sh: $fails check(s) failed" >&2
  exit 1
fi
echo "cli_sim.sh: all checks passed"
