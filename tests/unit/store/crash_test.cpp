// A writer process killed with SIGKILL at arbitrary points: the reopened database holds only
// whole turns, and resume continues at the right index.
#include "store/run_store.hpp"
#include "store_test_support.hpp"

#include <csignal>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ptxbench;
using namespace ptxbench::store;
using namespace ptxbench::store::testing;

namespace {

// A child process running `body` with the write end of a pipe; the parent keeps the read end.
class Child {
public:
  template <typename Body> explicit Child(Body body) {
    int fds[2];
    if (::pipe(fds) != 0)
      throw util::Fatal("pipe failed");
    m_pid = ::fork();
    if (m_pid == 0) {
      ::close(fds[0]);
      try {
        body(fds[1]);
      } catch (...) {
        ::_exit(3);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    m_read = fds[0];
  }
  ~Child() {
    if (m_pid > 0)
      kill_now();
    ::close(m_read);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Blocks until the child has reported `count` more events; false if it died first.
  bool wait_events(int count) {
    char byte = 0;
    for (int i = 0; i < count; ++i)
      if (::read(m_read, &byte, 1) != 1)
        return false;
    return true;
  }
  void kill_now() {
    ::kill(m_pid, SIGKILL);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_pid = -1;
  }

private:
  pid_t m_pid = -1;
  int m_read = -1;
};

void report(int fd) {
  char byte = 'x';
  if (::write(fd, &byte, 1) != 1)
    ::_exit(4);
}

std::string integrity_check(const std::filesystem::path& db_path) {
  sqlite3* db = nullptr;
  sqlite3_open(db_path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr);
  std::string result = "no result";
  if (sqlite3_step(stmt) == SQLITE_ROW)
    result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return result;
}

// Every finished turn is whole: indexes 0..n-1, an outcome, its call and its evaluation.
void expect_only_whole_turns(RunStore& store, TrajectoryId id, std::size_t at_least) {
  auto turns = store.finished_turns(id);
  ASSERT_TRUE(turns) << turns.error().message;
  ASSERT_GE(turns->size(), at_least);
  for (std::size_t i = 0; i < turns->size(); ++i) {
    const auto& turn = (*turns)[i];
    EXPECT_EQ(turn.index, static_cast<std::int64_t>(i));
    EXPECT_EQ(turn.category, TurnCategory::correct);
    EXPECT_TRUE(turn.kernel_source && turn.reply && turn.feedback);
    EXPECT_EQ(turn.evaluations.size(), 1u);
    EXPECT_EQ(store.model_calls(turn.id)->size(), 1u);
  }
  EXPECT_LE(*store.count_turns(id, TurnState::open), 1);
}

} // namespace

TEST(RunStoreCrash, KilledInsideATurnLeavesTheFinishedTurnsAndResumesAtTheCutOffOne) {
  ScratchDir dir;
  {
    Child child([&](int fd) {
      auto store = open_store(dir.path());
      auto id = *store->open_trajectory(sample_key());
      for (int t = 0; t < 5; ++t)
        write_whole_turn(*store, id, t);
      auto turn = *store->begin_turn(id);
      (void)store->record_model_call(turn.id, sample_call(1, "reply of the cut-off turn"));
      report(fd);
      ::pause(); // the model call is stored; the evaluation never comes
    });
    ASSERT_TRUE(child.wait_events(1));
    child.kill_now();
  }
  auto store = RunStore::open_existing(dir.path());
  ASSERT_TRUE(store) << store.error().message;
  auto id = *(*store)->open_trajectory(sample_key());
  expect_only_whole_turns(**store, id, 5);
  auto point = (*store)->resume_point(id);
  ASSERT_TRUE(point);
  EXPECT_EQ(point->next_index, 5);
  EXPECT_EQ(point->counted_turns, 5);
  EXPECT_EQ(*(*store)->count_turns(id, TurnState::open), 1);
  auto resumed = (*store)->begin_turn(id);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->index, 5);
  EXPECT_EQ(*(*store)->count_turns(id, TurnState::abandoned), 1);
  EXPECT_EQ((*store)->usage(id)->calls, 6); // the cut-off turn's call is still accounted
}

TEST(RunStoreCrash, KilledAtAnArbitraryPointLeavesOnlyWholeTurns) {
  for (int round = 0; round < 3; ++round) {
    ScratchDir dir;
    {
      Child child([&](int fd) {
        auto store = open_store(dir.path());
        auto id = *store->open_trajectory(sample_key());
        for (int t = 0;; ++t) {
          write_whole_turn(*store, id, t);
          report(fd);
        }
      });
      ASSERT_TRUE(child.wait_events(10 + round * 7));
      child.kill_now(); // wherever the writer is: inside a commit, between writes...
    }
    EXPECT_EQ(integrity_check(dir.path() / RunStore::kDatabaseName), "ok");
    auto store = RunStore::open_existing(dir.path());
    ASSERT_TRUE(store) << store.error().message;
    auto id = *(*store)->open_trajectory(sample_key());
    expect_only_whole_turns(**store, id, static_cast<std::size_t>(10 + round * 7));
    auto point = *(*store)->resume_point(id);
    auto resumed = (*store)->begin_turn(id);
    ASSERT_TRUE(resumed);
    EXPECT_EQ(resumed->index, point.next_index);
    write_whole_turn(**store, id, 1000); // the resumed run goes on normally
    EXPECT_EQ((*store)->finished_turns(id)->size(), point.finished.size() + 1);
  }
}
