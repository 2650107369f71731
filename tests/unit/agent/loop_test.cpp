// The turn loop's rules: budget, early stop, what counts, what reaches the conversation, how
// infrastructure failures and context overflow end or pause a trajectory, and resume.
#include "agent/loop.hpp"
#include "loop_test_support.hpp"
#include "store/run_store.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;
using namespace ptxbench::model;
using store::TurnCategory;

namespace {

util::Error model_error(util::ErrorKind kind, std::string message) {
  return util::make_error(kind, std::move(message));
}

// Records the loop's pauses instead of sleeping.
struct RecordingSleeper final : Sleeper {
  std::vector<std::chrono::milliseconds> delays;
  void sleep_for(std::chrono::milliseconds delay) override { delays.push_back(delay); }
};

struct Harness {
  ScratchDir dir;
  std::unique_ptr<store::RunStore> store;
  ModelSpec spec = scripted_spec();
  TrajectoryTask task;
  LoopOptions options;
  ClientSlot client;
  std::unique_ptr<ScriptedExecutor> executor;
  std::vector<TurnEvent> events;
  std::vector<std::string> notices;
  RecordingSleeper sleeper;
  std::atomic<bool> cancel{false};

  Harness(std::vector<ScriptedClient::Step> replies, std::vector<ScriptedExecutor::Step> verdicts) {
    auto opened = store::RunStore::open(dir.path(), store::RunInfo{"{}", "test", ""});
    if (!opened)
      throw util::Fatal(opened.error().message);
    store = std::move(*opened);
    task.key = store::TrajectoryKey{"scripted", "gemm_n7168_k5120", "none", 0};
    task.problem = &gemm_problem();
    task.model = &spec;
    task.prompts = Prompts{"SYSTEM", "TASK", "none"};
    options.max_turns = 3;
    options.target_speedup = 1.2;
    client.script = std::make_shared<ScriptedClient>(std::move(replies));
    executor = std::make_unique<ScriptedExecutor>(std::move(verdicts));
  }

  TrajectoryResult run() {
    LoopDeps deps;
    deps.store = store.get();
    deps.executor = executor.get();
    deps.make_client = client.maker();
    deps.on_turn = [this](const TurnEvent& e) { events.push_back(e); };
    deps.cancel = &cancel;
    deps.sleeper = &sleeper;
    deps.on_notice = [this](const store::TrajectoryKey&, const std::string& text) {
      notices.push_back(text);
    };
    auto result = run_trajectory(task, options, deps);
    if (!result)
      throw util::Fatal(result.error().message);
    return *result;
  }

  std::vector<store::FinishedTurn> finished(const TrajectoryResult& r) {
    return *store->finished_turns(r.id);
  }
};

std::vector<ScriptedClient::Step> replies(int n) {
  std::vector<ScriptedClient::Step> out;
  for (int i = 0; i < n; ++i)
    out.emplace_back(kernel_reply("attempt " + std::to_string(i)));
  return out;
}

} // namespace

TEST(AgentLoop, UsesTheWholeBudgetWhenNoTurnMeetsTheTarget) {
  Harness h(replies(3), {numerical(), correct(0.8), numerical()});
  auto result = h.run();
  ASSERT_TRUE(result.exit);
  EXPECT_EQ(*result.exit, store::ExitReason::turn_budget);
  EXPECT_EQ(result.counted_turns, 3);
  EXPECT_EQ(result.correct_turns, 1);
  EXPECT_DOUBLE_EQ(result.best_speedup.value_or(0), 0.8);
  // Each request carries the system and task prompts and every earlier (reply, feedback) pair.
  auto requests = h.client.script->requests();
  ASSERT_EQ(requests.size(), 3u);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(requests[i].size(), 2 + 2 * i);
  EXPECT_EQ(requests[2][0].content, "SYSTEM");
  EXPECT_EQ(requests[2][1].content, "TASK");
  EXPECT_NE(requests[2][2].content.find("attempt 0"), std::string::npos);
  EXPECT_NE(requests[2][5].content.find("Keep optimizing"), std::string::npos);
  auto record = *h.store->find_trajectory(h.task.key);
  EXPECT_EQ(record->status, store::TrajectoryStatus::finished);
}

TEST(AgentLoop, StopsEarlyWhenACorrectKernelMeetsTheTargetSpeedup) {
  Harness h(replies(3), {numerical(), correct(1.5), numerical()});
  auto result = h.run();
  EXPECT_EQ(result.exit, store::ExitReason::target_met);
  EXPECT_EQ(result.counted_turns, 2);
  EXPECT_EQ(h.executor->calls(), 2u);
  auto turns = h.finished(result);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_NE(turns[1].feedback->find("achieved"), std::string::npos);
}

