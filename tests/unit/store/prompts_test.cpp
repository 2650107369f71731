// The opening prompts of a trajectory: stored once, read back exactly, kept on a second set.
#include "store/run_store.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace ptxbench;
using namespace ptxbench::store;
using namespace ptxbench::store::testing;

TEST(RunStorePrompts, ATrajectoryWithoutPromptsHasNone) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = store->open_trajectory(sample_key());
  ASSERT_TRUE(id);
  auto prompts = store->prompts(*id);
  ASSERT_TRUE(prompts) << prompts.error().message;
  EXPECT_FALSE(prompts->has_value());
}

TEST(RunStorePrompts, TheFirstPromptsStayAcrossASecondSetAndAReopen) {
  ScratchDir dir;
  TrajectoryPrompts first{"system v1 \xe2\x9c\x93", "task: gemm"};
  {
    auto store = open_store(dir.path());
    auto id = store->open_trajectory(sample_key());
    ASSERT_TRUE(id);
    auto set = store->set_prompts(*id, first);
    ASSERT_TRUE(set) << set.error().message;
    EXPECT_EQ(*set, first);
    auto again = store->set_prompts(*id, TrajectoryPrompts{"system v2", "task: other"});
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, first);
  }
  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened);
  auto id = (*reopened)->open_trajectory(sample_key());
  ASSERT_TRUE(id);
  auto prompts = (*reopened)->prompts(*id);
  ASSERT_TRUE(prompts && prompts->has_value());
  EXPECT_EQ(**prompts, first);
}

TEST(RunStorePrompts, AVersionOneDatabaseIsMigratedAndKeepsItsTrajectories) {
  ScratchDir dir;
  {
    auto store = open_store(dir.path());
    ASSERT_TRUE(store->open_trajectory(sample_key()));
  }
  // Turn the database back into a version-1 one: drop the columns migrations 2 and 3 added.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() / RunStore::kDatabaseName).c_str(), &db), SQLITE_OK);
  std::vector<std::string> statements = undo_migrations_after_two();
  for (const char* sql : {"ALTER TABLE trajectory DROP COLUMN system_prompt_sha256",
                          "ALTER TABLE trajectory DROP COLUMN task_prompt_sha256",
                          "DELETE FROM schema_version", "INSERT INTO schema_version VALUES (1)"})
    statements.emplace_back(sql);
  for (const std::string& sql : statements)
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  sqlite3_close(db);

  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened) << reopened.error().message;
  auto found = (*reopened)->find_trajectory(sample_key());
  ASSERT_TRUE(found && found->has_value());
  auto set = (*reopened)->set_prompts((*found)->id, TrajectoryPrompts{"s", "t"});
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->task, "t");
}
