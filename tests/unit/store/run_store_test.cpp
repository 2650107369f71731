#include "store/run_store.hpp"
#include "store_test_support.hpp"
#include "util/hash.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace ptxbench;
using namespace ptxbench::store;
using namespace ptxbench::store::testing;

namespace {

// A value from the database by a raw SQL query, bypassing the store (what a report would see).
std::int64_t query_int(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  std::int64_t value = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW)
    value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

void exec_raw(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  sqlite3_close(db);
}

} // namespace

TEST(RunStore, NewRunRecordsConfigAndReopenKeepsIt) {
  ScratchDir dir;
  {
    auto store = open_store(dir.path());
    EXPECT_EQ(store->info().config_json, sample_run_info().config_json);
    EXPECT_EQ(store->info().ptxbench_version, "0.1.0-test");
    EXPECT_FALSE(store->info().created_at.empty());
  }
  auto reopened = RunStore::open_existing(dir.path());
  ASSERT_TRUE(reopened) << reopened.error().message;
  EXPECT_EQ((*reopened)->info().config_json, sample_run_info().config_json);
  EXPECT_EQ(
      query_int(dir.path() / RunStore::kDatabaseName, "SELECT max(version) FROM schema_version"),
      RunStore::kSchemaVersion);
}

TEST(RunStore, ResumingAFolderWithoutARunIsNotFound) {
  ScratchDir dir;
  auto store = RunStore::open_existing(dir.path() / "nothing");
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().kind, util::ErrorKind::not_found);
}

TEST(RunStore, ADatabaseFromANewerBuildIsRefused) {
  ScratchDir dir;
  open_store(dir.path());
  exec_raw(dir.path() / RunStore::kDatabaseName, "UPDATE schema_version SET version = 99");
  auto store = RunStore::open_existing(dir.path());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().kind, util::ErrorKind::unsupported);
  EXPECT_NE(store.error().message.find("99"), std::string::npos);
}

TEST(RunStore, EnumNamesAreMirroredIntoTheDatabase) {
  ScratchDir dir;
  open_store(dir.path());
  auto db = dir.path() / RunStore::kDatabaseName;
  EXPECT_EQ(query_int(db, "SELECT value FROM enum_value WHERE enum='turn_category' AND "
                          "name='banned_library'"),
            static_cast<std::int64_t>(TurnCategory::banned_library));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM enum_value WHERE enum='error_kind'"),
            static_cast<std::int64_t>(util::kErrorKinds.size()));
}

TEST(RunStore, ARetiredErrorKindReadBackIsBadData) {
  ScratchDir dir;
  TurnId turn_id;
  {
    auto store = open_store(dir.path());
    auto id = *store->open_trajectory(sample_key());
    auto turn = *store->begin_turn(id);
    turn_id = turn.id;
    ModelCallRecord failed = sample_call(1, "");
    failed.error_kind = util::ErrorKind::timeout;
    ASSERT_TRUE(store->record_model_call(turn.id, failed));
  }
  // 6 was ErrorKind::compile_error, written by no build but retired all the same.
  exec_raw(dir.path() / RunStore::kDatabaseName, "UPDATE model_call SET error_kind = 6");
  auto store = RunStore::open_existing(dir.path());
  ASSERT_TRUE(store);
  auto calls = (*store)->model_calls(turn_id);
  ASSERT_FALSE(calls);
  EXPECT_EQ(calls.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(calls.error().message.find("error_kind: unknown value 6"), std::string::npos)
      << calls.error().message;
}

TEST(RunStore, TheErrorKindMirrorDropsARetiredKind) {
  ScratchDir dir;
  open_store(dir.path());
  auto db = dir.path() / RunStore::kDatabaseName;
  exec_raw(db, "INSERT INTO enum_value(enum, value, name) VALUES ('error_kind', 6, "
               "'compile_error')");
  ASSERT_TRUE(RunStore::open_existing(dir.path()));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM enum_value WHERE enum='error_kind' AND value=6"),
            0);
}

TEST(RunStore, OpeningATrajectoryTwiceGivesTheSameRow) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto first = store->open_trajectory(sample_key(0));
  auto again = store->open_trajectory(sample_key(0));
  auto other = store->open_trajectory(sample_key(1));
  ASSERT_TRUE(first && again && other);
  EXPECT_EQ(*first, *again);
  EXPECT_FALSE(*first == *other);
  auto found = store->find_trajectory(sample_key(1));
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->key, sample_key(1));
  EXPECT_EQ((*found)->status, TrajectoryStatus::running);
}

TEST(RunStore, FinishedTrajectoryKeepsItsExitReason) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  ASSERT_TRUE(store->finish_trajectory(id, ExitReason::target_met));
  auto all = store->trajectories();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().status, TrajectoryStatus::finished);
  EXPECT_EQ(all->front().exit_reason, ExitReason::target_met);
  EXPECT_TRUE(all->front().finished_at.has_value());
}

TEST(RunStore, AWholeTurnRoundTrips) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  auto handle = write_whole_turn(*store, id, 7);
  EXPECT_EQ(handle.index, 0);
  auto turns = store->finished_turns(id);
  ASSERT_TRUE(turns) << turns.error().message;
  ASSERT_EQ(turns->size(), 1u);
  const auto& turn = turns->front();
  EXPECT_EQ(turn.category, TurnCategory::correct);
  EXPECT_EQ(turn.counting, Counting::counted);
  EXPECT_EQ(turn.kernel_source, "__global__ void k7() {}");
  EXPECT_EQ(turn.feedback, "Kernel is correct.");
  ASSERT_EQ(turn.evaluations.size(), 1u);
  const auto& evaluation = turn.evaluations.front();
  EXPECT_EQ(evaluation.speedup, 1.5);
  EXPECT_EQ(evaluation.static_verdict, "present");
  ASSERT_EQ(evaluation.traces.size(), 1u);
  EXPECT_EQ(evaluation.traces[0].workload.uuid, passed_trace(1.5).workload.uuid);
  EXPECT_EQ(evaluation.traces[0].evaluation->performance->speedup_factor, 1.5);
  EXPECT_EQ(evaluation.kernel_sha256, util::sha256_hex("__global__ void k7() {}"));
}

