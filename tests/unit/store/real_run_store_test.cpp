// What the store keeps for real runs (issue 17): the reason of every infra turn, and older
// databases that are migrated without losing what they hold.
#include "store/run_store.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace ptxbench;
using namespace ptxbench::store;
using namespace ptxbench::store::testing;

namespace {

void exec_all(const std::filesystem::path& dir, const std::vector<std::string>& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / RunStore::kDatabaseName).c_str(), &db), SQLITE_OK);
  for (const auto& sql : statements)
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  sqlite3_close(db);
}

TurnOutcome infra_outcome(std::string reason) {
  TurnOutcome outcome;
  outcome.category = TurnCategory::infra;
  outcome.counting = Counting::not_counted;
  outcome.reply = "the reply";
  outcome.infra_reason = std::move(reason);
  return outcome;
}

} // namespace

TEST(RealRunStore, AnInfraTurnKeepsItsReasonAcrossAReopen) {
  ScratchDir dir;
  TrajectoryId id;
  {
    auto store = open_store(dir.path());
    id = *store->open_trajectory(sample_key());
    auto turn = store->begin_turn(id);
    ASSERT_TRUE(turn);
    ASSERT_TRUE(store->finish_turn(turn->id, infra_outcome("evaluation failed: refused")));
  }
  auto store = open_store(dir.path());
  auto turns = store->finished_turns(id);
  ASSERT_TRUE(turns) << turns.error().message;
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ((*turns)[0].infra_reason, "evaluation failed: refused");
}

TEST(RealRunStore, AVersionTwoDatabaseIsMigratedAndItsTurnsReadWithoutAReason) {
  ScratchDir dir;
  TrajectoryId id;
  {
    auto store = open_store(dir.path());
    id = *store->open_trajectory(sample_key());
    auto turn = store->begin_turn(id);
    ASSERT_TRUE(turn);
    TurnOutcome outcome;
    outcome.category = TurnCategory::compile;
    outcome.reply = "r";
    ASSERT_TRUE(store->record_model_call(turn->id, sample_call(1, "r")));
    ASSERT_TRUE(store->finish_turn(turn->id, outcome));
  }
  std::vector<std::string> statements = undo_migrations_after_two();
  statements.push_back("DELETE FROM schema_version");
  statements.push_back("INSERT INTO schema_version VALUES (2)");
  exec_all(dir.path(), statements);
  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened) << reopened.error().message;
  auto turns = (*reopened)->finished_turns(id);
  ASSERT_TRUE(turns) << turns.error().message;
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ((*turns)[0].category, TurnCategory::compile);
  EXPECT_FALSE((*turns)[0].infra_reason);
  EXPECT_FALSE((*turns)[0].model_settings_id);
  EXPECT_FALSE((*turns)[0].reply_end);
  auto calls = (*reopened)->model_calls((*turns)[0].id);
  ASSERT_TRUE(calls) << calls.error().message;
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ((*calls)[0].state, CallState::ended); // an older row had ended when it was written
  EXPECT_FALSE((*calls)[0].server_prompt_ms);
  EXPECT_EQ((*reopened)->usage(id)->calls_in_flight, 0);
  auto settings = (*reopened)->model_settings("local");
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_FALSE(*settings);
}

TEST(RealRunStore, AnAttemptBegunAndNeverEndedCountsAsInFlightUntilItEnds) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  auto turn = store->begin_turn(id);
  ASSERT_TRUE(turn);
  auto call = store->begin_model_call(turn->id, sample_call(1, "ignored at the start"));
  ASSERT_TRUE(call) << call.error().message;
  auto usage = *store->usage(id);
  EXPECT_EQ(usage.calls, 1);
  EXPECT_EQ(usage.calls_in_flight, 1);
  EXPECT_EQ(usage.input_tokens, 0); // nothing of the answer is known yet
  auto stored = *store->model_calls(turn->id);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].state, CallState::in_flight);
  EXPECT_FALSE(stored[0].reply);

  ModelCallRecord ended = sample_call(1, "the reply");
  ended.server_prompt_ms = 12.5;
  ASSERT_TRUE(store->end_model_call(*call, ended));
  usage = *store->usage(id);
  EXPECT_EQ(usage.calls, 1);
  EXPECT_EQ(usage.calls_in_flight, 0);
  EXPECT_EQ(usage.input_tokens, 1000);
  stored = *store->model_calls(turn->id);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].state, CallState::ended);
  EXPECT_EQ(stored[0].reply, "the reply");
  EXPECT_EQ(stored[0].server_prompt_ms, 12.5);
}

TEST(RealRunStore, EachTurnRefersToTheModelSettingsInForceWhenItBegan) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  auto finish = [&](TurnHandle turn) {
    TurnOutcome outcome;
    outcome.category = TurnCategory::compile;
    ASSERT_TRUE(store->finish_turn(turn.id, outcome));
  };
  ASSERT_TRUE(store->record_model_settings("other", R"({"max_output_tokens":1})", "run started"));
  auto first = store->begin_turn(id);
  ASSERT_TRUE(first);
  finish(*first);
  ASSERT_TRUE(store->record_model_settings("local", R"({"max_output_tokens":100})", "run started"));
  auto second = store->begin_turn(id);
  ASSERT_TRUE(second);
  finish(*second);
  ASSERT_TRUE(
      store->record_model_settings("local", R"({"max_output_tokens":200})", "override on resume"));
  auto third = store->begin_turn(id);
  ASSERT_TRUE(third);
  finish(*third);

  auto turns = *store->finished_turns(id);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_FALSE(turns[0].model_settings_id); // only another model's settings existed
  ASSERT_TRUE(turns[1].model_settings_id && turns[2].model_settings_id);
  EXPECT_EQ((*store->model_settings_by_id(*turns[1].model_settings_id))->settings_json,
            R"({"max_output_tokens":100})");
  auto latest = *store->model_settings("local");
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->id, *turns[2].model_settings_id);
  EXPECT_EQ(latest->reason, "override on resume");
}
