// `ptxbench fixit` / `ptxbench kernelgen` end to end through the built binary.
#include "adapt/records.hpp"
#include "adapt_test_support.hpp"
#include "support/ptxbench_cli.hpp"

#include <gtest/gtest.h>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;
using store::TurnCategory;

TEST(AdaptCli, FixitStagesRunFromTheCommandLine) {
  test_support::ScratchDir dir;
  {
    auto run = test::open_run(dir.path() / "run");
    test::add_trajectory(*run, test::key("gemm"),
                         {test::failed(TurnCategory::compile, "k1"),
                          test::failed(TurnCategory::numerical, "k2"), test::correct("k3", 0.7)});
  }
  const std::string data = (dir.path() / "data").string();
  auto collect = test_support::ptxbench_result(
      {"fixit", "collect", "--out", data, (dir.path() / "run").string()});
  ASSERT_EQ(collect.exit_code, 0) << collect.err;
  EXPECT_NE(collect.out.find("2 failures"), std::string::npos) << collect.out;
  auto balance = test_support::ptxbench_result({"fixit", "balance", data, "--cap", "1"});
  ASSERT_EQ(balance.exit_code, 0) << balance.err;
  EXPECT_NE(balance.out.find("1 of 2 failures kept"), std::string::npos) << balance.out;
  auto kernelgen = test_support::ptxbench_result(
      {"kernelgen", "collect", "--out", data, "--target-only", (dir.path() / "run").string()});
  ASSERT_EQ(kernelgen.exit_code, 0) << kernelgen.err;
  EXPECT_NE(kernelgen.out.find("1 correct kernels"), std::string::npos) << kernelgen.out;
}

TEST(AdaptCli, EmptySelectionExitsNonZeroAndWritesNothing) {
  test_support::ScratchDir dir;
  {
    auto run = test::open_run(dir.path() / "run");
    test::add_trajectory(*run, test::key("gemm"), {test::correct("k", 1.0)});
  }
  const fs::path data = dir.path() / "data";
  auto result = test_support::ptxbench_result(
      {"fixit", "collect", "--out", data.string(), (dir.path() / "run").string()});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("nothing written"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(data));
}

TEST(AdaptCli, UnknownIncludeCategoryIsAUsageError) {
  test_support::ScratchDir dir;
  auto result = test_support::ptxbench_result({"fixit", "collect", "--out", dir.path().string(),
                                               "--include", "infra", dir.path().string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--include"), std::string::npos) << result.err;
}

TEST(AdaptCli, ARecipeWithAStringCapIsAUsageErrorNamingItsJsonPath) {
  test_support::ScratchDir dir;
  const fs::path recipe = dir.write(
      "s4.json", R"({"name":"s4","kind":"fixit","sources":["run"],"balance":{"cap":"33"}})");
  auto result = test_support::ptxbench_result(
      {"fixit", "all", "--recipe", recipe.string(), "--out", (dir.path() / "data").string()});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find(recipe.string() + ": $.balance.cap: expected an integer >= 1, got "
                                              "string"),
            std::string::npos)
      << result.err;
}

} // namespace
} // namespace ptxbench::adapt
