#!/usr/bin/env bash
# One command for a newcomer: install what is needed, build, run the
# built-in seed study (SPEC §3) into results.h5, then analyse it and write
# plots into report/. Extra arguments go to `stormsweep run` (e.g. -j 4).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
./build/stormsweep sim --policy naive
./build/stormsweep sim --policy guarded
./build/stormsweep run -o results.h5 --force "$@"
./build/stormsweep analyze results.h5
./build/stormsweep report results.h5 -o report
echo "seed study: results.h5, plots and tables in report/index.html"
