#!/usr/bin/env bash
# ablation-table.sh — the README's ablation table (a Markdown table) from a
# result file of sweeps/ablation.ini, so it can be regenerated whenever the
# engine changes:
#
#   build/stormsweep run sweeps/ablation.ini -o ablation.h5
#   scripts/ablation-table.sh ablation.h5 > table.md
#
# P(metastable) and P(pass) with 95% Clopper-Pearson intervals come from
# `stormsweep analyze --interval exact --csv`; the median recovery time and
# its distribution-free 95% interval (order statistics of the runs, a run that
# did not recover counting as +infinity, so censoring needs no model) are
# computed here from /runs with h5py.
# Usage: scripts/ablation-table.sh RESULTS.h5 [STORMSWEEP_BIN]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
file=${1:?usage: ablation-table.sh RESULTS.h5 [STORMSWEEP_BIN]}
bin=${2:-$here/build/stormsweep}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tmp=$dir/table.csv
"$bin" analyze "$file" --interval exact --csv "$tmp" >/dev/null
"$py" - "$file" "$tmp" <<'PY'
import csv, math, sys
import h5py
import numpy as np

path, table = sys.argv[1], sys.argv[2]
rows = {int(r["point"]): r for r in csv.DictReader(open(table))}
with h5py.File(path, "r") as f:
    runs = f["runs"][:]

def median_ci(x):
    """Median and the order-statistic 95% interval [x_(l), x_(n-l+1)], with
    l the largest rank such that P(Binomial(n, 1/2) < l) <= 0.025."""
    x = np.sort(x)
    n = len(x)
    med = float(np.median(x)) if n else math.nan
    cdf, l = 0.0, 0
    for k in range(n + 1):
        p = math.comb(n, k) / 2.0 ** n
        if cdf + p > 0.025:
            break
        cdf += p
        l = k + 1
    if l < 1:
        return med, -math.inf, math.inf
    return med, float(x[l - 1]), float(x[n - l])

def ms(v):
    return "∞" if math.isinf(v) or math.isnan(v) else f"{v:.0f}"

def median_text(med, lo, hi):
    if math.isinf(med) or math.isnan(med):
        return "not recovered"
    return f"{ms(med)} [{ms(lo)}, {ms(hi)}]"

def prob(r, key):
    return f"{float(r[key]):.3f} [{float(r[key + '_exact_lo']):.3f}, {float(r[key + '_exact_hi']):.3f}]"

def on(v):
    return v.strip().lower() not in ("off", "0", "inf", "none", "nan")

print("| budget | shedding | backoff | runs | P(metastable) [95% CI] | P(pass) [95% CI] | median recovery, ms [95% CI] |")
print("|---|---|---|---|---|---|---|")
for p in sorted(rows):
    r = rows[p]
    budget = "none" if r["budget_ratio"] in ("inf", "Inf") else f"{float(r['budget_ratio']):.0%}"
    dd, codel = on(r["deadline_drop"]), on(r["codel_target_ms"])
    shed = {(False, False): "none", (True, False): "deadline drop",
            (False, True): f"CoDel {float(r['codel_target_ms']):g} ms" if codel else "",
            (True, True): "deadline drop + CoDel"}[(dd, codel)]
    back = "full jitter" if on(r["backoff"]) else "none"
    sel = (runs["point"] == p) & (runs["done"] != 0)
    rec = runs["recovery_ms"][sel].astype(float)
    rec = np.where(np.isnan(rec), math.inf, rec)
    med, lo, hi = median_ci(rec)
    name = ""
    if budget == "none" and shed == "none" and back == "none":
        name = " (naive)"
    if budget == "10%" and shed == "deadline drop" and back == "full jitter":
        name = " (guarded)"
    print(f"| {budget}{name} | {shed} | {back} | {int(sel.sum())} | {prob(r, 'p_metastable')} | "
          f"{prob(r, 'p_pass')} | {median_text(med, lo, hi)} |")
PY
