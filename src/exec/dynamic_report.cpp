#include "exec/dynamic_report.hpp"

#include "measure/instruction_counter.hpp"
#include "util/json_number.hpp"
#include "util/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace ptxbench::exec {
namespace {

using Json = trace::Json;

// Metric name → value summed over the candidate's own ranges; a metric whose value was not a
// finite number in some own range is absent from `sums` and named in `broken`.
struct OwnSums {
  std::map<std::string, double> sums;
  std::map<std::string, std::string> broken; // metric → why
  std::vector<std::string> accepted;         // metrics the counter measured (the totals' keys)
  int foreign_ranges = 0;
  std::string unattributed; // why no range could be matched to a kernel, or empty
};

void add_value(OwnSums& out, const std::string& metric, const Json& value,
               const std::string& where) {
  if (out.broken.contains(metric))
    return;
  const auto number = util::number_from_json(value, util::NonFiniteSpelling::exact);
  if (!number || !std::isfinite(*number)) {
    out.broken[metric] = fmt::format("{} is {} for {}", metric, value.dump(), where);
    out.sums.erase(metric);
    return;
  }
  out.sums[metric] += *number;
}

// From the per-range values when the counts carry them, else from the totals. Ranges are
// matched to kernels by launch order (launch_rules.hpp range_kernel).
OwnSums own_sums(const Counts& counts, const sass::ArchReport* arch,
                 const std::vector<std::string>& launches) {
  OwnSums out;
  if (counts.metrics)
    for (const auto& [metric, value] : counts.metrics->items())
      out.accepted.push_back(metric);
  if (!counts.ranges) {
    if (counts.metrics)
      for (const auto& [metric, value] : counts.metrics->items())
        add_value(out, metric, value, "the call");
    return out;
  }
  const std::vector<CountedRange>& ranges = *counts.ranges;
  if (ranges.size() != launches.size()) {
    out.unattributed = fmt::format("the counting pass launched {} kernel(s), the correctness calls "
                                   "{}: its counts cannot be matched to kernels",
                                   ranges.size(), launches.size());
    return out;
  }
  for (std::size_t index = 0; index < ranges.size(); ++index) {
    const std::string kernel = range_kernel(ranges[index].kernel, index, launches);
    if (!own_kernel(kernel, arch)) {
      ++out.foreign_ranges;
      continue;
    }
    if (ranges[index].metrics)
      for (const auto& [metric, value] : ranges[index].metrics->items())
        add_value(out, metric, value, "kernel " + kernel);
  }
  return out;
}

std::optional<std::vector<CountedRange>> read_ranges(util::JsonReader& in, const Json& raw) {
  const Json* list = in.optional_array(raw, "$", "ranges");
  if (!list)
    return std::nullopt;
  std::vector<CountedRange> ranges;
  for (std::size_t i = 0; in.ok() && i < list->size(); ++i) {
    const std::string path = util::index_path("$.ranges", i);
    if (in.expect_object((*list)[i], path))
      ranges.push_back(
          {in.optional_string((*list)[i], path, "kernel", util::Emptiness::allowed).value_or(""),
           in.optional_object((*list)[i], path, "metrics")});
  }
  return ranges;
}

// The counts of `dyn`, or none with the reason why they do not read.
Counts counts_of(const DynamicReport& dyn) {
  if (!dyn.raw)
    return {};
  auto counts = read_counts(*dyn.raw);
  if (counts)
    return std::move(*counts);
  Counts none;
  none.reason = counts.error().message;
  return none;
}

// The executed count of `family`, or why it is unknown.
std::optional<double> executed_of(sass::Family family, const OwnSums& own, std::string& why) {
  if (!own.unattributed.empty()) {
    why = own.unattributed;
    return std::nullopt;
  }
  std::vector<const char*> metrics;
  if (family == sass::Family::gmma)
    metrics = {measure::kMetricGmma};
  else if (family == sass::Family::tma)
    metrics = {measure::kMetricTmaLoad, measure::kMetricTmaStore, measure::kMetricTmaReduce};
  else {
    why = "no counter for this family";
    return std::nullopt;
  }
  auto measured = [&](const char* metric) {
    return std::find(own.accepted.begin(), own.accepted.end(), metric) != own.accepted.end();
  };
  if (std::none_of(metrics.begin(), metrics.end(), measured)) {
    why = fmt::format("the counter did not measure {}", metrics.front());
    return std::nullopt;
  }
  double total = 0.0;
  for (const char* metric : metrics) {
    if (auto broken = own.broken.find(metric); broken != own.broken.end()) {
      why = "the range profiler's value " + broken->second +
            " (its passes disagree: the repeated call launched other work)";
      return std::nullopt;
    }
    if (auto sum = own.sums.find(metric); sum != own.sums.end())
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

util::Expected<Counts> read_counts(const Json& raw) {
  util::JsonReader in("instruction counts", util::ErrorKind::bad_response);
  Counts counts;
  if (!in.expect_object(raw, "$"))
    return in.finish(std::move(counts));
  counts.available = in.optional_boolean(raw, "$", "available").value_or(false);
  counts.reason =
      in.optional_string(raw, "$", "reason", util::Emptiness::allowed).value_or(counts.reason);
  if (const Json* kernels = in.optional_array(raw, "$", "kernels"))
    counts.kernels = in.strings_at(*kernels, "$.kernels", util::Emptiness::allowed);
  counts.metrics = in.optional_object(raw, "$", "metrics");
  counts.ranges = read_ranges(in, raw);
  return in.finish(std::move(counts));
}

void derive_dynamic(Evaluation& ev, const suite::Problem& problem) {
  if (!ev.dynamic || !ev.check.sass)
    return;
  DynamicReport& dyn = *ev.dynamic;
  const sass::ArchReport* arch = sass::find_arch(*ev.check.sass, compile::to_string(ev.check.arch));
  const Counts counts = counts_of(dyn);
  const bool counted = counts.available;
  if (!counted && dyn.reason.empty())
    dyn.reason = counts.reason;
  const OwnSums own = counted ? own_sums(counts, arch, reference_launches(ev.launches)) : OwnSums{};
  dyn.foreign_ranges = own.foreign_ranges;
  for (sass::Family family : sass::target_families_for(compile::to_string(ev.check.arch))) {
    FamilyDynamic f{family, arch ? arch->totals[sass::index_of(family)] : 0, 0.0,
                    DynamicState::unknown};
    std::string why;
    if (const auto executed = counted ? executed_of(family, own, why) : std::nullopt) {
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
  if (!own.unattributed.empty()) {
    dyn.coverage_unknown = own.unattributed;
  } else if (auto flops = own.sums.find(measure::kMetricHgmmaBf16Flops); flops != own.sums.end()) {
    dyn.tensor_flops = flops->second;
    dyn.coverage = problem.flops > 0 ? dyn.tensor_flops / static_cast<double>(problem.flops) : 0.0;
  } else if (auto broken = own.broken.find(measure::kMetricHgmmaBf16Flops);
             broken != own.broken.end()) {
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
