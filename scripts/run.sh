#!/usr/bin/env bash
# The main job on its built-in default: sets up, builds, and runs `ptxbench demo` — one short
# replayed agent trajectory on the default GEMM problem (GPU step when there is a GPU).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
export PATH="$PATH:/usr/local/cuda/bin"
cmake --preset ci >/dev/null
cmake --build --preset ci --target ptxbench >/dev/null
exec "$root/build/ci/src/cli/ptxbench" demo "$@"
