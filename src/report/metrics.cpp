// Metrics of a run, as defined in the paper's §4.1 and docs/metrics.md.
//
// Problem: a run is a set of trajectories per model × problem × prompt variant (a "cell"),
// each a sequence of turns with a category (correct, compile error, …), a speedup over the
// library baseline when it was timed, and a target-instruction state (did the kernel execute
// a selected architecture instruction at runtime). The paper summarises a cell at turn limits
// L ∈ {1, 4, 8} and then over the prompt variants (mean, with min–max shading). Some turns did
// not use budget (infra failures on our side) and some correct turns have no verified
// target-instruction state; neither may change a model's score in its favour.
//
// Approach: per trajectory keep the counted turns in order; counted turn k (1-based) is
// "within L" when k ≤ L. For the N counted turns within L of a cell, with C_i = 1 for a correct
// turn, I_i = 1 for target state `present` and s_i its speedup (s_i undefined when not timed):
//   turn correctness rate          = Σ C_i / N
//   target-inst. correctness rate  = Σ [C_i ∧ I_i] / N
//   Fast_p                         = Σ [C_i ∧ s_i > p] / N
//   Fast_p^Inst                    = Σ [C_i ∧ I_i ∧ s_i > p] / N
//   best speedup                   = mean over trajectories t with a correct timed turn within
//                                    L of max{s_i : i ∈ t, C_i}
//   target-inst. best speedup      = the same with C_i ∧ I_i
// The original PTXBench code reported two other quantities, kept here with their own names:
//   trajectory-level correctness   = fraction of trajectories with ≥ 1 correct turn within L
//                                    (and its target-instruction form, with C_i ∧ I_i)
//   run-level peak speedup         = max over trajectories of the best speedup
// A rate is undefined when N = 0; a speedup is undefined when no trajectory qualifies.
//
// Invariants: infra (not counted) turns are in no numerator or denominator and do not shift
// the turn ordinals; a correct turn whose target state is `unknown` (or `absent`,
// `not_executed`) is in N but never in a target-instruction numerator — unknowns are counted
// separately by count_turns; across variants, mean/min/max are taken over the variants where
// the value is defined, and `defined` says how many that was.
#include "report/metrics.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace ptxbench::report {
namespace {

using store::TurnCategory;

bool qualifies(const TurnRecord& turn, Restriction restriction) {
  if (turn.category != TurnCategory::correct)
    return false;
  return restriction == Restriction::any_correct || turn.target == TargetState::present;
}

// The first `limit` counted turns of a trajectory.
std::span<const TurnRecord* const> within(const TrajectoryTurns& trajectory, int limit) {
  const std::size_t n = std::min(trajectory.turns.size(), static_cast<std::size_t>(limit));
  return std::span<const TurnRecord* const>(trajectory.turns.data(), n);
}

template <typename Predicate>
std::optional<double> turn_fraction(std::span<const TrajectoryTurns> trajectories, int limit,
                                    Predicate predicate) {
  std::int64_t total = 0;
  std::int64_t hits = 0;
  for (const TrajectoryTurns& trajectory : trajectories) {
    for (const TurnRecord* turn : within(trajectory, limit)) {
      ++total;
      if (predicate(*turn))
        ++hits;
    }
  }
  if (total == 0)
    return std::nullopt;
  return static_cast<double>(hits) / static_cast<double>(total);
}

// max{s_i} over the trajectory's qualifying timed turns within the limit.
std::optional<double> trajectory_best(const TrajectoryTurns& trajectory, int limit,
                                      Restriction restriction) {
  std::optional<double> best;
  for (const TurnRecord* turn : within(trajectory, limit)) {
    if (!qualifies(*turn, restriction) || !turn->speedup)
      continue;
    best = best ? std::max(*best, *turn->speedup) : *turn->speedup;
  }
  return best;
}

std::vector<double> trajectory_bests(std::span<const TrajectoryTurns> trajectories, int limit,
                                     Restriction restriction) {
  std::vector<double> bests;
  for (const TrajectoryTurns& trajectory : trajectories)
    if (auto best = trajectory_best(trajectory, limit, restriction))
      bests.push_back(*best);
  return bests;
}

void count_correct(const TurnRecord& turn, TurnCounts& counts) {
  ++counts.correct;
  switch (turn.target) {
  case TargetState::present:
    ++counts.correct_present;
    break;
  case TargetState::not_executed:
    ++counts.correct_not_executed;
    break;
  case TargetState::absent:
    ++counts.correct_absent;
    break;
  case TargetState::unknown:
    ++counts.correct_unknown;
    break;
  }
}

std::optional<double> metric_value(std::span<const TrajectoryTurns> trajectories,
                                   const MetricKey& key) {
  const Restriction r =
      is_target(key.metric) ? Restriction::target_instruction : Restriction::any_correct;
  switch (key.metric) {
  case Metric::turn_correctness:
  case Metric::target_turn_correctness:
    return turn_correctness_rate(trajectories, key.limit, r);
  case Metric::best_speedup:
  case Metric::target_best_speedup:
    return best_speedup(trajectories, key.limit, r);
  case Metric::fast_p:
  case Metric::target_fast_p:
    return fast_p(trajectories, key.limit, key.p, r);
  case Metric::trajectory_correctness:
  case Metric::target_trajectory_correctness:
    return trajectory_correctness_rate(trajectories, key.limit, r);
  case Metric::peak_speedup:
  case Metric::target_peak_speedup:
    return peak_speedup(trajectories, key.limit, r);
  }
  return std::nullopt;
}

} // namespace

