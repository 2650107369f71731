#!/usr/bin/env bash
# Packs what the GRPO trainer step of bench/client_on_device.sh needs on the GPU machine, which
# has torch, numpy, pyarrow and accelerate but not datasets or trl, and no network (issue 34;
# bench/results/client_batch_h200.md):
#   DIR/wheels/       the CI-tested trainer set (python/ptxbench_client/examples/requirements-ci.txt,
#                     less numpy and pyarrow, which the machine has) and the CI-tested trl,
#                     accelerate, psutil and jinja2 (requirements-torch-ci.txt less torch and
#                     what torch brings, which the machine has), as manylinux x86-64 CPython
#                     3.12 wheels from PyPI;
#   DIR/client.tar.xz a gpu-preset build cut to what `serve` needs (src/cli/ptxbench, bin/,
#                     lib/), stripped: with the wheels it fits the carry limit (64 MiB), which
#                     the whole build (~28 MB packed) and the wheels (~45 MB) together do not.
# Usage (repository root, after `cmake --build build/gpu`):
#   bash bench/pack_trainer_for_device.sh [DIR]     (default .devbuild)
# then on the device, carrying DIR/wheels, DIR/client.tar.xz and DIR/tokenizer.json:
#   TRAINER_WHEELS=DIR/wheels OUT=$OUT/client bash bench/client_on_device.sh DIR/client.tar.xz 64 16
set -euo pipefail
dir="${1:-.devbuild}"
rm -rf "$dir/wheels" && mkdir -p "$dir/wheels"
grep -Ev '^(#|numpy==|pyarrow==)' python/ptxbench_client/examples/requirements-ci.txt \
  > "$dir/wheels/requirements.txt"
grep -Ev '^(#|torch==|triton==|nvidia_|cuda_|sympy==|mpmath==|networkx==)' \
  python/ptxbench_client/examples/requirements-torch-ci.txt >> "$dir/wheels/requirements.txt"
pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$dir/wheels" -r "$dir/wheels/requirements.txt"
rm -rf /tmp/ptxbench-client-pack && mkdir -p /tmp/ptxbench-client-pack/src/cli
cp -L build/gpu/src/cli/ptxbench /tmp/ptxbench-client-pack/src/cli/
cp -rL build/gpu/bin build/gpu/lib /tmp/ptxbench-client-pack/
find /tmp/ptxbench-client-pack -type f -exec strip --strip-unneeded {} + 2> /dev/null || true
tar -C /tmp/ptxbench-client-pack -cf - . | xz -T2 -6 > "$dir/client.tar.xz"
du -sh "$dir/wheels" "$dir/client.tar.xz"
