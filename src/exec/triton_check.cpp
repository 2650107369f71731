#include "exec/triton_check.hpp"

#include <algorithm>

namespace ptxbench::exec {

util::Expected<CheckReport> check_triton(const compile::TritonGate& gate, const std::string& source,
                                         const suite::Problem& problem, compile::Arch arch) {
  util::PhaseLog phases;
  auto signature = compile::make_triton_signature(problem.definition);
  PTXBENCH_TRY(signature);
  CheckReport report;
  report.problem = problem.name();
  report.arch = arch;
  report.language = compile::Language::triton;
  report.signature = signature->one_line();
  auto findings = phases.time("triton_gate", [&] { return gate.check(source, *signature); });
  PTXBENCH_TRY(findings);
  const bool library = std::any_of(
      findings->findings.begin(), findings->findings.end(),
      [](const compile::TritonFinding& f) { return compile::triton_library_rule(f.rule); });
  if (!findings->ok())
    report.outcome = library ? CheckOutcome::banned_library : CheckOutcome::compile_error;
  report.triton_gate = std::move(*findings);
  report.phases = phases.phases();
  return report;
}

} // namespace ptxbench::exec