std::vector<TrajectoryTurns> counted_trajectories(std::span<const TurnRecord> turns) {
  std::map<std::int64_t, std::vector<const TurnRecord*>> by_trajectory;
  for (const TurnRecord& turn : turns)
    if (turn.counting == store::Counting::counted)
      by_trajectory[turn.trajectory].push_back(&turn);
  std::vector<TrajectoryTurns> out;
  for (auto& [id, list] : by_trajectory) {
    std::sort(list.begin(), list.end(), [](const TurnRecord* a, const TurnRecord* b) {
      return a->turn_index < b->turn_index;
    });
    out.push_back(TrajectoryTurns{id, std::move(list)});
  }
  return out;
}

TurnCounts count_turns(std::span<const TrajectoryTurns> trajectories, int limit) {
  TurnCounts counts;
  for (const TrajectoryTurns& trajectory : trajectories) {
    for (const TurnRecord* turn : within(trajectory, limit)) {
      ++counts.turns;
      if (turn->category == TurnCategory::correct)
        count_correct(*turn, counts);
    }
  }
  return counts;
}

std::optional<double> turn_correctness_rate(std::span<const TrajectoryTurns> trajectories,
                                            int limit, Restriction restriction) {
  return turn_fraction(trajectories, limit,
                       [&](const TurnRecord& turn) { return qualifies(turn, restriction); });
}

std::optional<double> fast_p(std::span<const TrajectoryTurns> trajectories, int limit, double p,
                             Restriction restriction) {
  return turn_fraction(trajectories, limit, [&](const TurnRecord& turn) {
    return qualifies(turn, restriction) && turn.speedup && *turn.speedup > p;
  });
}

std::vector<double> qualifying_speedups(std::span<const TrajectoryTurns> trajectories, int limit,
                                        Restriction restriction) {
  std::vector<double> speedups;
  for (const TrajectoryTurns& trajectory : trajectories)
    for (const TurnRecord* turn : within(trajectory, limit))
      if (qualifies(*turn, restriction) && turn->speedup)
        speedups.push_back(*turn->speedup);
  return speedups;
}

std::optional<double> best_speedup(std::span<const TrajectoryTurns> trajectories, int limit,
                                   Restriction restriction) {
  const std::vector<double> bests = trajectory_bests(trajectories, limit, restriction);
  if (bests.empty())
    return std::nullopt;
  return std::accumulate(bests.begin(), bests.end(), 0.0) / static_cast<double>(bests.size());
}

std::optional<double> peak_speedup(std::span<const TrajectoryTurns> trajectories, int limit,
                                   Restriction restriction) {
  const std::vector<double> bests = trajectory_bests(trajectories, limit, restriction);
  if (bests.empty())
    return std::nullopt;
  return *std::max_element(bests.begin(), bests.end());
}

std::optional<double> trajectory_correctness_rate(std::span<const TrajectoryTurns> trajectories,
                                                  int limit, Restriction restriction) {
  std::int64_t total = 0;
  std::int64_t hits = 0;
  for (const TrajectoryTurns& trajectory : trajectories) {
    const auto turns = within(trajectory, limit);
    if (turns.empty())
      continue;
    ++total;
    if (std::any_of(turns.begin(), turns.end(),
                    [&](const TurnRecord* turn) { return qualifies(*turn, restriction); }))
      ++hits;
  }
  if (total == 0)
    return std::nullopt;
  return static_cast<double>(hits) / static_cast<double>(total);
}

MetricValues compute_metrics(std::span<const TrajectoryTurns> trajectories,
                             const MetricOptions& options) {
  MetricValues values;
  for (const int limit : options.limits) {
    for (const MetricInfo& info : kMetrics) {
      if (!is_fast_p(info.metric)) {
        const MetricKey key{info.metric, limit, 0};
        values[key] = metric_value(trajectories, key);
        continue;
      }
      for (const double p : options.fast_p_thresholds) {
        const MetricKey key{info.metric, limit, p};
        values[key] = metric_value(trajectories, key);
      }
    }
  }
  return values;
}

Spread spread(std::span<const std::optional<double>> per_variant) {
  Spread out;
  out.variants = static_cast<int>(per_variant.size());
  double sum = 0;
  for (const std::optional<double>& value : per_variant) {
    if (!value)
      continue;
    ++out.defined;
    sum += *value;
    out.min = out.min ? std::min(*out.min, *value) : *value;
    out.max = out.max ? std::max(*out.max, *value) : *value;
  }
  if (out.defined > 0)
    out.mean = sum / out.defined;
  return out;
}

} // namespace ptxbench::report
