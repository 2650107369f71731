// The executor of Triton candidates on this build: the Triton gate (compile/triton_gate.hpp),
// Python's own parser applying the original's rules. A candidate the gate rejects gets its
// findings, each with the offending line; one it passes is static_only, as a CUDA candidate on a
// machine without a GPU. The evaluator's GPU step for Triton (docs/evaluation.md, "Triton
// candidates"; `ptxbench eval kernel.py`) exists, but runs do not call it yet, so no Triton turn
// is ever called correct or wrong here.
#pragma once

#include "agent/executor.hpp"
#include "compile/triton_gate.hpp"

namespace ptxbench::agent {

// The turn category of a gate finding's rule: syntax and form rules are `compile`, the rules
// against other libraries and torch compute are `banned_library`.
store::TurnCategory category_of_rule(std::string_view rule);

// The model's feedback for a gate report: every finding, with its line quoted.
std::string triton_gate_feedback(const compile::TritonGateReport& report);

// Thread-safe: each check is its own python3 process.
class TritonStaticExecutor final : public Executor {
public:
  explicit TritonStaticExecutor(const compile::TritonGate& gate) : m_gate(gate) {}
  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem& problem,
                                      compile::Arch arch) override;
  std::string_view name() const override { return "triton-static"; }

private:
  const compile::TritonGate& m_gate;
};

} // namespace ptxbench::agent
