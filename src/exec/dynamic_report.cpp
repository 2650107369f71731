#include "exec/dynamic_report.hpp"

#include "sass/counters.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace ptxbench::exec {
namespace {

// Metric name → value summed over the candidate's own ranges; a metric whose value was not a
// finite number in some own range is absent from `sums` and named in `broken`.
struct OwnSums {
  std::map<std::string, double> sums;
  std::map<std::string, std::string> broken; // metric → why
  std::vector<std::string> accepted;         // metrics the counter measured (the totals' keys)
  int foreign_ranges = 0;
  std::string unattributed; // why no range could be matched to a kernel, or empty
};

void add_value(OwnSums& out, const std::string& metric, double value, const std::string& where) {
  if (out.broken.contains(metric))
    return;
  if (!std::isfinite(value)) {
    out.broken[metric] = fmt::format("{} is {} for {}", metric, value, where);
    out.sums.erase(metric);
    return;
  }
  out.sums[metric] += value;
}

// From the per-range values when the counts carry them, else from the totals. Ranges are
// matched to kernels by launch order (launch_rules.hpp range_kernel).
OwnSums own_sums(const protocol::Counts& counts, const sass::ArchReport* arch,
                 const std::vector<std::string>& launches) {
  OwnSums out;
  out.accepted = counts.metrics;
  if (counts.ranges.empty()) {
    for (std::size_t m = 0; m < counts.metrics.size() && m < counts.totals.size(); ++m)
      add_value(out, counts.metrics[m], counts.totals[m], "the call");
    return out;
  }
  if (counts.ranges.size() != launches.size()) {
    out.unattributed = fmt::format("the counting pass launched {} kernel(s), the correctness calls "
                                   "{}: its counts cannot be matched to kernels",
                                   counts.ranges.size(), launches.size());
    return out;
  }
  for (std::size_t index = 0; index < counts.ranges.size(); ++index) {
    const protocol::CountedRange& range = counts.ranges[index];
    const std::string kernel = range_kernel(range.kernel, index, launches);
    if (!own_kernel(kernel, arch)) {
      ++out.foreign_ranges;
      continue;
    }
    for (std::size_t m = 0; m < counts.metrics.size() && m < range.values.size(); ++m)
      add_value(out, counts.metrics[m], range.values[m], "kernel " + kernel);
  }
  return out;
}

// The counts of `dyn`, or none with the reason why they do not read.
protocol::Counts counts_of(const DynamicReport& dyn) {
  if (!dyn.raw)
    return protocol::Counts::unavailable("no counts");
  auto counts = read_counts(*dyn.raw);
  if (counts)
    return std::move(*counts);
  return protocol::Counts::unavailable(counts.error().message);
}

// The executed count of `family`: the sum of the metrics of its rows in the counter table.
std::optional<double> executed_of(sass::Family family, const sass::ArchCounters* table,
                                  const OwnSums& own, std::string& why) {
  if (!own.unattributed.empty()) {
    why = own.unattributed;
    return std::nullopt;
  }
  std::vector<std::string_view> metrics;
  if (table != nullptr)
    for (const sass::CounterRow& row : table->rows)
      if (row.family == family)
        metrics.push_back(row.metric);
  if (metrics.empty()) {
    why = fmt::format("no counter for {} in the counter table", sass::to_string(family));
    return std::nullopt;
  }
  auto measured = [&](std::string_view metric) {
    return std::find(own.accepted.begin(), own.accepted.end(), metric) != own.accepted.end();
  };
  if (std::none_of(metrics.begin(), metrics.end(), measured)) {
    why = fmt::format("the counter did not measure {}", metrics.front());
    return std::nullopt;
  }
  double total = 0.0;
  for (std::string_view metric : metrics) {
    const std::string name(metric);
    if (auto broken = own.broken.find(name); broken != own.broken.end()) {
      why = "the range profiler's value " + broken->second +
            " (its passes disagree: the repeated call launched other work)";
      return std::nullopt;
    }
    if (auto sum = own.sums.find(name); sum != own.sums.end())
      total += sum->second;
  }
  return total;
}

DynamicState state_of(std::size_t static_count, double executed) {
  if (executed > 0)
    return DynamicState::present;
  return static_count == 0 ? DynamicState::absent : DynamicState::not_executed;
}

DynamicState overall(const std::vector<FamilyDynamic>& families) {
  auto any = [&](DynamicState state) {
    return std::any_of(families.begin(), families.end(),
                       [&](const FamilyDynamic& f) { return f.state == state; });
  };
  if (any(DynamicState::present))
    return DynamicState::present;
  if (any(DynamicState::unknown))
    return DynamicState::unknown;
  const bool all_absent = std::all_of(families.begin(), families.end(), [](const FamilyDynamic& f) {
    return f.state == DynamicState::absent;
  });
  return all_absent ? DynamicState::absent : DynamicState::not_executed;
}

} // namespace

