// Rollouts (rollout/rollouts.hpp): the agent loop stepped one caller's reply at a time, with a
// scripted executor — the conversation is the loop's, the feedback its closing lines, the ends
// (target, budget, close) its exits; an evaluator failure waits for retry(); the store is an
// ordinary run that a restarted server continues.
#include "agent/plan.hpp"
#include "agent/prompt.hpp"
#include "rollout/rollout_json.hpp"
#include "rollout/rollouts.hpp"
#include "store/run_store.hpp"
#include "support/fill_kernel.hpp"
#include "support/real_data.hpp"
#include "support/scratch_dir.hpp"
#include "unit/agent/loop_test_support.hpp"

#include <condition_variable>
#include <future>
#include <gtest/gtest.h>
#include <mutex>

namespace ptxbench::rollout {
namespace {

using agent::testing::correct;
using agent::testing::numerical;
using agent::testing::ScriptedExecutor;
using test_support::ScratchDir;

constexpr const char* kGemm = "gemm_n7168_k5120";

std::string fenced(const std::string& code) {
  return "Here it is.\n```cuda\n" + code + "\n```\n";
}

std::string kernel(const std::string& marker) {
  return test_support::fill_kernel(marker);
}

Reply said(std::string text) {
  Reply reply;
  reply.text = std::move(text);
  return reply;
}

// A Rollouts over `executor` in `root`, failing the test when it cannot open.
std::unique_ptr<Rollouts> open_rollouts(const std::filesystem::path& root,
                                        agent::Executor& executor) {
  RolloutDeps deps;
  deps.root = root;
  deps.suite = &test_support::real_suite();
  deps.manifest = &test_support::real_manifest();
  deps.executor = [&executor](compile::Language) -> agent::Executor& { return executor; };
  deps.eval_attempts = 2;
  deps.eval_retry_delay = std::chrono::milliseconds(1);
  auto opened = Rollouts::open(std::move(deps));
  if (!opened)
    throw util::Fatal(opened.error().message);
  return std::move(*opened);
}

RolloutSpec gemm_spec(int max_turns = 8, std::optional<double> target = 1.2) {
  RolloutSpec spec;
  spec.prompt.problem = kGemm;
  spec.max_turns = max_turns;
  spec.target_speedup = target;
  return spec;
}

TEST(Rollouts, ARolloutOpensWithTheLoopsPromptsAndNumbersItsSamples) {
  ScratchDir dir;
  ScriptedExecutor executor({});
  auto rollouts = open_rollouts(dir.path(), executor);
  auto first = rollouts->create(gemm_spec());
  ASSERT_TRUE(first) << first.error().message;
  const suite::Problem& problem = **test_support::real_suite().find(kGemm);
  const std::string variant = agent::default_variant(test_support::real_manifest(), problem);
  auto prompts =
      agent::build_prompts(problem, compile::Arch::sm_90a, test_support::real_manifest(), variant);
  ASSERT_TRUE(prompts);
  ASSERT_EQ(first->messages.size(), 2u);
  EXPECT_EQ(first->messages[0].content, prompts->system);
  EXPECT_EQ(first->messages[1].content, prompts->task);
  EXPECT_EQ(first->spec.prompt.variant, variant);
  EXPECT_EQ(first->sample, 0);
  EXPECT_FALSE(first->done);
  auto second = rollouts->create(gemm_spec());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->sample, 1);
  EXPECT_NE(second->id, first->id);
  EXPECT_EQ(second->run_dir, first->run_dir); // same loop settings, one run folder
  auto other = rollouts->create(gemm_spec(4));
  ASSERT_TRUE(other);
  EXPECT_NE(other->run_dir, first->run_dir);
  auto prompt = rollouts->prompt(first->spec.prompt);
  ASSERT_TRUE(prompt);
  EXPECT_EQ(prompt->size(), 2u);
  EXPECT_EQ((*prompt)[0].content, prompts->system);
}

TEST(Rollouts, AStepIsOneTurnOfTheLoopWithItsFeedbackInTheNextConversation) {
  ScratchDir dir;
  ScriptedExecutor executor({numerical()});
  auto rollouts = open_rollouts(dir.path(), executor);
  auto created = rollouts->create(gemm_spec());
  ASSERT_TRUE(created);
  Reply reply = said(fenced(kernel("step 1")));
  reply.reasoning = "thinking about tiles";
  reply.output_tokens = 40;
  auto stepped = rollouts->step(created->id, reply);
  ASSERT_TRUE(stepped) << stepped.error().message;
  ASSERT_EQ(stepped->stepped.size(), 1u);
  const TurnView& turn = stepped->stepped[0];
  EXPECT_EQ(turn.category, store::TurnCategory::numerical);
  EXPECT_EQ(turn.feedback,
            "verdict numerical\n\nPlease fix the issues and provide an updated kernel.\n");
  ASSERT_EQ(stepped->messages.size(), 4u);
  EXPECT_EQ(stepped->messages[2].role, model::Role::assistant);
  EXPECT_EQ(stepped->messages[2].content, reply.text);
  EXPECT_EQ(stepped->messages[3].content, turn.feedback);
  EXPECT_EQ(stepped->counted_turns, 1);
  EXPECT_FALSE(stepped->done);
  EXPECT_EQ(executor.calls(), 1u);
  // The reply and reasoning are the turn's model call, as any run records one.
  auto store = store::RunStore::open_existing(stepped->run_dir);
  ASSERT_TRUE(store);
  auto turns = (*store)->finished_turns(store::TrajectoryId{stepped->trajectory});
  ASSERT_TRUE(turns);
  ASSERT_EQ(turns->size(), 1u);
  auto calls = (*store)->model_calls(turns->front().id);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ(calls->front().provider, "rollout");
  EXPECT_EQ(calls->front().model, "policy");
  EXPECT_EQ(calls->front().reasoning.value_or(""), "thinking about tiles");
  EXPECT_EQ(calls->front().output_tokens, 40);
  // The run folder is a run: its stored plan parses and carries the loop settings.
  auto plan = agent::parse_plan((*store)->info().config_json, stepped->run_dir);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->loop.max_turns, 8);
  ASSERT_TRUE(plan->loop.target_speedup);
  EXPECT_DOUBLE_EQ(*plan->loop.target_speedup, 1.2);
}

