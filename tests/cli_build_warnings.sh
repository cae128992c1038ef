#!/usr/bin/env bash
# cli_build_warnings.sh — sources whose warnings depend on the optimiser
# still compile with -Werror at -O3, with and without the sanitizers (gcc's
# -Wformat-truncation only sees a buffer's size after inlining, so the
# default RelWithDebInfo/LTO builds missed engine/config.c's, which broke
# the sanitizer build).
#
# usage: bash tests/cli_build_warnings.sh STORMSWEEP_BIN SOURCE_DIR
set -u
SRC=$(realpath "${2:-$(dirname "${BASH_SOURCE[0]}")/..}")
CC=${CC:-gcc}
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "SKIP: no $CC"
  exit 0
fi
failures=0
flags=(-std=c11 -O3 -D_POSIX_C_SOURCE=200809L -DSTORMSWEEP_VERSION='"test"' -Wall -Wextra
  -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -Werror
  -I"$SRC/engine" -I"$SRC/engine/include" -I"$SRC/sweeps/include" -I"$SRC/format/include"
  -I"$SRC/analysis/include")
for san in "" "-fsanitize=address,undefined,float-cast-overflow"; do
  for f in engine/config.c analysis/textsafe.c; do
    # shellcheck disable=SC2086
    if ! out=$("$CC" "${flags[@]}" $san -c "$SRC/$f" -o /dev/null 2>&1); then
      echo "FAIL: $f does not compile with -O3 -Werror $san:" >&2
      printf '%s\n' "$out" | head -10 >&2
      failures=$((failures + 1))
    fi
  done
done
if [ "$failures" -ne 0 ]; then
  exit 1
fi
echo "cli_build_warnings: all checks passed"
