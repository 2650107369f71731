// The static executor with Triton candidates (no GPU): the Triton gate's findings become the
// turn's category and feedback, through the same check path as every language's.
#include "loop_test_support.hpp"
#include "support/real_checker.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

namespace {

util::Expected<TurnResult> triton_static_turn(const std::string& source) {
  const ScratchDir cache;
  const test_support::RealChecker tools(cache.path(), test_support::SassCache::off);
  StaticExecutor executor(*tools.checker, frontend::of(compile::Language::triton));
  return executor.evaluate(source, gemm_problem(), compile::Arch::sm_90a);
}

} // namespace

TEST(TritonStatic, LibraryRulesAreBannedLibraryAndFormRulesCompile) {
  for (const char* rule : {"torch_call", "cutlass_import", "banned_method"})
    EXPECT_TRUE(compile::triton_library_rule(rule)) << rule;
  for (const char* rule : {"syntax_error", "missing_jit_kernel", "run_signature"})
    EXPECT_FALSE(compile::triton_library_rule(rule)) << rule;
}

TEST(TritonStatic, AFileWithAFormErrorAndATorchCallIsBannedLibraryAndListsBoth) {
  auto turn = triton_static_turn("import triton\n"
                                 "def run(A, B, C):\n"
                                 "    torch.mm(A, B)\n");
  ASSERT_TRUE(turn) << turn.error().message;
  EXPECT_EQ(turn->category, store::TurnCategory::banned_library);
  EXPECT_NE(turn->feedback.find("line 3: `torch.mm(A, B)`"), std::string::npos) << turn->feedback;
  EXPECT_NE(turn->feedback.find("[run_signature]"), std::string::npos) << turn->feedback;
  EXPECT_NE(turn->feedback.find("[missing_jit_kernel]"), std::string::npos) << turn->feedback;
  EXPECT_EQ(turn->evaluation.kernel_source,
            "import triton\ndef run(A, B, C):\n    torch.mm(A, B)\n");
}

TEST(TritonStatic, AFileWithOnlyAFormErrorIsACompileTurn) {
  auto turn = triton_static_turn("import triton\n"
                                 "def run(A, B, C, M):\n"
                                 "    pass\n");
  ASSERT_TRUE(turn) << turn.error().message;
  EXPECT_EQ(turn->category, store::TurnCategory::compile);
  EXPECT_NE(turn->feedback.find("[missing_jit_kernel]"), std::string::npos) << turn->feedback;
}

TEST(TritonStatic, APassingFileIsStaticOnlyAndSaysTheGpuStepDidNotRun) {
  auto turn = triton_static_turn("import triton\n"
                                 "@triton.jit\n"
                                 "def k(x):\n"
                                 "    pass\n"
                                 "def run(A, B, C, M):\n"
                                 "    k[(1,)](C)\n");
  ASSERT_TRUE(turn) << turn.error().message;
  EXPECT_EQ(turn->category, store::TurnCategory::static_only);
  EXPECT_NE(turn->feedback.find("The GPU step did not run"), std::string::npos);
  EXPECT_FALSE(turn->evaluation.static_verdict);
}
