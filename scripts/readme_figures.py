#!/usr/bin/env python3
"""readme_figures.py — every result figure the README states, computed from
result files (and sim's JSON), so the README cannot drift from the data.

The README (and docs/*.md) hold generated blocks:

    <!-- generated:NAME begin -->
    ...what `scripts/readme-figures.sh NAME` prints...
    <!-- generated:NAME end -->

Each block is computed from one *source*: a sweep (run into a directory),
a set of `sim --json` runs, or `boundary` searches. Every source is
deterministic and independent of the thread count, so a block differs from
its regeneration only when the engine, the outcome rule or an output format
changed. Prose outside the blocks states no result figures.

Usage (through scripts/readme-figures.sh, which finds python with h5py):
  readme-figures.sh [--bin BIN] --update [--skip SRC,...]   rewrite every block
  readme-figures.sh [--bin BIN] --check [--only SRC,...] [--skip SRC,...]
                                    exit 1, with a diff, when a block differs
                                    or a block is missing
  readme-figures.sh --check --structure     only that every block is known,
                                    closed and present (runs nothing)
  readme-figures.sh [--bin BIN] [--dir DIR] NAME            print one block
  readme-figures.sh --list                                  blocks and sources
--dir DIR keeps the sources' files in DIR and reuses those already there
(e.g. a seed study you ran: DIR/seed/results.h5); by default they go to a
temporary directory that is removed afterwards.
"""
import concurrent.futures
import difflib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THREADS = os.cpu_count() or 1
OUTCOMES = ["recovered", "slow", "metastable", "collapsed", "undetermined"]


def die(msg, code=2):
    print(f"readme-figures: {msg}", file=sys.stderr)
    sys.exit(code)


# ---------------------------------------------------------------- sources

class Sources:
    """Produces each source's files once, in DIR, on first use."""

    def __init__(self, binary, directory):
        self.bin = binary
        self.dir = directory
        self.done = {}

    def sh(self, args, cwd=None):
        r = subprocess.run([self.bin] + args, cwd=cwd or self.dir, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode not in (0, 1, 3):
            die(f"{' '.join(['stormsweep'] + args)} failed ({r.returncode}): {r.stderr.strip()}", 1)
        return r.stdout

    def sweep(self, name, ini, extra=()):
        """Runs a sweep file (or the built-in seed study) into DIR/NAME/results.h5."""
        d = os.path.join(self.dir, name)
        path = os.path.join(d, "results.h5")
        if not os.path.exists(path):
            os.makedirs(d, exist_ok=True)
            args = ["run"] + ([ini] if ini else []) + ["-o", path, "-q", "-j", str(THREADS)]
            self.sh(args + list(extra))
        return path

    def get(self, src):
        if src in self.done:
            return self.done[src]
        if src == "seed":
            path = self.sweep("seed", None)
            # refine resumes and leaves a decided file as it is
            self.sh(["refine", path, "-q", "-j", str(THREADS)])
            v = path
        elif src in ("ablation", "load_ramp", "self_collapse", "closed_loop", "three_tier"):
            v = self.sweep(src, os.path.join(ROOT, "sweeps", src + ".ini"))
        elif src == "limiters":
            # the grid's five limiters, and the aws row as its own run of the
            # same file with botocore's standard-mode client around the quota
            ini = os.path.join(ROOT, "sweeps", "limiters.ini")
            v = [(self.sweep("limiters", ini), {}),
                 (self.sweep("limiters_aws", ini, LIMITERS_AWS), {"retry_limiter": "aws (botocore standard)"})]
        elif src == "clients_as_shipped":
            # one run of the study per client: the file's own, then each --client
            ini = os.path.join(ROOT, "sweeps", "clients_as_shipped.ini")
            v = []
            for label, client in CLIENTS_AS_SHIPPED:
                extra = ["--client", os.path.join(ROOT, "sweeps", "clients", client)] if client else []
                v.append((self.sweep("clients_as_shipped_" + (client or "today").split(".")[0], ini, extra),
                          {"client": label}))
        elif src == "replay":
            v = json.loads(self.sh(["replay", os.path.join(ROOT, "examples", "telemetry", "incident.ini"),
                                    "--compare-policy", "guarded", "--slo", REPLAY_SLO, "--json",
                                    "-j", str(THREADS)], cwd=ROOT))
        elif src == "sim":
            v = self.sim_cases()
        elif src == "boundary":
            v = self.boundaries()
        elif src == "crn":
            d = os.path.join(self.dir, "crn")
            r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "crn-study.sh"), d],
                               stdout=subprocess.PIPE, text=True, env=dict(os.environ, STORMSWEEP_BIN=self.bin))
            if r.returncode:
                die("scripts/crn-study.sh failed", 1)
            v = r.stdout
        else:
            die(f"unknown source {src}")
        self.done[src] = v
        return v

    # sim: one JSON summary per (case, seed); cached in DIR/sim.json
    def sim_cases(self):
        path = os.path.join(self.dir, "sim.json")
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        jobs = []
        for case, (seeds, args) in SIM_CASES.items():
            for s in range(1, seeds + 1):
                jobs.append((case, s, args))

        def one(job):
            case, s, args = job
            return case, json.loads(self.sh(["sim", "--seed", str(s), "--json"] + args))

        out = {c: [] for c in SIM_CASES}
        with concurrent.futures.ThreadPoolExecutor(THREADS) as ex:
            for case, row in ex.map(one, jobs):
                out[case].append({k: row.get(k) for k in ("outcome", "recovery_ms", "passed_slo", "collapse_ms",
                                                          "return_ms", "seed")})
        naive = self.sh(["sim", "--policy", "naive"])
        out["_naive_text"] = naive
        with open(path, "w") as f:
            json.dump(out, f)
        return out

    def boundaries(self):
        d = os.path.join(self.dir, "boundary")
        os.makedirs(d, exist_ok=True)
        res = {}
        for name, args in BOUNDARIES.items():
            h5 = os.path.join(d, name + ".h5")
            txt = os.path.join(d, name + ".txt")
            if not os.path.exists(txt):
                # run in a directory of its own so the printed file names are the README's
                w = os.path.join(d, name)
                os.makedirs(w, exist_ok=True)
                out = self.sh(["boundary"] + args + ["-j", str(THREADS), "--quiet"] +
                              ([] if name == "example" else ["--no-plot"]), cwd=w)
                shutil.move(os.path.join(w, "boundary.h5"), h5)
                with open(txt, "w") as f:
                    f.write(out)
            with open(txt) as f:
                res[name] = (f.read(), h5)
        return res


