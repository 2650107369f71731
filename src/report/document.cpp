// The report's sections: paper-style tables (Tables 1 and 7), Fast_p with its figures, Fast_p of
// Triton vs CUDA-PTX (Figure 3, when the runs hold both languages), the
// original code's trajectory-level and run-level variants, target-instruction evidence, why
// trajectories ended, reasoning tokens and cost, and Figure 9's data with its figure.
#include "report/document.hpp"

#include "report/figures.hpp"
#include "report/text.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace ptxbench::report {
namespace {

using store::TurnCategory;

Block heading(int level, std::string text) {
  return Block{BlockKind::heading, level, std::move(text), {}, {}};
}
Block paragraph(std::string text) {
  return Block{BlockKind::paragraph, 0, std::move(text), {}, {}};
}
Block table(Table t) {
  return Block{BlockKind::table, 0, {}, {}, std::move(t)};
}
Block figure(std::string name) {
  return Block{BlockKind::figure, 0, std::move(name), {}, {}};
}

std::string limits_label(const Report& report) {
  std::string out;
  for (const int limit : report.options.limits)
    out += fmt::format("{}≤{}", out.empty() ? "" : " / ", limit);
  return out;
}

// Rows are models, columns problems; each cell is the paired target/unrestricted triplet.
Table model_by_problem(const Report& report, Metric target, Metric plain, Unit unit,
                       Statistic statistic) {
  const std::vector<std::string> problems = report_problems(report);
  Table out;
  out.header = {report.conditions ? "Model · condition" : "Model"};
  out.header.insert(out.header.end(), problems.begin(), problems.end());
  for (const std::string& model : report_models(report)) {
    std::vector<std::string> row{model};
    for (const std::string& problem : problems) {
      const GroupResult* group = find_group(report, model, problem);
      row.push_back(group ? paired_triplet(report, *group, target, plain, 0, unit, statistic)
                          : std::string(kUndefined));
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

void paper_table(std::vector<Block>& doc, const Report& report, std::string title, Metric target,
                 Metric plain, Unit unit) {
  doc.push_back(heading(2, std::move(title)));
  doc.push_back(paragraph("Mean across prompt variants:"));
  doc.push_back(table(model_by_problem(report, target, plain, unit, Statistic::mean)));
  doc.push_back(paragraph("Range across prompt variants (min–max):"));
  doc.push_back(table(model_by_problem(report, target, plain, unit, Statistic::range)));
}

void fast_p_section(std::vector<Block>& doc, const Report& report) {
  doc.push_back(heading(2, "Fast_p^Inst (Fast_p) (%)"));
  doc.push_back(paragraph("Fraction of counted turns that are correct, exceed speedup p (and "
                          "execute a target instruction); mean across prompt variants "
                          "[min–max]."));
  Table t{{"Model", "Problem", "p", "Fast_p^Inst (Fast_p)", "range"}, {}};
  for (const GroupResult& group : report.groups)
    for (const double p : report.options.fast_p_thresholds)
      t.rows.push_back({group.model, group.problem, fmt::format("{}", p),
                        paired_triplet(report, group, Metric::target_fast_p, Metric::fast_p, p,
                                       Unit::percent, Statistic::mean),
                        paired_triplet(report, group, Metric::target_fast_p, Metric::fast_p, p,
                                       Unit::percent, Statistic::range)});
  doc.push_back(figure("fast_p_inst"));
  doc.push_back(figure("fast_p"));
  doc.push_back(table(std::move(t)));
}

// Figure 3 and its numbers: the table is what a reader without the figure (Markdown without
// --figures, no cairo) sees.
void language_section(std::vector<Block>& doc, const Report& report) {
  if (!holds_both_languages(report))
    return;
  const FastPFigure figure = language_fast_p_figure(report);
  doc.push_back(heading(2, "Fast_p of Triton vs CUDA-PTX (%) (paper Figure 3)"));
  doc.push_back(paragraph(fmt::format(
      "Fraction of counted turns (≤{} turns) that are correct with speedup above p, per "
      "candidate language; mean across prompt variants [min–max].",
      figure.limit)));
  doc.push_back(Block{BlockKind::figure, 0, "fast_p_languages", {}, {}});
  Table t{{"GPU", "Problem", "Language", "p", "Fast_p", "range", "best speedup"}, {}};
  for (const FastPPanel& panel : figure.panels)
    for (const FastPCurve& curve : panel.curves)
      for (std::size_t i = 0; i < curve.at_thresholds.size(); ++i)
        t.rows.push_back({panel.gpu.empty() ? std::string(kUndefined) : panel.gpu, panel.problem,
                          curve.model, fmt::format("{}", report.options.fast_p_thresholds[i]),
                          show(curve.at_thresholds[i], Unit::percent, Statistic::mean),
                          show(curve.at_thresholds[i], Unit::percent, Statistic::range),
                          show(curve.best, Unit::speedup)});
  doc.push_back(table(std::move(t)));
}

void evidence_section(std::vector<Block>& doc, const Report& report) {
  const int limit = report.options.limits.back();
  doc.push_back(
      heading(2, fmt::format("Target-instruction state of correct turns (≤{} turns, all variants)",
                             limit)));
  doc.push_back(paragraph("Only `present` counts as a positive; `unknown` (no verified state) is "
                          "counted here and never as a positive."));
  Table t{{"Model", "Problem", "turns", "correct", "present", "not_executed", "absent", "unknown"},
          {}};
  for (const GroupResult& group : report.groups) {
    const TurnCounts& c = group.counts.at(limit);
    t.rows.push_back({group.model, group.problem, std::to_string(c.turns),
                      std::to_string(c.correct), std::to_string(c.correct_present),
                      std::to_string(c.correct_not_executed), std::to_string(c.correct_absent),
                      std::to_string(c.correct_unknown)});
  }
  doc.push_back(table(std::move(t)));
}

// "7", or "7 (1 cut off, usage unknown)" when a crash ended attempts before their answer.
std::string attempts_text(const store::UsageTotals& spent) {
  if (spent.calls_in_flight == 0)
    return std::to_string(spent.calls);
  return fmt::format("{} ({} cut off, usage unknown)", spent.calls, spent.calls_in_flight);
}

void ends_section(std::vector<Block>& doc, const Report& report) {
  doc.push_back(heading(2, "Why trajectories ended"));
  doc.push_back(paragraph("Trajectories per exit reason; `unfinished` ones were stopped or "
                          "killed and continue with `ptxbench run --resume DIR`."));
  Table t{{"Model", "Problem"}, {}};
  for (std::size_t i = 0; i < kEndCount; ++i)
    t.header.emplace_back(end_name(i));
  for (const EndStats& stats : report.ends) {
    std::vector<std::string> row{stats.model, stats.problem};
    for (const std::int64_t count : stats.counts)
      row.push_back(std::to_string(count));
    t.rows.push_back(std::move(row));
  }
  doc.push_back(table(std::move(t)));
}

std::string tokens(std::optional<double> value) {
  return value ? fmt::format("{:.1f}", *value) : std::string(kUndefined);
}

void usage_section(std::vector<Block>& doc, const Report& report) {
  doc.push_back(heading(2, "Reasoning tokens and cost per model"));
  doc.push_back(paragraph(
      "Reasoning tokens per model-call attempt that got a reply, on finished turns (mean / "
      "median / max); failed attempts are counted beside them, not averaged in. Attempts, "
      "tokens and cost cover every attempt, failed ones and those of abandoned turns included."));
  const bool gpus = std::any_of(report.usage.begin(), report.usage.end(),
                                [](const UsageStats& u) { return !u.gpu.empty(); });
  if (!gpus)
    doc.push_back(paragraph("These runs record no GPU (no evaluation hardware, no `gpu` or "
                            "`arch` in the run configuration), so rows are per model only."));
  Table t;
  t.header = {"Model"};
  if (gpus)
    t.header.push_back("GPU");
  for (const char* column : {"replied calls", "failed calls", "reasoning/call mean", "median",
                             "max", "attempts", "input tokens", "output tokens", "cost (USD)"})
    t.header.emplace_back(column);
  for (const UsageStats& u : report.usage) {
    std::vector<std::string> row{u.model};
    if (gpus)
      row.push_back(u.gpu.empty() ? std::string(kUndefined) : u.gpu);
    for (std::string cell :
         {std::to_string(u.replied_calls), std::to_string(u.failed_calls), tokens(u.reasoning_mean),
          tokens(u.reasoning_median),
          u.reasoning_max ? std::to_string(*u.reasoning_max) : std::string(kUndefined),
          attempts_text(u.spent), std::to_string(u.spent.input_tokens),
          std::to_string(u.spent.output_tokens), fmt::format("{:.4f}", u.spent.cost_usd)})
      row.push_back(std::move(cell));
    t.rows.push_back(std::move(row));
  }
  doc.push_back(table(std::move(t)));
}

std::vector<std::string> category_columns(std::string first) {
  std::vector<std::string> columns{std::move(first)};
  for (const auto& info : store::kTurnCategories)
    if (info.value != TurnCategory::infra)
      columns.emplace_back(info.name);
  return columns;
}

std::string count_of(const CategoryCounts& counts, TurnCategory category) {
  return std::to_string(counts[static_cast<std::size_t>(category) - 1]);
}

void reasoning_table(std::vector<Block>& doc, const CategoryStats& stats) {
  doc.push_back(paragraph("Reasoning tokens per counted turn (paper Figure 7; the sum over the "
                          "turn's replied calls; nearest-rank quartiles):"));
  Table t{{"Turn", "turns", "p25", "median", "p75", "max"}, {}};
  for (const auto& [turn, tokens] : stats.reasoning_by_turn) {
    const auto q = quartiles(tokens);
    if (!q)
      continue;
    t.rows.push_back({std::to_string(turn), std::to_string(tokens.size()), std::to_string(q->low),
                      std::to_string(q->median), std::to_string(q->high), std::to_string(q->max)});
  }
  doc.push_back(table(std::move(t)));
}

void categories_section(std::vector<Block>& doc, const CategoryStats& stats) {
  doc.push_back(heading(3, stats.model));
  reasoning_table(doc, stats);
  doc.push_back(paragraph(fmt::format("Counted turns by category ({} infra turns not counted):",
                                      stats.not_counted_turns)));
  Table by_turn{category_columns("Turn"), {}};
  for (const auto& [turn, counts] : stats.by_turn) {
    std::vector<std::string> row{std::to_string(turn)};
    for (const auto& info : store::kTurnCategories)
      if (info.value != TurnCategory::infra)
        row.push_back(count_of(counts, info.value));
    by_turn.rows.push_back(std::move(row));
  }
  doc.push_back(table(std::move(by_turn)));
  doc.push_back(
      paragraph("Transitions between consecutive counted turns (row: from, column: to):"));
  Table transitions{category_columns("from \\ to"), {}};
  for (const auto& from : store::kTurnCategories) {
    if (from.value == TurnCategory::infra)
      continue;
    std::vector<std::string> row{std::string(from.name)};
    for (const auto& to : store::kTurnCategories) {
      if (to.value == TurnCategory::infra)
        continue;
      const auto it = stats.transitions.find({from.value, to.value});
      row.push_back(std::to_string(it == stats.transitions.end() ? 0 : it->second));
    }
    transitions.rows.push_back(std::move(row));
  }
  doc.push_back(table(std::move(transitions)));
}

void preamble(std::vector<Block>& doc, const Report& report) {
  doc.push_back(heading(1, "ptxbench report"));
  doc.push_back(paragraph("Runs:"));
  Block sources{BlockKind::list, 0, {}, {}, {}};
  for (const std::string& source : report.sources)
    sources.items.push_back("`" + source + "`");
  doc.push_back(std::move(sources));
  doc.push_back(
      paragraph(fmt::format("{} trajectories, {} finished turns, {} of them not counted "
                            "(infra; excluded from every metric).",
                            report.trajectories, report.finished_turns, report.not_counted_turns)));
  if (report.static_only)
    doc.push_back(paragraph(fmt::format(
        "**Static-only run**: no turn ran on a GPU (counted turns are `static_only` — gate, nvcc "
        "and SASS only — or failed before the GPU step), so correctness, speedups and Fast_p were "
        "never measured and read {}.",
        kUndefined)));
  doc.push_back(paragraph(fmt::format(
      "Cells read `target-instruction value {} (unrestricted value)`; {} means undefined (no "
      "turn, no qualifying kernel, or nothing measured). Definitions: docs/metrics.md.",
      limits_label(report), kUndefined)));
}

} // namespace

std::vector<Block> report_document(const Report& report) {
  std::vector<Block> doc;
  preamble(doc, report);
  paper_table(doc, report,
              report.conditions ? "Turn correctness rate (%) by model and condition (paper Table 4)"
                                : "Turn correctness rate (%) (paper Table 1)",
              Metric::target_turn_correctness, Metric::turn_correctness, Unit::percent);
  paper_table(doc, report,
              "Best speedup (paper Table 7; per-trajectory best, mean over trajectories)",
              Metric::target_best_speedup, Metric::best_speedup, Unit::speedup);
  fast_p_section(doc, report);
  language_section(doc, report);
  paper_table(doc, report,
              "Trajectory-level correctness (%) (original PTXBench code, not the paper's "
              "turn-level metric)",
              Metric::target_trajectory_correctness, Metric::trajectory_correctness, Unit::percent);
  paper_table(doc, report, "Run-level peak speedup (original PTXBench code: max over trajectories)",
              Metric::target_peak_speedup, Metric::peak_speedup, Unit::speedup);
  evidence_section(doc, report);
  ends_section(doc, report);
  usage_section(doc, report);
  doc.push_back(heading(2, "Reasoning length, error categories by turn and transitions (paper "
                           "Figures 7 and 9)"));
  doc.push_back(figure("per_turn"));
  doc.push_back(figure("transitions"));
  for (const CategoryStats& stats : report.categories)
    categories_section(doc, stats);
  return doc;
}

} // namespace ptxbench::report
