#!/usr/bin/env python3
"""Back-to-back evaluations of one kernel through a running `ptxbench serve` (bench 4).

Submits KERNEL to URL COUNT times in a row (each after the previous has finished), with the
paper's protocol and the given baseline_cache_mode, and prints one JSON line per request:
wall time from submit to completed as the client sees it, the task's timestamps, the status
and the evaluation's phases (result.trace.evaluation.ptxbench.phases).

Usage: service_back_to_back.py URL KERNEL [--problem P] [--count 2] [--mode reuse|bypass]
"""
import argparse
import json
import time
import urllib.request


def call(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=900) as response:
        return json.loads(response.read())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("kernel")
    parser.add_argument("--problem", default="gemm_n7168_k5120")
    parser.add_argument("--count", type=int, default=2)
    parser.add_argument("--mode", default="reuse", choices=["reuse", "bypass"])
    args = parser.parse_args()
    source = open(args.kernel).read()
    body = {"solution": {"definition": args.problem,
                         "sources": [{"path": "kernel.cu", "content": source}]},
            "baseline_cache_mode": args.mode}
    for index in range(args.count):
        start = time.monotonic()
        task_id = call(args.url + "/evaluate", body)["task_id"]
        task = call(f"{args.url}/tasks/{task_id}?timeout=600")
        wall = time.monotonic() - start
        result = task.get("result") or {}
        extras = ((result.get("trace") or {}).get("evaluation") or {}).get("ptxbench") or {}
        timing = extras.get("timing") or {}
        print(json.dumps({"request": index + 1, "mode": args.mode, "status": result.get("status"),
                          "task_status": task["status"], "wall_s": round(wall, 3),
                          "submitted_at": task.get("submitted_at"),
                          "started_at": task.get("started_at"),
                          "finished_at": task.get("finished_at"),
                          "phases_ms": extras.get("phases"),
                          "candidate_ms": timing.get("candidate_ms"),
                          "reference_ms": timing.get("reference_ms"),
                          "reference_cached": timing.get("reference_cached"),
                          "inputs_warm": timing.get("inputs_warm")}), flush=True)


if __name__ == "__main__":
    main()
