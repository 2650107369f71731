#!/usr/bin/env bash
# One device session for src/reference: GPU and CPU tests, the GQA references' latency next to
# the naive kernel, then benchmark 1 — our references and the same libraries through PyTorch,
# trials interleaved in one session (bench/torch_reference_latency.py --interleave).
# Expects test_reference_gpu, test_reference_cpu and reference_latency (Release) in $BIN_DIR
# (default build/gqa-gpu-bin, carried) and writes logs under $OUT.
# Usage (repo root on the GPU machine): bash bench/run_reference_on_device.sh
set -u
out=${OUT:-/tmp/reference_out}
mkdir -p "$out"
bin=${BIN_DIR:-build/gqa-gpu-bin}
# Both sides of the comparison load PyTorch's cuDNN (its directory first on LD_LIBRARY_PATH)
# and, for benchmark 1, PyTorch's cuBLASLt (LD_PRELOAD of that one file, so our binary keeps
# the toolkit's cudart); each side prints the files it mapped.
cudnn_dir=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null)
if [ -n "$cudnn_dir" ] && [ -d "$cudnn_dir" ]; then export LD_LIBRARY_PATH="$cudnn_dir:${LD_LIBRARY_PATH:-}"; fi
torch_cublaslt=$(python3 -c "
import glob, os, nvidia
found = [p for d in nvidia.__path__ for p in glob.glob(os.path.join(d, 'cu13', 'lib', 'libcublasLt.so.13'))]
print(found[0] if found else '')" 2>/dev/null)
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd "$bin/reference_latency" | grep -E "cudnn|cublas|cudart"
  python3 -c "import torch; print('torch', torch.__version__, 'cuDNN', torch.backends.cudnn.version())"
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }
step "test_reference_gpu (all but *Degenerate*)"
timeout 240 "$bin/test_reference_gpu" --gtest_color=no --gtest_filter='-*Degenerate*' \
  > "$out/test_reference_gpu.log" 2>&1
echo "exit $?"; grep -E "^\[(gqa|gemm|fwd|bwd)|^\[ *(FAILED|PASSED) |^\[  FAILED" "$out/test_reference_gpu.log" | head -60
step "test_reference_gpu *Degenerate*"
timeout 60 "$bin/test_reference_gpu" --gtest_color=no --gtest_filter='*Degenerate*' \
  > "$out/test_reference_gpu_degenerate.log" 2>&1
echo "exit $?"; grep -E "^\[gqa|^\[ *(OK|FAILED|PASSED) |Failure|error" "$out/test_reference_gpu_degenerate.log" | head -30
step "test_reference_cpu"
"$bin/test_reference_cpu" --gtest_brief=1 > "$out/test_reference_cpu.log" 2>&1
echo "exit $?"; tail -3 "$out/test_reference_cpu.log"
step "reference_latency (GQA)"
timeout 120 "$bin/reference_latency" gqa_ragged_prefill_causal_h32_kv4_d128 \
  gqa_paged_prefill_causal_h24_kv8_d128_ps1 gqa_paged_decode_h24_kv8_d128_ps1 2>&1 \
  | tee "$out/gqa_reference_latency.txt"
step "reference_latency --cupti (GQA)"
timeout 90 "$bin/reference_latency" --cupti gqa_ragged_prefill_causal_h32_kv4_d128 \
  gqa_paged_prefill_causal_h24_kv8_d128_ps1 gqa_paged_decode_h24_kv8_d128_ps1 2>&1 \
  | tee "$out/gqa_reference_latency_cupti.txt"
step "cuDNN frontend log of the three GQA graphs"
CUDNN_FRONTEND_LOG_INFO=1 CUDNN_FRONTEND_LOG_FILE="$out/cudnn_frontend_gqa.log" timeout 60 \
  "$bin/test_reference_gpu" --gtest_filter='*LibraryReferenceIsCudnn*' > /dev/null 2>&1
grep -iE "auto-selected|implementation" "$out/cudnn_frontend_gqa.log" | sort | uniq -c | head
gzip -f "$out/cudnn_frontend_gqa.log"
step "benchmark 1, interleaved"
echo "torch cuBLASLt: ${torch_cublaslt:-none found}"
PYTHONUNBUFFERED=1 LD_PRELOAD="${torch_cublaslt}" timeout 300 python3 bench/torch_reference_latency.py \
  --interleave "$bin/reference_latency" --pairs "${PAIRS:-10}" 2>&1 | tee "$out/benchmark1_interleaved.txt"
step "done"
