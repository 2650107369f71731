// Run plans: models × problems × prompt variants × trajectories × turns, from one JSON file or
// from command-line flags, and their expansion into the trajectories of a run.
//
//   {"models": ["Qwen3.6-27B"], "problems": ["primary"], "prompt_variants": ["paper"],
//    "trajectories": 4, "turns": 8, "target_speedup": 1.2, "context": "full",
//    "arch": "sm_90a", "jobs": 4, "registry": "config/models.json",
//    "max_infra_retries": 3, "eval_attempts": 4, "eval_retry_delay_s": 5,
//    "eval": {"sets": 3, "trials": 3, "warmup": 10, "iterations": 50, "timeout_s": 60,
//             "memcheck": true, "service": ["http://gpu-host:8000"]}}
//
// problems: names, or the suites "primary", "generalization", "all". prompt_variants: variant
// names from knowledge/packs.json, or "paper" (the problem kind's three variants, the paper's
// protocol), "default" (the kind's first), "none" (no knowledge pack). eval.service: evaluation
// services (`ptxbench serve`) that run the GPU step instead of a local GPU (optional; a
// resumed run may name others). Unknown keys are errors.
//
// A repair run (Fixit: a teacher fixes wrong kernels through this same loop) lists
//   "repairs": [{"id": "<failure id>", "problem": "...", "variant": "...",
//                "kernel": "<wrong kernel>", "error": "<its feedback>"}, ...]
// and then runs one trajectory per model and repair instead of problems × variants ×
// trajectories: its key is (model, problem, variant, sample = the repair's index in the list),
// unique in the run and recoverable from the plan, and its first user message is the repair
// prompt (prompt.hpp). The repairs are stored with the plan, so --resume needs nothing else.
// Conditions (paper §5.3, Table 4): what the model is given at inference time besides the task
// — expert guidance (guidance.hpp) on or off, retrieved repair notes none, notes, or notes and
// the fixed kernel — as one more dimension of the plan:
//   "guidance": {"file": "../../knowledge/guidance/mha_expert_guidance.md",
//                "problems": ["mha_"]},
//   "conditions": [{"name": "no-guidance", "guidance": false, "retrieval": "none"},
//                  {"name": "notes", "guidance": true, "retrieval": "notes",
//                   "models": ["${student}"]}, ...]
// Relative paths of guidance.file, repair_notes.file and repair_notes.held_out are read from
// beside the plan file and stored absolute. guidance.problems: name prefixes of the problems the
// guidance applies to (absent: all); a problem outside them gets no guidance under any condition. A
// condition's models (absent: all of the plan's) restrict it to those models. Retrieval needs
// repair_notes.file (the corpus and its options; the condition picks the mode). Without
// "conditions" the plan has one unnamed condition: guidance on when guidance.file is given,
// retrieval repair_notes.mode when repair_notes.file is. Trajectories: models × problems × variants
// × conditions × trajectories; each trajectory's key carries its condition's name, and its samples
// continue across the conditions of its (model, problem, variant): condition i of those that apply
// to the model has samples i·T … i·T+T−1 (T = trajectories).
//
// Parameters: "parameters": {"student": "Qwen3.6-27B"} names values that "${student}" stands
// for in models and conditions[].models; `run --set student=NAME` overrides one. The stored
// plan holds the substituted names.
//
// The resolved plan (every default filled in, the guidance file's sha256 added) is what the run
// store keeps, so a resumed run uses exactly the plan it started with.
#pragma once

#include "agent/condition.hpp"
#include "agent/loop.hpp"
#include "exec/evaluator.hpp"
#include "pack/manifest.hpp"
#include "store/records.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::agent {

struct EvalSettings {
  int sets = 3;
  int trials = 3;
  int warmup = 10;
  int iterations = 50;
  double timeout_s = 60;
  // compute-sanitizer memcheck on every evaluated turn, as the paper's protocol does (a finding
  // is RUNTIME_ERROR); `run --no-memcheck` or "memcheck": false turns it off
  bool memcheck = true;
  std::vector<std::string> service; // evaluation service URLs; empty: local GPU or static
  std::string broker;               // a fleet's PostgreSQL queue (postgresql://…); empty: none
};

