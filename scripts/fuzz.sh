#!/usr/bin/env bash
# Fuzzes the sweep-file parser (tests/fuzz/fuzz_sweepfile.c) or, with
# -f resultfile, the result-file reader and the analysis behind it
# (tests/fuzz/fuzz_resultfile.c: inputs are recipes for HDF5 files), or with
# -f promtext the Prometheus text histogram reader (tests/fuzz/fuzz_promtext.c) with
# libFuzzer under AddressSanitizer + UndefinedBehaviorSanitizer for a
# bounded time.
#
# Builds with clang straight from the sources the parser needs
# (sweeps/*.c but the client importer, engine/*.c (a sweep is checked against
# what its runs hold) with the telemetry readers it calls, and the embedded seed
# study; the importer and the terminal escaper too for client; every library
# for resultfile) — no CMake build needed.
# Starts from the seed corpus in tests/fuzz/corpus (corpus_result for
# resultfile; read-only: new inputs go to BUILD_DIR/corpus, which later runs
# reuse) with the dictionary tests/fuzz/sweepfile.dict (sweepfile only).
#
# A crash (a sanitizer report, a leak, or a broken round-trip invariant) is
# saved as BUILD_DIR/artifacts/crash-*; copy it into tests/fuzz/regressions/
# (regressions_result/ for resultfile; ctest's fuzz_replay and
# fuzz_replay_result run every file there with the normal gcc build), fix
# the bug, and run this again.
#
# Usage: scripts/fuzz.sh [-f TARGET] [-t SECONDS] [-o BUILD_DIR] [-- LIBFUZZER_ARGS...]
#   -f TARGET    sweepfile (default), resultfile, client (the --client
#                importer, tests/fuzz/fuzz_client.c) or promtext (seeds:
#                tests/telemetry/good and tests/telemetry/bad/hist)
#   -t SECONDS   total fuzzing time (default 60)
#   -o DIR       build and work directory (default build-fuzz)
# Exit status: 0 no crash, 1 the fuzzer found a crash, 2 bad usage or no
# clang with libFuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
seconds=60
out=build-fuzz
target=sweepfile
while [ $# -gt 0 ]; do
  case "$1" in
    -t) seconds=${2:?-t needs SECONDS}; shift 2 ;;
    -f) target=${2:?-f needs TARGET}; shift 2 ;;
    -o) out=${2:?-o needs DIR}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: -t expects whole seconds, got '$seconds'" >&2; exit 2 ;; esac
case "$target" in
  sweepfile)
    seeds=tests/fuzz/corpus
    extra=(-dict="$src/tests/fuzz/sweepfile.dict" -max_len=4096) ;;
  resultfile)
    seeds=tests/fuzz/corpus_result
    extra=(-max_len=2048) ;;
  client)
    seeds=tests/client/bad
    extra=(-max_len=4096) ;;
  promtext)
    seeds=tests/telemetry/bad/hist
    extra=(-max_len=8192) ;;
  *) echo "fuzz.sh: -f expects sweepfile, resultfile, client or promtext, got '$target'" >&2
     exit 2 ;;
esac

CC=${CLANG:-}
if [ -z "$CC" ]; then
  for c in clang clang-14 clang-15 clang-16; do
    if command -v "$c" >/dev/null 2>&1; then CC=$c; break; fi
  done
fi
if [ -z "$CC" ]; then
  echo "fuzz.sh: clang not found (install clang and libclang-rt-14-dev)" >&2
  exit 2
fi

mkdir -p "$out/corpus" "$out/artifacts"
out=$(cd "$out" && pwd)
# The seed study compiled in, exactly as the CMake build embeds it.
cmake -DINPUT="$src/sweeps/seed.ini" -DOUTPUT="$out/seed_study.c" -DFUNC=swp_seed_study_text \
  -P "$src/sweeps/embed.cmake"
flags=(-std=c11 -g -O1 -fno-omit-frame-pointer -D_POSIX_C_SOURCE=200809L
  -DSTORMSWEEP_VERSION='"fuzz"')
for lib in telemetry engine sweeps format driver analysis; do
  flags+=(-I"$src/$lib" -I"$src/$lib/include")
done
flags+=(
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -Wall -Wextra -Werror)
echo "fuzz.sh: building $out/fuzz_$target with $CC"
parser=("$src"/engine/*.c "$src"/telemetry/*.c "$out/seed_study.c")
for f in "$src"/sweeps/*.c; do
  case "$(basename "$f")" in client_*) ;; *) parser+=("$f") ;; esac
done
if [ "$target" = client ]; then
  # the --client importer (its examples join the seeds below)
  "$CC" "${flags[@]}" -o "$out/fuzz_client" "$src/tests/fuzz/fuzz_client.c" \
    "$src"/sweeps/client_*.c "$src/analysis/textsafe.c" "${parser[@]}" -ljansson -lyaml -linih \
    -lxxhash -lm
elif [ "$target" = sweepfile ]; then
  "$CC" "${flags[@]}" -o "$out/fuzz_sweepfile" "$src/tests/fuzz/fuzz_sweepfile.c" "${parser[@]}" \
    -linih -lxxhash -ljansson -lm
elif [ "$target" = promtext ]; then
  "$CC" "${flags[@]}" -o "$out/fuzz_promtext" "$src/tests/fuzz/fuzz_promtext.c" \
    "$src"/telemetry/*.c "$src/engine/variates.c" -ljansson -lm
else
  read -r -a h5 <<<"$(pkg-config --cflags --libs hdf5)"
  # The analysis library links every layer below it (recommend reads
  # refine's state), so the target takes every library source, as CMake
  # links them.
  libs=("$src"/analysis/*.c "$src"/engine/*.c "$src"/telemetry/*.c "$src"/sweeps/*.c
    "$src"/format/*.c "$out/seed_study.c")
  for f in "$src"/driver/*.c; do
    [ "$(basename "$f")" = mpi_driver.c ] || libs+=("$f")
  done
  "$CC" "${flags[@]}" -fopenmp -o "$out/fuzz_resultfile" \
    "$src/tests/fuzz/fuzz_resultfile.c" "${libs[@]}" "${h5[@]}" -lhdf5_hl -linih -lxxhash -ljansson -lyaml -lz -lm
fi

echo "fuzz.sh: fuzzing for ${seconds}s (corpus $out/corpus + $seeds)"
status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  "$out/fuzz_$target" "$out/corpus" "$src/$seeds" $([ "$target" = client ] && echo "$src/examples") \
  $([ "$target" = promtext ] && echo "$src/tests/telemetry/good") \
  "${extra[@]}" -max_total_time="$seconds" \
  -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/" "$@" 2>"$out/fuzz.log" || status=$?
grep -E '^(stat::|#[0-9]+ *DONE)|INFO: (Loaded|seed corpus)' "$out/fuzz.log" || true
corpus_n=$(find "$out/corpus" -type f | wc -l)
echo "fuzz.sh: corpus $out/corpus now holds $corpus_n inputs; log in $out/fuzz.log"
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: the fuzzer stopped with status $status; last lines of the log:" >&2
  tail -40 "$out/fuzz.log" >&2
  ls "$out/artifacts" >&2 || true
  suffix=$([ "$target" = resultfile ] && echo _result)$([ "$target" = promtext ] && echo _promtext)
  echo "fuzz.sh: copy the crash-* file into tests/fuzz/regressions$suffix/ and fix the bug" >&2
  exit 1
fi
echo "fuzz.sh: no crash in ${seconds}s"
