// A language is a Frontend (frontend/frontend.hpp): a toy language defined here, and nowhere
// else, is read from replies, asked for and prompted by the agent's own code, and checked by
// the static executor through the check path of every language.
#include "agent/loop.hpp"
#include "agent/prompt.hpp"
#include "compile/extract.hpp"
#include "loop_test_support.hpp"
#include "store/run_store.hpp"
#include "support/real_checker.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

namespace {

// Candidates are ```toy blocks holding one `toy` line; its prompts say so.
class ToyFrontend final : public frontend::Frontend {
public:
  ToyFrontend()
      : Frontend({.name = "toy",
                  .base_variant = "toy-base",
                  .report_tag = "toy",
                  .checked_summary = "read",
                  .no_gpu_note = "Toys run nowhere.\n",
                  .static_run_notice = "every toy turn is read",
                  .check_is_cached = true,
                  .uses_candidate_binary = false,
                  .fence = "```toy",
                  .kernel_noun = "toy",
                  .instructions = "Write toy.",
                  .knowledge_title = "Toy knowledge",
                  .reply_request = "Reply with one ```toy block.",
                  .file_extension = ".toy"}) {}
  util::Expected<compile::Extraction> extract(std::string_view reply) const override {
    const std::vector<compile::CodeBlock> blocks = compile::find_code_blocks(reply);
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].info == "toy")
        return compile::Extraction{blocks[i].code, i, blocks.size(), {}};
    return util::make_error(util::ErrorKind::extraction, "no toy block");
  }
  util::Expected<frontend::ShownSignature>
  shown_signature(const suite::Problem& problem) const override {
    return frontend::ShownSignature{
        "Toy signature", "toy run(" + problem.name() + ")", {{"signature", "toy run"}}};
  }

  // A toy file is checked by reading it: a `toy` line passes, `import cublas` is a banned
  // library, anything else does not compile. Toy candidates never reach a GPU.
  util::Expected<frontend::Checked> check(const frontend::CheckTools& /*tools*/,
                                          const std::string& source, const suite::Problem& problem,
                                          compile::Arch arch) const override {
    frontend::Checked checked;
    checked.report.problem = problem.name();
    checked.report.arch = arch;
    checked.report.signature = "toy run";
    if (source.find("import cublas") != std::string::npos)
      checked.report.outcome = frontend::CheckOutcome::banned_library;
    else if (!source.starts_with("toy "))
      checked.report.outcome = frontend::CheckOutcome::compile_error;
    checked.report.phases = {{"toy_read", std::chrono::microseconds(1)}};
    return checked;
  }
  std::string check_text(const frontend::CheckReport&) const override { return "toy\n"; }

protected:
  util::Expected<std::string> prompt_signature(const suite::Problem& problem) const override {
    return "toy run(" + problem.name() + ")";
  }
  std::string build_note(compile::Arch /*arch*/) const override { return "toys are read"; }
  util::Expected<std::string> repair_rules(const suite::Problem& /*problem*/) const override {
    return std::string("Answer in toy.");
  }
};

const std::string kToyReply = "Here.\n```toy\ntoy 42\n```\n";

} // namespace

TEST(ToyFrontend, ThePromptsAreTheToyLanguagesOwn) {
  const ToyFrontend toy;
  auto prompts = build_prompts(gemm_problem(), compile::Arch::sm_100a,
                               test_support::real_manifest(), "none", {}, toy);
  ASSERT_TRUE(prompts) << prompts.error().message;
  EXPECT_EQ(prompts->system, "Write toy.\n\n# Required signature\n\n```toy\n"
                             "toy run(gemm_n7168_k5120)\n```\n\n"
                             "Target architecture: sm_100a (toys are read).\n");
  EXPECT_EQ(prompts->task, task_prompt(gemm_problem()));
  auto repair = repair_prompt(toy, gemm_problem(), "toy 1", "wrong");
  ASSERT_TRUE(repair);
  EXPECT_TRUE(repair->starts_with("Task:\n")) << *repair;
  EXPECT_TRUE(repair->ends_with("Kernel\n\n```toy\ntoy 1\n```\nError Message\n\nwrong\nYour task "
                                "is to fix the toy kernel with the minimal change. The kernel "
                                "implements the given PyTorch reference.\n\nAnswer in toy."))
      << *repair;
  EXPECT_EQ(default_variant(test_support::real_manifest(), gemm_problem(), toy), "toy-base");
  auto cuda_variant = build_prompts(gemm_problem(), compile::Arch::sm_90a,
                                    test_support::real_manifest(), "gemm-0", {}, toy);
  ASSERT_FALSE(cuda_variant);
  EXPECT_NE(cuda_variant.error().message.find("is for cuda candidates, not toy"),
            std::string::npos);
}