TEST(AgentLoop, AReplyWithoutCodeIsACountedExtractionTurnThatNeverReachesTheExecutor) {
  Harness h({std::string("I would use wgmma here, but let me think more."), kernel_reply("k")},
            {correct(2.0)});
  auto result = h.run();
  auto turns = h.finished(result);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].category, TurnCategory::extraction);
  EXPECT_EQ(turns[0].counting, store::Counting::counted);
  EXPECT_NE(turns[0].feedback->find("No kernel could be taken"), std::string::npos);
  EXPECT_FALSE(turns[0].kernel_source.has_value());
  EXPECT_EQ(h.executor->calls(), 1u);
  EXPECT_EQ(result.exit, store::ExitReason::target_met);
}

TEST(AgentLoop, ModelApiFailuresAreRetriedAndNeverCountedNorShownToTheModel) {
  Harness h({model_error(util::ErrorKind::rate_limited, "HTTP 429 (gave up after 6 attempts)"),
             kernel_reply("a"), model_error(util::ErrorKind::transport, "connection reset"),
             kernel_reply("b"), kernel_reply("c")},
            {numerical(), numerical(), numerical()});
  auto result = h.run();
  EXPECT_EQ(result.exit, store::ExitReason::turn_budget);
  EXPECT_EQ(result.counted_turns, 3);
  auto turns = h.finished(result);
  ASSERT_EQ(turns.size(), 5u);
  EXPECT_EQ(turns[0].category, TurnCategory::infra);
  EXPECT_EQ(turns[0].counting, store::Counting::not_counted);
  auto requests = h.client.script->requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests[1].size(), 2u); // the failed call left nothing behind
  EXPECT_EQ(requests[3].size(), 4u);
  // Every attempt is in the store, failed ones included (money and outages are accounted).
  EXPECT_EQ(h.store->usage(result.id)->calls, 5);
}

// On main an evaluator failure threw the reply away and asked the model again (4 requests).
TEST(AgentLoop, AnEvaluatorFailureEvaluatesTheSameReplyAgainWithBackoffAndNoModelCall) {
  Harness h(replies(3), {util::make_error(util::ErrorKind::subprocess, "nvcc vanished"),
                         util::make_error(util::ErrorKind::transport, "service refused"),
                         numerical(), numerical(), numerical()});
  h.options.eval_attempts = 3;
  h.options.eval_retry_delay = std::chrono::milliseconds(1000);
  auto result = h.run();
  auto turns = h.finished(result);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[0].category, TurnCategory::numerical);
  EXPECT_EQ(result.exit, store::ExitReason::turn_budget);
  EXPECT_EQ(result.counted_turns, 3);
  EXPECT_EQ(h.client.script->requests().size(), 3u);
  EXPECT_EQ(h.executor->calls(), 5u);
  EXPECT_EQ(h.sleeper.delays,
            (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(1000),
                                                    std::chrono::milliseconds(2000)}));
  ASSERT_EQ(h.notices.size(), 2u);
  EXPECT_NE(h.notices[0].find("nvcc vanished"), std::string::npos) << h.notices[0];
  EXPECT_NE(h.notices[1].find("attempt 2 of 3"), std::string::npos) << h.notices[1];
}

TEST(AgentLoop, AnEvaluatorThatRaisesIsRetriedAndTheTrajectoryGoesOn) {
  Harness h(replies(3), {ScriptedExecutor::Throw{"type must be number, but is null"}, numerical(),
                         numerical(), numerical()});
  TrajectoryResult result;
  ASSERT_NO_THROW(result = h.run());
  auto turns = h.finished(result);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(result.exit, store::ExitReason::turn_budget);
  EXPECT_EQ(result.counted_turns, 3);
  EXPECT_EQ(h.executor->calls(), 4u);
}

TEST(AgentLoop, AnEvaluatorThatStaysDownStopsResumablyAndResumeJudgesTheSameReply) {
  const auto down = util::make_error(util::ErrorKind::transport, "connection refused");
  Harness h(replies(1), {down, down});
  h.options.eval_attempts = 2;
  auto result = h.run();
  EXPECT_FALSE(result.exit);
  EXPECT_NE(result.stop_reason.find("connection refused"), std::string::npos) << result.stop_reason;
  EXPECT_EQ((*h.store->find_trajectory(h.task.key))->status, store::TrajectoryStatus::running);
  auto turns = h.finished(result);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].category, TurnCategory::infra);
  EXPECT_EQ(turns[0].counting, store::Counting::not_counted);
  ASSERT_TRUE(turns[0].infra_reason);
  EXPECT_NE(turns[0].infra_reason->find("connection refused"), std::string::npos);
  EXPECT_NE(turns[0].infra_reason->find("2 of 2 attempts"), std::string::npos);
  ASSERT_TRUE(turns[0].reply);

  // The evaluator is back: resume judges the kept reply before it asks the model again.
  h.client.script = std::make_shared<ScriptedClient>(replies(2));
  h.executor = std::make_unique<ScriptedExecutor>(
      std::vector<ScriptedExecutor::Step>{numerical(), numerical(), numerical()});
  auto resumed = h.run();
  EXPECT_EQ(resumed.exit, store::ExitReason::turn_budget);
  EXPECT_EQ(resumed.counted_turns, 3);
  EXPECT_EQ(h.client.script->requests().size(), 2u);
  auto all = h.finished(resumed);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[1].category, TurnCategory::numerical);
  EXPECT_EQ(all[1].reply, turns[0].reply);
  EXPECT_FALSE(all[1].infra_reason);
  EXPECT_EQ(h.store->usage(resumed.id)->calls, 3);
}

