// A trajectory's plan condition and a turn's retrieval record: stored, read back, part of the
// key resume finds the trajectory by, and empty for stores written before the columns existed.
#include "store/run_store.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace ptxbench;
using namespace ptxbench::store;
using namespace ptxbench::store::testing;

namespace {

TrajectoryKey conditioned_key(std::string condition, std::int64_t sample) {
  TrajectoryKey key = sample_key();
  key.sample = sample;
  key.condition = std::move(condition);
  return key;
}

} // namespace

TEST(RunStoreCondition, TheConditionIsPartOfTheKeyAndTheRetrievalRecordIsKeptWithTheTurn) {
  ScratchDir dir;
  const std::string record = R"({"mode":"notes","groups":[{"rank":1,"pair_ids":["p"]}]})";
  {
    auto store = open_store(dir.path());
    auto plain = store->open_trajectory(conditioned_key("no-guidance", 0));
    auto notes = store->open_trajectory(conditioned_key("guidance+notes", 1));
    ASSERT_TRUE(plain && notes);
    EXPECT_FALSE(*plain == *notes);
    auto turn = store->begin_turn(*notes);
    ASSERT_TRUE(turn);
    TurnOutcome outcome;
    outcome.category = TurnCategory::compile;
    outcome.reply = "reply";
    outcome.feedback = "feedback";
    outcome.retrieval_json = record;
    ASSERT_TRUE(store->finish_turn(turn->id, outcome));
  }
  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened);
  auto found = (*reopened)->find_trajectory(conditioned_key("guidance+notes", 1));
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->key.condition, "guidance+notes");
  EXPECT_FALSE(*(*reopened)->find_trajectory(conditioned_key("no-guidance", 1)));
  auto turns = (*reopened)->finished_turns((*found)->id);
  ASSERT_TRUE(turns);
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ((*turns)[0].retrieval_json, record);
  // The same sample under another condition is another trajectory's place: refused, named.
  auto clash = (*reopened)->open_trajectory(conditioned_key("guidance", 1));
  ASSERT_FALSE(clash);
  EXPECT_NE(clash.error().message.find("stored under condition 'guidance+notes', not 'guidance'"),
            std::string::npos)
      << clash.error().message;
}

TEST(RunStoreCondition, AVersionSevenStoreIsMigratedWithEmptyConditionsAndNoRecords) {
  ScratchDir dir;
  {
    auto store = open_store(dir.path());
    auto id = store->open_trajectory(sample_key());
    ASSERT_TRUE(id);
    write_whole_turn(*store, *id, 1);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() / RunStore::kDatabaseName).c_str(), &db), SQLITE_OK);
  for (const char* sql : {"ALTER TABLE trajectory DROP COLUMN condition",
                          "ALTER TABLE turn DROP COLUMN retrieval_json",
                          "DELETE FROM schema_version", "INSERT INTO schema_version VALUES (7)"})
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  sqlite3_close(db);
  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened) << reopened.error().message;
  auto found = (*reopened)->find_trajectory(sample_key());
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->key.condition, "");
  auto turns = (*reopened)->finished_turns((*found)->id);
  ASSERT_TRUE(turns);
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_FALSE((*turns)[0].retrieval_json);
}
