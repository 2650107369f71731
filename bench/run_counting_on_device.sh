#!/usr/bin/env bash
# Issue 32, parts 2 and 3 on a GPU machine (bench/results/counting_h200.md): the Hopper rows of
# the counter table (sass/counters.hpp) through the range profiler, the ncu audit against them
# for CUDA and Triton candidates, and `ptxbench eval --audit ncu` on the expert kernels under
# examples/sm90a (the Triton ones and the CUDA GEMM), whose JSON is kept. From the repository
# root, with BIN_DIR holding a gpu-preset build laid out as build/gpu (bin/, lib/,
# src/cli/ptxbench, tests/test_*_gpu, tests/examples/test_examples_gpu):
#   bash bench/run_counting_on_device.sh BIN_DIR [PART]
# (BIN_DIR may also be a .tar.xz of such a folder, unpacked first: the carry limit is 64 MiB.)
# PART 1: the range profiler's sm_90a rows and the ncu audit tests (CUDA and Triton), ~6 min;
# PART 2: the Triton expert kernels' GPU tests, with and without the audit, ~8 min;
# PART 3: `ptxbench eval --audit ncu --json` on the expert kernels, ~5 min; all: 1, 2, 3.
# Each part fits one 10-minute device command. Logs and the eval JSON under $OUT; each step's
# exit status as `rc=N` at the end of its log.
set -u
part=${2:-all}
# shellcheck source=bench/device_build.sh
source bench/device_build.sh && use_gpu_build "$1" || exit 1
out=${OUT:-/tmp/counting_out}
mkdir -p "$out"
export PTXBENCH_ROOT=$PWD
step() { echo "=== $1 $(date -u +%H:%M:%S)" | tee -a "$out/steps.txt"; }
run() { # run LOG SECONDS COMMAND...: the command's output and exit status into $out/LOG
  local log=$1 seconds=$2
  shift 2
  timeout "$seconds" "$@" > "$out/$log" 2>&1
  echo "rc=$?" >> "$out/$log"
}
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; ncu --version; } \
  > "$out/machine.txt" 2>&1

if [ "$part" = 1 ] || [ "$part" = all ]; then
  step "range profiler: the sm_90a rows (InstructionCounter)"
  run measure_gpu.log 150 build/gpu/tests/test_measure_gpu \
    --gtest_filter='InstructionCounter.*:NcuAudit.*'
  step "ncu audit against the table: CUDA (ToolPassesGpu.Ncu*) and Triton"
  run exec_gpu_audit.log 380 build/gpu/tests/test_exec_gpu \
    --gtest_filter='ToolPassesGpu.Ncu*:TritonEvaluatorGpu.TheNcuAudit*:TritonEvaluatorGpu.ThePersistentTma*:EvaluatorGpu.WgmmaTma*:EvaluatorGpu.ASpareReadied*:EvaluatorGpu.BesideTiming*'
fi
if [ "$part" = 2 ] || [ "$part" = all ]; then
  step "the Triton expert kernels, with and without the audit"
  run examples_gpu.log 540 build/gpu/tests/examples/test_examples_gpu \
    --gtest_filter='TritonExamplesGpu.*'
fi
if [ "$part" = 3 ] || [ "$part" = all ]; then
  for kernel in gemm_n7168_k5120.py mha_with_lse_d128.py mha_with_lse_d128_causal.py \
    gemm_n7168_k5120.cu; do
    step "ptxbench eval examples/sm90a/$kernel --audit ncu"
    run "eval_${kernel}.json" 130 build/gpu/src/cli/ptxbench eval "examples/sm90a/$kernel" \
      --problem "${kernel%.*}" --audit ncu --json --trials 1 --warmup 3 --iters 10
  done
fi
step done
