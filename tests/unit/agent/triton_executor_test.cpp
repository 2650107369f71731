// The Triton static executor: the gate's findings become the turn's category and feedback.
#include "agent/triton_executor.hpp"
#include "loop_test_support.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

TEST(TritonExecutor, LibraryRulesAreBannedLibraryAndFormRulesCompile) {
  EXPECT_EQ(category_of_rule("torch_call"), store::TurnCategory::banned_library);
  EXPECT_EQ(category_of_rule("cutlass_import"), store::TurnCategory::banned_library);
  EXPECT_EQ(category_of_rule("banned_method"), store::TurnCategory::banned_library);
  EXPECT_EQ(category_of_rule("syntax_error"), store::TurnCategory::compile);
  EXPECT_EQ(category_of_rule("missing_jit_kernel"), store::TurnCategory::compile);
  EXPECT_EQ(category_of_rule("run_signature"), store::TurnCategory::compile);
}

TEST(TritonExecutor, AFileWithAFormErrorAndATorchCallIsBannedLibraryAndListsBoth) {
  util::PosixProcessRunner runner;
  compile::TritonGate gate(runner);
  TritonStaticExecutor executor(gate);
  auto turn = executor.evaluate("import triton\n"
                                "def run(A, B, C):\n"
                                "    torch.mm(A, B)\n",
                                gemm_problem(), compile::Arch::sm_90a);
  ASSERT_TRUE(turn) << turn.error().message;
  EXPECT_EQ(turn->category, store::TurnCategory::banned_library);
  EXPECT_NE(turn->feedback.find("line 3: `torch.mm(A, B)`"), std::string::npos) << turn->feedback;
  EXPECT_NE(turn->feedback.find("[run_signature]"), std::string::npos) << turn->feedback;
  EXPECT_NE(turn->feedback.find("[missing_jit_kernel]"), std::string::npos) << turn->feedback;
  EXPECT_EQ(turn->evaluation.kernel_source,
            "import triton\ndef run(A, B, C):\n    torch.mm(A, B)\n");
}

TEST(TritonExecutor, APassingFileIsStaticOnlyAndSaysTheGpuStepDidNotRun) {
  util::PosixProcessRunner runner;
  compile::TritonGate gate(runner);
  TritonStaticExecutor executor(gate);
  auto turn = executor.evaluate("import triton\n"
                                "@triton.jit\n"
                                "def k(x):\n"
                                "    pass\n"
                                "def run(A, B, C, M):\n"
                                "    k[(1,)](C)\n",
                                gemm_problem(), compile::Arch::sm_90a);
  ASSERT_TRUE(turn) << turn.error().message;
  EXPECT_EQ(turn->category, store::TurnCategory::static_only);
  EXPECT_NE(turn->feedback.find("The GPU step did not run"), std::string::npos);
}
