#!/usr/bin/env python3
"""The NVML samples recorded around timing on the H200, as the fleet's health thresholds read
them (bench/results/gpu_health_h200.md, src/measure/gpu_health.hpp).

Every `"before": {...}` / `"after": {...}` object with an `sm_clock_mhz` in bench/results/*h200*
(exec::Evaluation::clocks, printed by aa_speedup, eval_wall_time and the verdict A/A runs) is
read once per distinct sample, with the timing mode named nearest before it; the figures are
given for all of them, without eval_wall_time_h200.md (the set the first count used) and for
strict timing alone.

Usage: python3 bench/gpu_health_samples.py [results folder]   (default bench/results)
"""
import collections
import glob
import json
import os
import re
import statistics
import sys


# The timing mode of a sample: the nearest mention before it (an A/A section's "strict timing",
# a table row's "PASSED (strict)" or "| batched |").
MODE = re.compile(r"PASSED \((strict|batched)\)|(strict|batched) timing|\| (strict|batched) \|")


def mode_before(text, end):
    found = None
    for found in MODE.finditer(text, 0, end):
        pass
    return next(g for g in found.groups() if g) if found else "unknown"


def samples(folder):
    decoder = json.JSONDecoder()
    seen = set()
    for path in sorted(glob.glob(os.path.join(folder, "*h200*"))):
        if not os.path.isfile(path):
            continue
        text = open(path, errors="replace").read()
        for match in re.finditer(r'"(before|after)"\s*:\s*\{', text):
            try:
                sample, _ = decoder.raw_decode(text, match.end() - 1)
            except json.JSONDecodeError:
                continue
            key = (match.group(1), json.dumps(sample, sort_keys=True))
            if "sm_clock_mhz" in sample and key not in seen:
                seen.add(key)
                sample["mode"] = mode_before(text, match.start())
                yield os.path.basename(path), match.group(1), sample


def percentile(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    low = int(k)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (k - low)


def summary(title, group):
    ratios = [s["sm_clock_mhz"] / s["max_sm_clock_mhz"] for _, _, s in group]
    reasons = collections.Counter(n for _, _, s in group for n in s["clock_event_names"])
    modes = collections.Counter(s["mode"] for _, _, s in group)
    print(f"{title}: {len(group)} samples from {len({f for f, _, _ in group})} files, "
          f"timing modes {dict(modes)}")
    print(f"  reasons: {dict(reasons) or 'none'}")
    print(f"  SM clock / max: min {min(ratios):.3f}, p5 {percentile(ratios, 5):.3f}, "
          f"median {statistics.median(ratios):.3f}, max {max(ratios):.3f}")
    print(f"  max SM clock {sorted({s['max_sm_clock_mhz'] for _, _, s in group})} MHz; "
          f"temperature max {max(s['temperature_c'] for _, _, s in group)} C; "
          f"power max {max(s['power_w'] for _, _, s in group):.1f} W")
    lowest = sorted(group, key=lambda g: g[2]["sm_clock_mhz"])[:3]
    for file, _, s in lowest:
        print(f"  low: {s['sm_clock_mhz']} MHz, {s['power_w']:.1f} W, {s['temperature_c']} C, "
              f"{s['clock_event_names']}, {s['mode']} ({file})")


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
    found = list(samples(folder))
    after = [g for g in found if g[1] == "after"]
    for title, group in [
        ("before timing, all", [g for g in found if g[1] == "before"]),
        ("after timing, all", after),
        ("after timing, without eval_wall_time_h200.md", [g for g in after if g[0] != "eval_wall_time_h200.md"]),
        ("after timing, strict mode", [g for g in after if g[2]["mode"] == "strict"]),
    ]:
        summary(title, group)


if __name__ == "__main__":
    main()
