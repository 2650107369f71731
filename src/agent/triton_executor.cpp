#include "agent/triton_executor.hpp"

#include <fmt/format.h>

namespace ptxbench::agent {

store::TurnCategory category_of_rule(std::string_view rule) {
  return compile::triton_library_rule(rule) ? store::TurnCategory::banned_library
                                            : store::TurnCategory::compile;
}

std::string triton_gate_feedback(const compile::TritonGateReport& report) {
  if (report.ok())
    return "Static check: the Triton gate passed (no torch compute, an @triton.jit kernel, `run` "
           "with the required parameters). The GPU step did not run, so the kernel was not "
           "compiled by Triton, checked or timed.\n";
  return fmt::format("Static check: the Triton gate rejected the file ({} finding(s)):\n{}",
                     report.findings.size(), compile::render_text(report));
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
  result.evaluation.kernel_source = source;
  return result;
}

} // namespace ptxbench::agent
