#!/usr/bin/env bash
# cli_call_graph.sh — call graphs from the outside: `sim` on a three-service
# scenario prints each service's outcome, the amplification chain and what
# users saw (and --json has them); a multi-service sweep gives identical
# result datasets for -j 1 and -j 2, for two slices merged, and (when built
# with MPI) for 2 ranks; analyze and recommend read such a file; bad
# graphs are refused with a message naming the problem, and no file.
# Usage: bash cli_call_graph.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=$1
SRC=$2
T=$(mktemp -d /tmp/cli_call_graph.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
source "$SRC/tests/lib/cli_common.sh"

# work of (nearly) no time: every request's tree of attempts ends in its tick
cat >chain.ini <<'EOF'
[scenario]
service = deterministic
service_mean_ms = 1e-6
surge = none
brownout = none
horizon_ms = 3000
rate_rps = 300
timeout_ms = 1000
max_retries = 3

[service api]
calls = mid

[service mid]
service = deterministic
service_mean_ms = 1e-6
calls = db

[service db]
service = deterministic
service_mean_ms = 1e-6
error_rate = 1

[call api->mid]
max_retries = 3

[call mid->db]
max_retries = 3
EOF

# ---- sim: the chain, each service, --json ----
expect_exit 0 "$BIN" sim chain.ini
expect_in "$T/out" "services             attempts per user request, front first: api 4 -> mid 16 -> db 64"
expect_in "$T/out" "    db                 "
expect_in "$T/out" "users saw"
expect_exit 0 "$BIN" sim chain.ini --json
python3 - "$T/out" <<'EOF' || fail "sim --json services"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["services"]
assert [x["name"] for x in s] == ["api", "mid", "db"], s
assert [x["amplification"] for x in s] == [4, 16, 64], s
assert s[0]["calls"] == "mid" and s[2]["calls"] == "none", s
assert s[2]["errors"] == s[2]["attempts"] > 0, s
EOF
# --ticks-csv: each service's traces, NAME.metric, summing to its summary
expect_exit 0 "$BIN" sim chain.ini --json --ticks-csv ticks.csv
python3 - "$T/out" ticks.csv <<'EOF' || fail "sim --ticks-csv per-service columns"
import csv, json, sys
s = {x["name"]: x for x in json.load(open(sys.argv[1]))["services"]}
rows = list(csv.DictReader(open(sys.argv[2])))
for name in ("mid", "db"):
    for col, key in (("attempts", "attempts"), ("successes", "successes"), ("new_requests", "calls_in")):
        got = sum(int(r[f"{name}.{col}"]) for r in rows)
        assert got == s[name][key], (name, col, got, s[name][key])
assert "api.attempts" not in rows[0]  # the front's are the plain columns
EOF
# a single tier has no services
expect_exit 0 "$BIN" sim --json --set horizon_ms=1000 --set surge=none --set brownout=none
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["services"] is None' "$T/out" ||
  fail "a single tier's --json services should be null"
expect_exit 0 "$BIN" sim --set horizon_ms=1000 --set surge=none --set brownout=none
grep -q "services " "$T/out" && fail "a single tier printed a services line"

# ---- --client A->B=FILE: a library's policy on one call edge ----
expect_exit 0 "$BIN" sim chain.ini --client "api->mid=$SRC/sweeps/clients/grpc.json" --show-settings
expect_in "$T/out" "api->mid.backoff                 = grpc"
expect_in "$T/out" "api->mid.deadline_ms             = 500"
expect_in "$T/out" "mid->db.max_retries              = 3"
expect_in "$T/err" "-> api->mid.max_retries = 3"
# Envoy's retry budget and circuit breakers, gRPC's throttling and hedging go onto an edge
expect_exit 0 "$BIN" sim chain.ini --client "api->mid=$SRC/sweeps/clients/envoy.yaml" --show-settings
expect_in "$T/out" "api->mid.retry_limiter           = envoy"
expect_in "$T/out" "api->mid.max_requests_per_client = 1024"
expect_exit 0 "$BIN" sim chain.ini --client "mid->db=$SRC/sweeps/clients/grpc-throttled.json" --show-settings
expect_in "$T/out" "mid->db.retry_limiter            = grpc"
expect_exit 0 "$BIN" sim chain.ini --client "api->mid=$SRC/sweeps/clients/grpc-hedged.json" --show-settings
expect_in "$T/out" "api->mid.hedge_attempts          = 3"
# what no edge has is refused by name
expect_exit 2 "$BIN" sim chain.ini --set "api->mid.breaker=next_shard"
expect_in "$T/err" "a call edge's breakers fail fast"
expect_exit 2 "$BIN" sim chain.ini --set "api->mid.clients=4"
expect_in "$T/err" "api->mid.clients: a call edge has"
expect_exit 2 "$BIN" sim chain.ini --client "api->db=$SRC/sweeps/clients/grpc.json"
expect_in "$T/err" "api does not call db"
# a sweep takes it too, as [scenario] settings of the edge
expect_exit 0 "$BIN" list chain.ini --client "mid->db=$SRC/sweeps/clients/grpc.json"
expect_in "$T/out" "mid->db.backoff = grpc"

# ---- bad graphs: exit 2, one message ----
bad() { # WANT SET...
  local want=$1
  shift
  local args=()
  for s in "$@"; do args+=(--set "$s"); done
  expect_exit 2 "$BIN" sim chain.ini "${args[@]}"
  expect_in "$T/err" "$want"
}
bad "a service cannot call itself" "mid.calls=mid"
bad "in a cycle" "db.calls=api"
bad "is never called" "api.calls=db"
bad "db does not call mid" "db->mid.max_retries=1"
bad "a call edge has timeout_ms" "mid->db.crash=100+100"
bad "db.brownout_shard: 20 is not a shard" "db.brownout=100+100" "db.brownout_shard=20"
bad "db.brownout: window" "db.brownout=2900+200"
bad "db.service = empirical: a service behind the front" "db.service=empirical"
printf '[service]\nworkers = 2\n' >noname.ini
expect_exit 2 "$BIN" run noname.ini -o noname.h5
expect_in "$T/err" "[service] needs its name"
[ -e noname.h5 ] && fail "a refused sweep left noname.h5"

# ---- a sweep over a graph: -j 1 = -j 2 = two slices merged ----
cat >graph.ini <<'EOF'
[sweep]
name = graph
replicates = 3
seed = 4

[scenario]
horizon_ms = 3000
surge = none
brownout = none
rate_rps = 2000
timeout_ms = 200

[service api]
shards = 4
calls = mid | cache

[service mid]
shards = 4
service_mean_ms = 2
calls = db

[service cache]
shards = 2
service_mean_ms = 0.5

[service db]
shards = 4
workers = 4
brownout = 1000+500
brownout_factor = 0.2
brownout_shard = -1

[call mid->db]
timeout_ms = 40

[grid]
mid->db.max_retries = 0, 3
api->mid.deadline_propagation = off, on
EOF
expect_exit 0 "$BIN" run graph.ini -o j1.h5 -j 1 -q
expect_exit 0 "$BIN" run graph.ini -o j2.h5 -j 2 -q
for d in /runs /points /points_text /ticks; do
  h5diff j1.h5 j2.h5 "$d" "$d" >"$T/diff" 2>&1 || fail "h5diff $d: -j 1 and -j 2 differ: $(head -c 300 "$T/diff")"
done
# every service's series and summary, labelled: each sums to what its summary counts, the
# front's are the run's own metrics, and a strided file's rows sum to the same totals
expect_exit 0 "$BIN" run graph.ini -o every.h5 -q --set record=every=10ms
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  /usr/bin/python3 - j1.h5 every.h5 >"$T/svc.out" 2>&1 <<'PYEOF' || fail "per-service datasets: $(head -c 600 "$T/svc.out")"
import sys, h5py, numpy as np
full, every = (h5py.File(p, "r") for p in sys.argv[1:])
t = full["ticks"]
names = [n.decode() if isinstance(n, bytes) else n for n in t["service"][:]]
assert names == ["api", "mid", "cache", "db"], names
fields = [n.decode() if isinstance(n, bytes) else n for n in t["service_field"][:]]
s = t["service_summary"][:]  # run x field x service
assert s.shape == (12, len(fields), 4), s.shape
F = {f: s[:, i, :] for i, f in enumerate(fields)}
assert (F["outcome"][:, 0] == t["outcome"][:]).all(), "the front's outcome is the run's"
assert (F["attempts"][:, 0] == full["runs"]["attempts"]).all(), "the front's attempts are the run's"
sums = {"service_attempts": F["attempts"], "service_successes": F["successes"],
        "service_new_requests": F["calls"], "service_wasted": F["wasted"],
        "service_retries": F["retries"], "service_timeouts": F["timeouts"],
        "service_failed_requests": F["failed_calls"], "service_lost": F["lost"],
        "service_shed": F["dropped"] + F["shed"],
        "service_rejected_budget": F["budget_refused"],
        "service_rejected_breaker": F["breaker_refused"]}
for series, want in sums.items():
    for f in (full, every):
        got = f["ticks"][series][:].sum(axis=1)
        assert (got[:, 1:] == want[:, 1:]).all(), (f.filename, series, got[0], want[0])
rej = t["service_rejected_queue_full"][:].sum(axis=1) + t["service_rejected_router"][:].sum(axis=1)
assert (rej[:, 1:] == F["rejected"][:, 1:]).all()
assert (t["service_in_flight"][:, :, 1:] >= t["service_queue_depth"][:, :, 1:]).all()
assert (t["service_attempts"][:, :, 0] == t["attempts"][:]).all(), "front series = its metric"
assert (t["service_queue_depth"][:, :, 0] == t["queue_depth"][:]).all()
# the amplification chain: attempts at each service per front request, db behind mid
chain = F["attempts"] / F["calls"][:, :1]
assert (chain[:, 0] == full["runs"]["amplification"]).all()
retries = full["points"]["mid->db.max_retries"][full["runs"]["point"]]
assert (F["retries"][retries == 0, 3] == 0).all(), "mid->db.max_retries = 0 retries at db"
assert (F["retries"][retries == 3, 3] > 0).all() and (F["retries"][:, 3] <= 3 * F["calls"][:, 3]).all()
assert every["ticks"]["service_attempts"].shape[1] == 300, every["ticks"]["service_attempts"].shape
PYEOF
else
  echo "cli_call_graph: python3-h5py missing; per-service datasets not checked" >&2
fi
expect_exit 0 "$BIN" run graph.ini --slice 0/2 -o part-1.h5 -q
expect_exit 0 "$BIN" run graph.ini --slice 1/2 -o part-2.h5 -q
expect_exit 0 "$BIN" merge part-1.h5 part-2.h5 -o merged.h5
for d in /runs /ticks; do
  h5diff j1.h5 merged.h5 "$d" "$d" >"$T/diff" 2>&1 || fail "h5diff $d: merged slices differ: $(head -c 300 "$T/diff")"
done
if "$BIN" run --help 2>/dev/null | grep -q "built with MPI" && command -v mpirun >/dev/null; then
  OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe -np 2 "$BIN" run graph.ini -o mpi.h5 -q \
    >"$T/mpi.out" 2>&1 || fail "mpirun run: $(head -c 300 "$T/mpi.out")"
  for d in /runs /ticks; do
    h5diff j1.h5 mpi.h5 "$d" "$d" >"$T/diff" 2>&1 || fail "h5diff $d: MPI differs: $(head -c 300 "$T/diff")"
  done
fi
# --resume: killed part-way (once the file holds 2/5 of its bytes), then
# continued, it is the uninterrupted file
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
expect_exit 0 "$BIN" run graph.ini --set replicates=40 -o ref40.h5 -j 2 -q
full=$(size_of ref40.h5)
"$BIN" run graph.ini --set replicates=40 -o kill.h5 -j 1 --commit-interval 0.05 -q >"$T/bg.out" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null && [ "$(size_of kill.h5)" -lt $((full * 2 / 5)) ]; do sleep 0.02; done
if kill -9 "$pid" 2>/dev/null; then
  wait "$pid" 2>/dev/null
  expect_exit 0 "$BIN" run graph.ini --set replicates=40 -o kill.h5 -j 2 -q --resume
  for d in /runs /ticks; do
    h5diff ref40.h5 kill.h5 "$d" "$d" >"$T/diff" 2>&1 || fail "h5diff $d: resumed file differs: $(head -c 300 "$T/diff")"
  done
else
  echo "cli_call_graph: the run ended before it could be killed; --resume not exercised" >&2
fi
# the sweep keeps the graph: its text parses back, and verify reruns a point of it
h5dump -a /sweep_text j1.h5 | grep -q 'mid->db.timeout_ms = 40' || fail "sweep_text lacks the call's settings"
expect_exit 0 "$BIN" analyze j1.h5
expect_in "$T/out" "mid->db.max_retries"
expect_in "$T/out" "Per service (a call graph"
expect_in "$T/out" "a call graph of 4 services: every figure below is the front service api's"
# the per-service figures agree with the front's own: its chain link is the summary's
# amplification, its bad runs the summary's
expect_exit 0 "$BIN" analyze j1.h5 --json
python3 - "$T/out" <<'PYEOF' || fail "analyze --json services"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["services"]["names"] == ["api", "mid", "cache", "db"], d["services"]["names"]
pts = {p["point"]: p for p in d["points"]}
for p in d["services"]["points"]:
    front = p["services"][0]
    s = pts[p["point"]]
    assert front["runs"] == s["runs"], (front, s["runs"])
    assert abs(front["amplification"] - s["amplification"]["mean"]) < 1e-9, (front, s["amplification"])
    assert front["bad"] == s["bad"], (front["bad"], s["bad"])
    assert len(p["services"]) == 4 and all(x["runs"] == 3 for x in p["services"])
PYEOF
expect_exit 0 "$BIN" recommend j1.h5
# a file whose per-service datasets were tampered with: the front's figures stand, the
# per-service ones are refused with a warning naming what is wrong
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  cp j1.h5 bad-fields.h5
  cp j1.h5 bad-shape.h5
  /usr/bin/python3 - bad-fields.h5 bad-shape.h5 <<'PYEOF' || fail "tampering with the per-service datasets"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    del f["ticks/service_field"]
    f["ticks"].create_dataset("service_field", data=np.array(["outcome"] * 18, dtype=object),
                              dtype=h5py.string_dtype("ascii"))
with h5py.File(sys.argv[2], "r+") as f:
    del f["ticks/service_summary"]
    f["ticks"].create_dataset("service_summary", data=np.zeros((2, 18, 4), dtype="i4"))
PYEOF
  expect_exit 0 "$BIN" analyze bad-fields.h5
  expect_in "$T/err" "has no field 'attempts'"
  expect_in "$T/out" "Recommendation:"
  expect_exit 0 "$BIN" analyze bad-shape.h5
  expect_in "$T/err" "with a row for every run"
fi
[ "$failures" -eq 0 ] || { echo "cli_call_graph: $failures failure(s)" >&2; exit 1; }
echo "cli_call_graph: ok"
