// Fixit stage "repair": a teacher model repairs every selected failure through the real agent
// loop (the original's fix-kernel runs with Gemini, 5 turns, stop at speedup 0.15).
//
// Each FailureRecord of DIR/fixit/balance/selected.jsonl becomes one repair of a run plan
// (agent/plan.hpp): a trajectory of the teacher that opens with the failure's task, its wrong
// kernel and its feedback in the Fixit repair prompt, and goes on as any trajectory does,
// judged by the executor the caller built (GPU evaluator, evaluation service or static check).
// The run is an ordinary run directory, DIR/fixit/repair/run, so `ptxbench report`, `export`
// and `run --resume` work on it; DIR/fixit/repair/tasks.jsonl maps each failure id to its
// trajectory key. Calling the stage again resumes the run (the plan stored with it, the
// selected failures checked unchanged); finished trajectories are not repeated.
#pragma once

#include "adapt/records.hpp"
#include "agent/plan.hpp"
#include "agent/runner.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace ptxbench::adapt {

struct RepairOptions {
  std::filesystem::path data_dir; // DIR
  std::string teacher;            // registry name
  int turns = 5;
  double target_speedup = 0.15; // 0: never stop early
  int jobs = 4;
  std::optional<compile::Arch> arch; // default: the failures' (they must agree)
  std::filesystem::path registry;    // stored with the plan; empty: the shipped one
  agent::EvalSettings eval;
};

struct RepairPaths {
  std::filesystem::path selected; // DIR/fixit/balance/selected.jsonl
  std::filesystem::path tasks;    // DIR/fixit/repair/tasks.jsonl
  std::filesystem::path run_dir;  // DIR/fixit/repair/run
};
RepairPaths repair_paths(const std::filesystem::path& data_dir);

enum class RepairStart : std::uint8_t { fresh = 1, resumed = 2 };

struct RepairResult {
  RepairStart start = RepairStart::fresh;
  std::size_t repairs = 0;
  agent::RunSummary summary;
};

// The plan the stage runs: the one stored in an existing repair run, else a new one from the
// selected failures and `options`. invalid_input when selected.jsonl is missing, empty or bad,
// when the failures name different architectures, or when an existing run was started from
// other failures or another teacher.
util::Expected<agent::RunPlan> repair_plan(const RepairOptions& options);

// Runs (or resumes) the repair run. `deps` are what `ptxbench run` gives the runner; its store
// is the stage's own and is ignored. Errors: the plan's, the store's, the tasks file's.
util::Expected<RepairResult> run_repair(const RepairOptions& options, agent::RunDeps deps);

} // namespace ptxbench::adapt
