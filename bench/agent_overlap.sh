#!/usr/bin/env bash
# Agent-side overlap (issue 18): with TRAJECTORIES trajectories in flight and a model that
# answers after DELAY seconds, is the GPU evaluator busy while evaluations are queued?
# Starts bench/agent_overlap_server.py (an OpenAI-compatible server on loopback whose replies
# are the demo's wrong-descriptor and correct wgmma GEMMs, so every turn reaches the GPU), runs
# `ptxbench run` through the OpenAI path with the GPU evaluator, then prints
# bench/agent_overlap.py's figures for the run (target: busy_fraction >= 0.8).
# Usage (repository root, on the GPU machine):
#   [BIN_DIR=build/gpu] [TRAJECTORIES=16] [TURNS=3] [DELAY=30] [OUT=…] bash bench/agent_overlap.sh
set -euo pipefail
out=${OUT:-/tmp/agent_overlap}
trajectories=${TRAJECTORIES:-16}
turns=${TURNS:-3}
delay=${DELAY:-30}
mkdir -p "$out"
bin=${BIN_DIR:-build/gpu}
ptxbench=$bin/ptxbench; [ -x "$ptxbench" ] || ptxbench=$bin/src/cli/ptxbench
candidate=$bin/ptxbench-candidate; [ -x "$candidate" ] || candidate=$bin/bin/ptxbench-candidate
export PTXBENCH_CANDIDATE=$(realpath "$candidate") PTXBENCH_ROOT=${PTXBENCH_ROOT:-$PWD}
rm -f "$out/port"
python3 bench/agent_overlap_server.py "$out/port" config/demo/gemm_replay.jsonl "$delay" 2 3 \
  2> "$out/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.1; done
cat > "$out/models.json" <<JSON
{"models": {"slow": {"provider": "openai", "base_url": "http://127.0.0.1:$(cat "$out/port")/v1",
  "model": "slow-replay", "timeout_s": $((delay * 4)), "notes": "bench/agent_overlap_server.py"}}}
JSON
rm -rf "$out/run"
start=$(date +%s.%N)
set +e
"$ptxbench" run --model slow --registry "$out/models.json" --problem gemm_n7168_k5120 \
  --variant none --trajectories "$trajectories" --jobs "$trajectories" --turns "$turns" \
  --target-speedup 0 --out "$out/run" --quiet > "$out/run.log" 2>&1
status=$?
set -e
wall=$(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$start" "$(date +%s.%N)")
echo "# ptxbench run exit $status, wall $wall s" | tee -a "$out/run.log"
python3 bench/agent_overlap.py "$out/run" | tee "$out/overlap.json"
