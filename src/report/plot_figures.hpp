// The report's figures drawn with cairo: Fast_p^Inst and Fast_p curves (paper Figure 2), Fast_p
// of Triton vs CUDA-PTX when the runs hold both languages (paper Figure 3), reasoning length and
// error categories by turn (paper Figure 7) and the error-transition heat maps (paper Figure 9),
// each as PNG and SVG. With plan conditions each series is a model · condition, so fast_p_inst
// is paper Figure 10.
#pragma once

#include "report/figures.hpp"
#include "report/plot_cairo.hpp"
#include "report/report.hpp"
#include "util/error.hpp"

#include <span>
#include <string>
#include <vector>

namespace ptxbench::report {

// One drawn figure; `name` is the file stem (name.png, name.svg) and the HTML anchor.
struct Figure {
  std::string name;
  std::string title;
  std::string png;
  std::string svg;
};

// The frame every figure shares: outer margin, title band, and the text inks.
constexpr double kFigureMargin = 16;
constexpr double kFigureHeaderHeight = 62;
constexpr Colour kFigureInk = colour(0x222222);
constexpr Colour kFigureMuted = colour(0x666666);

// The colour of the model at `index` in legend order (FastPFigure::models); the palette repeats
// after eight models. Model 0 is 0x1f77b4.
Colour model_colour(std::size_t index);

// The title band of a figure: `title` in bold and `subtitle` in the muted ink beneath it.
void draw_figure_header(Canvas& canvas, const std::string& title, const std::string& subtitle);

// fast_p_inst, fast_p, fast_p_languages (only when holds_both_languages), per_turn, transitions;
// an error
// when cairo cannot be loaded (cairo_api()).
util::Expected<std::vector<Figure>> draw_figures(const Report& report);
util::Expected<Figure> draw_fast_p(const FastPFigure& figure);
util::Expected<Figure> draw_transitions(std::span<const TransitionMatrix> matrices);
// Paper Figure 7 per series: reasoning tokens by turn and the category mix by turn (per_turn).
util::Expected<Figure> draw_per_turn(std::span<const CategoryStats> stats);

} // namespace ptxbench::report
