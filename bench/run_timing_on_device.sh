#!/usr/bin/env bash
# Issue 3, benchmark 4 on a GPU machine (bench/results/eval_wall_time_h200.md), from the
# repository root:  bench/run_timing_on_device.sh BIN_DIR OUT_DIR [steps]
# BIN_DIR holds eval_wall_time, verification_cost, aa_speedup, ptxbench-candidate,
# ptxbench-candidate-aa, test_measure_gpu and test_exec_gpu (built with the gpu preset).
# steps (default: counting tests_measure wall aa tests_exec): any of those and wall_gap,
# back_to_back; EXEC_FILTER narrows test_exec_gpu (gtest filter); TIMING (batched, the
# default here; strict) is passed to eval_wall_time and aa_speedup; REFERENCE (interleave, the
# default; cached) to eval_wall_time and aa_speedup, GAP_MS (500) to eval_wall_time and
# AA_GAP_MS (0) to aa_speedup; COUNT (26) to back_to_back;
# COUNTER_SESSION=1 adds counter_session; INTERLEAVE (1) lists the --interleave-calls values
# the A/A runs with, one run each, AA_REPEATS (3) evaluations per problem and run, AA_PROBLEMS
# (the GEMM and the MHA forward) the problems.
# Every log lands in OUT_DIR/logs.tgz.
set -u
BIN=$(realpath "$1")
OUT=$(realpath "$2")
STEPS=${3:-"counting tests_measure wall aa tests_exec"}
mkdir -p "$OUT/logs"
# The test binaries carry /work/main paths (test kernels, problems) from the build machine.
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then
  mkdir -p /work && ln -s "$PWD" /work/main
fi
cd /work/main || exit 1
export PTXBENCH_ROOT=$PWD PTXBENCH_CANDIDATE=$BIN/ptxbench-candidate
CUDNN_DIR=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '*/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$CUDNN_DIR:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
L=$OUT/logs
step() { echo "=== $1 ($(date -u +%H:%M:%S))" | tee -a "$L/steps.log"; }
want() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }

step "machine"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw,memory.used \
    --format=csv; nproc; } > "$L/machine.txt" 2>&1
if [ "${COUNTER_SESSION:-0}" = 1 ]; then
  step "counter session"
  timeout 60 "$BIN/counter_session" --cycles 3 > "$L/counter_session.md" 2>&1; echo "rc=$?" >> "$L/counter_session.md"
fi
if want counting; then
  step "counting breakdown"
  timeout 60 "$BIN/verification_cost" --breakdown > "$L/counting.md" 2>&1; echo "rc=$?" >> "$L/counting.md"
fi
if want tests_measure; then
  step "measure GPU tests"
  timeout 90 "$BIN/test_measure_gpu" --gtest_filter='-MeasureProbe.*' > "$L/test_measure_gpu.log" 2>&1
  echo "rc=$?" >> "$L/test_measure_gpu.log"
fi
if want wall; then
  step "wall time: wgmma GEMM"
  timeout 120 "$BIN/eval_wall_time" --kernel tests/kernels/sm90_wgmma_tma_gemm.cu \
    --problem gemm_n7168_k5120 --n 10 --timing "${TIMING:-batched}" --reference "${REFERENCE:-interleave}" > "$L/wall_gemm.md" 2>&1; echo "rc=$?" >> "$L/wall_gemm.md"
  step "wall time: MHA forward"
  timeout 120 "$BIN/eval_wall_time" --kernel examples/sm90a/mha_with_lse_d128.cu \
    --problem mha_with_lse_d128 --n 10 --timing "${TIMING:-batched}" --reference "${REFERENCE:-interleave}" > "$L/wall_mha.md" 2>&1; echo "rc=$?" >> "$L/wall_mha.md"
fi
if want wall_gap; then
  step "wall time: wgmma GEMM, ${GAP_MS:-500} ms between evaluations"
  timeout 120 "$BIN/eval_wall_time" --kernel tests/kernels/sm90_wgmma_tma_gemm.cu \
    --problem gemm_n7168_k5120 --n ${GAP_N:-10} --gap-ms "${GAP_MS:-500}" --timing "${TIMING:-batched}" \
    --reference "${REFERENCE:-interleave}" > "$L/wall_gemm_gap.md" 2>&1
  echo "rc=$?" >> "$L/wall_gemm_gap.md"
  step "wall time: MHA forward, ${GAP_MS:-500} ms between evaluations"
  timeout 120 "$BIN/eval_wall_time" --kernel examples/sm90a/mha_with_lse_d128.cu \
    --problem mha_with_lse_d128 --n ${GAP_N:-10} --gap-ms "${GAP_MS:-500}" --timing "${TIMING:-batched}" \
    --reference "${REFERENCE:-interleave}" > "$L/wall_mha_gap.md" 2>&1
  echo "rc=$?" >> "$L/wall_mha_gap.md"
fi
if want aa; then
  step "A/A"
  run=0
  for interleave in ${INTERLEAVE:-1}; do
    run=$((run + 1))
    log="$L/aa_speedup_${run}_interleave_${interleave}_${REFERENCE:-interleave}.md"
    timeout 180 "$BIN/aa_speedup" --candidate "$BIN/ptxbench-candidate-aa" --repeats "${AA_REPEATS:-3}" \
      --problems "${AA_PROBLEMS:-gemm_n7168_k5120,mha_with_lse_d128}" --timing "${TIMING:-batched}" \
      --interleave-calls "$interleave" --reference "${REFERENCE:-interleave}" \
      --gap-ms "${AA_GAP_MS:-0}" > "$log" 2>&1
    echo "rc=$?" >> "$log"
  done
fi
if want tests_exec; then
  step "exec GPU tests"
  timeout 240 "$BIN/test_exec_gpu" --gtest_filter="${EXEC_FILTER:-*}" > "$L/test_exec_gpu.log" 2>&1
  echo "rc=$?" >> "$L/test_exec_gpu.log"
fi
if want back_to_back; then
  step "back-to-back"
  timeout 400 "$BIN/back_to_back" --count "${COUNT:-26}" --timeout-s 3 > "$L/back_to_back.md" 2>&1
  echo "rc=$?" >> "$L/back_to_back.md"
  { echo "pgrep -fa ptxbench-candidate after the run:"; pgrep -fa ptxbench-candidate || echo "(none)"; } >> "$L/back_to_back.md"
fi
step "done"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw,memory.used --format=csv >> "$L/machine.txt" 2>&1
tar -C "$OUT" -czf /tmp/timing_logs.tgz logs && rm -rf "${L:?}" && mv /tmp/timing_logs.tgz "$OUT/logs.tgz"
