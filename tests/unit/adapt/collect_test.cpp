#include "adapt/collect.hpp"
#include "adapt_test_support.hpp"
#include "store/stored_version.hpp"
#include "support/golden.hpp"
#include "util/hash.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;
using store::TurnCategory;
using test::correct;
using test::failed;

// Two trajectories of gemm and one of mha: every failure category, an infra turn that does
// not count, a kernel that failed twice, and correct turns.
void write_benchmark_run(const fs::path& dir) {
  auto run = test::open_run(dir);
  test::add_trajectory(
      *run, test::key("gemm", 0),
      {failed(TurnCategory::compile, "k-compile"),
       test::turn(TurnCategory::infra, "", "evaluator down", store::Counting::not_counted),
       failed(TurnCategory::runtime, "k-runtime"), failed(TurnCategory::compile, "k-compile"),
       correct("k-fast", 1.5), correct("k-slow", 0.5, "not_executed")});
  test::add_trajectory(*run, test::key("gemm", 1, "hopper-08"),
                       {failed(TurnCategory::numerical, "k-numerical"),
                        failed(TurnCategory::banned_library, "k-cublas"),
                        test::turn(TurnCategory::extraction, "", "no code block"),
                        failed(TurnCategory::timeout, "k-timeout")});
  test::add_trajectory(*run, test::key("mha", 0),
                       {failed(TurnCategory::timeout, "m-timeout"), correct("m-ok", 0.9)});
}

std::vector<FailureRecord> failures_in(const fs::path& dir) {
  auto records = read_jsonl<FailureRecord>(dir / "fixit/collect/failures.jsonl", failure_from_json);
  EXPECT_TRUE(records) << records.error().message;
  return records ? *records : std::vector<FailureRecord>{};
}

FixitCollectOptions options_for(const fs::path& run) {
  FixitCollectOptions options;
  options.source.run_dirs = {run};
  return options;
}

TEST(FixitCollect, KeepsFailedCountedTurnsOfTheDefaultCategoriesOncePerSource) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "run");
  auto result = collect_failures(options_for(dir.path() / "run"), dir.path() / "data");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->warnings.empty());
  const auto records = failures_in(dir.path() / "data");
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(result->occurrences, 6);
  EXPECT_EQ(records[0].kernel_source, "k-compile");
  EXPECT_EQ(records[0].occurrences, 2);
  EXPECT_EQ(records[0].turn, 0);
  EXPECT_EQ(records[0].arch, "sm_90a");
  EXPECT_EQ(records[0].feedback, "feedback of k-compile");
  EXPECT_EQ(records[0].system_prompt, "SYSTEM for gemm");
  EXPECT_EQ(records[0].task_prompt, "TASK: implement gemm");
  EXPECT_EQ(records[1].category, "runtime");
  EXPECT_EQ(records[1].turn, 2); // the store index: the infra turn 1 keeps its place
  EXPECT_EQ(records[2].category, "numerical");
  EXPECT_EQ(records[3].category, "timeout");
  EXPECT_EQ(records[4].trajectory_key.problem, "mha");
}

TEST(FixitCollect, IncludeAddsBannedLibraryAndExtraction) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "run");
  auto options = options_for(dir.path() / "run");
  options.categories.push_back("banned_library");
  options.categories.push_back("extraction");
  ASSERT_TRUE(collect_failures(options, dir.path() / "data"));
  const auto records = failures_in(dir.path() / "data");
  ASSERT_EQ(records.size(), 7u);
  EXPECT_EQ(records[3].category, "banned_library");
  EXPECT_EQ(records[4].category, "extraction");
  EXPECT_NE(records[4].kernel_source.find("I wrote this"), std::string::npos); // the reply
}

TEST(FixitCollect, FiltersByVariantProblemAndTurn) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "run");
  auto options = options_for(dir.path() / "run");
  options.source.variants = {"hopper-07"};
  options.source.problems = {"gemm"};
  options.source.max_turn = 2;
  ASSERT_TRUE(collect_failures(options, dir.path() / "data"));
  const auto records = failures_in(dir.path() / "data");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kernel_source, "k-compile");
  EXPECT_EQ(records[0].occurrences, 1); // the turn-3 repeat is past --max-turn
}

TEST(FixitCollect, OutputAndManifestMatchTheGoldenAndASecondRunChangesNothing) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "run");
  ASSERT_TRUE(collect_failures(options_for(dir.path() / "run"), dir.path() / "data"));
  const fs::path out = dir.path() / "data/fixit/collect";
  const std::string failures = test::read(out / "failures.jsonl");
  const std::string manifest = test::read(out / "manifest.json");
  ASSERT_TRUE(collect_failures(options_for(dir.path() / "run"), dir.path() / "data"));
  EXPECT_EQ(test::read(out / "failures.jsonl"), failures);
  EXPECT_EQ(test::read(out / "manifest.json"), manifest);
  // The recorded hash is of the real file, whose run_dir names this test's scratch folder.
  const std::string sha = util::sha256_hex(failures);
  ASSERT_NE(manifest.find(sha), std::string::npos);
  const std::string root = dir.path().string();
  test_support::expect_golden("adapt/collect_failures.jsonl",
                              test::replace_all(failures, root, "SCRATCH"));
  test_support::expect_golden(
      "adapt/collect_manifest.json",
      test::replace_all(test::replace_all(manifest, root, "SCRATCH"), sha, "SHA256"));
}

