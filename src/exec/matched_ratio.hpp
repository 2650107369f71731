// Whether one input set's outputs are correct under the problem's required matched ratio
// (suite/correctness.hpp): 1 − failed/elements ≥ ratio, as the original system computes it,
// with one difference — non-finite misses (a NaN or infinity in the candidate, an unwritten
// sentinel, a non-finite reference) are never tolerated, whatever the ratio.
#pragma once

#include "exec/gpu_ops.hpp"

#include <cstdint>

namespace ptxbench::exec {

struct SetJudgement {
  bool correct = false;
  double matched_ratio = 1.0;  // 1 − failed/elements
  std::uint64_t tolerated = 0; // finite misses accepted under a ratio below 1 (0 when !correct)
};

SetJudgement judge_set(const CompareStats& stats, double required_matched_ratio);

} // namespace ptxbench::exec
