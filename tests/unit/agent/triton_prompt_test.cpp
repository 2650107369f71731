// The Triton prompts: DPS instructions, the Triton pack of the arch in prompt order, the Python
// signature in a ```python fence; a CUDA variant is refused for a Triton run and the reverse.
#include "agent/plan.hpp"
#include "agent/prompt.hpp"
#include "loop_test_support.hpp"
#include "support/real_data.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

namespace {

Prompts triton_prompts(std::string_view variant, compile::Arch arch = compile::Arch::sm_90a) {
  auto prompts = build_prompts(gemm_problem(), arch, test_support::real_manifest(), variant, {},
                               frontend::of(compile::Language::triton));
  if (!prompts)
    throw util::Fatal(prompts.error().message);
  return *prompts;
}

} // namespace

TEST(TritonPrompts, TheSystemPromptExplainsDpsAndShowsThePythonSignature) {
  const std::string s = triton_prompts("triton-gemm-0").system;
  EXPECT_NE(s.find("single ```python code block"), std::string::npos);
  EXPECT_NE(s.find("destination-passing style: `run(<inputs>, <outputs>, <variable axes>)`"),
            std::string::npos);
  EXPECT_NE(s.find("```python\ndef run(\n    A,  # torch.Tensor torch.bfloat16 [M, 5120]"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("cudaStream_t"), std::string::npos);
  EXPECT_EQ(s.find("```cuda"), std::string::npos);
  EXPECT_NE(s.find("Target architecture: sm_90a"), std::string::npos);
}

TEST(TritonPrompts, PacksComposeContractBeforePatternAndBlackwellAddsItsContract) {
  const std::string base = triton_prompts("triton-gemm-0").system;
  const std::string pattern = triton_prompts("triton-gemm-1").system;
  const auto contract = pattern.find("# Triton contract");
  const auto persistent = pattern.find("# Pattern: persistent, L2-swizzled");
  ASSERT_NE(contract, std::string::npos);
  ASSERT_NE(persistent, std::string::npos);
  EXPECT_LT(contract, persistent);
  EXPECT_EQ(base.find("# Pattern: persistent"), std::string::npos);
  EXPECT_LT(base.size(), pattern.size());
  const std::string blackwell = triton_prompts("triton-gemm-0", compile::Arch::sm_100a).system;
  EXPECT_NE(blackwell.find("what differs from sm_90a"), std::string::npos);
  EXPECT_EQ(base.find("what differs from sm_90a"), std::string::npos);
  EXPECT_NE(triton_prompts("triton-mha-fwd-1").system.find("# Pattern: attention forward"),
            std::string::npos);
}

TEST(TritonPrompts, AVariantOfTheOtherLanguageIsRefused) {
  auto cuda_for_triton =
      build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(), "gemm-0",
                    {}, frontend::of(compile::Language::triton));
  ASSERT_FALSE(cuda_for_triton);
  EXPECT_EQ(cuda_for_triton.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(cuda_for_triton.error().message.find("is for cuda candidates, not triton"),
            std::string::npos);
  auto triton_for_cuda = build_prompts(gemm_problem(), compile::Arch::sm_90a,
                                       test_support::real_manifest(), "triton-gemm-0");
  ASSERT_FALSE(triton_for_cuda);
  EXPECT_NE(triton_for_cuda.error().message.find("is for triton candidates, not cuda"),
            std::string::npos);
}

TEST(TritonPrompts, TheDefaultAndPaperVariantsOfATritonPlanAreTritonOnes) {
  EXPECT_EQ(default_variant(test_support::real_manifest(), gemm_problem(),
                            frontend::of(compile::Language::triton)),
            "triton-gemm-0");
  EXPECT_EQ(default_variant(test_support::real_manifest(), gemm_problem()), "gemm-0");
  auto plan = parse_plan(R"({"models": ["m"], "language": "triton",
      "prompt_variants": ["paper"]})",
                         "/p.json");
  ASSERT_TRUE(plan) << plan.error().message;
  auto planned = expand(*plan, real_suite(), test_support::real_manifest());
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_EQ(planned->size(), 2u);
  EXPECT_EQ((*planned)[0].variant, "triton-gemm-0");
  EXPECT_EQ((*planned)[1].variant, "triton-gemm-1");
  auto wrong = parse_plan(R"({"models": ["m"], "language": "triton",
      "prompt_variants": ["gemm-1"]})",
                          "/p.json");
  ASSERT_TRUE(wrong);
  EXPECT_FALSE(expand(*wrong, real_suite(), test_support::real_manifest()));
}
