#!/usr/bin/env bash
# Fuzzes the parsers of untrusted input with libFuzzer (fuzz/*.cpp; clang, ASan + UBSan):
# builds the `fuzz` preset, then runs every target for SECONDS (default 60) starting from its
# corpus, tests/data/fuzz/<target>/. New corpus entries go to build/fuzz/corpus/<target>/,
# crashes to build/fuzz/findings/<target>/; copy a crash into tests/data/fuzz/<target>/ with
# its fix so CI (label `fuzz`) replays it forever.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]    (targets: reply_extract run_plan ...)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(reply_extract run_plan model_registry trace_json safetensors provider_reply
           service_request)
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
failed=0
for t in "${targets[@]}"; do
  corpus="build/fuzz/corpus/$t" findings="build/fuzz/findings/$t"
  mkdir -p "$corpus" "$findings"
  echo "== fuzz_$t for ${seconds}s"
  if ! build/fuzz/fuzz/fuzz_"$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
      -rss_limit_mb=4096 -artifact_prefix="$findings/" -print_final_stats=1 \
      "$corpus" "tests/data/fuzz/$t" 2>&1 | tail -12; then
    failed=1
  fi
  if compgen -G "$findings/*" >/dev/null; then
    echo "fuzz_$t: findings in $findings"
    failed=1
  fi
done
exit $failed
