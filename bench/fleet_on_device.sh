#!/usr/bin/env bash
# Issue 31 on the H200 (bench/results/fleet_h200.md): a fleet on PostgreSQL on one GPU machine.
# A PostgreSQL server (the Debian one, packed by bench/pack_postgres_for_device.sh: the machine
# has none and cannot fetch one) on loopback; two `ptxbench serve --broker` workers sharing the
# GPU (h200-a also serves the HTTP front, for /metrics); two agent runs at once through the
# broker, one in CUDA and one in Triton, each a replay model answering with the repository's
# sm90a example kernel; then `fleet status`, the tasks table and the workers' logs. From the
# repository root:
#   bash bench/fleet_on_device.sh BUILD PG
# BUILD: a gpu-preset build laid out as build/gpu, or a .tar.xz of one; PG: the packed
# PostgreSQL folder or its .tar.xz. Logs under $OUT.
set -u
pgroot=$(realpath "$2")
# shellcheck source=bench/device_build.sh
source bench/device_build.sh && use_gpu_build "$1" || exit 1
pgroot=$(unpack "$pgroot" /tmp/pgpack)
[ -d "$pgroot/pg" ] && pgroot=$pgroot/pg
out=${OUT:-/tmp/fleet_out}
problem=${PROBLEM:-gemm_n7168_k5120}
mkdir -p "$out"
export LD_LIBRARY_PATH=$pgroot/client:$LD_LIBRARY_PATH
export PTXBENCH_CACHE=/tmp/fleet_cache
ptxbench=/work/main/build/gpu/src/cli/ptxbench
step() { echo "=== $1 $(date -u +%H:%M:%S)" | tee -a "$out/steps.txt"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv; ldd "$pgroot/client/libpq.so.5" | grep 'not found' || echo "libpq: every library found"; } \
  > "$out/machine.txt" 2>&1

step "PostgreSQL"
pg_user=root
if [ "$(id -u)" -eq 0 ]; then
  pg_user=ptxbench_pg
  id "$pg_user" >/dev/null 2>&1 || useradd -r -M "$pg_user" 2>>"$out/steps.txt" || pg_user=nobody
fi
as_pg() { if [ "$pg_user" = root ]; then "$@"; else runuser -u "$pg_user" -- "$@"; fi; }
data=/tmp/fleet_pg && rm -rf "$data" && mkdir -p "$data" && chown "$pg_user" "$data" 2>/dev/null
chmod -R a+rX "$pgroot"
as_pg env LD_LIBRARY_PATH="$pgroot/libs" "$pgroot/bin/initdb" -D "$data/db" -U ptxbench \
  --auth=trust -E UTF8 --no-sync > "$out/initdb.log" 2>&1
as_pg env LD_LIBRARY_PATH="$pgroot/libs" "$pgroot/bin/pg_ctl" -D "$data/db" -l "$data/server.log" \
  -w -t 60 -o "-p 55432 -k $data -c listen_addresses=127.0.0.1" start > "$out/pg_start.log" 2>&1
broker=postgresql://ptxbench@127.0.0.1:55432/postgres
psql_q() { LD_LIBRARY_PATH="$pgroot/libs" "$pgroot/bin/psql" -X -q "$broker" "$@"; }
psql_q -c 'select version()' >> "$out/machine.txt" 2>&1

step "two workers on GPU 0 (h200-a with the HTTP front)"
"$ptxbench" serve --broker "$broker" --host-name h200-a --port 0 --gpus 0 \
  > "$out/front_url.txt" 2> "$out/worker_a.log" &
worker_a=$!
"$ptxbench" serve --broker "$broker" --host-name h200-b --gpus 0 \
  > /dev/null 2> "$out/worker_b.log" &
worker_b=$!
for _ in $(seq 120); do [ -s "$out/front_url.txt" ] && break; sleep 0.5; done
front=$(head -1 "$out/front_url.txt")
echo "front: $front" >> "$out/steps.txt"

step "replay models"
models=$out/models && mkdir -p "$models"
python3 - "$models" examples/sm90a/$problem.cu examples/sm90a/$problem.py <<'PY'
import json, os, sys
models, cuda, triton = sys.argv[1:4]
def lines(path, fence, n):
    src = open(path).read()
    return [json.dumps({"text": f"My kernel.\n\n```{fence}\n{src}\n```\n"}) + "\n"] * n
for name, path, fence in (("cuda-expert", cuda, "cuda"), ("triton-expert", triton, "python")):
    with open(os.path.join(models, name + ".jsonl"), "w") as f:
        f.writelines(lines(path, fence, 64))
json.dump({"models": {n: {"provider": "replay", "model": "replay", "replay_file": n + ".jsonl"}
                      for n in ("cuda-expert", "triton-expert")}},
          open(os.path.join(models, "models.json"), "w"), indent=2)
PY

step "a CUDA run and a Triton run at once, through the broker"
run_one() { # MODEL LANGUAGE
  "$ptxbench" run --model "$1" --registry "$models/models.json" --problem "$problem" \
    --variant default --language "$2" --turns "${TURNS:-3}" --trajectories "${TRAJECTORIES:-2}" \
    --target-speedup 100 --jobs 2 --broker "$broker" --out "$out/run-$2" --quiet \
    > "$out/run-$2.log" 2>&1
  echo "rc=$?" >> "$out/run-$2.log"
}
start=$(date +%s)
run_one cuda-expert cuda &
cuda_run=$!
run_one triton-expert triton &
triton_run=$!
sleep 20
curl -s "$front/metrics" > "$out/metrics_mid_run.txt" 2>&1
"$ptxbench" fleet status --broker "$broker" > "$out/fleet_status_mid_run.txt" 2>&1
wait $cuda_run $triton_run
echo "both runs: $(( $(date +%s) - start )) s" >> "$out/steps.txt"

step "what the fleet recorded"
"$ptxbench" fleet status --broker "$broker" > "$out/fleet_status.txt" 2>&1
"$ptxbench" fleet status --broker "$broker" --format json > "$out/fleet_status.json" 2>&1
curl -s "$front/metrics" > "$out/metrics.txt" 2>&1
curl -s "$front/health" > "$out/health.json" 2>&1
psql_q -c "select id, run, language, state, attempt, deaths, requeues, worker,
  round(extract(epoch from finished_at - started_at)::numeric, 2) as eval_s,
  (result::json->>'status') as status, (result::json->'trace'->'evaluation'->'performance'->>'speedup_factor') as speedup, left(coalesce(error, ''), 80) as error
  from ptxbench_tasks order by id" > "$out/tasks.txt" 2>&1
for language in cuda triton; do
  "$ptxbench" report "$out/run-$language" > "$out/report-$language.txt" 2>&1
done

step "stop"
kill -TERM $worker_a $worker_b 2>/dev/null
wait $worker_a $worker_b
as_pg env LD_LIBRARY_PATH="$pgroot/libs" "$pgroot/bin/pg_ctl" -D "$data/db" -m fast stop \
  >> "$out/pg_start.log" 2>&1
cp "$data/server.log" "$out/pg_server.log" 2>/dev/null
step "done"
