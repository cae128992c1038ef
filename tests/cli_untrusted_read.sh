#!/usr/bin/env bash
# cli_untrusted_read.sh — small untrusted inputs must not ask for big work
# (items 10 and 11): each is refused (exit 2, one line naming the
# file) while the process may use at most 400 MB of address space, which
# the old code overran (it expanded every axis, or allocated per declared
# run, before refusing):
#  * a 551-byte sweep file of 16 axes of lin(1, 100, 1000000) given to `run`;
#  * a result part whose stored sweep_text is that grid, given to `merge`
#    (and to `analyze`, which ignores such a text and analyses the file);
#  * a result part (under 256 KB) that declares 10^9 runs (every table
#    sized for them, nothing stored), given to `merge`.
# test_hostile.c covers the analysis reader's other hostile files.
# Needs /usr/bin/python3 with h5py for the part files (skipped without).
#
# usage: bash tests/cli_untrusted_read.sh STORMSWEEP_BIN SOURCE_DIR
set -u
# shellcheck source=lib/cli_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_common.sh"
BIN=$1
T=$(mktemp -d /tmp/cli_untrusted_read.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# capped CMD...: runs CMD with at most 400 MB of virtual memory (not under
# a sanitizer, whose shadow memory needs terabytes of address space).
if ldd "$BIN" 2>/dev/null | grep -qE 'lib[at]san'; then
  capped() { "$@"; }
else
  capped() { (ulimit -v 400000 && "$@"); }
fi

# refused WANT CMD...: exit 2 within the memory cap, stderr exactly WANT.
refused() {
  local want=$1
  shift
  capped "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" != 2 ]; then
    fail "'$*' exited $got, want 2; stderr: $(head -c 600 "$T/err")"
  elif [ "$(cat "$T/err")" != "$want" ]; then
    fail "'$*' stderr:"$'\n'"  got      '$(cat "$T/err")'"$'\n'"  expected '$want'"
  fi
}

# ---- item 11: the grid's size is known before any axis is expanded ----
keys="load vnodes workers shards clients timeout_ms max_retries budget_ratio service_mean_ms
      queue_capacity surge_factor keys zipf_s backoff_base_ms backoff_cap_ms budget_max_tokens"
{
  echo "[grid]"
  for k in $keys; do echo "$k = lin(1, 100, 1000000)"; done
} >big.ini
big_msg="vnodes: its 1000000 values take the grid past 10000000 points (the most a sweep may have; use fewer values or replicates instead)"
refused "stormsweep run: big.ini:3: $big_msg" "$BIN" run big.ini -o big.h5
[ ! -e big.h5 ] || fail "run big.ini left big.h5 behind"
refused "stormsweep list: big.ini:3: $big_msg" "$BIN" list big.ini

py=/usr/bin/python3
if ! "$py" -c 'import h5py' 2>/dev/null; then
  echo "skipped the result-file cases: $py has no h5py (apt-get install python3-h5py)"
  [ "$failures" -eq 0 ] || exit 1
  exit 0
fi

cat >tiny.ini <<'INI'
[sweep]
replicates = 2
[scenario]
horizon_ms = 3000
[grid]
vnodes = 10, 50
INI
expect_exit 0 "$BIN" run tiny.ini --slice 0/2 -o part-0.h5 -q
expect_exit 0 "$BIN" run tiny.ini --slice 1/2 -o part-1.h5 -q

# A part whose sweep_text is the huge grid (merge re-parses it).
cp part-0.h5 text-0.h5
"$py" - text-0.h5 big.ini <<'EOF' || fail "could not write text-0.h5"
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    f.attrs["sweep_text"] = open(sys.argv[2]).read()
EOF
refused "stormsweep merge: text-0.h5 (its sweep_text):3: $big_msg" \
  "$BIN" merge text-0.h5 -o m1.h5
[ ! -e m1.h5 ] || fail "merge left m1.h5 behind"
capped "$BIN" analyze text-0.h5 >"$T/out" 2>"$T/err" ||
  fail "analyze text-0.h5 failed: $(head -c 600 "$T/err")"

# ---- item 10: a part that only declares a billion runs ----
cat >one.ini <<'INI'
[scenario]
horizon_ms = 3000
INI
expect_exit 0 "$BIN" run one.ini --set replicates=2 -o one.h5 -q
cp one.h5 huge.h5
"$py" - huge.h5 <<'EOF' || fail "could not write huge.h5"
import sys, h5py, numpy as np
n = 10**9
with h5py.File(sys.argv[1], "r+") as f:
    f.attrs["n_runs"] = np.int64(n)
    f.attrs["replicates"] = np.int64(n)
    text = f.attrs["sweep_text"].replace("replicates = 2", "replicates = 1000000000")
    f.attrs.create("sweep_text", text, dtype=f.attrs.get_id("sweep_text").dtype)
    ticks = int(f.attrs["ticks"])
    t = f["runs"].dtype
    del f["runs"]
    f.create_dataset("runs", shape=(n,), dtype=t, chunks=(1024,))
    for name in list(f["ticks"]):
        d = f["ticks/" + name]
        t, level = d.dtype, d.compression_opts
        del f["ticks/" + name]
        f.create_dataset("ticks/" + name, shape=(n, ticks), dtype=t, chunks=(1, ticks),
                         shuffle=True, compression="gzip", compression_opts=level)
    for name in list(f["timing"]):
        t = f["timing/" + name].dtype
        del f["timing/" + name]
        f.create_dataset("timing/" + name, shape=(n,), dtype=t, chunks=(4096,))
EOF
size=$(stat -c %s huge.h5)
[ "$size" -lt 262144 ] || fail "huge.h5 is $size bytes, expected a small file"
refused "stormsweep merge: huge.h5: not a stormsweep result file of this layout: /runs stores 0 bytes, less than its n_runs = 1000000000 rows take" \
  "$BIN" merge huge.h5 -o m2.h5
[ ! -e m2.h5 ] && [ ! -e m2.h5.partial ] || fail "merge left m2.h5 behind"

[ "$failures" -eq 0 ] || exit 1
echo "untrusted-read checks passed"
