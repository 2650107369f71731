// `ptxbench pack list|show` end to end: the listing against its golden file, token counts,
// both arches in JSON, fenced headers, and usage errors (exit code 2).
#include "support/golden.hpp"
#include "support/ptxbench_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using ptxbench::test_support::ptxbench_result;

TEST(PackCommand, ListTextMatchesGolden) {
  const auto run = ptxbench_result({"pack", "list"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ptxbench::test_support::expect_golden("pack/pack_list.txt", run.out);
}

TEST(PackCommand, ListSaysTokenCountsAreApproximate) {
  EXPECT_NE(ptxbench_result({"pack", "list", "--arch", "sm_100a"}).out.find("approximate"),
            std::string::npos);
  EXPECT_NE(ptxbench_result({"pack", "list", "--json"}).out.find("approximate"), std::string::npos);
}

TEST(PackCommand, JsonListHasBothArchesWithTokenCounts) {
  const auto run = ptxbench_result({"pack", "list", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << run.out;
  ASSERT_EQ(json["arches"].size(), 2u);
  for (const auto& arch : json["arches"]) {
    ASSERT_FALSE(arch["variants"].empty());
    for (const auto& variant : arch["variants"])
      EXPECT_GT(variant["approx_tokens"], 0);
  }
}

TEST(PackCommand, ShowPrintsFencedHeaders) {
  const auto run = ptxbench_result({"pack", "show", "base", "--arch", "sm_100a"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("## PTX wrappers: `knowledge/sm100a/tcgen05.cuh`\n\n```cpp\n"),
            std::string::npos);
  EXPECT_NE(run.out.find("## Architecture contract: `knowledge/sm100a/contract.md`"),
            std::string::npos);
}

// Issue 17 item 14: like every other command, `pack show` defaults to sm_90a.
TEST(PackCommand, ShowDefaultsToSm90aWhereTheVariantHasIt) {
  const auto run = ptxbench_result({"pack", "show", "base"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("knowledge/sm90a/"), std::string::npos);
  EXPECT_EQ(run.out.find("knowledge/sm100a/"), std::string::npos);
  EXPECT_NE(run.err.find("sm_90a / base"), std::string::npos) << run.err;
}

TEST(PackCommand, UnknownVariantIsAUsageError) {
  EXPECT_EQ(ptxbench_result({"pack", "show", "no-such-variant", "--arch", "sm_90a"}).exit_code, 2);
  EXPECT_EQ(ptxbench_result({"pack", "list", "--arch", "sm_70"}).exit_code, 2);
  EXPECT_EQ(ptxbench_result({"pack", "list", "--no-such-flag"}).exit_code, 2);
}

} // namespace

namespace {

// Issue 17 item 14: the names a run takes beside the manifest's are explained, not unknown.
TEST(PackCommand, ShowExplainsTheRunOnlyVariantNames) {
  const auto none = ptxbench_result({"pack", "show", "none"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("no knowledge pack"), std::string::npos) << none.out;
  const auto first = ptxbench_result({"pack", "show", "default"});
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("the first of its kind's variants"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("gemm"), std::string::npos) << first.out;
  const auto paper = ptxbench_result({"pack", "show", "paper"});
  EXPECT_EQ(paper.exit_code, 0) << paper.err;
  EXPECT_NE(paper.out.find("all of its kind's variants"), std::string::npos) << paper.out;
  EXPECT_NE(paper.out.find(", "), std::string::npos) << "a kind lists several variants";
}

} // namespace