TEST(ToyFrontend, TheLoopTakesToyBlocksAndAsksForThemWhenMissing) {
  ScratchDir dir;
  auto store = store::RunStore::open(dir.path(), store::RunInfo{"{}", "test", ""});
  ASSERT_TRUE(store) << store.error().message;
  const model::ModelSpec spec = scripted_spec();
  TrajectoryTask task;
  task.key = store::TrajectoryKey{"scripted", "gemm_n7168_k5120", "none", 0};
  task.problem = &gemm_problem();
  task.model = &spec;
  task.prompts = Prompts{"SYSTEM", "TASK", "none"};
  LoopOptions options;
  options.max_turns = 2;
  ClientSlot client;
  client.script = std::make_shared<ScriptedClient>(
      std::vector<ScriptedClient::Step>{kernel_reply("a CUDA kernel"), kToyReply});
  ScriptedExecutor executor({ScriptedExecutor::Verdict{store::TurnCategory::numerical, {}}});
  const ToyFrontend toy;
  LoopDeps deps;
  deps.store = store->get();
  deps.executor = &executor;
  deps.make_client = client.maker();
  deps.frontend = &toy;
  auto result = run_trajectory(task, options, deps);
  ASSERT_TRUE(result) << result.error().message;
  auto turns = *(*store)->finished_turns(result->id);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].category, store::TurnCategory::extraction);
  EXPECT_NE(turns[0].feedback->find("no toy block\nReply with one ```toy block."),
            std::string::npos)
      << *turns[0].feedback;
  EXPECT_EQ(turns[1].kernel_source, "toy 42\n");
  EXPECT_EQ(executor.calls(), 1u);
}

TEST(ToyFrontend, TheStaticExecutorChecksToyCandidatesWithTheToyLanguagesCheck) {
  const ScratchDir cache;
  const test_support::RealChecker tools(cache.path(), test_support::SassCache::off);
  const ToyFrontend toy;
  StaticExecutor executor(*tools.checker, toy);
  auto passed = executor.evaluate("toy 42\n", gemm_problem(), compile::Arch::sm_90a);
  ASSERT_TRUE(passed) << passed.error().message;
  EXPECT_EQ(passed->category, store::TurnCategory::static_only);
  EXPECT_NE(passed->feedback.find("Toys run nowhere."), std::string::npos) << passed->feedback;
  EXPECT_EQ(passed->evaluation.kernel_source, "toy 42\n");
  auto banned = executor.evaluate("import cublas\n", gemm_problem(), compile::Arch::sm_90a);
  ASSERT_TRUE(banned) << banned.error().message;
  EXPECT_EQ(banned->category, store::TurnCategory::banned_library);
  auto broken = executor.evaluate("not a toy\n", gemm_problem(), compile::Arch::sm_90a);
  ASSERT_TRUE(broken) << broken.error().message;
  EXPECT_EQ(broken->category, store::TurnCategory::compile);
  EXPECT_EQ(broken->feedback.find("Toys run nowhere."), std::string::npos) << broken->feedback;
}

TEST(ToyFrontend, TheCheckCommandReportsEachArchThroughTheToyLanguagesCheck) {
  const ScratchDir cache;
  const test_support::RealChecker tools(cache.path(), test_support::SassCache::off);
  util::PosixProcessRunner runner;
  const ToyFrontend toy;
  const std::array arches{compile::Arch::sm_90a, compile::Arch::sm_100a};
  auto passed = toy.command_check(tools.checker->tools(runner), "toy 42\n", gemm_problem(), arches,
                                  "kernel.toy");
  ASSERT_TRUE(passed) << passed.error().message;
  EXPECT_EQ(passed->verdict, frontend::CommandVerdict::pass);
  ASSERT_EQ(passed->json.size(), 2u);
  EXPECT_EQ(passed->json[1]["arch"], "sm_100a");
  EXPECT_NE(passed->text.find("toy\n"), std::string::npos) << passed->text; // its own part
  auto broken = toy.command_check(tools.checker->tools(runner), "not a toy\n", gemm_problem(),
                                  arches, "kernel.toy");
  ASSERT_TRUE(broken) << broken.error().message;
  EXPECT_EQ(broken->verdict, frontend::CommandVerdict::fail);
  auto shown = toy.shown_signature(gemm_problem());
  ASSERT_TRUE(shown) << shown.error().message;
  EXPECT_EQ(shown->title, "Toy signature");
}
