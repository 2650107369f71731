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

namespace {

nlohmann::json aot_check(const char* fixture, const char* arch, int exit_code) {
  ScratchDir cache;
  auto result = run_ptxbench(
      {"check", triton_kernel(fixture), "--problem", "gemm_n7168_k5120", "--arch", arch, "--json"},
      cache);
  EXPECT_EQ(result.exit_code, exit_code) << result.out << result.err;
  auto parsed = nlohmann::json::parse(result.out, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("aot") || parsed["aot"].size() != 1) {
    ADD_FAILURE() << "not one AOT report: " << result.out.substr(0, 2000);
    return {};
  }
  EXPECT_EQ(parsed["outcome"], "ok");
  return parsed["aot"][0];
}

} // namespace

TEST(TritonCliAot, ThePersistentTmaGemmHasGmmaAndTmaInItsSm90aCubin) {
  auto report = aot_check("gemm_persistent_tma.py", "sm_90a", 0);
  EXPECT_EQ(report["specialisation"], "aot");
  EXPECT_EQ(report["outcome"], "ok");
  EXPECT_EQ(report["static_verdict"], "present");
  EXPECT_EQ(report["launches"][0]["kernel"], "gemm_persistent");
  EXPECT_EQ(report["launches"][0]["constexprs"]["BM"], 128);
  EXPECT_EQ(report["sass"]["arches"][0]["arch"], "sm_90a");
  EXPECT_EQ(report["sass"]["arches"][0]["target_families"],
            nlohmann::json::parse(R"(["GMMA", "TMA"])"));
  const auto& totals = report["sass"]["arches"][0]["family_totals"];
  EXPECT_GT(totals["GMMA"].get<int>(), 0) << totals;
  EXPECT_GT(totals["TMA"].get<int>(), 0) << totals;
}

TEST(TritonCliAot, ThePersistentTmaGemmHasTcgen05OnBlackwell) {
  auto report = aot_check("gemm_persistent_tma.py", "sm_100a", 0);
  EXPECT_EQ(report["static_verdict"], "present");
  EXPECT_GT(report["sass"]["arches"][0]["family_totals"]["TCGEN05"].get<int>(), 0);
}

TEST(TritonCliAot, AKernelWithoutTlDotIsAbsentAndExitsOne) {
  auto report = aot_check("gemm_simt_no_dot.py", "sm_90a", 1);
  EXPECT_EQ(report["outcome"], "ok");
  EXPECT_EQ(report["static_verdict"], "absent");
  EXPECT_EQ(report["sass"]["arches"][0]["family_totals"]["GMMA"], 0);
}

TEST(TritonCliAot, TheTextSaysItIsTheAotSpecialisationAndGivesTheVerdict) {
  ScratchDir cache;
  auto result = run_ptxbench(
      {"check", triton_kernel("gemm_persistent_tma.py"), "--problem", "gemm_n7168_k5120"}, cache);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("compiled ahead of time by Triton"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("not the evaluated call"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("static verdict (sm_90a, AOT specialisation): target instructions "
                            "present [GMMA"),
            std::string::npos)
      << result.out;
}

TEST(TritonCliAot, AKernelThatDoesNotCompileSaysWhereAndExitsOne) {
  ScratchDir cache;
  auto result = run_ptxbench(
      {"check", triton_kernel("gemm_compile_error.py"), "--problem", "gemm_n7168_k5120"}, cache);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.out.find("Triton could not compile a kernel that `run` launches"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("kernel gemm_bad, line 17: `acc = tl.dot(a, b, acc)`: input and "
                            "other must have equal reduction dimensions"),
            std::string::npos)
      << result.out;
  auto report = aot_check("gemm_compile_error.py", "sm_90a", 1);
  EXPECT_EQ(report["outcome"], "compile_error");
  EXPECT_TRUE(report["sass"].is_null());
}

TEST(TritonCliAot, ARunTheStandInsDoNotModelNeedsAGpuAndExitsThree) {
  auto report = aot_check("gemm_cuda_event.py", "sm_90a", 3);
  EXPECT_EQ(report["outcome"], "cannot_specialise");
  EXPECT_NE(report["message"].get<std::string>().find("torch.cuda.Event"), std::string::npos)
      << report;
}

TEST(TritonCliAot, ARejectedFileIsNotCompiled) {
  ScratchDir cache;
  auto result = run_ptxbench(
      {"check", triton_kernel("gemm_torch_matmul.py"), "--problem", "gemm_n7168_k5120", "--json"},
      cache);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(nlohmann::json::parse(result.out)["aot"].empty()) << result.out;
}
