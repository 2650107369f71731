// The agent end to end on the CPU machine: real providers (replay, and the OpenAI client over
// real HTTP on loopback), the real run store, the real gate, nvcc and SASS scan; only the GPU
// step is stood in for, because this machine has no GPU.
#include "agent/runner.hpp"
#include "loop_test_support.hpp"
#include "support/fill_kernel.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/real_checker.hpp"
#include "support/real_data.hpp"
#include "util/paths.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;
using namespace ptxbench::model;
using store::TurnCategory;
using test_support::chat_body;
using test_support::ChatUsage;
using test_support::fill_kernel;
using test_support::LoopbackServer;
using test_support::RealChecker;
using test_support::reply_json;
using test_support::SassCache;
using test_support::write_registry;

namespace {

// The real static check; a kernel that builds gets the next scripted GPU verdict.
class GpuStandIn final : public Executor {
public:
  GpuStandIn(const exec::Checker& checker, std::vector<ScriptedExecutor::Verdict> verdicts)
      : m_static(checker), m_verdicts(verdicts.begin(), verdicts.end()) {}

  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem& problem,
                                      compile::Arch arch) override {
    auto result = m_static.evaluate(source, problem, arch);
    if (!result || result->category != TurnCategory::static_only)
      return result;
    std::lock_guard lock(m_mutex);
    if (!m_verdicts.empty()) {
      result->category = m_verdicts.front().category;
      result->speedup = m_verdicts.front().speedup;
      result->evaluation.speedup = result->speedup;
      m_verdicts.pop_front();
    }
    return result;
  }
  std::string_view name() const override { return "gpu-stand-in"; }

private:
  StaticExecutor m_static;
  std::mutex m_mutex;
  std::deque<ScriptedExecutor::Verdict> m_verdicts;
};

RunDeps run_deps(store::RunStore& store, Executor& executor, const ModelRegistry& registry) {
  RunDeps deps;
  deps.store = &store;
  deps.executor = &executor;
  deps.suite = &real_suite();
  deps.manifest = &test_support::real_manifest();
  deps.registry = &registry;
  return deps;
}

constexpr ChatUsage kUsage{1000, 200};

std::string fenced(std::string_view code) {
  return "```cuda\n" + std::string(code) + "```\n";
}

// The reply for the model's turn t (0-based among the turns the model has seen feedback for).
std::string scripted_reply(std::size_t turn) {
  switch (turn) {
  case 0:
    return "I will first think about the tiling; no code yet.";
  case 1:
    return "Sketch:\n```cuda\n__global__ void k();\n```\nFull file:\n" +
           fenced(fill_kernel("second block"));
  case 2:
    return std::string(3 << 20, 'x') + "\n" + fenced(fill_kernel("after a huge reply"));
  default:
    return {}; // turn 3 goes out as raw bytes (see the server in the test)
  }
}

} // namespace

TEST(AgentEndToEnd, TheDemoReplayGivesACompileErrorAWrongResultAndACorrectKernel) {
  ScratchDir cache;
  RealChecker tools(cache.path(), SassCache::off);
  ScratchDir run_dir;
  auto registry = load_registry(default_registry_path());
  ASSERT_TRUE(registry) << registry.error().message;
  auto store = store::RunStore::open(run_dir.path(), store::RunInfo{"{}", "test", ""});
  ASSERT_TRUE(store);
  GpuStandIn executor(*tools.checker,
                      {numerical(), correct(0.5)}); // what the H200 says of turns 2 and 3
  RunPlan plan;
  plan.models = {"demo"};
  plan.loop.max_turns = 3;
  RunDeps deps = run_deps(**store, executor, *registry);
  auto summary = run_plan(plan, deps);
  ASSERT_TRUE(summary) << summary.error().message;
  ASSERT_EQ(summary->trajectories.size(), 1u);
  ASSERT_TRUE(summary->trajectories[0].result);
  const auto& result = *summary->trajectories[0].result;
  EXPECT_EQ(result.exit, store::ExitReason::turn_budget);
  auto turns = *(*store)->finished_turns(result.id);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[0].category, TurnCategory::compile);
  EXPECT_NE(turns[0].feedback->find("identifier \"wgmma_m64n256k16\" is undefined"),
            std::string::npos);
  EXPECT_EQ(turns[1].category, TurnCategory::numerical);
  EXPECT_NE(turns[1].feedback->find("present (GMMA="), std::string::npos);
  EXPECT_EQ(turns[2].category, TurnCategory::correct);
  EXPECT_DOUBLE_EQ(result.best_speedup.value_or(0), 0.5);
  // The system prompt carries the knowledge pack and the exact ABI signature.
  auto prompts = *(*store)->prompts(result.id);
  ASSERT_TRUE(prompts);
  EXPECT_NE(prompts->system.find("void run(const __nv_bfloat16* A"), std::string::npos);
  EXPECT_NE(prompts->system.find("wgmma"), std::string::npos);
}

