// Running a candidate kernel for the agent loop: the Executor interface and its real
// implementations (RemoteExecutor, the third, is in remote_executor.hpp).
//
// GpuExecutor runs the full GPU evaluation (exec::Evaluator). StaticExecutor runs what needs
// no GPU: the language's static check (Frontend::check through exec::Checker — for CUDA the
// banned-library gate, nvcc and the static SASS report; for Triton its gate). A StaticExecutor
// turn whose kernel builds can never be called correct or wrong: it is categorised
// TurnCategory::static_only (counted, so a CPU-only run still ends on its turn budget; never
// correct, so it never meets the target speedup). GpuExecutor uses the same category when the
// evaluator finds no usable GPU.
#pragma once

#include "compile/nvcc.hpp"
#include "exec/check.hpp"
#include "exec/evaluator.hpp"
#include "frontend/frontend.hpp"
#include "store/records.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <optional>
#include <string>

namespace ptxbench::agent {

// What one evaluated turn came to: its category, the observation for the model and what the
// run store keeps of the evaluation.
struct TurnResult {
  store::TurnCategory category = store::TurnCategory::infra;
  std::string feedback;
  std::optional<double> speedup; // when the kernel ran correctly and was timed
  store::EvaluationRecord evaluation;
};

class Executor {
public:
  virtual ~Executor() = default;
  // Errors only when no verdict exists (a missing tool, a broken set-up): an infra turn.
  virtual util::Expected<TurnResult>
  evaluate(const std::string& source, const suite::Problem& problem, compile::Arch arch) = 0;
  // "static" or "gpu", for summaries.
  virtual std::string_view name() const = 0;
};

// Thread-safe (the checker and the frontend are). `language`: the candidates' language.
class StaticExecutor final : public Executor {
public:
  explicit StaticExecutor(const exec::Checker& checker, const frontend::Frontend& language =
                                                            frontend::of(compile::Language::cuda))
      : m_checker(checker), m_language(language) {}
  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem& problem,
                                      compile::Arch arch) override;
  std::string_view name() const override { return "static"; }

private:
  const exec::Checker& m_checker;
  const frontend::Frontend& m_language;
};

// Thread-safe: where the language's check is cached (Frontend::check_is_cached: CUDA's nvcc),
// the static check runs in the caller's thread (compiles of several trajectories overlap each
// other and the GPU) and the evaluator's own check of the same source is a compile-cache hit;
// otherwise (the Triton gate) it runs once, in the evaluator. The evaluator serialises only
// what must not share the GPU (timing and counting hold its GPU lock exclusively, its other GPU
// phases shared). The candidates' language is options.language.
class GpuExecutor final : public Executor {
public:
  GpuExecutor(const exec::Checker& checker, exec::Evaluator& evaluator, exec::EvalOptions options)
      : m_checker(checker), m_evaluator(evaluator), m_options(options) {}
  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem& problem,
                                      compile::Arch arch) override;
  std::string_view name() const override { return "gpu"; }

private:
  const exec::Checker& m_checker;
  exec::Evaluator& m_evaluator;
  exec::EvalOptions m_options;
};

// The turn of a check that stopped before the GPU step (banned library, compile error), or of
// a build that is all this executor can do.
TurnResult check_turn(const exec::CheckReport& report, const std::string& source);
// The turn of a finished evaluation, whose FlashInfer-Trace line is `trace`: the one
// conversion GpuExecutor and RemoteExecutor share.
TurnResult evaluation_turn(const exec::Evaluation& evaluation, trace::Trace trace,
                           const std::string& source);

// The static check that GpuExecutor and RemoteExecutor run before their GPU step.
struct PreGpuCheck {
  exec::CheckReport report;
  std::optional<TurnResult> stopped; // the turn, when the check ended it before the GPU step
};
// Errors only when the check itself has no verdict (the executor's infra turn).
util::Expected<PreGpuCheck> check_before_gpu(const exec::Checker& checker,
                                             const frontend::Frontend& language,
                                             const std::string& source,
                                             const suite::Problem& problem, compile::Arch arch);

// The category of a static check alone (banned_library, compile or static_only).
store::TurnCategory category_of(const exec::CheckReport& report);
// The category of a full evaluation; static_only when the GPU step did not run.
store::TurnCategory category_of(const exec::Evaluation& evaluation);

} // namespace ptxbench::agent
