// The expert Triton kernels (examples/sm90a/*.py) on an H100/H200 (label gpu): `ptxbench eval`
// as a user runs it must report PASSED with wgmma (GMMA) and TMA executed; the speedup is
// recorded as a test property (ctest --output-junit keeps it) and printed.
#include "util/subprocess.hpp"

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace {

nlohmann::json eval_triton(const std::string& problem) {
  ptxbench::util::ProcessOptions options;
  options.timeout = std::chrono::minutes(10);
  options.extra_env = {"PATH=" + std::string(std::getenv("PATH")) + ":/usr/local/cuda/bin"};
  ptxbench::util::PosixProcessRunner runner;
  auto result = runner.run(
      {PTXBENCH_BINARY, "eval", std::string(PTXBENCH_EXAMPLES) + "/sm90a/" + problem + ".py",
       "--problem", problem, "--json", "--trials", "1", "--warmup", "3", "--iters", "10"},
      options);
  if (!result) {
    ADD_FAILURE() << result.error().message;
    return {};
  }
  EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
  return nlohmann::json::parse(result->out, nullptr, false);
}

void expect_passed_with_wgmma_and_tma(const std::string& problem) {
  const nlohmann::json report = eval_triton(problem);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["status"], "PASSED") << report.dump(1).substr(0, 4000);
  const auto& extras = report["trace"]["evaluation"]["ptxbench"];
  EXPECT_EQ(extras["correctness"]["failed"], 0);
  for (const char* family : {"GMMA", "TMA"}) {
    const auto& f = extras["dynamic"]["families"][family];
    EXPECT_EQ(f["state"], "present") << family << ": " << f;
  }
  const double speedup =
      report["trace"]["evaluation"]["performance"]["speedup_factor"].get<double>();
  EXPECT_GT(speedup, 0.0);
  ::testing::Test::RecordProperty("speedup", std::to_string(speedup));
  std::printf("%s: Triton expert speedup %.3f\n", problem.c_str(), speedup);
}

TEST(TritonExamplesGpu, GemmPassesWithWgmmaAndTmaExecuted) {
  expect_passed_with_wgmma_and_tma("gemm_n7168_k5120");
}

TEST(TritonExamplesGpu, MhaForwardPassesWithWgmmaAndTmaExecuted) {
  expect_passed_with_wgmma_and_tma("mha_with_lse_d128");
}

TEST(TritonExamplesGpu, CausalMhaForwardPassesWithWgmmaAndTmaExecuted) {
  expect_passed_with_wgmma_and_tma("mha_with_lse_d128_causal");
}

} // namespace
