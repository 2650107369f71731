// The JSON report: everything the other formats show, as one document for scripts.
#include "report/figures.hpp"
#include "report/format.hpp"

#include <nlohmann/json.hpp>

namespace ptxbench::report {
namespace {

using Json = nlohmann::ordered_json;

Json number(std::optional<double> value) {
  return value ? Json(*value) : Json(nullptr);
}

Json key_json(const MetricKey& key) {
  Json out{{"metric", to_string(key.metric)}, {"limit", key.limit}};
  if (is_fast_p(key.metric))
    out["p"] = key.p;
  return out;
}

Json counts_json(const std::map<int, TurnCounts>& counts) {
  Json out = Json::array();
  for (const auto& [limit, c] : counts)
    out.push_back({{"limit", limit},
                   {"turns", c.turns},
                   {"correct", c.correct},
                   {"correct_present", c.correct_present},
                   {"correct_not_executed", c.correct_not_executed},
                   {"correct_absent", c.correct_absent},
                   {"correct_unknown", c.correct_unknown}});
  return out;
}

Json variant_json(const VariantResult& variant) {
  Json metrics = Json::array();
  for (const auto& [key, value] : variant.values) {
    Json row = key_json(key);
    row["value"] = number(value);
    metrics.push_back(row);
  }
  return {{"variant", variant.variant},
          {"trajectories", variant.trajectories},
          {"counts", counts_json(variant.counts)},
          {"metrics", metrics}};
}

Json group_json(const GroupResult& group) {
  Json variants = Json::array();
  for (const VariantResult& variant : group.variants)
    variants.push_back(variant_json(variant));
  Json across = Json::array();
  for (const auto& [key, s] : group.across) {
    Json row = key_json(key);
    row.update({{"mean", number(s.mean)},
                {"min", number(s.min)},
                {"max", number(s.max)},
                {"defined_variants", s.defined},
                {"variants", s.variants}});
    across.push_back(row);
  }
  return {{"model", group.model},
          {"problem", group.problem},
          {"counts", counts_json(group.counts)},
          {"across_variants", across},
          {"variants", variants}};
}

Json categories_json(const CategoryStats& stats) {
  Json by_turn = Json::array();
  for (const auto& [turn, counts] : stats.by_turn) {
    Json row{{"counted_turn", turn}};
    for (std::size_t i = 0; i < kCategoryCount; ++i)
      row[std::string(store::kTurnCategories[i].name)] = counts[i];
    by_turn.push_back(row);
  }
  Json transitions = Json::array();
  for (const auto& [pair, count] : stats.transitions)
    transitions.push_back({{"from", store::to_string(pair.first)},
                           {"to", store::to_string(pair.second)},
                           {"count", count}});
  return {{"model", stats.model},
          {"not_counted_turns", stats.not_counted_turns},
          {"by_turn", by_turn},
          {"transitions", transitions}};
}

Json usage_json(const UsageStats& u) {
  Json json = {{"model", u.model},
               {"gpu", u.gpu.empty() ? Json(nullptr) : Json(u.gpu)},
               {"replied_calls", u.replied_calls},
               {"failed_calls", u.failed_calls},
               {"reasoning_tokens_per_call",
                {{"mean", number(u.reasoning_mean)},
                 {"median", number(u.reasoning_median)},
                 {"max", u.reasoning_max ? Json(*u.reasoning_max) : Json(nullptr)}}},
               {"spent",
                {{"attempts", u.spent.calls},
                 {"input_tokens", u.spent.input_tokens},
                 {"output_tokens", u.spent.output_tokens},
                 {"reasoning_tokens", u.spent.reasoning_tokens},
                 {"cost_usd", u.spent.cost_usd}}}};
  if (u.spent.calls_in_flight > 0) // cut off by a crash: counted above, their usage unknown
    json["spent"]["attempts_usage_unknown"] = u.spent.calls_in_flight;
  return json;
}

Json ends_json(const EndStats& stats) {
  Json out{{"model", stats.model}, {"problem", stats.problem}};
  for (std::size_t i = 0; i < kEndCount; ++i)
    out[std::string(end_name(i))] = stats.counts[i];
  return out;
}

// Figure 3's numbers (null when the runs do not hold both languages): per GPU × problem ×
// language series, Fast_p at each threshold across prompt variants and the best speedup.
Json languages_json(const Report& report) {
  if (!holds_both_languages(report))
    return nullptr;
  const FastPFigure figure = language_fast_p_figure(report);
  Json rows = Json::array();
  for (const FastPPanel& panel : figure.panels)
    for (const FastPCurve& curve : panel.curves) {
      Json at = Json::array();
      for (std::size_t i = 0; i < curve.at_thresholds.size(); ++i)
        at.push_back({{"p", report.options.fast_p_thresholds[i]},
                      {"mean", number(curve.at_thresholds[i].mean)},
                      {"min", number(curve.at_thresholds[i].min)},
                      {"max", number(curve.at_thresholds[i].max)}});
      rows.push_back({{"gpu", panel.gpu},
                      {"problem", panel.problem},
                      {"series", curve.model},
                      {"limit", figure.limit},
                      {"variants", curve.variants},
                      {"best_speedup", number(curve.best)},
                      {"fast_p", std::move(at)}});
    }
  return rows;
}

class JsonFormat final : public ReportFormat {
public:
  std::string_view name() const override { return "json"; }
  std::vector<OutputFile> render(const Report& report,
                                 std::span<const Figure> /*figures*/) const override {
    Json groups = Json::array();
    for (const GroupResult& group : report.groups)
      groups.push_back(group_json(group));
    Json categories = Json::array();
    for (const CategoryStats& stats : report.categories)
      categories.push_back(categories_json(stats));
    Json usage = Json::array();
    for (const UsageStats& u : report.usage)
      usage.push_back(usage_json(u));
    Json ends = Json::array();
    for (const EndStats& stats : report.ends)
      ends.push_back(ends_json(stats));
    const Json out{{"schema_version", 1},
                   {"sources", report.sources},
                   {"turn_limits", report.options.limits},
                   {"fast_p_thresholds", report.options.fast_p_thresholds},
                   {"trajectories", report.trajectories},
                   {"finished_turns", report.finished_turns},
                   {"not_counted_turns", report.not_counted_turns},
                   {"static_only", report.static_only},
                   {"trajectory_ends", ends},
                   {"groups", groups},
                   {"categories", categories},
                   {"usage", usage},
                   {"fast_p_by_language", languages_json(report)}};
    return {OutputFile{"report.json",
                       out.dump(2, ' ', false, decltype(out)::error_handler_t::replace) + "\n"}};
  }
};

} // namespace

std::unique_ptr<ReportFormat> make_json_format() {
  return std::make_unique<JsonFormat>();
}

} // namespace ptxbench::report