util::Expected<protocol::Counts> read_counts(const trace::Json& raw) {
  return protocol::counts_from_json(raw);
}

void derive_dynamic(Evaluation& ev, const suite::Problem& problem) {
  if (!ev.dynamic || !ev.check.sass)
    return;
  DynamicReport& dyn = *ev.dynamic;
  const std::string_view arch_name = compile::to_string(ev.check.arch);
  const sass::ArchReport* arch = sass::find_arch(*ev.check.sass, arch_name);
  const sass::ArchCounters* table = sass::counters_for(arch_name);
  const protocol::Counts counts = counts_of(dyn);
  const bool counted = counts.available;
  if (!counted && dyn.reason.empty())
    dyn.reason = counts.reason;
  const OwnSums own = counted ? own_sums(counts, arch, reference_launches(ev.launches)) : OwnSums{};
  dyn.foreign_ranges = own.foreign_ranges;
  for (sass::Family family : sass::target_families_for(arch_name)) {
    FamilyDynamic f{family, arch ? arch->totals[sass::index_of(family)] : 0, 0.0,
                    DynamicState::unknown};
    std::string why;
    if (const auto executed = counted ? executed_of(family, table, own, why) : std::nullopt) {
      f.executed = *executed;
      f.state = state_of(f.static_count, *executed);
    } else if (counted && dyn.reason.empty()) {
      dyn.reason = why;
    }
    dyn.families.push_back(f);
  }
  dyn.verdict = overall(dyn.families);
  if (!counted)
    return;
  const std::string flops_metric = table ? std::string(table->flop_metric) : std::string();
  if (!own.unattributed.empty()) {
    dyn.coverage_unknown = own.unattributed;
  } else if (table == nullptr) {
    dyn.coverage_unknown = fmt::format("no counter table for {}", arch_name);
  } else if (auto flops = own.sums.find(flops_metric); flops != own.sums.end()) {
    dyn.tensor_flops = flops->second;
    dyn.coverage = problem.flops > 0 ? dyn.tensor_flops / static_cast<double>(problem.flops) : 0.0;
  } else if (auto broken = own.broken.find(flops_metric); broken != own.broken.end()) {
    dyn.coverage_unknown = broken->second;
  }
}

void mark_undefined_behaviour(Evaluation& ev) {
  if (!ev.dynamic)
    return;
  const bool memchecked = ev.sanitizer && ev.sanitizer->ran;
  if (memchecked && ev.sanitizer->report.stream_ordered_races > 0) {
    ev.dynamic->verdict = DynamicState::unknown;
    ev.dynamic->reason = "undefined behaviour (" + ev.sanitizer->finding +
                         "): the executed counts of a call with a stream-ordered race are not "
                         "classified";
  } else if (!memchecked && ev.launches.stream_ordered_frees > 0) {
    ev.dynamic->verdict = DynamicState::unknown;
    ev.dynamic->reason = fmt::format(
        "the candidate freed stream-ordered memory ({} cudaFreeAsync) and no memcheck pass ran: "
        "a kernel reading a temporary after its free is undefined behaviour whose executed "
        "counts are not classified, and only memcheck can rule it out (`ptxbench run` runs it "
        "by default, `eval --sanitize` on request)",
        ev.launches.stream_ordered_frees);
  }
}

} // namespace ptxbench::exec
