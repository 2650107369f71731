// The data behind the report's figures, computed from a Report without drawing anything: Fast_p
// curves per GPU × problem × model (paper Figure 2), Fast_p of Triton vs CUDA-PTX per GPU ×
// problem (paper Figure 3) and turn-to-turn error transitions per model (paper Figure 9).
// figures.cpp says how; plot_figures.cpp draws them.
#pragma once

#include "report/metrics.hpp"
#include "report/report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::report {

// One model's Fast_p (or Fast_p^Inst) as a step function of the threshold: the values at p[i]
// hold on [p[i], p[i+1]) — Fast_p counts speedups strictly above p, so it drops at each one.
struct FastPCurve {
  std::string model;        // the series: a model, or in the language figure a language (and model)
  std::vector<double> p;    // ascending, from the axis minimum to the axis maximum
  std::vector<double> mean; // across prompt variants
  std::vector<double> low;  // minimum across prompt variants
  std::vector<double> high; // maximum across prompt variants
  std::optional<double> best; // best qualifying speedup of any variant: the curve's label
  int variants = 0;           // prompt variants with a counted turn
  // Fast_p at each of the report's thresholds (MetricOptions::fast_p_thresholds), across the
  // prompt variants: the table beside the figure.
  std::vector<Spread> at_thresholds;
};

struct FastPPanel {
  std::string gpu; // empty when the runs do not say
  std::string problem;
  std::vector<FastPCurve> curves; // by model name
};

// What a figure's series are: models (Figure 2) or candidate languages (Figure 3).
enum class FastPSeries : std::uint8_t { models = 1, languages = 2 };

struct FastPFigure {
  Restriction restriction = Restriction::target_instruction;
  FastPSeries series = FastPSeries::models;
  int limit = 8;      // turns within this many counted turns
  double p_min = 0.1; // x axis (log scale): whole decades, see figures.cpp
  double p_max = 10.0;
  double y_max = 1.0;                // one y axis for every panel
  std::vector<std::string> gpus;     // panel rows
  std::vector<std::string> problems; // panel columns
  std::vector<std::string> models;   // legend order (series); a series' colour is its index here
  std::vector<FastPPanel> panels;    // by GPU, then problem; combinations without turns absent
};

// At the report's largest turn limit.
FastPFigure fast_p_figure(const Report& report, Restriction restriction);

// Whether the report's turns hold both candidate languages, CUDA and Triton: then it has
// Figure 3.
bool holds_both_languages(const Report& report);

// The legend name of a language series: "CUDA-PTX" or "Triton" (the paper's names), prefixed
// with "<model> · " when the report holds more than one model.
std::string language_series(std::string_view language, std::string_view model, bool many_models);

// Paper Figure 3: unrestricted Fast_p (correct, speedup > p) per GPU × problem with one curve per
// language (and model), at the report's largest turn limit; series CUDA-PTX before Triton.
FastPFigure language_fast_p_figure(const Report& report);

// Transitions between consecutive counted turns of one model's trajectories.
struct TransitionMatrix {
  std::string model;
  std::vector<store::TurnCategory> categories;   // row (from) and column (to) order
  std::vector<std::vector<std::int64_t>> counts; // [from][to]
  std::int64_t total = 0;
  std::int64_t max_count = 0;
};

// One per model, in the report's model order. Rows and columns are the paper's seven
// categories, plus static_only where that model has such a transition.
std::vector<TransitionMatrix> transition_matrices(const Report& report);

} // namespace ptxbench::report
