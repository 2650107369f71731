#!/usr/bin/env bash
# Issue 3: a supervisor process per GPU (DESIGN.md §4 "Isolation", docs/service.md) on a
# machine with two GPUs (bench/results/two_gpu_service_h200.md).
#
# Starts one `ptxbench serve` per GPU (CUDA_VISIBLE_DEVICES=N, its own state folder), sends
# each the same two evaluations (the wgmma test GEMM and the MHA forward example) at once,
# samples `nvidia-smi --query-compute-apps` while they run, and reports per task the server,
# verdict, latencies and speedup, and which GPUs ran candidate processes. Then one agent run
# (the demo model) is given both URLs. Exits 0 only when every task PASSED, candidate processes
# ran on both GPUs, and the agent run ended well with turns evaluated by both servers.
#
#   bench/two_gpu_service.sh BIN_DIR OUT_DIR     (from the repository root, on the GPU machine)
# BIN_DIR holds ptxbench and ptxbench-candidate (gpu preset) and, in lib/, shared libraries
# the machine lacks.
set -u
BIN=$(realpath "$1")
OUT=$(realpath "$2")
mkdir -p "$OUT"
export PTXBENCH_ROOT=$PWD PTXBENCH_CANDIDATE=$BIN/ptxbench-candidate
CUDNN_DIR=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '*/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$BIN/lib:$CUDNN_DIR:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
REPORT=$OUT/two_gpu_service.md

if [ "$(nvidia-smi -L | wc -l)" -lt 2 ]; then
  echo "two_gpu_service: this machine has fewer than two GPUs" | tee "$REPORT"
  exit 2
fi
STATE=$(mktemp -d)
{ echo "# One ptxbench serve per GPU"; echo; date -u; nvidia-smi -L; echo; } > "$REPORT"

pids=()
for gpu in 0 1; do
  CUDA_VISIBLE_DEVICES=$gpu "$BIN/ptxbench" serve --port 0 --state "$STATE/state$gpu" \
    > "$STATE/url$gpu" 2> "$OUT/serve_$gpu.log" &
  pids+=($!)
done
stop_servers() { kill -TERM "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
trap stop_servers EXIT
for gpu in 0 1; do
  for _ in $(seq 120); do [ -s "$STATE/url$gpu" ] && break; sleep 0.5; done
done
URL0=$(head -1 "$STATE/url0")
URL1=$(head -1 "$STATE/url1")
if [ -z "$URL0" ] || [ -z "$URL1" ]; then
  echo "two_gpu_service: a server did not start (serve_0.log, serve_1.log)" | tee -a "$REPORT"
  exit 1
fi

# Sample which GPUs run which processes while the tasks run.
( while :; do
    nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name --format=csv,noheader
    sleep 0.5
  done ) > "$OUT/compute_apps.csv" 2>&1 &
sampler=$!

python3 - "$URL0" "$URL1" >> "$REPORT" <<'EOF'
import json, sys, urllib.request

urls = sys.argv[1:]
kernels = [("gemm_n7168_k5120", "tests/kernels/sm90_wgmma_tma_gemm.cu"),
           ("mha_with_lse_d128", "examples/sm90a/mha_with_lse_d128.cu")]

def call(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=700) as answer:
        return json.load(answer)

for url in urls:
    print(f"- `{url}` health: `{json.dumps(call(url + '/health'))}`")
tasks = []
for problem, path in kernels:          # every server gets both tasks before any is awaited
    source = open(path).read()
    for url in urls:
        body = {"solution": {"definition": problem,
                             "sources": [{"path": "kernel.cu", "content": source}]}}
        tasks.append((url, problem, call(url + "/evaluate", body)["task_id"]))
print("\n| server | problem | task status | verdict | device | candidate ms | reference ms "
      "| speedup | interleave_calls | started → finished |\n|---|---|---|---|---|---|---|---|---|---|")
passed = 0
for url, problem, task_id in tasks:
    task = call(f"{url}/tasks/{task_id}?timeout=600")
    result = task.get("result", {})
    perf = (result.get("trace", {}).get("evaluation") or {}).get("performance") or {}
    extra = (result.get("trace", {}).get("evaluation") or {}).get("ptxbench") or {}
    timing = extra.get("timing", {})
    passed += result.get("status") == "PASSED"
    print(f"| {url} | {problem} | {task.get('status')} | {result.get('status')} "
          f"| {task.get('device')} | {timing.get('candidate_ms')} | {timing.get('reference_ms')} "
          f"| {perf.get('speedup_factor')} | {timing.get('interleave_calls')} "
          f"| {task.get('started_at')} → {task.get('finished_at')} |")
    if result.get("status") != "PASSED":
        print(f"\n```\n{json.dumps(task)[:4000]}\n```\n")
print(f"\n{passed} of {len(tasks)} tasks PASSED")
sys.exit(0 if passed == len(tasks) else 1)
EOF
tasks_ok=$?

# The client side of the layout: one agent run given both servers' URLs spreads its turns over
# them (agent/remote_executor.cpp picks the server with the shortest queue).
before0=$(grep -c ' task ' "$OUT/serve_0.log")
before1=$(grep -c ' task ' "$OUT/serve_1.log")
"$BIN/ptxbench" run --model demo --trajectories 4 --jobs 4 --turns 3 \
  --eval-service "$URL0" --eval-service "$URL1" --out "$OUT/run_two_urls" \
  > "$OUT/run_two_urls.log" 2>&1
run_rc=$?
served0=$(( $(grep -c ' task ' "$OUT/serve_0.log") - before0 ))
served1=$(( $(grep -c ' task ' "$OUT/serve_1.log") - before1 ))
{ echo; echo "## One agent run with both URLs (--model demo --trajectories 4 --jobs 4 --turns 3)"
  echo; echo "exit code $run_rc; tasks finished by the server on GPU 0: $served0, on GPU 1: $served1"
  echo; echo '```'; tail -15 "$OUT/run_two_urls.log"; echo '```'; } >> "$REPORT"
run_ok=1
[ "$run_rc" = 0 ] && [ "$served0" -gt 0 ] && [ "$served1" -gt 0 ] && run_ok=0
kill "$sampler" 2>/dev/null
used=$(grep -i ptxbench-candidate "$OUT/compute_apps.csv" | cut -d, -f2 | sort -u | wc -l)
{ echo; echo "GPUs that ran a ptxbench-candidate process (sampled every 0.5 s): $used"
  grep -i ptxbench "$OUT/compute_apps.csv" | cut -d, -f2,4 | sort | uniq -c; } >> "$REPORT"
stop_servers
trap - EXIT
{ echo; echo "after the servers stopped:"; nvidia-smi --query-gpu=index,memory.used --format=csv
  pgrep -fa ptxbench || echo "(no ptxbench process left)"; } >> "$REPORT" 2>&1
rm -rf "$STATE"
[ "$tasks_ok" = 0 ] && [ "$used" = 2 ] && [ "$run_ok" = 0 ]
