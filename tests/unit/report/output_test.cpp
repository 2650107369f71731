// Report formats against golden files (regenerate with PTXBENCH_UPDATE_GOLDEN=1), the format
// factory, and the messages for a missing or empty run.
#include "report/format.hpp"
#include "report/report.hpp"
#include "report_test_support.hpp"
#include "support/ptxbench_cli.hpp"

#include <array>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ptxbench::report {
namespace {

using testing::ScratchDir;

using testing::expect_golden;
using testing::render;
using testing::synthetic_report;

TEST(ReportOutput, MarkdownMatchesGolden) {
  ScratchDir dir;
  expect_golden("synthetic.md", render(synthetic_report(dir.path()), "md"));
}

TEST(ReportOutput, CsvMatchesGolden) {
  ScratchDir dir;
  expect_golden("synthetic.csv.txt", render(synthetic_report(dir.path()), "csv"));
}

TEST(ReportOutput, JsonHoldsEveryGroupAndMetric) {
  ScratchDir dir;
  const auto json = nlohmann::json::parse(render(synthetic_report(dir.path()), "json"));
  ASSERT_EQ(json["groups"].size(), 2u);
  EXPECT_EQ(json["groups"][0]["problem"], "gemm");
  EXPECT_EQ(json["not_counted_turns"], 1);
  bool found = false;
  for (const auto& row : json["groups"][0]["across_variants"])
    if (row["metric"] == "best_speedup" && row["limit"] == 8) {
      EXPECT_DOUBLE_EQ(row["mean"].get<double>(), 0.875);
      found = true;
    }
  EXPECT_TRUE(found);
  ASSERT_EQ(json["usage"].size(), 1u);
  EXPECT_EQ(json["usage"][0]["model"], "alpha");
  EXPECT_TRUE(json["usage"][0]["gpu"].is_null());
  EXPECT_DOUBLE_EQ(json["usage"][0]["reasoning_tokens_per_call"]["median"].get<double>(), 4250.0);
  EXPECT_EQ(json["usage"][0]["reasoning_tokens_per_call"]["max"], 14400);
  EXPECT_EQ(json["usage"][0]["spent"]["attempts"], 14);
}

TEST(ReportFormats, FactoryKnowsEveryFormatAndRejectsOthers) {
  for (const std::string_view name : format_names()) {
    auto format = make_format(name);
    ASSERT_TRUE(format);
    EXPECT_EQ((*format)->name(), name);
  }
  EXPECT_EQ(format_names(), (std::vector<std::string_view>{"md", "csv", "json", "html"}));
  auto unknown = make_format("pdf");
  ASSERT_FALSE(unknown);
  EXPECT_NE(
      unknown.error().message.find("unknown report format 'pdf' (known: md, csv, json, html)"),
      std::string::npos);
}

TEST(LoadRun, MissingDirectoryIsNotFoundWithItsPath) {
  ScratchDir dir;
  auto run = load_run(dir.path() / "nope");
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().kind, util::ErrorKind::not_found);
  EXPECT_NE(run.error().message.find("nope does not exist"), std::string::npos);
}

TEST(LoadRun, FolderWithoutDatabaseIsNotARunDirectory) {
  ScratchDir dir;
  auto run = load_run(dir.path());
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().message.find("is not a run directory (no run.sqlite)"), std::string::npos);
}

TEST(LoadRun, EmptyRunLoadsButHasNothingToReport) {
  ScratchDir dir;
  testing::create_run(dir.path());
  auto run = load_run(dir.path());
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_TRUE(run->turns.empty());
  const util::Status status = require_turns(*run);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("nothing to report"), std::string::npos);
  EXPECT_NE(status.error().message.find("holds no finished turn (0 trajectories)"),
            std::string::npos);
}

TEST(LoadRuns, MergesRunsWithDistinctTrajectoryNumbers) {
  ScratchDir a;
  testing::write_synthetic_run(a.path() / "one");
  testing::write_synthetic_run(a.path() / "two");
  const std::array dirs{a.path() / "one", a.path() / "two"};
  auto run = load_runs(dirs);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->n_trajectories, 10);
  EXPECT_EQ(run->turns.size(), 26u);
  EXPECT_EQ(run->turns.back().trajectory, 9);
}

