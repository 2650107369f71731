// The figures' data worked out by hand on the synthetic run (report_test_support.hpp), and the
// drawn PNG and SVG files checked for what a reader needs: a real PNG with the model's line
// colour in it, a well-formed SVG with paths and its title.
//
// Fast_p^Inst at ≤8 turns (qualifying = correct ∧ present), alpha / gemm:
//   v1: N = 6, qualifying speedups 0.5 (T0), 0.4 (T1)   v2: N = 4, qualifying 0.6 (T3)
//   x axis: speedups 0.4…0.6 lie in the decade [0.1, 1] → at least [0.1, 10] → [0.1, 10].
//   points {0.1, 0.4, 0.5, 0.6, 10}:
//     v1: 2/6, 1/6, 0, 0, 0      v2: 1/4, 1/4, 1/4, 0, 0
//     mean 7/24, 5/24, 1/8, 0, 0; min 1/4, 1/6, 0, 0, 0; max 1/3, 1/4, 1/4, 0, 0
//   best qualifying speedup 0.6. alpha / mha: no correct turn → points {0.1, 10}, all 0.
//   y axis: largest band value 1/3 → ceil(10/3 + 0.5) / 10 = 0.4.
// Fast_p at ≤8 (any correct): v1 speedups 0.5, 0.9, 0.4, 1.2 (N = 6); v2 0.7, 0.6 (N = 4).
//   points {0.1, 0.4, 0.5, 0.6, 0.7, 0.9, 1.2, 10};
//   v1: 4/6, 3/6, 2/6, 2/6, 2/6, 1/6, 0, 0    v2: 2/4, 2/4, 2/4, 1/4, 0, 0, 0, 0
//   mean at 0.1 = 7/12, at 0.6 = 7/24, at 0.9 = 1/12; best 1.2; y axis ceil(20/3 + 0.5) → 0.8.
#include "figure_test_support.hpp"
#include "report/figures.hpp"
#include "report/plot_figures.hpp"
#include "report_test_support.hpp"

#include <gtest/gtest.h>

