#!/usr/bin/env bash
# ThreadSanitizer check of the OpenMP sweep driver: builds the project with
# clang -fsanitize=thread into build-tsan and runs the tests that sweep on
# several threads (test_sweep_h5, cli_run, cli_analysis, cli_hostile,
# cli_resume, cli_slices, cli_merge). Any data race fails the run. About
# 2.5 minutes on 2 cores once built, 3 from scratch.
#
# Why clang: gcc's libgomp is not built with TSan, so TSan cannot see the
# synchronisation inside it (barriers, critical sections, the dynamic
# schedule) and reports races that are not there. LLVM's libomp ships
# Archer (libarcher.so, in libomp-dev), an OMPT tool that tells TSan about
# every OpenMP synchronisation; libomp loads it by itself when the program
# is built with -fsanitize=thread. TSAN_OPTIONS=ignore_noninstrumented_modules=1
# (which Archer asks for) then stops reports from inside the uninstrumented
# libomp and HDF5 themselves. With both, no suppression file is needed; a
# deliberate race in an omp loop is still reported (checked below first).
#
# Needs: clang, libclang-rt-14-dev, libomp-dev (scripts/setup.sh).
# Usage: scripts/tsan.sh [-o BUILD_DIR] [-R CTEST_REGEX]
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-tsan
# test_subset stops a sweep from a progress callback on one thread while
# the driver reads the flag on others: TSan found that race (now atomic).
regex='^(test_sweep_h5|test_subset|cli_run|cli_analysis|cli_hostile|cli_resume|cli_slices|cli_merge)$'
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=${2:?-o needs DIR}; shift 2 ;;
    -R) regex=${2:?-R needs a regex}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "tsan.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
CC=${CLANG:-clang}
command -v "$CC" >/dev/null 2>&1 || { echo "tsan.sh: $CC not found (install clang)" >&2; exit 2; }
start=$(date +%s)
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1 second_deadlock_stack=1${TSAN_OPTIONS:+ $TSAN_OPTIONS}"

# 1. The tool chain must catch a real race and stay quiet on a clean loop.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
cat >"$probe/race.c" <<'EOF'
#include <stdio.h>
int main(void) {
  long racy = 0, guarded = 0;
  /* Both threads run the whole loop, so both touch the counter. */
#pragma omp parallel num_threads(2)
  for (int i = 0; i < 1000; i++) {
#ifdef RACE
    racy++; /* unsynchronised: the race TSan must report */
#else
#pragma omp critical
    guarded++;
#endif
  }
  printf("%ld %ld\n", racy, guarded);
  return 0;
}
EOF
if ! "$CC" -fopenmp -fsanitize=thread -g "$probe/race.c" -o "$probe/clean" 2>"$probe/cc.log"; then
  echo "tsan.sh: $CC cannot build an OpenMP program with -fsanitize=thread:" >&2
  cat "$probe/cc.log" >&2
  echo "tsan.sh: install libomp-dev and libclang-rt-14-dev" >&2
  exit 2
fi
"$CC" -DRACE -fopenmp -fsanitize=thread -g "$probe/race.c" -o "$probe/racy"
"$probe/clean" >/dev/null 2>"$probe/clean.log" || {
  echo "tsan.sh: TSan reports a race in a correct OpenMP loop (is Archer missing?):" >&2
  head -30 "$probe/clean.log" >&2
  exit 1
}
if "$probe/racy" >/dev/null 2>"$probe/racy.log" || ! grep -q 'ThreadSanitizer: data race' "$probe/racy.log"; then
  echo "tsan.sh: TSan missed a deliberate race; the check would prove nothing" >&2
  exit 1
fi
echo "tsan.sh: tool chain ok (a deliberate race is caught, a clean loop passes)"

# 2. Build. Warnings are the gcc builds' business: -Werror off here, so a
# clang-only warning cannot hide a race report.
cmake -S . -B "$out" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTORMSWEEP_LTO=OFF -DSTORMSWEEP_WERROR=OFF -DSTORMSWEEP_SANITIZE=OFF \
  -DSTORMSWEEP_FUZZ_SECONDS=0 \
  "-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build "$out" -j"$(nproc)" >"$out/build.log" 2>&1 || {
  tail -40 "$out/build.log" >&2
  exit 1
}

# 3. The multi-threaded tests.
status=0
(cd "$out" && ctest --output-on-failure -j"$(nproc)" -R "$regex") || status=$?
echo "tsan.sh: $(($(date +%s) - start)) s"
if [ "$status" -ne 0 ]; then
  echo "tsan.sh: FAILED (a race report makes a test exit 66; see the output above)" >&2
  exit 1
fi
echo "tsan.sh: no data race"
