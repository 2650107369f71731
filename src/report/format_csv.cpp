// The CSV report: paper tables in long form (table1.csv, table7.csv), every metric per variant
// (metrics.csv) and across variants (summary.csv), one row per finished turn (turns.csv),
// Figure 9's data (categories.csv, transitions.csv), the Fast_p curves of the figures
// (fast_p_curves.csv; metric fast_p_languages holds Figure 3's, its model column the language
// series), reasoning tokens and cost (usage.csv), why trajectories ended (ends.csv)
// and the run's totals with its static-only flag (run.csv). Values are fractions, not
// percentages; an undefined value is an empty field.
#include "report/figures.hpp"
#include "report/format.hpp"
#include "report/text.hpp"

#include <fmt/core.h>
#include <map>

namespace ptxbench::report {
namespace {

std::string spread_fields(const Spread& s) {
  return fmt::format("{},{},{}", csv_number(s.mean), csv_number(s.min), csv_number(s.max));
}

std::string paper_table(const Report& report, Metric target, Metric plain) {
  std::string out = fmt::format("model,problem,limit,{0}_mean,{0}_min,{0}_max,{1}_mean,{1}_min,"
                                "{1}_max,{0}_defined_variants,{1}_defined_variants,variants\n",
                                to_string(target), to_string(plain));
  for (const GroupResult& group : report.groups) {
    for (const int limit : report.options.limits) {
      const Spread& t = group.across.at(MetricKey{target, limit, 0});
      const Spread& a = group.across.at(MetricKey{plain, limit, 0});
      out +=
          fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(group.model), csv_field(group.problem),
                      limit, spread_fields(t), spread_fields(a), t.defined, a.defined, t.variants);
    }
  }
  return out;
}

std::string metrics_file(const Report& report) {
  std::string out = "model,problem,variant,trajectories,metric,limit,p,value\n";
  for (const GroupResult& group : report.groups)
    for (const VariantResult& variant : group.variants)
      for (const auto& [key, value] : variant.values)
        out += fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(group.model),
                           csv_field(group.problem), csv_field(variant.variant),
                           variant.trajectories, to_string(key.metric), key.limit,
                           is_fast_p(key.metric) ? csv_number(key.p) : "", csv_number(value));
  return out;
}

std::string summary_file(const Report& report) {
  std::string out = "model,problem,metric,limit,p,mean,min,max,defined_variants,variants\n";
  for (const GroupResult& group : report.groups)
    for (const auto& [key, s] : group.across)
      out += fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(group.model),
                         csv_field(group.problem), to_string(key.metric), key.limit,
                         is_fast_p(key.metric) ? csv_number(key.p) : "", spread_fields(s),
                         s.defined, s.variants);
  return out;
}

std::string turns_file(const Report& report) {
  std::string out = "model,problem,variant,trajectory,sample,turn_index,counted_turn,category,"
                    "counted,speedup,target_state\n";
  std::map<std::int64_t, int> ordinals; // counted turns seen so far, per trajectory
  for (const TurnRecord& turn : report.turns) {
    const bool counted = turn.counting == store::Counting::counted;
    const std::string ordinal = counted ? std::to_string(++ordinals[turn.trajectory]) : "";
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(turn.model),
                       csv_field(turn.problem), csv_field(turn.variant), turn.trajectory,
                       turn.sample, turn.turn_index, ordinal, to_string(turn.category),
                       to_string(turn.counting), csv_number(turn.speedup), to_string(turn.target));
  }
  return out;
}

std::string categories_file(const Report& report) {
  std::string out = "model,counted_turn,category,turns\n";
  for (const CategoryStats& stats : report.categories)
    for (const auto& [turn, counts] : stats.by_turn)
      for (std::size_t i = 0; i < kCategoryCount; ++i)
        if (counts[i] > 0)
          out += fmt::format("{},{},{},{}\n", csv_field(stats.model), turn,
                             store::kTurnCategories[i].name, counts[i]);
  return out;
}

std::string transitions_file(const Report& report) {
  std::string out = "model,from,to,transitions\n";
  for (const CategoryStats& stats : report.categories)
    for (const auto& [pair, count] : stats.transitions)
      out += fmt::format("{},{},{},{}\n", csv_field(stats.model), to_string(pair.first),
                         to_string(pair.second), count);
  return out;
}

