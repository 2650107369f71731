#!/usr/bin/env bash
# The open issues' H200 work (32, 34, 35), as steps that each fit one device call (under 10
# minutes), from the repository root on the GPU machine:
#   bash bench/device_session.sh STEP BUILD
# BUILD: a gpu-preset build laid out as build/gpu, or a .tar.xz of one (bench/device_build.sh);
# `tar -C build/gpu -cJf .devbuild/build.tar.xz --exclude='*.o' --exclude=CMakeFiles .` here,
# then carry .devbuild. Every step writes its logs under $OUT/STEP and packs them into
# $OUT/STEP.tgz (a call brings back only ~16 files).
#   verdicts    (~9 min) the A/A of the three GQA problems against FlashInfer with the buffer
#               probe (issue 32: the 3-5 % the child runs FlashInfer's kernel slower, read with
#               bench/results/flashinfer_h200.md "Stop 31"); the GQA experts against FlashInfer;
#               the pack's row-gather TMA case; the Triton ncu audit with thread_inst_executed;
#               the timing phase timed again (variant 22 over the bound three times); the
#               calibration cap (an honest GEMM not capped, above the speed of light; delayed
#               calibrations capped).
#   slot        (~6 min) the GQA A/A with the call slot shared by descriptor (the default)
#               and by CUDA IPC, side by side, each with the buffer probe; the three
#               GQA experts' speedups against FlashInfer (`ptxbench eval --json`); the buffer
#               tests, a candidate that unmaps the slot (variant 28) and the evaluator's child
#               tests on the new slot.
#   buffers     (~8 min) the CUPTI activity buffers pooled (measure/activity_buffers.hpp) against
#               the fresh 8 MiB buffer per flush before them, side by side: strict_call_steps,
#               the A/A of a GEMM and the ragged prefill, and eval_throughput.sh with
#               DISTINCT=1 COUNT=6 (issue 35: the first CUDA call after each forced flush).
#   records     (~4 min) what stop 35 changed and could not run: the GEMM's A/A with the
#               autotuned baseline handed to the hook (bench/aa_autotune_handover.hpp), pooled
#               and with the fresh 8 MiB buffers; the tests stop 35 left (the copy's bandwidth
#               bound, BadKernel variant 12, knowledge_gpu_test); strict_call_steps with CUPTI's
#               record buffers as they are, in pinned host memory, and at 256 KiB (issue 35:
#               the ~0.21 ms left on the first CUDA call after a flush).
#   spare       (~8 min) the spare prepared beside the evaluation (the default) against after
#               its timing phase (`--spare-prepare after-timing`), side by side: DISTINCT=1
#               REUSE_COUNTS=1 COUNT=6 bench/eval_throughput.sh under each (issue 35: the
#               distinct kernels' window wait), and the A/A of a GEMM and the ragged prefill
#               with counts on under each.
#   throughput  (~9 min) DISTINCT=1 REUSE_COUNTS=1 COUNT=8 bench/eval_throughput.sh and the
#               overhead probes (issue 35), then the gpu label for LABEL_S seconds (default 120),
#               serially (one range-profiler session per GPU; every gpu test holds the CTest lock
#               `gpu`).
#   experts     (~2 min) the two prefills' A/A with the default sharing and the buffer probe
#               (its own copies with activity tracing suspended: the paged prefill's gap) and
#               the three GQA experts' speedups against FlashInfer (`ptxbench eval --json`).
#   label       (~9 min) the gpu label for LABEL_S seconds (default 540), -E LABEL_E to skip
#               what an earlier call ran, or only the tests LABEL_I names (a ctest -I file:
#               `0,0,0,N,N,…`, the test numbers of `ctest -N -L gpu`) to go on where an
#               earlier call's timeout cut it; each call leaves the tests it did not finish in
#               /tmp/ptxbench_label_next.txt, the LABEL_I of the next call on the same machine.
# Issue 34's client batch with the GRPO step is bench/client_on_device.sh (its own carry:
# bench/pack_trainer_for_device.sh).
set -u
step=${1:?step: verdicts, slot, experts, buffers, records, spare, throughput or label}
# shellcheck source=bench/device_build.sh
source bench/device_build.sh && use_gpu_build "${2:?BUILD}" || exit 1
out=${OUT:-/tmp/device_session}/$step
mkdir -p "$out"
export PTXBENCH_ROOT=/work/main
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; uname -r
  git -C /work/main log -1 --format=%H 2>/dev/null; } > "$out/machine.txt" 2>&1

