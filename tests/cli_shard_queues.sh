#!/usr/bin/env bash
# cli_shard_queues.sh — record_shard_queues = on is visible:
# `sim --ticks-csv` gets one shard_queue_K column per shard, `run` writes
# /ticks/shard_queue_depth as int32 runs x ticks x shards in chunks of one
# run, with the shard scale; the matrix agrees with the engine's own
# max_shard_queue metric at every tick (a known truth: that metric is the
# largest shard queue); without the setting neither appears; slices merged
# give the same matrix as one run; resume and merge keep it.
#
# usage: bash tests/cli_shard_queues.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=${1:?usage: cli_shard_queues.sh STORMSWEEP_BIN SOURCE_DIR}
PY=/usr/bin/python3
T=$(mktemp -d /tmp/cli_shard_queues.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"

cat >tiny.ini <<'INI'
[sweep]
name = shardq
replicates = 2
seed = 3

[scenario]
shards = 3
horizon_ms = 2000
surge = 800+300
brownout = 800+300
record_shard_queues = on

[grid]
budget_ratio = 0.1, inf
INI

# ---- sim --ticks-csv ----
"$BIN" sim --set shards=3 --set horizon_ms=2000 --set surge=800+300 --set brownout=800+300 \
  --set record_shard_queues=on --ticks-csv q.csv \
  >/dev/null 2>sim.err || fail "sim with record_shard_queues failed: $(cat sim.err)"
head -1 q.csv | grep -q ',budget_tokens,shard_queue_0,shard_queue_1,shard_queue_2,requests_ended,' ||
  fail "sim --ticks-csv header lacks the shard columns: $(head -1 q.csv)"
# Every row: max of the shard columns == max_shard_queue.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { m = -1; for (k = 0; k < 3; k++) { v = $(col["shard_queue_" k]); if (v > m) m = v }
    if (m != $(col["max_shard_queue"])) { bad++; if (bad < 3) print "tick " $1 ": " m " vs " $(col["max_shard_queue"]) } }
  END { exit bad ? 1 : 0 }' q.csv >awk.out || fail "shard columns disagree with max_shard_queue: $(cat awk.out)"
[ "$(wc -l <q.csv)" -eq 2001 ] || fail "sim --ticks-csv has $(wc -l <q.csv) lines, want 2001"
"$BIN" sim --set shards=3 --set horizon_ms=2000 --set surge=800+300 --set brownout=800+300 \
  --ticks-csv plain.csv >/dev/null 2>&1
head -1 plain.csv | grep -q shard_queue_0 && fail "shard columns without record_shard_queues"

# ---- run: /ticks/shard_queue_depth ----
"$BIN" run tiny.ini -o one.h5 -q -j 2 2>run.err || fail "run failed: $(cat run.err)"
"$BIN" run tiny.ini -o plain.h5 -q -j 2 --set record_shard_queues=off 2>>run.err ||
  fail "run without shard queues failed: $(cat run.err)"
if [ -x "$PY" ] && "$PY" -c 'import h5py' 2>/dev/null; then
  "$PY" - one.h5 plain.h5 >py.out 2>&1 <<'PYEOF' || fail "checking /ticks/shard_queue_depth: $(cat py.out)"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    d = f["ticks/shard_queue_depth"]
    assert d.dtype == np.int32, d.dtype
    assert d.shape == (4, 2000, 3), d.shape
    assert d.chunks == (1, 2000, 3), d.chunks
    assert d.compression == "gzip" and d.shuffle, (d.compression, d.shuffle)
    assert [d.dims[i].label for i in range(3)] == ["run", "time_ms", "shard"] or \
        [list(d.dims[i].keys()) for i in range(3)] == [["run"], ["time_ms"], ["shard"]], \
        [list(d.dims[i].keys()) for i in range(3)]
    assert list(f["ticks/shard"][:]) == [0, 1, 2]
    m = d[:]
    assert (m.max(axis=2) == f["ticks/max_shard_queue"][:]).all(), "max over shards != max_shard_queue"
    assert (m >= 0).all()
    assert d.attrs["units"] and d.attrs["long_name"]
with h5py.File(sys.argv[2], "r") as f:
    assert "shard_queue_depth" not in f["ticks"], "written without record_shard_queues"
print("ok")
PYEOF
else
  echo "SKIP: Debian's python3-h5py is missing; /ticks/shard_queue_depth checked with h5ls only"
  h5ls one.h5/ticks/shard_queue_depth | grep -q '{4/Inf, 2000, 3}' ||
    fail "/ticks/shard_queue_depth is not 4 x 2000 x 3: $(h5ls one.h5/ticks/shard_queue_depth)"
fi

# ---- slices merged, and analyze reads the file ----
"$BIN" run tiny.ini --slice 0/2 -o s0.h5 -q 2>>run.err || fail "slice 0/2 failed"
"$BIN" run tiny.ini --slice 1/2 -o s1.h5 -q 2>>run.err || fail "slice 1/2 failed"
"$BIN" merge s0.h5 s1.h5 -o merged.h5 >/dev/null 2>merge.err || fail "merge failed: $(cat merge.err)"
for obj in /ticks/shard_queue_depth /ticks/outcome /ticks/queue_depth /runs; do
  h5diff one.h5 merged.h5 "$obj" "$obj" >diff.out 2>&1 ||
    fail "h5diff $obj: one run and merged slices differ: $(head -c 300 diff.out)"
done
"$BIN" analyze one.h5 >an.out 2>&1 || fail "analyze of a file with shard queues failed: $(cat an.out)"

[ "$failures" -eq 0 ] && echo "cli_shard_queues: all passed" && exit 0
exit 1
