// The Fast_p figures (paper Figures 2 and 3): one panel per GPU × problem, x the speedup
// threshold p on a log scale, y the fraction of counted turns; per series (a model, or in
// Figure 3 a candidate language) a mean line over its prompt variants, the min–max band shaded,
// and a vertical label at its best qualifying speedup.
#include "report/plot_figures.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/core.h>

namespace ptxbench::report {
namespace {

constexpr double kPanelWidth = 310;
constexpr double kPanelHeight = 252;
constexpr double kLegendRow = 24;
constexpr double kBandAlpha = 0.18;
constexpr Colour kGrid = colour(0xe6e6e6);
constexpr Colour kAxis = colour(0x444444);

// Maps threshold and fraction to pixels inside one panel's plot area.
class Axes {
public:
  Axes(const FastPFigure& figure, Rect plot)
      : m_plot(plot), m_log_min(std::log10(figure.p_min)), m_log_max(std::log10(figure.p_max)),
        m_y_max(figure.y_max) {}
  double x(double p) const {
    return m_plot.x + m_plot.width * (std::log10(p) - m_log_min) / (m_log_max - m_log_min);
  }
  double y(double fraction) const { return m_plot.y + m_plot.height * (1.0 - fraction / m_y_max); }
  const Rect& plot() const { return m_plot; }

private:
  Rect m_plot;
  double m_log_min;
  double m_log_max;
  double m_y_max;
};

std::string figure_name(const FastPFigure& figure) {
  if (figure.series == FastPSeries::languages)
    return "fast_p_languages";
  return figure.restriction == Restriction::target_instruction ? "fast_p_inst" : "fast_p";
}

std::string figure_title(const FastPFigure& figure) {
  if (figure.series == FastPSeries::languages)
    return fmt::format("Fast_p (≤{} turns), Triton vs CUDA-PTX: correct, speedup > p",
                       figure.limit);
  return figure.restriction == Restriction::target_instruction
             ? fmt::format("Fast_p^Inst. (≤{} turns): correct, target instruction executed, "
                           "speedup > p",
                           figure.limit)
             : fmt::format("Fast_p (≤{} turns): correct, speedup > p", figure.limit);
}

double y_step(double y_max) {
  if (y_max <= 0.2)
    return 0.05;
  if (y_max <= 0.5)
    return 0.1;
  return 0.2;
}

// "Fastₚ" (with "Inst." raised for the target-instruction figure), the rest of the title and
// the reading guide below it; `at` is the title's baseline start.
void draw_title(Canvas& canvas, const FastPFigure& figure, Point at) {
  const TextStyle big{16, Weight::bold, Align::start, Anchor::baseline, 0, kFigureInk};
  const bool inst = figure.restriction == Restriction::target_instruction;
  canvas.text(at, "Fastₚ", big);
  double x = at.x + canvas.text_width("Fastₚ", 16, Weight::bold);
  if (inst) {
    canvas.text({x + 1, at.y - 7}, "Inst.",
                {10, Weight::bold, Align::start, Anchor::baseline, 0, kFigureInk});
    x += canvas.text_width("Inst.", 10, Weight::bold) + 1;
  }
  const std::string rest =
      figure.series == FastPSeries::languages
          ? fmt::format(" (≤{} turns), Triton vs CUDA-PTX: correct, speedup > p", figure.limit)
      : inst ? fmt::format(" (≤{} turns): correct, target instruction executed, speedup > p",
                           figure.limit)
             : fmt::format(" (≤{} turns): correct, speedup > p", figure.limit);
  canvas.text({x, at.y}, rest, {16, Weight::normal, Align::start, Anchor::baseline, 0, kFigureInk});
  canvas.text({at.x, at.y + 22},
              "Line: mean across prompt variants · band: min–max · label: best qualifying "
              "speedup · dotted: p = 1",
              {11.5, Weight::normal, Align::start, Anchor::baseline, 0, kFigureMuted});
}

void draw_y_axis(Canvas& canvas, const Axes& axes, double y_max) {
  const Rect& plot = axes.plot();
  const double step = y_step(y_max);
  for (int k = 0; k * step <= y_max + 1e-9; ++k) {
    const double v = k * step;
    const double y = axes.y(v);
    canvas.line({plot.x, y}, {plot.x + plot.width, y}, kGrid, 1);
    canvas.text({plot.x - 5, y}, fmt::format("{:g}", std::round(v * 100) / 100),
                {10, Weight::normal, Align::end, Anchor::middle, 0, kAxis});
  }
  canvas.text({plot.x - 38, plot.y + plot.height / 2}, "fraction of turns",
              {10.5, Weight::normal, Align::middle, Anchor::baseline, 90, kAxis});
}

void draw_x_axis(Canvas& canvas, const Axes& axes, const FastPFigure& figure) {
  const Rect& plot = axes.plot();
  const double bottom = plot.y + plot.height;
  const int first = static_cast<int>(std::lround(std::log10(figure.p_min)));
  const int last = static_cast<int>(std::lround(std::log10(figure.p_max)));
  for (int decade = first; decade <= last; ++decade) {
    const double p = std::pow(10.0, decade);
    canvas.line({axes.x(p), plot.y}, {axes.x(p), bottom}, kGrid, 1);
    canvas.line({axes.x(p), bottom}, {axes.x(p), bottom + 5}, kAxis, 1);
    canvas.text({axes.x(p), bottom + 8}, fmt::format("{:g}", p),
                {10, Weight::normal, Align::middle, Anchor::top, 0, kAxis});
    for (int m = 2; m <= 9 && decade < last; ++m)
      canvas.line({axes.x(m * p), bottom}, {axes.x(m * p), bottom + 3}, kAxis, 0.8);
  }
  canvas.text({plot.x + plot.width / 2, bottom + 36}, "speedup threshold p (log scale)",
              {10.5, Weight::normal, Align::middle, Anchor::baseline, 0, kAxis});
  canvas.line({axes.x(1.0), plot.y}, {axes.x(1.0), bottom}, kFigureMuted, 1, Stroke::dotted);
}

// The step function through (p[i], v[i]): flat until the next threshold, then a drop.
std::vector<Point> steps(const Axes& axes, const std::vector<double>& p,
                         const std::vector<double>& v) {
  std::vector<Point> points;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (i > 0)
      points.push_back({axes.x(p[i]), axes.y(v[i - 1])});
    points.push_back({axes.x(p[i]), axes.y(v[i])});
  }
  return points;
}

void draw_curve(Canvas& canvas, const Axes& axes, const FastPCurve& curve, Colour c) {
  std::vector<Point> band = steps(axes, curve.p, curve.high);
  const std::vector<Point> low = steps(axes, curve.p, curve.low);
  band.insert(band.end(), low.rbegin(), low.rend());
  canvas.fill_polygon(band, c, kBandAlpha);
  canvas.polyline(steps(axes, curve.p, curve.mean), c, 2.0);
}

// A curve's best-speedup label: where the speedup is and where its text goes.
struct BestLabel {
  double x = 0;    // the best speedup on the x axis
  double text = 0; // the label's x, moved aside when it would cover another label
  std::string label;
  Colour colour;
};

// Labels in x order, each at least one text height from the previous one, kept in the plot.
void spread_labels(std::vector<BestLabel>& labels, const Rect& plot) {
  constexpr double kGap = 13;
  std::sort(labels.begin(), labels.end(),
            [](const BestLabel& a, const BestLabel& b) { return a.x < b.x; });
  for (std::size_t i = 0; i < labels.size(); ++i)
    labels[i].text = i == 0 ? labels[i].x : std::max(labels[i].x, labels[i - 1].text + kGap);
  double limit = plot.x + plot.width - 4;
  // Not std::views::reverse: clang-tidy 14 cannot parse libstdc++ 12's <ranges>.
  // NOLINTNEXTLINE(modernize-loop-convert)
  for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
    it->text = std::min(it->text, limit);
    limit = it->text - kGap;
  }
}

