// The Fixit repair prompt per language: a Triton failure's prompt parallels the original's CUDA
// one (same layout, ```python fence, the Triton fix sentence, the exact DPS signature and the
// gate's torch rule); a CUDA failure's is the original's, unchanged. The repair plan takes the
// failures' language, and refuses two languages in one run.
#include "adapt/repair.hpp"
#include "agent/prompt.hpp"
#include "compile/triton_abi.hpp"
#include "model_stage_support.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::adapt;
using namespace ptxbench::adapt::testing;

namespace {

const suite::Problem& gemm() {
  return **real_suite().find("gemm_n7168_k5120");
}

constexpr std::string_view kTritonKernel = "import triton\n\n\ndef run(A, B, C, M):\n    pass\n";
constexpr std::string_view kLog = "line 5: `C.copy_(A)`: no torch calls [torch_call]\n";

FailureRecord triton_failure(int n) {
  FailureRecord f = failure(n);
  f.trajectory_key.language = trace::Language::triton;
  f.kernel_source = std::string(kTritonKernel) + "# wrong kernel " + std::to_string(n) + "\n";
  return f;
}

} // namespace

TEST(RepairPrompt, ATritonFailureGetsThePythonFencedTritonPrompt) {
  auto prompt =
      agent::repair_prompt(frontend::of(compile::Language::triton), gemm(), kTritonKernel, kLog);
  ASSERT_TRUE(prompt) << prompt.error().message;
  EXPECT_EQ(prompt->rfind("Task:\n```json\n", 0), 0u);
  EXPECT_NE(prompt->find("Kernel\n\n```python\n" +
                         std::string(kTritonKernel.substr(0, kTritonKernel.size() - 1)) +
                         "\n```\nError Message\n\n" + std::string(kLog.substr(0, kLog.size() - 1)) +
                         "\n"),
            std::string::npos)
      << *prompt;
  EXPECT_NE(prompt->find("Your task is to fix the Triton kernel with the minimal change."),
            std::string::npos);
  EXPECT_EQ(prompt->find("```cuda"), std::string::npos);
  EXPECT_EQ(prompt->find("CUDA kernel"), std::string::npos);
  auto signature = compile::make_triton_signature(gemm().definition);
  ASSERT_TRUE(signature);
  EXPECT_NE(prompt->find("```python\n" + signature->pretty() + "\n```"), std::string::npos)
      << *prompt;
  EXPECT_NE(prompt->find("returns nothing"), std::string::npos);
  EXPECT_NE(prompt->find("`torch.empty` inside the allocator given to `triton.set_allocator`"),
            std::string::npos);
  // The task is the same as the CUDA prompt's.
  EXPECT_NE(prompt->find(agent::task_content(gemm()).substr(0, 200)), std::string::npos);
}

TEST(RepairPrompt, ACudaFailureGetsTheOriginalPromptUnchanged) {
  const std::string kernel = "__global__ void k() {}\n";
  auto prompt =
      agent::repair_prompt(frontend::of(compile::Language::cuda), gemm(), kernel, "error: x\n");
  ASSERT_TRUE(prompt);
  EXPECT_EQ(*prompt,
            "Task:\n" +
                agent::task_content(gemm()).substr(0, agent::task_content(gemm()).size() - 1) +
                "\n\nKernel\n\n```cuda\n__global__ void k() {}\n```\nError Message\n\n"
                "error: x\nYour task is to fix the CUDA kernel with the minimal change. "
                "The kernel implements the given PyTorch reference.\n\n");
}

TEST(RepairPrompt, TheRepairPlanTakesTheFailuresLanguage) {
  ScratchDir dir;
  write_records(repair_paths(dir.path()).selected,
                std::vector{triton_failure(0), triton_failure(1)});
  RepairOptions options;
  options.data_dir = dir.path();
  options.teacher = "loop";
  auto plan = repair_plan(options);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->loop.language, compile::Language::triton);
  write_records(repair_paths(dir.path()).selected, std::vector{failure(0), failure(1)});
  auto cuda = repair_plan(options);
  ASSERT_TRUE(cuda) << cuda.error().message;
  EXPECT_EQ(cuda->loop.language, compile::Language::cuda);
}

TEST(RepairPrompt, FailuresOfTwoLanguagesAreRefusedWithAClearMessage) {
  ScratchDir dir;
  write_records(repair_paths(dir.path()).selected, std::vector{failure(0), triton_failure(1)});
  RepairOptions options;
  options.data_dir = dir.path();
  options.teacher = "loop";
  auto plan = repair_plan(options);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(plan.error().message.find("two candidate languages (cuda and triton)"),
            std::string::npos)
      << plan.error().message;
}

TEST(RepairPrompt, TheFailuresLanguageSurvivesTheRecordFiles) {
  store::TrajectoryKey key{"student", "gemm_n7168_k5120", "none", 3};
  key.language = trace::Language::triton;
  const Json json = to_json(key);
  EXPECT_EQ(json["language"], "triton");
  auto back = trajectory_key_from_json(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, key);
  // A CUDA key is written as before the field existed, and such a record reads as CUDA.
  key.language = trace::Language::cuda;
  EXPECT_FALSE(to_json(key).contains("language"));
  auto cuda = trajectory_key_from_json(to_json(key));
  ASSERT_TRUE(cuda);
  EXPECT_EQ(cuda->language, trace::Language::cuda);
  Json bad = to_json(key);
  bad["language"] = "fortran";
  EXPECT_FALSE(trajectory_key_from_json(bad));
}
