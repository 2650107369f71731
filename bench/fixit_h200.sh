#!/usr/bin/env bash
# The Fixit pipeline end to end on one H200, from a recorded run to SFT rows and stats.
#
#   bench/fixit_h200.sh BUILD_DIR OUT_DIR [RUN_DIR]
#     BUILD_DIR  a built tree (build/gpu): its src/cli/ptxbench is used
#     OUT_DIR    everything is written here (made if missing; must not hold an earlier run)
#     RUN_DIR    optional: an existing run directory to collect failures from instead of (a)
#   EXECUTOR=gpu (default) evaluates on the GPU; EXECUTOR=static passes --static-only to the
#   run and repair stages, so the script runs on a CPU machine up to the GPU step (the repairs
#   are then static_only, nothing pairs, and the script stops after repair, saying so).
#
# On the H200 (the lead runs it; examples/ and tests/kernels/ must be in the tree):
#   bench/fixit_h200.sh build/gpu /tmp/fixit-h200 2>&1 | tee /tmp/fixit-h200.log
#
# Stages:
#  (a) a recorded run of gemm_n7168_k5120 by a replay model ("student") whose replies are
#      failing kernels: examples/sm90a/gemm_n7168_k5120.cu with a line that does not compile,
#      and tests/kernels/gemm_bad_variants.cu variant 1 (B read transposed: wrong numbers)
#      and variant 17 (bf16 accumulation: wrong numbers) — one trajectory, three turns;
#  (b) fixit collect, fixit balance;
#  (c) fixit repair by a replay teacher whose reply is the real expert kernel
#      examples/sm90a/gemm_n7168_k5120.cu, judged by the GPU evaluator;
#  (d) fixit pairs, fixit notes (replay reviewer), fixit synthesize (replay reasoner),
#      fixit build, fixit stats (tables and the composition figure).
# Every model is a replay model (config written under OUT_DIR/models), so nothing leaves the
# machine. Counts of every stage are printed at the end and kept in OUT_DIR/summary.txt.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
run_dir=${3:-}
executor=${EXECUTOR:-gpu}
root=$(cd "$(dirname "$0")/.." && pwd)
ptxbench="$build/src/cli/ptxbench"
problem=gemm_n7168_k5120
expert="$root/examples/sm90a/$problem.cu"
variants="$root/tests/kernels/gemm_bad_variants.cu"
data="$out/data"
models="$out/models"

case "$executor" in
  gpu) gpu_flags=() ;;
  static) gpu_flags=(--static-only) ;;
  *) echo "fixit_h200: EXECUTOR must be gpu or static, got $executor" >&2; exit 2 ;;
esac
for f in "$ptxbench" "$expert" "$variants"; do
  [ -e "$f" ] || { echo "fixit_h200: missing $f" >&2; exit 2; }
done
if [ -e "$data" ]; then
  echo "fixit_h200: $data exists; give an empty OUT_DIR" >&2
  exit 2
fi

stage() { echo; echo "== $* =="; }
count_lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

