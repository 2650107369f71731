#!/usr/bin/env python3
"""Issue-3 benchmarks 3 and 4 on a GPU machine: run `ptxbench eval --json` N times on one
kernel and report (3) the spread of the candidate latency over full evaluations (coefficient
of variation) and (4) the wall time of one evaluation, phase by phase, against the physical
minimum: the GPU time of the executions the protocol requires.

Physical minimum per evaluation (warm references, reference latency timed interleaved):
  candidate calls = sets (correctness) + trials * (warmup + iterations) + passes (counting)
  reference calls = sets (reference outputs) + trials * (warmup + iterations)
  minimum = candidate calls * candidate_ms + reference calls * reference_ms
(L2 flushes, input generation and compiles are overhead by this definition.)

Usage: bench/eval_repeatability.py PTXBENCH KERNEL PROBLEM [N]
"""
import json
import statistics
import subprocess
import sys
import time

SETS, TRIALS, WARMUP, ITERS, COUNT_PASSES = 3, 3, 10, 50, 2


def evaluate(binary, kernel, problem):
    start = time.monotonic()
    out = subprocess.run([binary, "eval", kernel, "--problem", problem, "--json"],
                         capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"eval failed (exit {out.returncode}): {out.stderr[-2000:]}")
    report = json.loads(out.stdout)
    extras = report["trace"]["evaluation"]["ptxbench"]
    return wall, extras


def main():
    binary, kernel, problem = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    rows = [evaluate(binary, kernel, problem) for _ in range(n)]
    cand = [e["timing"]["candidate_ms"] for _, e in rows]
    ref = [e["timing"]["reference_ms"] for _, e in rows]
    mean = statistics.mean(cand)
    cv = statistics.stdev(cand) / mean if n > 1 else 0.0
    print(f"kernel {kernel}, problem {problem}, {n} full evaluations")
    print("| eval | candidate ms | reference ms | speedup | wall s | minimum s | wall/minimum |")
    print("|---|---|---|---|---|---|---|")
    for i, ((wall, e), c, r) in enumerate(zip(rows, cand, ref)):
        cand_calls = SETS + TRIALS * (WARMUP + ITERS) + COUNT_PASSES
        ref_calls = SETS + TRIALS * (WARMUP + ITERS)
        minimum = (cand_calls * c + ref_calls * r) / 1000.0
        print(f"| {i} | {c:.4f} | {r:.4f} | {r / c:.3f} | {wall:.2f} | {minimum:.3f} | {wall / minimum:.1f} |")
    print(f"\ncandidate latency: mean {mean:.4f} ms, stdev {statistics.stdev(cand):.5f} ms, CV {cv * 100:.2f}%")
    print(f"reference latency: mean {statistics.mean(ref):.4f} ms, CV {statistics.stdev(ref) / statistics.mean(ref) * 100:.2f}%")
    print("\nphases of the last evaluation (ms):")
    for name, ms in rows[-1][1]["phases"].items():
        print(f"  {name:<24} {ms:10.1f}")


if __name__ == "__main__":
    main()
