#include "report/text.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <set>

namespace ptxbench::report {

std::string show(std::optional<double> value, Unit unit) {
  if (!value)
    return std::string(kUndefined);
  if (unit == Unit::percent)
    return fmt::format("{:.1f}", *value * 100.0);
  return fmt::format("{:.3f}", *value);
}

std::string show(const Spread& spread, Unit unit, Statistic statistic) {
  if (statistic == Statistic::mean)
    return show(spread.mean, unit);
  if (!spread.min)
    return std::string(kUndefined);
  return show(spread.min, unit) + "–" + show(spread.max, unit);
}

std::string triplet(const Report& report, const GroupResult& group, Metric metric, double p,
                    Unit unit, Statistic statistic) {
  std::string out;
  for (const int limit : report.options.limits) {
    if (!out.empty())
      out += " / ";
    const auto it = group.across.find(MetricKey{metric, limit, is_fast_p(metric) ? p : 0.0});
    out += it == group.across.end() ? std::string(kUndefined) : show(it->second, unit, statistic);
  }
  return out;
}

std::string paired_triplet(const Report& report, const GroupResult& group, Metric target,
                           Metric plain, double p, Unit unit, Statistic statistic) {
  return triplet(report, group, target, p, unit, statistic) + " (" +
         triplet(report, group, plain, p, unit, statistic) + ")";
}

std::vector<std::string> report_models(const Report& report) {
  std::vector<std::string> models;
  for (const GroupResult& group : report.groups)
    if (std::find(models.begin(), models.end(), group.model) == models.end())
      models.push_back(group.model);
  return models;
}

std::vector<std::string> report_problems(const Report& report) {
  std::set<std::string> problems;
  for (const GroupResult& group : report.groups)
    problems.insert(group.problem);
  return {problems.begin(), problems.end()};
}

const GroupResult* find_group(const Report& report, std::string_view model,
                              std::string_view problem) {
  for (const GroupResult& group : report.groups)
    if (group.model == model && group.problem == problem)
      return &group;
  return nullptr;
}

std::string csv_number(std::optional<double> value) {
  return value ? fmt::format("{:.6g}", *value) : std::string();
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos)
    return std::string(text);
  std::string out = "\"";
  for (const char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

} // namespace ptxbench::report