label() { # SECONDS [ctest -E regex] [ctest -I file]; 0 seconds: none
  [ "$1" -gt 0 ] || return 0
  # -I alone, resolved before the cd (LABEL_I is a path from the repository root): with -L
  # too, ctest (3.25) counts the indices within the label and selects none.
  local select=(-L gpu)
  if [ -n "${3:-}" ]; then select=(-I "$(realpath -e "$3")") || return 1; fi
  (cd build/gpu && timeout "$1" ctest "${select[@]}" ${2:+-E "$2"} \
    --output-on-failure --timeout 240) \
    > "$out/ctest.log" 2>&1
  echo "rc=$?" >> "$out/ctest.log"
  tail -40 "$out/ctest.log"
  # What this selection left unrun, as a -I file for the next call on the same warm machine
  # (/tmp outlives a call there): LABEL_I=/tmp/ptxbench_label_next.txt.
  local selected finished
  selected=$(cd build/gpu && ctest -N "${select[@]}" ${2:+-E "$2"} |
    sed -nE 's/^ *Test +#([0-9]+):.*/\1/p')
  finished=$(sed -nE 's/.*Test +#([0-9]+):.*/\1/p' "$out/ctest.log")
  { printf '0,0,0'
    comm -23 <(sort <<< "$selected") <(sort <<< "$finished") | sort -n | sed 's/^/,/' | tr -d '\n'
    echo; } > /tmp/ptxbench_label_next.txt
  echo "left for the next call: $(($(tr ',' '\n' < /tmp/ptxbench_label_next.txt | wc -l) - 3))" |
    tee -a "$out/ctest.log"
}

aa() { # NAME SECONDS ARGS...: aa_speedup's report in $out/aa_NAME.md (its stderr in .err)
  local name=$1 seconds=$2
  shift 2
  timeout "$seconds" build/gpu/bench/aa_speedup --candidate build/gpu/bench/ptxbench-candidate-aa \
    "$@" > "$out/aa_$name.md" 2> "$out/aa_$name.err"
  echo "rc=$?" >> "$out/aa_$name.md"
}

buffers_as() { # pooled | fresh8m: the CUPTI activity buffers of what runs next
  if [ "$1" = fresh8m ]; then
    export PTXBENCH_CUPTI_BUFFER_BYTES=8388608 PTXBENCH_CUPTI_IDLE_BUFFERS=0
  else
    unset PTXBENCH_CUPTI_BUFFER_BYTES PTXBENCH_CUPTI_IDLE_BUFFERS
  fi
}

experts() { # PROBLEMS (comma-separated): each one's expert kernel evaluated, its JSON kept
  local problem
  for problem in ${1//,/ }; do
    timeout 90 build/gpu/src/cli/ptxbench eval "examples/sm90a/$problem.cu" --problem "$problem" \
      --json > "$out/expert_$problem.json" 2> "$out/expert_$problem.err"
    echo "rc=$?" >> "$out/expert_$problem.err"
  done
}

case "$step" in
verdicts)
  PTXBENCH_AA_BUFFER_PROBE=1 aa gqa_probe 240 --repeats 2 --problems \
    gqa_ragged_prefill_causal_h32_kv4_d128,gqa_paged_prefill_causal_h24_kv8_d128_ps1,gqa_paged_decode_h24_kv8_d128_ps1
  (cd build/gpu && timeout 300 ctest -R \
    'knowledge_gpu_test|GqaExampleGpu|TritonEvaluatorGpu.TheNcuAudit|ToolPassesGpu.Ncu|BadKernel.*variant_22|EvaluatorGpu.(AboutThreeFifths|CalibrationsDelayed)' \
    --output-on-failure --timeout 120) > "$out/ctest.log" 2>&1
  echo "rc=$?" >> "$out/ctest.log"
  ;;
