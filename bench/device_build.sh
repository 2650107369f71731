# shellcheck shell=bash
# Sourced by the scripts that run a gpu-preset build on the GPU machine, from the repository
# root:  source bench/device_build.sh && use_gpu_build BUILD
# BUILD: a gpu-preset build laid out as build/gpu, or a .tar.xz of one (the carry limit is
# 64 MiB), unpacked into /tmp/gpubuild. Afterwards the working directory is /work/main (a link
# to the repository root when it lives elsewhere: the binaries carry /work/main paths from the
# build machine), build/gpu points at the build, $bin is its folder, and LD_LIBRARY_PATH and
# PATH find its bundled libraries, cuDNN and the CUDA toolkit. unpack FILE-OR-DIR DEST prints
# the folder a packed or unpacked build (or any folder) is in.
unpack() {
  if [ -f "$1" ]; then mkdir -p "$2" && tar -C "$2" -xJf "$1" && echo "$2"; else realpath "$1"; fi
}
use_gpu_build() {
  if [ "$PWD" != /work/main ]; then mkdir -p /work && ln -sfn "$PWD" /work/main; fi
  bin=$(unpack "$1" /tmp/gpubuild)
  cd /work/main || return 1
  if [ "$(realpath build/gpu 2>/dev/null)" != "$bin" ]; then
    rm -rf build/gpu && mkdir -p build && ln -sfn "$bin" build/gpu
  fi
  # cuDNN: PyTorch's wheel's first (the one the reference scripts name, 9.19 on the H200
  # image), else the first libcudnn.so.9 on the machine (an older 9.14 there) — one choice for
  # every script, so a baseline's cuDNN version does not depend on which script ran.
  local cudnn
  cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null)
  if [ -z "$cudnn" ] || [ ! -f "$cudnn/libcudnn.so.9" ]; then
    cudnn=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '/proc/*' 2>/dev/null | head -1)")
  fi
  export LD_LIBRARY_PATH=$bin/lib:$cudnn:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  export PATH=/usr/local/cuda/bin:$PATH
}
