#include "adapt/stats_figure.hpp"

#include "adapt/stats.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <array>
#include <fmt/core.h>
#include <map>

namespace ptxbench::adapt {
namespace {

using report::Align;
using report::Anchor;
using report::Canvas;
using report::Colour;
using report::Weight;

constexpr double kMargin = 16;
constexpr double kHeader = 62;
constexpr double kPanelTitle = 26;
constexpr double kRow = 22;
constexpr double kBar = 14;
constexpr double kLabels = 150;
constexpr double kBars = 190;
constexpr double kPanel = kLabels + kBars + 56;
constexpr double kLegend = 40;
constexpr Colour kInk = report::colour(0x222222);
constexpr Colour kMuted = report::colour(0x666666);
constexpr std::array<std::uint32_t, 8> kPalette{0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e,
                                                0x9467bd, 0x8c564b, 0xe377c2, 0x17becf};

// One bar: its label and its count per category.
struct Bar {
  std::string label;
  std::map<std::string, std::int64_t> parts;
  std::int64_t total = 0;
};

struct Panel {
  std::string title;
  std::vector<Bar> bars;
};

struct Layout {
  std::vector<Panel> panels; // problem, category, turn
  std::vector<std::string> categories;
  std::int64_t max_total = 1;
  std::int64_t total = 0;
  std::size_t max_bars = 0;
};

template <typename Key>
void add(std::map<Key, Bar>& bars, const Key& key, std::string label, const std::string& category,
         std::int64_t count) {
  Bar& bar = bars.try_emplace(key, Bar{std::move(label), {}, 0}).first->second;
  bar.parts[category] += count;
  bar.total += count;
}

template <typename Key> std::vector<Bar> values(std::map<Key, Bar> bars) {
  std::vector<Bar> out;
  for (auto& [key, bar] : bars)
    out.push_back(std::move(bar));
  return out;
}

// Problems and categories by name, turns by number.
Layout layout(const Composition& counts) {
  std::map<std::string, Bar> problems, categories;
  std::map<std::int64_t, Bar> turns;
  Layout out;
  for (const auto& [key, count] : counts) {
    const auto& [problem, category, turn] = key;
    add(problems, problem, problem, category, count);
    add(categories, category, category, category, count);
    add(turns, turn, "turn " + std::to_string(turn), category, count);
    if (std::ranges::find(out.categories, category) == out.categories.end())
      out.categories.push_back(category);
    out.total += count;
  }
  out.panels = {{"Rows per problem", values(std::move(problems))},
                {"Rows per category", values(std::move(categories))},
                {"Rows per turn", values(std::move(turns))}};
  for (const Panel& panel : out.panels) {
    out.max_bars = std::max(out.max_bars, panel.bars.size());
    for (const Bar& bar : panel.bars)
      out.max_total = std::max(out.max_total, bar.total);
  }
  std::ranges::sort(out.categories);
  return out;
}

Colour category_colour(const Layout& l, const std::string& category) {
  const auto index =
      static_cast<std::size_t>(std::ranges::find(l.categories, category) - l.categories.begin());
  return report::colour(kPalette[index % kPalette.size()]);
}

void draw_panel(Canvas& canvas, const Layout& l, const Panel& panel, double x) {
  canvas.text({x, kHeader + 16}, panel.title,
              {13, Weight::bold, Align::start, Anchor::baseline, 0, kInk});
  for (std::size_t i = 0; i < panel.bars.size(); ++i) {
    const Bar& bar = panel.bars[i];
    const double y = kHeader + kPanelTitle + static_cast<double>(i) * kRow;
    canvas.text({x + kLabels - 8, y + kBar / 2}, bar.label,
                {11, Weight::normal, Align::end, Anchor::middle, 0, kInk});
    double left = x + kLabels;
    for (const auto& [category, count] : bar.parts) {
      const double width = kBars * static_cast<double>(count) / static_cast<double>(l.max_total);
      canvas.fill_rect({left, y, width, kBar}, category_colour(l, category));
      left += width;
    }
    canvas.text({left + 6, y + kBar / 2}, std::to_string(bar.total),
                {11, Weight::bold, Align::start, Anchor::middle, 0, kInk});
  }
}

void draw_legend(Canvas& canvas, const Layout& l, double y) {
  double x = kMargin;
  for (const std::string& category : l.categories) {
    canvas.fill_rect({x, y - 10, 12, 12}, category_colour(l, category));
    canvas.text({x + 18, y}, category,
                {11, Weight::normal, Align::start, Anchor::baseline, 0, kInk});
    x += 30 + canvas.text_width(category, 11, Weight::normal);
  }
}

// Every bar's label and count, one per line, for the SVG's <desc>.
std::string description(const Layout& l) {
  std::string out = fmt::format("{} rows.", l.total);
  for (const Panel& panel : l.panels) {
    out += "\n" + panel.title + ":";
    for (const Bar& bar : panel.bars)
      out += fmt::format("\n{}: {}", bar.label, bar.total);
  }
  return out + "\n";
}

} // namespace

util::Expected<report::Figure> draw_composition(const Composition& counts, DatasetKind kind) {
  const Layout l = layout(counts);
  const double width = 2 * kMargin + 3 * kPanel;
  const double rows_height =
      kPanelTitle + static_cast<double>(std::max<std::size_t>(l.max_bars, 1)) * kRow;
  const double height = kHeader + rows_height + kLegend;
  const std::string title =
      fmt::format("{} data set composition: {} rows", to_string(kind), l.total);
  PTXBENCH_TRY_ASSIGN(
      auto picture,
      report::render(
          width, height, title,
          [&](Canvas& canvas) {
            canvas.text({kMargin, 28}, title,
                        {16, Weight::bold, Align::start, Anchor::baseline, 0, kInk});
            canvas.text({kMargin, 50},
                        "Rows of sft.jsonl (build manifest) · bars stacked by category",
                        {11.5, Weight::normal, Align::start, Anchor::baseline, 0, kMuted});
            for (std::size_t k = 0; k < l.panels.size(); ++k)
              draw_panel(canvas, l, l.panels[k], kMargin + static_cast<double>(k) * kPanel);
            draw_legend(canvas, l, kHeader + rows_height + 24);
          },
          description(l)));
  return report::Figure{"composition", title, std::move(picture.png), std::move(picture.svg)};
}

util::Expected<std::vector<std::filesystem::path>>
write_composition_figure(const std::filesystem::path& dir, DatasetKind kind) {
  PTXBENCH_TRY_ASSIGN(auto counts, build_composition(dir, kind));
  PTXBENCH_TRY_ASSIGN(auto figure, draw_composition(counts, kind));
  const std::filesystem::path stats = stage_dir(dir, kind, "stats");
  const std::vector<std::filesystem::path> paths{stats / "composition.png",
                                                 stats / "composition.svg"};
  PTXBENCH_TRY(write_if_changed(paths[0], figure.png));
  PTXBENCH_TRY(write_if_changed(paths[1], figure.svg));
  return paths;
}

} // namespace ptxbench::adapt