TEST(RunStore, ModelCallAttemptsRoundTripWithErrorKinds) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  auto turn = *store->begin_turn(id);
  ModelCallRecord failed = sample_call(1, "");
  failed.reply.reset();
  failed.http_status = 429;
  failed.error_kind = util::ErrorKind::rate_limited;
  failed.error_message = "HTTP 429";
  failed.input_tokens = failed.output_tokens = failed.reasoning_tokens = 0;
  failed.cost_usd = 0;
  ASSERT_TRUE(store->record_model_call(turn.id, failed));
  auto ok = sample_call(2, "reply text");
  ok.reasoning = "thinking...";
  ASSERT_TRUE(store->record_model_call(turn.id, ok));
  auto calls = store->model_calls(turn.id);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].error_kind, util::ErrorKind::rate_limited);
  EXPECT_EQ((*calls)[0].http_status, 429);
  EXPECT_FALSE((*calls)[0].reply.has_value());
  EXPECT_EQ((*calls)[1].reply, "reply text");
  EXPECT_EQ((*calls)[1].reasoning, "thinking...");
  EXPECT_EQ((*calls)[1].reasoning_tokens, 300);
  EXPECT_DOUBLE_EQ((*calls)[1].latency_ms, 1234.5);
  auto delta = (*calls)[1].started_at - ok.started_at;
  EXPECT_LT(std::chrono::abs(delta), std::chrono::milliseconds(2));
  auto usage = store->usage(id);
  ASSERT_TRUE(usage);
  EXPECT_EQ(usage->calls, 2);
  EXPECT_EQ(usage->output_tokens, 500);
}

TEST(RunStore, IdenticalTextsAreStoredOnce) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto a = store->record_source("__global__ void same() {}");
  auto b = store->record_source("__global__ void same() {}");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*a, util::sha256_hex("__global__ void same() {}"));
  auto id = *store->open_trajectory(sample_key());
  write_whole_turn(*store, id, 1);
  write_whole_turn(*store, id, 1); // same kernel, reply and feedback again
  // one kernel, one reply, one feedback from the turns, plus the "same" text
  EXPECT_EQ(query_int(dir.path() / RunStore::kDatabaseName, "SELECT count(*) FROM source"), 4);
  auto text = store->source(*a);
  ASSERT_TRUE(text && text->has_value());
  EXPECT_EQ(**text, "__global__ void same() {}");
  auto missing = store->source(std::string(64, '0'));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

TEST(RunStore, AnOpenTurnIsNotFinishedAndIsAbandonedByTheNextBegin) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  write_whole_turn(*store, id, 0);
  auto cut_off = *store->begin_turn(id);
  ASSERT_TRUE(store->record_model_call(cut_off.id, sample_call(1, "paid for")));
  EXPECT_EQ(cut_off.index, 1);
  EXPECT_EQ(store->finished_turns(id)->size(), 1u);
  auto next = *store->begin_turn(id);
  EXPECT_EQ(next.index, 1); // the cut-off turn is redone, not skipped
  EXPECT_EQ(*store->count_turns(id, TurnState::abandoned), 1);
  EXPECT_EQ(*store->count_turns(id, TurnState::open), 1);
  EXPECT_EQ(store->usage(id)->calls, 2); // the abandoned attempt's cost still counts
  EXPECT_THROW((void)store->finish_turn(cut_off.id, TurnOutcome{}), util::Fatal);
}

TEST(RunStore, ResumePointCountsOnlyCountedTurns) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  write_whole_turn(*store, id, 0);
  auto infra = *store->begin_turn(id);
  TurnOutcome outcome;
  outcome.category = TurnCategory::infra;
  outcome.counting = Counting::not_counted;
  ASSERT_TRUE(store->finish_turn(infra.id, outcome));
  auto point = store->resume_point(id);
  ASSERT_TRUE(point);
  EXPECT_EQ(point->next_index, 2);
  EXPECT_EQ(point->counted_turns, 1);
  EXPECT_EQ(point->finished[1].category, TurnCategory::infra);
  EXPECT_FALSE(point->finished[1].reply.has_value());
}

TEST(RunStore, FinishingATurnTwiceIsABug) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  auto turn = write_whole_turn(*store, id, 0);
  EXPECT_THROW((void)store->finish_turn(turn.id, TurnOutcome{}), util::Fatal);
}

TEST(RunStore, AnUnwritableEvaluationIsRefusedAsInvalidInput) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  auto turn = *store->begin_turn(id);
  auto bad = passed_trace(1.0);
  bad.evaluation->environment.hardware.clear();
  auto status = store->record_evaluation(turn.id, EvaluationRecord{"k", {bad}, {}, {}, {}});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().kind, util::ErrorKind::invalid_input);
}

TEST(RunStore, AFinishedTrajectoryTakesNoNewTurns) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  auto id = *store->open_trajectory(sample_key());
  ASSERT_TRUE(store->finish_trajectory(id, ExitReason::turn_budget));
  EXPECT_THROW((void)store->begin_turn(id), util::Fatal);
}
