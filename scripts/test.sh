#!/usr/bin/env bash
# Sets up, builds (preset ci) and runs every test that needs no GPU. On a machine with a GPU,
# `scripts/test.sh --gpu` runs the gpu-labelled tests as well.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
export PATH="$PATH:/usr/local/cuda/bin"
preset=ci
[ "${1:-}" = "--gpu" ] && preset=gpu
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
if [ "$preset" = gpu ]; then
  ctest --test-dir "build/$preset" --output-on-failure
else
  ctest --preset ci
fi
