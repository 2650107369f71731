// A repair run: the ordinary loop and runner with a plan that lists wrong kernels, so every
// trajectory opens with the Fixit repair prompt; the run store, the turn budget, the stop
// speedup and resume are the ordinary ones.
#include "agent/prompt.hpp"
#include "agent/runner.hpp"
#include "loop_test_support.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/real_data.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;
using test_support::chat_body;
using test_support::LoopbackServer;
using test_support::reply_json;
using test_support::write_registry;

namespace {

// Sets `cancel` when it has evaluated `before_cancel` kernels; scripts as usual.
class CancellingExecutor final : public Executor {
public:
  CancellingExecutor(std::vector<ScriptedExecutor::Step> steps, std::atomic<bool>& cancel,
                     std::size_t before_cancel)
      : m_script(std::move(steps)), m_cancel(cancel), m_before_cancel(before_cancel) {}
  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem& problem,
                                      compile::Arch arch) override {
    auto result = m_script.evaluate(source, problem, arch);
    if (m_script.calls() == m_before_cancel)
      m_cancel = true;
    return result;
  }
  std::string_view name() const override { return "cancelling"; }

private:
  ScriptedExecutor m_script;
  std::atomic<bool>& m_cancel;
  std::size_t m_before_cancel;
};

RunPlan repair_plan() {
  RunPlan plan;
  plan.models = {"loop"};
  plan.jobs = 1;
  plan.loop.max_turns = 3;
  plan.loop.target_speedup = 0.15;
  plan.repairs = {{"f1", "gemm_n7168_k5120", "none", "// wrong kernel one\n", "compile log 1"},
                  {"f2", "gemm_n7168_k5120", "none", "// wrong kernel two\n", "numerical 2"}};
  return plan;
}

} // namespace

TEST(RepairRun, EachRepairIsATrajectoryOpeningWithTheRepairPromptAndResumes) {
  ScratchDir dir;
  LoopbackServer server([](int, const httplib::Request&, httplib::Response& response) {
    reply_json(response, chat_body(kernel_reply("fixed")));
  });
  auto registry = model::load_registry(write_registry(dir, server.base_url()));
  ASSERT_TRUE(registry) << registry.error().message;
  auto store = store::RunStore::open(dir.path() / "run", store::RunInfo{"{}", "test", ""});
  ASSERT_TRUE(store);
  auto transport = model::make_curl_transport();
  const RunPlan plan = repair_plan();
  std::atomic<bool> cancel{false};
  // Repair f1: wrong, then correct above the stop speedup; repair f2: wrong three times.
  CancellingExecutor executor({numerical(), correct(0.2), numerical(), numerical(), numerical()},
                              cancel, 3);
  RunDeps deps;
  deps.store = store->get();
  deps.executor = &executor;
  deps.suite = &real_suite();
  deps.manifest = &test_support::real_manifest();
  deps.registry = &*registry;
  deps.client.transport = transport.get();
  deps.cancel = &cancel;
  auto first = run_plan(plan, deps);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->finished(), 1);
  cancel = false;
  auto second = run_plan(plan, deps);
  ASSERT_TRUE(second) << second.error().message;
  ASSERT_EQ(second->finished(), 2);
  EXPECT_EQ(second->trajectories[0].result->exit, store::ExitReason::target_met);
  EXPECT_EQ(second->trajectories[1].result->exit, store::ExitReason::turn_budget);
  EXPECT_EQ(second->trajectories[1].result->counted_turns, 3);
  EXPECT_EQ(second->trajectories[1].key,
            (store::TrajectoryKey{"loop", "gemm_n7168_k5120", "none", 1}));
  for (std::size_t i = 0; i < 2; ++i) {
    auto prompts = *(*store)->prompts(second->trajectories[i].result->id);
    ASSERT_TRUE(prompts);
    EXPECT_EQ(prompts->task, *repair_prompt(frontend::of(compile::Language::cuda), gemm_problem(),
                                            plan.repairs[i].kernel, plan.repairs[i].error));
  }
  // Every request, the resumed ones too, opens with the system prompt and a repair prompt.
  ASSERT_EQ(server.count(), 5u);
  for (const auto& request : server.requests()) {
    auto messages = request.json()["messages"];
    EXPECT_EQ(messages[0]["role"], "system");
    EXPECT_EQ(messages[1]["content"].get<std::string>().rfind("Task:\n", 0), 0u);
  }
  EXPECT_NE(server.requests()[4].json()["messages"][1]["content"].get<std::string>().find(
                "// wrong kernel two"),
            std::string::npos);
}
