#!/usr/bin/env bash
# The issue-3 evaluation checks on a GPU machine, from the repository root:
#   bench/run_eval_benches_on_device.sh BIN_DIR OUT_DIR [smoke|full]
# BIN_DIR holds ptxbench, ptxbench-candidate, ptxbench-candidate-aa, test_exec_gpu, aa_speedup
# and back_to_back (built with the gpu preset); every log lands in OUT_DIR/logs.tgz.
#   1. the sanitizer / ncu-audit GPU tests (test_exec_gpu, ToolPassesGpu.*)
#   2. `ptxbench eval` as a user runs it: --sanitize on an out-of-bounds write, --sanitize
#      --audit ncu --json on the wgmma GEMM, and the bad inputs (unknown problem, wrong
#      signature, a kernel that never returns, one that calls exit(0))
#   3. the A/A benchmark (bench/results/aa_speedup_h200.md)
#   4. 100 back-to-back evaluations (bench/results/back_to_back_h200.md)
# smoke: the same with 1 A/A repeat of the GEMM and 13 back-to-back evaluations.
set -u
BIN=$(realpath "$1")
OUT=$(realpath "$2")
MODE=${3:-full}
mkdir -p "$OUT"
# The test binaries carry /work/main paths (test kernels, problems) from the build machine.
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then
  mkdir -p /work && ln -s "$PWD" /work/main
fi
cd /work/main || exit 1
export PTXBENCH_ROOT=$PWD
CUDNN_DIR=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '*/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$CUDNN_DIR:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH

step() { echo "=== $1 ($(date -u +%H:%M:%S))" | tee -a "$OUT/steps.log"; }

step "machine"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,memory.used \
    --format=csv; compute-sanitizer --version | tail -1; ncu --version | tail -1; } \
  > "$OUT/machine.txt" 2>&1

step "tool-pass GPU tests"
timeout 170 "$BIN/test_exec_gpu" --gtest_filter='ToolPassesGpu.*' > "$OUT/tool_passes_gpu.log" 2>&1
echo "rc=$?" >> "$OUT/tool_passes_gpu.log"

step "CLI"
K=tests/kernels
variant() { (echo "#define PTXBENCH_VARIANT $1"; cat $K/gemm_bad_variants.cu) > "/tmp/variant_$1.cu"; }
variant 6; variant 7; variant 11
Q="--trials 1 --warmup 1 --iters 3 --cached-reference"
cli() {
  local name=$1; shift
  { echo "\$ ptxbench eval $*"; timeout 90 "$BIN/ptxbench" eval "$@"; echo "exit status $?"; } \
    > "$OUT/cli_$name.txt" 2>&1
}
cli sanitize_oob /tmp/variant_11.cu --problem gemm_n7168_k5120 $Q --sanitize
cli sanitize_audit_wgmma_json $K/sm90_wgmma_tma_gemm.cu --problem gemm_n7168_k5120 $Q \
  --sanitize --audit ncu --json
cli unknown_problem $K/simt_gemm.cu --problem gemm_n7168_k5121
cli wrong_signature $K/gemm_wrong_signature.cu --problem gemm_n7168_k5120 $Q
cli never_returns /tmp/variant_6.cu --problem gemm_n7168_k5120 $Q --timeout-s 3
cli exits_process /tmp/variant_7.cu --problem gemm_n7168_k5120 $Q
pgrep -fa ptxbench-candidate > "$OUT/pgrep_after_cli.txt"; echo "pgrep rc=$?" >> "$OUT/pgrep_after_cli.txt"

step "A/A"
if [ "$MODE" = smoke ]; then AA="--problems gemm_n7168_k5120 --repeats 1"; else AA="--repeats 3"; fi
timeout 150 "$BIN/aa_speedup" --candidate "$BIN/ptxbench-candidate-aa" $AA > "$OUT/aa_speedup.md" 2> "$OUT/aa_speedup.err"
echo "rc=$?" >> "$OUT/aa_speedup.md"

step "back-to-back"
if [ "$MODE" = smoke ]; then N=13; else N=100; fi
nvidia-smi --query-gpu=memory.used --format=csv > "$OUT/back_to_back_nvsmi_before.txt" 2>&1
timeout 240 "$BIN/back_to_back" --count $N --timeout-s 3 > "$OUT/back_to_back.md" 2> "$OUT/back_to_back.err"
echo "rc=$?" >> "$OUT/back_to_back.md"
nvidia-smi --query-gpu=memory.used --format=csv > "$OUT/back_to_back_nvsmi_after.txt" 2>&1
pgrep -fa ptxbench-candidate > "$OUT/pgrep_after_back_to_back.txt"
echo "pgrep rc=$? (1 = no process matched)" >> "$OUT/pgrep_after_back_to_back.txt"
step "done"
# The device tool returns at most 8 files: pack the logs into one.
tar -C "$OUT" -czf /tmp/eval_benches_logs.tgz . && rm -rf "${OUT:?}"/* &&
  mv /tmp/eval_benches_logs.tgz "$OUT/logs.tgz"
