#!/usr/bin/env bash
# cli_answers.sh — answers mean what they say: (1) one set of bad runs
# (metastable, collapsed or undetermined) behind P(bad) everywhere, so a
# file whose runs all collapsed is never printed or drawn as safe (analyze's
# table and --json, the report's heat-map data and cell labels); (2) the
# counts of a refined file (candidates, rank, runs per point) read the same
# in refine, recommend, analyze and report.
# usage: bash tests/cli_answers.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=${1:?usage: cli_answers.sh STORMSWEEP_BIN SOURCE_DIR}
T=$(mktemp -d /tmp/stormsweep_cli_answers.XXXXXX)
trap 'rm -rf "$T"' EXIT
failures=0
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
PY=/usr/bin/python3
cd "$T" || exit 2

cat >tiny.ini <<'INI'
[sweep]
replicates = 3
seed = 3
[scenario]
shards = 2
horizon_ms = 600
surge = 200+100
brownout = 200+100
[grid]
budget_ratio = 0.1, inf
capacity_factor = 1.1, 2
INI
expect_exit 0 "$BIN" run tiny.ini -o base.h5 -q

# ---- (1) every run collapsed: never safe ----
if "$PY" -c 'import h5py' 2>/dev/null; then
  cp base.h5 coll.h5
  "$PY" - <<'PYEOF' || fail "could not rewrite coll.h5"
import h5py, numpy as np
with h5py.File("coll.h5", "r+") as f:
    a = f["runs"][...]
    a["outcome"] = 3; a["passed_slo"] = 0; a["recovery_ms"] = np.nan; a["collapse_ms"] = 50.0
    f["runs"][...] = a
    o = f["ticks/outcome"]; o[...] = np.full(o.shape, 3, dtype=o.dtype)
PYEOF
  expect_exit 0 "$BIN" analyze coll.h5
  # every row of the table: 0/0/0/3 then P(bad) 1.000
  rows=$(grep -cE '^ +[0-9]+ .* 0/0/0/3 +1\.000 \[' "$T/out")
  [ "$rows" = 4 ] || fail "analyze: all-collapsed points do not read P(bad) 1.000: $(cat "$T/out")"
  expect_in "$T/out" "P(bad)"
  expect_exit 0 "$BIN" analyze coll.h5 --json
  "$PY" - "$T/out" <<'PYEOF' || fail "analyze --json prints an all-collapsed point as safe"
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["points"]:
    assert p["p_bad"] == 1 and p["bad"] == p["runs"] == p["collapsed"], p
    assert p["p_bad_exact"][0] > 0, p
for e in d["effects"]:
    for lv in e["levels"]:
        assert lv["p_bad"] == 1 and lv["p_collapsed"] == 1, lv
PYEOF
  expect_exit 0 "$BIN" recommend coll.h5
  grep -q "^RECOMMENDED" "$T/out" && fail "recommend picks an all-collapsed point"
  if command -v gnuplot >/dev/null; then
    expect_exit 0 "$BIN" report coll.h5 -o rep
    # column 3 is P(bad), the colour of heatmap_bad; no cell below 1
    awk '!/^#/ && NF { if ($3 != 1) bad = 1 } END { exit bad }' rep/heatmap.dat ||
      fail "report: an all-collapsed cell has P(bad) < 1: $(cat rep/heatmap.dat)"
    by_bad="using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette"
    grep -qF "$by_bad" rep/plots.gp || fail "report: heatmap_bad is not coloured by P(bad)"
    grep -q "COLLAPSED" rep/plots.gp || fail "report: collapsed cells are not labelled"
    grep -q "P(collapsed)" rep/plots.gp || fail "report: effect plots lack a collapsed line"
    [ -s rep/heatmap_bad.png ] || fail "report: no heatmap_bad.png"
  fi
fi

# ---- (2) the counts of a refined file agree ----
tiny_sweep "" "load = 0.5, 0.8" "budget_ratio = 0.1, inf" >ref.ini
expect_exit 0 "$BIN" run ref.ini -o ref.h5 -q
"$BIN" refine ref.h5 --min-pass 0.9 --max-metastable 0.1 -q >refine.txt 2>&1
expect_exit 0 "$BIN" recommend ref.h5
cp "$T/out" recommend.txt
line=$(sed -n 's/^refine: \(.* of [0-9]* points\) (screening.*/\1/p' refine.txt | head -1)
[ -n "$line" ] || fail "refine prints no count of candidates: $(cat refine.txt)"
grep -qF "$line" recommend.txt || fail "recommend's count differs from refine's '$line': $(cat recommend.txt)"
for f in refine.txt recommend.txt; do
  if grep -q "rank [0-9]* of" "$f"; then
    n=$(grep -o "rank [0-9]* of [0-9]*" "$f" | head -1 | awk '{print $4}')
    case $line in "$n candidate"*) ;; *) fail "$f: 'rank of $n' but '$line'" ;; esac
  fi
done
expect_exit 0 "$BIN" analyze ref.h5 --json
"$PY" - "$T/out" <<'PYEOF' || fail "analyze --json: runs != screening + fresh"
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["points"]:
    assert p["runs"] == p["screening_runs"] + p["fresh_runs"], p
    assert p["screening_runs"] == 10, p
assert sum(p["fresh_runs"] for p in d["points"]) > 0
PYEOF
if command -v gnuplot >/dev/null; then
  expect_exit 0 "$BIN" report ref.h5 -o rrep
  grep -qF "$line" rrep/index.html || fail "report's count differs from refine's '$line'"
fi

if [ "$failures" -gt 0 ]; then
  echo "cli_answers: $failures failure(s)" >&2
  exit 1
fi
echo "cli_answers: ok"
