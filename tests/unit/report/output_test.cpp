// Report formats against golden files (regenerate with PTXBENCH_UPDATE_GOLDEN=1), the format
// factory, and the messages for a missing or empty run.
#include "report/format.hpp"
#include "report/report.hpp"
#include "report_test_support.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ptxbench::report {
namespace {

using testing::ScratchDir;

Report synthetic_report(const std::filesystem::path& dir) {
  testing::write_synthetic_run(dir);
  auto run = load_run(dir);
  if (!run) throw util::Fatal(run.error().message);
  Report report = build_report(*run);
  report.sources = {"synthetic"}; // the scratch path changes from run to run
  return report;
}

void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(PTXBENCH_TEST_DATA) + "/report/" + name;
  if (std::getenv("PTXBENCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream golden(path, std::ios::binary);
  ASSERT_TRUE(golden) << path << " missing; run with PTXBENCH_UPDATE_GOLDEN=1";
  std::stringstream expected;
  expected << golden.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "regenerate with PTXBENCH_UPDATE_GOLDEN=1";
}

std::string render(const Report& report, std::string_view format) {
  auto renderer = make_format(format);
  if (!renderer) throw util::Fatal(renderer.error().message);
  return concatenate((*renderer)->render(report));
}

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
}

TEST(ReportFormats, FactoryKnowsEveryFormatAndRejectsOthers) {
  for (const std::string_view name : format_names()) {
    auto format = make_format(name);
    ASSERT_TRUE(format);
    EXPECT_EQ((*format)->name(), name);
  }
  auto unknown = make_format("html");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown report format 'html'"), std::string::npos);
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
  EXPECT_NE(run.error().message.find("is not a run directory (no run.sqlite)"),
            std::string::npos);
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

struct CommandResult {
  int status = -1;
  std::string out;
};

CommandResult run_binary(const std::string& arguments) {
  CommandResult run;
  const std::string command = std::string(PTXBENCH_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  run.status = ::pclose(pipe);
  return run;
}

TEST(ReportCommand, WritesEveryCsvFileUnderOut) {
  ScratchDir dir;
  testing::write_synthetic_run(dir.path() / "run");
  const auto result = run_binary("report " + (dir.path() / "run").string() + " --format csv --out " +
                                 (dir.path() / "out").string());
  ASSERT_EQ(result.status, 0) << result.out;
  for (const char* name : {"table1.csv", "table7.csv", "summary.csv", "metrics.csv", "turns.csv",
                           "categories.csv", "transitions.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "out" / name)) << name;
}

TEST(ReportCommand, MissingAndEmptyRunsExitWithUsageAndAMessage) {
  ScratchDir dir;
  const auto missing = run_binary("report " + (dir.path() / "absent").string());
  EXPECT_EQ(WEXITSTATUS(missing.status), 2);
  EXPECT_NE(missing.out.find("does not exist"), std::string::npos) << missing.out;
  testing::create_run(dir.path() / "empty");
  const auto empty = run_binary("report " + (dir.path() / "empty").string());
  EXPECT_EQ(WEXITSTATUS(empty.status), 2);
  EXPECT_NE(empty.out.find("nothing to report"), std::string::npos) << empty.out;
}

} // namespace
} // namespace ptxbench::report