SIM_CASES = {
    # the Metafor example: 10/s server, clients at 9.5/s, 3 s timeout, 4 retries, 100 slots
    "metafor": (50, ["--set", "shards=1", "--set", "workers=1", "--set", "vnodes=1", "--set", "clients=1",
                     "--set", "service_mean_ms=100", "--set", "rate_rps=9.5", "--set", "timeout_ms=3000",
                     "--set", "max_retries=4", "--set", "queue_capacity=100", "--set", "surge=none",
                     "--set", "brownout=none", "--set", "horizon_ms=1000000"]),
    "metafor_8": (20, ["--set", "shards=1", "--set", "workers=1", "--set", "vnodes=1", "--set", "clients=1",
                       "--set", "service_mean_ms=100", "--set", "rate_rps=8", "--set", "timeout_ms=3000",
                       "--set", "max_retries=0", "--set", "queue_capacity=100", "--set", "surge=none",
                       "--set", "brownout=none", "--set", "horizon_ms=1000000"]),
    "g_none": (20, ["--policy", "guarded", "--set", "deadline_drop=off"]),
    "n_none": (20, ["--policy", "naive"]),
    "g_dd": (20, ["--policy", "guarded"]),
    "n_dd": (20, ["--policy", "naive", "--set", "deadline_drop=on"]),
    "g_q512": (20, ["--policy", "guarded", "--set", "deadline_drop=off", "--set", "queue_capacity=512"]),
    "n_q512": (20, ["--policy", "naive", "--set", "queue_capacity=512"]),
    "g_q256": (20, ["--policy", "guarded", "--set", "deadline_drop=off", "--set", "queue_capacity=256"]),
    "n_q256": (20, ["--policy", "naive", "--set", "queue_capacity=256"]),
    "n_breaker": (20, ["--policy", "naive", "--set", "breaker=fail_fast"]),
    "no_retries": (20, ["--policy", "naive", "--set", "max_retries=0"]),
}

# The aws row of sweeps/limiters.ini: botocore's standard mode (3 attempts,
# delay U(0, 1) x 2^(n-1) s capped at 20 s) around the AWS retry quota.
LIMITERS_AWS = ["--set", "retry_limiter=aws", "--set", "max_retries=2", "--set", "backoff=full",
                "--set", "backoff_base_ms=1000", "--set", "backoff_cap_ms=20000",
                "--set", "backoff_multiplier=2"]

# sweeps/clients_as_shipped.ini's clients: (row label, file in sweeps/clients/ or None
# for the study's own client)
CLIENTS_AS_SHIPPED = [
    ("retries everything (today)", None),
    ("gRPC (deadline, UNAVAILABLE)", "grpc.json"),
    ("gRPC + retryThrottling", "grpc-throttled.json"),
    ("Envoy (per_try_timeout, budget)", "envoy.yaml"),
    ("gRPC hedging", "grpc-hedged.json"),
]

BOUNDARIES = {
    "example": ["--axis", "budget_ratio", "--range", "0.05:4", "--log"],
    "range1": ["--axis", "budget_ratio", "--range", "0.05:1", "--log"],
    "nodrop": ["--axis", "budget_ratio", "--range", "0.05:1", "--log", "--set", "deadline_drop=off"],
}


# ---------------------------------------------------------------- helpers

def read_runs(path, screening=False):
    """/runs (done rows only) and each point's axis values as text."""
    with h5py.File(path, "r") as f:
        runs = f["runs"][:]
        pt = f["points_text"][:]
        axes = [a.decode() if isinstance(a, bytes) else str(a) for a in f.attrs["axes"]]
        r0 = int(f["refine"].attrs["r0"]) if "refine" in f else int(f.attrs["replicates"])
    runs = runs[runs["done"] != 0]
    # outcome codes by the file's own enum names, in case codes are ever renumbered
    names = h5py.check_enum_dtype(runs.dtype["outcome"]) or {o: i for i, o in enumerate(OUTCOMES)}
    remap = {code: (OUTCOMES.index(name) if name in OUTCOMES else -1) for name, code in names.items()}
    runs["outcome"] = np.array([remap.get(int(c), -1) for c in runs["outcome"]], dtype=runs["outcome"].dtype)
    if screening:
        runs = runs[runs["replicate"] < r0]
    labels = {}
    for row in pt:
        labels[int(row["point"])] = {a: row[a].decode() for a in axes}
    return runs, labels, axes


def counts(rows):
    c = {o: int(np.sum(rows["outcome"] == i)) for i, o in enumerate(OUTCOMES)}
    c["runs"] = len(rows)
    c["passed"] = int(np.sum(rows["passed_slo"] != 0))
    return c


def prob(k, n):
    if n == 0:
        return "–"
    return "0" if k == 0 else f"{k / n:.2f}"


def secs(ms):
    return f"{ms / 1000:.2f}"


