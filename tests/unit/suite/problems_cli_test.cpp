#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  run.status = ::pclose(pipe);
  return run;
}

TEST(ProblemsCommand, JsonListsSixteenProblems) {
  const CommandResult run = run_binary("problems --json");
  ASSERT_EQ(run.status, 0) << run.out;
  const auto json = nlohmann::ordered_json::parse(run.out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << run.out;
  ASSERT_EQ(json.size(), 16u);
  EXPECT_EQ(json[0]["name"], "gemm_n7168_k5120");
  EXPECT_EQ(json[0]["var_axes"]["M"], 8192);
  EXPECT_EQ(json[0]["flops"], 2LL * 8192 * 7168 * 5120);
  for (const auto& entry : json) {
    EXPECT_TRUE(entry.contains("baseline"));
    EXPECT_TRUE(entry["inputs"].is_array());
  }
}

TEST(ProblemsCommand, TextMatchesGolden) {
  const CommandResult run = run_binary("problems");
  ASSERT_EQ(run.status, 0) << run.out;
  const std::string golden_path = std::string(PTXBENCH_TEST_DATA) + "/suite/problems.txt";
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

TEST(ProblemsCommand, UnknownOptionIsAUsageError) {
  const CommandResult run = run_binary("problems --no-such-flag 2>&1");
  EXPECT_NE(run.status, 0);
}

} // namespace
