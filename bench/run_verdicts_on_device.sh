#!/usr/bin/env bash
# Issue 29 on a GPU machine (bench/results/verdicts_h200.md): the call slot, the sampled checks
# of timed calls, identity of modules, the wall-time bound, graphs and stream-ordered races, the
# Triton library forms. From the repository root, with BIN_DIR holding a gpu-preset build laid
# out as build/gpu (bin/, lib/, src/cli/ptxbench, tests/test_*_gpu, bench/):
#   bash bench/run_verdicts_on_device.sh BIN_DIR PART
# (BIN_DIR may also be a .tar.xz of such a folder, unpacked first: the carry limit is 64 MiB.)
# PART 1: the new and changed exec GPU tests, then the A/A (GEMM and MHA forward, 3 repeats
#         each, the reference interleaved);
# PART 2: the throughput benchmark, the system calls of the candidate child (strace -c over a
#         few evaluations; TOOLS_DIR holds the strace and libunwind8 .debs), the rest of the exec
#         GPU tests;
# PART 3: the other GPU test binaries (measure, reference, service, agent, examples);
# PART 5: the system-call filter — every serving child of a few evaluations (CUDA, Triton, the
#         A/A's cuBLASLt and cuDNN) under strace, surveyed (bench/system_call_survey.py), then
#         the tolerance probe (bench/tolerance_probe.py), the filter's tests and bad variants
#         unstraced, and the A/A;
# PART 6: the GPU test binaries other than exec's, reference's and agent's, the Triton exec tests and the
#         A/A (when the A/A fails: one MHA A/A evaluation under strace, its logs packed in
#         strace.tar.gz);
# PART 7: the exec GPU tests other than Triton's, the reference and agent GPU tests;
# PART 8: what PART 6 found refused or failing, again (three Triton tests, the service test, the
#         A/A), then as many of the exec GPU tests other than Triton's as EXEC_SECONDS allow.
# PART label: the gpu label through ctest (BIN_DIR a whole build/gpu less its object files),
#         the tests matching CTEST_R and not CTEST_E (regular expressions; empty: all), for at
#         most CTEST_SECONDS; then, with AA=1, the A/A. The kernel's Landlock ABI goes into
#         machine.txt; with SURVEY=1, first what the child may read (child_reads_survey).
# Logs under $OUT.
set -u
part=${2:-1}
# shellcheck source=bench/device_build.sh
source bench/device_build.sh && use_gpu_build "$1" || exit 1
out=${OUT:-/tmp/verdicts_out}
mkdir -p "$out"
step() { echo "=== $1 $(date -u +%H:%M:%S)" | tee -a "$out/steps.txt"; }
# strace and libunwind8 from TOOLS_DIR's .debs, for bench/strace_child.sh (STRACE) and its
# library path (STRACE_LIBS); the machine has no network to install them.
unpack_strace() {
  mkdir -p /tmp/tools && for deb in "${TOOLS_DIR:-.devbuild-tools}"/*.deb; do
    dpkg -x "$deb" /tmp/tools; done
  export STRACE=/tmp/tools/usr/bin/strace
  STRACE_LIBS=/tmp/tools/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
}
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv; } > "$out/machine.txt" 2>&1
exec_gpu=build/gpu/tests/test_exec_gpu
new='EvalBuffersGpu.*:EvaluatorGpu.SkippingWork*:EvaluatorGpu.AboutThreeFifths*:EvaluatorGpu.AFirstCall*:EvaluatorGpu.AGraphReplay*:EvaluatorGpu.AStreamOrdered*:Invariants/*:EvaluatorGpu.WgmmaTma*:EvaluatorGpu.AnInputMutating*:TritonEvaluatorGpu.LibraryCalls*'
case "$part" in
1)
  step "new and changed exec GPU tests"
  timeout 360 "$exec_gpu" --gtest_filter="$new" > "$out/exec_gpu_new.log" 2>&1
  echo "rc=$?" >> "$out/exec_gpu_new.log"
  step "A/A"
  timeout 200 build/gpu/bench/aa_speedup --candidate build/gpu/bench/ptxbench-candidate-aa \
    --repeats 3 --problems gemm_n7168_k5120,mha_with_lse_d128 > "$out/aa.md" 2>&1
  echo "rc=$?" >> "$out/aa.md"
  ;;
2)
  step "throughput"
  BIN_DIR=build/gpu LABEL=verdicts COUNT=10 OUT=$out timeout 100 bash bench/eval_throughput.sh \
    > "$out/throughput_summary.txt" 2>&1
  step "system calls of the child"
  unpack_strace && mkdir -p "$out/strace"
  LD_LIBRARY_PATH=$STRACE_LIBS REAL_CANDIDATE=$(realpath build/gpu/bin/ptxbench-candidate) \
    STRACE_OUT=$out/strace PTXBENCH_CANDIDATE=$(realpath bench/strace_child.sh) \
    timeout 120 "$exec_gpu" --gtest_filter='EvaluatorGpu.WgmmaTma*:EvaluatorGpu.SimtKernel*:EvaluatorGpu.AGraphReplay*' \
    > "$out/strace_run.log" 2>&1; echo "rc=$?" >> "$out/strace_run.log"
  step "the rest of the exec GPU tests"
  timeout 330 "$exec_gpu" --gtest_filter="-$new" > "$out/exec_gpu_rest.log" 2>&1
  echo "rc=$?" >> "$out/exec_gpu_rest.log"
  ;;
4)
  step "the Triton gate on the library fixtures (python3 $(python3 --version 2>&1))"
  for f in alias_matmul dunder_matmul aten_overload; do
    (cd python && /usr/bin/time -f "%e s" timeout 60 python3 -m ptxbench_triton.gate \
      "../tests/kernels/triton/$f.py") >> "$out/gate.log" 2>&1; echo "rc=$?" >> "$out/gate.log"
  done
  step "the changed and new bad variants"
  timeout 200 "$exec_gpu" --gtest_filter='Invariants/*variant_1[2348]:Invariants/*variant_2*:Invariants/*variant_3' \
    > "$out/exec_gpu_variants.log" 2>&1; echo "rc=$?" >> "$out/exec_gpu_variants.log"
  step "throughput"
  BIN_DIR=build/gpu LABEL=verdicts COUNT=8 OUT=$out timeout 90 bash bench/eval_throughput.sh \
    > "$out/throughput_summary.txt" 2>&1
  step "the Triton library tests alone"
  timeout 150 "$exec_gpu" --gtest_filter='TritonEvaluatorGpu.LibraryCalls*' \
    > "$out/exec_gpu_triton_library.log" 2>&1; echo "rc=$?" >> "$out/exec_gpu_triton_library.log"
  ;;
5)
  step "serving children under strace"
  unpack_strace && mkdir -p /tmp/pywrap "$out/strace"
  ln -sfn "$(realpath bench/strace_child.sh)" /tmp/pywrap/python3
  export STRACE_OUT=$out/strace REAL_PYTHON=$(command -v python3)
  traced() { LD_LIBRARY_PATH=$STRACE_LIBS PATH=/tmp/pywrap:$PATH \
    PTXBENCH_CANDIDATE=$(realpath bench/strace_child.sh) "$@"; }
  REAL_CANDIDATE=$(realpath build/gpu/bin/ptxbench-candidate) traced timeout 300 "$exec_gpu" \
    --gtest_filter='EvaluatorGpu.WgmmaTma*:EvaluatorGpu.SimtKernel*:EvaluatorGpu.AGraphReplay*:EvaluatorGpu.AFileWritten*:TritonEvaluatorGpu.ThePersistentTma*:TritonEvaluatorGpu.ATorchOp*' \
    > "$out/strace_tests.log" 2>&1; echo "rc=$?" >> "$out/strace_tests.log"
  REAL_CANDIDATE=$(realpath build/gpu/bench/ptxbench-candidate-aa) traced timeout 150 \
    build/gpu/bench/aa_speedup --candidate "$(realpath bench/strace_child.sh)" --repeats 1 \
    --problems gemm_n7168_k5120,mha_with_lse_d128 > "$out/strace_aa.log" 2>&1
  echo "rc=$?" >> "$out/strace_aa.log"
  python3 bench/system_call_survey.py "$out"/strace/child.* > "$out/survey.md" 2>&1
  step "tolerance probe"
  timeout 120 python3 bench/tolerance_probe.py > "$out/tolerance.md" 2>&1; echo "rc=$?" >> "$out/tolerance.md"
  step "the filter's tests and the bad variants"
  timeout 200 "$exec_gpu" --gtest_filter='EvaluatorGpu.AFileWritten*:Invariants/*:EvaluatorGpu.WgmmaTma*' \
    > "$out/exec_gpu_filter.log" 2>&1; echo "rc=$?" >> "$out/exec_gpu_filter.log"
  step "A/A"
  timeout 200 build/gpu/bench/aa_speedup --candidate build/gpu/bench/ptxbench-candidate-aa \
    --repeats 3 --problems gemm_n7168_k5120,mha_with_lse_d128 > "$out/aa.md" 2>&1
  echo "rc=$?" >> "$out/aa.md"
  ;;
6)
  for t in measure service examples/examples; do
    step "test_${t#*/}_gpu"
    timeout 150 "build/gpu/tests/${t%/*}/test_${t#*/}_gpu" > "$out/${t#*/}_gpu.log" 2>&1 ||
      timeout 150 "build/gpu/tests/test_${t#*/}_gpu" > "$out/${t#*/}_gpu.log" 2>&1
    echo "rc=$?" >> "$out/${t#*/}_gpu.log"
  done
  step "the Triton exec tests"
  timeout 260 "$exec_gpu" --gtest_filter='TritonEvaluatorGpu.*' > "$out/exec_gpu_triton.log" 2>&1
  echo "rc=$?" >> "$out/exec_gpu_triton.log"
  step "A/A"
  timeout 150 build/gpu/bench/aa_speedup --candidate build/gpu/bench/ptxbench-candidate-aa \
    --repeats 3 --problems gemm_n7168_k5120,mha_with_lse_d128 > "$out/aa.md" 2>&1
  rc=$?; echo "rc=$rc" >> "$out/aa.md"
  if [ "$rc" != 0 ]; then
    step "one MHA A/A evaluation under strace"
    unpack_strace && mkdir -p /tmp/strace
    STRACE_OUT=/tmp/strace LD_LIBRARY_PATH=$STRACE_LIBS \
      REAL_CANDIDATE=$(realpath build/gpu/bench/ptxbench-candidate-aa) timeout 90 \
      build/gpu/bench/aa_speedup --candidate "$(realpath bench/strace_child.sh)" --repeats 1 \
      --problems mha_with_lse_d128 > "$out/strace_aa.log" 2>&1
    python3 bench/system_call_survey.py /tmp/strace/child.* > "$out/survey.md" 2>&1
    tar -czf "$out/strace.tar.gz" -C /tmp strace
  fi
  ;;
