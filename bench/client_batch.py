"""Issue 34's H200 batch (bench/results/client_batch_h200.md): N distinct kernels evaluated
through the Python client against `ptxbench serve`, with throughput and the reward distribution.

The batch: the sm90a expert GEMM (wgmma + TMA) with a harmless varying constant (a __device__
variable of its own per copy, so every source and cubin differs and no cache keyed by the kernel
makes the numbers), a zero-filling kernel (wrong: INCORRECT_NUMERICAL) and a kernel that does
not compile, in the proportions of --mix. Then a few rollouts through the Env with the expert
kernel as the reply (the loop's turn on the GPU: correct, speedup, reward).

    python3 bench/client_batch.py URL [--n 64] [--concurrency 16] [--out FILE.json]

Prints one JSON object: the counts per status and per reward, evaluations per minute, the wall
time, the latency percentiles, the rollouts' turns."""

import argparse
import collections
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "ptxbench_client", "src"))

from ptxbench_client import Client, Env, default_reward  # noqa: E402

GEMM = "gemm_n7168_k5120"
FILL = """#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>
// wrong kernel {i}
__global__ void fill(__nv_bfloat16* C, int64_t n) {{
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) C[i] = __float2bfloat16(0.0f);
}}
void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {{
  int64_t n = M * 7168;
  fill<<<unsigned((n + 255) / 256), 256, 0, stream>>>(C, n);
}}
"""


def batch(expert: str, n: int, mix: str):
    """(kind, source) × n: expert copies, wrong kernels, compile errors in the --mix ratio."""
    weights = [int(x) for x in mix.split(":")]
    kinds = (["expert"] * weights[0] + ["wrong"] * weights[1] + ["broken"] * weights[2])
    items = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        if kind == "expert":
            items.append((kind, expert + f"\n__device__ int ptxbench_batch_variant_{i} = {i};\n"))
        elif kind == "wrong":
            items.append((kind, FILL.format(i=i)))
        else:
            items.append((kind, FILL.format(i=i) + f"\nint broken_{i} = ;\n"))
    return items


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else None


def verdict_detail(result):
    """The verdict's message, broken rule and violations, for a result that is not PASSED (an
    expert kernel that fails under load must say why in the record)."""
    if result.status in (None, "PASSED"):
        return {}
    evaluation = (((result.raw.get("result") or {}).get("trace") or {}).get("evaluation") or {})
    extras = evaluation.get("ptxbench") or {}
    return {"message": extras.get("message") or evaluation.get("log", "")[:2000],
            "rule": extras.get("rule"), "violations": extras.get("violations")}


