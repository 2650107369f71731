// Every metric on the synthetic run of report_test_support.hpp, worked out by hand.
//
// Counted turns (infra dropped, ordinals 1-based) and what they are:
//   v1  T0: 1 compile | 2 C 0.5 present | 3 C 0.9 unknown
//       T1: 1 C 0.4 present | 2 numerical | 3 C 1.2 absent        (the infra turn is skipped)
//   v2  T2: 1 runtime | 2 runtime
//       T3: 1 C 0.7 not_executed | 2 C 0.6 present
//
// v1 ≤1: N=2 (compile, C0.4P): correctness 1/2, target 1/2; best: T1 0.4 → 0.4 (target 0.4);
//        trajectory-level 1/2 (target 1/2); Fast_0 1/2, Fast_0.5 0.
// v1 ≤4 = ≤8: N=6, correct 4 (present 2, unknown 1, absent 1): correctness 4/6, target 2/6;
//        best: T0 0.9, T1 1.2 → 1.05; target: T0 0.5, T1 0.4 → 0.45; peak 1.2 (target 0.5);
//        trajectory-level 2/2 (target 2/2); Fast_0 4/6 (target 2/6); Fast_0.5 2/6 (target 0:
//        0.5 is not > 0.5); Fast_1 1/6 (target 0).
// v2 ≤1: N=2, correct 1 (not_executed): correctness 1/2, target 0; best 0.7, target undefined;
//        trajectory-level 1/2 (target 0); Fast_0.5 1/2 (target 0).
// v2 ≤4: N=4, correct 2: correctness 2/4, target 1/4; best 0.7, target 0.6;
//        trajectory-level 1/2 (target 1/2); Fast_0.5 2/4 (target 1/4); Fast_0.8 0.
// Across v1, v2 (alpha/gemm):
//   correctness ≤1 mean 0.5 [0.5, 0.5]; target ≤1 mean 0.25 [0, 0.5]
//   correctness ≤8 mean (4/6 + 1/2)/2 = 7/12 [1/2, 2/3]; target ≤8 (1/3 + 1/4)/2 = 7/24
//   best ≤1 (0.4 + 0.7)/2 = 0.55; target ≤1 0.4 (defined in 1 variant of 2)
//   best ≤8 (1.05 + 0.7)/2 = 0.875; target ≤8 (0.45 + 0.6)/2 = 0.525
#include "report/metrics.hpp"
#include "report/report.hpp"
#include "report_test_support.hpp"

#include <gtest/gtest.h>

namespace ptxbench::report {
namespace {

using testing::ScratchDir;

class SyntheticRun : public ::testing::Test {
protected:
  void SetUp() override {
    testing::write_synthetic_run(m_dir.path());
    auto run = load_run(m_dir.path());
    ASSERT_TRUE(run) << run.error().message;
    m_report = build_report(*run);
  }
  const GroupResult& group(const std::string& problem) const {
    for (const GroupResult& g : m_report.groups)
      if (g.problem == problem)
        return g;
    throw std::runtime_error("no group " + problem);
  }
  std::optional<double> value(const std::string& variant, Metric metric, int limit,
                              double p = 0) const {
    for (const VariantResult& v : group("gemm").variants)
      if (v.variant == variant)
        return v.values.at(MetricKey{metric, limit, p});
    throw std::runtime_error("no variant " + variant);
  }
  const Spread& across(Metric metric, int limit, double p = 0) const {
    return group("gemm").across.at(MetricKey{metric, limit, p});
  }

  ScratchDir m_dir;
  Report m_report;
};

TEST_F(SyntheticRun, TurnCorrectnessRatesCountTurnsWithinTheLimit) {
  EXPECT_DOUBLE_EQ(*value("v1", Metric::turn_correctness, 1), 0.5);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::target_turn_correctness, 1), 0.5);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::turn_correctness, 4), 4.0 / 6);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::target_turn_correctness, 8), 2.0 / 6);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::turn_correctness, 1), 0.5);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::target_turn_correctness, 1), 0.0);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::turn_correctness, 8), 0.5);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::target_turn_correctness, 4), 0.25);
}

TEST_F(SyntheticRun, BestSpeedupIsPerTrajectoryMaxAveragedOverTrajectories) {
  EXPECT_DOUBLE_EQ(*value("v1", Metric::best_speedup, 1), 0.4);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::best_speedup, 4), 1.05);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::target_best_speedup, 8), 0.45);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::best_speedup, 8), 0.7);
  EXPECT_FALSE(value("v2", Metric::target_best_speedup, 1).has_value());
  EXPECT_DOUBLE_EQ(*value("v2", Metric::target_best_speedup, 4), 0.6);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::peak_speedup, 8), 1.2);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::target_peak_speedup, 8), 0.5);
}

