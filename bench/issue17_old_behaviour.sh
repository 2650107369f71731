#!/usr/bin/env bash
# Issue 17 at the level of the built binary: the items whose tests are unit tests (4, 5, 9, 10,
# 13 and the show-suggestion part of 14) run here as commands against two ptxbench binaries,
# the one from before the issue (OLD) and the current one (NEW), and their output is printed
# side by side. Nothing is compared or judged here: the output is the record.
#
#   bench/issue17_old_behaviour.sh OLD_BIN OLD_ROOT NEW_BIN NEW_ROOT [WORK_DIR]
#     OLD_BIN, NEW_BIN    the two ptxbench binaries
#     OLD_ROOT, NEW_ROOT  their source trees: each binary gets its own as PTXBENCH_ROOT, so it
#                         reads the configs, packs and problems of its own time
#     WORK_DIR            made if missing (default: a fresh mktemp -d); run folders, caches,
#                         registries and server logs go there and are kept
#
# Needs python3 (a fake OpenAI-compatible server on loopback), sqlite3 (reads the stored
# feedback and prompts, whose tables both schemas share) and curl. No GPU: every run is
# --static-only, and `serve` runs its no-GPU mode (the static part of each evaluation).
set -euo pipefail

if [ $# -lt 4 ] || [ $# -gt 5 ]; then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
declare -A BIN ROOT
BIN[old]=$(realpath "$1")
ROOT[old]=$(realpath "$2")
BIN[new]=$(realpath "$3")
ROOT[new]=$(realpath "$4")
work=${5:-$(mktemp -d /tmp/issue17_old_behaviour.XXXXXX)}
mkdir -p "$work"
work=$(realpath "$work")
for side in old new; do
  [ -x "${BIN[$side]}" ] || { echo "not an executable: ${BIN[$side]}" >&2; exit 2; }
  [ -f "${ROOT[$side]}/config/models.json" ] || { echo "no config/models.json under ${ROOT[$side]}" >&2; exit 2; }
  mkdir -p "$work/$side"
done

# Each binary with its own data root and its own cache (compile cache, service state), so
# neither reads what the other wrote.
pb() { # pb old|new ARGS...
  local side=$1
  shift
  PTXBENCH_ROOT="${ROOT[$side]}" PTXBENCH_CACHE="$work/$side/cache" "${BIN[$side]}" "$@"
}
# The same for a binary started with &: exec, so that $! is the binary itself and a signal
# sent to it reaches ptxbench, not the subshell (which ignores SIGINT without job control).
pb_exec() { # pb_exec old|new ARGS...
  local side=$1
  shift
  PTXBENCH_ROOT="${ROOT[$side]}" PTXBENCH_CACHE="$work/$side/cache" exec "${BIN[$side]}" "$@"
}
banner() { printf '\n==================== %s ====================\n' "$*"; }
label() { printf -- '--- %s ---\n' "$*"; }
# The stored text of every turn's feedback, in order (turn, source tables: schema 5 and 6 alike).
feedback_of() { # feedback_of RUN_DIR
  sqlite3 "$1/run.sqlite" "SELECT '[turn ' || t.idx || ', stored feedback]' || char(10) || s.text
    FROM turn t JOIN source s ON s.sha256 = t.feedback_sha256 ORDER BY t.trajectory_id, t.idx"
}
# One `## TITLE` section of a Markdown report, its first N lines.
md_section() { # md_section TITLE_REGEX N < report.md
  awk -v re="$1" '/^## / { on = ($0 ~ re) } on' | head -n "$2"
}

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
stop_pid() { # stop_pid PID SIGNAL: signal a process this script started and reap it
  kill "-$2" "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
trap cleanup EXIT

# A fake OpenAI-compatible server: POST .../chat/completions answers the next reply of a JSON
# list (the last one repeats), after its delay_s; each request's max_tokens is logged. It binds
# port 0 and writes the port it got, so runs never collide on a fixed port.
cat >"$work/fake_openai.py" <<'EOF'
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
replies = json.load(open(sys.argv[1]))
port_file, log_file = sys.argv[2], sys.argv[3]
count = 0
class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def do_POST(self):
        global count
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        reply = replies[min(count, len(replies) - 1)]
        count += 1
        with open(log_file, "a") as log:
            log.write(json.dumps({"request": count, "path": self.path,
                                  "max_tokens": body.get("max_tokens")}) + "\n")
        time.sleep(reply.get("delay_s", 0))
        out = json.dumps({"id": "fake-%d" % count, "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply["content"]},
                         "finish_reason": reply["finish_reason"]}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": reply["completion_tokens"],
                      "total_tokens": 1000 + reply["completion_tokens"]}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
open(port_file, "w").write(str(server.server_address[1]))
server.serve_forever()
EOF

# Each binary gets a fresh server, so both see the same replies in the same order.
start_fake() { # start_fake NAME REPLIES_JSON -> sets fake_port, fake_pid; log at $work/NAME.requests
  local name=$1
  rm -f "$work/$name.port" "$work/$name.requests"
  python3 "$work/fake_openai.py" "$2" "$work/$name.port" "$work/$name.requests" &
  fake_pid=$!
  pids+=("$fake_pid")
  for _ in $(seq 100); do [ -s "$work/$name.port" ] && break; sleep 0.1; done
  fake_port=$(cat "$work/$name.port")
}

echo "OLD: ${BIN[old]} (root ${ROOT[old]}, commit $(git -C "${ROOT[old]}" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "NEW: ${BIN[new]} (root ${ROOT[new]}, commit $(git -C "${ROOT[new]}" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "work folder: $work"

# ---------------------------------------------------------------------------------------------
# Items 4 and 5: one run per binary against the fake server, whose four replies are
#   1. a cut-off reply (finish_reason "length", completion_tokens = max_output_tokens),
#   2. an empty reply (no text, 0 completion tokens),
#   3. prose without a code block (the "no block" extraction feedback),
#   4. a ```cuda block without `run`, then a ```json block (the "incomplete block" feedback).
# The feedback each turn stored is what the next turn's request carries.
max_out=64
cat >"$work/replies_45.json" <<EOF
[
 {"content": "\`\`\`cuda\n#include <cuda_bf16.h>\n__global__ void gemm_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int m) {\n  int row = blockIdx.y * 128 +", "finish_reason": "length", "completion_tokens": $max_out},
 {"content": "", "finish_reason": "stop", "completion_tokens": 0},
 {"content": "I will first think about the tile sizes for the wgmma pipeline.", "finish_reason": "stop", "completion_tokens": 20},
 {"content": "\`\`\`cuda\n__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n\`\`\`\nSettings:\n\`\`\`json\n{\"tile_m\": 128}\n\`\`\`", "finish_reason": "stop", "completion_tokens": 40}
]
EOF
for side in old new; do
  start_fake "$side-fake45" "$work/replies_45.json"
  cat >"$work/$side/registry_45.json" <<EOF
{"models": {"loop": {"provider": "openai", "base_url": "http://127.0.0.1:$fake_port/v1",
  "model": "m", "max_output_tokens": $max_out, "max_attempts": 1}}}
EOF
  rm -rf "$work/$side/run45"
  # Exit status is not the point here (it differs between the binaries for unrelated reasons).
  pb "$side" run --registry "$work/$side/registry_45.json" --model loop --turns 4 --static-only \
    --quiet --out "$work/$side/run45" >"$work/$side/run45.log" 2>&1 || true
  stop_pid "$fake_pid" TERM
done

banner "Item 4: cut-off and empty replies — the feedback stored for the next turn"
echo "fake server: reply 1 finish_reason=length with completion_tokens=$max_out (the registry's max_output_tokens), reply 2 empty with completion_tokens=0"
for side in old new; do
  label "$side: model calls as stored (turn, finish_reason, output tokens)"
  sqlite3 "$work/$side/run45/run.sqlite" "SELECT t.idx, c.finish_reason, c.output_tokens
    FROM model_call c JOIN turn t ON t.id = c.turn_id WHERE t.idx < 2 ORDER BY t.idx, c.attempt"
  label "$side: stored feedback of turns 0 (cut off) and 1 (empty)"
  feedback_of "$work/$side/run45" | awk '/^\[turn 2,/ { exit } { print }'
done

banner "Item 5: the code fence and the build flags the prompt and the feedback state"
for side in old new; do
  label "$side: stored feedback of turns 2 (prose, no block) and 3 (a \`\`\`cuda block without run, and a \`\`\`json block)"
  feedback_of "$work/$side/run45" | awk '/^\[turn 2,/ { on = 1 } on'
  label "$side: stored system prompt — lines naming a fence or the arch flags"
  sqlite3 "$work/$side/run45/run.sqlite" "SELECT s.text FROM trajectory j
    JOIN source s ON s.sha256 = j.system_prompt_sha256" |
    grep -n -E '```|-arch|gencode|compiled with|builds the file' | grep -v -E '^[0-9]+:```$' || true
done

# ---------------------------------------------------------------------------------------------
# Item 9: a CPU-only run of the built-in demo model, then `report` on it (Markdown).
for side in old new; do
  rm -rf "$work/$side/run9"
  pb "$side" run --model demo --turns 3 --static-only --quiet --out "$work/$side/run9" \
    >"$work/$side/run9.log" 2>&1 || true
  pb "$side" report "$work/$side/run9" >"$work/$side/report9.md" 2>&1 || true
done
banner "Item 9: report of a --static-only run (every counted turn static_only)"
for side in old new; do
  label "$side: turns by category (column 7 of the run's exports/turns.csv)"
  tail -n +2 "$work/$side/run9/exports/turns.csv" | cut -d, -f7 | sort | uniq -c
  label "$side: report — static-only notice (if any)"
  grep -n -i 'static-only' "$work/$side/report9.md" | grep -v '^.*| demo |' || echo "(no line mentions static-only)"
  label "$side: report — Turn correctness rate"
  md_section 'Turn correctness' 9 <"$work/$side/report9.md"
  label "$side: report — Fast_p"
  md_section 'Fast_p' 10 <"$work/$side/report9.md"
  label "$side: report — the table with the GPU column"
  grep -A2 -E '^\| Model \| GPU' "$work/$side/report9.md" || echo "(no table with a GPU column)"
done

# ---------------------------------------------------------------------------------------------
# Item 10: trajectories that end for each reason, then `report` over them.
#   run A: replay models whose one reply is a context-overflow error (an HTTP 400 in the
#          wording of an OpenAI-compatible server) and a model failure (bad_response);
#   run B: a model on the fake server that takes 8 s to answer; one SIGINT (Ctrl-C) while its
#          call is in flight stops the run.
printf '%s\n' '{"error": {"kind": "http_status", "message": "HTTP 400: This model'"'"'s maximum context length is 32768 tokens, but you requested 40000 tokens"}}' >"$work/overflow.jsonl"
printf '%s\n' '{"error": {"kind": "bad_response", "message": "reply has no choices"}}' >"$work/broken.jsonl"
cat >"$work/replies_slow.json" <<'EOF'
[{"content": "no code yet", "finish_reason": "stop", "completion_tokens": 3, "delay_s": 8}]
EOF
for side in old new; do
  start_fake "$side-fakeslow" "$work/replies_slow.json"
  cat >"$work/$side/registry_10.json" <<EOF
{"models": {
  "overflow": {"provider": "replay", "model": "overflow", "replay_file": "../overflow.jsonl"},
  "broken": {"provider": "replay", "model": "broken", "replay_file": "../broken.jsonl"},
  "slow": {"provider": "openai", "base_url": "http://127.0.0.1:$fake_port/v1", "model": "m",
           "max_attempts": 1, "timeout_s": 60}}}
EOF
  rm -rf "$work/$side/run10a" "$work/$side/run10b"
  pb "$side" run --registry "$work/$side/registry_10.json" --model overflow broken --turns 2 \
    --static-only --quiet --out "$work/$side/run10a" >"$work/$side/run10a.log" 2>&1 || true
  pb_exec "$side" run --registry "$work/$side/registry_10.json" --model slow --turns 2 \
    --static-only --quiet --out "$work/$side/run10b" >"$work/$side/run10b.log" 2>&1 &
  run_pid=$!
  # One SIGINT once the model call is in flight (the fake server logs a request on arrival).
  for _ in $(seq 300); do [ -s "$work/$side-fakeslow.requests" ] && break; sleep 0.1; done
  kill -INT "$run_pid"
  rc=0
  wait "$run_pid" || rc=$?
  echo "(exit $rc; model requests the server got: $(wc -l <"$work/$side-fakeslow.requests"))" >>"$work/$side/run10b.log"
  stop_pid "$fake_pid" TERM
  pb "$side" report "$work/$side/run10a" "$work/$side/run10b" >"$work/$side/report10.md" 2>&1 || true
done
banner "Item 10: why trajectories ended — run store vs report"
for side in old new; do
  label "$side: trajectories as stored (model, status, exit_reason; enum names from the store)"
  for run in run10a run10b; do
    sqlite3 "$work/$side/$run/run.sqlite" "SELECT j.model, st.name, coalesce(ex.name, '(none)')
      FROM trajectory j
      LEFT JOIN enum_value st ON st.enum = 'trajectory_status' AND st.value = j.status
      LEFT JOIN enum_value ex ON ex.enum = 'exit_reason' AND ex.value = j.exit_reason"
  done
  label "$side: run B's console after one SIGINT"
  tail -n 5 "$work/$side/run10b.log"
  label "$side: report (Markdown) over runs A and B — the section on why trajectories ended"
  section=$(md_section 'Why trajectories ended' 12 <"$work/$side/report10.md")
  echo "${section:-(no such section)}"
  label "$side: number of report lines naming an end anywhere (context_overflow, model_error, stopped, cancelled, unfinished)"
  grep -c -i -E 'context_overflow|model_error|stopped|cancelled|unfinished' "$work/$side/report10.md" || true
done

# ---------------------------------------------------------------------------------------------
# Item 13: `ptxbench serve` on loopback (port 0, its own state folder, a token so that auth
# is on). Without a GPU it starts one worker that runs the static part of every evaluation.
token=issue17-token
head -c 9000 /dev/zero | tr '\0' 'a' >"$work/body_9000.txt"
banner "Item 13: serve's HTTP handling"
for side in old new; do
  rm -rf "$work/$side/state"
  PTXBENCH_SERVICE_TOKEN=$token pb_exec "$side" serve --port 0 --state "$work/$side/state" \
    >"$work/$side/serve.out" 2>"$work/$side/serve.err" &
  serve_pid=$!
  pids+=("$serve_pid")
  for _ in $(seq 200); do [ -s "$work/$side/serve.out" ] && break; sleep 0.1; done
  url=$(head -n 1 "$work/$side/serve.out")
  label "$side: start-up (stdout line 1: $url; the log line on stderr)"
  grep -m1 'serving' "$work/$side/serve.err" || cat "$work/$side/serve.err"
  label "$side: POST /evaluate, 9000-byte body, curl's default Content-Type (form), auth ok (limit --max-body-mib 8)"
  curl -s -w '  -> HTTP %{http_code}\n' -H "Authorization: Bearer $token" \
    --data-binary @"$work/body_9000.txt" "$url/evaluate" || true
  label "$side: POST /evaluate with no body, auth ok"
  curl -s -w '  -> HTTP %{http_code}\n' -X POST -H "Authorization: Bearer $token" "$url/evaluate" || true
  label "$side: GET /definitions with 'Authorization: bearer <token>' (lowercase scheme), first 120 bytes"
  curl -s -w '\n  -> HTTP %{http_code}\n' -H "Authorization: bearer $token" "$url/definitions" |
    { head -c 120; echo; tail -n 1; } || true
  label "$side: the same with 'Bearer' (control), status only"
  curl -s -o /dev/null -w '  -> HTTP %{http_code}\n' -H "Authorization: Bearer $token" "$url/definitions" || true
  stop_pid "$serve_pid" INT
done

# ---------------------------------------------------------------------------------------------
banner "Item 14 (show part): ptxbench show GEMM_N7168_K5120"
for side in old new; do
  label "$side"
  rc=0
  pb "$side" show GEMM_N7168_K5120 >"$work/$side/show.out" 2>&1 || rc=$?
  head -n 5 "$work/$side/show.out"
  echo "  -> exit $rc"
done
