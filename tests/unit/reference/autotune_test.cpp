// The cuBLASLt autotuning's choice and its cache (reference/gemm_autotune.hpp), without a GPU:
// which rank wins, what library() says, the records file and its bad shapes.
#include "reference/gemm_autotune.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace ptxbench::reference {
namespace {

AutotuneKey h200_key(std::int64_t m = 8192) {
  return AutotuneKey{"cuBLASLt 13.1.0", "NVIDIA H200 (sm_90)", GemmShape{m, 7168, 5120},
                     std::size_t{32} << 20};
}

TEST(Autotune, TheFastestIsChosenOnlyWhenItBeatsTheFirstByTheMargin) {
  EXPECT_EQ(choose_rank(std::vector<double>{}), 0);
  EXPECT_EQ(choose_rank(std::vector<double>{100}), 0);
  EXPECT_EQ(choose_rank(std::vector<double>{100, 90, 95}), 1);
  EXPECT_EQ(choose_rank(std::vector<double>{100, 99.5, 101}), 0); // within 1 %: the first
  EXPECT_EQ(choose_rank(std::vector<double>{100, 98.9}), 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(choose_rank(std::vector<double>{100, 0, -1, nan, 120}), 0); // failed: never chosen
  EXPECT_EQ(choose_rank(std::vector<double>{0, 120, 110}), 2);          // the first failed
}

TEST(Autotune, TheRecordSaysWhatWasChosenAndWhatItGained) {
  AutotuneRecord record{h200_key(), 2, {104.1, 103.0, 100.0}, "2026-12-04T00:00:00Z"};
  EXPECT_NEAR(record.gain(), 1.041, 1e-9);
  EXPECT_EQ(describe(record), " (autotuned: heuristic #3 of 3, 1.041x the first)");
  record.chosen = 0;
  EXPECT_EQ(describe(record), " (autotuned: heuristic #1 of 3, 1.000x the first)");
  EXPECT_EQ(describe(AutotuneRecord{h200_key(), 0, {0.0}, ""}),
            " (the heuristic's only algorithm)");
}

TEST(Autotune, RecordsRoundTripAndABadFileNamesItsPath) {
  const std::vector<AutotuneRecord> records{{h200_key(), 1, {10.0, 9.0}, "2026-12-04T00:00:00Z"},
                                            {h200_key(256), 0, {1.5}, "2026-12-04T00:00:01Z"}};
  auto read = parse_autotune_records(autotune_records_json(records), "cache");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].key, records[0].key);
  EXPECT_EQ((*read)[0].chosen, 1);
  EXPECT_EQ((*read)[0].median_us, records[0].median_us);
  EXPECT_EQ((*read)[1].key.shape.m, 256);
  const std::vector<std::pair<std::string, std::string>> bad{
      {"[]", "$"},
      {"not json", "$"},
      {R"({"records": [{"library": "x"}]})", "$.records[0]"},
      {R"({"records": [], "extra": 1})", "extra"},
      {R"({"records": [{"library": "l", "device": "d", "m": 1, "n": 1, "k": 1,
           "workspace_bytes": 0, "chosen": 2, "median_us": [1.0], "measured_at": ""}]})",
       "$.records[0].chosen"},
      {R"({"records": [{"library": "l", "device": "d", "m": 1, "n": 1, "k": 1,
           "workspace_bytes": 0, "chosen": 0, "median_us": ["fast"], "measured_at": ""}]})",
       "$.records[0].median_us[0]"},
  };
  for (const auto& [text, path] : bad) {
    auto parsed = parse_autotune_records(text, "cache");
    ASSERT_FALSE(parsed) << text;
    EXPECT_NE(parsed.error().message.find(path), std::string::npos) << parsed.error().message;
  }
}

TEST(Autotune, TheCacheFindsOnlyItsKeyAndRewritesAFileThatDoesNotRead) {
  test_support::ScratchDir dir;
  const auto file = dir.path() / "autotune" / "cublaslt_autotune.json";
  AutotuneCache cache(file);
  EXPECT_FALSE(cache.find(h200_key()));
  cache.put(AutotuneRecord{h200_key(), 1, {10.0, 9.0}, "t"});
  auto found = cache.find(h200_key());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->chosen, 1);
  AutotuneKey other_version = h200_key();
  other_version.library = "cuBLASLt 13.2.0";
  EXPECT_FALSE(cache.find(other_version));
  AutotuneKey other_device = h200_key();
  other_device.device = "NVIDIA H100 80GB HBM3 (sm_90)";
  EXPECT_FALSE(cache.find(other_device));
  EXPECT_FALSE(cache.find(h200_key(4096)));
  // Another process's cache object on the same file reads what this one wrote.
  AutotuneCache second(file);
  ASSERT_TRUE(second.find(h200_key()));
  second.put(AutotuneRecord{h200_key(), 0, {10.0, 11.0}, "t2"}); // replaces, never duplicates
  auto text = util::read_file(file);
  ASSERT_TRUE(text);
  auto records = parse_autotune_records(*text, "file");
  ASSERT_TRUE(records);
  EXPECT_EQ(records->size(), 1u);
  EXPECT_EQ(records->front().chosen, 0);

  ASSERT_TRUE(util::write_file_atomic(file, "{ torn"));
  EXPECT_FALSE(cache.find(h200_key())); // a file that does not read is no file
  cache.put(AutotuneRecord{h200_key(), 1, {10.0, 9.0}, "t3"});
  EXPECT_TRUE(cache.find(h200_key()));

  AutotuneCache memory{std::filesystem::path()};
  memory.put(AutotuneRecord{h200_key(), 1, {10.0, 9.0}, "m"});
  EXPECT_TRUE(memory.find(h200_key()));
}

} // namespace
} // namespace ptxbench::reference
