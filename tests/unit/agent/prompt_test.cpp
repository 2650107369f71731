// The opening prompts: instructions, knowledge pack, live device, signature and arch line.
#include "agent/prompt.hpp"
#include "loop_test_support.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

namespace {

const pack::Manifest& manifest() {
  static const pack::Manifest loaded = *pack::Manifest::load(pack::Manifest::default_path());
  return loaded;
}

} // namespace

TEST(Prompts, TheSystemPromptCarriesThePackTheLiveDeviceTheSignatureAndTheArch) {
  auto prompts = build_prompts(gemm_problem(), compile::Arch::sm_90a, manifest(), "gemm-0",
                               "# Live device\n| SMs | 132 |\n");
  ASSERT_TRUE(prompts) << prompts.error().message;
  const std::string& s = prompts->system;
  auto pack = s.find("# Architecture knowledge");
  auto live = s.find("# Live device");
  auto signature = s.find("void run(const __nv_bfloat16* A, const __nv_bfloat16* B, "
                          "__nv_bfloat16* C, int64_t M,");
  ASSERT_NE(pack, std::string::npos);
  ASSERT_NE(live, std::string::npos);
  ASSERT_NE(signature, std::string::npos);
  EXPECT_LT(pack, live);
  EXPECT_LT(live, signature);
  EXPECT_NE(s.find("Target architecture: sm_90a"), std::string::npos);
  EXPECT_NE(prompts->task.find("\"gemm_n7168_k5120\""), std::string::npos);
  EXPECT_EQ(prompts->task.find("\"tags\""), std::string::npos);
}

TEST(Prompts, VariantNoneLeavesOutPackAndLiveDevice) {
  auto prompts =
      build_prompts(gemm_problem(), compile::Arch::sm_90a, manifest(), "none", "# Live device\n");
  ASSERT_TRUE(prompts);
  EXPECT_EQ(prompts->system.find("# Architecture knowledge"), std::string::npos);
  EXPECT_EQ(prompts->system.find("# Live device"), std::string::npos);
  EXPECT_LT(prompts->system.size(), 3000u);
}

TEST(Prompts, AnUnknownVariantIsNotFound) {
  auto prompts = build_prompts(gemm_problem(), compile::Arch::sm_90a, manifest(), "gemm-9");
  ASSERT_FALSE(prompts);
  EXPECT_EQ(prompts.error().kind, util::ErrorKind::not_found);
}