slot)
  gqa=gqa_ragged_prefill_causal_h32_kv4_d128,gqa_paged_prefill_causal_h24_kv8_d128_ps1,gqa_paged_decode_h24_kv8_d128_ps1
  for sharing in file_descriptor cuda_ipc; do
    PTXBENCH_BUFFER_SHARING=$sharing PTXBENCH_AA_BUFFER_PROBE=1 \
      aa "gqa_$sharing" 150 --repeats 2 --problems "$gqa"
  done
  experts "$gqa"
  (cd build/gpu && timeout 150 ctest -R 'EvalBuffersGpu|BadKernel.*variant_28|EvaluatorGpu.(BackToBack|TheChildCannot|AboutThreeFifths)' \
    --output-on-failure --timeout 120) > "$out/ctest.log" 2>&1
  echo "rc=$?" >> "$out/ctest.log"
  ;;
experts)
  PTXBENCH_AA_BUFFER_PROBE=1 aa prefill 150 --repeats 2 --problems \
    gqa_ragged_prefill_causal_h32_kv4_d128,gqa_paged_prefill_causal_h24_kv8_d128_ps1
  experts gqa_ragged_prefill_causal_h32_kv4_d128,gqa_paged_prefill_causal_h24_kv8_d128_ps1,gqa_paged_decode_h24_kv8_d128_ps1
  ;;
buffers)
  for setting in pooled fresh8m; do
    buffers_as "$setting"
    timeout 100 build/gpu/bench/strict_call_steps --calls 200 > "$out/strict_call_steps_$setting.md" 2>&1
    echo "rc=$?" >> "$out/strict_call_steps_$setting.md"
    aa "$setting" 120 --repeats 2 --problems gemm_n7168_k5120,gqa_ragged_prefill_causal_h32_kv4_d128
    OUT=$out LABEL=$setting DISTINCT=1 COUNT=6 timeout 150 bash bench/eval_throughput.sh \
      > "$out/eval_throughput_$setting.log" 2>&1
  done
  buffers_as pooled
  ;;
records)
  (cd build/gpu && timeout 100 ctest -R 'CuptiTimer.CopyOfOneGib|knowledge_gpu_test|variant_12$' \
    --output-on-failure) > "$out/ctest.log" 2>&1
  echo "rc=$?" >> "$out/ctest.log"
  for setting in pooled fresh8m; do
    buffers_as "$setting"
    aa "gemm_$setting" 100 --repeats 2 --problems gemm_n7168_k5120
  done
  buffers_as pooled
  for records in device pinned device256k; do
    case $records in
    pinned) export PTXBENCH_CUPTI_HOST_PINNED=1 ;;
    device256k) unset PTXBENCH_CUPTI_HOST_PINNED; export PTXBENCH_CUPTI_DEVICE_BUFFER_BYTES=262144 ;;
    esac
    timeout 60 build/gpu/bench/strict_call_steps --calls 200 > "$out/strict_call_steps_$records.md" 2>&1
    echo "rc=$?" >> "$out/strict_call_steps_$records.md"
  done
  unset PTXBENCH_CUPTI_HOST_PINNED PTXBENCH_CUPTI_DEVICE_BUFFER_BYTES
  ;;
spare)
  for prepare in beside-evaluation after-timing; do
    OUT=$out LABEL=$prepare SERVE_ARGS="--spare-prepare $prepare" DISTINCT=1 REUSE_COUNTS=1 \
      COUNT=6 timeout 200 bash bench/eval_throughput.sh > "$out/eval_throughput_$prepare.log" 2>&1
    aa "$prepare" 100 --repeats 2 --counts on --spare-prepare "$prepare" \
      --problems gemm_n7168_k5120,gqa_ragged_prefill_causal_h32_kv4_d128
  done
  ;;
throughput)
  OUT=$out DISTINCT=1 REUSE_COUNTS=1 COUNT=8 timeout 260 bash bench/eval_throughput.sh \
    > "$out/eval_throughput.log" 2>&1
  OUT=$out/probes timeout 150 bash bench/run_overhead_probes_on_device.sh build/gpu \
    > "$out/probes.log" 2>&1
  label "${LABEL_S:-120}" "${LABEL_E:-}" "${LABEL_I:-}"
  ;;
label)
  label "${LABEL_S:-540}" "${LABEL_E:-}" "${LABEL_I:-}"
  ;;
*)
  echo "unknown step $step" >&2
  exit 2
  ;;
esac
tar -C "$out/.." -czf "$out.tgz" "$step"
ls -la "$out"
