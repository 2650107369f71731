#include "adapt/dataset.hpp"
#include "adapt/pairs.hpp"
#include "adapt_test_support.hpp"
#include "util/hash.hpp"

#include <gtest/gtest.h>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;
using store::TurnCategory;
using test::correct;
using test::failed;

FailureRecord failure(const std::string& kernel, const std::string& problem) {
  FailureRecord f;
  f.kernel_source = kernel;
  f.id = util::sha256_hex(kernel);
  f.trajectory_key = {"student", problem, "hopper-07", 0};
  f.category = "compile";
  f.feedback = "error in " + kernel;
  f.system_prompt = "sys";
  f.task_prompt = "task";
  return f;
}

// Failure A repaired twice (0.2 with target, then 0.1 without), B never repaired, C once with
// an unknown speedup.
void write_repair_data(const fs::path& dir) {
  const std::vector<FailureRecord> failures{failure("A", "gemm"), failure("B", "gemm"),
                                            failure("C", "mha")};
  ASSERT_TRUE(write_if_changed(dir / "fixit/balance/selected.jsonl", to_jsonl(failures)));
  auto run = test::open_run(dir / "fixit/repair/run");
  std::vector<RepairTask> tasks;
  const std::vector<std::vector<test::TurnSpec>> turns{
      {failed(TurnCategory::compile, "A1"), correct("A-fixed-1", 0.2),
       correct("A-fixed-2", 0.1, "not_executed")},
      {failed(TurnCategory::runtime, "B1"), failed(TurnCategory::numerical, "B2")},
      {test::turn(TurnCategory::correct, "C-fixed", "ok")}};
  for (std::size_t i = 0; i < failures.size(); ++i) {
    const auto k = test::key(failures[i].trajectory_key.problem, static_cast<std::int64_t>(i),
                             "hopper-07", "teacher");
    test::add_trajectory(*run, k, turns[i]);
    tasks.push_back(RepairTask{failures[i].id, k});
  }
  ASSERT_TRUE(write_if_changed(dir / "fixit/repair/tasks.jsonl", to_jsonl(tasks)));
}

std::vector<PairRecord> pairs_in(const fs::path& dir) {
  auto records = read_jsonl<PairRecord>(dir / "fixit/pairs/pairs.jsonl", pair_from_json);
  EXPECT_TRUE(records) << records.error().message;
  return records ? *records : std::vector<PairRecord>{};
}

TEST(Pairs, BestKeepsTheFastestRepairOfEachFailure) {
  test_support::ScratchDir dir;
  write_repair_data(dir.path());
  auto result = build_pairs(dir.path(), PairsOptions{});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->tasks, 3);
  EXPECT_EQ(result->repaired, 2);
  const auto pairs = pairs_in(dir.path());
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].repaired_kernel, "A-fixed-1");
  EXPECT_EQ(pairs[0].speedup, 0.2);
  EXPECT_EQ(pairs[0].target_executed, true);
  EXPECT_EQ(pairs[0].repair_turn, 1);
  EXPECT_EQ(pairs[0].teacher_model, "teacher");
  EXPECT_EQ(pairs[0].failure.kernel_source, "A");
  EXPECT_EQ(pairs[0].id, util::sha256_hex(pairs[0].failure.id + util::sha256_hex("A-fixed-1")));
  EXPECT_EQ(pairs[1].repaired_kernel, "C-fixed");
  EXPECT_FALSE(pairs[1].speedup);
}

TEST(Pairs, LatestAndAllModes) {
  test_support::ScratchDir dir;
  write_repair_data(dir.path());
  ASSERT_TRUE(build_pairs(dir.path(), PairsOptions{PairMode::latest, false, std::nullopt}));
  EXPECT_EQ(pairs_in(dir.path())[0].repaired_kernel, "A-fixed-2");
  ASSERT_TRUE(build_pairs(dir.path(), PairsOptions{PairMode::all, false, std::nullopt}));
  EXPECT_EQ(pairs_in(dir.path()).size(), 3u);
}

TEST(Pairs, RequireTargetAndMinSpeedupFilterRepairs) {
  test_support::ScratchDir dir;
  write_repair_data(dir.path());
  ASSERT_TRUE(build_pairs(dir.path(), PairsOptions{PairMode::all, true, std::nullopt}));
  auto pairs = pairs_in(dir.path());
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].repaired_kernel, "A-fixed-1");
  ASSERT_TRUE(build_pairs(dir.path(), PairsOptions{PairMode::all, false, 0.15}));
  pairs = pairs_in(dir.path());
  ASSERT_EQ(pairs.size(), 1u); // 0.1 is too slow, an unknown speedup fails the bar
  EXPECT_EQ(pairs[0].repaired_kernel, "A-fixed-1");
}

TEST(Pairs, NothingPassingIsAnError) {
  test_support::ScratchDir dir;
  write_repair_data(dir.path());
  auto result = build_pairs(dir.path(), PairsOptions{PairMode::all, false, 5.0});
  ASSERT_FALSE(result);
  EXPECT_FALSE(fs::exists(dir.path() / "fixit/pairs"));
}

TEST(Pairs, TaskNamingAnUnknownFailureIsAnError) {
  test_support::ScratchDir dir;
  write_repair_data(dir.path());
  ASSERT_TRUE(util::append_line(dir.path() / "fixit/repair/tasks.jsonl",
                                to_json(RepairTask{"nope", test::key("gemm")}).dump()));
  auto result = build_pairs(dir.path(), PairsOptions{});
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("failure nope"), std::string::npos)
      << result.error().message;
}

TEST(Pairs, RepairTrajectoryStillRunningIsSkippedWithAWarning) {
  test_support::ScratchDir dir;
  write_repair_data(dir.path());
  {
    auto run = test::open_run(dir.path() / "fixit/repair/run");
    const auto k = test::key("gemm", 9, "hopper-07", "teacher");
    test::add_trajectory(*run, k, {correct("B-fixed", 0.3)}, test::Finish::running);
    ASSERT_TRUE(util::append_line(dir.path() / "fixit/repair/tasks.jsonl",
                                  to_json(RepairTask{util::sha256_hex("B"), k}).dump()));
  }
  auto result = build_pairs(dir.path(), PairsOptions{});
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_EQ(pairs_in(dir.path()).size(), 2u);
}

TEST(Pairs, SecondRunChangesNothing) {
  test_support::ScratchDir dir;
  write_repair_data(dir.path());
  ASSERT_TRUE(build_pairs(dir.path(), PairsOptions{}));
  const std::string first = test::read(dir.path() / "fixit/pairs/manifest.json");
  ASSERT_TRUE(build_pairs(dir.path(), PairsOptions{}));
  EXPECT_EQ(test::read(dir.path() / "fixit/pairs/manifest.json"), first);
}

} // namespace
} // namespace ptxbench::adapt