def rng(vals, fmt=lambda v: f"{v:.2f}"):
    lo, hi = min(vals), max(vals)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def t975(df):
    """Student t 0.975 quantile by bisection on the CDF (regularised beta via continued fraction)."""
    def betacf(a, b, x):
        qab, qap, qam = a + b, a + 1, a - 1
        c, d = 1.0, 1 - qab * x / qap
        d = 1 / d
        h = d
        for m in range(1, 300):
            m2 = 2 * m
            aa = m * (b - m) * x / ((qam + m2) * (a + m2))
            d = 1 / (1 + aa * d)
            c = 1 + aa / c
            h *= d * c
            aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
            d = 1 / (1 + aa * d)
            c = 1 + aa / c
            h *= d * c
        return h

    def ibeta(a, b, x):
        if x <= 0:
            return 0.0
        lb = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
        if x < (a + 1) / (a + b + 2):
            return math.exp(lb) * betacf(a, b, x) / a
        return 1 - math.exp(lb) * betacf(b, a, 1 - x) / b

    def cdf(t):
        x = df / (df + t * t)
        return 1 - 0.5 * ibeta(df / 2, 0.5, x)

    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < 0.975 else (lo, mid)
    return (lo + hi) / 2


def case_text(rows):
    """One sim case over its seeds: outcomes, recovery range, passes."""
    n = len(rows)
    by = {}
    for r in rows:
        by[r["outcome"]] = by.get(r["outcome"], 0) + 1
    rec = [r["recovery_ms"] for r in rows if r["recovery_ms"] is not None]
    passed = sum(1 for r in rows if r["passed_slo"])
    if by.get("recovered", 0) == n:
        return f"recovers in {rng(rec, lambda v: secs(v))} s ({passed} of {n} pass)"
    parts = []
    for o in OUTCOMES:
        if by.get(o):
            parts.append(f"{o} {by[o]}" + (f" ({rng(rec, lambda v: secs(v))} s)" if o == "recovered" else ""))
    if len(parts) == 1:
        only = next(o for o in OUTCOMES if by.get(o))
        return f"{only} ({n} of {n})"
    return ", ".join(parts) + f"; {passed} of {n} pass"


def fence(text):
    return "```\n" + text.rstrip("\n") + "\n```"


# ---------------------------------------------------------------- blocks

def b_sim_naive(S):
    text = S.get("sim")["_naive_text"]
    # the one non-deterministic figure: wall time
    text = re.sub(r"[0-9.]+ ms wall, ", "", text)
    return fence("$ stormsweep sim --policy naive\n" + text)


def seed_cells(path):
    runs, labels, _ = read_runs(path, screening=True)
    pts = np.array(sorted(labels))
    lab = labels
    budgets, cs, vn, caps = [], [], [], []
    for p in pts:
        for key, lst in (("budget_ratio", budgets), ("capacity_factor", cs), ("vnodes", vn),
                         ("backoff_cap_ms", caps)):
            if lab[p][key] not in lst:
                lst.append(lab[p][key])
    num = lambda v: float(v)
    budgets.sort(key=num)
    cs.sort(key=num)
    vn.sort(key=num)
    caps.sort(key=num)
    by_point = {p: runs[runs["point"] == p] for p in pts}

    def sel(**want):
        rows = [by_point[p] for p in pts if all(lab[p][k] == v for k, v in want.items())]
        return counts(np.concatenate(rows)) if rows else counts(runs[:0])

    return runs, lab, budgets, cs, vn, caps, sel


def b_seed_table(S):
    runs, lab, budgets, cs, vn, caps, sel = seed_cells(S.get("seed"))
    n_cell = sel(budget_ratio=budgets[0], capacity_factor=cs[0])["runs"]
    out = [f"P(metastable) / P(slow) / P(collapsed) / **P(pass)** per cell, {n_cell} screening runs each "
           f"({len(vn)} vnodes × {len(caps)} backoff caps × {n_cell // (len(vn) * len(caps))} replicates; "
           f"0 = no run, 0.00 = under 0.005):", "",
           "| budget_ratio | " + " | ".join(f"c = {c}" for c in cs) + " |",
           "|---" * (len(cs) + 1) + "|"]
    for b in budgets:
        cells = []
        for c in cs:
            k = sel(budget_ratio=b, capacity_factor=c)
            n = k["runs"]
            cells.append(f"{prob(k['metastable'], n)} / {prob(k['slow'], n)} / {prob(k['collapsed'], n)} / "
                         f"**{prob(k['passed'], n)}**")
        name = f"{b} (none)" if b == "inf" else b
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def b_seed_findings(S):
    runs, lab, budgets, cs, vn, caps, sel = seed_cells(S.get("seed"))
    fin = [b for b in budgets if b != "inf"]
    p = lambda k, key: k[key] / k["runs"] if k["runs"] else math.nan
    out = []
    pr = lambda k, key: prob(k[key], k["runs"])
    by_c = lambda b, key: ", ".join(pr(sel(budget_ratio=b, capacity_factor=c), key) for c in cs)
    cl = f"for c = {', '.join(cs)}"
    # the budget's edges
    safe = None
    for b in budgets:
        if sel(budget_ratio=b)["metastable"] == 0:
            safe = b
        else:
            break
    lowest = fin[0]
    noinf = sel(budget_ratio="inf")
    healthy = noinf["runs"] - noinf["collapsed"]
    worst = [b for b in fin if sel(budget_ratio=b)["metastable"] > 0]
    out.append("- **The retry budget.** " +
               (f"No run is metastable at budget_ratio ≤ {safe}. " if safe else "Every budget has metastable runs. ") +
               f"At {lowest}, P(pass) is {by_c(lowest, 'passed')} {cl}. " +
               (f"At {worst[-1]}, P(metastable) is {by_c(worst[-1], 'metastable')}. " if worst else "") +
               f"Without a budget, {noinf['metastable']} of the {healthy} runs with a healthy baseline "
               f"(not `collapsed`) are metastable.")
    # the bounded-load factor where it moves P(pass) or P(metastable)
    moves = []
    for b in budgets:
        for key, what in (("passed", "P(pass)"), ("metastable", "P(metastable)")):
            ps = [p(sel(budget_ratio=b, capacity_factor=c), key) for c in cs]
            if max(ps) - min(ps) >= 0.25:
                moves.append(f"at budget {b}, {what} is {by_c(b, key)}")
    if moves:
        out.append(f"- **The bounded-load factor** c ({', '.join(cs)}) moves the edges: " + "; ".join(moves) + ".")
    # vnodes and collapse
    coll = {(v, c): sel(vnodes=v, capacity_factor=c) for v in vn for c in cs}
    with_c = [(v, c) for (v, c), k in coll.items() if k["collapsed"]]
    text = "- **vnodes.** " + "; ".join(
        f"vnodes = {v}, c = {c}: {coll[(v, c)]['collapsed']} of {coll[(v, c)]['runs']} runs `collapsed` "
        f"(no healthy baseline)" for v, c in with_c)
    others = len(coll) - len(with_c)
    text += (f"; the other {others} vnodes × c cells have no collapsed run." if with_c else
             "No vnodes × c cell has a collapsed run.")
    spread = 0.0
    for b in budgets:
        for c in cs:
            ps = [p(sel(budget_ratio=b, capacity_factor=c, vnodes=v), "passed") for v in vn]
            if any(coll[(v, c)]["collapsed"] for v in vn):
                continue
            spread = max(spread, max(ps) - min(ps))
    text += f" Elsewhere vnodes moves P(pass) of a budget × c cell by at most {spread:.2f}."
    out.append(text)
    # backoff
    m = [p(sel(budget_ratio="inf", backoff_cap_ms=cap), "metastable") for cap in caps]
    q = [p(sel(budget_ratio=lowest, backoff_cap_ms=cap), "passed") for cap in caps]
    flat = max(m) - min(m) < 0.05 and max(q) - min(q) < 0.05
    out.append(f"- **Backoff** {'does not move the outcome here' if flat else 'moves the outcome'}: over "
               f"backoff_cap_ms = {', '.join(caps)}, P(metastable) without a budget is {rng(m)} and P(pass) at "
               f"budget {lowest} is {rng(q)}.")
    return "\n".join(out)