TEST(FixitCollect, SkipsUnfinishedTrajectoriesWithAWarningOrRefusesWhenStrict) {
  test_support::ScratchDir dir;
  {
    auto run = test::open_run(dir.path() / "run");
    test::add_trajectory(*run, test::key("gemm", 0), {failed(TurnCategory::compile, "a")});
    test::add_trajectory(*run, test::key("gemm", 1), {failed(TurnCategory::compile, "b")},
                         test::Finish::running);
    test::add_trajectory(*run, test::key("gemm", 2), {failed(TurnCategory::compile, "c")},
                         test::Finish::open_turn);
  }
  auto options = options_for(dir.path() / "run");
  auto result = collect_failures(options, dir.path() / "data");
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->warnings.size(), 2u);
  EXPECT_NE(result->warnings[0].find("still being written"), std::string::npos);
  EXPECT_EQ(failures_in(dir.path() / "data").size(), 1u);
  options.source.unfinished = Unfinished::refuse;
  auto strict = collect_failures(options, dir.path() / "strict");
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.error().message.find("--strict"), std::string::npos) << strict.error().message;
  EXPECT_FALSE(fs::exists(dir.path() / "strict"));
}

void set_schema_version(const fs::path& run_dir, int version) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((run_dir / "run.sqlite").c_str(), &db), SQLITE_OK);
  const std::string sql = "UPDATE schema_version SET version = " + std::to_string(version);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

TEST(FixitCollect, RefusesAnotherSchemaVersionWithoutMigratingIt) {
  for (int version : {store::RunStore::kSchemaVersion - 1, store::RunStore::kSchemaVersion + 1}) {
    test_support::ScratchDir dir;
    write_benchmark_run(dir.path() / "run");
    set_schema_version(dir.path() / "run", version);
    auto result = collect_failures(options_for(dir.path() / "run"), dir.path() / "data");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, util::ErrorKind::invalid_input);
    EXPECT_NE(result.error().message.find("schema version " + std::to_string(version) +
                                          ", this build reads version " +
                                          std::to_string(store::RunStore::kSchemaVersion)),
              std::string::npos)
        << result.error().message;
    EXPECT_EQ(store::stored_schema_version(dir.path() / "run").value(), version);
    EXPECT_FALSE(fs::exists(dir.path() / "data"));
  }
}

TEST(FixitCollect, EmptySelectionIsAnErrorAndWritesNothing) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "run");
  auto options = options_for(dir.path() / "run");
  options.source.problems = {"no_such_problem"};
  auto result = collect_failures(options, dir.path() / "data");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("nothing written"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "data"));
}

TEST(FixitCollect, MissingRunDirectoryIsNotFound) {
  test_support::ScratchDir dir;
  auto result = collect_failures(options_for(dir.path() / "absent"), dir.path() / "data");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, util::ErrorKind::not_found);
}

TEST(FixitCollect, DuplicatesAcrossRunsCollapseIntoTheFirst) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "a");
  write_benchmark_run(dir.path() / "b");
  FixitCollectOptions options;
  options.source.run_dirs = {dir.path() / "a", dir.path() / "b"};
  auto result = collect_failures(options, dir.path() / "data");
  ASSERT_TRUE(result);
  const auto records = failures_in(dir.path() / "data");
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0].occurrences, 4);
  EXPECT_EQ(records[0].run_dir, (dir.path() / "a").string());
}

std::vector<CorrectRecord> correct_in(const fs::path& dir) {
  auto records =
      read_jsonl<CorrectRecord>(dir / "kernelgen/collect/correct.jsonl", correct_from_json);
  EXPECT_TRUE(records) << records.error().message;
  return records ? *records : std::vector<CorrectRecord>{};
}

TEST(KernelGenCollect, KeepsCorrectCountedTurnsWithSpeedupAndTarget) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "run");
  KernelGenCollectOptions options;
  options.source.run_dirs = {dir.path() / "run"};
  ASSERT_TRUE(collect_correct(options, dir.path() / "data"));
  const auto records = correct_in(dir.path() / "data");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].kernel_source, "k-fast");
  EXPECT_EQ(records[0].speedup, 1.5);
  EXPECT_EQ(records[0].target_executed, true);
  EXPECT_EQ(records[1].target_executed, false);
  EXPECT_NE(records[0].reply.find("```cuda\nk-fast"), std::string::npos);
}

TEST(KernelGenCollect, TargetOnlyAndBestPerTrajectory) {
  test_support::ScratchDir dir;
  write_benchmark_run(dir.path() / "run");
  KernelGenCollectOptions options;
  options.source.run_dirs = {dir.path() / "run"};
  options.target = TargetFilter::executed_only;
  ASSERT_TRUE(collect_correct(options, dir.path() / "target"));
  EXPECT_EQ(correct_in(dir.path() / "target").size(), 2u); // k-fast, m-ok
  options.target = TargetFilter::any;
  options.per_trajectory = PerTrajectory::best;
  ASSERT_TRUE(collect_correct(options, dir.path() / "best"));
  const auto best = correct_in(dir.path() / "best");
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].kernel_source, "k-fast");
  EXPECT_EQ(best[1].kernel_source, "m-ok");
}

TEST(FixitCollect, MistypedArchInTheStoredRunConfigIsAnErrorNamingItsPath) {
  test_support::ScratchDir dir;
  {
    auto run = store::RunStore::open(dir.path() / "run",
                                     store::RunInfo{"{\"arch\": 90, \"turns\": 5}", "test", ""});
    ASSERT_TRUE(run) << run.error().message;
    test::add_trajectory(**run, test::key("gemm"), {failed(TurnCategory::compile, "k")});
  }
  auto result = collect_failures(options_for(dir.path() / "run"), dir.path() / "data");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(result.error().message,
            (dir.path() / "run").string() +
                ": stored run config: $.arch: expected a string, got integer");
  EXPECT_FALSE(fs::exists(dir.path() / "data/fixit/collect/failures.jsonl"));
}

} // namespace
} // namespace ptxbench::adapt
