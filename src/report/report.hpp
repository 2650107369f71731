// A report: the metrics of every model × problem × prompt variant, their spread across
// variants, per-turn error categories and turn-to-turn transitions (paper Figure 9), reasoning
// tokens and spending per model × GPU, built from a RunModel and rendered by a ReportFormat
// (format.hpp).
#pragma once

#include "report/metrics.hpp"
#include "report/model.hpp"
#include "report/usage.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench::report {

// One model × problem × prompt variant. A variant none of whose counted turns got a GPU
// verdict while some stopped after the static check (static_only) has every metric
// undefined: nothing was measured.
struct VariantResult {
  std::string variant;
  std::int64_t trajectories = 0;    // with at least one counted turn
  std::map<int, TurnCounts> counts; // by turn limit
  MetricValues values;
};

// One model × problem: its variants and each metric's spread across them.
struct GroupResult {
  std::string model;
  std::string problem;
  std::vector<VariantResult> variants;
  std::map<MetricKey, Spread> across;
  std::map<int, TurnCounts> counts; // summed over variants, by turn limit
};

inline constexpr std::size_t kCategoryCount = store::kTurnCategories.size();
using CategoryCounts = std::array<std::int64_t, kCategoryCount>; // by TurnCategory value - 1

// Error categories of one model's counted turns: by counted-turn ordinal (1-based), and the
// transitions between consecutive counted turns of a trajectory (from, to).
struct CategoryStats {
  std::string model;
  std::map<int, CategoryCounts> by_turn;
  // Reasoning tokens of each counted turn, by ordinal, ascending (paper Figure 7).
  std::map<int, std::vector<std::int64_t>> reasoning_by_turn;
  std::map<std::pair<store::TurnCategory, store::TurnCategory>, std::int64_t> transitions;
  std::int64_t not_counted_turns = 0; // infra turns, excluded from everything else
};

// Why the trajectories of one model × problem ended: a count per exit reason (kExitReasons
// order), then the unfinished ones (stopped or killed; resumable).
inline constexpr std::size_t kEndCount = store::kExitReasons.size() + 1;
using EndCounts = std::array<std::int64_t, kEndCount>;
struct EndStats {
  std::string model;
  std::string problem;
  EndCounts counts{};
};
// The column name of EndCounts[i]: the exit reason's name, or "unfinished".
std::string_view end_name(std::size_t i);

struct Report {
  std::vector<std::string> sources;
  MetricOptions options;
  std::int64_t trajectories = 0;
  std::int64_t finished_turns = 0;
  std::int64_t not_counted_turns = 0;
  std::vector<GroupResult> groups;       // sorted by model, problem
  std::vector<CategoryStats> categories; // sorted by model
  std::vector<TurnRecord> turns;         // sorted by trajectory, turn index
  std::vector<UsageStats> usage;         // sorted by model, GPU
  std::vector<EndStats> ends;            // sorted by model, problem
  // No counted turn got a GPU verdict and some stopped after the static check: correctness and
  // speed were never measured, so every metric is undefined (–), not 0.
  bool static_only = false;
  // Some trajectory ran under a named plan condition: rows and series are model · condition,
  // and the turn-correctness table is the paper's Table 4.
  bool conditions = false;
};

// The reasoning-length distribution of one turn ordinal: quartiles by the nearest-rank method
// of docs/metrics.md; nullopt for no turns.
struct Quartiles {
  std::int64_t low = 0; // 25th percentile
  std::int64_t median = 0;
  std::int64_t high = 0; // 75th percentile
  std::int64_t max = 0;
};
std::optional<Quartiles> quartiles(std::span<const std::int64_t> sorted);

Report build_report(const RunModel& run, const MetricOptions& options = {});
std::vector<CategoryStats> category_stats(std::span<const TurnRecord> turns);

} // namespace ptxbench::report