namespace ptxbench::report {
namespace {

using testing::expect_values;
using testing::ScratchDir;

Report synthetic(const std::filesystem::path& dir) {
  testing::write_synthetic_run(dir);
  auto run = load_run(dir);
  if (!run)
    throw util::Fatal(run.error().message);
  return build_report(*run);
}

TEST(FastPFigure, TargetInstructionCurvesStepAtEachQualifyingSpeedup) {
  ScratchDir dir;
  const FastPFigure figure = fast_p_figure(synthetic(dir.path()), Restriction::target_instruction);
  EXPECT_EQ(figure.limit, 8);
  EXPECT_DOUBLE_EQ(figure.p_min, 0.1);
  EXPECT_DOUBLE_EQ(figure.p_max, 10.0);
  EXPECT_DOUBLE_EQ(figure.y_max, 0.4);
  EXPECT_EQ(figure.gpus, std::vector<std::string>{""});
  EXPECT_EQ(figure.problems, (std::vector<std::string>{"gemm", "mha"}));
  EXPECT_EQ(figure.models, std::vector<std::string>{"alpha"});
  ASSERT_EQ(figure.panels.size(), 2u);
  const FastPCurve& gemm = figure.panels[0].curves.at(0);
  EXPECT_EQ(figure.panels[0].problem, "gemm");
  EXPECT_EQ(gemm.variants, 2);
  expect_values(gemm.p, {0.1, 0.4, 0.5, 0.6, 10});
  expect_values(gemm.mean, {7.0 / 24, 5.0 / 24, 1.0 / 8, 0, 0});
  expect_values(gemm.low, {1.0 / 4, 1.0 / 6, 0, 0, 0});
  expect_values(gemm.high, {1.0 / 3, 1.0 / 4, 1.0 / 4, 0, 0});
  EXPECT_DOUBLE_EQ(*gemm.best, 0.6);
  const FastPCurve& mha = figure.panels[1].curves.at(0);
  expect_values(mha.p, {0.1, 10});
  expect_values(mha.high, {0, 0});
  EXPECT_FALSE(mha.best.has_value());
}

TEST(FastPFigure, AnyCorrectCurveCountsEveryCorrectTimedTurn) {
  ScratchDir dir;
  const FastPFigure figure = fast_p_figure(synthetic(dir.path()), Restriction::any_correct);
  EXPECT_DOUBLE_EQ(figure.y_max, 0.8);
  const FastPCurve& gemm = figure.panels.at(0).curves.at(0);
  expect_values(gemm.p, {0.1, 0.4, 0.5, 0.6, 0.7, 0.9, 1.2, 10});
  expect_values(gemm.mean, {7.0 / 12, 1.0 / 2, 5.0 / 12, 7.0 / 24, 1.0 / 6, 1.0 / 12, 0, 0});
  expect_values(gemm.low, {1.0 / 2, 1.0 / 2, 1.0 / 3, 1.0 / 4, 0, 0, 0, 0});
  expect_values(gemm.high, {2.0 / 3, 1.0 / 2, 1.0 / 2, 1.0 / 3, 1.0 / 3, 1.0 / 6, 0, 0});
  EXPECT_DOUBLE_EQ(*gemm.best, 1.2);
}

TEST(FastPFigure, PanelsAreSplitByTheGpuEachTrajectoryRanOn) {
  ScratchDir dir;
  testing::write_gpu_run(dir.path());
  auto run = load_run(dir.path());
  ASSERT_TRUE(run) << run.error().message;
  const FastPFigure figure = fast_p_figure(build_report(*run), Restriction::target_instruction);
  EXPECT_EQ(figure.gpus, (std::vector<std::string>{"NVIDIA B200", "NVIDIA H200"}));
  ASSERT_EQ(figure.panels.size(), 2u);
  EXPECT_EQ(figure.panels[0].gpu, "NVIDIA B200");
  EXPECT_FALSE(figure.panels[0].curves.at(0).best.has_value());
  const FastPCurve& h200 = figure.panels[1].curves.at(0);
  expect_values(h200.p, {0.1, 2.0, 10});
  expect_values(h200.mean, {1, 0, 0});
  EXPECT_DOUBLE_EQ(figure.y_max, 1.0);
}

TEST(TransitionMatrix, HoldsEveryTransitionOfCountedTurns) {
  ScratchDir dir;
  const auto matrices = transition_matrices(synthetic(dir.path()));
  ASSERT_EQ(matrices.size(), 1u);
  const TransitionMatrix& m = matrices.front();
  using store::TurnCategory;
  ASSERT_EQ(m.categories.size(), 7u); // no static_only transition
  EXPECT_EQ(m.categories.back(), TurnCategory::correct);
  auto at = [&](TurnCategory from, TurnCategory to) {
    return m.counts[static_cast<std::size_t>(from) - 1][static_cast<std::size_t>(to) - 1];
  };
  EXPECT_EQ(m.total, 7);
  EXPECT_EQ(m.max_count, 2);
  EXPECT_EQ(at(TurnCategory::correct, TurnCategory::correct), 2);
  EXPECT_EQ(at(TurnCategory::compile, TurnCategory::correct), 1);
  EXPECT_EQ(at(TurnCategory::correct, TurnCategory::numerical), 1);
  EXPECT_EQ(at(TurnCategory::numerical, TurnCategory::correct), 1);
  EXPECT_EQ(at(TurnCategory::runtime, TurnCategory::runtime), 1);
  EXPECT_EQ(at(TurnCategory::extraction, TurnCategory::compile), 1);
}

class DrawnFigures : public ::testing::Test {
protected:
  void SetUp() override {
    auto drawn = draw_figures(synthetic(m_dir.path() / "run"));
    ASSERT_TRUE(drawn) << drawn.error().message;
    m_figures = std::move(*drawn);
  }
  const Figure& figure(const std::string& name) const {
    for (const Figure& f : m_figures)
      if (f.name == name)
        return f;
    throw std::runtime_error("no figure " + name);
  }
  ScratchDir m_dir;
  std::vector<Figure> m_figures;
};

TEST_F(DrawnFigures, AreTheTwoFastPFiguresThePerTurnFigureAndTheTransitions) {
  ASSERT_EQ(m_figures.size(), 4u);
  EXPECT_EQ(m_figures[0].name, "fast_p_inst");
  EXPECT_EQ(m_figures[1].name, "fast_p");
  EXPECT_EQ(m_figures[2].name, "per_turn");
  EXPECT_EQ(m_figures[3].name, "transitions");
}

TEST_F(DrawnFigures, PngsAreRealImagesWithTheModelColour) {
  for (const Figure& f : m_figures) {
    ASSERT_TRUE(f.png.starts_with(testing::kPngSignature)) << f.name;
    const testing::Image image = testing::decode_png(f.png);
    EXPECT_GE(image.width, 1000) << f.name; // drawn at twice the pixel size
    EXPECT_GT(image.count_not_white(), image.width * 20) << f.name;
  }
  // The mean line (2 px at 2×) of model 0 is #1f77b4; the band is a paler tint of it.
  const testing::Image inst = testing::decode_png(figure("fast_p_inst").png);
  EXPECT_GT(inst.count_near(0x1f77b4, 6), 300);
  // The transition heat map's fullest cell is the darkest blue.
  const testing::Image transitions = testing::decode_png(figure("transitions").png);
  EXPECT_GT(transitions.count_near(0x08519c, 6), 1000);
}

TEST_F(DrawnFigures, SvgsAreWellFormedWithPathsAndTitles) {
  for (const Figure& f : m_figures) {
    const auto parsed = testing::parse_svg(m_dir.write(f.name + ".svg", f.svg));
    ASSERT_FALSE(parsed.contains("error")) << f.name << ": " << parsed["error"];
    EXPECT_EQ(parsed["root"], "{http://www.w3.org/2000/svg}svg");
    EXPECT_EQ(parsed["title"], f.title);
    EXPECT_GT(parsed["paths"].get<int>(), 20) << f.name; // lines, bands, glyph outlines
    EXPECT_GT(parsed["uses"].get<int>(), 20) << f.name;  // every drawn character
  }
  EXPECT_EQ(figure("fast_p_inst").title,
            "Fast_p^Inst. (≤8 turns): correct, target instruction executed, speedup > p");
  EXPECT_EQ(figure("fast_p").title, "Fast_p (≤8 turns): correct, speedup > p");
  EXPECT_EQ(figure("transitions").title,
            "Error-state transitions between consecutive counted turns");
}
// Paper Figure 7's data for the synthetic run (report_test_support.hpp: the k-th replied call
// reports 100·k² reasoning tokens): counted turn 1 of T0…T4 had calls 1, 4, 7, 9, 11, turn 2
// calls 2, 5, 8, 10, 12 (T1's infra turn skipped), turn 3 calls 3 and 6.
TEST(PerTurnFigure, ReasoningQuartilesByCountedTurnAreTheNearestRanks) {
  ScratchDir dir;
  const Report report = synthetic(dir.path() / "run");
  ASSERT_EQ(report.categories.size(), 1u);
  const auto& by_turn = report.categories.front().reasoning_by_turn;
  ASSERT_EQ(by_turn.size(), 3u);
  EXPECT_EQ(by_turn.at(1), (std::vector<std::int64_t>{100, 1600, 4900, 8100, 12100}));
  const auto first = quartiles(by_turn.at(1));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->low, 1600);
  EXPECT_EQ(first->median, 4900);
  EXPECT_EQ(first->high, 8100);
  EXPECT_EQ(first->max, 12100);
  const auto second = quartiles(by_turn.at(2));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->median, 6400);
  const auto third = quartiles(by_turn.at(3));
  ASSERT_TRUE(third);
  EXPECT_EQ(third->low, 900);
  EXPECT_EQ(third->median, 900);
  EXPECT_EQ(third->high, 3600);
  EXPECT_FALSE(quartiles({}));
}

TEST_F(DrawnFigures, ThePerTurnFigureDrawsTheCategoryBarsAndDescribesTheMedians) {
  const Figure& f = figure("per_turn");
  const testing::Image image = testing::decode_png(f.png);
  EXPECT_GT(image.count_near(0x2ca02c, 6), 500) << "no correct-turn bars";
  EXPECT_GT(image.count_near(0xd62728, 6), 200) << "no compile bars";
  EXPECT_NE(f.svg.find("alpha turn 1: reasoning median 4900 (p25 1600, p75 8100), 5 turns"),
            std::string::npos);
}

} // namespace
} // namespace ptxbench::report
