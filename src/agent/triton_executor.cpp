#include "agent/triton_executor.hpp"

#include "agent/feedback.hpp"

namespace ptxbench::agent {

store::TurnCategory category_of_rule(std::string_view rule) {
  return compile::triton_library_rule(rule) ? store::TurnCategory::banned_library
                                            : store::TurnCategory::compile;
}

util::Expected<TurnResult> TritonStaticExecutor::evaluate(const std::string& source,
                                                          const suite::Problem& problem,
                                                          compile::Arch /*arch*/) {
  auto signature = compile::make_triton_signature(problem.definition);
  PTXBENCH_TRY(signature);
  auto report = m_gate.check(source, *signature);
  PTXBENCH_TRY(report);
  TurnResult result;
  result.category = store::TurnCategory::static_only;
  // The first banned-library finding decides; otherwise the first finding's category.
  for (const auto& finding : report->findings)
    if (result.category == store::TurnCategory::static_only ||
        category_of_rule(finding.rule) == store::TurnCategory::banned_library)
      result.category = category_of_rule(finding.rule);
  result.feedback = triton_gate_feedback(*report);
  if (report->ok())
    result.feedback +=
        "The GPU step did not run, so the kernel was not compiled by Triton, checked or timed.\n";
  result.evaluation.kernel_source = source;
  return result;
}

} // namespace ptxbench::agent
