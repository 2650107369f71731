#!/usr/bin/env bash
# The lint gate CI runs after the tests: clang-tidy with the tree's .clang-tidy over src/, every
# finding an error. It reads a configured build's compile database (default build/ci, which the
# test command configures) and analyses that build's unity batches, so each header is parsed
# once per batch of 16 files instead of once per file; findings still name the original files.
# GCC-only warning flags of the compile commands are ignored (-Wno-unknown-warning-option).
# CUDA sources are left out (clang-tidy would need clang's CUDA mode and a GPU-less libdevice).
#
# A batch found clean is remembered: its key is clang-tidy's version, .clang-tidy, the batch's
# compile command and its preprocessed text (every header it includes), all with the tree's own
# path taken out, so another clone of the same tree skips the batches it did not change. Only
# clean results are kept; a batch with findings is analysed again every time.
#
#   scripts/check_tidy.sh [BUILD_DIR]
#   PTXBENCH_TIDY_CACHE=DIR (default ~/.cache/ptxbench/tidy) or PTXBENCH_TIDY_CACHE=off
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build/ci}"
command -v clang-tidy >/dev/null || { echo "check_tidy: clang-tidy is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] || { echo "check_tidy: $build/compile_commands.json is missing; configure first (cmake --preset ci)" >&2; exit 2; }

exec python3 - "$build" "$PWD" "$(nproc)" "${PTXBENCH_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ptxbench/tidy}" <<'PY'
import concurrent.futures, hashlib, json, os, re, shlex, subprocess, sys

build, root, jobs, cache = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
src = root + "/src"
units = []
for entry in json.load(open(f"{build}/compile_commands.json")):
    path = entry["file"]
    ours = path.startswith(src + "/") or ("/src/" in path and "/Unity/unity_" in path)
    if ours and path.endswith((".cpp", ".cxx")):
        units.append(entry)
if not units:
    sys.exit(f"check_tidy: no src/ translation units in {build}/compile_commands.json")

version = subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True).stdout
config = open(os.path.join(root, ".clang-tidy"), "rb").read()


def without_root(data: bytes) -> bytes:
    return data.replace(root.encode(), b"<root>")


def key_of(entry):
    """The unit's cache key, or None when its preprocessed text cannot be had."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    # The compiler is the first word after any launcher; a unit whose compiler is not found
    # this way is analysed every time rather than remembered.
    compiler = next((i for i, a in enumerate(args)
                     if re.search(r"(c\+\+|g\+\+|clang\+\+)(-[0-9.]+)?$", a)), None)
    if compiler is None:
        return None
    args = args[compiler:]
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        out.append(a)
    pre = subprocess.run(out + ["-E", "-P", "-o", "-"], cwd=entry["directory"], capture_output=True)
    if pre.returncode != 0:
        return None
    h = hashlib.sha256()
    for part in (version.encode(), config, without_root(" ".join(out).encode()),
                 without_root(pre.stdout)):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def check(entry):
    key = key_of(entry) if cache != "off" else None
    stamp = os.path.join(cache, key) if key else None
    if stamp and os.path.exists(stamp):
        return entry["file"], 0, "", True
    run = subprocess.run(["clang-tidy", "-p", build, "--quiet", "--warnings-as-errors=*",
                          "--extra-arg=-Wno-unknown-warning-option", entry["file"]],
                         capture_output=True, text=True)
    if run.returncode == 0 and stamp:
        os.makedirs(cache, exist_ok=True)
        open(stamp, "w").close()
    return entry["file"], run.returncode, run.stdout + run.stderr, False


with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    results = list(pool.map(check, units))
failed = [r for r in results if r[1] != 0]
remembered = sum(1 for r in results if r[3])
if failed:
    lines = sorted({l for r in failed for l in r[2].splitlines()
                    if re.search(r"(warning|error): ", l)})
    sys.stderr.write("\n".join(lines or [r[2] for r in failed]) + "\n")
    sys.exit(f"check_tidy: findings in {len(failed)} of {len(units)} translation units "
             "(each listed above is an error)")
print(f"check_tidy: {len(units)} translation units of src/ clean "
      f"({remembered} remembered clean from an earlier run of the same text)")
PY