TEST(AgentLoop, AFailedModelCallStoresItsReasonOnTheTurn) {
  Harness h({model_error(util::ErrorKind::http_status, "HTTP 503 from server"), kernel_reply("a"),
             kernel_reply("b"), kernel_reply("c")},
            {numerical(), numerical(), numerical()});
  auto turns = h.finished(h.run());
  ASSERT_EQ(turns.size(), 4u);
  ASSERT_TRUE(turns[0].infra_reason);
  EXPECT_NE(turns[0].infra_reason->find("HTTP 503"), std::string::npos);
  EXPECT_FALSE(turns[1].infra_reason);
}

TEST(AgentLoop, PersistentInfrastructureFailureStopsTheTrajectoryResumably) {
  std::vector<ScriptedClient::Step> steps;
  for (int i = 0; i < 3; ++i)
    steps.emplace_back(model_error(util::ErrorKind::http_status, "HTTP 503 from server"));
  Harness h(std::move(steps), {});
  h.options.max_infra_retries = 2;
  auto result = h.run();
  EXPECT_FALSE(result.exit);
  EXPECT_NE(result.stop_reason.find("HTTP 503"), std::string::npos);
  EXPECT_EQ(result.counted_turns, 0);
  EXPECT_EQ((*h.store->find_trajectory(h.task.key))->status, store::TrajectoryStatus::running);

  // The endpoint is back: the same call resumes and finishes the budget.
  h.client.script = std::make_shared<ScriptedClient>(replies(3));
  h.executor = std::make_unique<ScriptedExecutor>(
      std::vector<ScriptedExecutor::Step>{numerical(), numerical(), numerical()});
  auto resumed = h.run();
  EXPECT_EQ(resumed.exit, store::ExitReason::turn_budget);
  EXPECT_EQ(resumed.counted_turns, 3);
  EXPECT_EQ(h.client.made_with.back(), 3); // three failed attempts already recorded
}

ChatResponse response(std::string text, std::string finish_reason) {
  ChatResponse reply;
  reply.text = std::move(text);
  reply.finish_reason = std::move(finish_reason);
  reply.usage = Usage{100, reply.text.empty() ? 0 : 50, 0};
  return reply;
}

// On main the model was never told that its reply was cut off or empty.
TEST(AgentLoop, ATruncatedOrEmptyReplyIsToldToTheModelAndRecordedOnTheTurn) {
  Harness h({response(kernel_reply("cut"), "length"), response("", "stop"),
             response("  \n", "MAX_TOKENS"), kernel_reply("whole")},
            {numerical(), numerical()});
  h.spec.sampling.max_output_tokens = 512;
  h.options.max_turns = 4;
  auto turns = h.finished(h.run());
  ASSERT_EQ(turns.size(), 4u);
  EXPECT_EQ(turns[0].reply_end, store::ReplyEnd::truncated);
  EXPECT_EQ(turns[0].category, TurnCategory::numerical);
  EXPECT_TRUE(turns[0].feedback->starts_with("Your reply was cut off: it reached the output limit "
                                             "of 512 tokens"))
      << *turns[0].feedback;
  EXPECT_EQ(turns[1].reply_end, store::ReplyEnd::empty);
  EXPECT_EQ(turns[1].category, TurnCategory::extraction);
  EXPECT_TRUE(turns[1].feedback->starts_with("Your reply was empty")) << *turns[1].feedback;
  EXPECT_EQ(turns[2].reply_end, store::ReplyEnd::empty); // nothing in it, whatever the reason
  EXPECT_EQ(turns[3].reply_end, store::ReplyEnd::complete);
  EXPECT_EQ(turns[3].feedback->find("Your reply was"), std::string::npos);
  // The model reads the note with the next request.
  auto requests = h.client.script->requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_TRUE(requests[1].back().content.starts_with("Your reply was cut off"));
}

