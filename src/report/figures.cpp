// Fast_p curves and transition matrices for the figures.
//
// Problem: the paper's Figure 2 plots, per GPU and problem, the fraction of counted turns that
// are correct (and execute a target instruction) with speedup above p, for every p, as the mean
// across prompt variants with the min–max band shaded and the best qualifying speedup marked.
// A curve sampled on a fixed grid would misplace its steps; axes chosen per panel would make
// panels incomparable.
//
// Approach: Fast_p of one prompt variant is a step function that only changes at the qualifying
// speedups of that variant, so each curve is evaluated exactly at the axis minimum, at every
// qualifying speedup of its variants inside the axis, and at the axis maximum, with the same
// fast_p() the tables use (metrics.cpp). Mean, min and max across variants are taken at each of
// those points (spread()). The x axis spans whole decades around every qualifying speedup of the
// figure — at least [0.1, 10], never below 1e-3 — and the y axis is shared: the largest band
// value rounded up to a tenth, with a tenth of headroom for the labels, at most 1.
//
// Figure 3 is the same computation with the series keyed by the turn's candidate language (and
// model, when there are several) instead of the model, unrestricted (the paper's Fast_p: the
// original has no target-instruction verdict for Triton), drawn only when both languages occur.
//
// Invariants: a curve's values are defined at every point (a variant with counted turns always
// has N > 0); the figure's turn limit is the report's largest; turns with unknown GPU form their
// own row (gpu ""); transitions are report.categories' (counted turns only).
#include "report/figures.hpp"

#include "report/text.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <tuple>

namespace ptxbench::report {
namespace {

using store::TurnCategory;

constexpr double kLowestAxis = 1e-3;

// Turns of one GPU × problem × model, split by prompt variant.
using VariantTurns = std::map<std::string, std::vector<TurnRecord>>;
using PanelKey = std::tuple<std::string, std::string, std::string>; // gpu, problem, model

// The series a turn belongs to: its model, or its language series.
using SeriesOf = std::function<std::string(const TurnRecord&)>;

std::map<PanelKey, VariantTurns> split_turns(const Report& report, const SeriesOf& series_of) {
  std::map<PanelKey, VariantTurns> out;
  for (const TurnRecord& turn : report.turns)
    out[{turn.gpu, turn.problem, series_of(turn)}][turn.variant].push_back(turn);
  return out;
}

std::vector<std::vector<TrajectoryTurns>> variant_trajectories(const VariantTurns& variants) {
  std::vector<std::vector<TrajectoryTurns>> out;
  for (const auto& [name, turns] : variants) {
    std::vector<TrajectoryTurns> trajectories = counted_trajectories(turns);
    if (!trajectories.empty())
      out.push_back(std::move(trajectories));
  }
  return out;
}

std::vector<double> curve_points(const std::vector<std::vector<TrajectoryTurns>>& variants,
                                 const FastPFigure& figure) {
  std::set<double> points{figure.p_min, figure.p_max};
  for (const auto& trajectories : variants)
    for (const double s : qualifying_speedups(trajectories, figure.limit, figure.restriction))
      if (s > figure.p_min && s < figure.p_max)
        points.insert(s);
  return {points.begin(), points.end()};
}

FastPCurve make_curve(const std::string& model, const VariantTurns& turns,
                      const FastPFigure& figure, std::span<const double> thresholds) {
  const auto variants = variant_trajectories(turns);
  FastPCurve curve;
  curve.model = model;
  curve.variants = static_cast<int>(variants.size());
  curve.p = curve_points(variants, figure);
  for (const double p : curve.p) {
    std::vector<std::optional<double>> values;
    for (const auto& trajectories : variants)
      values.push_back(fast_p(trajectories, figure.limit, p, figure.restriction));
    const Spread s = spread(values);
    curve.mean.push_back(s.mean.value_or(0.0));
    curve.low.push_back(s.min.value_or(0.0));
    curve.high.push_back(s.max.value_or(0.0));
  }
  for (const auto& trajectories : variants)
    for (const double s : qualifying_speedups(trajectories, figure.limit, figure.restriction))
      curve.best = curve.best ? std::max(*curve.best, s) : s;
  for (const double p : thresholds) {
    std::vector<std::optional<double>> values;
    for (const auto& trajectories : variants)
      values.push_back(fast_p(trajectories, figure.limit, p, figure.restriction));
    curve.at_thresholds.push_back(spread(values));
  }
  return curve;
}

// Whole decades around every qualifying speedup, at least [0.1, 10].
void choose_x_axis(const std::map<PanelKey, VariantTurns>& cells, FastPFigure& figure) {
  double low = 0.1;
  double high = 10.0;
  for (const auto& [key, turns] : cells) {
    for (const auto& trajectories : variant_trajectories(turns)) {
      for (const double s : qualifying_speedups(trajectories, figure.limit, figure.restriction)) {
        if (s <= 0)
          continue;
        low = std::min(low, std::pow(10.0, std::floor(std::log10(s))));
        high = std::max(high, std::pow(10.0, std::ceil(std::log10(s))));
      }
    }
  }
  figure.p_min = std::max(low, kLowestAxis);
  figure.p_max = high;
}

double choose_y_max(const FastPFigure& figure) {
  double top = 0;
  for (const FastPPanel& panel : figure.panels)
    for (const FastPCurve& curve : panel.curves)
      for (const double v : curve.high)
        top = std::max(top, v);
  return std::clamp(std::ceil(top * 10.0 + 0.5) / 10.0, 0.1, 1.0);
}

template <typename T> void add_unique(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end())
    list.push_back(value);
}

// The figure of `series_of`'s series; `series` is the legend order, series without turns
// left out.
FastPFigure build_fast_p_figure(const Report& report, Restriction restriction,
                                const SeriesOf& series_of, std::vector<std::string> series) {
  FastPFigure figure;
  figure.restriction = restriction;
  figure.limit = report.options.limits.empty() ? 8 : report.options.limits.back();
  const auto cells = split_turns(report, series_of);
  choose_x_axis(cells, figure);
  std::erase_if(series, [&](const std::string& name) {
    return std::none_of(cells.begin(), cells.end(),
                        [&](const auto& cell) { return std::get<2>(cell.first) == name; });
  });
  figure.models = std::move(series);
  for (const auto& [key, turns] : cells) {
    const auto& [gpu, problem, name] = key;
    add_unique(figure.gpus, gpu);
    if (figure.panels.empty() || figure.panels.back().gpu != gpu ||
        figure.panels.back().problem != problem)
      figure.panels.push_back(FastPPanel{gpu, problem, {}});
    figure.panels.back().curves.push_back(
        make_curve(name, turns, figure, report.options.fast_p_thresholds));
  }
  for (FastPPanel& panel : figure.panels)
    std::stable_sort(panel.curves.begin(), panel.curves.end(),
                     [&](const FastPCurve& a, const FastPCurve& b) {
                       const auto at = [&](const std::string& name) {
                         return std::find(figure.models.begin(), figure.models.end(), name);
                       };
                       return at(a.model) < at(b.model);
                     });
  figure.problems = report_problems(report);
  figure.y_max = choose_y_max(figure);
  return figure;
}

} // namespace

