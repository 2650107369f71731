// The paper's metrics (§4.1) over the turns of one model × problem × prompt variant, at a
// turn limit, and their mean and min–max across prompt variants. Formulas: metrics.cpp and
// docs/metrics.md.
#pragma once

#include "report/model.hpp"
#include "util/enum_table.hpp"

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ptxbench::report {

inline constexpr std::array<int, 3> kDefaultTurnLimits{1, 4, 8};

// The counted turns of one trajectory in order; turn i of `turns` is counted turn i + 1.
struct TrajectoryTurns {
  std::int64_t trajectory = 0;
  std::vector<const TurnRecord*> turns;
};

// Groups turns by trajectory, drops turns that used no budget (infra) and orders the rest by
// store index. Pointers refer into `turns`.
std::vector<TrajectoryTurns> counted_trajectories(std::span<const TurnRecord> turns);

// Whether a metric looks at every correct turn or only at those that executed a target
// instruction (state `present`).
enum class Restriction : std::uint8_t { any_correct = 1, target_instruction = 2 };

// Turn counts within the first `limit` counted turns of each trajectory.
struct TurnCounts {
  std::int64_t turns = 0;
  std::int64_t correct = 0;
  std::int64_t correct_present = 0;
  std::int64_t correct_not_executed = 0;
  std::int64_t correct_absent = 0;
  std::int64_t correct_unknown = 0; // never in a target-instruction numerator
};
TurnCounts count_turns(std::span<const TrajectoryTurns> trajectories, int limit);

// Turn-level metrics (the paper's): denominators are counted turns within the limit.
std::optional<double> turn_correctness_rate(std::span<const TrajectoryTurns> trajectories,
                                            int limit, Restriction restriction);
std::optional<double> fast_p(std::span<const TrajectoryTurns> trajectories, int limit, double p,
                             Restriction restriction);
// The speedups of the qualifying timed turns within the limit, in turn order: where Fast_p
// steps down, and the best qualifying speedup (their maximum).
std::vector<double> qualifying_speedups(std::span<const TrajectoryTurns> trajectories, int limit,
                                        Restriction restriction);
// Best speedup of each trajectory, averaged over the trajectories that have one.
std::optional<double> best_speedup(std::span<const TrajectoryTurns> trajectories, int limit,
                                   Restriction restriction);
// The original code's run-level variant: max over trajectories of the best speedup.
std::optional<double> peak_speedup(std::span<const TrajectoryTurns> trajectories, int limit,
                                   Restriction restriction);
// The original code's trajectory-level variant: the fraction of trajectories with at least one
// qualifying correct turn within the limit.
std::optional<double> trajectory_correctness_rate(std::span<const TrajectoryTurns> trajectories,
                                                  int limit, Restriction restriction);

enum class Metric : std::uint8_t {
  turn_correctness = 1,
  target_turn_correctness = 2,
  best_speedup = 3,
  target_best_speedup = 4,
  fast_p = 5,
  target_fast_p = 6,
  trajectory_correctness = 7,
  target_trajectory_correctness = 8,
  peak_speedup = 9,
  target_peak_speedup = 10,
};
struct MetricInfo {
  Metric metric;
  std::string_view name;
};
inline constexpr std::array kMetrics{
    MetricInfo{Metric::turn_correctness, "turn_correctness"},
    MetricInfo{Metric::target_turn_correctness, "target_turn_correctness"},
    MetricInfo{Metric::best_speedup, "best_speedup"},
    MetricInfo{Metric::target_best_speedup, "target_best_speedup"},
    MetricInfo{Metric::fast_p, "fast_p"},
    MetricInfo{Metric::target_fast_p, "target_fast_p"},
    MetricInfo{Metric::trajectory_correctness, "trajectory_level_correctness"},
    MetricInfo{Metric::target_trajectory_correctness, "trajectory_level_target_correctness"},
    MetricInfo{Metric::peak_speedup, "run_level_peak_speedup"},
    MetricInfo{Metric::target_peak_speedup, "run_level_target_peak_speedup"},
};
consteval bool metrics_complete() {
  for (std::size_t i = 0; i < kMetrics.size(); ++i)
    if (static_cast<std::size_t>(kMetrics[i].metric) != i + 1)
      return false;
  return true;
}
static_assert(metrics_complete(), "kMetrics must list every Metric in value order");
static_assert(util::no_enumerator_after<Metric, kMetrics.size()>(),
              "kMetrics lacks a row for an enumerator after its last");
constexpr std::string_view to_string(Metric metric) {
  return kMetrics[static_cast<std::size_t>(metric) - 1].name;
}
constexpr bool is_target(Metric metric) {
  return metric == Metric::target_turn_correctness || metric == Metric::target_best_speedup ||
         metric == Metric::target_fast_p || metric == Metric::target_trajectory_correctness ||
         metric == Metric::target_peak_speedup;
}
constexpr bool is_fast_p(Metric metric) {
  return metric == Metric::fast_p || metric == Metric::target_fast_p;
}

// One metric at one turn limit; `p` only for Fast_p (0 otherwise).
struct MetricKey {
  Metric metric = Metric::turn_correctness;
  int limit = 1;
  double p = 0;
  auto operator<=>(const MetricKey&) const =
      default; // NOLINT(modernize-use-nullptr): tidy 14 misreads a defaulted <=>
};
using MetricValues = std::map<MetricKey, std::optional<double>>;

struct MetricOptions {
  std::vector<int> limits{kDefaultTurnLimits.begin(), kDefaultTurnLimits.end()};
  std::vector<double> fast_p_thresholds{0.0, 0.5, 0.8, 1.0};
};

// Every metric at every limit (and every p) for one cell's trajectories.
MetricValues compute_metrics(std::span<const TrajectoryTurns> trajectories,
                             const MetricOptions& options);

// A metric across prompt variants: mean, min and max over the variants where it is defined.
struct Spread {
  std::optional<double> mean;
  std::optional<double> min;
  std::optional<double> max;
  int defined = 0; // variants with a value
  int variants = 0;
};
Spread spread(std::span<const std::optional<double>> per_variant);

} // namespace ptxbench::report
