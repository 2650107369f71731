// The per-turn figure (paper Figure 7): for each series (model, or model · condition), how long
// the model reasoned at each counted turn — the median reasoning tokens with the band from the
// 25th to the 75th percentile — and what the turns became — the share of each error category
// (and correct) among that turn's counted turns, as a stacked bar. Both panels of a series
// share the turn axis; the token axis is shared by every series so lengths compare.
#include "report/plot_figures.hpp"

#include <algorithm>
#include <array>
#include <fmt/core.h>

namespace ptxbench::report {
namespace {

constexpr double kTurnPanelWidth = 300;
constexpr double kTurnPanelHeight = 170;
constexpr double kTurnAxisLeft = 56;
constexpr double kTurnAxisBottom = 30;
constexpr double kTurnSeriesTitle = 24;
constexpr double kTurnSeriesGap = 22;
constexpr double kTurnLegendHeight = 26;

// One colour per category, in kTurnCategories order (infra never drawn).
constexpr std::array<std::uint32_t, 9> kTurnCategoryColours{
    0xd62728, 0xff7f0e, 0x9467bd, 0x8c564b, 0x7f7f7f, 0xe377c2, 0x2ca02c, 0xcccccc, 0x17becf};

Colour per_turn_category_colour(store::TurnCategory category) {
  return colour(kTurnCategoryColours[static_cast<std::size_t>(category) - 1]);
}

int per_turn_last_turn(std::span<const CategoryStats> stats) {
  int turns = 1;
  for (const CategoryStats& s : stats)
    if (!s.by_turn.empty())
      turns = std::max(turns, s.by_turn.rbegin()->first);
  return turns;
}

std::int64_t per_turn_token_axis_max(std::span<const CategoryStats> stats) {
  std::int64_t most = 0;
  for (const CategoryStats& s : stats)
    for (const auto& [turn, tokens] : s.reasoning_by_turn)
      if (const auto q = quartiles(tokens))
        most = std::max(most, q->high);
  return std::max<std::int64_t>(most, 1);
}

double per_turn_turn_x(const Rect& plot, int turn, int turns) {
  return plot.x + (static_cast<double>(turn) - 0.5) / static_cast<double>(turns) * plot.width;
}

void per_turn_draw_axes(Canvas& canvas, const Rect& plot, int turns, std::string_view y_label) {
  canvas.stroke_rect(plot, colour(0xbbbbbb), 1);
  for (int turn = 1; turn <= turns; ++turn)
    canvas.text({per_turn_turn_x(plot, turn, turns), plot.y + plot.height + 14},
                std::to_string(turn),
                {10, Weight::normal, Align::middle, Anchor::baseline, 0, kFigureMuted});
  canvas.text({plot.x + plot.width / 2, plot.y + plot.height + 27}, "counted turn",
              {10, Weight::normal, Align::middle, Anchor::baseline, 0, kFigureMuted});
  canvas.text({plot.x - 40, plot.y + plot.height / 2}, y_label,
              {10, Weight::normal, Align::middle, Anchor::baseline, 90, kFigureMuted});
}

void per_turn_draw_reasoning(Canvas& canvas, const CategoryStats& stats, const Rect& plot,
                             int turns, std::int64_t y_max, Colour ink) {
  per_turn_draw_axes(canvas, plot, turns, "reasoning tokens");
  canvas.text({plot.x - 4, plot.y + 4}, std::to_string(y_max),
              {9, Weight::normal, Align::end, Anchor::top, 0, kFigureMuted});
  canvas.text({plot.x - 4, plot.y + plot.height}, "0",
              {9, Weight::normal, Align::end, Anchor::baseline, 0, kFigureMuted});
  const auto y = [&](std::int64_t tokens) {
    return plot.y + plot.height * (1 - static_cast<double>(tokens) / static_cast<double>(y_max));
  };
  std::vector<Point> medians;
  std::vector<Point> band_top;
  std::vector<Point> band_bottom;
  for (const auto& [turn, tokens] : stats.reasoning_by_turn) {
    const auto q = quartiles(tokens);
    if (!q)
      continue;
    const double x = per_turn_turn_x(plot, turn, turns);
    medians.push_back({x, y(q->median)});
    band_top.push_back({x, y(q->high)});
    band_bottom.insert(band_bottom.begin(), Point{x, y(q->low)});
  }
  band_top.insert(band_top.end(), band_bottom.begin(), band_bottom.end());
  if (band_top.size() >= 3)
    canvas.fill_polygon(band_top, ink, 0.18);
  if (medians.size() >= 2)
    canvas.polyline(medians, ink, 2);
  for (const Point& p : medians)
    canvas.fill_rect({p.x - 3, p.y - 3, 6, 6}, ink);
}

void per_turn_draw_categories(Canvas& canvas, const CategoryStats& stats, const Rect& plot,
                              int turns) {
  per_turn_draw_axes(canvas, plot, turns, "share of turns");
  const double bar = plot.width / static_cast<double>(turns) * 0.7;
  for (const auto& [turn, counts] : stats.by_turn) {
    std::int64_t total = 0;
    for (const std::int64_t count : counts)
      total += count;
    if (total == 0)
      continue;
    double top = plot.y + plot.height;
    for (const auto& info : store::kTurnCategories) {
      const std::int64_t count = counts[static_cast<std::size_t>(info.value) - 1];
      if (count == 0)
        continue;
      const double height = plot.height * static_cast<double>(count) / static_cast<double>(total);
      top -= height;
      canvas.fill_rect({per_turn_turn_x(plot, turn, turns) - bar / 2, top, bar, height},
                       per_turn_category_colour(info.value));
    }
  }
}

void per_turn_draw_legend(Canvas& canvas, Point at) {
  double x = at.x;
  for (const auto& info : store::kTurnCategories) {
    if (info.value == store::TurnCategory::infra)
      continue;
    canvas.fill_rect({x, at.y - 9, 10, 10}, per_turn_category_colour(info.value));
    canvas.text({x + 14, at.y}, info.name,
                {10.5, Weight::normal, Align::start, Anchor::baseline, 0, kFigureInk});
    x += 24 + canvas.text_width(info.name, 10.5, Weight::normal);
  }
}

// The figure's numbers as text, for the SVG's <desc>.
std::string per_turn_describe(std::span<const CategoryStats> stats) {
  std::string out;
  for (const CategoryStats& s : stats)
    for (const auto& [turn, tokens] : s.reasoning_by_turn)
      if (const auto q = quartiles(tokens))
        out += fmt::format("{} turn {}: reasoning median {} (p25 {}, p75 {}), {} turns\n", s.model,
                           turn, q->median, q->low, q->high, tokens.size());
  return out;
}

} // namespace

util::Expected<Figure> draw_per_turn(std::span<const CategoryStats> stats) {
  const int turns = per_turn_last_turn(stats);
  const std::int64_t y_max = per_turn_token_axis_max(stats);
  const double row_height = kTurnSeriesTitle + kTurnPanelHeight + kTurnAxisBottom + kTurnSeriesGap;
  const double width = 2 * kFigureMargin + 2 * (kTurnAxisLeft + kTurnPanelWidth) + 24;
  const double height = kFigureHeaderHeight + kTurnLegendHeight +
                        static_cast<double>(std::max<std::size_t>(stats.size(), 1)) * row_height +
                        kFigureMargin;
  const std::string title = "Reasoning length and error categories by turn";
  PTXBENCH_TRY_ASSIGN(
      auto picture,
      render(
          width, height, title,
          [&](Canvas& canvas) {
            draw_figure_header(canvas, title,
                               "Left: median reasoning tokens (band: 25th–75th percentile). "
                               "Right: category mix of the counted turns.");
            per_turn_draw_legend(canvas, {kFigureMargin, kFigureHeaderHeight + 12});
            for (std::size_t k = 0; k < stats.size(); ++k) {
              const double top =
                  kFigureHeaderHeight + kTurnLegendHeight + static_cast<double>(k) * row_height;
              canvas.text({kFigureMargin, top + 16}, stats[k].model,
                          {13, Weight::bold, Align::start, Anchor::baseline, 0, kFigureInk});
              const Rect left{kFigureMargin + kTurnAxisLeft, top + kTurnSeriesTitle,
                              kTurnPanelWidth, kTurnPanelHeight};
              const Rect right{left.x + kTurnPanelWidth + kTurnAxisLeft + 24, left.y,
                               kTurnPanelWidth, kTurnPanelHeight};
              per_turn_draw_reasoning(canvas, stats[k], left, turns, y_max, model_colour(k));
              per_turn_draw_categories(canvas, stats[k], right, turns);
            }
          },
          per_turn_describe(stats)));
  return Figure{"per_turn", title, std::move(picture.png), std::move(picture.svg)};
}

} // namespace ptxbench::report
