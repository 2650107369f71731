// The built-in frontends: each reads its own fence, asks for it, and prompts in its own form.
#include "frontend/frontend.hpp"
#include "support/real_data.hpp"

#include <gtest/gtest.h>

namespace ptxbench::frontend {
namespace {

const std::string kTritonKernel = "import triton\n@triton.jit\ndef k(x):\n    pass\n"
                                  "def run(A, B, C, M):\n    k[(1,)](A)\n";

const suite::Problem& gemm() {
  return **test_support::real_suite().find("gemm_n7168_k5120");
}

std::string fenced(std::string_view info, std::string_view code) {
  return "```" + std::string(info) + "\n" + std::string(code) + "```\n";
}

TEST(Frontends, EachLanguageHasItsFrontendUnderItsName) {
  EXPECT_EQ(of(compile::Language::cuda).name(), "cuda");
  EXPECT_EQ(of(compile::Language::triton).name(), "triton");
  EXPECT_EQ(of(compile::Language::cuda).base_variant(), "base");
  EXPECT_EQ(of(compile::Language::triton).base_variant(), "triton-base");
}

TEST(Frontends, ALanguageIsNamedOrTakenFromItsFilesExtension) {
  EXPECT_EQ(*language_for("", "kernel.py"), compile::Language::triton);
  EXPECT_EQ(*language_for("", "kernel.cu"), compile::Language::cuda);
  EXPECT_EQ(*language_for("", "kernel.txt"), compile::Language::cuda);
  EXPECT_EQ(*language_for(""), compile::Language::cuda);
  EXPECT_EQ(*language_for("triton", "kernel.cu"), compile::Language::triton);
  auto unknown = language_for("rust", "kernel.rs");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(unknown.error().message, "--language must be cuda or triton, not 'rust'");
}

TEST(Frontends, ACudaRunTakesNoPythonBlockAndATritonRunNoCudaOne) {
  auto cuda = of(compile::Language::cuda).extract(fenced("python", kTritonKernel));
  ASSERT_FALSE(cuda);
  EXPECT_NE(cuda.error().message.find(compile::kCodeFence), std::string::npos)
      << cuda.error().message;
  auto triton = of(compile::Language::triton).extract(fenced("python", kTritonKernel));
  ASSERT_TRUE(triton) << triton.error().message;
  EXPECT_EQ(triton->code, kTritonKernel);
  EXPECT_FALSE(of(compile::Language::triton)
                   .extract(fenced("cuda", "__global__ void k() {}\nvoid run() {}\n")));
}

TEST(Frontends, TheReplyRequestNamesTheLanguagesFence) {
  EXPECT_NE(of(compile::Language::cuda).reply_request().find("single ```cuda code block"),
            std::string::npos);
  EXPECT_NE(of(compile::Language::triton).reply_request().find("single ```python block"),
            std::string::npos);
}

TEST(Frontends, TheSystemPromptShowsTheSignatureInTheLanguagesForm) {
  auto cuda = of(compile::Language::cuda).system_prompt(gemm(), "PACK", compile::Arch::sm_90a);
  ASSERT_TRUE(cuda) << cuda.error().message;
  EXPECT_NE(cuda->find("# Architecture knowledge\n\nPACK"), std::string::npos);
  EXPECT_NE(cuda->find("cudaStream_t"), std::string::npos);
  auto triton = of(compile::Language::triton).system_prompt(gemm(), "", compile::Arch::sm_100a);
  ASSERT_TRUE(triton) << triton.error().message;
  EXPECT_EQ(triton->find("# Architecture and Triton knowledge"), std::string::npos);
  EXPECT_NE(triton->find("```python\ndef run("), std::string::npos);
  EXPECT_NE(triton->find("Target architecture: sm_100a"), std::string::npos);
}

} // namespace
} // namespace ptxbench::frontend
