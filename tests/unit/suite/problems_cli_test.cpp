// `ptxbench problems` end to end: the JSON listing, the text against its golden file, and
// command-line errors, which exit with the usage code 2 whatever CLI11 calls them.
#include "support/golden.hpp"
#include "support/ptxbench_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using ptxbench::test_support::ptxbench_result;

TEST(ProblemsCommand, JsonListsSixteenProblems) {
  const auto run = ptxbench_result({"problems", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
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
  const auto run = ptxbench_result({"problems"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ptxbench::test_support::expect_golden("suite/problems.txt", run.out);
}

TEST(ProblemsCommand, UnknownOptionIsAUsageError) {
  const auto run = ptxbench_result({"problems", "--no-such-flag"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--no-such-flag"), std::string::npos) << run.err;
}

TEST(Cli, EveryCommandLineErrorExitsWithTheUsageCode) {
  // CLI11 has its own code per kind of error (106 for a missing argument, 109 for an extra
  // one); scripts get 2 for all of them.
  EXPECT_EQ(ptxbench_result({}).exit_code, 2);
  EXPECT_EQ(ptxbench_result({"no-such-command"}).exit_code, 2);
  EXPECT_EQ(ptxbench_result({"eval"}).exit_code, 2);
  EXPECT_EQ(ptxbench_result({"problems", "extra"}).exit_code, 2);
}

TEST(Cli, VersionNamesTheToolchainAndTheGpuOrWhyNot) {
  const auto run = ptxbench_result({"version"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("ptxbench  ", 0), 0u) << run.out;
  for (const char* line : {"\nnvcc      ", "\ncuobjdump ", "\nGPU       "})
    EXPECT_NE(run.out.find(line), std::string::npos) << line << " in\n" << run.out;
}

// Issue 17 item 14: the flag every tool has.
TEST(Cli, TheVersionFlagPrintsTheVersionAndExitsZero) {
  const auto run = ptxbench_result({"--version"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("ptxbench ", 0), 0u) << run.out;
  EXPECT_NE(run.out.find('.'), std::string::npos) << run.out;
}

// Issue 17 item 14: CLI11's own errors (an unknown flag, a missing value) print as JSON on
// stdout under --json, as every command's errors do there; the text stays on stderr.
TEST(Cli, ParseErrorsUnderJsonPrintAsJson) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"problems", "--json", "--no-such-flag"},
        std::vector<std::string>{"check", "k.cu", "--json", "--problem"}}) {
    const auto run = ptxbench_result(args);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    const auto json = nlohmann::json::parse(run.out, nullptr, false);
    ASSERT_TRUE(json.is_object()) << run.out;
    EXPECT_EQ(json["error"]["kind"], "invalid_input") << run.out;
    EXPECT_FALSE(json["error"]["message"].get<std::string>().empty()) << run.out;
    EXPECT_FALSE(run.err.empty()) << "the text goes to stderr as before";
  }
  const auto text = ptxbench_result({"problems", "--no-such-flag"});
  EXPECT_TRUE(text.out.empty()) << "no JSON without --json: " << text.out;
}

TEST(Cli, HelpIsNotAnError) {
  const auto run = ptxbench_result({"problems", "--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("problems"), std::string::npos) << run.out;
}

} // namespace
