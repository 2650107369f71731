// Running a plan into a run directory, shared by `ptxbench run` and `ptxbench demo`: builds the
// real implementations (registry, curl transport, checker, evaluation service client, GPU
// evaluator or static executor, run store), runs the plan with a progress line, prints the summary
// and writes the exports.
#pragma once

#include "agent/executor.hpp"
#include "agent/guidance.hpp"
#include "agent/plan.hpp"
#include "agent/runner.hpp"
#include "cli/command.hpp"
#include "cli/tools.hpp"
#include "exec/evaluator.hpp"
#include "model/http_transport.hpp"
#include "model/registry.hpp"
#include "pack/manifest.hpp"

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>

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
  // resume: continue with model settings that differ from the stored ones (recorded as an
  // override) instead of refusing
  bool override_settings = false;
};

ExitCode run_job(RunJob job, std::string_view command);

// The live parameters of GPU 0 when it is of `arch` (they go into the prompts), else "".
std::string live_device_text(compile::Arch arch);

// The real implementations a plan runs on, as `ptxbench run` builds them: the registry, the
// knowledge packs, the suite and checker, the curl transport and the executor — the evaluation
// service client when the plan names services, the GPU evaluator when a GPU is here, else the
// static check (said on stderr) — and the retrieval of the plan's repair notes, when it names a
// notes corpus. Commands that drive the loop (run, fixit repair) share it.
// not_found before anything is built for a plan naming an unknown model, problem or variant;
// invalid_input for a model whose API-key variable is unset or whose base URL is no URL.
class RunEnvironment {
public:
  // `run_name`: the run's id in a fleet's broker (its fairness unit), when the plan names one.
  // `run_dir`: the run's directory, held out of its own notes retrieval (may be empty). The
  // plan's guidance file is read here (agent/guidance.hpp): missing, not UTF-8, too large, or
  // changed since the stored sha256 of a resumed run are errors before any model call.
  static util::Expected<std::unique_ptr<RunEnvironment>>
  make(const agent::RunPlan& plan, GpuUse gpu, std::string_view command,
       const std::string& run_name = {}, const std::filesystem::path& run_dir = {});

  // Everything but the store; progress on stderr unless `progress` is false.
  agent::RunDeps deps(bool progress, const std::atomic<bool>* cancel);
  const agent::Executor& executor() const { return *m_executor; }
  const model::ModelRegistry& registry() const { return m_registry; }
  const suite::Suite& suite() const { return *m_suite; }
  const pack::Manifest& manifest() const { return m_manifest; }
  // The sha256 of the plan's guidance file; empty when it has none.
  const std::string& guidance_sha256() const { return m_guidance.sha256; }
  const std::string& guidance_text() const { return m_guidance.text; }

private:
  RunEnvironment(model::ModelRegistry registry, pack::Manifest manifest)
      : m_registry(std::move(registry)), m_manifest(std::move(manifest)) {}
  void start_executor(const agent::RunPlan& plan, GpuUse gpu, std::string_view command,
                      exec::Checker& checker, const std::string& run_name);

  model::ModelRegistry m_registry;
  pack::Manifest m_manifest;
  Toolchain m_tools;
  const suite::Suite* m_suite = nullptr;
  std::unique_ptr<model::HttpTransport> m_transport;
  std::unique_ptr<exec::Evaluator> m_evaluator;
  std::unique_ptr<agent::Executor> m_executor;
  std::string m_live_device;
  agent::FeedbackHook m_notes; // the plan's repair notes (adapt/notes_feedback.hpp), or none
  agent::GuidanceText m_guidance;
};

// While alive, the first Ctrl-C (or SIGTERM) sets flag() so the turns in flight finish and the
// run stops resumable; a second one kills.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  const std::atomic<bool>* flag() const;
  // The signal that stopped the run (SIGINT, SIGTERM), 0 while none came.
  int received() const;
  // 128 + that signal (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a signalled job;
  // nothing while none came.
  std::optional<ExitCode> stopped_code() const;

private:
  void (*m_int)(int) = nullptr;
  void (*m_term)(int) = nullptr;
};

// "runs/<prefix>-20261130T021500Z" relative to the working directory.
std::filesystem::path default_run_dir(std::string_view prefix);

} // namespace ptxbench::cli
