#!/usr/bin/env bash
# Valgrind (memcheck) over the CLI: a tiny sweep run on 2 threads, then
# every command that reads its file, plus the error paths a user hits most
# (a bad sweep, a truncated or foreign result file) — error paths are where
# leaks hide. Fails on any memcheck error (invalid read or write, use of
# uninitialised memory, bad free) and on memory "definitely" or
# "indirectly" lost.
#
# Not counted, by design: "still reachable" blocks (HDF5 keeps per-thread
# error stacks and its library state until exit; libgomp keeps its thread
# pool) and "possibly lost" ones (glibc's TLS blocks of libgomp's threads
# that are still alive at exit). Both belong to the libraries, not to us, so
# no suppression file is needed: --errors-for-leak-kinds=definite,indirect.
# Valgrind's own error exit status is 97, because 1 and 2 are statuses
# stormsweep itself returns.
#
# Builds a plain gcc RelWithDebInfo binary (no sanitizer: ASan and valgrind
# do not mix) in build-valgrind. About a minute once built.
# Usage: scripts/valgrind.sh [-o BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-valgrind
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=${2:?-o needs DIR}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "valgrind.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null 2>&1 || { echo "valgrind.sh: valgrind not found (scripts/setup.sh)" >&2; exit 2; }
start=$(date +%s)
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTORMSWEEP_LTO=OFF \
  -DSTORMSWEEP_SANITIZE=OFF -DSTORMSWEEP_FUZZ_SECONDS=0 >/dev/null
cmake --build "$out" -j"$(nproc)" --target stormsweep >"$out/build.log" 2>&1 || {
  tail -40 "$out/build.log" >&2
  exit 1
}
bin=$(cd "$out" && pwd)/stormsweep
work=$(mktemp -d /tmp/stormsweep_valgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=passive # spinning threads make valgrind crawl

failures=0
# vg WANT_STATUS NAME -- ARGS...: runs stormsweep ARGS under memcheck.
vg() {
  local want=$1 name=$2
  shift 3
  local status=0
  valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --track-origins=yes --error-exitcode=97 \
    --log-file="$work/$name.vg" "$bin" "$@" >"$work/$name.out" 2>"$work/$name.err" || status=$?
  local summary
  summary=$(grep -E 'ERROR SUMMARY|definitely lost|indirectly lost' "$work/$name.vg" | sed 's/^==[0-9]*== *//' | tr '\n' ' ')
  if [ "$status" -eq 97 ]; then
    echo "valgrind.sh: $name: memcheck found errors or leaks: $summary" >&2
    grep -v '^==[0-9]*== *$' "$work/$name.vg" | sed -n '/Command:/,$p' | head -80 >&2
    failures=$((failures + 1))
  elif [ "$status" -ne "$want" ]; then
    echo "valgrind.sh: $name: stormsweep exited $status, expected $want:" >&2
    head -20 "$work/$name.err" >&2
    failures=$((failures + 1))
  else
    printf 'valgrind.sh: %-16s ok  %s\n' "$name" "$summary"
  fi
}

cat >"$work/tiny.ini" <<'EOF'
[sweep]
name = valgrind
replicates = 2
[scenario]
horizon_ms = 3000
[grid]
budget_ratio = 0.1, inf
backoff = none, full
EOF
printf '[grid]\nvnodes = 10, 5o\n' >"$work/bad.ini"
printf 'not a result file\n' >"$work/text.h5"

vg 0 run -- run "$work/tiny.ini" -o "$work/tiny.h5" -j 2 -q
vg 0 list -- list "$work/tiny.ini" --set load=0.5 --grid vnodes=10,50
vg 0 list-ini -- list "$work/tiny.ini" --ini
vg 0 sim -- sim --policy guarded --set horizon_ms=3000
vg 0 analyze -- analyze "$work/tiny.h5"
vg 0 analyze-json -- analyze "$work/tiny.h5" --json --csv "$work/table.csv"
vg 0 analyze-write -- analyze "$work/tiny.h5" --write
vg 0 recommend -- recommend "$work/tiny.h5"
if command -v gnuplot >/dev/null 2>&1; then
  vg 0 report -- report "$work/tiny.h5" -o "$work/report"
fi
# error paths
vg 2 run-bad-sweep -- run "$work/bad.ini" -o "$work/bad.h5" -q
vg 2 run-bad-set -- run "$work/tiny.ini" -o "$work/bad.h5" -q --set vnode=3
head -c 5000 "$work/tiny.h5" >"$work/trunc.h5"
vg 2 analyze-trunc -- analyze "$work/trunc.h5"
vg 2 analyze-text -- analyze "$work/text.h5"
vg 2 recommend-none -- recommend "$work/missing.h5"

echo "valgrind.sh: $(($(date +%s) - start)) s"
if [ "$failures" -ne 0 ]; then
  echo "valgrind.sh: FAILED ($failures command(s))" >&2
  exit 1
fi
echo "valgrind.sh: no memcheck error, nothing definitely or indirectly lost"
