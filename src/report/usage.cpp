// Reasoning-token statistics and spending per model × GPU.
//
// Problem: a model call is stored once per HTTP attempt, and a turn cut off by a crash is
// abandoned but keeps its calls (the money was spent). "Reasoning tokens per call" must describe
// what the model produced when it answered, while "cost" must count everything that was paid.
//
// Approach: per-call statistics (mean, median, max of reasoning_tokens) are taken over the
// attempts that got a reply on finished turns; failed attempts are counted beside them, not
// averaged in as zeros. Spending (attempts, tokens, USD) is the store's own per-trajectory total
// over every attempt, abandoned turns included, summed per model × GPU.
//
// Invariants: a model × GPU row exists when it has a trajectory; its statistics are undefined
// (not zero) when it has no replied call.
#include "report/usage.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace ptxbench::report {
namespace {

using Key = std::pair<std::string, std::string>; // model, gpu

void add(store::UsageTotals& sum, const store::UsageTotals& part) {
  sum.calls += part.calls;
  sum.input_tokens += part.input_tokens;
  sum.output_tokens += part.output_tokens;
  sum.reasoning_tokens += part.reasoning_tokens;
  sum.cost_usd += part.cost_usd;
  sum.calls_in_flight += part.calls_in_flight;
}

void summarise(UsageStats& stats, std::vector<std::int64_t> reasoning) {
  if (reasoning.empty())
    return;
  const auto total = std::accumulate(reasoning.begin(), reasoning.end(), std::int64_t{0});
  stats.reasoning_mean = static_cast<double>(total) / static_cast<double>(reasoning.size());
  stats.reasoning_max = *std::max_element(reasoning.begin(), reasoning.end());
  stats.reasoning_median = median(std::move(reasoning));
}

} // namespace

std::optional<double> median(std::vector<std::int64_t> values) {
  if (values.empty())
    return std::nullopt;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const auto upper = static_cast<double>(values[mid]);
  if (values.size() % 2 == 1)
    return upper;
  const auto lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (static_cast<double>(lower) + upper) / 2.0;
}

std::vector<UsageStats> usage_stats(std::span<const CallRecord> calls,
                                    std::span<const SpendRecord> spend) {
  std::map<Key, UsageStats> rows;
  std::map<Key, std::vector<std::int64_t>> reasoning;
  for (const SpendRecord& record : spend) {
    UsageStats& row = rows[{record.model, record.gpu}];
    row.model = record.model;
    row.gpu = record.gpu;
    add(row.spent, record.totals);
  }
  for (const CallRecord& call : calls) {
    UsageStats& row = rows[{call.model, call.gpu}];
    row.model = call.model;
    row.gpu = call.gpu;
    if (call.outcome == CallOutcome::failed) {
      ++row.failed_calls;
      continue;
    }
    ++row.replied_calls;
    reasoning[{call.model, call.gpu}].push_back(call.reasoning_tokens);
  }
  std::vector<UsageStats> out;
  for (auto& [key, row] : rows) {
    summarise(row, std::move(reasoning[key]));
    out.push_back(std::move(row));
  }
  return out;
}

} // namespace ptxbench::report
