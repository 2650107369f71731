#!/usr/bin/env bash
# The style gate CI runs before the tests: every C++/CUDA source of ours is clang-format clean
# (.clang-format). Test inputs that are data — candidate kernels under tests/kernels and
# tests/data, the knowledge packs and expert examples shown to models verbatim — are not ours
# to reformat and are left out.
#
#   scripts/check_style.sh          report the files that are not clean, exit 1 if any
#   scripts/check_style.sh --fix    reformat them in place
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "check_style: clang-format is not installed (scripts/setup.sh installs it)" >&2; exit 2; }

mapfile -t files < <(git ls-files -- src tests bench fuzz |
  grep -E '\.(cpp|hpp|h|cu|cuh)$' | grep -vE '^tests/(kernels|data)/')
if [ "${1:-}" = "--fix" ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 32 -P "$(nproc)" clang-format -i
  exit 0
fi
unclean=()
for file in "${files[@]}"; do
  clang-format --dry-run --Werror "$file" >/dev/null 2>&1 || unclean+=("$file")
done
if ((${#unclean[@]})); then
  echo "check_style: ${#unclean[@]} of ${#files[@]} files are not clang-format clean; scripts/check_style.sh --fix reformats them:" >&2
  printf '  %s\n' "${unclean[@]:0:20}" >&2
  ((${#unclean[@]} > 20)) && echo "  ..." >&2
  exit 1
fi
echo "check_style: ${#files[@]} files clang-format clean"
