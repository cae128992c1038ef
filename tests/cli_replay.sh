#!/usr/bin/env bash
# cli_replay.sh — `stormsweep replay`: the example incident under today's
# client and candidates. Today's client (2 retries, no budget) stays down
# after the surge and guarded recovers, with a paired difference whose
# interval excludes 0; the answer does not depend on -j; --grid multiplies
# the candidates; --plot writes its images and never replaces a directory
# that is not an earlier plot; bad usage and a scenario without an incident
# window exit 2.
# Usage: bash cli_replay.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=$1
SRC=$2
T=$(mktemp -d /tmp/cli_replay.XXXXXX)
trap 'rm -rf "$T"' EXIT
failures=0
. "$SRC/tests/lib/cli_common.sh"
INC=$SRC/examples/telemetry/incident.ini
cd "$SRC" || exit 1

# today's client against guarded and Envoy's client, 4 replicates each
"$BIN" replay "$INC" --compare-policy guarded --compare-client sweeps/clients/envoy.yaml \
  -n 4 -j 2 --json -q >"$T/j2.json" 2>"$T/err" || fail "replay -j 2: $(head -c 400 "$T/err")"
"$BIN" replay "$INC" --compare-policy guarded --compare-client sweeps/clients/envoy.yaml \
  -n 4 -j 1 --json -q >"$T/j1.json" 2>"$T/err" || fail "replay -j 1: $(head -c 400 "$T/err")"
python3 - "$T/j1.json" "$T/j2.json" <<'PY' || fail "replay's JSON answer"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("wall_s")
assert a == b, "-j 1 and -j 2 differ"
c = {x["client"]: x for x in a["candidates"]}
assert list(c) == ["today", "guarded", "envoy.yaml"], list(c)
assert a["incident_ms"] == [70000, 190000], a["incident_ms"]
t, g = c["today"], c["guarded"]
assert t["recovered"]["runs"] == 0 and g["recovered"]["runs"] == 4, (t["recovered"], g["recovered"])
assert t["after"]["error_rate"]["mean"] > 0.9, t["after"]
assert g["after"]["error_rate"]["mean"] < 0.2, g["after"]
d = g["after"]["error_rate_vs_today"]
assert d["n"] == 4 and d["ci95"][1] < 0, d            # paired: guarded fails fewer after
assert "error_rate_vs_today" not in t["after"]         # today is the reference
assert all(x["recovered"]["of"] == 4 for x in a["candidates"])
PY

# the text answer: both windows, every candidate, the SLO lines
expect_exit 0 "$BIN" replay "$INC" --compare-policy guarded -n 2 -q --slo "p99<=200ms,errors<=1%"
for want in "During the incident" "After the incident" "today" "guarded" "vs today" \
  "SLO p99<=200ms,errors<=1%" "never held again"; do
  expect_in "$T/out" "$want"
done

# --grid multiplies the candidates (every client at each value)
"$BIN" replay "$INC" --compare-policy guarded --grid timeout_ms=100,200 -n 1 --json -q \
  >"$T/g.json" 2>"$T/err" || fail "replay --grid: $(head -c 400 "$T/err")"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); n=len(d['candidates']); assert n == 4, n" \
  "$T/g.json" || fail "--grid over two clients: not 4 candidates"

# --plot: written, replaced when it is an earlier plot, never over anything else
expect_exit 0 "$BIN" replay "$INC" -n 1 -q --plot "$T/plot"
for f in replay.png replay.svg replay.gp replay.dat; do
  [ -s "$T/plot/$f" ] || fail "--plot did not write $f"
done
expect_exit 0 "$BIN" replay "$INC" -n 1 -q --plot "$T/plot"
mkdir "$T/mine" && echo keep >"$T/mine/notes.txt"
expect_exit 1 "$BIN" replay "$INC" -n 1 -q --plot "$T/mine"
[ "$(cat "$T/mine/notes.txt")" = keep ] || fail "--plot replaced a directory that was not its own"
ln -s "$T/plot" "$T/link"
expect_exit 1 "$BIN" replay "$INC" -n 1 -q --plot "$T/link"

# bad usage
cat >"$T/nofault.ini" <<INI
[scenario]
surge = none
brownout = none
horizon_ms = 5000
INI
expect_exit 2 "$BIN" replay
expect_exit 2 "$BIN" replay "$INC" "$INC"
expect_exit 2 "$BIN" replay "$INC" --compare-policy nosuch
expect_in "$T/err" "'nosuch' is not a policy preset"
expect_exit 2 "$BIN" replay "$INC" -n 0
expect_exit 2 "$BIN" replay "$INC" --seed -1
expect_exit 2 "$BIN" replay "$INC" --client-lenient
expect_exit 2 "$BIN" replay "$INC" --slo "p99<=fast"
expect_exit 2 "$BIN" replay "$INC" --set nosuch=1
expect_exit 2 "$BIN" replay "$INC" --compare-client "$T/missing.json"
expect_exit 2 "$BIN" replay "$T/nofault.ini"
expect_in "$T/err" "has no fault"
expect_exit 2 "$BIN" replay "$T/missing.ini"
expect_exit 0 "$BIN" replay --help
expect_in "$T/out" "--compare-policy"

[ "$failures" = 0 ] && echo "cli_replay: all checks passed"
exit $((failures > 0))