// Every point of every curve of the two Fast_p figures; a curve's value at p holds up to its
// next point.
std::string curves_file(const Report& report) {
  std::string out = "metric,gpu,problem,model,limit,p,mean,min,max,variants\n";
  for (const Restriction restriction :
       {Restriction::target_instruction, Restriction::any_correct}) {
    const FastPFigure figure = fast_p_figure(report, restriction);
    const std::string_view metric = to_string(
        restriction == Restriction::target_instruction ? Metric::target_fast_p : Metric::fast_p);
    for (const FastPPanel& panel : figure.panels)
      for (const FastPCurve& curve : panel.curves)
        for (std::size_t i = 0; i < curve.p.size(); ++i)
          out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", metric, csv_field(panel.gpu),
                             csv_field(panel.problem), csv_field(curve.model), figure.limit,
                             csv_number(curve.p[i]), csv_number(curve.mean[i]),
                             csv_number(curve.low[i]), csv_number(curve.high[i]), curve.variants);
  }
  if (holds_both_languages(report)) {
    const FastPFigure figure = language_fast_p_figure(report);
    for (const FastPPanel& panel : figure.panels)
      for (const FastPCurve& curve : panel.curves)
        for (std::size_t i = 0; i < curve.p.size(); ++i)
          out += fmt::format("fast_p_languages,{},{},{},{},{},{},{},{},{}\n", csv_field(panel.gpu),
                             csv_field(panel.problem), csv_field(curve.model), figure.limit,
                             csv_number(curve.p[i]), csv_number(curve.mean[i]),
                             csv_number(curve.low[i]), csv_number(curve.high[i]), curve.variants);
  }
  return out;
}

std::string usage_file(const Report& report) {
  std::string out = "model,gpu,replied_calls,failed_calls,reasoning_mean,reasoning_median,"
                    "reasoning_max,attempts,input_tokens,output_tokens,reasoning_tokens,cost_usd\n";
  for (const UsageStats& u : report.usage) {
    const std::optional<double> max =
        u.reasoning_max ? std::optional<double>(static_cast<double>(*u.reasoning_max))
                        : std::nullopt;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(u.model),
                       csv_field(u.gpu), u.replied_calls, u.failed_calls,
                       csv_number(u.reasoning_mean), csv_number(u.reasoning_median),
                       csv_number(max), u.spent.calls, u.spent.input_tokens, u.spent.output_tokens,
                       u.spent.reasoning_tokens, csv_number(u.spent.cost_usd));
  }
  return out;
}

std::string ends_file(const Report& report) {
  std::string out = "model,problem";
  for (std::size_t i = 0; i < kEndCount; ++i)
    out += "," + std::string(end_name(i));
  out += "\n";
  for (const EndStats& stats : report.ends) {
    out += csv_field(stats.model) + "," + csv_field(stats.problem);
    for (const std::int64_t count : stats.counts)
      out += "," + std::to_string(count);
    out += "\n";
  }
  return out;
}

// The run as a whole; static_only 1 means every metric field is empty because nothing was
// measured, not because nothing qualified.
std::string run_file(const Report& report) {
  return fmt::format("trajectories,finished_turns,not_counted_turns,static_only\n{},{},{},{}\n",
                     report.trajectories, report.finished_turns, report.not_counted_turns,
                     report.static_only ? 1 : 0);
}

class CsvFormat final : public ReportFormat {
public:
  std::string_view name() const override { return "csv"; }
  std::vector<OutputFile> render(const Report& report,
                                 std::span<const Figure> /*figures*/) const override {
    return {
        OutputFile{"run.csv", run_file(report)},
        OutputFile{"table1.csv",
                   paper_table(report, Metric::target_turn_correctness, Metric::turn_correctness)},
        OutputFile{"table7.csv",
                   paper_table(report, Metric::target_best_speedup, Metric::best_speedup)},
        OutputFile{"summary.csv", summary_file(report)},
        OutputFile{"metrics.csv", metrics_file(report)},
        OutputFile{"turns.csv", turns_file(report)},
        OutputFile{"categories.csv", categories_file(report)},
        OutputFile{"transitions.csv", transitions_file(report)},
        OutputFile{"fast_p_curves.csv", curves_file(report)},
        OutputFile{"usage.csv", usage_file(report)},
        OutputFile{"ends.csv", ends_file(report)},
    };
  }
};

} // namespace

std::unique_ptr<ReportFormat> make_csv_format() {
  return std::make_unique<CsvFormat>();
}

} // namespace ptxbench::report
