#!/usr/bin/env bash
# Issue 34 on the H200 (bench/results/client_batch_h200.md): `ptxbench serve` on GPU 0 and the
# Python client's batch of distinct kernels (bench/client_batch.py), rollouts through the Env,
# `report` of the rollouts' run folder, and whether the GPU machine's Python has a trainer stack
# (torch, transformers, datasets, trl). From the repository root:
#   bash bench/client_on_device.sh BUILD [N] [CONCURRENCY]
# BUILD: a gpu-preset build laid out as build/gpu, or a .tar.xz of one. Output under $OUT.
set -u
# shellcheck source=bench/device_build.sh
source bench/device_build.sh && use_gpu_build "$1" || exit 1
out=${OUT:-/tmp/client_out}
mkdir -p "$out"
export PTXBENCH_CACHE=/tmp/client_cache
ptxbench=/work/main/build/gpu/src/cli/ptxbench
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv; python3 --version;
  python3 -c "import torch; print('torch', torch.__version__)" 2>&1 | tail -1
  for m in transformers datasets trl accelerate pyarrow; do
    python3 -c "import $m; print('$m', $m.__version__)" 2>&1 | tail -1; done; } > "$out/machine.txt" 2>&1
"$ptxbench" serve --port 0 --gpus 0 --workers-per-gpu "${WORKERS:-4}" --state /tmp/client_state \
  > "$out/url.txt" 2> "$out/serve.log" &
serve=$!
for _ in $(seq 240); do [ -s "$out/url.txt" ] && break; sleep 0.5; done
url=$(head -1 "$out/url.txt")
echo "serve at $url" >> "$out/machine.txt"
# Warm-up: one evaluation measures the library baseline once (reused by the batch, as a
# trainer's long-running service does).
python3 - "$url" > "$out/warmup.txt" 2>&1 <<'PY'
import sys, time
sys.path.insert(0, "python/ptxbench_client/src")
from ptxbench_client import Client
t = time.monotonic()
r = Client(sys.argv[1]).evaluate("gemm_n7168_k5120", open("examples/sm90a/gemm_n7168_k5120.cu").read() + "\n// warm-up\n", timeout_s=900)
print(r.state, r.status, r.speedup, r.target_executed, round(time.monotonic() - t, 2), "s", r.error)
PY
python3 bench/client_batch.py "$url" --n "${2:-64}" --concurrency "${3:-16}" \
  --out "$out/client_batch.json" > "$out/client_batch_summary.json" 2> "$out/client_batch.err"
for dir in /tmp/client_state/rollouts/*/; do
  [ -f "$dir/run.sqlite" ] && "$ptxbench" report "$dir" > "$out/rollouts_report.md" 2>&1
done
# The GRPO trainer step (issue 34), where this Python has the trainer stack; TOKENIZER: a
# tokenizer.json (CI's comes from the anthropic package in .deps/python-tokenizer/, which does
# not travel; carry a copy, e.g. .devbuild/tokenizer.json).
tokenizer=${TOKENIZER:-.devbuild/tokenizer.json}
# TRAINER_WHEELS: the CI-tested trainer set and trl as wheels (bench/pack_trainer_for_device.sh),
# installed for this step only, ahead of the machine's own packages (its torch, numpy, pyarrow
# and accelerate serve).
if [ -n "${TRAINER_WHEELS:-}" ]; then
  # One by one: pip refuses a whole list for one wheel it cannot install.
  for wheel in "$TRAINER_WHEELS"/*.whl; do
    python3 -m pip install --quiet --no-index --no-deps --target /tmp/trainer-py "$wheel" \
      >> "$out/trainer_install.log" 2>&1 || echo "not installed: $wheel" >> "$out/trainer_install.log"
  done
  export PYTHONPATH=/tmp/trainer-py${PYTHONPATH:+:$PYTHONPATH}
  python3 -c "import transformers, datasets, trl; print('trainer', transformers.__version__, datasets.__version__, trl.__version__)" \
    >> "$out/machine.txt" 2>&1
fi
if python3 -c "import torch, transformers, datasets, trl" > /dev/null 2>&1 && [ -f "$tokenizer" ]; then
  tokenizer=$(realpath "$tokenizer")
  (cd "$out" && timeout 300 python3 /work/main/python/ptxbench_client/examples/grpo_trl.py \
    "$url" "$tokenizer" > grpo.json 2> grpo.err; echo "rc=$?" >> grpo.err)
else
  echo "GRPO step not run: torch, transformers, datasets and trl do not all import, or no $tokenizer" \
    > "$out/grpo.err"
fi
curl -s "$url/metrics" > "$out/metrics.txt"
kill -TERM $serve; wait $serve
echo "done" >> "$out/machine.txt"
