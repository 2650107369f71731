#!/usr/bin/env python3
"""How busy the GPU evaluator was while work was queued, from a run's store (issue 18).

  agent_overlap.py RUN_DIR

For every turn that reached the GPU (its evaluation has GPU phases):
- queued from the moment its reply arrived (the last model call's start + latency) to the turn's
  end (turn.finished_at): the evaluation waits or runs;
- busy over its GPU phases: the sum of its phases but `check` (the static check, which runs
  in the trajectory's thread and needs no GPU), ending at turn.finished_at.
Prints one JSON object: the union of the queued intervals, the union of the busy ones within it,
their ratio (the issue's target: >= 0.8), the run's span, and the GPU-reaching turns.
"""
import datetime
import json
import sqlite3
import sys


def seconds(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def union(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def length(intervals):
    return sum(end - start for start, end in intervals)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append([start, end])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def gpu_seconds(traces_json):
    total = 0.0
    for trace in json.loads(traces_json):
        evaluation = trace.get("evaluation") or {}
        phases = (evaluation.get("ptxbench") or {}).get("phases") or {}
        total += sum(ms for name, ms in phases.items() if name != "check_ms") / 1000.0
    return total


def main():
    db = sqlite3.connect(sys.argv[1] + "/run.sqlite")
    rows = db.execute(
        "SELECT t.id, t.started_at, t.finished_at, e.traces_json, "
        "(SELECT c.started_at FROM model_call c WHERE c.turn_id = t.id ORDER BY c.attempt DESC LIMIT 1), "
        "(SELECT c.latency_ms FROM model_call c WHERE c.turn_id = t.id ORDER BY c.attempt DESC LIMIT 1) "
        "FROM turn t JOIN evaluation e ON e.turn_id = t.id WHERE t.finished_at IS NOT NULL").fetchall()
    queued, busy, spans = [], [], []
    for _, started, finished, traces, call_start, latency in rows:
        end = seconds(finished)
        spans += [seconds(started), end]
        gpu = gpu_seconds(traces)
        if gpu <= 0 or call_start is None:
            continue
        queued.append((seconds(call_start) + latency / 1000.0, end))
        busy.append((end - gpu, end))
    queued_union = union(queued)
    busy_in_queue = intersect(union(busy), queued_union)
    q, b = length(queued_union), length(busy_in_queue)
    print(json.dumps({
        "gpu_turns": len(queued), "turns": len(rows),
        "queued_s": round(q, 3), "busy_while_queued_s": round(b, 3),
        "busy_fraction": round(b / q, 4) if q else None,
        "run_span_s": round(max(spans) - min(spans), 3) if spans else None,
        "gpu_busy_s": round(length(union(busy)), 3),
    }))


if __name__ == "__main__":
    main()
