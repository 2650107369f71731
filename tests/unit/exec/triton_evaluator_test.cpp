// The evaluator with a Triton candidate on a machine without a GPU: the gate decides what it
// can (its findings are the verdict, quoted), a candidate it passes gets the "needs a GPU"
// result, never a crash; and every bad-input fixture of tests/kernels/triton/ reaches the
// GPU step or is stopped by the gate as its GPU test (triton_evaluator_gpu.cpp) expects.
#include "compile/triton_gate.hpp"
#include "cuda/device.hpp"
#include "unit/exec/gpu_supervisor.hpp"

#include <gtest/gtest.h>
#include <utility>

namespace ptxbench::exec {
namespace {

using Status = trace::EvaluationStatus;

std::string triton_kernel(const std::string& name) {
  auto text = util::read_file(std::string(PTXBENCH_TEST_KERNELS) + "/triton/" + name);
  if (!text)
    throw std::runtime_error(text.error().message);
  return *text;
}

std::string expert_gemm() {
  auto text =
      util::read_file(std::string(PTXBENCH_TEST_DATA) + "/compile/triton/gemm_persistent_tma.py");
  if (!text)
    throw std::runtime_error(text.error().message);
  return *text;
}

Evaluation evaluate_triton(const std::string& source) {
  EvalOptions options = testing::quick();
  options.language = compile::Language::triton;
  auto problem = testing::supervisor().suite->find("gemm_n7168_k5120");
  if (!problem)
    throw std::runtime_error(problem.error().message);
  auto ev = testing::supervisor().evaluator->evaluate(source, **problem, options);
  if (!ev)
    throw std::runtime_error(ev.error().message);
  return std::move(*ev);
}

class TritonWithoutGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (auto count = cuda::device_count(); count > 0)
      GTEST_SKIP() << "a GPU is here: triton_evaluator_gpu.cpp evaluates on it";
  }
};

TEST_F(TritonWithoutGpu, AGatePassingCandidateNeedsTheGpuAndSaysSo) {
  const Evaluation ev = evaluate_triton(expert_gemm());
  EXPECT_EQ(ev.check.language, compile::Language::triton);
  EXPECT_EQ(ev.check.outcome, CheckOutcome::ok);
  EXPECT_EQ(ev.check.signature, "def run(A, B, C, M)");
  ASSERT_TRUE(ev.check.triton_gate);
  EXPECT_TRUE(ev.check.triton_gate->ok());
  EXPECT_FALSE(ev.gpu_ran);
  EXPECT_NE(ev.needs_gpu.find("need a GPU"), std::string::npos) << ev.needs_gpu;
  EXPECT_FALSE(ev.check.sass); // the cubins come from the GPU step's warm-up
  EXPECT_EQ(extras_json(ev)["language"], "triton");
}

TEST_F(TritonWithoutGpu, ATorchComputeCallIsABannedLibraryCompileErrorQuotingTheLine) {
  auto source =
      util::read_file(std::string(PTXBENCH_TEST_DATA) + "/compile/triton/gemm_torch_matmul.py");
  ASSERT_TRUE(source);
  const Evaluation ev = evaluate_triton(*source);
  EXPECT_EQ(ev.check.outcome, CheckOutcome::banned_library);
  EXPECT_EQ(ev.status, Status::compile_error);
  EXPECT_NE(ev.message.find("torch.matmul(A, B.T)"), std::string::npos) << ev.message;
  EXPECT_FALSE(ev.gpu_ran);
}

TEST_F(TritonWithoutGpu, AFileThatDoesNotParseOrHasOtherParametersIsACompileError) {
  const Evaluation syntax = evaluate_triton(triton_kernel("does_not_parse.py"));
  EXPECT_EQ(syntax.check.outcome, CheckOutcome::compile_error);
  EXPECT_EQ(syntax.status, Status::compile_error);
  EXPECT_NE(syntax.message.find("does not parse"), std::string::npos) << syntax.message;
  const Evaluation params = evaluate_triton(triton_kernel("wrong_parameters.py"));
  EXPECT_EQ(params.status, Status::compile_error);
  EXPECT_NE(params.message.find("`run(A, B, C)` does not match"), std::string::npos)
      << params.message;
}

TEST_F(TritonWithoutGpu, TheRuntimeFixturesPassTheGateSoTheirGpuTestsReachTheChild) {
  for (const char* name :
       {"raises.py", "raises_second_call.py", "hangs_in_autotuning.py", "torch_op.py",
        "other_stream.py", "late_work.py", "mutates_inputs.py", "out_of_bounds_write.py"}) {
    const Evaluation ev = evaluate_triton(triton_kernel(name));
    EXPECT_EQ(ev.check.outcome, CheckOutcome::ok) << name << ": " << ev.message;
    EXPECT_FALSE(ev.gpu_ran) << name;
  }
}

TEST_F(TritonWithoutGpu, LibraryCallsInAnyFormAreBannedLibraryCompileErrorsQuotingTheLine) {
  for (const auto& [name, quote] :
       {std::pair{"alias_matmul.py", "line 19: `product = t.matmul(A, B.T)`"},
        std::pair{"dunder_matmul.py", "line 18: `product = A.__matmul__(B.T)`"},
        std::pair{"aten_overload.py", "line 18: `product = torch.ops.aten.mm.default(A, B.T)`"}}) {
    const Evaluation ev = evaluate_triton(triton_kernel(name));
    EXPECT_EQ(ev.check.outcome, CheckOutcome::banned_library) << name << ": " << ev.message;
    EXPECT_EQ(ev.status, Status::compile_error) << name;
    EXPECT_NE(ev.message.find(quote), std::string::npos) << name << ": " << ev.message;
    EXPECT_FALSE(ev.gpu_ran) << name;
  }
}

TEST(TritonSolution, TheSolutionNameDependsOnTheLanguage) {
  auto problem = testing::supervisor().suite->find("gemm_n7168_k5120");
  ASSERT_TRUE(problem);
  EXPECT_NE(solution_name("def run(A, B, C, M): pass\n", **problem, compile::Language::triton),
            solution_name("def run(A, B, C, M): pass\n", **problem, compile::Language::cuda));
}

} // namespace
} // namespace ptxbench::exec
