// How a problem's outputs are judged against the reference: FlashInfer-Trace's element rule
// (an element fails iff |x−y| > atol and |x−y| > rtol·|y|) and the share of an input set's
// elements that must pass, the original system's required_matched_ratio (1.0 unless a problem
// says otherwise; its fp8 attention used 0.995).
#pragma once

#include "suite/problem.hpp"

#include <string_view>

namespace ptxbench::suite {

struct CorrectnessRule {
  double atol = 1e-2;
  double rtol = 1e-2;
  // An input set is correct iff 1 − failed/elements ≥ this. Only finite misses count towards
  // the allowance: a NaN or infinity in the candidate (an unwritten output included) always
  // fails the set.
  double required_matched_ratio = 1.0;
  std::string_view reason; // why the problem departs from 1.0; empty when it does not
};

CorrectnessRule correctness_rule(const Problem& problem);

} // namespace ptxbench::suite