// Issue 17 item 11: the same folder given twice (however spelled) is one run.
TEST(LoadRuns, TheSameRunGivenTwiceIsCountedOnce) {
  ScratchDir a;
  testing::write_synthetic_run(a.path() / "one");
  const std::array dirs{a.path() / "one", a.path() / "." / "one" / ""};
  auto run = load_runs(dirs);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->n_trajectories, 5);
  EXPECT_EQ(run->turns.size(), 13u);
  ASSERT_EQ(run->repeated.size(), 1u);
  EXPECT_EQ(run->sources.size(), 1u);
}

// `ptxbench report ARGS` with stdout and stderr together, as a person sees them.
struct CommandResult {
  int exit_code = -1;
  std::string out;
};

CommandResult run_report(std::vector<std::string> args) {
  args.insert(args.begin(), "report");
  const util::ProcessResult run = test_support::ptxbench_result(std::move(args));
  return {run.exit_code, run.out + run.err};
}

TEST(ReportCommand, WritesEveryCsvFileUnderOut) {
  ScratchDir dir;
  testing::write_synthetic_run(dir.path() / "run");
  const auto result = run_report(
      {(dir.path() / "run").string(), "--format", "csv", "--out", (dir.path() / "out").string()});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  for (const char* name : {"table1.csv", "table7.csv", "summary.csv", "metrics.csv", "turns.csv",
                           "categories.csv", "transitions.csv", "fast_p_curves.csv", "usage.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "out" / name)) << name;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "fast_p.png"));
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReportCommand, HtmlWithOutWritesThePageAndEveryFigureAsPngAndSvg) {
  ScratchDir dir;
  testing::write_synthetic_run(dir.path() / "run");
  const auto out = dir.path() / "out";
  const auto result =
      run_report({(dir.path() / "run").string(), "--format", "html", "--out", out.string()});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(read_file(out / "report.html").find("<svg"), std::string::npos);
  for (const char* stem : {"fast_p_inst", "fast_p", "transitions"}) {
    EXPECT_TRUE(read_file(out / (std::string(stem) + ".png")).starts_with("\x89PNG")) << stem;
    EXPECT_NE(read_file(out / (std::string(stem) + ".svg")).find("<svg"), std::string::npos)
        << stem;
  }
}

TEST(ReportCommand, FiguresFlagAddsFigureFilesAndMarkdownLinksThem) {
  ScratchDir dir;
  testing::write_synthetic_run(dir.path() / "run");
  const auto out = dir.path() / "out";
  const auto result = run_report(
      {(dir.path() / "run").string(), "--format", "md", "--figures", "--out", out.string()});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const std::string md = read_file(out / "report.md");
  EXPECT_NE(md.find("](fast_p_inst.svg)"), std::string::npos);
  EXPECT_NE(md.find("](transitions.svg)"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(out / "fast_p.png"));
}

TEST(ReportCommand, FiguresFlagNeedsOut) {
  ScratchDir dir;
  testing::write_synthetic_run(dir.path() / "run");
  const auto result = run_report({(dir.path() / "run").string(), "--figures"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("--out"), std::string::npos) << result.out;
}

TEST(ReportCommand, ANegativeFastPThresholdIsAUsageError) {
  ScratchDir dir;
  testing::write_synthetic_run(dir.path() / "run");
  const auto result = run_report({(dir.path() / "run").string(), "--fast-p", "0", "-1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("--fast-p: must be a number >= 0, got -1"), std::string::npos)
      << result.out;
}

TEST(ReportCommand, MissingAndEmptyRunsExitWithUsageAndAMessage) {
  ScratchDir dir;
  const auto missing = run_report({(dir.path() / "absent").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("does not exist"), std::string::npos) << missing.out;
  testing::create_run(dir.path() / "empty");
  const auto empty = run_report({(dir.path() / "empty").string()});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.out.find("nothing to report"), std::string::npos) << empty.out;
}

} // namespace
} // namespace ptxbench::report
