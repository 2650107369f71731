#!/usr/bin/env bash
# One device session for the FlashInfer GQA baseline (issue 32 part 1): FlashInfer's outputs
# against the naive reference and cuDNN on the three GQA workloads, then both libraries'
# latencies side by side, timed by CUDA events and by CUPTI as the evaluator times a reference.
# Expects test_reference_gpu, test_reference_cpu and reference_latency (Release, gpu preset) in
# $BIN_DIR (default build/flashinfer-gpu-bin, carried); writes logs under $OUT. With aa_speedup,
# ptxbench-candidate-aa and ptxbench-candidate there too, it ends with the A/A of the three GQA
# problems (bench/aa/gqa_*.cu: FlashInfer evaluated as a candidate; speedups 1.00 ± 0.01).
# Usage (repo root on the GPU machine):
#   PTXBENCH_ROOT=$PWD OUT=/tmp/fi BIN_DIR=build/flashinfer-gpu-bin bash bench/run_flashinfer_on_device.sh
set -u
out=${OUT:-/tmp/flashinfer_out}
mkdir -p "$out"
bin=${BIN_DIR:-build/flashinfer-gpu-bin}
export PTXBENCH_ROOT=${PTXBENCH_ROOT:-$PWD}
problems=(gqa_ragged_prefill_causal_h32_kv4_d128 gqa_paged_prefill_causal_h24_kv8_d128_ps1
  gqa_paged_decode_h24_kv8_d128_ps1)
# cuDNN from PyTorch's wheel when the image has no system cuDNN (as run_reference_on_device.sh).
cudnn_dir=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null)
if [ -n "$cudnn_dir" ] && [ -d "$cudnn_dir" ]; then export LD_LIBRARY_PATH="$cudnn_dir:${LD_LIBRARY_PATH:-}"; fi
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd "$bin/reference_latency" | grep -E "cudnn|cublas|cudart"
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }
step "test_reference_gpu: FlashInfer vs naive and cuDNN; cuDNN and naive GQA tests"
timeout 240 "$bin/test_reference_gpu" --gtest_color=no \
  --gtest_filter='*GqaFlashInfer*:*GqaCudnn*:*GqaGpu*:-*Degenerate*' > "$out/test_reference_gpu.log" 2>&1
echo "exit $?"
grep -E "^\[gqa|^\[ *(FAILED|PASSED) |^\[  FAILED|Failure|hook|error" "$out/test_reference_gpu.log" | head -60
step "test_reference_cpu"
"$bin/test_reference_cpu" --gtest_brief=1 > "$out/test_reference_cpu.log" 2>&1
echo "exit $?"; tail -3 "$out/test_reference_cpu.log"
step "reference_latency (events; FlashInfer, cuDNN graph, cuDNN direct, cuDNN bounds, naive)"
timeout 150 "$bin/reference_latency" "${problems[@]}" 2>&1 | tee "$out/gqa_latency_events.txt"
step "reference_latency --cupti (as the evaluator times a reference)"
timeout 120 "$bin/reference_latency" --cupti "${problems[@]}" 2>&1 | tee "$out/gqa_latency_cupti.txt"
if [ -x "$bin/aa_speedup" ] && [ -x "$bin/ptxbench-candidate-aa" ]; then
  step "A/A of the GQA problems (FlashInfer as the candidate)"
  # The evaluator's binaries carry build-machine paths (child, problems): make them resolve.
  build_root=$(strings "$bin/aa_speedup" | grep -oE '^/[^ ]*/problems$' | head -1 | sed 's|/problems$||')
  if [ -n "$build_root" ] && [ "$build_root" != "$PWD" ] && [ ! -e "$build_root" ]; then
    mkdir -p "$(dirname "$build_root")" && ln -s "$PWD" "$build_root"
  fi
  export PATH=/usr/local/cuda/bin:$PATH
  timeout 400 "$bin/aa_speedup" --candidate "$bin/ptxbench-candidate-aa" --repeats 3 --problems \
    "$(IFS=,; echo "${problems[*]}")" > "$out/aa_speedup_gqa.md" 2> "$out/aa_speedup_gqa.err"
  echo "exit $?"; cat "$out/aa_speedup_gqa.md"; tail -5 "$out/aa_speedup_gqa.err"
fi
step "done"
