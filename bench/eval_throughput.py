#!/usr/bin/env python3
"""Evaluation throughput of a running `ptxbench serve` (issue 18).

Submits KERNEL COUNT times back to back (each after the previous has finished, as one agent
waiting on its turn does) with the given baseline_cache_mode, prints one JSON line per
request, then a summary over the warm requests (all but the first, which compiles the kernel
and, in reuse mode, measures the reference): evaluations per minute, wall seconds per
evaluation, the median of every phase, and the ratio of the wall time to the physical minimum.

The physical minimum is the GPU time of the calls the protocol requires: the candidate's
trials × (warm-up + timed) calls at its measured latency, the reference's as many when it is
re-timed (bypass), the correctness calls at their measured latencies, and the counting pass's
calls at the candidate's latency. Everything else (process start, copies, comparisons, CUPTI
and profiler set-up, HTTP) is overhead.

With --distinct every request sends a different kernel: KERNEL with a harmless `__device__`
variable of its own appended, so every source and cubin hash differs and no cache keyed by the
kernel (compile, SASS report, counts) makes the numbers (issue 35). Each request then pays its
own compile in the check phase; the summary also gives the wall time less the check phase.

With --reuse-counts the same kernel is sent with one fixed seed and "counts_cache": "on", so
every request after the first takes its instruction counts from the counts cache
(docs/evaluation.md "Counts cache"); never together with --distinct.

Usage: eval_throughput.py URL KERNEL [--problem P] [--count 10] [--mode reuse|bypass]
                          [--distinct | --reuse-counts] [--trials 3 --warmup 10 --iterations 50]
"""
import argparse
import json
import statistics
import time
import urllib.request


def call(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=900) as response:
        return json.loads(response.read())


def minimum_s(extras, args, retimed):
    timing = extras.get("timing") or {}
    cand = timing.get("candidate_ms")
    ref = timing.get("reference_ms")
    if not isinstance(cand, (int, float)):
        return None
    per_trial = args.warmup + args.iterations
    total_ms = args.trials * per_trial * cand
    if retimed and isinstance(ref, (int, float)):
        total_ms += args.trials * per_trial * ref
    launches = extras.get("launches") or {}
    for c in launches.get("correctness_calls") or []:
        latency = c.get("latency_ms")
        total_ms += latency if isinstance(latency, (int, float)) else cand
    counter = (extras.get("dynamic") or {}).get("counter") or {}
    calls = counter.get("calls")
    if isinstance(calls, (int, float)):
        total_ms += calls * cand
    return total_ms / 1000.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("kernel")
    parser.add_argument("--problem", default="gemm_n7168_k5120")
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--mode", default="reuse", choices=["reuse", "bypass"])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--distinct", action="store_true",
                        help="a different kernel (a harmless constant) in every request")
    parser.add_argument("--reuse-counts", action="store_true",
                        help="one fixed seed and the counts cache on: counts reused after the first")
    args = parser.parse_args()
    if args.distinct and args.reuse_counts:
        parser.error("--distinct measures without any cache keyed by the kernel")
    source = open(args.kernel).read()
    # A token of this run in the constant's name, so two runs against one server's caches
    # never send the same kernel either.
    run_token = f"{time.time_ns() & 0xFFFFFFFF:08x}"
    rows = []
    for index in range(args.count):
        text = source
        if args.distinct:
            text += f"\n__device__ int ptxbench_distinct_{run_token}_{index} = {index};\n"
        body = {"solution": {"definition": args.problem,
                             "sources": [{"path": "kernel.cu", "content": text}]},
                "baseline_cache_mode": args.mode}
        if args.reuse_counts:
            body["seed"] = int(run_token, 16)
            body["counts_cache"] = "on"
        start = time.monotonic()
        task_id = call(args.url + "/evaluate", body)["task_id"]
        task = call(f"{args.url}/tasks/{task_id}?timeout=600")
        wall = time.monotonic() - start
        result = task.get("result") or {}
        extras = ((result.get("trace") or {}).get("evaluation") or {}).get("ptxbench") or {}
        timing = extras.get("timing") or {}
        dynamic = (extras.get("dynamic") or {})
        row = {"request": index + 1, "mode": args.mode, "distinct": args.distinct,
               "counts_cache": dynamic.get("counts_cache"),
               "solution": task.get("solution"), "status": result.get("status"),
               "wall_s": round(wall, 3), "phases_ms": extras.get("phases"),
               "child_startup_ms": extras.get("child_startup_ms"),
               "candidate_ms": timing.get("candidate_ms"),
               "reference_ms": timing.get("reference_ms"),
               "reference_cached": timing.get("reference_cached"),
               "staging_ms": timing.get("staging_ms"), "checks_ms": timing.get("checks_ms"),
               "window_wait_ms": timing.get("window_wait_ms"),
               "checked_calls": timing.get("checked_calls"),
               "unexplained_ms": timing.get("unexplained_ms"),
               "calibrated_overhead_ms": timing.get("calibrated_overhead_ms"),
               "minimum_s": minimum_s(extras, args, args.mode == "bypass")}
        rows.append(row)
        print(json.dumps(row), flush=True)
    warm = rows[1:] or rows
    walls = [r["wall_s"] for r in warm]
    phases = {}
    for r in warm:
        for name, ms in (r["phases_ms"] or {}).items():
            if isinstance(ms, (int, float)):
                phases.setdefault(name, []).append(ms)
    minima = [r["minimum_s"] for r in warm if r["minimum_s"]]
    median_wall = statistics.median(walls)
    less_check = [r["wall_s"] - ((r["phases_ms"] or {}).get("check_ms") or 0) / 1000.0
                  for r in warm]
    summary = {
        "summary": args.mode + (" distinct" if args.distinct else ""),
        "warm_requests": len(warm),
        "distinct_solutions": len({r["solution"] for r in rows}),
        "wall_s_less_check_median": round(statistics.median(less_check), 3),
        "evaluations_per_minute": round(60.0 * len(warm) / sum(walls), 1),
        "wall_s_median": round(median_wall, 3), "wall_s_min": min(walls),
        "wall_s_max": max(walls),
        "phase_ms_median": {k: round(statistics.median(v), 1) for k, v in phases.items()},
        "minimum_s_median": round(statistics.median(minima), 3) if minima else None,
        "ratio_to_minimum": round(median_wall / statistics.median(minima), 2) if minima else None,
        "statuses": sorted({str(r["status"]) for r in rows}),
    }
    # What the per-call staging of inputs and the sampled checks of timed calls cost.
    for key in ("staging_ms", "checks_ms", "window_wait_ms", "checked_calls", "unexplained_ms",
                "calibrated_overhead_ms"):
        values = [r[key] for r in warm if isinstance(r.get(key), (int, float))]
        if values:
            summary[key + "_median"] = round(statistics.median(values), 1)
    # The latencies themselves, to compare settings side by side (a faster evaluation must
    # not move them): medians over the warm requests.
    candidates = [r["candidate_ms"] for r in warm if r["candidate_ms"]]
    ratios = [r["reference_ms"] / r["candidate_ms"] for r in warm
              if r["candidate_ms"] and r["reference_ms"] and not r["reference_cached"]]
    if candidates:
        summary["candidate_ms_median"] = round(statistics.median(candidates), 4)
        summary["candidate_ms_spread"] = round((max(candidates) - min(candidates))
                                               / statistics.median(candidates), 4)
    if ratios:
        summary["speedup_median"] = round(statistics.median(ratios), 4)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
