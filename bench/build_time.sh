#!/usr/bin/env bash
# Build time of a fresh clone (issue 15 item 7): how long the README's two commands compile
# before they do their job, cold (no compiler cache) and, where ccache is installed, warm (a
# second clone at another path after the first filled the cache).
#
#   bench/build_time.sh [OUT.md]     (run on an otherwise idle machine; takes ~1 h on 2 cores)
#
# Phases timed, each in a fresh clone of HEAD under /tmp (packages already installed):
#   main-job   cmake --preset <main-job preset> + build of the `ptxbench` target, then the
#              seconds until `ptxbench demo` prints its first line (scripts/run.sh's steps)
#   test-build cmake --preset ci + the whole ci build (scripts/test.sh's build step)
# Wall and CPU (user+sys) seconds of every phase, as scripts/run.sh and scripts/test.sh run them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-/dev/stdout}"
export PATH="$PATH:/usr/local/cuda/bin"
work="$(mktemp -d /tmp/ptxbench-build-time.XXXXXX)"
trap 'rm -rf "$work"' EXIT

phase() { # name, clone dir, command... -> one table row
  local name=$1 dir=$2; shift 2
  (cd "$dir" && /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$@" >"$work/$name.log" 2>&1)
  read -r wall user sys <"$work/time.txt"
  printf '| %s | %s | %.0f | %.0f |\n' "$name" "$mode" "$wall" "$(python3 -c "print($user+$sys)")"
}

first_output() { # dir, preset: seconds from exec to the first line `ptxbench demo` prints
  local dir=$1
  python3 - "$dir/build/$2/src/cli/ptxbench" <<'PY'
import subprocess, sys, time
start = time.monotonic()
p = subprocess.Popen([sys.argv[1], "demo"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
line = p.stdout.readline()
first = time.monotonic() - start
p.stdout.read(); p.wait()
print(f"{first:.1f}")
PY
}

{
  echo "# Build time of a fresh clone ($(git -C "$root" rev-parse --short HEAD), $(date -u +%F), $(nproc) cores, $(hostname))"
  echo
  echo "Command: \`bench/build_time.sh\`. Wall and CPU (user+sys) seconds."
  echo
  echo "| phase | cache | wall s | cpu s |"
  echo "|---|---|---|---|"
  for mode in cold warm; do
    if [ "$mode" = warm ] && ! command -v ccache >/dev/null; then break; fi
    clone="$work/clone-$mode"
    git clone -q "$root" "$clone"
    ln -s "$root/.deps" "$clone/.deps"
    [ "$mode" = cold ] && export CCACHE_DISABLE=1 || unset CCACHE_DISABLE
    preset=$(sed -n 's/^cmake --preset \([a-z-]*\) .*/\1/p' "$clone/scripts/run.sh" | head -1)
    phase main-job "$clone" bash -c "cmake --preset $preset >/dev/null && cmake --build --preset $preset --target ptxbench"
    echo "| first output of \`ptxbench demo\` after the build | $mode | $(first_output "$clone" "$preset") | |"
    phase test-build "$clone" bash -c "cmake --preset ci >/dev/null && cmake --build --preset ci"
  done
} | tee "$out"
