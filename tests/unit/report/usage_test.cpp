// Reasoning tokens and spending per model × GPU, and where a turn's GPU comes from, on the runs
// of report_test_support.hpp.
//
// Synthetic run (model alpha, no GPU recorded): 12 replied calls with 100·k² reasoning tokens,
// k = 1…12: 100, 400, 900, 1600, 2500, 3600, 4900, 6400, 8100, 10000, 12100, 14400.
//   sum 100 · 650 = 65000 → mean 65000 / 12 = 5416.67; median (3600 + 4900) / 2 = 4250;
//   max 14400. One failed attempt (the infra turn), not in the statistics.
//   Spent (every attempt, the cut-off turn's call included): attempts 12 + 1 + 1 = 14;
//   input 12 · 1000 + 1000 = 13000; output (65000 + 12 · 200) + 5200 = 72600;
//   reasoning 65000 + 5000 = 70000; cost 12 · 0.01 + 0.5 = 0.62.
// GPU run (model beta, configuration "NVIDIA B200"): the trajectory evaluated on NVIDIA H200
// has one call of 100 reasoning tokens, the unevaluated one (configuration's GPU) 400.
#include "report/report.hpp"
#include "report/usage.hpp"
#include "report_test_support.hpp"

#include <gtest/gtest.h>

namespace ptxbench::report {
namespace {

using testing::ScratchDir;

Report report_of(void (*write)(const std::filesystem::path&), const std::filesystem::path& dir) {
  write(dir);
  auto run = load_run(dir);
  if (!run)
    throw util::Fatal(run.error().message);
  return build_report(*run);
}

TEST(Usage, ReasoningStatisticsCoverRepliedCallsAndSpendingEveryAttempt) {
  ScratchDir dir;
  const Report report = report_of(testing::write_synthetic_run, dir.path());
  ASSERT_EQ(report.usage.size(), 1u);
  const UsageStats& u = report.usage.front();
  EXPECT_EQ(u.model, "alpha");
  EXPECT_EQ(u.gpu, "");
  EXPECT_EQ(u.replied_calls, 12);
  EXPECT_EQ(u.failed_calls, 1);
  EXPECT_DOUBLE_EQ(*u.reasoning_mean, 65000.0 / 12);
  EXPECT_DOUBLE_EQ(*u.reasoning_median, 4250.0);
  EXPECT_EQ(*u.reasoning_max, 14400);
  EXPECT_EQ(u.spent.calls, 14);
  EXPECT_EQ(u.spent.input_tokens, 13000);
  EXPECT_EQ(u.spent.output_tokens, 72600);
  EXPECT_EQ(u.spent.reasoning_tokens, 70000);
  EXPECT_NEAR(u.spent.cost_usd, 0.62, 1e-12);
}

TEST(Usage, RowsSplitByGpuWithEvaluationHardwareBeforeConfiguration) {
  ScratchDir dir;
  const Report report = report_of(testing::write_gpu_run, dir.path());
  ASSERT_EQ(report.usage.size(), 2u);
  EXPECT_EQ(report.usage[0].gpu, "NVIDIA B200");
  EXPECT_DOUBLE_EQ(*report.usage[0].reasoning_mean, 400.0);
  EXPECT_EQ(report.usage[1].gpu, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(*report.usage[1].reasoning_mean, 100.0);
  for (const UsageStats& u : report.usage) {
    EXPECT_EQ(u.model, "beta");
    EXPECT_EQ(u.replied_calls, 1);
    EXPECT_EQ(u.spent.calls, 1);
    EXPECT_NEAR(u.spent.cost_usd, 0.01, 1e-12);
  }
  ASSERT_EQ(report.turns.size(), 2u);
  EXPECT_EQ(report.turns[0].gpu, "NVIDIA H200");
  EXPECT_EQ(report.turns[1].gpu, "NVIDIA B200");
}

TEST(Usage, ModelWithoutRepliedCallsHasUndefinedStatistics) {
  const std::vector<CallRecord> calls{{"m", "", 0, CallOutcome::failed, 0}};
  const std::vector<SpendRecord> spend{{"m", "", 0, store::UsageTotals{1, 0, 0, 0, 0.0, 0}}};
  const auto rows = usage_stats(calls, spend);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].failed_calls, 1);
  EXPECT_FALSE(rows[0].reasoning_mean.has_value());
  EXPECT_FALSE(rows[0].reasoning_median.has_value());
  EXPECT_FALSE(rows[0].reasoning_max.has_value());
}

TEST(Median, IsTheMiddleValueOrTheMeanOfTheMiddleTwo) {
  EXPECT_FALSE(median({}).has_value());
  EXPECT_DOUBLE_EQ(*median({3}), 3.0);
  EXPECT_DOUBLE_EQ(*median({5, 1, 9}), 5.0);
  EXPECT_DOUBLE_EQ(*median({4, 1, 3, 2}), 2.5);
}

TEST(ConfiguredGpu, PrefersGpuThenArchAndIgnoresAnythingElse) {
  EXPECT_EQ(configured_gpu(R"({"gpu":"NVIDIA H100","arch":"sm_90a"})"), "NVIDIA H100");
  EXPECT_EQ(configured_gpu(R"({"arch":"sm_100a"})"), "sm_100a");
  EXPECT_EQ(configured_gpu(R"({"gpu":7,"turns":8})"), "");
  EXPECT_EQ(configured_gpu("[1, 2]"), "");
  EXPECT_EQ(configured_gpu("not json"), "");
}

} // namespace
} // namespace ptxbench::report
