#!/usr/bin/env bash
# Builds the knowledge-pack tests standalone (tests/knowledge as its own CMake project, so the
# top-level dependencies are not needed) in build/gpu-knowledge and runs the GPU program on the
# local H100/H200. The log goes to $OUT/knowledge_gpu.log when OUT is set.
# Usage: tests/knowledge/run_gpu.sh [case-name substring]
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/cuda/bin"
log="${OUT:+$OUT/knowledge_gpu.log}"
log="${log:-build/gpu-knowledge/knowledge_gpu.log}"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S tests/knowledge -B build/gpu-knowledge "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/gpu-knowledge -j "$(nproc)" --target knowledge_gpu_test knowledge_compile
mkdir -p "$(dirname "$log")"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
  build/gpu-knowledge/knowledge_gpu_test "$@"
} 2>&1 | tee "$log"
