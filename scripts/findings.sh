#!/usr/bin/env bash
# Prints outcome figures of edge cases (the outcome rule's examples, the
# Metafor collapse, the seed scenario's variants) from fresh `sim` runs,
# each with the command behind it, for exploring after an engine or rule
# change. The figures the README and docs/ state are generated and checked
# by scripts/readme-figures.sh, not by this script.
#
# Usage: scripts/findings.sh [STORMSWEEP_BIN] [SEED_STUDY.h5]
#   STORMSWEEP_BIN  default build/stormsweep
#   SEED_STUDY.h5   optional result file of the seed study (e.g. from
#                   `stormsweep run -o seed.h5 --set replicates=5`): adds
#                   P(metastable), P(slow), P(collapsed), P(pass) by
#                   budget_ratio x capacity_factor (from `analyze --csv`).
# Environment: COLLAPSE_SEEDS (default 50), SEEDS (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/stormsweep}
study=${2:-}
collapse_seeds=${COLLAPSE_SEEDS:-50}
seeds=${SEEDS:-20}
[ -x "$bin" ] || { echo "findings.sh: $bin is not an executable (build first)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# One JSON summary per line: sim_json FILE SEED ARGS...
sim_json() {
  local out=$1 seed=$2; shift 2
  "$bin" sim --seed "$seed" --json "$@" | tr -d '\n' >> "$out"
  echo >> "$out"
}

summarise() { # FILE TITLE: outcome counts, recovery range, collapse mean
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, math, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n = len(rows)
count = {}
for r in rows: count[r["outcome"]] = count.get(r["outcome"], 0) + 1
line = f"{sys.argv[2]}: {n} seeds: " + ", ".join(f"{k} {v}" for k, v in sorted(count.items()))
rec = [r["recovery_ms"] for r in rows if r["recovery_ms"] is not None]
if rec:
    line += f"; recovery {min(rec)/1000:.2f}-{max(rec)/1000:.2f} s (mean {statistics.mean(rec)/1000:.2f} s)"
    line += f"; passed the SLO {sum(r['passed_slo'] for r in rows)}/{n}"
col = [r["collapse_ms"] for r in rows if r["collapse_ms"] is not None]
if col:
    m = statistics.mean(col)
    if len(col) > 1:
        # Student t 0.975 quantiles for the usual sample sizes; 2.0 / 1.96 otherwise
        t = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 19: 2.093,
             29: 2.045, 39: 2.023, 49: 2.010, 59: 2.001}.get(len(col) - 1, 1.96 if len(col) > 60 else 2.0)
        h = t * statistics.stdev(col) / math.sqrt(len(col))
        line += f"; time to collapse {len(col)}/{n} runs, mean {m/1000:.1f} s, 95% CI [{(m-h)/1000:.1f}, {(m+h)/1000:.1f}] s, range {min(col)/1000:.1f}-{max(col)/1000:.1f} s"
    ret = [r["return_ms"] for r in rows if r.get("return_ms") is not None]
    line += f"; returned to healthy: {len(ret)}"
print(line)
PY
}

echo "== The Metafor example (10/s server, 9.5/s, 3 s timeout, 4 retries, 100 slots), no fault"
m18=(--set shards=1 --set workers=1 --set vnodes=1 --set clients=1 --set service_mean_ms=100
     --set rate_rps=9.5 --set timeout_ms=3000 --set max_retries=4 --set queue_capacity=100
     --set surge=none --set brownout=none --set horizon_ms=1000000)
for s in $(seq 1 "$collapse_seeds"); do sim_json "$tmp/m18.jsonl" "$s" "${m18[@]}"; done
summarise "$tmp/m18.jsonl" "sim ${m18[*]} --seed 1..$collapse_seeds"
for s in $(seq 1 "$seeds"); do sim_json "$tmp/m18c.jsonl" "$s" "${m18[@]}" --set rate_rps=8 --set max_retries=0; done
summarise "$tmp/m18c.jsonl" "the same at 8/s, max_retries=0, --seed 1..$seeds"

echo "== Seed scenario (sim defaults), --seed 1..$seeds"
run_case() { # TITLE ARGS...
  local title=$1; shift
  : > "$tmp/case.jsonl"
  for s in $(seq 1 "$seeds"); do sim_json "$tmp/case.jsonl" "$s" "$@"; done
  summarise "$tmp/case.jsonl" "$title"
}
run_case "naive" --policy naive
run_case "guarded (budget + jitter + deadline drop)" --policy guarded
run_case "budget + jitter alone (guarded, deadline_drop=off)" --policy guarded --set deadline_drop=off
run_case "no retries (max_retries=0)" --set max_retries=0
run_case "naive, deadline_drop=on" --policy naive --set deadline_drop=on
run_case "budget + jitter, queue_capacity=512" --policy guarded --set deadline_drop=off --set queue_capacity=512
run_case "budget + jitter, queue_capacity=256" --policy guarded --set deadline_drop=off --set queue_capacity=256
run_case "naive, breaker=fail_fast" --policy naive --set breaker=fail_fast

echo "== Engine-fidelity cases (seed 1)"
run1() { local title=$1; shift; : > "$tmp/one.jsonl"; sim_json "$tmp/one.jsonl" 1 "$@"; summarise "$tmp/one.jsonl" "$title"; }
run1 "max_retries=0 load=0.97 (item 4: slow, not metastable)" --set max_retries=0 --set load=0.97
run1 "the same, horizon 40 s" --set max_retries=0 --set load=0.97 --set horizon_ms=40000
run1 "faults 9000+500 (item 5: too little time after clearance)" --set max_retries=0 --set surge=9000+500 --set brownout=9000+500
run1 "breaker=fail_fast cooldown 5000 (item 6: not recovered while goodput is 0)" --set breaker=fail_fast --set breaker_cooldown_ms=5000

if [ -n "$study" ]; then
  echo "== Seed study by budget_ratio x capacity_factor ($study)"
  "$bin" analyze "$study" --csv "$tmp/study.csv" > /dev/null
  /usr/bin/python3 - "$tmp/study.csv" <<'PY'
import csv, sys, collections
agg = collections.defaultdict(lambda: collections.Counter())
for r in csv.DictReader(open(sys.argv[1])):
    a = agg[(float(r["budget_ratio"]), float(r["capacity_factor"]))]
    for k in ("runs", "metastable", "slow", "passed", "collapsed", "undetermined"):
        a[k] += int(r.get(k) or 0)
print("| budget_ratio | capacity_factor | runs | P(metastable) | P(slow) | P(collapsed) | P(pass) |")
print("|---|---|---|---|---|---|---|")
for (b, c), a in sorted(agg.items()):
    n = a["runs"]
    print(f"| {b:g} | {c:g} | {n} | {a['metastable']/n:.2f} | {a['slow']/n:.2f} | {a['collapsed']/n:.2f} | {a['passed']/n:.2f} |")
PY
fi
