// The error-transition figure (paper Figure 9) as heat maps, one per model: row = category of a
// counted turn, column = category of the next counted turn of the same trajectory, cell = how
// often that happened, shaded by its share of the model's largest cell. Also the list of every
// figure the report draws.
#include "report/plot_figures.hpp"

#include <algorithm>
#include <array>
#include <fmt/core.h>

namespace ptxbench::report {
namespace {

constexpr double kCellWidth = 58;
constexpr double kCellHeight = 30;
constexpr double kRowLabels = 118;   // width left of the matrix
constexpr double kColumnLabels = 96; // height above the matrix
constexpr double kPanelTitle = 28;
constexpr std::size_t kColumns = 3; // panels per row
constexpr Colour kEmpty = colour(0xf5f5f5);
constexpr Colour kGridLine = colour(0xffffff);
constexpr Colour kHot = colour(0x08519c);

constexpr std::array<std::uint32_t, 8> kPalette{0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e,
                                                0x9467bd, 0x8c564b, 0xe377c2, 0x17becf};

double panel_width(const TransitionMatrix& m) {
  return kRowLabels + static_cast<double>(m.categories.size()) * kCellWidth + 28;
}
double panel_height(const TransitionMatrix& m) {
  return kPanelTitle + kColumnLabels + static_cast<double>(m.categories.size()) * kCellHeight + 24;
}

void draw_cell(Canvas& canvas, const Rect& cell, std::int64_t count, std::int64_t max_count) {
  if (count == 0) {
    canvas.fill_rect(cell, kEmpty);
  } else {
    const double share = static_cast<double>(count) / static_cast<double>(max_count);
    canvas.fill_rect(cell, mix(colour(0xffffff), kHot, 0.12 + 0.88 * share));
    canvas.text({cell.x + cell.width / 2, cell.y + cell.height / 2}, std::to_string(count),
                {12, Weight::bold, Align::middle, Anchor::middle, 0,
                 share > 0.5 ? colour(0xffffff) : kFigureInk});
  }
  canvas.stroke_rect(cell, kGridLine, 1.5);
}

void draw_matrix(Canvas& canvas, const TransitionMatrix& m, Point origin) {
  canvas.text({origin.x, origin.y + 18},
              fmt::format("{} — {} transition{}", m.model, m.total, m.total == 1 ? "" : "s"),
              {13, Weight::bold, Align::start, Anchor::baseline, 0, kFigureInk});
  const double left = origin.x + kRowLabels;
  const double top = origin.y + kPanelTitle + kColumnLabels;
  canvas.text({left, top - kColumnLabels + 12}, "to: turn t+1 →",
              {10.5, Weight::normal, Align::start, Anchor::baseline, 0, kFigureMuted});
  canvas.text({origin.x, top - 8}, "from: turn t ↓",
              {10.5, Weight::normal, Align::start, Anchor::baseline, 0, kFigureMuted});
  for (std::size_t i = 0; i < m.categories.size(); ++i) {
    const std::string_view name = store::to_string(m.categories[i]);
    const double column_x = left + (static_cast<double>(i) + 0.5) * kCellWidth;
    canvas.text({column_x - 2, top - 6}, name,
                {11, Weight::normal, Align::start, Anchor::middle, 45, kFigureInk});
    const double row_y = top + (static_cast<double>(i) + 0.5) * kCellHeight;
    canvas.text({left - 8, row_y}, name,
                {11, Weight::normal, Align::end, Anchor::middle, 0, kFigureInk});
    for (std::size_t j = 0; j < m.categories.size(); ++j)
      draw_cell(canvas,
                Rect{left + static_cast<double>(j) * kCellWidth,
                     top + static_cast<double>(i) * kCellHeight, kCellWidth, kCellHeight},
                m.counts[i][j], m.max_count);
  }
}

} // namespace

void draw_figure_header(Canvas& canvas, const std::string& title, const std::string& subtitle) {
  canvas.text({kFigureMargin, 28}, title,
              {16, Weight::bold, Align::start, Anchor::baseline, 0, kFigureInk});
  canvas.text({kFigureMargin, 50}, subtitle,
              {11.5, Weight::normal, Align::start, Anchor::baseline, 0, kFigureMuted});
}

Colour model_colour(std::size_t index) {
  return colour(kPalette[index % kPalette.size()]);
}

util::Expected<Figure> draw_transitions(std::span<const TransitionMatrix> matrices) {
  double cell_width = 0;
  double cell_height = 0;
  for (const TransitionMatrix& m : matrices) {
    cell_width = std::max(cell_width, panel_width(m));
    cell_height = std::max(cell_height, panel_height(m));
  }
  const std::size_t columns = std::clamp<std::size_t>(matrices.size(), 1, kColumns);
  const std::size_t rows = (matrices.size() + columns - 1) / columns;
  const double width =
      std::max(2 * kFigureMargin + static_cast<double>(columns) * cell_width, 620.0);
  const double height =
      kFigureHeaderHeight + static_cast<double>(rows) * cell_height + kFigureMargin;
  const std::string title = "Error-state transitions between consecutive counted turns";
  PTXBENCH_TRY_ASSIGN(
      auto picture, render(width, height, title, [&](Canvas& canvas) {
        draw_figure_header(canvas, title,
                           "All problems and prompt variants · infra turns excluded · shade: "
                           "share of the model's largest cell");
        for (std::size_t k = 0; k < matrices.size(); ++k) {
          const std::size_t row = k / columns;
          const std::size_t column = k % columns;
          draw_matrix(canvas, matrices[k],
                      {kFigureMargin + static_cast<double>(column) * cell_width,
                       kFigureHeaderHeight + static_cast<double>(row) * cell_height});
        }
      }));
  return Figure{"transitions", title, std::move(picture.png), std::move(picture.svg)};
}

util::Expected<std::vector<Figure>> draw_figures(const Report& report) {
  std::vector<Figure> figures;
  for (const Restriction restriction :
       {Restriction::target_instruction, Restriction::any_correct}) {
    PTXBENCH_TRY_ASSIGN(auto figure, draw_fast_p(fast_p_figure(report, restriction)));
    figures.push_back(std::move(figure));
  }
  if (holds_both_languages(report)) {
    PTXBENCH_TRY_ASSIGN(auto languages, draw_fast_p(language_fast_p_figure(report)));
    figures.push_back(std::move(languages));
  }
  PTXBENCH_TRY_ASSIGN(auto per_turn, draw_per_turn(report.categories));
  figures.push_back(std::move(per_turn));
  const std::vector<TransitionMatrix> matrices = transition_matrices(report);
  PTXBENCH_TRY_ASSIGN(auto transitions, draw_transitions(matrices));
  figures.push_back(std::move(transitions));
  return figures;
}

} // namespace ptxbench::report
