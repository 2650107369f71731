// Running a plan into a run directory, shared by `ptxbench run` and `ptxbench demo`: builds the
// real implementations (registry, curl transport, checker, evaluation service client, GPU
// evaluator or static executor, run store), runs the plan with a progress line, prints the summary and writes the exports.
#pragma once

#include "agent/plan.hpp"
#include "cli/command.hpp"

#include <filesystem>

namespace ptxbench::cli {

enum class RunMode : std::uint8_t { fresh = 1, resume = 2 };

// The environment variable holding the evaluation service's bearer token (both sides).
inline constexpr const char* kServiceTokenEnv = "PTXBENCH_SERVICE_TOKEN";
// Whether the GPU step runs when a GPU is present (`--static-only` turns it off).
enum class GpuUse : std::uint8_t { when_present = 1, never = 2 };

struct RunJob {
  agent::RunPlan plan;
  std::filesystem::path dir;
  RunMode mode = RunMode::fresh;
  GpuUse gpu = GpuUse::when_present;
  bool progress = true;
  bool show_turns = false; // print every turn's category and the head of its feedback
};

ExitCode run_job(RunJob job, std::string_view command);

// "runs/<prefix>-20261130T021500Z" relative to the working directory.
std::filesystem::path default_run_dir(std::string_view prefix);

} // namespace ptxbench::cli
