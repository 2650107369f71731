#!/usr/bin/env bash
# The paper's Table 4 (§5.3) on one H200: one short trajectory per condition of
# config/plans/table4.json on mha_with_lse_d128, evaluated by the GPU evaluator, then the report.
#
#   bench/table4_h200.sh BUILD_DIR OUT_DIR
#     BUILD_DIR  a built tree (build/gpu): its src/cli/ptxbench is used
#     OUT_DIR    everything is written here (made if missing; must not hold an earlier run)
#   EXECUTOR=gpu (default) evaluates on the GPU; EXECUTOR=static passes --static-only, so the
#   script runs on a CPU machine (every turn that compiles is then static_only).
#
# On the H200 (the lead runs it; examples/ must be in the tree):
#   bench/table4_h200.sh build/gpu /tmp/table4-h200 2>&1 | tee /tmp/table4-h200.log
#
# What runs:
#  - replay models, so nothing leaves the machine: "student" answers turn 1 with the expert
#    kernel examples/sm90a/mha_with_lse_d128.cu broken by a line that does not compile and
#    turn 2 with the expert kernel; "tuned" answers the expert kernel both times;
#  - a held-out run (one static turn of the student) and a notes corpus of two pairs: one
#    built from the held-out run (the guard must drop it) and one from another run, whose fixed
#    kernel is the expert kernel;
#  - table4.json's six conditions with student=student, finetuned=tuned, one problem, the
#    problem's default variant, one trajectory of two turns each, no early stop;
#  - `report` (Markdown on stdout, HTML and figures under OUT_DIR/report) and `show-turn` of
#    every trajectory's second turn (OUT_DIR/prompts/<id>.json).
# OUT_DIR/summary.txt keeps the Table 4 rows and the retrieval records.
set -euo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
executor=${EXECUTOR:-gpu}
root=$(cd "$(dirname "$0")/.." && pwd)
ptxbench="$build/src/cli/ptxbench"
problem=mha_with_lse_d128
expert="$root/examples/sm90a/$problem.cu"
models="$out/models"

case "$executor" in
  gpu) gpu_flags=() ;;
  static) gpu_flags=(--static-only) ;;
  *) echo "table4_h200: EXECUTOR must be gpu or static, got $executor" >&2; exit 2 ;;
esac
for f in "$ptxbench" "$expert" "$root/config/plans/table4.json"; do
  [ -e "$f" ] || { echo "table4_h200: missing $f" >&2; exit 2; }
done
if [ -e "$out/run" ]; then
  echo "table4_h200: $out/run exists; give an empty OUT_DIR" >&2
  exit 2
fi
stage() { echo; echo "== $* =="; }

stage "models, plan"
mkdir -p "$models"
python3 - "$models" "$expert" "$root/config/plans/table4.json" "$root" "$problem" <<'PY'
import json, os, sys
models, expert, shipped, root, problem = sys.argv[1:6]
expert_src = open(expert).read()
broken = expert_src.replace("#include", "this_line_does_not_compile;\n#include", 1)
def reply(kernel):
    return json.dumps({"text": "```cuda\n" + kernel + "\n```\n"}) + "\n"
with open(os.path.join(models, "student.jsonl"), "w") as f:
    f.writelines([reply(broken), reply(expert_src)])
with open(os.path.join(models, "tuned.jsonl"), "w") as f:
    f.writelines([reply(expert_src), reply(expert_src)])
registry = {"models": {n: {"provider": "replay", "model": "replay", "replay_file": n + ".jsonl"}
                       for n in ("student", "tuned")}}
with open(os.path.join(models, "models.json"), "w") as f:
    json.dump(registry, f, indent=2)
plan = json.load(open(shipped))
plan.update({"problems": [problem], "prompt_variants": ["default"], "trajectories": 1,
             "turns": 2, "target_speedup": 0, "jobs": 2,
             "registry": os.path.join(models, "models.json")})
plan["guidance"]["file"] = os.path.join(root, "knowledge/guidance/mha_expert_guidance.md")
with open(os.path.join(models, "table4.json"), "w") as f:
    json.dump(plan, f, indent=2)
