// The expert GQA kernels (examples/sm90a/gqa_ragged_prefill_causal_h32_kv4_d128.cu,
// gqa_paged_prefill_causal_h24_kv8_d128_ps1.cu, gqa_paged_decode_h24_kv8_d128_ps1.cu) on an
// H100/H200 (label gpu): `ptxbench eval` as a user runs it (short timing) against the paper's
// baseline, FlashInfer, must report PASSED on every input set with every element matched, and
// wgmma (GMMA) and TMA instructions executed, not only present in the binary.
#include "util/subprocess.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace {

class GqaExampleGpu : public ::testing::TestWithParam<const char*> {};

TEST_P(GqaExampleGpu, PassesAgainstFlashInferWithWgmmaAndTmaExecuted) {
  const std::string problem = GetParam();
  ptxbench::util::ProcessOptions options;
  options.timeout = std::chrono::minutes(10);
  options.extra_env = {"PATH=" + std::string(std::getenv("PATH")) + ":/usr/local/cuda/bin"};
  ptxbench::util::PosixProcessRunner runner;
  auto result = runner.run(
      {PTXBENCH_BINARY, "eval", std::string(PTXBENCH_EXAMPLES) + "/sm90a/" + problem + ".cu",
       "--problem", problem, "--json", "--trials", "1", "--warmup", "3", "--iters", "10"},
      options);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->exit_code, 0) << result->out << result->err;
  const nlohmann::json report = nlohmann::json::parse(result->out);
  EXPECT_EQ(report["status"], "PASSED") << report.dump(1).substr(0, 4000);
  const auto& extras = report["trace"]["evaluation"]["ptxbench"];
  EXPECT_EQ(extras["correctness"]["failed"], 0);
  EXPECT_EQ(extras["correctness"]["candidate_nan"], 0);
  for (const char* family : {"GMMA", "TMA"}) {
    const auto& f = extras["dynamic"]["families"][family];
    EXPECT_EQ(f["state"], "present") << family << ": " << f;
    EXPECT_GT(f["executed"].get<double>(), 0.0) << family;
  }
  const auto& performance = report["trace"]["evaluation"]["performance"];
  EXPECT_GT(performance["speedup_factor"].get<double>(), 0.0);
  EXPECT_NE(report.dump().find("FlashInfer"), std::string::npos)
      << "the baseline is not FlashInfer: " << report.dump(1).substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(Experts, GqaExampleGpu,
                         ::testing::Values("gqa_ragged_prefill_causal_h32_kv4_d128",
                                           "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                                           "gqa_paged_decode_h24_kv8_d128_ps1"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           const std::string name =
                               param.param; // "gqa_<kind>_<stage>_…": <kind>_<stage>
                           const std::size_t from = name.find('_') + 1;
                           const std::size_t stage = name.find('_', from) + 1;
                           return name.substr(from, name.find('_', stage) - from);
                         });

} // namespace
