#!/usr/bin/env bash
# Installs everything ptxbench needs to build and test, from Debian packages and PyPI.
# Idempotent: a second run installs nothing. Safe to call from other scripts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

debian_packages=(
  build-essential cmake ninja-build python3 python3-pip
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libssl-dev
  libsqlite3-dev libcurl4-openssl-dev libcpp-httplib-dev libgtest-dev
)
missing=()
for pkg in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc (CUDA 13) is required and is not on PATH or in /usr/local/cuda/bin" >&2
  exit 1
fi

# cuobjdump and nvdisasm: NVIDIA's PyPI wheels where the toolkit lacks them.
cuda_bin="$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")"
deps="$root/.deps"
if [ ! -x "$cuda_bin/cuobjdump" ] && [ ! -x "$deps/nvidia/cu13/bin/cuobjdump" ]; then
  echo "setup: installing cuobjdump and nvdisasm from PyPI into .deps/"
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$deps" \
    "nvidia-cuda-cuobjdump==13.2.86" "nvidia-cuda-nvdisasm==13.2.86"
fi
