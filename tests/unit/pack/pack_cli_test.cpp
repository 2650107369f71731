#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

struct CommandResult {
  int status = -1;
  std::string out;
};

CommandResult run_binary(const std::string& arguments) {
  CommandResult run;
  const std::string command = std::string(PTXBENCH_BINARY) + " " + arguments;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr)
    return run;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    run.out.append(buffer.data(), n);
  run.status = ::pclose(pipe);
  return run;
}

TEST(PackCommand, ListTextMatchesGolden) {
  const CommandResult run = run_binary("pack list");
  ASSERT_EQ(run.status, 0) << run.out;
  const std::string golden_path = std::string(PTXBENCH_TEST_DATA) + "/pack/pack_list.txt";
  if (std::getenv("PTXBENCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path, std::ios::binary) << run.out;
    GTEST_SKIP() << "rewrote " << golden_path;
  }
  std::ifstream golden(golden_path, std::ios::binary);
  ASSERT_TRUE(golden) << golden_path << " missing; run with PTXBENCH_UPDATE_GOLDEN=1";
  std::stringstream expected;
  expected << golden.rdbuf();
  EXPECT_EQ(run.out, expected.str());
}

TEST(PackCommand, ListSaysTokenCountsAreApproximate) {
  EXPECT_NE(run_binary("pack list --arch sm_100a").out.find("approximate"), std::string::npos);
  EXPECT_NE(run_binary("pack list --json").out.find("approximate"), std::string::npos);
}

TEST(PackCommand, JsonListHasBothArchesWithTokenCounts) {
  const CommandResult run = run_binary("pack list --json");
  ASSERT_EQ(run.status, 0) << run.out;
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
  const CommandResult run = run_binary("pack show base --arch sm_100a 2>/dev/null");
  ASSERT_EQ(run.status, 0);
  EXPECT_NE(run.out.find("## PTX wrappers: `knowledge/sm100a/tcgen05.cuh`\n\n```cpp\n"),
            std::string::npos);
  EXPECT_NE(run.out.find("## Architecture contract: `knowledge/sm100a/contract.md`"),
            std::string::npos);
}

TEST(PackCommand, AmbiguousOrUnknownVariantIsAUsageError) {
  EXPECT_NE(run_binary("pack show base 2>&1").status, 0);
  EXPECT_NE(run_binary("pack show no-such-variant --arch sm_90a 2>&1").status, 0);
  EXPECT_NE(run_binary("pack list --arch sm_70 2>&1").status, 0);
}

} // namespace
