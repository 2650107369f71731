// Which pair of interleaved trials strays from the others (gpu_timing.cpp "Outlier pairs").
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace ptxbench::exec {

struct StrayPair {
  std::size_t index = 0;
  double ratio = 0.0;  // reference / candidate of that pair
  double median = 0.0; // median ratio over all pairs
  double stray = 0.0;  // ratio / median - 1
};

// The median of `values` (0 when empty): per-trial medians of CUDA events, pairs' ratios.
double median(std::vector<double> values);

// The pair whose reference/candidate ratio strays most from the median ratio, if it strays
// by more than `limit` (a fraction); none with fewer than three pairs, mismatched lists or a
// non-positive latency.
std::optional<StrayPair> stray_pair(const std::vector<double>& reference_ms,
                                    const std::vector<double>& candidate_ms, double limit);

} // namespace ptxbench::exec
