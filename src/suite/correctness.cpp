#include "suite/correctness.hpp"

namespace ptxbench::suite {

CorrectnessRule correctness_rule(const Problem& problem) {
  CorrectnessRule rule;
  if (problem.kind == OpKind::mha_backward) {
    // bench/results/mha_bwd_agreement_h200.md: on the spiky inputs, cuDNN's backward misses the
    // fp32 backward on ~2e-6 of the dQ/dK/dV elements and an independent FA3-style kernel on as
    // many, on different elements (bf16 rounding of P and dS), so the two disagree on 2-6e-6;
    // every element within 1e-2 of cuDNN is met only by a replica of cuDNN's reduction order.
    // 1e-5 is the allowance tests/unit/reference/mha_gpu.cpp proves cuDNN with.
    rule.required_matched_ratio = 1.0 - 1e-5;
    rule.reason = "bf16 attention backward on spiky inputs: two correct implementations differ "
                  "on ~1e-6 of the elements, so 1e-5 of them may miss the reference";
  }
  return rule;
}

} // namespace ptxbench::suite
