#include "adapt/records.hpp"
#include "support/scratch_dir.hpp"

#include <cstdio>
#include <gtest/gtest.h>

namespace ptxbench::adapt {
namespace {

FailureRecord sample_failure() {
  FailureRecord f;
  f.id = "abc";
  f.occurrences = 2;
  f.run_dir = "runs/a";
  f.trajectory_key = {"m", "gemm", "hopper-07", 3};
  f.turn = 1;
  f.arch = "sm_90a";
  f.category = "compile";
  f.kernel_source = "__global__ void k() {}\n";
  f.feedback = "error: \"x\" undefined";
  f.system_prompt = "sys";
  f.task_prompt = "task";
  return f;
}

TEST(Records, FailureRoundTripsThroughJson) {
  const FailureRecord f = sample_failure();
  auto back = failure_from_json(to_json(f));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), to_json(f));
  EXPECT_EQ(back->trajectory_key, f.trajectory_key);
}

TEST(Records, PairKeepsNullSpeedupAndTarget) {
  PairRecord p;
  p.id = "p";
  p.failure = sample_failure();
  p.repaired_kernel = "fixed";
  p.repair_trajectory_key = {"teacher", "gemm", "hopper-07", 0};
  p.teacher_model = "teacher";
  const Json json = to_json(p);
  EXPECT_TRUE(json["speedup"].is_null());
  EXPECT_TRUE(json["target_executed"].is_null());
  auto back = pair_from_json(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_FALSE(back->speedup);
  p.speedup = 0.5;
  p.target_executed = true;
  back = pair_from_json(to_json(p));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->speedup, 0.5);
  EXPECT_EQ(back->target_executed, true);
}

TEST(Records, CorrectAndRationaleRoundTrip) {
  CorrectRecord c;
  c.id = "c";
  c.trajectory_key = {"m", "p", "v", 0};
  c.reply = "reply";
  c.speedup = 1.25;
  auto back = correct_from_json(to_json(c));
  ASSERT_TRUE(back);
  EXPECT_EQ(to_json(*back), to_json(c));
  RationaleRecord r{"c", "kernelgen", "done", "because", "", "glm", "v1", 1.0, 1, 10, 20, 0.01, ""};
  auto r_back = rationale_from_json(to_json(r));
  ASSERT_TRUE(r_back);
  EXPECT_EQ(to_json(*r_back), to_json(r));
}

TEST(Records, MissingFieldIsNamed) {
  Json json = to_json(sample_failure());
  json.erase("feedback");
  auto back = failure_from_json(json);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(back.error().message.find("\"feedback\""), std::string::npos) << back.error().message;
}

TEST(Records, MistypedNestedFieldIsNamed) {
  Json json = to_json(sample_failure());
  json["trajectory_key"]["sample"] = "three";
  auto back = failure_from_json(json);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("$.trajectory_key.sample: expected an integer, got string"),
            std::string::npos)
      << back.error().message;
}

TEST(Records, MalformedJsonlLineNamesFileAndLine) {
  test_support::ScratchDir dir;
  const auto path =
      dir.write("f.jsonl", to_jsonl(std::vector<FailureRecord>{sample_failure()}) + "\n{oops\n");
  auto records = read_jsonl<FailureRecord>(path, failure_from_json);
  ASSERT_FALSE(records);
  EXPECT_NE(records.error().message.find(path.string() + ":3: not a JSON document"),
            std::string::npos)
      << records.error().message;
}

TEST(Records, BadRecordOnALineNamesFileAndLine) {
  test_support::ScratchDir dir;
  const auto path = dir.write("f.jsonl", "{\"id\": 1}\n");
  auto records = read_jsonl<FailureRecord>(path, failure_from_json);
  ASSERT_FALSE(records);
  EXPECT_NE(
      records.error().message.find(path.string() + ":1: $.id: expected a string, got integer"),
      std::string::npos)
      << records.error().message;
}

TEST(Records, TornLastLineOfAKilledWriterIsIgnoredWithAWarning) {
  test_support::ScratchDir dir;
  const auto path = dir.write("f.jsonl", to_jsonl(std::vector<FailureRecord>{sample_failure()}) +
                                             "{\"id\": \"tor");
  std::FILE* warnings = std::tmpfile();
  ASSERT_NE(warnings, nullptr);
  auto records = read_jsonl<FailureRecord>(path, failure_from_json, warnings);
  ASSERT_TRUE(records) << records.error().message;
  EXPECT_EQ(records->size(), 1u);
  std::rewind(warnings);
  char buffer[512] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, warnings);
  std::fclose(warnings);
  EXPECT_NE(std::string(buffer, n).find(path.string() + ":2: torn last line"), std::string::npos)
      << std::string(buffer, n);
}

TEST(Records, BadLineInTheMiddleIsAnErrorEvenWithoutATrailingNewline) {
  test_support::ScratchDir dir;
  const std::string good = to_jsonl(std::vector<FailureRecord>{sample_failure()});
  const auto path = dir.write("f.jsonl", good + "{oops\n" + good.substr(0, good.size() - 1));
  auto records = read_jsonl<FailureRecord>(path, failure_from_json, nullptr);
  ASSERT_FALSE(records);
  EXPECT_NE(records.error().message.find(path.string() + ":2: not a JSON document"),
            std::string::npos)
      << records.error().message;
}

TEST(Records, CompleteLastLineWithoutNewlineIsKept) {
  test_support::ScratchDir dir;
  const std::string good = to_jsonl(std::vector<FailureRecord>{sample_failure()});
  const auto path = dir.write("f.jsonl", good + good.substr(0, good.size() - 1));
  auto records = read_jsonl<FailureRecord>(path, failure_from_json, nullptr);
  ASSERT_TRUE(records) << records.error().message;
  EXPECT_EQ(records->size(), 2u);
}

TEST(Records, JsonlHasOneLinePerRecordEvenWithNewlinesInTexts) {
  const std::string text = to_jsonl(std::vector<FailureRecord>{sample_failure(), sample_failure()});
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

TEST(Records, AStringSpeedupOfAPairIsRejectedNamingItsJsonPath) {
  PairRecord p;
  p.failure = sample_failure();
  Json json = to_json(p);
  json["speedup"] = "1.5";
  auto back = pair_from_json(json);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(back.error().message, "$.speedup: expected a number or null, got string");
}

TEST(Records, AMistypedFieldOfAPairsFailureNamesTheWholePath) {
  PairRecord p;
  p.failure = sample_failure();
  Json json = to_json(p);
  json["failure"]["trajectory_key"]["sample"] = "0";
  auto back = pair_from_json(json);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message,
            "$.failure.trajectory_key.sample: expected an integer, got string");
}

TEST(Records, AnUnknownLanguageIsRejectedNamingItsJsonPath) {
  Json json = to_json(sample_failure());
  json["trajectory_key"]["language"] = "cobol";
  auto back = failure_from_json(json);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message, "$.trajectory_key.language: expected a candidate language "
                                  "such as \"cuda\" or \"triton\", got \"cobol\"");
}

TEST(Records, AStringTokenCountOfARationaleIsRejectedNamingItsJsonPath) {
  RationaleRecord r{"c", "kernelgen", "done", "because", "", "glm", "v1", 1.0, 1, 10, 20, 0.01, ""};
  Json json = to_json(r);
  json["output_tokens"] = "20";
  auto back = rationale_from_json(json);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message, "$.output_tokens: expected an integer, got string");
}

} // namespace
} // namespace ptxbench::adapt