def b_seed_recommend(S):
    path = S.get("seed")
    d = os.path.dirname(path)
    prefer = ["--prefer", "vnodes=150", "--prefer", "capacity_factor=1.25", "--prefer", "budget_ratio=0.1",
              "--prefer", "backoff_cap_ms=1000"]
    article = [l for l in S.sh(["recommend", "results.h5", "--no-headroom"] + prefer, cwd=d).splitlines()
               if "Preferred (--prefer" in l]
    return fence("$ stormsweep recommend results.h5\n" +
                 S.sh(["recommend", "results.h5", "-j", str(THREADS)], cwd=d) +
                 "\n$ stormsweep recommend results.h5 --no-headroom " + " ".join(prefer) + " | grep Preferred\n" +
                 "\n".join(article) + "\n")


USERS_SLO = "p99<=200ms,errors<=1%"
USERS_SEEDS = 20


def b_seed_users(S):
    """What users saw: naive, guarded and the seed study's recommendation,
    USERS_SEEDS sim seeds each, judged by USERS_SLO."""
    path = S.get("seed")
    d = os.path.dirname(path)
    text = S.sh(["recommend", "results.h5", "--no-headroom"], cwd=d)
    m = re.search(r"RECOMMENDED[^:]*: point (\d+): ", text)
    if not m:
        die("seed-users: the seed study recommends no point", 1)
    _, labels, axes = read_runs(path)
    rec = labels[int(m.group(1))]
    # the seed study's scenario (sweeps/seed.ini) with the point's settings
    scen = ["--set", "deadline_drop=on", "--set", "backoff=full", "--set", "backoff_base_ms=10"]
    rows = [("`naive`", ["--policy", "naive"]), ("`guarded`", ["--policy", "guarded"]),
            ("recommended: " + " ".join(f"{a}={rec[a]}" for a in axes),
             scen + [x for a in axes for x in ("--set", f"{a}={rec[a]}")])]

    def one(job):
        i, s, args = job
        return i, json.loads(S.sh(["sim", "--seed", str(s), "--json", "--slo", USERS_SLO] + args))

    jobs = [(i, s, args) for i, (_, args) in enumerate(rows) for s in range(1, USERS_SEEDS + 1)]
    got = {i: [] for i in range(len(rows))}
    with concurrent.futures.ThreadPoolExecutor(THREADS) as ex:
        for i, j in ex.map(one, jobs):
            got[i].append(j["latency"])

    def med(vals, fmt):
        v = [x for x in vals if x is not None]
        return fmt(float(np.median(v))) if v else "—"

    out = [f"| client ({USERS_SEEDS} seeds, medians) | p99 latency before / during / after the faults "
           f"| error rate before / during / after | user recovery ({USERS_SLO}) | runs passing (within 1.5 s) |",
           "|---|---|---|---|---|"]
    for i, (title, _) in enumerate(rows):
        lat = got[i]
        p99 = " / ".join(med([l[ph]["p99_ms"] for l in lat], lambda v: f"{v:.0f} ms")
                         for ph in ("baseline", "during", "after"))
        err = " / ".join(med([l[ph]["error_rate"] for l in lat], lambda v: f"{100 * v:.1f}%")
                         for ph in ("baseline", "during", "after"))
        ur = [l["user_recovery_ms"] for l in lat]
        never = sum(1 for u in ur if u is None)
        if never * 2 >= len(ur):
            urec = f"not by the horizon in {never} of {len(ur)}"
        else:
            urec = med(ur, lambda v: f"{v:.0f} ms") + (f" ({never} not by the horizon)" if never else "")
        ok = sum(1 for u in ur if u is not None and u <= 1500)
        out.append(f"| {title} | {p99} | {err} | {urec} | {ok}/{len(ur)} |")
    return "\n".join(out)