TEST(AgentLoop, AContextOverflowEndsTheTrajectory) {
  Harness h({kernel_reply("a"),
             model_error(util::ErrorKind::http_status,
                         "HTTP 400: This model's maximum context length is 131072 tokens")},
            {numerical()});
  auto result = h.run();
  EXPECT_EQ(result.exit, store::ExitReason::context_overflow);
  EXPECT_EQ(result.counted_turns, 1);
}

TEST(AgentLoop, ARefusedRequestEndsTheTrajectoryAsAModelError) {
  Harness h({model_error(util::ErrorKind::invalid_input, "replay file exhausted after 0 replies")},
            {});
  auto result = h.run();
  EXPECT_EQ(result.exit, store::ExitReason::model_error);
  EXPECT_NE(result.stop_reason.find("exhausted"), std::string::npos);
}

TEST(AgentLoop, LatestPairPolicySendsOnlyTheLastReplyAndFeedback) {
  Harness h(replies(3), {numerical(), numerical(), numerical()});
  h.options.context = ContextPolicy::latest_pair;
  h.run();
  auto requests = h.client.script->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[2].size(), 4u);
  EXPECT_NE(requests[2][2].content.find("attempt 1"), std::string::npos);
}

TEST(AgentLoop, ResumeAfterCancelContinuesWithTheStoredPromptsAndWithoutRepeatingTurns) {
  Harness h(replies(2), {numerical(), numerical()});
  h.options.max_turns = 4;
  LoopDeps deps;
  auto first = [&] {
    deps.store = h.store.get();
    deps.executor = h.executor.get();
    deps.make_client = h.client.maker();
    deps.cancel = &h.cancel;
    deps.on_turn = [&](const TurnEvent& e) {
      if (e.index == 1)
        h.cancel = true;
    };
    return *run_trajectory(h.task, h.options, deps);
  }();
  EXPECT_FALSE(first.exit);
  EXPECT_EQ(first.stop_reason, "cancelled");
  EXPECT_EQ(first.counted_turns, 2);

  h.cancel = false;
  h.task.prompts = Prompts{"CHANGED SYSTEM", "CHANGED TASK", "none"};
  h.client.script = std::make_shared<ScriptedClient>(replies(2));
  h.executor = std::make_unique<ScriptedExecutor>(
      std::vector<ScriptedExecutor::Step>{numerical(), correct(0.9)});
  auto resumed = h.run();
  EXPECT_EQ(resumed.exit, store::ExitReason::turn_budget);
  EXPECT_EQ(resumed.counted_turns, 4);
  EXPECT_EQ(resumed.turns_this_run, 2);
  auto requests = h.client.script->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].size(), 6u);
  EXPECT_EQ(requests[0][0].content, "SYSTEM");
  auto turns = h.finished(resumed);
  ASSERT_EQ(turns.size(), 4u);
  for (std::size_t i = 0; i < turns.size(); ++i)
    EXPECT_EQ(turns[i].index, static_cast<std::int64_t>(i));
}

TEST(AgentLoop, ATurnCutOffByACrashIsAbandonedAndItsIndexIsTakenAgain) {
  Harness h(replies(3), {numerical(), numerical(), numerical()});
  auto id = *h.store->open_trajectory(h.task.key);
  ASSERT_TRUE(h.store->begin_turn(id)); // a process died inside this turn
  auto result = h.run();
  EXPECT_EQ(result.counted_turns, 3);
  EXPECT_EQ(*h.store->count_turns(id, store::TurnState::abandoned), 1);
  auto turns = h.finished(result);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns.front().index, 0); // finished turns stay gap-free
}

TEST(AgentLoop, AFinishedTrajectoryIsNotRunAgain) {
  Harness h(replies(1), {correct(3.0)});
  h.run();
  auto again = h.run();
  EXPECT_EQ(again.exit, store::ExitReason::target_met);
  EXPECT_EQ(again.turns_this_run, 0);
  EXPECT_EQ(h.client.script->requests().size(), 1u);
}

TEST(AgentLoop, ContextOverflowIsRecognisedInEachProvidersWording) {
  for (std::string text :
       {"HTTP 400 from x: {\"error\":{\"code\":\"context_length_exceeded\"}}",
        "HTTP 400 from x: prompt is too long: 210000 tokens > 200000 maximum",
        "HTTP 400 from x: The input token count (1200000) exceeds the maximum number of tokens "
        "allowed (1048576)."})
    EXPECT_TRUE(is_context_overflow(util::make_error(util::ErrorKind::http_status, text))) << text;
  EXPECT_FALSE(is_context_overflow(
      util::make_error(util::ErrorKind::http_status, "HTTP 401 from x: invalid api key")));
  EXPECT_FALSE(is_context_overflow(
      util::make_error(util::ErrorKind::timeout, "context length check timed out")));
}
