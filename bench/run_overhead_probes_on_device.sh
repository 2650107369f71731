#!/usr/bin/env bash
# Issue 35 on a GPU machine: what the range profiler's first Start of a session spends its
# ~0.4 s on (bench/results/session_open_probe_h200.md), and where the strict protocol's ~1 ms
# per call goes (bench/results/eval_throughput_h200.md, stop 29). From the repository root:
#   bash bench/run_overhead_probes_on_device.sh BUILD
# BUILD: a gpu-preset build laid out as build/gpu (bench/session_open_probe,
# bench/strict_call_steps and bench/pm_sampling_probe in it), or a .tar.xz of one. About 2
# minutes. Output under $OUT: machine.txt, sampler_check.json (the sampler on known work),
# probe.txt (one JSON line per variant, then the markdown summary), strict_call_steps.md,
# pm_sampling.md (PM sampling as a counting route) and, where strace is installed,
# strace_default.txt / strace_slowest.txt with the default variant's ioctls and their times.
set -u
# shellcheck source=bench/device_build.sh
source bench/device_build.sh && use_gpu_build "$1" || exit 1
out=${OUT:-/tmp/session_probe_out}
mkdir -p "$out"
probe=$bin/bench/session_open_probe
{ date -u; nvidia-smi --query-gpu=name,driver_version,persistence_mode,compute_mode,clocks.sm \
    --format=csv; nvidia-smi -q | grep -i -A2 'MIG Mode\|Accounting Mode'; uname -r;
  command -v strace || echo "no strace"; } > "$out/machine.txt" 2>&1
timeout 30 "$probe" --sampler-check > "$out/sampler_check.json" 2>&1
echo "rc=$?" >> "$out/sampler_check.json"
timeout 300 "$probe" > "$out/probe.txt" 2>&1
echo "rc=$?" >> "$out/probe.txt"
timeout 200 "$bin/bench/strict_call_steps" --calls 200 > "$out/strict_call_steps.md" 2>&1
echo "rc=$?" >> "$out/strict_call_steps.md"
timeout 120 "$bin/bench/pm_sampling_probe" --cycles 3 > "$out/pm_sampling.md" 2>&1
echo "rc=$?" >> "$out/pm_sampling.md"
if command -v strace > /dev/null; then
  # -T: time spent in each call; -f: CUPTI's and the driver's own threads too.
  timeout 120 strace -f -T -e trace=ioctl,mmap,munmap -o "$out/strace_default.txt" \
    "$probe" --variant default > "$out/strace_variant.json" 2>&1
  echo "rc=$?" >> "$out/strace_variant.json"
  # The slowest calls, for reading without the whole trace.
  sed -n 's/.*<\([0-9.]*\)>$/\1 &/p' "$out/strace_default.txt" | sort -rn | head -40 \
    > "$out/strace_slowest.txt"
fi
