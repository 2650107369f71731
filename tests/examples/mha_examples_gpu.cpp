// The expert attention kernels, forward and backward, on an H100/H200 (label gpu): `ptxbench
// eval` as a user runs it (short timing) must report PASSED on every input set, with wgmma
// (GMMA) and TMA instructions executed, not only present in the binary. The forward must match
// every element; the backward problems allow 1e-5 of finite misses (suite/correctness.hpp) and
// the evaluation must say how many it tolerated.
#include "util/subprocess.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Variant {
  const char* file;
  const char* problem;
  double required_matched_ratio;
};

const Variant kVariants[] = {{"sm90a/mha_with_lse_d128.cu", "mha_with_lse_d128", 1.0},
                             {"sm90a/mha_with_lse_d128_causal.cu", "mha_with_lse_d128_causal", 1.0},
                             {"sm90a/mha_bwd_d128.cu", "mha_bwd_d128", 1.0 - 1e-5},
                             {"sm90a/mha_bwd_d128_causal.cu", "mha_bwd_d128_causal", 1.0 - 1e-5}};

nlohmann::json eval_json(const Variant& v) {
  ptxbench::util::ProcessOptions options;
  options.timeout = std::chrono::minutes(10);
  options.extra_env = {"PATH=" + std::string(std::getenv("PATH")) + ":/usr/local/cuda/bin"};
  ptxbench::util::PosixProcessRunner runner;
  auto result = runner.run({PTXBENCH_BINARY, "eval", std::string(PTXBENCH_EXAMPLES) + "/" + v.file,
                            "--problem", v.problem, "--json", "--trials", "1", "--warmup", "3",
                            "--iters", "10"},
                           options);
  EXPECT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
  return nlohmann::json::parse(result->out);
}

TEST(MhaExamplesGpu, EvalPassesWithWgmmaAndTmaExecuted) {
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(v.file);
    const nlohmann::json report = eval_json(v);
    EXPECT_EQ(report["status"], "PASSED") << report.dump(1).substr(0, 4000);
    const auto& extras = report["trace"]["evaluation"]["ptxbench"];
    const auto& correctness = extras["correctness"];
    EXPECT_DOUBLE_EQ(correctness["required_matched_ratio"].get<double>(), v.required_matched_ratio);
    EXPECT_EQ(correctness["failed"], correctness["tolerated_failures"]);
    if (v.required_matched_ratio == 1.0) {
      EXPECT_EQ(correctness["failed"], 0);
    }
    EXPECT_EQ(correctness["candidate_nan"], 0);
    for (const char* family : {"GMMA", "TMA"}) {
      const auto& f = extras["dynamic"]["families"][family];
      EXPECT_EQ(f["state"], "present") << family << ": " << f;
      EXPECT_GT(f["executed"].get<double>(), 0.0) << family;
    }
    EXPECT_GT(report["trace"]["evaluation"]["performance"]["speedup_factor"].get<double>(), 0.0);
  }
}

} // namespace
