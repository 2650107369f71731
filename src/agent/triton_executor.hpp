// The executor of Triton candidates on a machine without a GPU: the Triton gate
// (compile/triton_gate.hpp), Python's own parser applying the original's rules. A candidate the
// gate rejects gets its findings, each with the offending line; one it passes is static_only, as
// a CUDA candidate on a machine without a GPU. With a GPU, Triton turns go through GpuExecutor
// and the evaluator's Triton path (docs/evaluation.md, "Triton candidates").
#pragma once

#include "agent/executor.hpp"
#include "compile/triton_gate.hpp"

namespace ptxbench::agent {

// The turn category of a gate finding's rule: syntax and form rules are `compile`, the rules
// against other libraries and torch compute are `banned_library`.
store::TurnCategory category_of_rule(std::string_view rule);

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