def b_seed_refine(S):
    path = S.get("seed")
    runs, lab, _ = read_runs(path)
    with h5py.File(path, "r") as f:
        a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f["refine"].attrs.items()}
        cand = f["refine/candidates"][:]
        npts = int(f.attrs["n_points"])
    status = a["status"]
    text = (f"Screening left {int(a['n_candidates'])} of the {npts} points as candidates; refine spent "
            f"{int(a['runs_appended'])} fresh runs in {int(a['rounds'])} round(s)")
    if status == "proven":
        row = cand[cand["point"] == a["decided_point"]][0]
        p = int(a["decided_point"])
        text += (f" and proved rank {int(a['decided_rank'])}, point {p} ("
                 + " ".join(f"{k}={v}" for k, v in lab[p].items()) +
                 f"): {int(row['runs'])} fresh runs, {int(row['not_passing'])} not passing, "
                 f"{int(row['metastable'])} metastable.")
    else:
        text += f"; status: {status}."
    return text


def b_shedding_table(S):
    sim = S.get("sim")
    n = len(sim["g_none"])
    rows = [
        ("none (the seed scenario as first defined)", "g_none", "n_none"),
        ("`deadline_drop = on` (= `guarded`)", "g_dd", "n_dd"),
        ("`queue_capacity = 512`", "g_q512", "n_q512"),
        ("`queue_capacity = 256`", "g_q256", "n_q256"),
        ("`breaker = fail_fast` (naive + breakers)", None, "n_breaker"),
        ("`max_retries = 0` (no retries at all)", None, "no_retries"),
    ]
    out = [f"| change to the seed scenario ({n} seeds each) | budget + jitter | naive |", "|---|---|---|"]
    for title, g, nv in rows:
        out.append(f"| {title} | {case_text(sim[g]) if g else '—'} | {case_text(sim[nv])} |")
    return "\n".join(out)


def b_metafor(S):
    sim = S.get("sim")
    rows = sim["metafor"]
    n = len(rows)
    coll = [r["collapse_ms"] / 1000 for r in rows if r["outcome"] == "collapsed" and r["collapse_ms"] is not None]
    ret = sum(1 for r in rows if r.get("return_ms") is not None)
    text = f"ends `collapsed` in {len(coll)} of {n} seeds (`--seed 1..{n}`)"
    if len(coll) > 1:
        m = statistics.mean(coll)
        h = t975(len(coll) - 1) * statistics.stdev(coll) / math.sqrt(len(coll))
        text += (f": **mean time to collapse {m:.0f} s, 95% CI [{m - h:.0f}, {m + h:.0f}] s** "
                 f"(range {min(coll):.0f}–{max(coll):.0f} s), and {ret} of them return to healthy within the "
                 f"1000 s horizon")
    by = {}
    for r in sim["metafor_8"]:
        by[r["outcome"]] = by.get(r["outcome"], 0) + 1
    text += (". The same server at 8/s with no retries: " +
             ", ".join(f"{o} in {by[o]}" for o in OUTCOMES if by.get(o)) + f" of {len(sim['metafor_8'])} seeds.")
    return text


def b_self_collapse(S):
    runs, lab, axes = read_runs(S.get("self_collapse"))
    loads = sorted({l["load"] for l in lab.values()}, key=float)
    retries = sorted({l["max_retries"] for l in lab.values()}, key=float)
    qcaps = sorted({l["queue_capacity"] for l in lab.values()}, key=float)
    out = ["Collapsed runs of each point, with the mean time to collapse of those that started healthy:", "",
           "| load | max_retries | " + " | ".join(f"queue_capacity {q}" for q in qcaps) + " |",
           "|---|---|" + "---|" * len(qcaps)]
    for l in loads:
        for r in retries:
            cells = []
            for q in qcaps:
                p = [k for k, v in lab.items() if v["load"] == l and v["max_retries"] == r and v["queue_capacity"] == q]
                rows = runs[runs["point"] == p[0]]
                col = rows[rows["outcome"] == OUTCOMES.index("collapsed")]
                t = col["collapse_ms"][col["collapse_ms"] > 0]
                cell = f"{len(col)}/{len(rows)}"
                if len(t):
                    cell += f", {np.mean(t) / 1000:.0f} s"
                if len(col) and np.all(col["collapse_ms"] == 0):
                    cell += ", never healthy"
                elif len(col) > len(t):
                    cell += f" ({len(col) - len(t)} never healthy)"
                cells.append(cell)
            out.append(f"| {l} | {r} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def b_ablation_table(S):
    path = S.get("ablation")
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "ablation-table.sh"), path, S.bin],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode:
        die("scripts/ablation-table.sh failed", 1)
    return r.stdout.rstrip("\n")