7)
  step "the exec GPU tests other than Triton's"
  timeout 480 "$exec_gpu" --gtest_filter='-TritonEvaluatorGpu.*' > "$out/exec_gpu_cuda.log" 2>&1
  echo "rc=$?" >> "$out/exec_gpu_cuda.log"
  for t in reference agent; do
    step "test_${t}_gpu"
    timeout 100 "build/gpu/tests/test_${t}_gpu" > "$out/${t}_gpu.log" 2>&1
    echo "rc=$?" >> "$out/${t}_gpu.log"
  done
  ;;
8)
  step "the Triton tests that failed"
  timeout 120 "$exec_gpu" --gtest_filter='TritonEvaluatorGpu.RunThatRaisesOnlyOnItsSecond*:TritonEvaluatorGpu.AKernelThatWritesItsInputs*:TritonEvaluatorGpu.LibraryCallsTheGateRejects*' \
    > "$out/exec_gpu_triton_again.log" 2>&1; echo "rc=$?" >> "$out/exec_gpu_triton_again.log"
  step "test_service_gpu"
  timeout 60 build/gpu/tests/test_service_gpu > "$out/service_gpu.log" 2>&1; echo "rc=$?" >> "$out/service_gpu.log"
  step "A/A"
  timeout 90 build/gpu/bench/aa_speedup --candidate build/gpu/bench/ptxbench-candidate-aa \
    --repeats 3 --problems gemm_n7168_k5120,mha_with_lse_d128 > "$out/aa.md" 2>&1
  echo "rc=$?" >> "$out/aa.md"
  step "the exec GPU tests other than Triton's"
  timeout "${EXEC_SECONDS:-200}" "$exec_gpu" --gtest_filter='-TritonEvaluatorGpu.*' > "$out/exec_gpu_cuda.log" 2>&1
  echo "rc=$?" >> "$out/exec_gpu_cuda.log"
  ;;
