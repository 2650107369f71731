#!/usr/bin/env bash
# One device session for issue 18 (bench/results/eval_throughput_h200.md): the GPU tests of the
# child's device and of the prepared spare, back-to-back throughput through `ptxbench serve`
# for the binaries in BEFORE_DIR (optional, e.g. a main build) and AFTER_DIR, two workers on
# one supervisor (`--workers-per-gpu 2`), and the A/A (aa_speedup, back to back, the reference
# interleaved) for both. Each directory holds ptxbench, ptxbench-candidate, aa_speedup and
# ptxbench-candidate-aa; AFTER_DIR also test_exec_gpu. Logs under $OUT.
# Usage (repository root on the GPU machine): AFTER_DIR=… [BEFORE_DIR=…] [COUNT=10] \
#   bash bench/run_throughput_on_device.sh
set -u
out=${OUT:-/tmp/throughput_out}
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; } \
  > "$out/machine.txt" 2>&1
step() { echo "=== $1 $(date -u +%H:%M:%S)" >> "$out/steps.txt"; }
labels="after"; [ -n "${BEFORE_DIR:-}" ] && labels="before after"
dir_of() { if [ "$1" = before ]; then echo "$BEFORE_DIR"; else echo "$AFTER_DIR"; fi; }
for label in $labels; do
  step "throughput $label"
  BIN_DIR=$(dir_of "$label") LABEL=$label COUNT=${COUNT:-10} OUT=$out \
    timeout 120 bash bench/eval_throughput.sh > /dev/null 2>&1
done
step "aa after"
timeout 110 "$AFTER_DIR/aa_speedup" --candidate "$AFTER_DIR/ptxbench-candidate-aa" --repeats 5 \
  --problems gemm_n7168_k5120,mha_with_lse_d128 --timing strict --interleave-calls 1 \
  --reference interleave --gap-ms 0 > "$out/aa_after.md" 2>&1; echo "rc=$?" >> "$out/aa_after.md"
step exec_gpu
PTXBENCH_CANDIDATE=$AFTER_DIR/ptxbench-candidate timeout 150 "$AFTER_DIR/test_exec_gpu" \
  --gtest_filter='EvaluatorGpu.AnEvaluatorBuilt*:EvaluatorGpu.BackToBack*:EvaluatorGpu.ASpareReadied*:EvaluatorGpu.WgmmaTma*:EvaluatorGpu.EvaluationsFromSeveral*:EvaluatorGpu.TwentyBackToBack*' \
  > "$out/exec_gpu.log" 2>&1; echo "rc=$?" >> "$out/exec_gpu.log"
step two_workers
BIN_DIR=$AFTER_DIR LABEL=two_workers COUNT=6 SERVE_ARGS="--gpus all --workers-per-gpu 2" OUT=$out \
  timeout 90 bash bench/eval_throughput.sh > /dev/null 2>&1
if [ -n "${BEFORE_DIR:-}" ]; then
  step "aa before"
  timeout 110 "$BEFORE_DIR/aa_speedup" --candidate "$BEFORE_DIR/ptxbench-candidate-aa" \
    --repeats 5 --problems gemm_n7168_k5120,mha_with_lse_d128 --timing strict \
    --interleave-calls 1 --reference interleave --gap-ms 0 > "$out/aa_before.md" 2>&1
  echo "rc=$?" >> "$out/aa_before.md"
fi
step end