def b_ablation_findings(S):
    runs, lab, _ = read_runs(S.get("ablation"))

    def pts(**want):
        return [p for p, v in lab.items() if all(v[k] == w for k, w in want.items())]

    def stats(ps):
        rows = runs[np.isin(runs["point"], ps)]
        k = counts(rows)
        rec = np.where(np.isnan(rows["recovery_ms"]), np.inf, rows["recovery_ms"])
        return k, rec

    def med(p):
        _, rec = stats([p])
        return float(np.median(rec))

    def mtxt(vals):
        vals = [v for v in vals]
        if any(math.isinf(v) for v in vals):
            return "not recovered" if all(math.isinf(v) for v in vals) else "partly not recovered"
        return rng(vals, lambda v: f"{v:.0f}") + " ms"

    out = []
    k, _ = stats(pts(budget_ratio="inf", codel_target_ms="inf"))
    out.append(f"- **No budget, no CoDel** (with or without deadline drop or jitter): metastable in "
               f"{k['metastable']} of {k['runs']} runs, P(pass) {k['passed'] / k['runs']:.2f}.")
    ps = pts(budget_ratio="0.1", codel_target_ms="inf", deadline_drop="off")
    k, _ = stats(ps)
    out.append(f"- **A budget alone** (no shedding, with or without jitter): P(pass) {k['passed'] / k['runs']:.2f}, median recovery "
               f"{mtxt([med(p) for p in ps])}, {k['metastable']} of {k['runs']} metastable.")
    ps = pts(budget_ratio="0.1", codel_target_ms="inf", deadline_drop="on")
    k, _ = stats(ps)
    out.append(f"- **Budget + deadline drop** (`guarded`, with or without jitter): P(pass) {k['passed'] / k['runs']:.2f}, "
               f"median recovery {mtxt([med(p) for p in ps])}.")
    ps0 = [p for p in pts(budget_ratio="inf") if lab[p]["codel_target_ms"] != "inf"]
    ps1 = [p for p in pts(budget_ratio="0.1") if lab[p]["codel_target_ms"] != "inf"]
    k0, _ = stats(ps0)
    k1, _ = stats(ps1)
    out.append(f"- **CoDel** without a budget: P(pass) {k0['passed'] / k0['runs']:.2f}, median recovery "
               f"{mtxt([med(p) for p in ps0])}; with a budget: P(pass) {k1['passed'] / k1['runs']:.2f}, "
               f"{mtxt([med(p) for p in ps1])}.")
    diffs = []
    for p in pts(backoff="none"):
        q = [x for x in pts(backoff="full") if all(lab[x][a] == lab[p][a] for a in lab[p] if a != "backoff")][0]
        a, b = med(p), med(q)
        if not (math.isinf(a) or math.isinf(b)):
            diffs.append((abs(a - b), lab[p], a, b))
    diffs.sort(key=lambda d: -d[0])
    with_budget = [d for d in diffs if d[1]["budget_ratio"] != "inf"]
    if diffs:
        d = diffs[0]
        out.append(f"- **Backoff** (full jitter against none, all else equal) changes the median recovery by at most "
                   f"{d[0]:.0f} ms: {d[2]:.0f} → {d[3]:.0f} ms at budget {d[1]['budget_ratio']}, "
                   f"codel_target_ms {d[1]['codel_target_ms']}, deadline_drop {d[1]['deadline_drop']}"
                   + (f"; with a budget by at most {with_budget[0][0]:.0f} ms." if with_budget else "."))
    return "\n".join(out)


def b_load_ramp(S):
    runs, lab, _ = read_runs(S.get("load_ramp"))
    loads = sorted({v["load"] for v in lab.values()}, key=float)
    pols = sorted({v["policy"] for v in lab.values()})

    def cell(pol, l):
        p = [k for k, v in lab.items() if v["policy"] == pol and v["load"] == l][0]
        k = counts(runs[runs["point"] == p])
        return " / ".join(str(k[o]) for o in ("recovered", "slow", "metastable", "collapsed")) + f" / **{k['passed']}**"

    n = counts(runs[runs["point"] == 0])["runs"]
    out = [f"Runs recovered / slow / metastable / collapsed / **passed the SLO**, of {n} per point:", "",
           "| load | " + " | ".join(pols) + " |", "|---|" + "---|" * len(pols)]
    for l in loads:
        out.append(f"| {l} | " + " | ".join(cell(pol, l) for pol in pols) + " |")
    return "\n".join(out)


def boundary_h5(path):
    with h5py.File(path, "r") as f:
        g = f["boundary"]
        return (g["crossing"][0], g["interval_lo"][0], g["interval_hi"][0], g["status"][0])


def crossing_text(b, i):
    x, lo, hi, st = b[0][i], b[1][i], b[2][i], b[3][i]
    if st == 1:
        return f"at {x:.3g} [{lo:.3g}, {hi:.3g}]"
    return {2: "below the range", 3: "above the range", 4: "absent (every run had the same outcome)"}.get(int(st), "?")


def b_boundary_example(S):
    text, _ = S.get("boundary")["example"]
    return fence("$ build/stormsweep boundary --axis budget_ratio --range 0.05:4 --log\n" + text)


def b_boundary_findings(S):
    res = S.get("boundary")
    e, r1, nd = (boundary_h5(res[k][1]) for k in ("example", "range1", "nodrop"))
    return (f"On the seed scenario (the shedding server, vnodes 150, c = 1.25) P(bad) crosses 0.5 "
            f"{crossing_text(e, 0)} (budget_ratio) and P(pass) falls below 0.9 {crossing_text(e, 1)}. "
            f"With `--range 0.05:1` the pass edge is {crossing_text(r1, 1)} and the bad crossing is "
            f"{crossing_text(r1, 0)}. Without load shedding (`--set deadline_drop=off`, same range) the bad "
            f"crossing is {crossing_text(nd, 0)} and the pass edge is {crossing_text(nd, 1)}.")


def b_crn_table(S):
    """crn-study.py's ratios (variance with crn = off / on) as a Markdown table."""
    rows, quantities = {}, []
    for line in S.get("crn").splitlines():
        # fixed columns: f"{axis:16} {quantity:14} {across:>26} {within:>26}"
        v = line[31:].split()
        if len(line) > 31 and not line.startswith("axis") and len(v) == 2:
            a, q = line[:16].strip(), line[17:31].strip()
            rows.setdefault(a, {})[q] = f"{v[0]} / {v[1]}"
            if q not in quantities:
                quantities.append(q)
    out = ["| axis | " + " | ".join(quantities) + " |", "|---" * (len(quantities) + 1) + "|"]
    for a, q in rows.items():
        out.append(f"| {'all axes' if a == 'all' else a} | " + " | ".join(q.get(n, "–") for n in quantities) + " |")
    return "\n".join(out)


