#!/usr/bin/env bash
# cli_record.sh — the [sweep] settings record (full | every=MS | summary) and
# record_metrics: each mode's /ticks layout and root attributes; every=MS
# rows checked against a full file of the same sweep (counter sums equal the
# full rows' sums exactly, levels equal the window's last tick); report on a
# summary file; merge of two record modes and a resume with another mode
# refused; bad values refused with FILE:line and exit 2.
# Usage: bash cli_record.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_record.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
PY=/usr/bin/python3

# sweep NAME RECORD_LINES... : a small sweep (a surge, 3 s, a shorter
# horizon at one point so padding is exercised) with those [sweep] lines.
sweep() {
  local name=$1
  shift
  {
    printf '[sweep]\nreplicates = 2\nseed = 5\n'
    for l in "$@"; do printf '%s\n' "$l"; done
    printf '\n[scenario]\nshards = 4\nsurge = 800+300\ndeadline_drop = on\n'
    printf 'record_shard_queues = on\n'
    printf '\n[grid]\nhorizon_ms = 3000, 2995\nbudget_ratio = 0.1, inf\n'
  } >"$name"
}

sweep full.ini
sweep every.ini 'record = every=10ms'
sweep summary.ini 'record = summary'
sweep some.ini 'record = every=5' 'record_metrics = queue_depth, successes, attempts'
for m in full every summary some; do
  expect_exit 0 "$BIN" run "$m.ini" -o "$m.h5" -q
done

# ---- layout and attributes, decimation against the full file ----
cat >check.py <<'EOF'
import sys, h5py, numpy as np
bad = []
def want(c, what):
    if not c: bad.append(what)