TEST(Rollouts, AReplyWithoutCodeIsAnExtractionTurnAndNoEvaluation) {
  ScratchDir dir;
  ScriptedExecutor executor({});
  auto rollouts = open_rollouts(dir.path(), executor);
  auto created = rollouts->create(gemm_spec());
  ASSERT_TRUE(created);
  auto stepped = rollouts->step(created->id, said("I would rather not."));
  ASSERT_TRUE(stepped);
  ASSERT_EQ(stepped->stepped.size(), 1u);
  EXPECT_EQ(stepped->stepped[0].category, store::TurnCategory::extraction);
  EXPECT_NE(stepped->stepped[0].feedback.find("```cuda"), std::string::npos);
  EXPECT_EQ(executor.calls(), 0u);
}

TEST(Rollouts, TheTargetAndTheBudgetEndARolloutAndAnEndedOneTakesNoStep) {
  ScratchDir dir;
  ScriptedExecutor executor({correct(1.5), numerical(), numerical()});
  auto rollouts = open_rollouts(dir.path(), executor);
  auto fast = rollouts->create(gemm_spec());
  ASSERT_TRUE(fast);
  auto met = rollouts->step(fast->id, said(fenced(kernel("fast"))));
  ASSERT_TRUE(met);
  EXPECT_TRUE(met->done);
  EXPECT_EQ(met->exit, store::ExitReason::target_met);
  ASSERT_EQ(met->stepped.size(), 1u);
  EXPECT_NE(met->stepped[0].feedback.find("Target speedup 1.200x achieved! Speedup: 1.500x."),
            std::string::npos);
  ASSERT_TRUE(met->stepped[0].speedup);
  EXPECT_DOUBLE_EQ(*met->stepped[0].speedup, 1.5);
  auto after = rollouts->step(fast->id, said(fenced(kernel("late"))));
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().kind, util::ErrorKind::conflict);

  auto short_one = rollouts->create(gemm_spec(2));
  ASSERT_TRUE(short_one);
  ASSERT_TRUE(rollouts->step(short_one->id, said(fenced(kernel("a")))));
  auto last = rollouts->step(short_one->id, said(fenced(kernel("b"))));
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->done);
  EXPECT_EQ(last->exit, store::ExitReason::turn_budget);
  EXPECT_EQ(last->counted_turns, 2);
}