FastPFigure fast_p_figure(const Report& report, Restriction restriction) {
  return build_fast_p_figure(
      report, restriction, [](const TurnRecord& turn) { return turn.model; },
      report_models(report));
}

bool holds_both_languages(const Report& report) {
  const auto has = [&](std::string_view language) {
    return std::any_of(report.turns.begin(), report.turns.end(),
                       [&](const TurnRecord& turn) { return turn.language == language; });
  };
  return has("cuda") && has("triton");
}

std::string language_series(std::string_view language, std::string_view model, bool many_models) {
  const std::string name = language == "cuda"     ? "CUDA-PTX"
                           : language == "triton" ? "Triton"
                                                  : std::string(language);
  return many_models ? std::string(model) + " · " + name : name;
}

FastPFigure language_fast_p_figure(const Report& report) {
  const std::vector<std::string> models = report_models(report);
  const bool many = models.size() > 1;
  std::vector<std::string> series;
  for (const std::string& model : models)
    for (const std::string_view language : {"cuda", "triton"})
      series.push_back(language_series(language, model, many));
  FastPFigure figure = build_fast_p_figure(
      report, Restriction::any_correct,
      [many](const TurnRecord& turn) { return language_series(turn.language, turn.model, many); },
      std::move(series));
  figure.series = FastPSeries::languages;
  return figure;
}

std::vector<TransitionMatrix> transition_matrices(const Report& report) {
  std::vector<TransitionMatrix> out;
  for (const CategoryStats& stats : report.categories) {
    TransitionMatrix matrix;
    matrix.model = stats.model;
    for (const auto& info : store::kTurnCategories) {
      if (info.value == TurnCategory::infra)
        continue;
      const bool seen =
          std::any_of(stats.transitions.begin(), stats.transitions.end(), [&](const auto& entry) {
            return entry.first.first == info.value || entry.first.second == info.value;
          });
      if (info.value != TurnCategory::static_only || seen)
        matrix.categories.push_back(info.value);
    }
    for (const TurnCategory from : matrix.categories) {
      std::vector<std::int64_t> row;
      for (const TurnCategory to : matrix.categories) {
        const auto it = stats.transitions.find({from, to});
        row.push_back(it == stats.transitions.end() ? 0 : it->second);
        matrix.total += row.back();
        matrix.max_count = std::max(matrix.max_count, row.back());
      }
      matrix.counts.push_back(std::move(row));
    }
    out.push_back(std::move(matrix));
  }
  return out;
}

} // namespace ptxbench::report