full, every, summ, some = (h5py.File(n + ".h5", "r") for n in ("full", "every", "summary", "some"))
names = [m.decode() if isinstance(m, bytes) else m for m in full.attrs["metrics"]]
want("record" not in full.attrs and "rows" not in full.attrs, "a full file carries record attributes")
want(len(names) == 24, "full: %d metrics listed" % len(names))
T = int(full.attrs["ticks"])
want(full["ticks/queue_depth"].shape[1] == T, "full: /ticks width is not ticks")
# every=10ms at 1 ms ticks: 300 rows, time axis k * 10 ms
a = every.attrs
want(a["record"] == "every=10ms", "every: record = %r" % a["record"])
want(int(a["rows"]) == (T + 9) // 10, "every: rows = %r" % a["rows"])
want(float(a["row_ms"]) == 10.0, "every: row_ms = %r" % a["row_ms"])
want(np.array_equal(every["ticks/time_ms"][:], np.arange(int(a["rows"])) * 10.0), "every: time_ms")
sums = set(names[:13] + ["hops"])
for m in names:
    f, e = full["ticks/" + m][:], every["ticks/" + m][:]
    want(e.shape == (f.shape[0], int(a["rows"])), "every: %s shape %r" % (m, e.shape))
    for r in range(f.shape[0]):
        own = int(full["runs"]["ticks"][r])
        rows = (own + 9) // 10
        for k in range(rows):
            w = f[r, k * 10:min(k * 10 + 10, own)]
            got = e[r, k]
            exp = int(w.sum()) if m in sums else int(w[-1])
            if got != exp:
                bad.append("every: %s run %d row %d = %d, want %d" % (m, r, k, got, exp))
                break
        want((e[r, rows:] == -1).all(), "every: %s run %d: rows past its horizon are not -1" % (m, r))
    if m in sums:
        fs = np.where(f >= 0, f, 0).sum(axis=1)
        es = np.where(e >= 0, e, 0).sum(axis=1)
        want(np.array_equal(fs, es), "every: %s counter totals differ from the full rows'" % m)
# per-shard queue depths: levels, the window's last tick
fq, eq = full["ticks/shard_queue_depth"][:], every["ticks/shard_queue_depth"][:]
want(eq.shape[1] == int(a["rows"]), "every: shard_queue_depth width")
want(np.array_equal(eq[0, :-1], fq[0, 9:T - 1:10][: eq.shape[1] - 1]), "every: shard_queue_depth rows")
# summary: no per-tick rows, the summary and outcome kept
want(summ.attrs["record"] == "summary" and int(summ.attrs["rows"]) == 0, "summary attributes")
want(len(summ.attrs["metrics"]) == 0, "summary lists metrics")
want(not any(m in summ["ticks"] for m in names), "summary stores a metric")
want("shard_queue_depth" not in summ["ticks"], "summary stores shard queues")
want(summ["ticks/time_ms"].shape == (0,), "summary: time_ms not empty")
for col in ("outcome", "peak_queue", "successes", "ticks", "done"):
    want(np.array_equal(summ["runs"][col], full["runs"][col]), "summary: /runs %s differs" % col)
want(np.array_equal(summ["ticks/outcome"][:], full["ticks/outcome"][:]), "summary: outcome")
# record_metrics: only those datasets, every=5 (5 ticks) rows
listed = sorted(m.decode() if isinstance(m, bytes) else m for m in some.attrs["metrics"])
want(listed == ["attempts", "queue_depth", "successes"], "some: metrics %r" % listed)
want(sorted(k for k in some["ticks"] if k in names) == listed, "some: datasets")
want(np.array_equal(some["ticks/successes"][:, :-1].sum(axis=1) + some["ticks/successes"][:, -1].clip(0),
                    np.where(full["ticks/successes"][:] >= 0, full["ticks/successes"][:], 0).sum(axis=1)),
     "some: successes totals")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
if ! $PY check.py >check.out 2>&1; then fail "layout/decimation: $(head -c 1500 check.out)"; fi

# The sweep text carries the mode, and a full sweep's does not.
expect_exit 0 "$BIN" list every.ini --ini
expect_in "$T/out" "record = every=10ms"
expect_exit 0 "$BIN" list full.ini --ini
grep -qE "^record(_metrics)? =" "$T/out" && fail "a full sweep's text names record"

# ---- readers ----
expect_exit 0 "$BIN" analyze summary.h5
expect_in "$T/out" "; record = summary"
expect_exit 0 "$BIN" analyze full.h5
grep -q "record =" "$T/out" && fail "analyze names a record mode for a full file"
tail -n +2 "$T/out" >full-analyze.txt
expect_exit 0 "$BIN" analyze every.h5
expect_in "$T/out" "; record = every=10ms"
tail -n +2 "$T/out" | cmp -s - full-analyze.txt || fail "analyze of an every=10ms file differs from full's"
expect_exit 0 "$BIN" report summary.h5 -o rep-summary
expect_in "$T/out" "stores no curves"
[ -e rep-summary/queue_depth.png ] && fail "report drew a queue_depth plot from a summary file"
[ -e rep-summary/heatmap_pass.png ] || fail "report on a summary file lacks its heatmap"
expect_exit 0 "$BIN" report every.h5 -o rep-every
[ -e rep-every/queue_depth.png ] || fail "report on an every=10ms file lacks queue_depth"
# --slo on stored rows: every=10ms rows widen back to ticks exactly (the
# 100 ms latency windows are whole rows): the same pass shares as full's,
# on a grid where they lie between 0 and 1; a window that is not whole rows
# (every=30ms) and a summary file are refused.
slo_sweep() { # NAME RECORD
  printf '[sweep]
replicates = 8
seed = 5
record = %s

[scenario]
shards = 4
' "$2" >"$1"
  printf 'surge = 800+300
deadline_drop = on

[grid]
budget_ratio = 0.3, 0.5, 0.7
' >>"$1"
}
slo_sweep slo-full.ini full
slo_sweep slo-every.ini every=10ms
slo_sweep slo-30.ini every=30ms
for m in full every 30; do expect_exit 0 "$BIN" run "slo-$m.ini" -o "slo-$m.h5" -q; done
for m in full every; do
  "$BIN" analyze "slo-$m.h5" --slo "p99<=20ms" --json >"slo-$m.json" 2>"$T/err" ||
    fail "analyze slo-$m.h5 --slo: $(head -c 300 "$T/err")"
done
$PY - <<'EOF2' || fail "--slo on every=10ms rows differs from full rows"
import json
f, e = (json.load(open("slo-%s.json" % m))["points"] for m in ("full", "every"))
pf = [p["p_pass"] for p in f]
assert [p["p_pass"] for p in e] == pf, ([p["p_pass"] for p in e], pf)
assert any(0 < x < 1 for x in pf), pf   # the check can tell a difference
EOF2
expect_exit 2 "$BIN" analyze slo-30.h5 --slo "p99<=20ms"
expect_in "$T/err" "is not a whole number of the stored rows"
expect_exit 2 "$BIN" analyze summary.h5 --slo "p99<=200ms"
expect_in "$T/err" "no per-tick rows"

# ---- merge and resume refuse another mode ----
expect_exit 0 "$BIN" run summary.ini --slice 0/2 -o part-s.h5 -q
expect_exit 0 "$BIN" run full.ini --slice 1/2 -o part-f.h5 -q
expect_exit 2 "$BIN" merge part-s.h5 part-f.h5 -o merged.h5
expect_in "$T/err" "different record modes"
[ -e merged.h5 ] && fail "a refused merge left merged.h5"
expect_exit 0 "$BIN" run every.ini --slice 0/2 -o part-e0.h5 -q
expect_exit 0 "$BIN" run every.ini --slice 1/2 -o part-e1.h5 -q
expect_exit 0 "$BIN" merge part-e0.h5 part-e1.h5 -o merged-e.h5 -q
h5diff merged-e.h5 every.h5 /ticks /ticks >/dev/null || fail "merged every=10ms slices differ from one run"
cp full.h5 resumed.h5
expect_exit 2 "$BIN" run summary.ini -o resumed.h5 --resume
expect_in "$T/err" "record = summary"

# ---- verify -o: summary rows unless --record asks ----
printf '[scenario]\nshards = 4\nhorizon_ms = 3000\nsurge = 800+300\nbrownout = 800+300\n' >v.ini
expect_exit 1 "$BIN" verify v.ini --max-runs 4 -o v-summary.h5 -q
expect_exit 1 "$BIN" verify v.ini --max-runs 4 -o v-every.h5 -q --record every=10ms
cat >vcheck.py <<'EOF'
import sys, h5py
s, e = h5py.File("v-summary.h5", "r"), h5py.File("v-every.h5", "r")
ok = (s.attrs["record"] == "summary" and "queue_depth" not in s["ticks"] and
      e.attrs["record"] == "every=10ms" and e["ticks/queue_depth"].shape[1] == 300)
sys.exit(0 if ok else 1)
EOF
$PY vcheck.py || fail "verify -o: not summary by default, or --record every=10ms not stored"
expect_exit 1 "$BIN" verify v.ini --max-runs 4 -o v-summary.h5 -q --resume --record full
expect_in "$T/err" "record = summary"

# ---- bad values: FILE:line, exit 2 ----
for v in 'every=0' 'every=-5ms' 'every=abc' 'every=' 'sometimes'; do
  sweep bad.ini "record = $v"
  expect_exit 2 "$BIN" run bad.ini -o bad.h5 -q
  expect_in "$T/err" "bad.ini:4: record: expected full, every=MS"
done
sweep bad.ini 'record = every=2.5ms'
expect_exit 2 "$BIN" run bad.ini -o bad.h5 -q
expect_in "$T/err" "bad.ini:4: record: every=2.5ms is not a whole number of ticks of 1 ms"
sweep bad.ini 'record_metrics = queue_depth, sucesses'
expect_exit 2 "$BIN" run bad.ini -o bad.h5 -q
expect_in "$T/err" "bad.ini:4: record_metrics: unknown metric 'sucesses'"
[ -e bad.h5 ] && fail "a refused sweep left bad.h5"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_record: all checks passed"
