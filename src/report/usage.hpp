// Reasoning tokens and spending per model (and GPU): what the paper's reasoning-length figure
// and a budget table read. Formulas: usage.cpp and docs/metrics.md.
#pragma once

#include "report/model.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ptxbench::report {

struct UsageStats {
  std::string model;
  std::string gpu;                // empty when the runs do not say
  std::int64_t replied_calls = 0; // attempts with a reply, on finished turns
  std::int64_t failed_calls = 0;  // attempts without one, on finished turns
  // Reasoning tokens per replied call; undefined without a replied call.
  std::optional<double> reasoning_mean;
  std::optional<double> reasoning_median;
  std::optional<std::int64_t> reasoning_max;
  // Every attempt of the trajectories, abandoned turns and failed attempts included.
  store::UsageTotals spent;
};

// One row per model × GPU, sorted by model then GPU.
std::vector<UsageStats> usage_stats(std::span<const CallRecord> calls,
                                    std::span<const SpendRecord> spend);

// The median of `values` (the mean of the middle two for an even count); undefined when empty.
std::optional<double> median(std::vector<std::int64_t> values);

} // namespace ptxbench::report