// Vertical "1.012×" labels hanging from the top of the plot, each joined by a dashed line to
// its speedup on the x axis.
void draw_best_labels(Canvas& canvas, const Axes& axes, std::vector<BestLabel> labels) {
  const Rect& plot = axes.plot();
  spread_labels(labels, plot);
  for (const BestLabel& l : labels) {
    const double bottom = plot.y + 4 + canvas.text_width(l.label, 10, Weight::bold);
    canvas.line({l.x, plot.y + plot.height}, {l.x, bottom + 10}, l.colour, 1, Stroke::dashed);
    canvas.line({l.x, bottom + 10}, {l.text, bottom + 3}, l.colour, 1);
    canvas.text({l.text + 1, plot.y + 4}, l.label,
                {10, Weight::bold, Align::end, Anchor::middle, 90, l.colour});
  }
}

std::size_t model_index(const FastPFigure& figure, const std::string& model) {
  return static_cast<std::size_t>(std::find(figure.models.begin(), figure.models.end(), model) -
                                  figure.models.begin());
}

void draw_panel(Canvas& canvas, const FastPFigure& figure, const FastPPanel* panel,
                const std::string& gpu, const std::string& problem, const Rect& frame) {
  const std::string heading = gpu.empty() ? problem : problem + " · " + gpu;
  canvas.text({frame.x + frame.width / 2 + 20, frame.y + 16}, heading,
              {12.5, Weight::bold, Align::middle, Anchor::baseline, 0, kFigureInk});
  const Axes axes(figure, Rect{frame.x + 58, frame.y + 28, frame.width - 74, frame.height - 76});
  draw_y_axis(canvas, axes, figure.y_max);
  draw_x_axis(canvas, axes, figure);
  if (panel == nullptr) {
    canvas.text({axes.plot().x + axes.plot().width / 2, axes.plot().y + axes.plot().height / 2},
                "no turns", {11, Weight::normal, Align::middle, Anchor::middle, 0, kFigureMuted});
  } else {
    canvas.push_clip(axes.plot());
    for (const FastPCurve& curve : panel->curves)
      draw_curve(canvas, axes, curve, model_colour(model_index(figure, curve.model)));
    canvas.pop_clip();
    std::vector<BestLabel> labels;
    for (const FastPCurve& curve : panel->curves)
      if (curve.best)
        labels.push_back(BestLabel{
            std::clamp(axes.x(*curve.best), axes.plot().x, axes.plot().x + axes.plot().width), 0,
            fmt::format("{:.3f}×", *curve.best), model_colour(model_index(figure, curve.model))});
    draw_best_labels(canvas, axes, std::move(labels));
  }
  canvas.stroke_rect(axes.plot(), kAxis, 1);
}

