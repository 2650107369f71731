#!/usr/bin/env bash
# Evaluation throughput through `ptxbench serve` (issue 18): starts the server from BIN_DIR
# (ptxbench, ptxbench-candidate; default build/gpu's), runs COUNT back-to-back evaluations of
# the wgmma+TMA GEMM test kernel with the reference reused, then COUNT with it re-timed
# (bench/eval_throughput.py: evaluations per minute, phase medians, ratio to the physical
# minimum); with DISTINCT=1 also COUNT distinct kernels back to back (a harmless constant each,
# every cubin different: issue 35) in both modes; with REUSE_COUNTS=1 also COUNT of the same
# kernel with one fixed seed and the counts cache on (counts reused after the first); then
# stops the server. SERVE_ARGS are passed
# to `ptxbench serve` (e.g.
# "--gpus 0 --workers-per-gpu 2"). Writes $OUT/eval_throughput_$LABEL.jsonl and the server's log.
# Usage (repository root, on the GPU machine): [BIN_DIR=…] [COUNT=10] [LABEL=after] [DISTINCT=1] \
#   [REUSE_COUNTS=1] \
#   bash bench/eval_throughput.sh
set -u
out=${OUT:-/tmp/eval_throughput}
label=${LABEL:-run}
count=${COUNT:-10}
mkdir -p "$out"
bin=${BIN_DIR:-build/gpu}
ptxbench=$bin/ptxbench; [ -x "$ptxbench" ] || ptxbench=$bin/src/cli/ptxbench
candidate=$bin/ptxbench-candidate; [ -x "$candidate" ] || candidate=$bin/bin/ptxbench-candidate
PTXBENCH_CANDIDATE=$(realpath "$candidate")
PTXBENCH_CACHE=${PTXBENCH_CACHE:-$(mktemp -d)}
export PTXBENCH_CANDIDATE PTXBENCH_CACHE
log=$out/eval_throughput_$label.jsonl
{
  date -u +"# date: %Y-%m-%dT%H:%M:%SZ"
  echo "# $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"
  echo "# ptxbench: $ptxbench; candidate: $PTXBENCH_CANDIDATE; serve ${SERVE_ARGS:-}"
} > "$log"
# shellcheck disable=SC2086
"$ptxbench" serve --port 0 --state "$PTXBENCH_CACHE/state-$label" ${SERVE_ARGS:-} \
  > "$out/serve_$label.stdout" 2> "$out/serve_$label.stderr" &
serve=$!
trap 'kill -TERM "$serve" 2>/dev/null' EXIT
for _ in $(seq 300); do [ -s "$out/serve_$label.stdout" ] && break; sleep 0.1; done
url=$(head -1 "$out/serve_$label.stdout")
kernel=tests/kernels/sm90_wgmma_tma_gemm.cu
python3 -c "import urllib.request,sys; print('# health', urllib.request.urlopen(sys.argv[1] + '/health').read().decode())" "$url" >> "$log" 2>&1
for distinct in "" ${DISTINCT:+--distinct} ${REUSE_COUNTS:+--reuse-counts}; do
  for mode in reuse bypass; do
    echo "# python3 bench/eval_throughput.py URL $kernel --count $count --mode $mode $distinct" >> "$log"
    # shellcheck disable=SC2086
    python3 bench/eval_throughput.py "$url" "$kernel" --count "$count" --mode "$mode" $distinct \
      >> "$log" 2>&1
  done
done
kill -TERM "$serve"; wait "$serve"; echo "# serve exit status $?" >> "$log"; trap - EXIT
grep -h '"summary"' "$log"
