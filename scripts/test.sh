#!/usr/bin/env bash
# One command for the tests: install what is needed, then build and run the
# whole suite in every configuration we ship or check:
#   1. Release (LTO) — the build users run;
#   2. ThreadSanitizer on the OpenMP sweep driver (clang + libomp/Archer);
#   3. valgrind memcheck over the CLI on a small sweep (leaks, errors);
#   4. the MPI build, with `mpirun -np 2` compared against one process;
#   5. ASan + UBSan — the whole suite again, plus a 30 s libFuzzer run of
#      the sweep-file parser (when clang links libFuzzer).
# About 13 minutes on 2 cores from scratch (3 of them: cli_readme_figures,
# which reruns the studies behind the README's figures, in Release only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs="$(nproc)"
echo "== 1/5 Release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTORMSWEEP_FUZZ_SECONDS=0 >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
echo "== 2/5 ThreadSanitizer (OpenMP driver)"
scripts/tsan.sh
echo "== 3/5 valgrind memcheck"
scripts/valgrind.sh
echo "== 4/5 MPI build: mpirun -np 2 against one process"
scripts/test-mpi.sh
echo "== 5/5 AddressSanitizer + UndefinedBehaviorSanitizer build and tests (with fuzzing)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTORMSWEEP_SANITIZE=ON \
  -DSTORMSWEEP_FUZZ_SECONDS=30 >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs")
echo "== all test configurations passed"
