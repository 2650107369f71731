// The Markdown report: paper-style tables (Tables 1 and 7), Fast_p, the original code's
// trajectory-level and run-level variants, target-instruction evidence, and Figure 9's data.
#include "report/format.hpp"
#include "report/text.hpp"

#include <fmt/core.h>

namespace ptxbench::report {
namespace {

using store::TurnCategory;

std::string limits_label(const Report& report) {
  std::string out;
  for (const int limit : report.options.limits)
    out += fmt::format("{}≤{}", out.empty() ? "" : " / ", limit);
  return out;
}

std::string header_row(const std::vector<std::string>& columns) {
  std::string head = "|";
  std::string rule = "|";
  for (const std::string& column : columns) {
    head += " " + column + " |";
    rule += "---|";
  }
  return head + "\n" + rule + "\n";
}

// Rows are models, columns problems; each cell is the paired target/unrestricted triplet.
std::string model_by_problem(const Report& report, Metric target, Metric plain, Unit unit,
                             Statistic statistic) {
  const std::vector<std::string> problems = report_problems(report);
  std::vector<std::string> columns{"Model"};
  columns.insert(columns.end(), problems.begin(), problems.end());
  std::string out = header_row(columns);
  for (const std::string& model : report_models(report)) {
    out += "| " + model + " |";
    for (const std::string& problem : problems) {
      const GroupResult* group = find_group(report, model, problem);
      out += " " +
             (group ? paired_triplet(report, *group, target, plain, 0, unit, statistic)
                    : std::string(kUndefined)) +
             " |";
    }
    out += "\n";
  }
  return out;
}

std::string paper_table(const Report& report, std::string_view title, Metric target,
                        Metric plain, Unit unit) {
  return fmt::format("## {}\n\nMean across prompt variants:\n\n{}\nRange across prompt variants "
                     "(min–max):\n\n{}\n",
                     title, model_by_problem(report, target, plain, unit, Statistic::mean),
                     model_by_problem(report, target, plain, unit, Statistic::range));
}

std::string fast_p_table(const Report& report) {
  std::string out = "## Fast_p^Inst (Fast_p) (%)\n\nFraction of counted turns that are correct, "
                    "exceed speedup p (and execute a target instruction); mean across prompt "
                    "variants [min–max].\n\n" +
                    header_row({"Model", "Problem", "p", "Fast_p^Inst (Fast_p)", "range"});
  for (const GroupResult& group : report.groups) {
    for (const double p : report.options.fast_p_thresholds) {
      out += fmt::format(
          "| {} | {} | {} | {} | {} |\n", group.model, group.problem, p,
          paired_triplet(report, group, Metric::target_fast_p, Metric::fast_p, p, Unit::percent,
                         Statistic::mean),
          paired_triplet(report, group, Metric::target_fast_p, Metric::fast_p, p, Unit::percent,
                         Statistic::range));
    }
  }
  return out + "\n";
}

std::string evidence_table(const Report& report) {
  const int limit = report.options.limits.back();
  std::string out = fmt::format(
      "## Target-instruction state of correct turns (≤{} turns, all variants)\n\nOnly `present` "
      "counts as a positive; `unknown` (no verified state) is counted here and never as a "
      "positive.\n\n",
      limit);
  out += header_row({"Model", "Problem", "turns", "correct", "present", "not_executed", "absent",
                     "unknown"});
  for (const GroupResult& group : report.groups) {
    const TurnCounts& c = group.counts.at(limit);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", group.model, group.problem,
                       c.turns, c.correct, c.correct_present, c.correct_not_executed,
                       c.correct_absent, c.correct_unknown);
  }
  return out + "\n";
}

std::vector<std::string> category_columns(std::string first) {
  std::vector<std::string> columns{std::move(first)};
  for (const auto& info : store::kTurnCategories)
    if (info.value != TurnCategory::infra) columns.emplace_back(info.name);
  return columns;
}

std::string categories_section(const CategoryStats& stats) {
  std::string out = fmt::format("### {}\n\nCounted turns by category ({} infra turns not "
                                "counted):\n\n{}",
                                stats.model, stats.not_counted_turns,
                                header_row(category_columns("Turn")));
  for (const auto& [turn, counts] : stats.by_turn) {
    out += fmt::format("| {} |", turn);
    for (std::size_t i = 0; i + 1 < kCategoryCount; ++i) out += fmt::format(" {} |", counts[i]);
    out += "\n";
  }
  out += "\nTransitions between consecutive counted turns (row: from, column: to):\n\n" +
         header_row(category_columns("from \\ to"));
  for (const auto& from : store::kTurnCategories) {
    if (from.value == TurnCategory::infra) continue;
    out += fmt::format("| {} |", from.name);
    for (const auto& to : store::kTurnCategories) {
      if (to.value == TurnCategory::infra) continue;
      const auto it = stats.transitions.find({from.value, to.value});
      out += fmt::format(" {} |", it == stats.transitions.end() ? 0 : it->second);
    }
    out += "\n";
  }
  return out + "\n";
}

std::string preamble(const Report& report) {
  std::string sources;
  for (const std::string& source : report.sources) sources += fmt::format("- `{}`\n", source);
  return fmt::format(
      "# ptxbench report\n\nRuns:\n\n{}\n{} trajectories, {} finished turns, {} of them not "
      "counted (infra; excluded from every metric).\n\nCells read `target-instruction value "
      "{} (unrestricted value)`; {} means undefined (no turn, or no qualifying kernel). "
      "Definitions: docs/metrics.md.\n\n",
      sources, report.trajectories, report.finished_turns, report.not_counted_turns,
      limits_label(report), kUndefined);
}

class MarkdownFormat final : public ReportFormat {
public:
  std::string_view name() const override { return "md"; }
  std::vector<OutputFile> render(const Report& report) const override {
    std::string out = preamble(report);
    out += paper_table(report, "Turn correctness rate (%) (paper Table 1)",
                       Metric::target_turn_correctness, Metric::turn_correctness, Unit::percent);
    out += paper_table(report, "Best speedup (paper Table 7; per-trajectory best, mean over "
                               "trajectories)",
                       Metric::target_best_speedup, Metric::best_speedup, Unit::speedup);
    out += fast_p_table(report);
    out += paper_table(report, "Trajectory-level correctness (%) (original PTXBench code, not "
                               "the paper's turn-level metric)",
                       Metric::target_trajectory_correctness, Metric::trajectory_correctness,
                       Unit::percent);
    out += paper_table(report, "Run-level peak speedup (original PTXBench code: max over "
                               "trajectories)",
                       Metric::target_peak_speedup, Metric::peak_speedup, Unit::speedup);
    out += evidence_table(report);
    out += "## Error categories by turn and transitions (paper Figure 9)\n\n";
    for (const CategoryStats& stats : report.categories) out += categories_section(stats);
    return {OutputFile{"report.md", out}};
  }
};

} // namespace

std::unique_ptr<ReportFormat> make_markdown_format() {
  return std::make_unique<MarkdownFormat>();
}

} // namespace ptxbench::report
