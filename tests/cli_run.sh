#!/usr/bin/env bash
# cli_run.sh — `stormsweep run` and `stormsweep list` from the outside: help,
# exit codes and messages for bad input (nothing written), refusing to
# overwrite, the layout as h5dump -H shows it, identical result datasets for
# -j 1 and -j 2 (h5diff), and the built-in seed study as the default sweep.
# Usage: bash cli_run.sh STORMSWEEP_BIN SOURCE_DIR
set -u
BIN=$1
SRC=$2
T=$(mktemp -d /tmp/cli_run.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

# fail, expect_exit CODE CMD..., expect_in FILE TEXT
source "$SRC/tests/lib/cli_common.sh"

cat >small.ini <<'EOF'
; a small sweep: 4 points x 2 replicates of a 4-shard cluster, 3 s each
[sweep]
name = small
replicates = 2
seed = 7

[scenario]
shards = 4
horizon_ms = 3000
surge = 1000+300
brownout = 1000+300

[grid]
capacity_factor = 1.25, inf
budget_ratio = 0.1, inf
EOF

# ---- help ----
expect_exit 0 "$BIN" run --help
expect_in "$T/out" "usage: stormsweep run"
expect_in "$T/out" "--grid KEY=V1,V2"
expect_exit 0 "$BIN" list --help
expect_in "$T/out" "usage: stormsweep list"
expect_in "$T/out" "lin(START, STOP, N)"

# ---- list ----
expect_exit 0 "$BIN" list small.ini
expect_in "$T/out" "points: 4 x 2 replicates = 8 runs of 3000 ticks"
expect_in "$T/out" "capacity_factor          2 values: 1.25, inf"
[ "$(grep -cE '^ +[0-9]+  ' "$T/out")" = 4 ] || fail "list should print 4 point rows: $(cat "$T/out")"
expect_exit 0 "$BIN" list small.ini --grid vnodes=10,20,30 --set replicates=5
expect_in "$T/out" "points: 12 x 5 replicates = 60 runs"
expect_exit 0 "$BIN" list small.ini --ini --set load=0.6
expect_in "$T/out" "load = 0.6"
expect_exit 0 "$BIN" list
expect_in "$T/out" "sweep: seed (built-in seed study)"

# ---- bad input: exit 2, a message naming file, line and key, no output ----
printf '[scenario]\nshards = 4\nvnode = 10\n' >typo.ini
expect_exit 2 "$BIN" run typo.ini -o typo.h5
expect_in "$T/err" "typo.ini:3: unknown setting 'vnode' in [scenario] (did you mean 'vnodes'?)"
[ -e typo.h5 ] && fail "a bad sweep must not create its output file"
printf '[grid]\ncapacity_factor = 1.1, 0.5\n' >range.ini
expect_exit 2 "$BIN" run range.ini -o range.h5
expect_in "$T/err" "range.ini:2: capacity_factor: must be >= 1 or inf, got 0.5"
[ -e range.h5 ] && fail "an out-of-range value must not create its output file"
printf '[grid]\nvnodes = 10\nvnodes = 20\n' >dup.ini
expect_exit 2 "$BIN" list dup.ini
expect_in "$T/err" "dup.ini:3: duplicate axis 'vnodes' (first at line 2)"
printf '[scenarios]\n' >sec.ini
expect_exit 2 "$BIN" run sec.ini -o sec.h5
expect_in "$T/err" "sec.ini:1: unknown section [scenarios] (did you mean [scenario]?)"
expect_exit 2 "$BIN" run missing.ini -o missing.h5
expect_in "$T/err" "missing.ini: cannot open"
[ -e missing.h5 ] && fail "a missing sweep file must not create the output"
expect_exit 2 "$BIN" run small.ini --set vnode=3 -o x.h5
expect_in "$T/err" "--set: unknown setting 'vnode' (did you mean 'vnodes'?)"
expect_exit 2 "$BIN" run small.ini --grid vnodes= -o x.h5
expect_in "$T/err" "empty axis"
expect_exit 2 "$BIN" run small.ini --bogus
expect_in "$T/err" "unknown option '--bogus'"
expect_exit 2 "$BIN" run small.ini -j 0
expect_in "$T/err" "expected a whole number from 1 to 4096"
expect_exit 2 "$BIN" run small.ini -o
expect_in "$T/err" "-o needs a value"
expect_exit 2 "$BIN" run small.ini other.ini
expect_in "$T/err" "one sweep file at most"
[ -e x.h5 ] && fail "bad options must not create the output"

# ---- a run, its summary and its layout ----
expect_exit 0 "$BIN" run small.ini -o j1.h5 -j 1
expect_in "$T/err" "stormsweep run: 8 runs in"
expect_in "$T/err" "-> j1.h5"
[ -s j1.h5 ] || fail "run did not write j1.h5"
expect_exit 0 "$BIN" run small.ini -o j2.h5 -j 2 --quiet
[ -s "$T/err" ] && fail "--quiet should print nothing, got: $(cat "$T/err")"

h5dump -H j1.h5 >layout.txt || fail "h5dump -H cannot read j1.h5"
for want in 'ATTRIBUTE "format"' 'ATTRIBUTE "format_version"' 'ATTRIBUTE "master_seed"' \
  'ATTRIBUTE "sweep_text"' 'ATTRIBUTE "command_line"' 'ATTRIBUTE "created"' \
  'DATASET "points"' 'DATASET "points_text"' 'H5T_IEEE_F64LE "capacity_factor"' \
  'DATASET "runs"' 'H5T_ENUM' '"metastable"' 'H5T_STD_U64LE "seed"' 'H5T_IEEE_F64LE "recovery_ms"' \
  'GROUP "ticks"' 'DATASET "queue_depth"' 'SIMPLE { ( 8, 3000 ) / ( H5S_UNLIMITED, 3000 ) }' \
  'DATASET "run"' 'DATASET "time_ms"' 'GROUP "timing"' 'DATASET "run_wall_s"'; do
  expect_in layout.txt "$want"
done
h5dump -a /format j1.h5 >fmt.txt
expect_in fmt.txt '"stormsweep-results"'
h5dump -p -H -d /ticks/queue_depth j1.h5 >filters.txt
expect_in filters.txt "SHUFFLE"
expect_in filters.txt "COMPRESSION DEFLATE { LEVEL 3 }"
expect_in filters.txt "CHUNKED ( 1, 3000 )"
# The data is readable through the filter pipeline (direct chunk writes).
h5dump -d /ticks/new_requests -s "7,0" -c "1,5" j1.h5 >data.txt || fail "h5dump cannot read /ticks data"
expect_in data.txt "(7,0):"

# ---- -j 1 and -j 2 give the same results ----
for obj in /runs /points /points_text /axes /ticks; do
  if ! h5diff j1.h5 j2.h5 "$obj" "$obj" >diff.txt 2>&1; then
    fail "h5diff $obj: -j 1 and -j 2 differ: $(head -c 500 diff.txt)"
  fi
done
for m in $(h5ls j1.h5/ticks | awk '{print $1}'); do
  h5diff j1.h5 j2.h5 "/ticks/$m" "/ticks/$m" >/dev/null 2>&1 || fail "h5diff /ticks/$m differs"
done
[ "$(h5ls j1.h5/ticks | wc -l)" -ge 19 ] || fail "expected 19 /ticks datasets: $(h5ls j1.h5/ticks)"
# Only /timing, the command line, the file instance (random) and perhaps the
# creation time differ.
h5diff --exclude-path /timing j1.h5 j2.h5 >diff.txt 2>&1
if grep -v -e 'command_line' -e 'created' -e 'instance' -e 'differences found' diff.txt | grep -q .; then
  fail "unexpected differences outside /timing: $(cat diff.txt)"
fi

# ---- never overwrite without --force ----
before=$(md5sum <j1.h5)
expect_exit 2 "$BIN" run small.ini -o j1.h5
expect_in "$T/err" "j1.h5: already exists (use --force to overwrite)"
[ "$(md5sum <j1.h5)" = "$before" ] || fail "a refused run modified j1.h5"
expect_exit 0 "$BIN" run small.ini -o j1.h5 --force --set replicates=1 -q
h5dump -a /n_runs j1.h5 | grep -q '(0): 4' || fail "--force did not rewrite j1.h5 with 4 runs"
cp small.ini self.ini
expect_exit 2 "$BIN" run self.ini -o self.ini --force
expect_in "$T/err" "self.ini: is the sweep file itself"
cmp -s small.ini self.ini || fail "run -o SWEEP --force damaged the sweep file"
mkdir adir
expect_exit 2 "$BIN" run small.ini -o adir --force
expect_in "$T/err" "adir: is a directory"
expect_exit 1 "$BIN" run small.ini -o /nonexistent-dir/x.h5
expect_in "$T/err" "/nonexistent-dir/x.h5: cannot create"

# ---- overrides land in the file ----
expect_exit 0 "$BIN" run small.ini -o over.h5 -q --set replicates=1 --grid budget_ratio=0.2 --set shards=8
h5dump -a /sweep_text over.h5 >st.txt
expect_in st.txt "budget_ratio = 0.2"
expect_in st.txt "shards = 8"
expect_in st.txt "replicates = 1"
h5dump -a /command_line over.h5 >cl.txt
expect_in cl.txt "stormsweep run small.ini -o over.h5 -q --set replicates=1"

# ---- the built-in seed study is the default (shrunk here to one replicate of two axes) ----
SHRINK="--set replicates=1 --set vnodes=50 --set capacity_factor=1.25"
expect_exit 0 "$BIN" list $SHRINK
nruns=$(sed -n 's/^points: .* = \([0-9]*\) runs.*/\1/p' "$T/out")
[ -n "$nruns" ] && [ "$nruns" -ge 4 ] || fail "list of the shrunk seed study: $(head -c 500 "$T/out")"
expect_exit 0 "$BIN" run -o seed.h5 $SHRINK
expect_in "$T/err" "stormsweep run: $nruns runs in"
h5dump -a /sweep_source seed.h5 >src.txt
expect_in src.txt "built-in seed study"
cp "$SRC/sweeps/seed.ini" seedcopy.ini
expect_exit 0 "$BIN" run seedcopy.ini -o seed2.h5 -q $SHRINK
for obj in /runs /points /ticks; do
  h5diff seed.h5 seed2.h5 "$obj" "$obj" >/dev/null 2>&1 || fail "built-in seed study differs from sweeps/seed.ini ($obj)"
done

# ---- a run that runs out of memory fails alone; the sweep completes ----
# memory_limit_mb = 1 holds the calm point's runs but not the 5x surge's.
cat >oom.ini <<'EOF'
[sweep]
replicates = 2
[scenario]
memory_limit_mb = 1
[grid]
surge_factor = 1, 5
EOF
expect_exit 1 "$BIN" run oom.ini -o oom.h5 -q -j 2
expect_in "$T/err" "out of memory at tick"
expect_in "$T/err" "memory_limit_mb reached"
grep -q "seed [0-9]" "$T/err" || fail "the failed run is not named with its seed: $(head -c 300 "$T/err")"
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  /usr/bin/python3 - oom.h5 <<'PY' || fail "the calm runs were not written, or a failed run was"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
done = list(f["runs"]["done"])
assert done == [1, 1, 0, 0], done
assert f.attrs["complete"] == 0
PY
fi

# ---- a dead axis: refused with the reason, or a warning with --allow-dead-axes ----
# With Envoy's retry budget as the limiter, budget_ratio is never read.
cat >dead.ini <<'EOF'
[sweep]
replicates = 1
[scenario]
shards = 4
horizon_ms = 3000
surge = 800+300
brownout = 800+300
retry_limiter = envoy
[grid]
budget_ratio = 0.01, inf
EOF
expect_exit 2 "$BIN" list dead.ini
expect_in "$T/err" "dead.ini:10: budget_ratio: the axis cannot change any run: retry_limiter = envoy, and budget_ratio is read by the token_bucket limiter only"
expect_in "$T/err" "--allow-dead-axes"
expect_exit 2 "$BIN" run dead.ini -o dead.h5 -q
[ -e dead.h5 ] && fail "a refused sweep with a dead axis left dead.h5"
expect_exit 0 "$BIN" list dead.ini --allow-dead-axes
expect_in "$T/err" "warning: dead.ini:10: budget_ratio: the axis cannot change any run"
expect_exit 0 "$BIN" run dead.ini --allow-dead-axes -o dead.h5 -q -j 2
expect_in "$T/err" "warning: dead.ini:10: budget_ratio"
expect_exit 2 "$BIN" list --set max_retries=0 --grid backoff_cap_ms=0,1000 --set budget_ratio=0.1
expect_in "$T/err" "--grid backoff_cap_ms=0, 1000: backoff_cap_ms: the axis cannot change any run: max_retries = 0"
# the same axis beside a limiter axis that has token_bucket is live
expect_exit 0 "$BIN" list dead.ini --grid retry_limiter=envoy,token_bucket

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_run: all checks passed"
