#!/usr/bin/env bash
# One command for a newcomer: install what is needed, build, and run the
# built-in seed study (SPEC §3) into results.h5, then summarise it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
./build/stormsweep sim --policy naive
./build/stormsweep sim --policy guarded
if ./build/stormsweep --help | grep -q '^  run '; then
  ./build/stormsweep run -o results.h5 --force "$@"
fi
if ./build/stormsweep --help | grep -q '^  analyze '; then
  ./build/stormsweep analyze results.h5
  ./build/stormsweep recommend results.h5
fi
