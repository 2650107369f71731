// A language is a Frontend (frontend/frontend.hpp): a toy language defined here, and nowhere
// else, is read from replies, asked for and prompted by the agent's own code.
#include "agent/loop.hpp"
#include "agent/prompt.hpp"
#include "compile/extract.hpp"
#include "loop_test_support.hpp"
#include "store/run_store.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

namespace {

// Candidates are ```toy blocks holding one `toy` line; its prompts say so.
class ToyFrontend final : public frontend::Frontend {
public:
  std::string_view name() const override { return "toy"; }
  util::Expected<compile::Extraction> extract(std::string_view reply) const override {
    const std::vector<compile::CodeBlock> blocks = compile::find_code_blocks(reply);
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].info == "toy")
        return compile::Extraction{blocks[i].code, i, blocks.size(), {}};
    return util::make_error(util::ErrorKind::extraction, "no toy block");
  }
  std::string reply_request() const override { return "Reply with one ```toy block."; }
  util::Expected<std::string> system_prompt(const suite::Problem& problem,
                                            std::string_view pack_text,
                                            compile::Arch arch) const override {
    return "Write toy for " + problem.name() + " on " + std::string(compile::to_string(arch)) +
           (pack_text.empty() ? "" : " knowing " + std::string(pack_text));
  }
  util::Expected<std::string> repair_prompt(std::string_view task, const suite::Problem&,
                                            std::string_view wrong_kernel,
                                            std::string_view error_log) const override {
    return "Fix this toy: " + std::string(wrong_kernel) + " (" + std::string(error_log) + ") for " +
           std::string(task.substr(0, 7));
  }
  std::string_view base_variant() const override { return "toy-base"; }
};

const std::string kToyReply = "Here.\n```toy\ntoy 42\n```\n";

} // namespace

TEST(ToyFrontend, ThePromptsAreTheToyLanguagesOwn) {
  const ToyFrontend toy;
  auto prompts = build_prompts(gemm_problem(), compile::Arch::sm_100a,
                               test_support::real_manifest(), "none", {}, toy);
  ASSERT_TRUE(prompts) << prompts.error().message;
  EXPECT_EQ(prompts->system, "Write toy for gemm_n7168_k5120 on sm_100a");
  EXPECT_EQ(prompts->task, task_prompt(gemm_problem()));
  auto repair = repair_prompt(toy, gemm_problem(), "toy 1", "wrong");
  ASSERT_TRUE(repair);
  EXPECT_EQ(*repair, "Fix this toy: toy 1 (wrong) for ```json");
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
