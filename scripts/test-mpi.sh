#!/usr/bin/env bash
# The MPI build and its test: configures build-mpi with -DSTORMSWEEP_MPI=ON
# (needs mpicc/mpirun: Debian packages openmpi-bin libopenmpi-dev), builds,
# and runs tests/cli_mpi.sh through ctest, which compares
# `mpirun -np 2 stormsweep run` with `stormsweep run -j 2` (h5diff), and
# tests/cli_call_graph.sh, which does the same for a multi-service sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "scripts/test-mpi.sh: mpicc/mpirun not found; install openmpi-bin libopenmpi-dev" >&2
  exit 1
fi
cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DSTORMSWEEP_MPI=ON >/dev/null
cmake --build build-mpi -j"$(nproc)"
(cd build-mpi && ctest --output-on-failure -R '^(cli_mpi|cli_call_graph)$')
