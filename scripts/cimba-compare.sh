#!/usr/bin/env bash
# cimba-compare.sh — stormsweep against cimba's own M/M/1 benchmark
# (ambonvik/cimba benchmark/MM1_single.c: rho 0.9, 10^6 customers) on this
# machine, in one invocation: both sides pinned to one core with taskset,
# alternating, R rounds; prints each side's median wall time and peak RSS
# and the ratios stormsweep / cimba. stormsweep runs examples/mm1-cimba.ini
# twice: service 10 ms on 1 ms ticks (0.09 arrivals per tick) and service
# 2 ms (0.45 per tick), the same million customers each.
#
# usage: scripts/cimba-compare.sh CIMBA_MM1_SINGLE_BINARY [options]
#        scripts/cimba-compare.sh --build CIMBA_CHECKOUT [options]
#   --build DIR     build DIR's benchmark/MM1_single first (meson + ninja,
#                   release, into DIR/build-compare; needs nasm and meson)
#   --stormsweep B  the stormsweep binary (default: build/stormsweep)
#   --before B      also run an older stormsweep build B (e.g. main's) on
#                   the same scenarios, and print new / before
#   --rounds R      rounds (default 5)
#   --cpu N         the core to pin to (default 1)
# Absolute times on a shared machine move from one minute to the next: read
# the ratios.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cimba="" build_dir="" ss="$here/build/stormsweep" before="" rounds=5 cpu=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build_dir=$2; shift 2 ;;
    --stormsweep) ss=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cimba-compare.sh: unknown option $1" >&2; exit 2 ;;
    *) cimba=$1; shift ;;
  esac
done

if [ -n "$build_dir" ]; then
  # cimba is C23; gcc 12 needs bool and a one-argument static_assert spelled out.
  meson setup "$build_dir/build-compare" "$build_dir" --buildtype=release \
    -Denable_docs=false -Denable_cuda_tutorials=false \
    -Dc_args="-include assert.h -include stdbool.h" >/dev/null
  ninja -j1 -C "$build_dir/build-compare" benchmark/MM1_single >/dev/null
  cimba="$build_dir/build-compare/benchmark/MM1_single"
fi
[ -x "$cimba" ] || { echo "cimba-compare.sh: no cimba binary (give its path or --build DIR)" >&2; exit 2; }
[ -x "$ss" ] || { echo "cimba-compare.sh: no stormsweep binary at $ss" >&2; exit 2; }
scen="$here/examples/mm1-cimba.ini"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One timed run: appends "wall_us max_rss_kb cpu_s" to the file $1 (cpu:
# user + system, which waiting for a shared core does not inflate).
timed() {
  local out=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M %U %S" -o "$tmp/rss" taskset -c "$cpu" "$@" >"$tmp/stdout" 2>&1 ||
    { cat "$tmp/stdout" >&2; echo "cimba-compare.sh: failed: $*" >&2; exit 1; }
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000 )) $(tail -1 "$tmp/rss" | awk '{print $1, $2 + $3}')" >>"$out"
}

s2=(--set service_mean_ms=2 --set horizon_ms=2222223)
sides=(cimba ss10 ss2)
[ -n "$before" ] && sides+=(old10 old2)
for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds" >&2
  timed "$tmp/cimba" "$cimba"
  timed "$tmp/ss10" "$ss" sim "$scen"
  timed "$tmp/ss2" "$ss" sim "$scen" "${s2[@]}"
  if [ -n "$before" ]; then
    timed "$tmp/old10" "$before" sim "$scen"
    timed "$tmp/old2" "$before" sim "$scen" "${s2[@]}"
  fi
done

# median of column $2 of file $1
median() { sort -n -k"$2","$2" "$1" | awk -v k="$2" '{v[NR]=$k} END {print v[int((NR+1)/2)]}'; }
declare -A T M C
for s in "${sides[@]}"; do
  T[$s]=$(median "$tmp/$s" 1)
  M[$s]=$(median "$tmp/$s" 2)
  C[$s]=$(median "$tmp/$s" 3)
done
label() {
  case $1 in
    cimba) echo "cimba MM1_single" ;;
    ss10) echo "stormsweep, service 10 ms" ;;
    ss2) echo "stormsweep, service 2 ms" ;;
    old10) echo "before, service 10 ms" ;;
    old2) echo "before, service 2 ms" ;;
  esac
}
echo "M/M/1 rho 0.9, 10^6 customers, 1 ms ticks; medians of $rounds rounds pinned to core $cpu"
printf '  %-27s %8s %8s %11s %11s %11s %10s\n' side "wall ms" "cpu ms" "peak RSS MB" \
  "wall/cimba" "cpu/cimba" "RSS/cimba"
for s in "${sides[@]}"; do
  awk -v l="$(label "$s")" -v t="${T[$s]}" -v m="${M[$s]}" -v c="${C[$s]}" -v tc="${T[cimba]}" \
    -v mc="${M[cimba]}" -v cc="${C[cimba]}" 'BEGIN {
      printf "  %-27s %8.1f %8.0f %11.1f %10.2fx %10.2fx %9.1fx\n", l, t / 1000, c * 1000, m / 1024,
        t / tc, (cc > 0 ? c / cc : 0), m / mc }'
done
if [ -n "$before" ]; then
  for d in 10 2; do
    awk -v d="$d" -v o="${T[old$d]}" -v n="${T[ss$d]}" -v oc="${C[old$d]}" -v nc="${C[ss$d]}" \
      'BEGIN {printf "  service %2s ms: before / now %.2fx wall time, %.2fx cpu time\n", d, o / n, oc / nc}'
  done
fi
