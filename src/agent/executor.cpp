#include "agent/executor.hpp"

#include "agent/feedback.hpp"
#include "exec/evaluation.hpp"

namespace ptxbench::agent {
namespace {

std::optional<std::string> static_verdict_name(const exec::CheckReport& report) {
  if (auto verdict = report.verdict())
    return std::string(sass::to_string(*verdict));
  return std::nullopt;
}

std::optional<std::string> dynamic_verdict_name(const exec::Evaluation& evaluation) {
  if (!evaluation.dynamic)
    return std::nullopt;
  return std::string(exec::to_string(evaluation.dynamic->verdict));
}

} // namespace

TurnResult check_turn(const exec::CheckReport& report, const std::string& source) {
  TurnResult result;
  result.category = category_of(report);
  result.feedback = check_feedback(report);
  result.evaluation.kernel_source = source;
  result.evaluation.static_verdict = static_verdict_name(report);
  return result;
}

TurnResult evaluation_turn(const exec::Evaluation& evaluation, trace::Trace trace,
                           const std::string& source) {
  TurnResult result;
  result.category = category_of(evaluation);
  result.feedback = evaluation_feedback(evaluation);
  result.speedup = speedup_of(evaluation);
  result.evaluation.kernel_source = source;
  result.evaluation.traces.push_back(std::move(trace));
  result.evaluation.speedup = result.speedup;
  result.evaluation.static_verdict = static_verdict_name(evaluation.check);
  result.evaluation.dynamic_verdict = dynamic_verdict_name(evaluation);
  return result;
}

util::Expected<PreGpuCheck> check_before_gpu(const exec::Checker& checker,
                                             const frontend::Frontend& language,
                                             const std::string& source,
                                             const suite::Problem& problem, compile::Arch arch) {
  PTXBENCH_TRY_ASSIGN(auto report, checker.check(language, source, problem, arch));
  PreGpuCheck checked{std::move(report.report), std::nullopt};
  if (checked.report.outcome != exec::CheckOutcome::ok)
    checked.stopped = check_turn(checked.report, source);
  return checked;
}

store::TurnCategory category_of(const exec::CheckReport& report) {
  switch (report.outcome) {
  case exec::CheckOutcome::banned_library:
    return store::TurnCategory::banned_library;
  case exec::CheckOutcome::compile_error:
    return store::TurnCategory::compile;
  case exec::CheckOutcome::ok:
    return store::TurnCategory::static_only;
  }
  throw util::Fatal("unknown check outcome");
}

store::TurnCategory category_of(const exec::Evaluation& evaluation) {
  if (evaluation.check.outcome != exec::CheckOutcome::ok || !evaluation.gpu_ran)
    return category_of(evaluation.check);
  // A library reached at run time is the banned-library rule, however it was reached.
  if (evaluation.broken_rule && evaluation.status == trace::EvaluationStatus::runtime_error &&
      evaluation.broken_rule->rule != exec::Rule::inconsistent_work)
    return store::TurnCategory::banned_library;
  switch (evaluation.status) {
  case trace::EvaluationStatus::passed:
    return store::TurnCategory::correct;
  case trace::EvaluationStatus::incorrect_shape:
  case trace::EvaluationStatus::incorrect_numerical:
  case trace::EvaluationStatus::incorrect_dtype:
    return store::TurnCategory::numerical;
  case trace::EvaluationStatus::runtime_error:
    return store::TurnCategory::runtime;
  case trace::EvaluationStatus::compile_error:
    return store::TurnCategory::compile;
  case trace::EvaluationStatus::timeout:
    return store::TurnCategory::timeout;
  }
  throw util::Fatal("unknown evaluation status");
}

util::Expected<TurnResult> StaticExecutor::evaluate(const std::string& source,
                                                    const suite::Problem& problem,
                                                    compile::Arch arch) {
  PTXBENCH_TRY_ASSIGN(auto checked, m_checker.check(m_language, source, problem, arch));
  TurnResult result = check_turn(checked.report, source);
  if (result.category == store::TurnCategory::static_only)
    result.feedback += m_language.no_gpu_note();
  return result;
}

util::Expected<TurnResult> GpuExecutor::evaluate(const std::string& source,
                                                 const suite::Problem& problem,
                                                 compile::Arch arch) {
  // A cached check runs here, in the caller's thread (the evaluator's own check of the same
  // source is then a compile-cache hit); another runs once, in the evaluator, whose report
  // carries it.
  const frontend::Frontend& language = frontend::of(m_options.language);
  if (language.check_is_cached()) {
    PTXBENCH_TRY_ASSIGN(auto checked, check_before_gpu(m_checker, language, source, problem, arch));
    if (checked.stopped)
      return std::move(*checked.stopped);
  }
  exec::EvalOptions options = m_options;
  options.arch = arch;
  PTXBENCH_TRY_ASSIGN(auto evaluation, m_evaluator.evaluate(source, problem, options));
  return evaluation_turn(evaluation, exec::to_trace(evaluation, problem), source);
}

} // namespace ptxbench::agent
