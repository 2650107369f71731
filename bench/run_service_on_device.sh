#!/usr/bin/env bash
# One device session for src/service: the GPU test (the service in-process on CUDA device 0,
# evaluations over HTTP on loopback), whose SERVICE_BENCH lines are the back-to-back wall and
# phase times of bench/results/service_h200.md; then `ptxbench serve` itself: /health, the
# same kernel back to back through it (bench/service_back_to_back.py), SIGTERM.
# Expects test_service_gpu, ptxbench, ptxbench-candidate and libcpp-httplib.so.0.11 (Release,
# stripped) in $BIN_DIR (default build/serve-gpu-bin, carried); writes logs under $OUT.
# Usage (repo root on the GPU machine): bash bench/run_service_on_device.sh
set -u
out=${OUT:-/tmp/service_out}
mkdir -p "$out"
bin=$(cd "${BIN_DIR:-build/serve-gpu-bin}" && pwd)
# The test binaries name the sources by their path on the build machine.
mkdir -p /work && [ -e /work/main ] || ln -sfn "$PWD" /work/main
cudnn=$(find / -name 'libcudnn.so.9' -not -path '*/proc/*' 2>/dev/null | head -1)
export PTXBENCH_ROOT=$PWD PTXBENCH_CANDIDATE=$bin/ptxbench-candidate PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$bin:$(dirname "$cudnn"):/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PTXBENCH_CACHE=$(mktemp -d)
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
  ldd "$bin"/test_service_gpu "$bin"/ptxbench 2>/dev/null | grep -E "not found|httplib" || true
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
echo "=== test_service_gpu ($(date -u +%H:%M:%S))"
"$bin/test_service_gpu" 2>&1 | tee "$out/service_gpu.log"
[ -x "$bin/ptxbench" ] || exit 0
echo "=== ptxbench serve ($(date -u +%H:%M:%S))"
"$bin/ptxbench" serve --port 0 --state "$PTXBENCH_CACHE/state" > "$out/serve_stdout.txt" 2> "$out/serve_stderr.txt" &
serve=$!
for _ in $(seq 100); do [ -s "$out/serve_stdout.txt" ] && break; sleep 0.1; done
url=$(head -1 "$out/serve_stdout.txt")
python3 -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1] + '/health').read().decode())" "$url" \
  > "$out/serve_health.json" 2>&1
# Bench 4: the same kernel back to back through the server; the first request also compiles
# it and measures the reference, the later ones find both warm.
kernel=tests/kernels/sm90_wgmma_tma_gemm.cu
{
  echo "# python3 bench/service_back_to_back.py URL $kernel --count 3 --mode reuse"
  python3 bench/service_back_to_back.py "$url" "$kernel" --count 3 --mode reuse
  echo "# python3 bench/service_back_to_back.py URL $kernel --count 2 --mode bypass"
  python3 bench/service_back_to_back.py "$url" "$kernel" --count 2 --mode bypass
} > "$out/serve_bench.jsonl" 2>&1
kill -TERM "$serve"; wait "$serve"; echo "serve exit status $?" >> "$out/serve_stderr.txt"
cat "$out/serve_health.json" "$out/serve_bench.jsonl" "$out/serve_stderr.txt"
date -u +"end: %Y-%m-%dT%H:%M:%SZ" >> "$out/machine.txt"
