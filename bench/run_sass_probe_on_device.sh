#!/usr/bin/env bash
# The SASS Metrics probe (bench/sass_metrics_probe.cpp) on the GPU machine, in one go (~1 min):
# the SASS opcodes; counting cycles alone (activity tracing paused, on, or no timer at all;
# lazy and eager patching); two processes enabling collection at once; strict trials alone, then
# beside a process that counts in a loop. Writes OUT/sass_probe.md.
# Usage (repository root, on the GPU machine): bash bench/run_sass_probe_on_device.sh BIN OUT
#   BIN  the built sass_metrics_probe (build/gpu/bench/sass_metrics_probe)
set -u
bin=$1 out=$2
mkdir -p "$out"
# Every step under a deadline: lazy patching has been reported to hang launches after a
# partial set-up failure.
probe() { timeout 90 "$bin" "$@"; }
export PATH=$PATH:/usr/local/cuda/bin
probe --opcodes > "$out/sass_probe_opcodes.txt" 2>&1
probe --cycles 4 > "$out/sass_probe_cycles.txt" 2>&1; echo "rc=$?" >> "$out/sass_probe_cycles.txt"
PROBE_NO_TIMER=1 probe --cycles 3 > "$out/sass_probe_cycles_no_timer.txt" 2>&1
echo "rc=$?" >> "$out/sass_probe_cycles_no_timer.txt"
PROBE_NO_PAUSE=1 probe --cycles 3 > "$out/sass_probe_cycles_no_pause.txt" 2>&1
echo "rc=$?" >> "$out/sass_probe_cycles_no_pause.txt"
PROBE_NO_WARM=1 probe --cycles 2 > "$out/sass_probe_cycles_first.txt" 2>&1
echo "rc=$?" >> "$out/sass_probe_cycles_first.txt"
PROBE_NO_WARM=1 PROBE_NO_TIMER=1 probe --cycles 2 > "$out/sass_probe_cycles_first_no_timer.txt" 2>&1
echo "rc=$?" >> "$out/sass_probe_cycles_first_no_timer.txt"
PROBE_EAGER=1 probe --cycles 3 > "$out/sass_probe_cycles_eager.txt" 2>&1
echo "rc=$?" >> "$out/sass_probe_cycles_eager.txt"
probe --hold 4 > "$out/sass_probe_hold_a.txt" 2>&1 &
sleep 2
probe --hold 0.5 > "$out/sass_probe_hold_b.txt" 2>&1; echo "rc=$?" >> "$out/sass_probe_hold_b.txt"
wait; echo "rc=$?" >> "$out/sass_probe_hold_a.txt"
probe --trials 5 > "$out/sass_probe_trials_alone.txt" 2>&1
probe --trials 8 > "$out/sass_probe_trials_beside.txt" 2>&1 &
sleep 1.5
probe --cycles 12 > "$out/sass_probe_cycles_beside.txt" 2>&1
wait
# One file back (the device tool returns few files): each step's output under its name, the
# metric list (one long line) left out.
for f in "$out"/sass_probe_*.txt; do echo "==> $(basename "$f")"; grep -v "^chip " "$f"; done \
  > "$out/sass_probe.md"
rm -f "$out"/sass_probe_*.txt
cat "$out/sass_probe.md"