const FastPPanel* find_panel(const FastPFigure& figure, const std::string& gpu,
                             const std::string& problem) {
  for (const FastPPanel& panel : figure.panels)
    if (panel.gpu == gpu && panel.problem == problem)
      return &panel;
  return nullptr;
}

// Rows of legend entries that fit `width`: a swatch (band and line) and the model name.
void draw_legend(Canvas& canvas, const FastPFigure& figure, double top, double width) {
  double x = kFigureMargin;
  double y = top + kLegendRow / 2;
  for (std::size_t i = 0; i < figure.models.size(); ++i) {
    const double entry = 34 + canvas.text_width(figure.models[i], 12, Weight::normal) + 24;
    if (x + entry > width - kFigureMargin && x > kFigureMargin) {
      x = kFigureMargin;
      y += kLegendRow;
    }
    const Colour c = model_colour(i);
    canvas.fill_rect({x, y - 6, 26, 12}, c, kBandAlpha);
    canvas.line({x, y}, {x + 26, y}, c, 2.0);
    canvas.text({x + 34, y}, figure.models[i],
                {12, Weight::normal, Align::start, Anchor::middle, 0, kFigureInk});
    x += entry;
  }
}

int legend_rows(const FastPFigure& figure, double width) {
  // 7 pixels per character is a safe upper bound for 12 px DejaVu Sans.
  double x = kFigureMargin;
  int rows = 1;
  for (const std::string& model : figure.models) {
    const double entry = 58 + 7.0 * static_cast<double>(model.size());
    if (x + entry > width - kFigureMargin && x > kFigureMargin) {
      x = kFigureMargin;
      ++rows;
    }
    x += entry;
  }
  return rows;
}

} // namespace

util::Expected<Figure> draw_fast_p(const FastPFigure& figure) {
  const std::size_t columns = std::max<std::size_t>(1, figure.problems.size());
  const std::size_t rows = std::max<std::size_t>(1, figure.gpus.size());
  const double width =
      std::max(2 * kFigureMargin + static_cast<double>(columns) * kPanelWidth, 760.0);
  const double legend_top = kFigureHeaderHeight + static_cast<double>(rows) * kPanelHeight;
  const double height = legend_top + legend_rows(figure, width) * kLegendRow + kFigureMargin;
  const std::string title = figure_title(figure);
  PTXBENCH_TRY_ASSIGN(
      auto picture, render(width, height, title, [&](Canvas& canvas) {
        draw_title(canvas, figure, {kFigureMargin, 28});
        for (std::size_t r = 0; r < figure.gpus.size(); ++r)
          for (std::size_t c = 0; c < figure.problems.size(); ++c) {
            const Rect frame{kFigureMargin + static_cast<double>(c) * kPanelWidth,
                             kFigureHeaderHeight + static_cast<double>(r) * kPanelHeight,
                             kPanelWidth, kPanelHeight};
            draw_panel(canvas, figure, find_panel(figure, figure.gpus[r], figure.problems[c]),
                       figure.gpus[r], figure.problems[c], frame);
          }
        draw_legend(canvas, figure, legend_top, width);
      }));
  return Figure{figure_name(figure), title, std::move(picture.png), std::move(picture.svg)};
}

} // namespace ptxbench::report
