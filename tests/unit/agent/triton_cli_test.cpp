// `ptxbench show --language triton` (golden), `ptxbench check kernel.py` (the Triton gate) and
// `ptxbench eval kernel.py` on a machine without a GPU (the gate, then "needs a GPU").
#include "cuda/device.hpp"
#include "support/golden.hpp"
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ptxbench;
using test_support::run_ptxbench;
using test_support::ScratchDir;

namespace {

std::string triton_kernel(const char* name) {
  return std::string(PTXBENCH_TEST_DATA) + "/compile/triton/" + name;
}

} // namespace

TEST(TritonCli, ShowPrintsThePythonSignatureAndEntryPoint) {
  ScratchDir cache;
  auto result = run_ptxbench({"show", "gemm_n7168_k5120", "--language", "triton"}, cache);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  test_support::expect_golden("cli/show_gemm_triton.txt", result.out);
  auto json_show =
      run_ptxbench({"show", "gemm_n7168_k5120", "--language", "triton", "--json"}, cache);
  ASSERT_EQ(json_show.exit_code, 0) << json_show.err;
  auto parsed = nlohmann::json::parse(json_show.out);
  EXPECT_EQ(parsed["signature"], "def run(A, B, C, M)");
  EXPECT_EQ(parsed["entry_point"], "kernel.py::run");
  auto bad = run_ptxbench({"show", "gemm_n7168_k5120", "--language", "rust"}, cache);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--language must be cuda or triton"), std::string::npos);
}

TEST(TritonCli, CheckOfAPyFileRunsTheTritonGate) {
  ScratchDir cache;
  auto clean = run_ptxbench(
      {"check", triton_kernel("gemm_persistent_tma.py"), "--problem", "gemm_n7168_k5120"}, cache);
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("Triton gate passed (def run(A, B, C, M))"), std::string::npos)
      << clean.out;
  auto torch = run_ptxbench(
      {"check", triton_kernel("gemm_torch_matmul.py"), "--problem", "gemm_n7168_k5120"}, cache);
  EXPECT_EQ(torch.exit_code, 1) << torch.out << torch.err;
  EXPECT_NE(torch.out.find("line 24: `C.copy_(torch.matmul(A, B.T))`"), std::string::npos)
      << torch.out;
  auto json_check = run_ptxbench(
      {"check", triton_kernel("gemm_torch_matmul.py"), "--problem", "gemm_n7168_k5120", "--json"},
      cache);
  auto parsed = nlohmann::json::parse(json_check.out);
  EXPECT_EQ(parsed["outcome"], "rejected");
  EXPECT_EQ(parsed["findings"][0]["rule"], "torch_call");
  EXPECT_EQ(parsed["findings"][0]["line"], 24);
}

TEST(TritonCli, EvalOfAPyFileRunsTheGateAndSaysTheGpuStepNeedsAGpu) {
  if (cuda::device_count() > 0)
    GTEST_SKIP() << "a GPU is here: eval runs the GPU step (triton_evaluator_gpu.cpp)";
  ScratchDir cache;
  auto clean = run_ptxbench(
      {"eval", triton_kernel("gemm_persistent_tma.py"), "--problem", "gemm_n7168_k5120"}, cache);
  EXPECT_EQ(clean.exit_code, 3) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("need a GPU"), std::string::npos) << clean.out;
  EXPECT_NE(clean.out.find("the Triton gate passed"), std::string::npos) << clean.out;
  auto torch = run_ptxbench(
      {"eval", triton_kernel("gemm_torch_matmul.py"), "--problem", "gemm_n7168_k5120"}, cache);
  EXPECT_EQ(torch.exit_code, 1) << torch.out << torch.err;
  EXPECT_NE(torch.out.find("COMPILE_ERROR"), std::string::npos) << torch.out;
  EXPECT_NE(torch.out.find("`C.copy_(torch.matmul(A, B.T))`"), std::string::npos) << torch.out;
  auto bad = run_ptxbench({"eval", triton_kernel("gemm_persistent_tma.py"), "--problem",
                           "gemm_n7168_k5120", "--language", "fortran"},
                          cache);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--language must be cuda or triton"), std::string::npos) << bad.err;
}
