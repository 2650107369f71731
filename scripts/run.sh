#!/usr/bin/env bash
# The main job on its built-in default: sets up, builds, and runs `ptxbench demo` — one short
# replayed agent trajectory on the default GEMM problem (GPU step when there is a GPU).
# The build shows its progress (ninja's [done/total] line): a first build takes a while.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
export PATH="$PATH:/usr/local/cuda/bin"
echo "run.sh: configuring (preset ci)" >&2
cmake --preset ci >/dev/null
echo "run.sh: building ptxbench (the first build compiles everything; later ones are quick)" >&2
cmake --build --preset ci --target ptxbench 1>&2
exec "$root/build/ci/src/cli/ptxbench" demo "$@"