TEST(Rollouts, AnEvaluatorFailureWaitsForRetryWhichJudgesTheSameReply) {
  ScratchDir dir;
  const util::Error down = util::make_error(util::ErrorKind::transport, "service down");
  ScriptedExecutor executor({down, down, numerical()});
  auto rollouts = open_rollouts(dir.path(), executor);
  auto created = rollouts->create(gemm_spec());
  ASSERT_TRUE(created);
  const std::string reply = fenced(kernel("judge me"));
  auto failed = rollouts->step(created->id, said(reply));
  ASSERT_TRUE(failed) << failed.error().message;
  EXPECT_TRUE(failed->awaiting_retry);
  ASSERT_EQ(failed->stepped.size(), 1u);
  EXPECT_EQ(failed->stepped[0].category, store::TurnCategory::infra);
  EXPECT_FALSE(failed->stepped[0].counted);
  EXPECT_NE(failed->stepped[0].infra_reason.find("service down"), std::string::npos);
  EXPECT_EQ(failed->messages.size(), 2u); // an infra turn never enters the conversation
  EXPECT_EQ(failed->counted_turns, 0);

  auto refused = rollouts->step(created->id, said(fenced(kernel("another"))));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::conflict);
  EXPECT_NE(refused.error().message.find("retry"), std::string::npos);

  auto retried = rollouts->retry(created->id);
  ASSERT_TRUE(retried) << retried.error().message;
  EXPECT_FALSE(retried->awaiting_retry);
  ASSERT_EQ(retried->stepped.size(), 1u);
  EXPECT_EQ(retried->stepped[0].category, store::TurnCategory::numerical);
  ASSERT_EQ(retried->messages.size(), 4u);
  EXPECT_EQ(retried->messages[2].content, reply);
  EXPECT_EQ(executor.calls(), 3u);
  auto again = rollouts->retry(created->id);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, util::ErrorKind::conflict);
}

TEST(Rollouts, AResentStepIsAnsweredAgainNotTakenTwice) {
  ScratchDir dir;
  ScriptedExecutor executor({numerical(), numerical()});
  auto rollouts = open_rollouts(dir.path(), executor);
  auto created = rollouts->create(gemm_spec());
  ASSERT_TRUE(created);
  Reply reply = said(fenced(kernel("once")));
  reply.seen_turns = 0;
  auto first = rollouts->step(created->id, reply);
  ASSERT_TRUE(first);
  auto resent = rollouts->step(created->id, reply); // its answer was lost: sent again
  ASSERT_TRUE(resent) << resent.error().message;
  EXPECT_EQ(resent->turns.size(), 1u);
  ASSERT_EQ(resent->stepped.size(), 1u);
  EXPECT_EQ(resent->stepped[0].index, 0);
  EXPECT_EQ(executor.calls(), 1u);
  Reply stale = said(fenced(kernel("other")));
  stale.seen_turns = 0;
  auto refused = rollouts->step(created->id, stale);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::conflict);
  Reply next = said(fenced(kernel("twice")));
  next.seen_turns = 1;
  auto second = rollouts->step(created->id, next);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->turns.size(), 2u);
  EXPECT_EQ(executor.calls(), 2u);
}

TEST(Rollouts, CloseEndsARolloutAsCancelled) {
  ScratchDir dir;
  ScriptedExecutor executor({});
  auto rollouts = open_rollouts(dir.path(), executor);
  auto created = rollouts->create(gemm_spec());
  ASSERT_TRUE(created);
  auto closed = rollouts->close(created->id);
  ASSERT_TRUE(closed);
  EXPECT_TRUE(closed->done);
  EXPECT_EQ(closed->exit, store::ExitReason::cancelled);
  auto twice = rollouts->close(created->id);
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->exit, store::ExitReason::cancelled);
}

TEST(Rollouts, ARestartedServerContinuesARolloutFromItsStore) {
  ScratchDir dir;
  ScriptedExecutor executor({numerical(), numerical()});
  std::string id;
  {
    auto rollouts = open_rollouts(dir.path(), executor);
    auto created = rollouts->create(gemm_spec(3));
    ASSERT_TRUE(created);
    id = created->id;
    ASSERT_TRUE(rollouts->step(id, said(fenced(kernel("before restart")))));
  }
  auto rollouts = open_rollouts(dir.path(), executor);
  auto found = rollouts->get(id);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->turns.size(), 1u);
  EXPECT_EQ(found->spec.max_turns, 3);
  auto stepped = rollouts->step(id, said(fenced(kernel("after restart"))));
  ASSERT_TRUE(stepped);
  ASSERT_EQ(stepped->stepped.size(), 1u);
  EXPECT_EQ(stepped->stepped[0].index, 1);
  EXPECT_EQ(stepped->messages.size(), 6u);
}

