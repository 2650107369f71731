#!/usr/bin/env bash
# The SASS Metrics probe (bench/sass_metrics_probe.cpp) on the GPU machine, in one go (~1 min):
# counting cycles alone; two processes enabling collection at once; strict trials alone, then
# beside a process that counts in a loop. Writes OUT/sass_probe_*.txt.
# Usage (repository root, on the GPU machine): bash bench/run_sass_probe_on_device.sh BIN OUT
#   BIN  the built sass_metrics_probe (build/gpu/bench/sass_metrics_probe)
set -u
bin=$1 out=$2
mkdir -p "$out"
# Every step under a deadline: lazy patching has been reported to hang launches after a
# partial set-up failure.
probe() { timeout 90 "$bin" "$@"; }
export PATH=$PATH:/usr/local/cuda/bin
probe --cycles 4 > "$out/sass_probe_cycles.txt" 2>&1; echo "rc=$?" >> "$out/sass_probe_cycles.txt"
probe --hold 4 > "$out/sass_probe_hold_a.txt" 2>&1 &
sleep 2
probe --hold 0.5 > "$out/sass_probe_hold_b.txt" 2>&1; echo "rc=$?" >> "$out/sass_probe_hold_b.txt"
wait; echo "rc=$?" >> "$out/sass_probe_hold_a.txt"
probe --trials 5 > "$out/sass_probe_trials_alone.txt" 2>&1
probe --trials 8 > "$out/sass_probe_trials_beside.txt" 2>&1 &
sleep 1.5
probe --cycles 12 > "$out/sass_probe_cycles_beside.txt" 2>&1
wait
tail -n +1 "$out"/sass_probe_*.txt
