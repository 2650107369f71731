// Issue 17 items 9 and 10: a static-only run reports its metrics as undefined (–), with a
// notice, and no GPU it did not use; every format says why the trajectories ended.
#include "report/format.hpp"
#include "report/report.hpp"
#include "report_test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ptxbench::report {
namespace {

using namespace testing;

std::map<std::string, std::string> render_files(const Report& report, std::string_view format) {
  auto renderer = make_format(format);
  if (!renderer)
    throw util::Fatal(renderer.error().message);
  std::map<std::string, std::string> out;
  for (const OutputFile& file : (*renderer)->render(report, {}))
    out[file.name] = file.text;
  return out;
}

TurnSpec static_only() {
  return TurnSpec{store::TurnCategory::static_only, store::Counting::counted, {}, "present", {}};
}

// Two static-only trajectories of a CPU-only run whose configuration names the arch sm_90a.
Report static_run_report(const std::filesystem::path& dir) {
  auto run = create_run(dir, R"({"turns":8,"arch":"sm_90a"})");
  CallCounter calls;
  write_trajectory(*run, {"alpha", "gemm", "v1", 0}, {static_only(), static_only()}, calls);
  write_trajectory(*run, {"alpha", "gemm", "v1", 1},
                   {error(store::TurnCategory::compile), static_only()}, calls);
  run.reset();
  auto model = load_run(dir);
  if (!model)
    throw util::Fatal(model.error().message);
  return build_report(*model);
}

TEST(StaticOnlyReport, EveryMetricIsUndefinedNotZero) {
  ScratchDir dir;
  const Report report = static_run_report(dir.path());
  EXPECT_TRUE(report.static_only);
  ASSERT_EQ(report.groups.size(), 1u);
  for (const auto& [key, value] : report.groups[0].variants[0].values)
    EXPECT_FALSE(value.has_value()) << to_string(key.metric) << " limit " << key.limit;
}

TEST(StaticOnlyReport, MarkdownAndHtmlShowDashesAndTheNotice) {
  ScratchDir dir;
  const Report report = static_run_report(dir.path());
  for (const std::string_view format : {"md", "html"}) {
    const std::string text = render(report, format);
    EXPECT_NE(text.find("Static-only run"), std::string::npos) << format;
    EXPECT_EQ(text.find("0.0 / 0.0 / 0.0"), std::string::npos) << format << "\n" << text;
    EXPECT_NE(text.find("– / – / – (– / – / –)"), std::string::npos) << format;
  }
}

TEST(StaticOnlyReport, JsonAndCsvSayStaticOnlyAndLeaveTheValuesEmpty) {
  ScratchDir dir;
  const Report report = static_run_report(dir.path());
  const auto json = nlohmann::json::parse(render(report, "json"));
  EXPECT_EQ(json["static_only"], true);
  for (const auto& row : json["groups"][0]["across_variants"])
    EXPECT_TRUE(row["mean"].is_null()) << row.dump();
  const auto csv = render_files(report, "csv");
  EXPECT_EQ(csv.at("run.csv"), "trajectories,finished_turns,not_counted_turns,static_only\n"
                               "2,4,0,1\n");
  EXPECT_NE(csv.at("table1.csv").find("alpha,gemm,1,,,,,,,0,0,1"), std::string::npos)
      << csv.at("table1.csv");
}

TEST(StaticOnlyReport, TheGpuColumnDoesNotClaimTheConfiguredArch) {
  ScratchDir dir;
  const Report report = static_run_report(dir.path());
  ASSERT_EQ(report.usage.size(), 1u);
  EXPECT_EQ(report.usage[0].gpu, kNoGpu);
  EXPECT_EQ(render(report, "md").find("| sm_90a"), std::string::npos);
}

TEST(StaticOnlyReport, ARunWithAGpuTurnIsNotStaticOnly) {
  ScratchDir dir;
  EXPECT_FALSE(synthetic_report(dir.path()).static_only);
}

// The synthetic run's trajectories (all turn_budget) plus, in a second run, one that ran out
// of context, one the model API failed and one left unfinished (killed).
Report ends_report(const ScratchDir& first, const ScratchDir& second) {
  write_synthetic_run(first.path());
  {
    auto run = create_run(second.path());
    CallCounter calls;
    auto overflow = run->open_trajectory({"alpha", "gemm", "v1", 7});
    EXPECT_TRUE(overflow && run->finish_trajectory(*overflow, store::ExitReason::context_overflow));
    auto failed = run->open_trajectory({"alpha", "mha", "v1", 7});
    EXPECT_TRUE(failed && run->finish_trajectory(*failed, store::ExitReason::model_error));
    auto killed = run->open_trajectory({"alpha", "mha", "v1", 8});
    if (!killed)
      throw util::Fatal(killed.error().message);
    write_turn(*run, *killed, error(store::TurnCategory::compile), calls);
  }
  const std::vector<std::filesystem::path> dirs{first.path(), second.path()};
  auto model = load_runs(dirs);
  if (!model)
    throw util::Fatal(model.error().message);
  return build_report(*model);
}

TEST(TrajectoryEnds, CountedPerModelAndProblemIncludingTrajectoriesWithoutTurns) {
  ScratchDir first, second;
  const Report report = ends_report(first, second);
  ASSERT_EQ(report.ends.size(), 2u);
  const auto index = [](store::ExitReason r) { return static_cast<std::size_t>(r) - 1; };
  EXPECT_EQ(report.ends[0].problem, "gemm");
  EXPECT_EQ(report.ends[0].counts[index(store::ExitReason::turn_budget)], 4);
  EXPECT_EQ(report.ends[0].counts[index(store::ExitReason::context_overflow)], 1);
  EXPECT_EQ(report.ends[1].problem, "mha");
  EXPECT_EQ(report.ends[1].counts[index(store::ExitReason::turn_budget)], 1);
  EXPECT_EQ(report.ends[1].counts[index(store::ExitReason::model_error)], 1);
  EXPECT_EQ(report.ends[1].counts[kEndCount - 1], 1) << "the killed one is unfinished";
}

TEST(TrajectoryEnds, EveryFormatShowsThem) {
  ScratchDir first, second;
  const Report report = ends_report(first, second);
  const std::string md = render(report, "md");
  EXPECT_NE(md.find("## Why trajectories ended"), std::string::npos);
  EXPECT_NE(md.find("| Model | Problem | target_met | turn_budget | context_overflow | "
                    "model_error | infra_error | cancelled | unfinished |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| alpha | gemm | 0 | 4 | 1 | 0 | 0 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| alpha | mha | 0 | 1 | 0 | 1 | 0 | 0 | 1 |"), std::string::npos) << md;
  EXPECT_NE(render(report, "html").find("Why trajectories ended"), std::string::npos);
  EXPECT_NE(render(report, "html").find("context_overflow"), std::string::npos);
  const auto csv = render_files(report, "csv");
  EXPECT_EQ(csv.at("ends.csv"), "model,problem,target_met,turn_budget,context_overflow,"
                                "model_error,infra_error,cancelled,unfinished\n"
                                "alpha,gemm,0,4,1,0,0,0,0\nalpha,mha,0,1,0,1,0,0,1\n");
  const auto json = nlohmann::json::parse(render(report, "json"));
  ASSERT_EQ(json["trajectory_ends"].size(), 2u);
  EXPECT_EQ(json["trajectory_ends"][1]["model_error"], 1);
  EXPECT_EQ(json["trajectory_ends"][1]["unfinished"], 1);
  EXPECT_EQ(json["trajectory_ends"][0]["context_overflow"], 1);
}

} // namespace
} // namespace ptxbench::report