TEST_F(SyntheticRun, FastPCountsCorrectTurnsStrictlyAboveP) {
  EXPECT_DOUBLE_EQ(*value("v1", Metric::fast_p, 1, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::fast_p, 1, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::fast_p, 8, 0.0), 4.0 / 6);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::target_fast_p, 8, 0.0), 2.0 / 6);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::fast_p, 8, 0.5), 2.0 / 6);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::target_fast_p, 8, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::fast_p, 8, 1.0), 1.0 / 6);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::fast_p, 1, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::target_fast_p, 4, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::fast_p, 4, 0.8), 0.0);
}

TEST_F(SyntheticRun, QualifyingSpeedupsAreTheCorrectTimedTurnsWithinTheLimit) {
  std::vector<TurnRecord> v1;
  for (const TurnRecord& turn : m_report.turns)
    if (turn.problem == "gemm" && turn.variant == "v1")
      v1.push_back(turn);
  const auto trajectories = counted_trajectories(v1);
  using V = std::vector<double>;
  EXPECT_EQ(qualifying_speedups(trajectories, 8, Restriction::any_correct),
            (V{0.5, 0.9, 0.4, 1.2}));
  EXPECT_EQ(qualifying_speedups(trajectories, 8, Restriction::target_instruction), (V{0.5, 0.4}));
  EXPECT_EQ(qualifying_speedups(trajectories, 1, Restriction::any_correct), (V{0.4}));
}

TEST_F(SyntheticRun, TrajectoryLevelVariantCountsTrajectoriesWithACorrectTurn) {
  EXPECT_DOUBLE_EQ(*value("v1", Metric::trajectory_correctness, 1), 0.5);
  EXPECT_DOUBLE_EQ(*value("v1", Metric::target_trajectory_correctness, 8), 1.0);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::target_trajectory_correctness, 1), 0.0);
  EXPECT_DOUBLE_EQ(*value("v2", Metric::target_trajectory_correctness, 4), 0.5);
}

TEST_F(SyntheticRun, SpreadAcrossVariantsIsMeanMinMaxOverDefinedVariants) {
  const Spread& c1 = across(Metric::target_turn_correctness, 1);
  EXPECT_DOUBLE_EQ(*c1.mean, 0.25);
  EXPECT_DOUBLE_EQ(*c1.min, 0.0);
  EXPECT_DOUBLE_EQ(*c1.max, 0.5);
  const Spread& c8 = across(Metric::turn_correctness, 8);
  EXPECT_DOUBLE_EQ(*c8.mean, 7.0 / 12);
  EXPECT_DOUBLE_EQ(*c8.min, 0.5);
  EXPECT_DOUBLE_EQ(*c8.max, 4.0 / 6);
  EXPECT_DOUBLE_EQ(*across(Metric::target_turn_correctness, 8).mean, 7.0 / 24);
  EXPECT_DOUBLE_EQ(*across(Metric::best_speedup, 1).mean, 0.55);
  const Spread& t1 = across(Metric::target_best_speedup, 1);
  EXPECT_DOUBLE_EQ(*t1.mean, 0.4);
  EXPECT_EQ(t1.defined, 1);
  EXPECT_EQ(t1.variants, 2);
  EXPECT_DOUBLE_EQ(*across(Metric::best_speedup, 8).mean, 0.875);
  EXPECT_DOUBLE_EQ(*across(Metric::target_best_speedup, 8).mean, 0.525);
}

TEST_F(SyntheticRun, InfraTurnsAreExcludedAndCorrectTurnStatesCountedSeparately) {
  EXPECT_EQ(m_report.not_counted_turns, 1);
  EXPECT_EQ(m_report.finished_turns, 13);
  const TurnCounts& counts = group("gemm").counts.at(8);
  EXPECT_EQ(counts.turns, 10);
  EXPECT_EQ(counts.correct, 6);
  EXPECT_EQ(counts.correct_present, 3);
  EXPECT_EQ(counts.correct_not_executed, 1);
  EXPECT_EQ(counts.correct_absent, 1);
  EXPECT_EQ(counts.correct_unknown, 1);
}

