#include "protocol/counts.hpp"

#include "util/json_number.hpp"
#include "util/json_reader.hpp"

#include <algorithm>
#include <cmath>

namespace ptxbench::protocol {
namespace {

using Json = trace::Json;
using util::Emptiness;
using util::JsonReader;

constexpr auto kExactSpelling = util::NonFiniteSpelling::exact;

bool same_value(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_value(a[i], b[i]))
      return false;
  return true;
}

Json values_json(const std::vector<std::string>& metrics, const std::vector<double>& values) {
  Json out = Json::object();
  for (std::size_t m = 0; m < metrics.size() && m < values.size(); ++m)
    out[metrics[m]] = util::number_json(values[m]);
  return out;
}

// The values of `object` for `metrics`, in that order; every metric must be there.
std::vector<double> read_values(JsonReader& in, const Json& object, const std::string& path,
                                const std::vector<std::string>& metrics) {
  std::vector<double> values;
  for (const std::string& metric : metrics) {
    const Json* value = in.required(object, path, metric);
    if (!value)
      return values;
    values.push_back(
        in.number_or_nonfinite_at(*value, util::key_path(path, metric), kExactSpelling));
  }
  return values;
}

void read_ranges(JsonReader& in, const Json& j, Counts& c) {
  const Json* list = in.optional_array(j, "$", "ranges");
  if (!list)
    return;
  for (std::size_t i = 0; in.ok() && i < list->size(); ++i) {
    const std::string path = util::index_path("$.ranges", i);
    const Json& range = (*list)[i];
    if (!in.expect_object(range, path))
      return;
    CountedRange out;
    out.kernel = in.optional_string(range, path, "kernel", Emptiness::allowed).value_or("");
    if (const Json* metrics = in.object_member(range, path, "metrics"))
      out.values = read_values(in, *metrics, util::key_path(path, "metrics"), c.metrics);
    c.ranges.push_back(std::move(out));
  }
}

void read_steps(JsonReader& in, const Json& j, Counts& c) {
  const Json* steps = in.optional_object(j, "$", "steps");
  if (!steps)
    return;
  for (const auto& [name, value] : steps->items())
    c.steps.emplace_back(name, in.number_at(value, util::key_path("$.steps", name)));
}

void read_counts(JsonReader& in, const Json& j, Counts& c) {
  if (!in.expect_object(j, "$"))
    return;
  c.available = in.optional_boolean(j, "$", "available").value_or(false);
  c.reason = in.optional_string(j, "$", "reason", Emptiness::allowed).value_or("");
  c.arch = in.optional_string(j, "$", "arch", Emptiness::allowed).value_or("");
  c.chip = in.optional_string(j, "$", "chip", Emptiness::allowed).value_or("");
  if (const Json* totals = in.optional_object(j, "$", "metrics")) {
    for (const auto& [name, value] : totals->items())
      c.metrics.push_back(name);
    c.totals = read_values(in, *totals, "$.metrics", c.metrics);
  }
  read_ranges(in, j, c);
  if (JsonReader::optional(j, "rejected_metrics"))
    c.rejected_metrics = in.strings(j, "$", "rejected_metrics", Emptiness::rejected);
  c.passes = in.optional_unsigned(j, "$", "passes").value_or(0);
  if (const Json* ms = JsonReader::optional(j, "pass_ms"))
    c.pass_ms = in.number_or_nonfinite_at(*ms, "$.pass_ms", kExactSpelling);
  c.replay = in.optional_string(j, "$", "replay", Emptiness::allowed).value_or("");
  c.calls = in.optional_unsigned(j, "$", "calls").value_or(0);
  c.session = in.optional_string(j, "$", "session", Emptiness::allowed).value_or("");
  read_steps(in, j, c);
}

} // namespace

Counts Counts::unavailable(std::string reason) {
  Counts c;
  c.reason = std::move(reason);
  return c;
}

std::optional<std::size_t> Counts::index_of(std::string_view metric) const {
  for (std::size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i] == metric)
      return i;
  return std::nullopt;
}

std::optional<double> Counts::total(std::string_view metric) const {
  const auto index = index_of(metric);
  if (!index || *index >= totals.size())
    return std::nullopt;
  return totals[*index];
}

std::vector<std::string> Counts::kernels() const {
  std::vector<std::string> out;
  for (const CountedRange& range : ranges)
    out.push_back(range.kernel);
  return out;
}

bool Counts::operator==(const Counts& o) const {
  auto same_ranges = [&] {
    if (ranges.size() != o.ranges.size())
      return false;
    for (std::size_t r = 0; r < ranges.size(); ++r)
      if (ranges[r].kernel != o.ranges[r].kernel ||
          !same_values(ranges[r].values, o.ranges[r].values))
        return false;
    return true;
  };
  return available == o.available && reason == o.reason && arch == o.arch && chip == o.chip &&
         metrics == o.metrics && same_values(totals, o.totals) && same_ranges() &&
         rejected_metrics == o.rejected_metrics && passes == o.passes &&
         same_value(pass_ms, o.pass_ms) && replay == o.replay && calls == o.calls &&
         session == o.session && steps == o.steps;
}

Counts counts_of(const measure::InstructionCounts& counts, std::string chip,
                 std::vector<std::string> rejected_metrics, std::string session) {
  Counts c;
  c.available = true;
  c.arch = counts.arch;
  c.chip = std::move(chip);
  for (const measure::MetricValue& m : counts.metrics) {
    c.metrics.push_back(m.name);
    c.totals.push_back(m.value);
  }
  for (std::size_t r = 0; r < counts.kernels.size() && r < counts.range_values.size(); ++r)
    c.ranges.push_back({counts.kernels[r], counts.range_values[r]});
  c.rejected_metrics = std::move(rejected_metrics);
  c.passes = counts.passes;
  c.pass_ms = counts.pass_ms;
  c.replay = std::string(to_string(counts.replay));
  c.calls = counts.calls;
  c.session = std::move(session);
  for (const util::Phase& step : counts.steps) {
    const double ms = static_cast<double>(step.elapsed.count()) / 1000.0;
    auto same = std::find_if(c.steps.begin(), c.steps.end(),
                             [&](const auto& s) { return s.first == step.name; });
    if (same == c.steps.end())
      c.steps.emplace_back(step.name, ms);
    else
      same->second += ms;
  }
  return c;
}

Json to_json(const Counts& c) {
  Json j{{"available", c.available}};
  if (!c.available || !c.reason.empty())
    j["reason"] = c.reason;
  if (!c.available)
    return j;
  j["arch"] = c.arch;
  j["chip"] = c.chip;
  j["metrics"] = values_json(c.metrics, c.totals);
  Json ranges = Json::array();
  for (const CountedRange& range : c.ranges)
    ranges.push_back({{"kernel", range.kernel}, {"metrics", values_json(c.metrics, range.values)}});
  j["ranges"] = std::move(ranges);
  j["kernels"] = c.kernels();
  j["rejected_metrics"] = c.rejected_metrics;
  j["passes"] = c.passes;
  j["pass_ms"] = util::number_json(c.pass_ms);
  j["replay"] = c.replay;
  j["calls"] = c.calls;
  j["session"] = c.session;
  Json steps = Json::object();
  for (const auto& [name, ms] : c.steps)
    steps[name] = util::number_json(ms);
  j["steps"] = std::move(steps);
  return j;
}

util::Expected<Counts> counts_from_json(const Json& json) {
  JsonReader in("instruction counts", util::ErrorKind::bad_response);
  Counts counts;
  read_counts(in, json, counts);
  return in.finish(std::move(counts));
}

} // namespace ptxbench::protocol
