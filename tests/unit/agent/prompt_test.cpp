// The opening prompts: instructions, knowledge pack, live device, signature and arch line; the
// task prompt's definition and the correctness rule it is judged by.
#include "agent/feedback.hpp"
#include "agent/prompt.hpp"
#include "compile/extract.hpp"
#include "exec/compare_rule.hpp"
#include "loop_test_support.hpp"
#include "suite/correctness.hpp"
#include "support/real_data.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

namespace {

const suite::Problem& problem(std::string_view name) {
  auto found = real_suite().find(name);
  if (!found)
    throw util::Fatal(found.error().message);
  return **found;
}

// The task prompt from its "# How correctness is judged" heading on ("" when it is absent).
std::string correctness_section(std::string_view name) {
  const std::string task = task_prompt(problem(name));
  const auto heading = task.find("# How correctness is judged");
  return heading == std::string::npos ? std::string() : task.substr(heading);
}

} // namespace

TEST(Prompts, TheSystemPromptCarriesThePackTheLiveDeviceTheSignatureAndTheArch) {
  auto prompts = build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(),
                               "gemm-0", "# Live device\n| SMs | 132 |\n");
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
  auto prompts = build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(),
                               "none", "# Live device\n");
  ASSERT_TRUE(prompts);
  EXPECT_EQ(prompts->system.find("# Architecture knowledge"), std::string::npos);
  EXPECT_EQ(prompts->system.find("# Live device"), std::string::npos);
  EXPECT_LT(prompts->system.size(), 3000u);
}

TEST(Prompts, AnUnknownVariantIsNotFound) {
  auto prompts =
      build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(), "gemm-9");
  ASSERT_FALSE(prompts);
  EXPECT_EQ(prompts.error().kind, util::ErrorKind::not_found);
}

TEST(Prompts, TheTaskPromptStatesAForwardProblemsRuleEveryElementMustPass) {
  for (std::string_view name : {"gemm_n7168_k5120", "mha_with_lse_d128"}) {
    const std::string section = correctness_section(name);
    ASSERT_FALSE(section.empty()) << name << ": no correctness section";
    EXPECT_NE(section.find("|x - y| > atol and |x - y| > rtol * |y|, with atol = 0.01 and "
                           "rtol = 0.01"),
              std::string::npos)
        << section;
    EXPECT_NE(section.find("passes only if every element of every output passes (required "
                           "matched ratio 1)"),
              std::string::npos)
        << section;
    EXPECT_EQ(section.find("at most"), std::string::npos) << section;
    EXPECT_NE(section.find("filled with NaN before every call"), std::string::npos) << section;
    EXPECT_NE(section.find("Inputs must not be modified"), std::string::npos) << section;
    EXPECT_NE(section.find("the output of any timed call may be checked"), std::string::npos)
        << section;
  }
}

TEST(Prompts, TheTaskPromptStatesABackwardProblemsMatchedRatioAndWhyItIsBelowOne) {
  const std::string section = correctness_section("mha_bwd_d128_causal");
  ASSERT_FALSE(section.empty()) << "no correctness section";
  EXPECT_NE(section.find("atol = 0.01 and rtol = 0.01"), std::string::npos) << section;
  EXPECT_NE(section.find("passes if at most 1e-05 of its output elements fail (required matched "
                         "ratio 1 - failed/elements >= 0.99999): bf16 attention backward"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("A NaN, or an infinity the reference does not have, always fails the "
                         "set"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("every element of every output passes"), std::string::npos);
}

// The evaluator compares elements with exec::Tolerance{} (exec/buffers.cpp) and judges sets with
// suite::correctness_rule; the prompt states the latter's tolerance, so for every problem they
// must be the same numbers.
TEST(Prompts, TheStatedToleranceIsTheOneTheEvaluatorCompares) {
  const exec::Tolerance compared{};
  for (const suite::Problem& each : real_suite().problems()) {
    const suite::CorrectnessRule rule = suite::correctness_rule(each);
    EXPECT_EQ(static_cast<float>(rule.atol), compared.atol) << each.definition.name;
    EXPECT_EQ(static_cast<float>(rule.rtol), compared.rtol) << each.definition.name;
  }
}

TEST(Prompts, TheRepairPromptIsTheOriginalFixitPromptWithOurFence) {
  const std::string prompt = *repair_prompt(frontend::of(compile::Language::cuda), gemm_problem(),
                                            "__global__ void k() {}\n", "error: expected a ';'\n");
  const std::string task = task_content(gemm_problem());
  const std::string expected =
      "Task:\n" + task.substr(0, task.size() - 1) +
      "\n\nKernel\n\n```cuda\n__global__ void k() {}\n```\nError Message\n\nerror: expected a "
      "';'\nYour task is to fix the CUDA kernel with the minimal change. The kernel implements "
      "the given PyTorch reference.\n\n";
  EXPECT_EQ(prompt, expected);
  EXPECT_NE(task.find("\"gemm_n7168_k5120\""), std::string::npos);
  EXPECT_NE(task.find("# How correctness is judged"), std::string::npos);
  EXPECT_EQ(task_prompt(gemm_problem()),
            "Implement this operator (FlashInfer-Trace definition):\n\n" + task);
}

namespace {

// Every "```<language>" that an instruction of `text` asks for ("a single ```cuda code block").
std::vector<std::string> requested_fences(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t at = text.find("single ```"); at != std::string_view::npos;
       at = text.find("single ```", at + 1)) {
    const std::size_t start = at + std::string_view("single ").size();
    const std::size_t end = text.find_first_of(" \n", start);
    out.emplace_back(text.substr(start, end - start));
  }
  return out;
}

} // namespace

// Issue 17 item 5: the system prompt said "compiled with -arch=sm_90a" beside a pack that says
// never to use plain -arch; extraction feedback asked for ```cpp and ```cuda in one message.
TEST(Prompts, ThePromptAndTheFeedbackStateOneFenceAndTheRealBuildFlags) {
  auto prompts = build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(),
                               "gemm-0", "");
  ASSERT_TRUE(prompts) << prompts.error().message;
  const std::string& system = prompts->system;
  EXPECT_NE(system.find("nvcc builds the file with -O3 -std=c++20 -gencode "
                        "arch=compute_90a,code=sm_90a"),
            std::string::npos);
  EXPECT_EQ(system.find("compiled with -arch"), std::string::npos);
  const std::string no_block = extraction_feedback(compile::extract_candidate("no code").error(),
                                                   frontend::of(compile::Language::cuda));
  const std::string incomplete = extraction_feedback(
      compile::extract_candidate("```cuda\n__global__ void k() {}\n```\n```json\n{}\n```\n")
          .error(),
      frontend::of(compile::Language::cuda));
  std::vector<std::string> fences;
  for (const std::string* text : {&system, &no_block, &incomplete})
    for (std::string& fence : requested_fences(*text))
      fences.push_back(std::move(fence));
  EXPECT_GE(fences.size(), 5u);
  for (const std::string& fence : fences)
    EXPECT_EQ(fence, compile::kCodeFence) << system << no_block << incomplete;
  EXPECT_TRUE(compile::is_cuda_language(compile::kCodeFence.substr(3)));
}
