#include "agent/triton_executor.hpp"

#include <array>
#include <fmt/format.h>

namespace ptxbench::agent {
namespace {

// gate.py's rules against reaching another library's kernels.
constexpr std::array<std::string_view, 9> kLibraryRules{
    "cutlass_import", "torch_alias",   "from_torch_import", "rebinds_module", "matmul_operator",
    "dynamic_import", "getattr_torch", "torch_call",        "banned_method"};

} // namespace

store::TurnCategory category_of_rule(std::string_view rule) {
  for (std::string_view library_rule : kLibraryRules)
    if (rule == library_rule)
      return store::TurnCategory::banned_library;
  return store::TurnCategory::compile;
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