TEST(AgentEndToEnd, BadRepliesAndAnHttp500StormOverLoopbackHttp) {
  ScratchDir cache;
  RealChecker tools(cache.path(), SassCache::off);
  ScratchDir dir;
  std::atomic<int> failures_left{3};
  LoopbackServer server([&](int, const httplib::Request& request, httplib::Response& response) {
    if (failures_left.fetch_sub(1) > 0) {
      reply_json(response, {{"error", {{"message", "upstream overloaded"}}}}, 500);
      return;
    }
    auto messages = nlohmann::json::parse(request.body)["messages"];
    std::size_t turn = (messages.size() - 2) / 2;
    if (turn < 3) {
      reply_json(response, chat_body(scripted_reply(turn), kUsage));
      return;
    }
    // Invalid UTF-8 on the wire: nlohmann refuses to write it, so splice the raw bytes in.
    std::string body = chat_body("@BYTES@" + fenced(fill_kernel("invalid utf-8")), kUsage).dump();
    body.replace(body.find("@BYTES@"), 7, "bad bytes \xff\xfe\xc3 here\\n");
    response.set_content(body, "application/json");
  });
  auto registry = load_registry(write_registry(dir, server.base_url(), /*max_attempts=*/2));
  ASSERT_TRUE(registry) << registry.error().message;
  auto store = store::RunStore::open(dir.path() / "run", store::RunInfo{"{}", "test", ""});
  ASSERT_TRUE(store);
  StaticExecutor executor(*tools.checker);
  auto transport = make_curl_transport();
  RunPlan plan;
  plan.models = {"loop"};
  plan.prompt_variants = {"none"};
  plan.trajectories = 2;
  plan.jobs = 2;
  plan.loop.max_turns = 4;
  RunDeps deps = run_deps(**store, executor, *registry);
  deps.client.transport = transport.get();
  deps.client.retry.initial_delay = std::chrono::milliseconds(1);
  deps.client.retry.max_delay = std::chrono::milliseconds(2);
  auto summary = run_plan(plan, deps);
  ASSERT_TRUE(summary) << summary.error().message;
  int infra = 0;
  for (const auto& t : summary->trajectories) {
    ASSERT_TRUE(t.result) << t.error->message;
    EXPECT_EQ(t.result->exit, store::ExitReason::turn_budget) << t.result->stop_reason;
    EXPECT_EQ(t.result->counted_turns, 4);
    auto turns = *(*store)->finished_turns(t.result->id);
    std::vector<const store::FinishedTurn*> counted;
    for (const auto& turn : turns) {
      if (turn.category == TurnCategory::infra)
        ++infra;
      else
        counted.push_back(&turn);
    }
    ASSERT_EQ(counted.size(), 4u);
    EXPECT_EQ(counted[0]->category, TurnCategory::extraction);
    EXPECT_EQ(counted[1]->category, TurnCategory::static_only);
    EXPECT_NE(counted[1]->kernel_source->find("second block"), std::string::npos);
    EXPECT_EQ(counted[2]->category, TurnCategory::static_only);
    EXPECT_GT(counted[2]->reply->size(), std::size_t{3} << 20);
    EXPECT_EQ(counted[3]->category, TurnCategory::static_only);
    EXPECT_NE(counted[3]->reply->find("\xef\xbf\xbd"), std::string::npos); // U+FFFD
  }
  // Three 500s against calls of at most two attempts: exactly one call gave up.
  EXPECT_EQ(infra, 1);
  EXPECT_EQ(summary->finished(), 2);
}
