#!/usr/bin/env bash
# seed-study.sh — the seed study from nothing to a decision, for a
# newcomer: install what is needed, build, then in seed-study/ run the
# built-in seed study (every grid point screened), `refine` it
# (fresh runs for the cheapest candidates until one is proven or all are
# refuted), print the recommendation with its proof, and write the report.
# Extra arguments go to `stormsweep run` and `refine` alike only when they
# are -j N; others go to `run` (e.g. --set seed=2).
#
# It writes only into seed-study/ and never overwrites a file it did not
# create: an existing seed-study/results.h5 is continued (run --resume, or
# refine, which resumes by itself) when an earlier run of this script made
# it, and refused otherwise. Interrupt it at any time; run it again to
# continue. SKIP_SETUP=1 skips the package install and build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ "${SKIP_SETUP:-0}" != 1 ]; then
  scripts/setup.sh
  scripts/build.sh
fi
bin=$root/build/stormsweep
threads=()
run_args=()
while [ $# -gt 0 ]; do
  case $1 in
    -j) threads=(-j "$2"); shift 2 ;;
    -j*) threads=("$1"); shift ;;
    *) run_args+=("$1"); shift ;;
  esac
done
mkdir -p seed-study
cd seed-study
marker=.made-by-seed-study
"$bin" sim --policy naive
"$bin" sim --policy guarded
if [ -e results.h5 ]; then
  if [ ! -e "$marker" ]; then
    echo "seed-study.sh: seed-study/results.h5 exists and this script did not make it;" \
      "move it away (nothing was changed)" >&2
    exit 2
  fi
  if h5dump -a /refine/status results.h5 >/dev/null 2>&1 ||
    [ "$(h5dump -a /complete results.h5 2>/dev/null | grep -c '(0): 1')" = 1 ]; then
    echo "seed-study.sh: continuing seed-study/results.h5 (refine)" >&2
  else
    "$bin" run -o results.h5 --resume "${threads[@]}" "${run_args[@]}"
  fi
else
  touch "$marker"
  "$bin" run -o results.h5 "${threads[@]}" "${run_args[@]}"
fi
"$bin" refine results.h5 "${threads[@]}"
"$bin" recommend results.h5 "${threads[@]}"
# Is the seed article's setting (vnodes 150, c 1.25, budget 0.1, backoff cap 1 s) safe here?
"$bin" recommend results.h5 --no-headroom --prefer vnodes=150 --prefer capacity_factor=1.25 \
  --prefer budget_ratio=0.1 --prefer backoff_cap_ms=1000 | grep "Preferred (--prefer"
"$bin" report results.h5 -o report
echo "seed study: seed-study/results.h5; plots and tables in seed-study/report/index.html"
