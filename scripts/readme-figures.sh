#!/usr/bin/env bash
# readme-figures.sh — the README's result figures, computed from result files.
# Every figure the README (or a docs/*.md page) states about results sits in a
# block between <!-- generated:NAME begin --> and <!-- generated:NAME end -->;
# this script computes each block from fresh sweeps / sim runs (deterministic,
# independent of the thread count) and rewrites or checks them.
#
#   scripts/readme-figures.sh --update          # after an engine or output change: rewrite every block
#   scripts/readme-figures.sh --check           # exit 1 with a diff when a block has drifted
#   scripts/readme-figures.sh seed-table [--dir DIR]   # print one block (DIR/seed/results.h5 reused if there)
#   scripts/readme-figures.sh --list            # blocks and the source each needs
#
# Options: --bin BIN (default build/stormsweep), --dir DIR (keep and reuse the
# sources' files), --only SRC,... / --skip SRC,... (sources: sim, seed,
# ablation, load_ramp, self_collapse, closed_loop, limiters,
# clients_as_shipped, boundary, crn). The full --update takes a few minutes
# on 2 cores (the seed study and its refine, the ablation sweep, the CRN
# study's 9,600 runs); tests/cli_readme_figures.sh runs --check.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3
"$py" -c 'import h5py' 2>/dev/null || py=python3
"$py" -c 'import h5py' 2>/dev/null || {
  echo "readme-figures.sh: needs python3 with h5py (apt-get install python3-h5py)" >&2; exit 2; }
exec "$py" "$here/readme_figures.py" "$@"