TEST_F(SyntheticRun, ProblemWithoutCorrectTurnHasZeroRatesAndUndefinedSpeedups) {
  const GroupResult& mha = group("mha");
  EXPECT_DOUBLE_EQ(*mha.across.at(MetricKey{Metric::turn_correctness, 8, 0}).mean, 0.0);
  EXPECT_FALSE(mha.across.at(MetricKey{Metric::best_speedup, 8, 0}).mean.has_value());
}

TEST_F(SyntheticRun, CategoriesByTurnAndTransitionsFollowCountedTurns) {
  ASSERT_EQ(m_report.categories.size(), 1u);
  const CategoryStats& stats = m_report.categories.front();
  using store::TurnCategory;
  auto at = [](const CategoryCounts& row, TurnCategory c) {
    return row[static_cast<std::size_t>(c) - 1];
  };
  EXPECT_EQ(at(stats.by_turn.at(1), TurnCategory::correct), 2);
  EXPECT_EQ(at(stats.by_turn.at(1), TurnCategory::extraction), 1);
  EXPECT_EQ(at(stats.by_turn.at(2), TurnCategory::numerical), 1);
  EXPECT_EQ(at(stats.by_turn.at(3), TurnCategory::correct), 2);
  EXPECT_EQ(at(stats.by_turn.at(3), TurnCategory::infra), 0);
  std::int64_t total = 0;
  for (const auto& [pair, count] : stats.transitions)
    total += count;
  EXPECT_EQ(total, 7);
  EXPECT_EQ((stats.transitions.at({TurnCategory::correct, TurnCategory::correct})), 2);
  EXPECT_EQ((stats.transitions.at({TurnCategory::numerical, TurnCategory::correct})), 1);
  EXPECT_EQ((stats.transitions.at({TurnCategory::extraction, TurnCategory::compile})), 1);
}

// Unknown target states must never raise a target-instruction metric.
TEST(UnknownTargetState, IsNeverCountedAsPositive) {
  std::vector<TurnRecord> turns;
  for (std::int64_t i = 0; i < 3; ++i) {
    TurnRecord turn{"m",
                    "p",
                    "v",
                    "cuda",
                    7,
                    0,
                    i,
                    store::TurnCategory::correct,
                    store::Counting::counted,
                    2.0,
                    TargetState::unknown,
                    ""};
    turns.push_back(turn);
  }
  const auto trajectories = counted_trajectories(turns);
  EXPECT_DOUBLE_EQ(*turn_correctness_rate(trajectories, 8, Restriction::any_correct), 1.0);
  EXPECT_DOUBLE_EQ(*turn_correctness_rate(trajectories, 8, Restriction::target_instruction), 0.0);
  EXPECT_DOUBLE_EQ(*fast_p(trajectories, 8, 1.0, Restriction::target_instruction), 0.0);
  EXPECT_DOUBLE_EQ(*trajectory_correctness_rate(trajectories, 8, Restriction::target_instruction),
                   0.0);
  EXPECT_FALSE(best_speedup(trajectories, 8, Restriction::target_instruction).has_value());
  EXPECT_EQ(count_turns(trajectories, 8).correct_unknown, 3);
}

TEST(TargetStateFromVerdicts, StaticAbsentIsKnownAndEverythingUnrecognisedIsUnknown) {
  EXPECT_EQ(target_state_from_verdicts("absent", std::nullopt), TargetState::absent);
  EXPECT_EQ(target_state_from_verdicts("present", "present"), TargetState::present);
  EXPECT_EQ(target_state_from_verdicts("present", "not_executed"), TargetState::not_executed);
  EXPECT_EQ(target_state_from_verdicts("present", "unknown"), TargetState::unknown);
  EXPECT_EQ(target_state_from_verdicts("present", std::nullopt), TargetState::unknown);
  EXPECT_EQ(target_state_from_verdicts("no_rule", "bogus"), TargetState::unknown);
  EXPECT_EQ(target_state_from_verdicts(std::nullopt, std::nullopt), TargetState::unknown);
}

TEST(Spread, IgnoresUndefinedVariants) {
  const std::vector<std::optional<double>> values{std::nullopt, 0.2, 0.6};
  const Spread s = spread(values);
  EXPECT_DOUBLE_EQ(*s.mean, 0.4);
  EXPECT_EQ(s.defined, 2);
  EXPECT_EQ(s.variants, 3);
  EXPECT_FALSE(spread(std::vector<std::optional<double>>{std::nullopt}).mean.has_value());
}

} // namespace
} // namespace ptxbench::report
