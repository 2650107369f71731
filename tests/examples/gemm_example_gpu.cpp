// The expert sm_90a GEMM (examples/sm90a/gemm_n7168_k5120.cu) on an H100/H200 (label gpu):
// `ptxbench eval` as a user runs it (short timing) must report PASSED on every input set, with
// wgmma (GMMA) and TMA instructions executed, not only present in the binary.
#include "util/subprocess.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace {

nlohmann::json eval_json() {
  ptxbench::util::ProcessOptions options;
  options.timeout = std::chrono::minutes(10);
  options.extra_env = {"PATH=" + std::string(std::getenv("PATH")) + ":/usr/local/cuda/bin"};
  ptxbench::util::PosixProcessRunner runner;
  auto result =
      runner.run({PTXBENCH_BINARY, "eval",
                  std::string(PTXBENCH_EXAMPLES) + "/sm90a/gemm_n7168_k5120.cu", "--problem",
                  "gemm_n7168_k5120", "--json", "--trials", "1", "--warmup", "3", "--iters", "10"},
                 options);
  if (!result) {
    ADD_FAILURE() << result.error().message;
    return {};
  }
  EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
  return nlohmann::json::parse(result->out, nullptr, false);
}

TEST(GemmExampleGpu, EvalPassesWithWgmmaAndTmaExecuted) {
  const nlohmann::json report = eval_json();
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["status"], "PASSED") << report.dump(1).substr(0, 4000);
  const auto& extras = report["trace"]["evaluation"]["ptxbench"];
  EXPECT_EQ(extras["correctness"]["failed"], 0);
  for (const char* family : {"GMMA", "TMA"}) {
    const auto& f = extras["dynamic"]["families"][family];
    EXPECT_EQ(f["state"], "present") << family << ": " << f;
    EXPECT_GT(f["executed"].get<double>(), 0.0) << family;
  }
  EXPECT_GT(report["trace"]["evaluation"]["performance"]["speedup_factor"].get<double>(), 0.0);
}

} // namespace