def analyze_table(S, src):
    """The study tables: one row per grid point (in grid order) from
    `analyze --json`, 95 % Wilson intervals. A source is one result file, or
    a list of (file, {column: value}) whose rows follow one another, each
    file's fixed columns standing for an axis it does not have."""
    parts = S.get(src)
    if isinstance(parts, str):
        parts = [(parts, {})]

    def ci(p, w):
        return f"{p:.2f} [{w[0]:.2f}, {w[1]:.2f}]"

    def ms(p, censor):
        return f">{censor:.0f}" if p is None else f"{p:.0f}"

    cols, rows = [], []
    for path, fixed in parts:
        d = json.loads(S.sh(["analyze", path, "--json"]))
        for c in list(fixed) + d["axes"]:
            if c not in cols:
                cols.append(c)
        for pt in sorted(d["points"], key=lambda q: q["point"]):
            vals = dict(fixed)
            vals.update({a: pt["settings_text"][a] for a in d["axes"]})
            amp = pt["amplification"]["mean"] if isinstance(pt.get("amplification"), dict) else None
            rows.append((vals, [str(pt["runs"]), f"{pt['recovered']} / {pt['slow']} / {pt['metastable']}",
                                ci(pt["p_metastable"], pt["p_metastable_wilson"]),
                                ci(pt["p_pass"], pt["p_pass_wilson"]),
                                f"{ms(pt['recovery_p50_ms'], pt['censor_ms'])} / "
                                f"{ms(pt['recovery_p90_ms'], pt['censor_ms'])}",
                                "–" if amp is None else f"{amp:.2f}"]))
    head = cols + ["runs", "rec / slow / meta", "P(metastable) [95% CI]", "P(pass SLO) [95% CI]",
                   "recovery p50 / p90 ms", "amplification"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for vals, stats in rows:
        out.append("| " + " | ".join([vals.get(c, "–") for c in cols] + stats) + " |")
    return "\n".join(out)


def b_closed_loop_table(S):
    return analyze_table(S, "closed_loop")


def b_limiters_table(S):
    return analyze_table(S, "limiters")


REPLAY_SLO = "p99<=200ms,errors<=1%"


def b_incident_replay(S):
    """stormsweep replay of examples/telemetry/incident.ini: today's client
    against guarded, means over replicates with 95% intervals."""
    d = S.get("replay")

    def mean(m, pct=False, unit=" ms"):
        if m["mean"] is None:
            return "—"
        f = 100 if pct else 1
        lo, hi = m["ci95"]
        txt = f"{f * m['mean']:.1f}%" if pct else f"{m['mean']:.0f}{unit}"
        if lo is None or hi is None or m["n"] < 2:
            return txt
        return txt + (f" [{f * lo:.1f}, {f * hi:.1f}]" if pct else f" [{lo:.0f}, {hi:.0f}]")

    names = {"today": "today's: 2 retries, no budget", "guarded": "`guarded`: 10% budget, full-jitter backoff"}
    out = [f"| client ({d['replicates']} replicates) | recovered | p99 during / after the surge "
           f"| errors during / after | user recovery ({REPLAY_SLO}) | attempts per request after |",
           "|---|---|---|---|---|---|"]
    for c in d["candidates"]:
        rec = f"{c['recovered']['runs']}/{c['recovered']['of']}"
        p99 = " / ".join(mean(c[ph]["p99_ms"]) for ph in ("during", "after"))
        err = " / ".join(mean(c[ph]["error_rate"], pct=True) for ph in ("during", "after"))
        u = c["user_recovery_ms"]
        urec = "never, in any run" if u["n"] == 0 else mean(u) + (
            f" ({u['n']} of {c['recovered']['of']} runs)" if u["n"] < c["recovered"]["of"] else "")
        out.append(f"| {names.get(c['client'], c['client'])} | {rec} | {p99} | {err} | {urec} "
                   f"| {c['amplification_after']['mean']:.2f} |")
    return "\n".join(out)


def b_clients_as_shipped_table(S):
    return analyze_table(S, "clients_as_shipped")


def b_three_tier_table(S):
    """sweeps/three_tier.ini: one row per layering of retries (the three
    edges' max_retries), one column per pair of inner-edge settings that
    agree (both budgets 10% or none; both edges propagating the deadline or
    neither): P(pass SLO) with its 95% Wilson interval, and the metastable
    runs."""
    d = json.loads(S.sh(["analyze", S.get("three_tier"), "--json"]))
    edges = ("max_retries", "gateway->service.max_retries", "service->store.max_retries")
    conds = [("inf", "off"), ("inf", "on"), ("0.1", "off"), ("0.1", "on")]
    cells, layers = {}, []
    for pt in d["points"]:
        s = pt["settings_text"]
        b = (s["gateway->service.budget_ratio"], s["service->store.budget_ratio"])
        p = (s["gateway->service.deadline_propagation"], s["service->store.deadline_propagation"])
        if b[0] != b[1] or p[0] != p[1]:
            continue
        lay = tuple(s[e] for e in edges)
        if lay not in layers:
            layers.append(lay)
        w = pt["p_pass_wilson"]
        cells[(lay, (b[0], p[0]))] = (f"{pt['p_pass']:.2f} [{w[0]:.2f}, {w[1]:.2f}]"
                                      f"{' · ' + str(pt['metastable']) + ' meta' if pt['metastable'] else ''}")

    def who(lay):
        names = [n for n, r in zip(("clients", "gateway", "service"), lay) if r != "0"]
        return "nobody" if not names else "everyone" if len(names) == 3 else " + ".join(names)

    head = ["who retries (2 retries each)", "no budgets, deadline not passed", "no budgets, deadline passed",
            "10% budgets, deadline not passed", "10% budgets, deadline passed"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lay in sorted(layers):
        out.append(f"| {who(lay)} | " + " | ".join(cells.get((lay, c), "–") for c in conds) + " |")
    return "\n".join(out)


BLOCKS = {
    "sim-naive": ("sim", b_sim_naive),
    "shedding-table": ("sim", b_shedding_table),
    "metafor-collapse": ("sim", b_metafor),
    "self-collapse": ("self_collapse", b_self_collapse),
    "seed-table": ("seed", b_seed_table),
    "seed-findings": ("seed", b_seed_findings),
    "seed-recommend": ("seed", b_seed_recommend),
    "seed-refine": ("seed", b_seed_refine),
    "seed-users": ("seed", b_seed_users),
    "ablation-table": ("ablation", b_ablation_table),
    "ablation-findings": ("ablation", b_ablation_findings),
    "load-ramp": ("load_ramp", b_load_ramp),
    "boundary-example": ("boundary", b_boundary_example),
    "boundary-findings": ("boundary", b_boundary_findings),
    "crn-table": ("crn", b_crn_table),
    "closed-loop-table": ("closed_loop", b_closed_loop_table),
    "limiters-table": ("limiters", b_limiters_table),
    "clients-as-shipped-table": ("clients_as_shipped", b_clients_as_shipped_table),
    "three-tier-table": ("three_tier", b_three_tier_table),
    "incident-replay": ("replay", b_incident_replay),
}

MARK = re.compile(r"<!-- generated:([a-z0-9-]+) begin -->\n(.*?)<!-- generated:\1 end -->", re.S)


def doc_files():
    files = [os.path.join(ROOT, "README.md")]
    d = os.path.join(ROOT, "docs")
    if os.path.isdir(d):
        files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".md"))
    return files


