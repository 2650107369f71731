#!/usr/bin/env bash
# Issue 29 items 1 and 2 on a GPU machine (bench/results/verdicts_h200.md): the call slot and the
# sampled checks of timed calls. From the repository root, with BIN_DIR holding a gpu-preset
# build laid out as build/gpu (bin/, lib/, src/cli/ptxbench, tests/test_exec_gpu, bench/):
#   bash bench/run_verdicts_on_device.sh BIN_DIR [part]
# part 1: the new and changed evaluator GPU tests, the A/A (GEMM and MHA forward, 3 repeats
# each, the reference interleaved) and the throughput benchmark; part 2: the rest of the gpu
# label's exec tests. Logs under $OUT.
set -u
bin=$(realpath "$1")
part=${2:-1}
out=${OUT:-/tmp/verdicts_out}
mkdir -p "$out"
# The test binaries carry /work/main paths (test kernels, problems) from the build machine.
if [ "$PWD" != /work/main ]; then mkdir -p /work && ln -sfn "$PWD" /work/main; fi
cd /work/main || exit 1
rm -rf build/gpu && mkdir -p build && ln -sfn "$bin" build/gpu
cudnn=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$cudnn:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
step() { echo "=== $1 $(date -u +%H:%M:%S)" | tee -a "$out/steps.txt"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv; } > "$out/machine.txt" 2>&1
exec_gpu=build/gpu/tests/test_exec_gpu
if [ "$part" = 1 ]; then
  step "new and changed exec GPU tests"
  timeout 330 "$exec_gpu" --gtest_filter='EvalBuffersGpu.*:EvaluatorGpu.SkippingWork*:EvaluatorGpu.AboutThreeFifths*:EvaluatorGpu.AFirstCall*:Invariants/*:EvaluatorGpu.WgmmaTma*:EvaluatorGpu.AnInputMutating*' \
    > "$out/exec_gpu_new.log" 2>&1; echo "rc=$?" >> "$out/exec_gpu_new.log"
  step "A/A"
  timeout 150 build/gpu/bench/aa_speedup --candidate build/gpu/bench/ptxbench-candidate-aa \
    --repeats 3 --problems gemm_n7168_k5120,mha_with_lse_d128 > "$out/aa.md" 2>&1
  echo "rc=$?" >> "$out/aa.md"
  step "throughput"
  BIN_DIR=build/gpu LABEL=verdicts COUNT=10 OUT=$out timeout 100 bash bench/eval_throughput.sh \
    > "$out/throughput_summary.txt" 2>&1
else
  step "the rest of the exec GPU tests"
  timeout 560 "$exec_gpu" --gtest_filter='-EvalBuffersGpu.*:EvaluatorGpu.SkippingWork*:EvaluatorGpu.AboutThreeFifths*:EvaluatorGpu.AFirstCall*:Invariants/*:EvaluatorGpu.WgmmaTma*:EvaluatorGpu.AnInputMutating*' \
    > "$out/exec_gpu_rest.log" 2>&1; echo "rc=$?" >> "$out/exec_gpu_rest.log"
fi
step done