def host_figures(result):
    """The wall-time bound's figures and the host's CPU contention over the timing phase that
    counted (docs/evaluation.md "Timing the child cannot forge"), for every timed evaluation:
    how often a busy host made a phase go over the bound, and how busy it was."""
    evaluation = (((result.raw.get("result") or {}).get("trace") or {}).get("evaluation") or {})
    timing = (evaluation.get("ptxbench") or {}).get("timing")
    if not timing:
        return {}
    preload = timing.get("preload_calibration_ms") or []
    return {"unexplained_ms": timing.get("unexplained_ms"),
            "phases_over_bound": len(timing.get("phases_over_bound") or []),
            # the calibration's cap: in-run calibration against those before the load
            "calibrated_overhead_ms": timing.get("calibrated_overhead_ms"),
            "preload_calibration_max_ms": max(preload) if preload else None,
            "preload_calibration_median_ms": statistics.median(preload) if preload else None,
            "calibration_cap_ms": timing.get("calibration_cap_ms"),
            "calibration_capped": timing.get("calibration_capped"),
            "host_cpu_stall_share": timing.get("host_cpu_stall_share"),
            "supervisor_run_delay_ms": timing.get("supervisor_run_delay_ms")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--mix", default="6:1:1", help="expert:wrong:broken")
    parser.add_argument("--rollouts", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    with open(os.path.join(ROOT, "examples", "sm90a", GEMM + ".cu"), encoding="utf-8") as f:
        expert = f.read()
    client = Client(args.url, run="client-batch", request_timeout_s=60)
    items = batch(expert, args.n, args.mix)
    started = time.monotonic()
    finished_at = {}
    results = {}
    for index, result in client.evaluate_many([(GEMM, src) for _, src in items],
                                              concurrency=args.concurrency, timeout_s=1800):
        finished_at[index] = time.monotonic() - started
        results[index] = result
    wall = time.monotonic() - started
    rows = []
    for index, (kind, _) in enumerate(items):
        result = results[index]
        rows.append({"index": index, "kind": kind, "state": result.state,
                     "status": result.status, "speedup": result.speedup,
                     "target_executed": result.target_executed,
                     "reward": default_reward(result), "done_s": round(finished_at[index], 2),
                     "error": result.error, **verdict_detail(result), **host_figures(result)})
    rewards = [r["reward"] for r in rows]
    speedups = [r["speedup"] for r in rows if r["speedup"] is not None]
    gaps = sorted(finished_at.values())
    stalls = [r["host_cpu_stall_share"] for r in rows if r.get("host_cpu_stall_share") is not None]
    summary = {
        "n": args.n, "concurrency": args.concurrency, "mix": args.mix,
        "wall_s": round(wall, 2), "evaluations_per_minute": round(60 * args.n / wall, 2),
        "first_result_s": round(gaps[0], 2), "last_result_s": round(gaps[-1], 2),
        "states": dict(collections.Counter(r["state"] for r in rows)),
        "status_by_kind": {k: dict(collections.Counter(r["status"] for r in rows
                                                        if r["kind"] == k))
                           for k in ("expert", "wrong", "broken")},
        "target_executed": dict(collections.Counter(str(r["target_executed"]) for r in rows)),
        "rewards": dict(collections.Counter("none" if x is None else f"{x:.3f}"
                                            for x in rewards)),
        "reward_mean": round(statistics.mean(x for x in rewards if x is not None), 4)
        if any(x is not None for x in rewards) else None,
        "speedup_min": min(speedups) if speedups else None,
        "speedup_median": statistics.median(speedups) if speedups else None,
        "speedup_max": max(speedups) if speedups else None,
        "done_s_p50": percentile(gaps, 0.5), "done_s_p90": percentile(gaps, 0.9),
        "phases_over_bound": dict(collections.Counter(r.get("phases_over_bound") for r in rows
                                                      if "phases_over_bound" in r)),
        "host_cpu_stall_share_p50": percentile(stalls, 0.5),
        "host_cpu_stall_share_p90": percentile(stalls, 0.9),
        "calibration_capped": dict(collections.Counter(str(r.get("calibration_capped"))
                                                       for r in rows if "calibration_capped" in r)),
        # how far the in-run calibration rose above the largest before the load (honest kernels)
        "calibration_rise_ms_max": max(
            (r["calibrated_overhead_ms"] - r["preload_calibration_max_ms"] for r in rows
             if r.get("calibrated_overhead_ms") is not None
             and r.get("preload_calibration_max_ms") is not None), default=None),
    }
    rollouts = []
    for r in range(args.rollouts):
        env = Env(client, GEMM, max_turns=2, model="batch-policy")
        env.reset()
        t = time.monotonic()
        _, reward, done, info = env.step(f"My kernel.\n\n```cuda\n{expert}\n// rollout {r}\n```\n")
        turn = info["turn"] or {}
        rollouts.append({"rollout": info["rollout_id"], "category": turn.get("category"),
                         "status": turn.get("status"), "speedup": turn.get("speedup"),
                         "target_executed": turn.get("target_executed"), "reward": reward,
                         "done": done, "exit": info["exit"],
                         "step_s": round(time.monotonic() - t, 2),
                         "feedback_tail": (turn.get("feedback") or "")[-160:],
                         "run_dir": env.rollout["run_dir"]})
        env.close()
    summary["rollouts"] = rollouts
    print(json.dumps(summary, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"summary": summary, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
