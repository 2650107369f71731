#!/usr/bin/env bash
# One device session for src/reference: GPU tests, then our reference latencies, then the same
# libraries through PyTorch. Expects a Release build in build/reference (carried) and $OUT.
# Usage (from the repo root on the GPU machine): bash bench/run_reference_on_device.sh
set -u
out=${OUT:-/tmp/reference_out}
mkdir -p "$out"
build=${BUILD_DIR:-build/reference}
# Use the cuDNN that PyTorch loads, so both sides of the latency comparison run the same cuDNN.
cudnn_lib=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
if [ -n "$cudnn_lib" ] && [ -d "$cudnn_lib" ]; then export LD_LIBRARY_PATH="$cudnn_lib:${LD_LIBRARY_PATH:-}"; fi
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd $build/tests/test_reference_gpu | grep -E "cudnn|cublas|cudart"
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
timeout 150 $build/tests/test_reference_gpu --gtest_color=no > "$out/test_reference_gpu.log" 2>&1
echo "test_reference_gpu exit $?"; grep -E "^\[(gemm|fwd|bwd|gqa)|^\[ *(OK|FAILED|PASSED) " "$out/test_reference_gpu.log" | head -80
$build/tests/test_reference_cpu --gtest_brief=1 > "$out/test_reference_cpu.log" 2>&1
echo "test_reference_cpu exit $?"
bench_bin=$build/bench/reference_latency; [ -x "$bench_bin" ] || bench_bin=$build/reference_latency
echo "=== ours: $bench_bin"
timeout 60 "$bench_bin" 2>&1 | tee "$out/reference_latency.txt"
echo "=== torch: python3 bench/torch_reference_latency.py"
PYTHONUNBUFFERED=1 timeout 90 python3 bench/torch_reference_latency.py 2>&1 | tee "$out/torch_reference_latency.txt"