TEST(Rollouts, OneServerOwnsAFolderAndUnknownIdsAreNotFound) {
  ScratchDir dir;
  ScriptedExecutor executor({});
  auto rollouts = open_rollouts(dir.path(), executor);
  RolloutDeps deps;
  deps.root = dir.path();
  deps.suite = &test_support::real_suite();
  deps.manifest = &test_support::real_manifest();
  deps.executor = [&executor](compile::Language) -> agent::Executor& { return executor; };
  auto second = Rollouts::open(std::move(deps));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, util::ErrorKind::conflict);
  for (const char* id : {"zz", "abcdef01-9", "abcdef01-x", "abcdef01-", "../x-1", "ABCDEF01-1"}) {
    auto found = rollouts->get(id);
    ASSERT_FALSE(found) << id;
    EXPECT_EQ(found.error().kind, util::ErrorKind::not_found) << id;
  }
  auto created = rollouts->create(gemm_spec());
  ASSERT_TRUE(created);
  const std::string folder = created->id.substr(0, created->id.find('-'));
  auto missing = rollouts->get(folder + "-999");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, util::ErrorKind::not_found);
  RolloutSpec unknown = gemm_spec();
  unknown.prompt.problem = "no_such_problem";
  auto refused = rollouts->create(unknown);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::not_found);
  RolloutSpec bad_variant = gemm_spec();
  bad_variant.prompt.variant = "no-such-variant";
  EXPECT_FALSE(rollouts->create(bad_variant));
}

// An executor that holds each evaluation until released, so a step can be caught in flight.
class GatedExecutor final : public agent::Executor {
public:
  util::Expected<agent::TurnResult> evaluate(const std::string& source, const suite::Problem&,
                                             compile::Arch) override {
    std::unique_lock lock(m_mutex);
    m_entered = true;
    m_changed.notify_all();
    m_changed.wait(lock, [this] { return m_open; });
    agent::TurnResult result;
    result.category = store::TurnCategory::numerical;
    result.feedback = "wrong\n";
    result.evaluation.kernel_source = source;
    return result;
  }
  std::string_view name() const override { return "gated"; }
  void wait_entered() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return m_entered; });
  }
  void open() {
    std::lock_guard lock(m_mutex);
    m_open = true;
    m_changed.notify_all();
  }

private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  bool m_entered = false;
  bool m_open = false;
};

TEST(Rollouts, ASecondStepOfARolloutInFlightIsRefused) {
  ScratchDir dir;
  GatedExecutor executor;
  auto rollouts = open_rollouts(dir.path(), executor);
  auto created = rollouts->create(gemm_spec());
  ASSERT_TRUE(created);
  auto first = std::async(std::launch::async, [&] {
    return rollouts->step(created->id, said(fenced(kernel("first"))));
  });
  executor.wait_entered();
  auto second = rollouts->step(created->id, said(fenced(kernel("second"))));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, util::ErrorKind::conflict);
  executor.open();
  auto done = first.get();
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->stepped.size(), 1u);
}

TEST(RolloutJson, RequestsAreCheckedNamingTheJsonPath) {
  auto spec = read_rollout_spec(Json{{"problem", kGemm},
                                     {"max_turns", 3},
                                     {"target_speedup", nullptr},
                                     {"language", "triton"},
                                     {"context", "latest-pair"},
                                     {"model", "grpo-step-9"}});
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->max_turns, 3);
  EXPECT_FALSE(spec->target_speedup);
  EXPECT_EQ(spec->prompt.language, compile::Language::triton);
  EXPECT_EQ(spec->context, agent::ContextPolicy::latest_pair);
  EXPECT_EQ(spec->model, "grpo-step-9");
  EXPECT_EQ(spec->prompt.variant, "default");

  const std::vector<std::pair<Json, std::string>> bad{
      {Json::array(), "$"},
      {Json{{"max_turns", 3}}, "problem"},
      {Json{{"problem", kGemm}, {"max_turns", "3"}}, "$.max_turns"},
      {Json{{"problem", kGemm}, {"max_turns", 65}}, "$.max_turns"},
      {Json{{"problem", kGemm}, {"arch", "sm_80"}}, "$.arch"},
      {Json{{"problem", kGemm}, {"language", "rust"}}, "$.language"},
      {Json{{"problem", kGemm}, {"target_speedup", "fast"}}, "$.target_speedup"},
      {Json{{"problem", kGemm}, {"turns", 3}}, "turns"},
  };
  for (const auto& [body, path] : bad) {
    auto read = read_rollout_spec(body);
    ASSERT_FALSE(read) << body.dump();
    EXPECT_EQ(read.error().kind, util::ErrorKind::invalid_input);
    EXPECT_NE(read.error().message.find(path), std::string::npos) << read.error().message;
  }
  auto reply = read_reply(Json{{"reply", ""}, {"reasoning", "r"}, {"output_tokens", 5}});
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->text, "");
  EXPECT_EQ(reply->output_tokens, 5);
  for (const Json& body :
       {Json{{"text", "x"}}, Json{{"reply", 3}}, Json{{"reply", "x"}, {"output_tokens", -1}}})
    EXPECT_FALSE(read_reply(body)) << body.dump();
  EXPECT_FALSE(read_prompt_spec(Json{{"problem", kGemm}, {"model", "m"}}));
}

} // namespace
} // namespace ptxbench::rollout
