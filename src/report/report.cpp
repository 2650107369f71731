#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace ptxbench::report {
namespace {

using CellTurns = std::map<std::string, std::vector<TurnRecord>>;       // by variant
using Cells = std::map<std::pair<std::string, std::string>, CellTurns>; // by model, problem

Cells split_cells(std::span<const TurnRecord> turns) {
  Cells cells;
  for (const TurnRecord& turn : turns)
    cells[{turn.model, turn.problem}][turn.variant].push_back(turn);
  return cells;
}

// Whether `turns` were never measured on a GPU: some counted turn stopped after the static check
// (static_only) and none got a GPU verdict (correct, numerical, runtime, timeout). Compile,
// extraction and banned-library turns are negatives either way and do not decide it.
bool only_static_checks(std::span<const TurnRecord> turns) {
  bool static_only = false;
  for (const TurnRecord& turn : turns) {
    if (turn.counting != store::Counting::counted)
      continue;
    switch (turn.category) {
    case store::TurnCategory::correct:
    case store::TurnCategory::numerical:
    case store::TurnCategory::runtime:
    case store::TurnCategory::timeout:
      return false;
    case store::TurnCategory::static_only:
      static_only = true;
      break;
    default:
      break;
    }
  }
  return static_only;
}

VariantResult variant_result(const std::string& variant, std::span<const TurnRecord> turns,
                             const MetricOptions& options) {
  const std::vector<TrajectoryTurns> trajectories = counted_trajectories(turns);
  VariantResult result;
  result.variant = variant;
  result.trajectories = static_cast<std::int64_t>(trajectories.size());
  for (const int limit : options.limits)
    result.counts[limit] = count_turns(trajectories, limit);
  result.values = compute_metrics(trajectories, options);
  if (only_static_checks(turns))
    for (auto& [key, value] : result.values)
      value.reset();
  return result;
}

std::vector<EndStats> end_stats(std::span<const EndRecord> ends) {
  std::map<std::pair<std::string, std::string>, EndCounts> cells;
  for (const EndRecord& end : ends) {
    EndCounts& counts = cells[{end.model, end.problem}];
    ++counts[end.exit ? static_cast<std::size_t>(*end.exit) - 1 : kEndCount - 1];
  }
  std::vector<EndStats> out;
  for (const auto& [key, counts] : cells)
    out.push_back(EndStats{key.first, key.second, counts});
  return out;
}

void add_counts(TurnCounts& sum, const TurnCounts& part) {
  sum.turns += part.turns;
  sum.correct += part.correct;
  sum.correct_present += part.correct_present;
  sum.correct_not_executed += part.correct_not_executed;
  sum.correct_absent += part.correct_absent;
  sum.correct_unknown += part.correct_unknown;
}

void summarise_group(GroupResult& group) {
  if (group.variants.empty())
    return;
  for (const auto& [key, unused] : group.variants.front().values) {
    std::vector<std::optional<double>> per_variant;
    for (const VariantResult& variant : group.variants)
      per_variant.push_back(variant.values.at(key));
    group.across[key] = spread(per_variant);
  }
  for (const VariantResult& variant : group.variants)
    for (const auto& [limit, counts] : variant.counts)
      add_counts(group.counts[limit], counts);
}

} // namespace

std::vector<CategoryStats> category_stats(std::span<const TurnRecord> turns) {
  std::map<std::string, std::vector<TurnRecord>> by_model;
  for (const TurnRecord& turn : turns)
    by_model[turn.model].push_back(turn);
  std::vector<CategoryStats> out;
  for (const auto& [model, list] : by_model) {
    CategoryStats stats;
    stats.model = model;
    stats.not_counted_turns = std::count_if(list.begin(), list.end(), [](const TurnRecord& t) {
      return t.counting != store::Counting::counted;
    });
    for (const TrajectoryTurns& trajectory : counted_trajectories(list)) {
      for (std::size_t i = 0; i < trajectory.turns.size(); ++i) {
        const store::TurnCategory category = trajectory.turns[i]->category;
        CategoryCounts& row = stats.by_turn[static_cast<int>(i) + 1];
        ++row[static_cast<std::size_t>(category) - 1];
        stats.reasoning_by_turn[static_cast<int>(i) + 1].push_back(
            trajectory.turns[i]->reasoning_tokens);
        if (i > 0)
          ++stats.transitions[{trajectory.turns[i - 1]->category, category}];
      }
    }
    for (auto& [turn, tokens] : stats.reasoning_by_turn)
      std::ranges::sort(tokens);
    out.push_back(std::move(stats));
  }
  return out;
}

std::optional<Quartiles> quartiles(std::span<const std::int64_t> sorted) {
  if (sorted.empty())
    return std::nullopt;
  const auto rank = [&](double share) {
    const auto n = static_cast<double>(sorted.size());
    const auto index = static_cast<std::size_t>(std::max(1.0, std::ceil(share * n))) - 1;
    return sorted[std::min(index, sorted.size() - 1)];
  };
  return Quartiles{rank(0.25), rank(0.5), rank(0.75), sorted.back()};
}

Report build_report(const RunModel& run, const MetricOptions& options) {
  Report report;
  report.sources = run.sources;
  report.options = options;
  report.trajectories = run.n_trajectories;
  report.turns = run.turns;
  std::sort(report.turns.begin(), report.turns.end(), [](const TurnRecord& a, const TurnRecord& b) {
    return std::tie(a.trajectory, a.turn_index) < std::tie(b.trajectory, b.turn_index);
  });
  report.finished_turns = static_cast<std::int64_t>(run.turns.size());
  for (const auto& [key, variants] : split_cells(run.turns)) {
    GroupResult group{key.first, key.second, {}, {}, {}};
    for (const auto& [variant, turns] : variants)
      group.variants.push_back(variant_result(variant, turns, options));
    summarise_group(group);
    report.groups.push_back(std::move(group));
  }
  report.categories = category_stats(run.turns);
  for (const CategoryStats& stats : report.categories)
    report.not_counted_turns += stats.not_counted_turns;
  report.usage = usage_stats(run.calls, run.spend);
  report.ends = end_stats(run.ends);
  report.static_only = only_static_checks(run.turns);
  report.conditions = std::ranges::any_of(
      run.turns, [](const TurnRecord& turn) { return !turn.condition.empty(); });
  return report;
}

std::string_view end_name(std::size_t i) {
  return i < store::kExitReasons.size() ? store::kExitReasons[i].name : "unfinished";
}

} // namespace ptxbench::report
