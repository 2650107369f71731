// Paper Figure 3 (Fast_p of Triton vs CUDA-PTX per problem) on a run holding both languages,
// worked out by hand, in every report format; and its absence from a one-language run.
//
// The run (alpha / gemm / v1, turn limit 8, unrestricted Fast_p):
//   CUDA    T0: C(0.5), C(1.5)             N = 2, speedups 0.5, 1.5
//   Triton  T1: compile, C(0.8)            N = 2, speedup 0.8
//   Fast_p at the default thresholds p = 0, 0.5, 0.8, 1:
//     CUDA-PTX 2/2, 1/2, 1/2, 1/2          Triton 1/2, 1/2, 0, 0
//   x axis: [0.1, 10]; curve points CUDA {0.1, 0.5, 1.5, 10}: 1, 1/2, 0, 0;
//   Triton {0.1, 0.8, 10}: 1/2, 0, 0.
// With a second model (beta, CUDA only: C(2.0)) the series carry the model's name.
#include "figure_test_support.hpp"
#include "report/figures.hpp"
#include "report/format.hpp"
#include "report/plot_figures.hpp"
#include "report_test_support.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace ptxbench::report {
namespace {

using testing::expect_values;
using testing::render;
using testing::ScratchDir;

store::TrajectoryKey key(std::string model, trace::Language language, std::int64_t sample) {
  store::TrajectoryKey k{std::move(model), "gemm", "v1", sample};
  k.language = language;
  return k;
}

Report two_language_report(const std::filesystem::path& dir, bool second_model = false) {
  using testing::correct;
  auto run = testing::create_run(dir);
  testing::CallCounter calls;
  testing::write_trajectory(*run, key("alpha", trace::Language::cuda, 0),
                            {correct(0.5, "present"), correct(1.5, "present")}, calls);
  testing::write_trajectory(*run, key("alpha", trace::Language::triton, 1),
                            {testing::error(store::TurnCategory::compile), correct(0.8, "present")},
                            calls);
  if (second_model)
    testing::write_trajectory(*run, key("beta", trace::Language::cuda, 0),
                              {correct(2.0, "present")}, calls);
  run.reset();
  auto model = load_run(dir);
  if (!model)
    throw util::Fatal(model.error().message);
  Report report = build_report(*model);
  report.sources = {"two-languages"};
  return report;
}

std::uint32_t rgb_of(Colour c) {
  const auto channel = [](double v) { return static_cast<std::uint32_t>(std::lround(v * 255)); };
  return channel(c.r) << 16 | channel(c.g) << 8 | channel(c.b);
}

std::vector<double> means(const FastPCurve& curve) {
  std::vector<double> out;
  for (const Spread& s : curve.at_thresholds)
    out.push_back(s.mean.value_or(-1));
  return out;
}

TEST(LanguageFigure, OneCurvePerLanguageWithTheHandWorkedValues) {
  ScratchDir dir;
  const Report report = two_language_report(dir.path());
  ASSERT_TRUE(holds_both_languages(report));
  const FastPFigure figure = language_fast_p_figure(report);
  EXPECT_EQ(figure.series, FastPSeries::languages);
  EXPECT_EQ(figure.restriction, Restriction::any_correct);
  EXPECT_EQ(figure.models, (std::vector<std::string>{"CUDA-PTX", "Triton"}));
  ASSERT_EQ(figure.panels.size(), 1u);
  ASSERT_EQ(figure.panels[0].curves.size(), 2u);
  const FastPCurve& cuda = figure.panels[0].curves[0];
  const FastPCurve& triton = figure.panels[0].curves[1];
  EXPECT_EQ(cuda.model, "CUDA-PTX");
  expect_values(cuda.p, {0.1, 0.5, 1.5, 10});
  expect_values(cuda.mean, {1, 0.5, 0, 0});
  expect_values(means(cuda), {1, 0.5, 0.5, 0.5});
  EXPECT_DOUBLE_EQ(*cuda.best, 1.5);
  EXPECT_EQ(triton.model, "Triton");
  expect_values(triton.p, {0.1, 0.8, 10});
  expect_values(triton.mean, {0.5, 0, 0});
  expect_values(means(triton), {0.5, 0.5, 0, 0});
  EXPECT_DOUBLE_EQ(*triton.best, 0.8);
}

TEST(LanguageFigure, SeveralModelsNameTheModelInEachSeries) {
  ScratchDir dir;
  const FastPFigure figure = language_fast_p_figure(two_language_report(dir.path(), true));
  EXPECT_EQ(figure.models,
            (std::vector<std::string>{"alpha · CUDA-PTX", "alpha · Triton", "beta · CUDA-PTX"}));
  ASSERT_EQ(figure.panels.at(0).curves.size(), 3u);
  EXPECT_DOUBLE_EQ(*figure.panels[0].curves[2].best, 2.0);
}

TEST(LanguageFigure, AOneLanguageRunHasNone) {
  ScratchDir dir;
  const Report report = testing::synthetic_report(dir.path());
  EXPECT_FALSE(holds_both_languages(report));
  EXPECT_EQ(render(report, "md").find("paper Figure 3"), std::string::npos);
  EXPECT_EQ(render(report, "csv").find("fast_p_languages"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(render(report, "json"))["fast_p_by_language"].is_null());
  auto drawn = draw_figures(report);
  ASSERT_TRUE(drawn) << drawn.error().message;
  for (const Figure& f : *drawn)
    EXPECT_NE(f.name, "fast_p_languages");
}

TEST(LanguageFigure, IsDrawnAsPngAndSvgBetweenTheFastPFiguresAndTheTransitions) {
  ScratchDir dir;
  auto drawn = draw_figures(two_language_report(dir.path() / "run"));
  ASSERT_TRUE(drawn) << drawn.error().message;
  ASSERT_EQ(drawn->size(), 5u);
  const Figure& f = (*drawn)[2];
  EXPECT_EQ(f.name, "fast_p_languages");
  EXPECT_EQ(f.title, "Fast_p (≤8 turns), Triton vs CUDA-PTX: correct, speedup > p");
  ASSERT_TRUE(f.png.starts_with(testing::kPngSignature));
  const testing::Image image = testing::decode_png(f.png);
  EXPECT_GT(image.count_near(0x1f77b4, 6), 300); // series 0, CUDA-PTX
  EXPECT_GT(image.count_near(rgb_of(model_colour(1)), 6), 100) << "no Triton line";
  std::filesystem::create_directories(dir.path() / "svg");
  const auto svg = dir.path() / "svg" / "fast_p_languages.svg";
  ASSERT_TRUE(util::write_file_atomic(svg, f.svg));
  const auto parsed = testing::parse_svg(svg);
  ASSERT_FALSE(parsed.contains("error")) << parsed["error"];
  EXPECT_EQ(parsed["title"], f.title);
}

TEST(LanguageFigure, EveryFormatCarriesItsNumbers) {
  ScratchDir dir;
  const Report report = two_language_report(dir.path());
  const std::string md = render(report, "md");
  EXPECT_NE(md.find("## Fast_p of Triton vs CUDA-PTX (%) (paper Figure 3)"), std::string::npos);
  EXPECT_NE(md.find("| – | gemm | Triton | 0.8 | 0.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| – | gemm | CUDA-PTX | 1 | 50.0 |"), std::string::npos) << md;
  const std::string csv = render(report, "csv");
  EXPECT_NE(csv.find("fast_p_languages,,gemm,Triton,8,0.8,0,0,0,1"), std::string::npos) << csv;
  const auto json = nlohmann::json::parse(render(report, "json"))["fast_p_by_language"];
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[1]["series"], "Triton");
  EXPECT_EQ(json[1]["fast_p"][1]["p"], 0.5);
  EXPECT_DOUBLE_EQ(json[1]["fast_p"][1]["mean"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(json[0]["best_speedup"].get<double>(), 1.5);
  const std::string html = render(report, "html");
  EXPECT_NE(html.find("paper Figure 3"), std::string::npos);
}

} // namespace
} // namespace ptxbench::report
