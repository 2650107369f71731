#!/usr/bin/env python3
"""Store checks of bench/real_model.sh after its killed and resumed run.

    real_model_check.py RUN_SQLITE REPORT_JSON EXPORTS_DIR TURNS

Reads the run store directly (SQLite, read-only) and compares it with what `ptxbench report
--format json` and `ptxbench export` wrote: every finished turn's reply is stored under its
SHA-256, usage adds up (all attempts: store = report = export's model_stats; finished turns
only: store = turns.csv), the killed turn is abandoned and its call left in flight, the
trajectory finished as turn_budget with TURNS counted turns. Prints one PASS/FAIL line per
check and the raw per-call figures; exits 1 when a check failed.
"""

import csv
import glob
import hashlib
import json
import os
import sqlite3
import sys

failures = 0


def check(name, expected, actual):
    global failures
    ok = expected == actual
    failures += 0 if ok else 1
    print(f"{'PASS' if ok else 'FAIL'} {name}: " +
          (f"{actual}" if ok else f"expected {expected}, got {actual}"))


def enum_name(db, enum, value):
    row = db.execute("SELECT name FROM enum_value WHERE enum = ? AND value = ?",
                     (enum, value)).fetchone()
    return row[0] if row else None


def usage(db, where=""):
    row = db.execute(
        "SELECT count(*), coalesce(sum(c.input_tokens), 0), coalesce(sum(c.output_tokens), 0), "
        "coalesce(sum(c.reasoning_tokens), 0) FROM model_call c JOIN turn t ON t.id = c.turn_id "
        + where).fetchone()
    return {"attempts": row[0], "input_tokens": row[1], "output_tokens": row[2],
            "reasoning_tokens": row[3]}


def print_calls(db):
    print("calls: turn idx, turn state, category, reply_end, attempt, call state, finish_reason, "
          "input, output tokens, latency ms, server prompt ms, server generation ms")
    for row in db.execute(
            "SELECT t.idx, t.state, t.category, t.reply_end, c.attempt, c.state, "
            "c.finish_reason, c.input_tokens, c.output_tokens, c.latency_ms, "
            "c.server_prompt_ms, c.server_generation_ms FROM model_call c "
            "JOIN turn t ON t.id = c.turn_id ORDER BY c.id"):
        idx, tstate, category, reply_end, attempt, cstate = row[:6]
        print("  " + ", ".join(str(x) for x in [
            idx, enum_name(db, "turn_state", tstate), enum_name(db, "turn_category", category),
            enum_name(db, "reply_end", reply_end), attempt, enum_name(db, "call_state", cstate),
            *row[6:]]))


def check_sources(db):
    bad = 0
    for sha, text in db.execute("SELECT sha256, text FROM source"):
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        bad += hashlib.sha256(data).hexdigest() != sha
    check("every stored text matches its SHA-256", 0, bad)
    missing = db.execute(
        "SELECT count(*) FROM turn t WHERE t.state = 2 AND t.category <> 8 AND "
        "(t.reply_sha256 IS NULL OR NOT EXISTS "
        "(SELECT 1 FROM source s WHERE s.sha256 = t.reply_sha256))").fetchone()[0]
    check("every finished turn's reply is stored", 0, missing)
    unmatched = db.execute(
        "SELECT count(*) FROM turn t WHERE t.state = 2 AND t.category <> 8 AND NOT EXISTS "
        "(SELECT 1 FROM model_call c WHERE c.turn_id = t.id AND "
        "c.reply_sha256 = t.reply_sha256)").fetchone()[0]
    check("each finished turn's reply is its model call's reply", 0, unmatched)


def check_states(db, turns):
    states = {enum_name(db, "turn_state", s): n for s, n in
              db.execute("SELECT state, count(*) FROM turn GROUP BY state")}
    check("turns abandoned (the SIGKILLed one)", 1, states.get("abandoned", 0))
    check("turns open", 0, states.get("open", 0))
    counted = db.execute("SELECT count(*) FROM turn WHERE state = 2 AND counting = 1").fetchone()[0]
    check("counted finished turns", turns, counted)
    in_flight = db.execute("SELECT count(*) FROM model_call WHERE state = 1").fetchone()[0]
    check("calls left in flight (the SIGKILLed one)", 1, in_flight)
    status, reason = db.execute("SELECT status, exit_reason FROM trajectory").fetchone()
    check("trajectory status", "finished", enum_name(db, "trajectory_status", status))
    check("trajectory exit reason", "turn_budget", enum_name(db, "exit_reason", reason))
    categories = sorted({enum_name(db, "turn_category", c) for (c,) in db.execute(
        "SELECT category FROM turn WHERE state = 2")})
    print(f"finished turn categories: {categories}")


def check_usage(db, report_path, exports):
    everything = usage(db)
    finished = usage(db, "WHERE t.state = 2")
    print(f"store, every attempt: {everything}")
    print(f"store, finished turns: {finished}")
    report = json.load(open(report_path))
    spent = report["usage"][0]["spent"]
    check("report spent = store (every attempt)", everything,
          {k: spent[k] for k in everything})
    check("report: attempts whose usage is unknown", 1, spent.get("attempts_usage_unknown", 0))
    stats = {"attempts": 0, "input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0}
    for path in glob.glob(os.path.join(exports, "trajectories", "*.json")):
        model_stats = json.load(open(path))["info"]["model_stats"]
        stats["attempts"] += model_stats["api_calls"]
        for key in ("input_tokens", "output_tokens", "reasoning_tokens"):
            stats[key] += model_stats[key]
    check("export model_stats = store (every attempt)", everything, stats)
    rows = list(csv.DictReader(open(os.path.join(exports, "turns.csv"))))
    table = {"attempts": finished["attempts"],
             "input_tokens": sum(int(r["input_tokens"]) for r in rows),
             "output_tokens": sum(int(r["output_tokens"]) for r in rows),
             "reasoning_tokens": sum(int(r["reasoning_tokens"]) for r in rows)}
    check("turns.csv = store (finished turns)", finished, table)
    finished_turns = db.execute("SELECT count(*) FROM turn WHERE state = 2").fetchone()[0]
    check("turns.csv rows = finished turns", finished_turns, len(rows))
    if rows and "reply_end" in rows[0]:
        print(f"turns.csv reply_end: {[r['reply_end'] for r in rows]}")


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    db_path, report_path, exports, turns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    check("PRAGMA integrity_check", "ok", db.execute("PRAGMA integrity_check").fetchone()[0])
    print_calls(db)
    check_states(db, turns)
    check_sources(db)
    check_usage(db, report_path, exports)
    print(f"store checks: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