with open(os.path.join(models, "broken.cu"), "w") as f:
    f.write(broken)
PY

stage "held-out run (one static turn)"
"$ptxbench" run --model student --registry "$models/models.json" --problem "$problem" \
  --variant none --turns 1 --target-speedup 0 --jobs 1 --static-only --out "$out/held-run" --quiet

stage "notes corpus"
python3 - "$out" "$models/broken.cu" "$expert" "$problem" <<'PY'
import json, os, sys
out, broken, expert, problem = sys.argv[1:5]
broken_src, expert_src = open(broken).read(), open(expert).read()
def note(name):
    return {"instruction": name, "shape_context": "bf16 [B*H*S, D] tiles of 128 rows",
            "correct_example": "CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));",
            "wrong_example": "this_line_does_not_compile;", "operand_contract": ["128B swizzle"],
            "required_sequence": ["encode", "launch"], "diagnostics": ["compile error"],
            "do_not_do": ["guess layouts"], "example_completeness": "complete", "missing_details": []}
def record(pid, wrong, run, sample, tag):
    key = {"model": "teacher", "problem": problem, "prompt_variant": "none", "sample": sample}
    return {"id": pid, "status": "done", "problem": problem, "wrong_kernel": wrong,
            "feedback": "Compilation FAILED.", "fixed_kernel": expert_src, "speedup": 0.5,
            "notes_model": "reviewer", "prompt_version": "v1_kernel_fix_notes",
            "notes": {"summary": tag + ": the kernel did not compile.",
                      "instruction_notes": [note(tag + "-" + n) for n in ("tma", "wgmma", "mbarrier")],
                      "tags": [tag]},
            "calls": [], "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "error": "",
            "source": {"run_dir": run, "trajectory_key": key, "turn": 0, "repair_run_dir": run}}
with open(os.path.join(out, "notes.jsonl"), "w") as f:
    f.write(json.dumps(record("pair-held", broken_src, os.path.join(out, "held-run"), 0, "HELD")) + "\n")
    f.write(json.dumps(record("pair-kept", broken_src + "\n// another attempt\n",
                              os.path.join(out, "other-run"), 0, "KEPT")) + "\n")
PY

stage "Table 4 run ($executor)"
"$ptxbench" run --plan "$models/table4.json" --set student=student --set finetuned=tuned \
  --notes "$out/notes.jsonl" --held-out "$out/held-run" --out "$out/run" --quiet \
  "${gpu_flags[@]}" || echo "table4_h200: the run exited $?; reporting what it recorded"

stage "report"
"$ptxbench" report "$out/run" --format md | tee "$out/report.md"
"$ptxbench" report "$out/run" --format html --out "$out/report" ||
  echo "table4_h200: the HTML report failed (exit $?; an image without libcairo draws no figures)"

stage "prompts of every second turn"
mkdir -p "$out/prompts"
for id in $("$ptxbench" show-turn "$out/run" | awk '{print $1}'); do
  "$ptxbench" show-turn "$out/run" "$id" 2 --json >"$out/prompts/$id.json" || true
done

{
  echo "executor: $executor"
  echo "trajectories: $("$ptxbench" show-turn "$out/run" | wc -l | tr -d ' ')"
  sed -n '/^## Turn correctness rate/,/^Range/p' "$out/report.md" | grep '^| ' || true
  python3 - "$out/prompts" <<'PY'
import json, os, sys
folder = sys.argv[1]
for name in sorted(os.listdir(folder), key=lambda n: int(n.split(".")[0])):
    try:
        shown = json.load(open(os.path.join(folder, name)))
    except ValueError:
        continue
    system = shown["messages"][0]["content"]
    guided = "## Expert guidance" in system
    records = [r["record"] for r in shown["retrievals"]]
    pairs = [g["pair_ids"] for r in records for g in r["groups"]]
    held = [r["held_out_excluded"] for r in records]
    print(f"{shown['key']}: guidance={'yes' if guided else 'no'} retrieved={pairs} held_out_excluded={held}")
PY
} | tee "$out/summary.txt"