# The replay models: one JSON line per reply, and the registry naming them.
write_models() {
  mkdir -p "$models"
  python3 - "$models" "$expert" "$variants" <<'PY'
import json, os, sys
models, expert, variants = sys.argv[1:4]
expert_src = open(expert).read()
variants_src = open(variants).read()
def reply(kernel, words):
    return json.dumps({"text": words + "\n\n```cuda\n" + kernel + "\n```\n"}) + "\n"
broken = expert_src.replace("#include", "this_line_does_not_compile;\n#include", 1)
student = [reply(broken, "Here is my TMA + WGMMA kernel."),
           reply("#define PTXBENCH_VARIANT 1\n" + variants_src, "A simpler SIMT kernel."),
           reply("#define PTXBENCH_VARIANT 17\n" + variants_src, "Accumulating in bf16.")]
teacher = [reply(expert_src, "The repaired kernel.")] * 8
note = {"instruction": "wgmma.mma_async", "shape_context": "m64n256k16 bf16, one warpgroup",
        "correct_example": "wgmma.fence.sync.aligned;", "wrong_example": "this_line_does_not_compile;",
        "operand_contract": ["shared-memory descriptors 128B-swizzled"],
        "required_sequence": ["fence", "mma_async", "commit_group", "wait_group"],
        "diagnostics": ["compile error at the first statement"], "do_not_do": ["guess operands"],
        "example_completeness": "complete", "missing_details": []}
notes = {"summary": "The kernel did not compile; the repair is the expert kernel.",
         "instruction_notes": [dict(note, instruction=n) for n in
                               ("wgmma.mma_async", "cp.async.bulk.tensor", "mbarrier.try_wait")],
         "tags": ["wgmma", "tma"]}
rationale = ("<my_reasoning>\nI start from the shapes: M = 8192 rows, N = 7168, K = 5120 in bf16. "
             "A 128x256 tile with 64-deep K steps keeps two consumer warpgroups on WGMMA while a "
             "producer warp issues TMA loads into a four-stage ring; each stage is 48 KiB. "
             + "I check the barrier phases and the epilogue stores once more. " * 4
             + "\n</my_reasoning>\n")
files = {"student.jsonl": student, "teacher.jsonl": teacher,
         "reviewer.jsonl": [json.dumps({"text": json.dumps(notes)}) + "\n"] * 64,
         "reasoner.jsonl": [json.dumps({"text": rationale}) + "\n"] * 64}
for name, lines in files.items():
    with open(os.path.join(models, name), "w") as f:
        f.writelines(lines)
registry = {"models": {name: {"provider": "replay", "model": "replay", "replay_file": name + ".jsonl"}
                       for name in ("student", "teacher", "reviewer", "reasoner")}}
with open(os.path.join(models, "models.json"), "w") as f:
    json.dump(registry, f, indent=2)
PY
}

write_models
registry="$models/models.json"

if [ -z "$run_dir" ]; then
  stage "(a) recorded run: replayed failing kernels for $problem ($executor)"
  run_dir="$out/source-run"
  # The run exits non-zero when a trajectory is unfinished; its turns are what we collect.
  "$ptxbench" run --model student --registry "$registry" --problem "$problem" --variant none \
    --turns 3 --trajectories 1 --target-speedup 0 --jobs 1 --out "$run_dir" --quiet \
    "${gpu_flags[@]}" || echo "fixit_h200: the source run exited $?; collecting what it recorded"
else
  stage "(a) using the existing run $run_dir"
fi

stage "(b) collect, balance"
"$ptxbench" fixit collect --out "$data" "$run_dir"
"$ptxbench" fixit balance "$data" --cap 33

stage "(c) repair by the replayed expert kernel ($executor)"
"$ptxbench" fixit repair "$data" --teacher teacher --registry "$registry" --turns 1 \
  --target-speedup 0 --jobs 1 --quiet "${gpu_flags[@]}" ||
  echo "fixit_h200: the repair run exited $? (unfinished or no repair correct)"

summary() {
  {
    echo "source run:         $run_dir"
    echo "failures collected: $(count_lines "$data/fixit/collect/failures.jsonl")"
    echo "failures selected:  $(count_lines "$data/fixit/balance/selected.jsonl")"
    echo "repair tasks:       $(count_lines "$data/fixit/repair/tasks.jsonl")"
    echo "pairs:              $(count_lines "$data/fixit/pairs/pairs.jsonl")"
    echo "notes records:      $(count_lines "$data/fixit/notes/notes.jsonl")"
    echo "rationales:         $(count_lines "$data/fixit/synthesize/rationales.jsonl")"
    echo "sft rows:           $(count_lines "$data/fixit/build/sft.jsonl")"
  } | tee "$out/summary.txt"
}

if [ "$executor" = static ]; then
  stage "static executor: repairs are static_only, so nothing pairs; stopping before pairs"
  summary
  exit 0
fi

stage "(d) pairs, notes, synthesize, build, stats"
"$ptxbench" fixit pairs "$data" --mode best
"$ptxbench" fixit notes "$data" --model reviewer --registry "$registry" --concurrency 1 --quiet
"$ptxbench" fixit synthesize "$data" --reasoner reasoner --registry "$registry" --concurrency 1 \
  --quiet
"$ptxbench" fixit build "$data" --max-tokens 65536
"$ptxbench" fixit stats "$data" | tee "$out/stats.md"

stage "summary"
summary
