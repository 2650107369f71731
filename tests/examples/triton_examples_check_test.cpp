// Every expert Triton kernel in examples/<arch>/<problem>.py, without a GPU: the real `ptxbench
// check` runs the Triton gate and compiles the kernels `run` launches ahead of time for the
// architecture of its folder (python/ptxbench_triton/aot.py); the gate must pass and the AOT
// specialisation must hold the architecture's tensor-core and TMA families.
#include "support/ptxbench_cli.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct TritonArch {
  const char* folder;
  const char* arch;
  std::vector<const char*> families; // each must have instructions in the AOT cubins
};

const TritonArch kTritonArches[] = {{"sm90a", "sm_90a", {"GMMA", "TMA"}}};

std::vector<fs::path> triton_kernels_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".py")
        files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TritonExamples, TheGemmAndBothMhaForwardProblemsHaveAnExpert) {
  const fs::path dir = fs::path(PTXBENCH_EXAMPLES) / "sm90a";
  for (const char* problem : {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal"})
    EXPECT_TRUE(fs::exists(dir / (std::string(problem) + ".py"))) << problem;
}

TEST(TritonExamples, EachPassesTheGateAndCompilesAheadOfTimeWithItsTargetFamilies) {
  for (const TritonArch& arch : kTritonArches) {
    const auto kernels = triton_kernels_in(fs::path(PTXBENCH_EXAMPLES) / arch.folder);
    ASSERT_FALSE(kernels.empty()) << arch.folder;
    for (const fs::path& kernel : kernels) {
      SCOPED_TRACE(kernel.string());
      auto result = ptxbench::test_support::run_ptxbench({"check", kernel.string(), "--problem",
                                                          kernel.stem().string(), "--arch",
                                                          arch.arch, "--json"},
                                                         std::chrono::minutes(10));
      ASSERT_TRUE(result) << result.error().message;
      EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
      const auto report = nlohmann::json::parse(result->out, nullptr, false);
      ASSERT_TRUE(report.is_object()) << result->out.substr(0, 2000);
      EXPECT_EQ(report["outcome"], "ok") << report["findings"];
      ASSERT_EQ(report["aot"].size(), 1u);
      const auto& aot = report["aot"][0];
      EXPECT_EQ(aot["outcome"], "ok") << aot["message"];
      EXPECT_EQ(aot["static_verdict"], "present");
      const auto& totals = aot["sass"]["arches"][0]["family_totals"];
      for (const char* family : arch.families)
        EXPECT_GT(totals.value(family, 0), 0) << family << ": " << totals;
    }
  }
}

} // namespace