def update_images(S):
    """The README's two seed-study plots, from `report` on the refined file
    (not compared by --check: PNG bytes depend on the gnuplot build)."""
    path = S.get("seed")
    d = os.path.join(os.path.dirname(path), "report")
    shutil.rmtree(d, ignore_errors=True)
    S.sh(["report", path, "-o", d])
    for src, dst in (("heatmap_bad.png", "seed-heatmap.png"), ("queue_depth.png", "seed-queue-depth.png")):
        shutil.copyfile(os.path.join(d, src), os.path.join(ROOT, "docs", dst))
    print("updated docs/seed-heatmap.png, docs/seed-queue-depth.png")


def check_structure():
    status, seen = 0, set()
    for path in doc_files():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(path, ROOT)
        begins = re.findall(r"<!-- generated:([a-z0-9-]+) begin -->", text)
        ends = re.findall(r"<!-- generated:([a-z0-9-]+) end -->", text)
        found = [m.group(1) for m in MARK.finditer(text)]
        if sorted(begins) != sorted(found) or sorted(ends) != sorted(found):
            print(f"{rel}: a generated block is not closed (begin/end markers do not pair)", file=sys.stderr)
            status = 1
        for n in found:
            if n not in BLOCKS:
                print(f"{rel}: unknown generated block '{n}'", file=sys.stderr)
                status = 1
            if n in seen:
                print(f"{rel}: generated block '{n}' appears twice", file=sys.stderr)
                status = 1
            seen.add(n)
    for n in BLOCKS:
        if n not in seen:
            print(f"generated block '{n}' is in no document (README.md, docs/*.md)", file=sys.stderr)
            status = 1
    print(f"{len(seen)} generated block(s) well formed" if status == 0 else "generated blocks are malformed")
    return status


def main(argv):
    binary = os.path.join(ROOT, "build", "stormsweep")
    directory = None
    mode, only, skip, name, structure = None, None, set(), None, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--bin", "--dir", "--only", "--skip") and i + 1 >= len(argv):
            die(f"{a} needs a value")
        if a == "--bin":
            binary = argv[i + 1]; i += 2
        elif a == "--dir":
            directory = argv[i + 1]; i += 2
        elif a == "--only":
            only = set(argv[i + 1].split(",")); i += 2
        elif a == "--skip":
            skip |= set(argv[i + 1].split(",")); i += 2
        elif a == "--structure":
            structure = True; i += 1
        elif a in ("--update", "--check", "--list"):
            mode = a[2:]; i += 1
        elif a in ("-h", "--help"):
            print(__doc__); return 0
        elif a.startswith("-"):
            die(f"unknown option {a}")
        else:
            name = a; i += 1
    if mode == "list":
        for n, (src, _) in BLOCKS.items():
            print(f"{n:20s} {src}")
        return 0
    if mode is None and name is None:
        die("give a block NAME, --update, --check or --list (see --help)")
    if structure:
        if mode != "check":
            die("--structure goes with --check")
        return check_structure()
    for s in (only or set()) | skip:
        if s not in {v[0] for v in BLOCKS.values()}:
            die(f"unknown source {s} (sources: {', '.join(sorted({v[0] for v in BLOCKS.values()}))})")
    if not os.access(binary, os.X_OK):
        die(f"{binary} is not an executable (build first, or --bin)")
    binary = os.path.abspath(binary)
    tmp = None
    if directory is None:
        tmp = directory = tempfile.mkdtemp(prefix="readme-figures.")
    os.makedirs(directory, exist_ok=True)
    S = Sources(binary, os.path.abspath(directory))
    try:
        if name is not None:
            if name not in BLOCKS:
                die(f"unknown block {name} (see --list)")
            print(BLOCKS[name][1](S))
            return 0
        status = check_structure() if mode == "check" else 0
        checked, skipped = 0, []
        for path in doc_files():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            rel = os.path.relpath(path, ROOT)

            def repl(m):
                nonlocal status, checked
                n = m.group(1)
                if n not in BLOCKS:
                    print(f"{rel}: unknown generated block '{n}'", file=sys.stderr)
                    status = 1
                    return m.group(0)
                src = BLOCKS[n][0]
                if (only is not None and src not in only) or src in skip:
                    skipped.append(n)
                    return m.group(0)
                new = BLOCKS[n][1](S).rstrip("\n") + "\n"
                checked += 1
                if new != m.group(2):
                    if mode == "check":
                        status = 1
                        print(f"{rel}: generated block '{n}' differs from what the data give "
                              f"(scripts/readme-figures.sh --update rewrites it):", file=sys.stderr)
                        sys.stderr.writelines(difflib.unified_diff(
                            m.group(2).splitlines(True), new.splitlines(True), "README", "data", n=1))
                    return f"<!-- generated:{n} begin -->\n{new}<!-- generated:{n} end -->"
                return m.group(0)

            out = MARK.sub(repl, text)
            if mode == "update" and out != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(out)
                print(f"updated {rel}")
        if mode == "update" and "seed" not in skip and (only is None or "seed" in only):
            update_images(S)
        if skipped:
            print(f"skipped {len(skipped)} block(s): {', '.join(skipped)}")
        print(f"{checked} generated block(s) {'checked' if mode == 'check' else 'regenerated'}"
              + ("" if status == 0 else ": some differ"))
        return status
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
