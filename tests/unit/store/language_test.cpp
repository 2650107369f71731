// The candidate language of a trajectory: stored with it, read back, and CUDA for stores written
// before the column existed.
#include "store/run_store.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace ptxbench;
using namespace ptxbench::store;
using namespace ptxbench::store::testing;

namespace {

TrajectoryKey triton_key() {
  TrajectoryKey key{"local", "gemm_n7168_k5120", "triton-hopper", 0};
  key.language = trace::Language::triton;
  return key;
}

} // namespace

TEST(RunStoreLanguage, ATritonTrajectoryReadsBackAsTriton) {
  ScratchDir dir;
  {
    auto store = open_store(dir.path());
    ASSERT_TRUE(store->open_trajectory(triton_key()));
    ASSERT_TRUE(store->open_trajectory(sample_key()));
  }
  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened) << reopened.error().message;
  auto all = (*reopened)->trajectories();
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].key, triton_key());
  EXPECT_EQ((*all)[1].key.language, trace::Language::cuda);
  auto found = (*reopened)->find_trajectory(triton_key());
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->key.language, trace::Language::triton);
}

TEST(RunStoreLanguage, ReopeningAKeyInAnotherLanguageIsRefusedWithBothNames) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  ASSERT_TRUE(store->open_trajectory(sample_key()));
  TrajectoryKey other = sample_key();
  other.language = trace::Language::triton;
  auto id = store->open_trajectory(other);
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(id.error().message.find("stored as language cuda, not triton"), std::string::npos)
      << id.error().message;
}

TEST(RunStoreLanguage, AVersionTwoDatabaseIsMigratedAndItsTrajectoriesAreCuda) {
  ScratchDir dir;
  {
    auto store = open_store(dir.path());
    ASSERT_TRUE(store->open_trajectory(sample_key()));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() / RunStore::kDatabaseName).c_str(), &db), SQLITE_OK);
  std::vector<std::string> statements = undo_migrations_after_two();
  statements.emplace_back("DELETE FROM schema_version");
  statements.emplace_back("INSERT INTO schema_version VALUES (2)");
  for (const std::string& sql : statements)
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  sqlite3_close(db);

  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened) << reopened.error().message;
  auto found = (*reopened)->find_trajectory(sample_key());
  ASSERT_TRUE(found && found->has_value()) << "the old trajectory is found as a CUDA one";
  EXPECT_EQ((*found)->key.language, trace::Language::cuda);
  EXPECT_TRUE((*reopened)->open_trajectory(triton_key()));
}
