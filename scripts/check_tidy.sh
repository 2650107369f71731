#!/usr/bin/env bash
# The lint gate CI runs after the tests: clang-tidy with the tree's .clang-tidy over src/, every
# finding an error. It reads a configured build's compile database (default build/ci, which the
# test command configures) and analyses that build's unity batches, so each header is parsed
# once per batch of 16 files instead of once per file; findings still name the original files.
# GCC-only warning flags of the compile commands are ignored (-Wno-unknown-warning-option).
# CUDA sources are left out (clang-tidy would need clang's CUDA mode and a GPU-less libdevice).
#
#   scripts/check_tidy.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build/ci}"
command -v clang-tidy >/dev/null || { echo "check_tidy: clang-tidy is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] || { echo "check_tidy: $build/compile_commands.json is missing; configure first (cmake --preset ci)" >&2; exit 2; }

mapfile -t units < <(python3 - "$build" "$PWD/src" <<'PY'
import json, sys
build, src = sys.argv[1], sys.argv[2]
for entry in json.load(open(f"{build}/compile_commands.json")):
    path = entry["file"]
    ours = path.startswith(src + "/") or ("/src/" in path and "/Unity/unity_" in path)
    if ours and path.endswith((".cpp", ".cxx")):
        print(path)
PY
)
((${#units[@]})) || { echo "check_tidy: no src/ translation units in $build/compile_commands.json" >&2; exit 2; }
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
printf '%s\0' "${units[@]}" |
  xargs -0 -n 1 -P "$(nproc)" clang-tidy -p "$build" --quiet --warnings-as-errors='*' --extra-arg=-Wno-unknown-warning-option >"$log" 2>&1 || status=$?
if ((status)); then
  grep -E '(warning|error): ' "$log" | sort -u >&2 || cat "$log" >&2
  echo "check_tidy: findings in ${#units[@]} translation units (each listed above is an error)" >&2
  exit 1
fi
echo "check_tidy: ${#units[@]} translation units of src/ clean"