// One wrong kernel to repair; `id` is the caller's (the Fixit failure id).
struct RepairTask {
  std::string id;
  std::string problem;
  std::string variant; // knowledge-pack variant, or "none"
  std::string kernel;
  std::string error; // the feedback the kernel got, shown to the model as its error message
  friend bool operator==(const RepairTask&, const RepairTask&) = default;
};

// Repair notes retrieved for a failed turn's kernel and appended to its feedback (the notes
// corpus of `ptxbench fixit notes`; retrieval in adapt/notes_index.hpp, wired by the cli).
//   "repair_notes": {"file": "data/fixit/notes/notes.jsonl", "mode": 1, "top_k": 3, "max_notes": 8,
//             "min_similarity": 0, "definition_prefixes": ["gemm_"]}
// mode 1: the notes; 2: the best fixed kernel and the notes. An empty file: no retrieval. "file"
// may be left out when `run --notes FILE` gives it (a shipped plan such as table4.json).
//
// "held_out": run directories whose pairs the index must not serve (the leakage guard,
// adapt/notes_feedback.hpp says how the corpus is split); each must hold a run store.
struct NotesSettings {
  std::filesystem::path file;
  int mode = 1;
  int top_k = 3;
  int max_notes = 8;
  double min_similarity = 0;
  std::vector<std::string> definition_prefixes; // empty: the failing kernel's problem only
  std::vector<std::filesystem::path> held_out;
};

struct GuidanceSettings {
  std::filesystem::path file;        // empty: no guidance in this plan
  std::vector<std::string> problems; // name prefixes it applies to; empty: every problem
  std::string sha256;                // of the file when the run started; empty until then
};

struct RunPlan {
  std::vector<std::string> models;
  std::vector<std::string> problems{"gemm_n7168_k5120"};
  std::vector<std::string> prompt_variants{"default"};
  int trajectories = 1;
  LoopOptions loop;
  int jobs = 4;                   // trajectories in flight at once
  std::filesystem::path registry; // empty: the shipped config/models.json
  EvalSettings eval;
  std::vector<RepairTask> repairs; // non-empty: a repair run (see above)
  NotesSettings notes;
  GuidanceSettings guidance;
  std::vector<Condition> conditions; // empty: the implicit condition (see above)
};

// The plan's conditions: its list, or the one implicit condition.
std::vector<Condition> effective_conditions(const RunPlan& plan);
// Whether `condition` gives `problem` the guidance (on, and the problem is one it applies to).
bool guidance_applies(const RunPlan& plan, const Condition& condition, std::string_view problem);

// "name=value" overrides of the plan's parameters (`run --set`).
using PlanParameters = std::map<std::string, std::string, std::less<>>;

// invalid_input naming the JSON path of the first bad field; an override naming a parameter the
// plan does not declare is an error too.
util::Expected<RunPlan> parse_plan(std::string_view text, const std::filesystem::path& origin,
                                   const PlanParameters& overrides = {});
util::Expected<RunPlan> load_plan(const std::filesystem::path& path,
                                  const PlanParameters& overrides = {});
util::Json plan_to_json(const RunPlan& plan);

exec::EvalOptions eval_options(const RunPlan& plan);

// One trajectory of the run, in plan order (model, problem, variant, sample).
struct PlannedTrajectory {
  store::TrajectoryKey key;
  const suite::Problem* problem = nullptr;
  std::string variant;                // the knowledge-pack variant ("none" for no pack)
  const RepairTask* repair = nullptr; // into the plan, for a repair trajectory
  Condition condition;                // what the model gets besides the task
  bool guidance = false;              // guidance_applies for this trajectory
};

// not_found for an unknown problem or suite, or a variant that does not exist for the arch.
// The result points into `plan` and `suite`.
util::Expected<std::vector<PlannedTrajectory>>
expand(const RunPlan& plan, const suite::Suite& suite, const pack::Manifest& manifest);

} // namespace ptxbench::agent