label)
  # Landlock (util/read_confinement.hpp): the ABI this kernel offers, or the error.
  python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(444, None, 0, 1); print("landlock abi", r, os.strerror(ctypes.get_errno()) if r < 0 else "")' \
    >> "$out/machine.txt" 2>&1
  if [ "${SURVEY:-0}" = 1 ]; then
    step "what the child may read (child_reads_survey)"
    timeout 120 build/gpu/bench/child_reads_survey build/gpu/bin/ptxbench-candidate \
      > "$out/child_reads_survey.log" 2>&1
    echo "rc=$?" >> "$out/child_reads_survey.log"
  fi
  step "ctest -L gpu -R '${CTEST_R:-}' -E '${CTEST_E:-}'"
  (cd build/gpu && timeout "${CTEST_SECONDS:-540}" ctest -L gpu ${CTEST_R:+-R "$CTEST_R"} \
    ${CTEST_E:+-E "$CTEST_E"} --output-on-failure --timeout 240) > "$out/ctest.log" 2>&1
  echo "rc=$?" >> "$out/ctest.log"
  if [ "${AA:-0}" = 1 ]; then
    step "A/A"
    timeout 150 build/gpu/bench/aa_speedup --candidate build/gpu/bench/ptxbench-candidate-aa \
      --repeats 3 --problems gemm_n7168_k5120,mha_with_lse_d128 > "$out/aa.md" 2>&1
    echo "rc=$?" >> "$out/aa.md"
  fi
  ;;
3)
  for t in measure reference service agent examples; do
    step "test_${t}_gpu"
    timeout 150 "build/gpu/tests/test_${t}_gpu" > "$out/${t}_gpu.log" 2>&1
    echo "rc=$?" >> "$out/${t}_gpu.log"
  done
  ;;
esac
step done
