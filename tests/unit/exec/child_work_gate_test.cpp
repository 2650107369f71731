// The guard that keeps a child's preparation and a retired child's end out of every timed
// window (child_work_gate.hpp): as a state machine walked through an evaluation's phases, and
// through SpareChildren with a stand-in child that records when each request arrived.
#include "exec/child_work_gate.hpp"
#include "exec/spare_child.hpp"
#include "support/scratch_dir.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace ptxbench::exec {
namespace {

using test_support::ScratchDir;

TEST(ChildWorkGate, ChildWorkMayBeginInEveryPhaseButTiming) {
  ChildWorkGate gate;
  for (const char* phase : {"inputs", "load", "correctness", "counts"})
    EXPECT_TRUE(gate.may_begin_child_work()) << phase;
  gate.want_timed_window();
  EXPECT_FALSE(gate.may_begin_child_work()) << "a waiting timed window already keeps it out";
  gate.open_timed_window();
  EXPECT_FALSE(gate.may_begin_child_work()) << "timing";
  EXPECT_THROW(gate.begin_child_work(), util::Fatal);
  gate.close_timed_window();
  for (const char* phase : {"recheck", "finish", "tool passes"})
    EXPECT_TRUE(gate.may_begin_child_work()) << phase;
}

TEST(ChildWorkGate, ATimedWindowWaitsForChildWorkInFlight) {
  ChildWorkGate gate;
  gate.begin_child_work(); // a prepare that began during correctness
  gate.want_timed_window();
  EXPECT_FALSE(gate.may_open_timed_window());
  EXPECT_THROW(gate.open_timed_window(), util::Fatal);
  EXPECT_FALSE(gate.may_begin_child_work()) << "no new child work while timing waits";
  gate.end_child_work();
  ASSERT_TRUE(gate.may_open_timed_window());
  gate.open_timed_window();
  EXPECT_TRUE(gate.timed_window_open());
  gate.close_timed_window();
  EXPECT_FALSE(gate.timed_window_open());
}

TEST(ChildWorkGate, UnbalancedTransitionsAreBugs) {
  ChildWorkGate gate;
  EXPECT_THROW(gate.end_child_work(), util::Fatal);
  EXPECT_THROW(gate.close_timed_window(), util::Fatal);
  EXPECT_THROW(gate.open_timed_window(), util::Fatal) << "never wanted";
}

// A stand-in ptxbench-candidate: appends "<op>" (a prepare that asks for the counter session:
// "prepare session") to `journal` for every request, then answers it (a session asked for is
// open).
std::filesystem::path journaling_child(const ScratchDir& dir,
                                       const std::filesystem::path& journal) {
  const std::string script =
      "#!/bin/bash\n"
      "req=$4; rep=$6\n" // --device D --request-fd N --reply-fd M
      "while IFS= read -r line <&\"$req\"; do\n"
      "  [[ $line =~ \\\"id\\\":([0-9]+) ]] && id=${BASH_REMATCH[1]}\n"
      "  [[ $line =~ \\\"op\\\":\\\"([a-z_]+)\\\" ]] && op=${BASH_REMATCH[1]}\n"
      "  session=; [[ $line == *'\"counter_session\":true'* ]] && session=' session'\n"
      "  echo \"$op$session\" >> '" +
      journal.string() +
      "'\n"
      "  open=; [[ -n $session ]] && open=',\"counter_session_open\":true'\n"
      "  printf '{\"id\":%s,\"ok\":true,\"error\":\"none\",\"message\":\"\","
      "\"invoke_status\":0,\"cuda_error\":\"\"%s}\\n' \"$id\" \"$open\" >&\"$rep\"\n"
      "  [[ $op == exit ]] && exit 0\n"
      "done\n";
  const std::filesystem::path path = dir.write("child.sh", script);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::string journal_text(const std::filesystem::path& journal) {
  std::ifstream in(journal);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits up to 10 s for `journal` to mention `op`.
bool journal_mentions(const std::filesystem::path& journal, const std::string& op) {
  for (int wait = 0; wait < 1000; ++wait) {
    if (journal_text(journal).find(op) != std::string::npos)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(SpareChildren, ASpareIsPreparedBesideAnEvaluationButNeverInsideItsTimedWindow) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  SpareChildren spares(journaling_child(dir, journal), 0, ChildStart::spare);
  spares.begin_evaluation();
  auto taken = spares.take(); // the evaluation's own child; a spare is started for the next
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_TRUE(journal_mentions(journal, "prepare")) << "the spare is prepared beside the "
                                                       "running evaluation";
  // The evaluation's child retires; a second spare is wanted by the next take, inside timing.
  spares.open_timed_window();
  ASSERT_TRUE(spares.timed_window_open());
  std::filesystem::remove(journal);
  spares.retire(std::move(*taken));
  auto second = spares.take();
  ASSERT_TRUE(second) << second.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(journal_text(journal), "") << "neither a stop nor a prepare inside the window";
  spares.close_timed_window();
  EXPECT_TRUE(journal_mentions(journal, "exit")) << "the retired child stops after the window";
  EXPECT_TRUE(journal_mentions(journal, "prepare")) << "the next spare is prepared after it";
  spares.end_evaluation(false);
  spares.retire(std::move(*second));
  spares.settle();
}

// A child binary that dies at start (a library its loader cannot find, for instance): each take
// still returns, with a child whose first request reports the death, and no spare is started
// and prepared over and over in the meantime.
TEST(SpareChildren, AChildThatDiesAtStartIsHandedOutAndNotRespawnedInALoop) {
  ScratchDir dir;
  const auto starts = dir.path() / "starts.txt";
  const std::filesystem::path path =
      dir.write("child.sh", "#!/bin/bash\necho started >> '" + starts.string() + "'\nexit 127\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  SpareChildren spares(path, 0, ChildStart::spare);
  for (int evaluation = 0; evaluation < 3; ++evaluation) {
    spares.begin_evaluation();
    auto taken = spares.take();
    ASSERT_TRUE(taken) << taken.error().message;
    protocol::Request ping;
    ping.op = protocol::RequestOp::ping;
    auto reply = taken->process.request(ping, std::chrono::seconds(5));
    ASSERT_FALSE(reply);
    EXPECT_NE(reply.error().message.find("exited with status 127"), std::string::npos)
        << reply.error().message;
    spares.end_evaluation(false);
    spares.retire(std::move(*taken));
  }
  spares.settle();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string text = journal_text(starts);
  const auto count = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_LE(count, 6u) << "three evaluations' children and at most one spare each";
}

// Back to back, the next evaluation begins a client's round trip after the last: a spare
// prepared beside the last one opens the counter session only once the GPU has been idle for
// kIdleBeforeSession, so that the next evaluation never waits in take() for it.
TEST(SpareChildren, ASpareOpensTheCounterSessionOnlyOnceTheGpuHasBeenIdle) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  SpareChildren spares(journaling_child(dir, journal), 0, ChildStart::spare);
  spares.begin_evaluation();
  auto taken = spares.take();
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_TRUE(journal_mentions(journal, "prepare"));
  EXPECT_EQ(journal_text(journal), "prepare\n") << "no session beside an evaluation";
  spares.end_evaluation(false);
  spares.begin_evaluation(); // the next one, back to back
  std::this_thread::sleep_for(kIdleBeforeSession * 3);
  EXPECT_EQ(journal_text(journal), "prepare\n") << "no session between back-to-back evaluations";
  const auto idle = std::chrono::steady_clock::now(); // no later than end_evaluation's clock
  spares.end_evaluation(false);
  ASSERT_TRUE(journal_mentions(journal, "prepare session"));
  EXPECT_GE(std::chrono::steady_clock::now() - idle, kIdleBeforeSession);
  spares.retire(std::move(*taken));
  spares.settle();
}

// CounterSessionAhead::beside_timing: the spare's first `prepare` is still child work, kept out
// of timed windows; its session opens inside one, as soon as every running evaluation has
// counted, and the next evaluation takes a spare that holds it.
TEST(SpareChildren, BesideTimingASpareOpensTheSessionInATimedWindowOnceEveryEvaluationCounted) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  SpareChildren spares(journaling_child(dir, journal), 0, ChildStart::spare,
                       CounterSessionAhead::beside_timing);
  RunningEvaluation first(spares);
  auto taken = spares.take();
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_TRUE(journal_mentions(journal, "prepare"));
  auto second = std::make_unique<RunningEvaluation>(spares); // a second worker's, not counted
  first.done_counting();
  spares.open_timed_window(); // the first evaluation's trials
  std::this_thread::sleep_for(kIdleBeforeSession * 3);
  EXPECT_EQ(journal_text(journal), "prepare\n") << "the second evaluation has still to count";
  second->done_counting();
  ASSERT_TRUE(journal_mentions(journal, "prepare session"));
  EXPECT_TRUE(spares.timed_window_open()) << "the session opened beside the trials";
  EXPECT_FALSE(spares.try_claim_counter_session()) << "the spare holds the GPU's one session";
  spares.close_timed_window();
  second.reset();
  spares.retire(std::move(*taken));
  RunningEvaluation next(spares);
  auto spare = spares.take();
  ASSERT_TRUE(spare) << spare.error().message;
  EXPECT_TRUE(spare->holds_counter_session);
  EXPECT_TRUE(spare->startup.has_value());
  next.done_counting();
  spares.retire(std::move(*spare));
  spares.settle();
}

// Under the default (when_idle), the same evaluations leave the session to the idle GPU: the
// timing phase holds the right (GpuEvaluation::timing), and a spare asks for none while an
// evaluation runs, counted or not.
TEST(SpareChildren, WhenIdleASpareOpensNoSessionWhileACountedEvaluationRuns) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  SpareChildren spares(journaling_child(dir, journal), 0, ChildStart::spare);
  auto running = std::make_unique<RunningEvaluation>(spares);
  auto taken = spares.take();
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_TRUE(journal_mentions(journal, "prepare"));
  running->done_counting();
  std::this_thread::sleep_for(kIdleBeforeSession * 3);
  EXPECT_EQ(journal_text(journal), "prepare\n");
  running.reset();
  EXPECT_TRUE(journal_mentions(journal, "prepare session")) << "once idle";
  spares.retire(std::move(*taken));
  spares.settle();
}

TEST(SpareChildren, ATimedWindowWaitsForAPrepareInFlight) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  // A child whose `prepare` takes 1 s: the window must open after its reply.
  const std::string script = "#!/bin/bash\n"
                             "req=$4; rep=$6\n"
                             "while IFS= read -r line <&\"$req\"; do\n"
                             "  [[ $line =~ \\\"id\\\":([0-9]+) ]] && id=${BASH_REMATCH[1]}\n"
                             "  [[ $line == *'\"op\":\"prepare\"'* ]] && { echo start >> '" +
                             journal.string() + "'; sleep 1; echo end >> '" + journal.string() +
                             "'; }\n"
                             "  printf '{\"id\":%s,\"ok\":true,\"error\":\"none\",\"message\":\"\","
                             "\"invoke_status\":0,\"cuda_error\":\"\"}\\n' \"$id\" >&\"$rep\"\n"
                             "  [[ $line == *'\"op\":\"exit\"'* ]] && exit 0\n"
                             "done\n";
  const auto child = dir.write("slow.sh", script);
  std::filesystem::permissions(child, std::filesystem::perms::owner_all);
  SpareChildren spares(child, 0, ChildStart::spare);
  spares.begin_evaluation();
  auto taken = spares.take();
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_TRUE(journal_mentions(journal, "start"));
  spares.open_timed_window();
  EXPECT_EQ(journal_text(journal), "start\nend\n") << "the window opened before the prepare ended";
  spares.close_timed_window();
  spares.end_evaluation(false);
  spares.retire(std::move(*taken));
  spares.settle();
}

} // namespace
// Another process shares the GPU (two fleet workers on one device): its counter session is one
// per GPU, so no spare may hold it between evaluations; a spare that holds one is replaced.
TEST(SpareChildren, WithSessionsAheadSwitchedOffNoSpareHoldsTheCounterSession) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  SpareChildren spares(journaling_child(dir, journal), 0, ChildStart::spare);
  spares.allow_sessions_ahead(false);
  spares.begin_evaluation();
  auto taken = spares.take();
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_TRUE(journal_mentions(journal, "prepare"));
  spares.end_evaluation(false);
  std::this_thread::sleep_for(kIdleBeforeSession * 4);
  EXPECT_EQ(journal_text(journal), "prepare\n") << "idle, but the GPU is shared: no session";

  spares.allow_sessions_ahead(true);
  ASSERT_TRUE(journal_mentions(journal, "prepare session")) << "alone again: the session opens";
  EXPECT_TRUE(spares.try_claim_counter_session() == false) << "the spare holds the right";

  std::filesystem::remove(journal);
  spares.allow_sessions_ahead(false);
  EXPECT_TRUE(spares.try_claim_counter_session()) << "the holding spare was stopped";
  spares.release_counter_session();
  ASSERT_TRUE(journal_mentions(journal, "prepare")) << "a new spare is prepared";
  std::this_thread::sleep_for(kIdleBeforeSession * 4);
  EXPECT_EQ(journal_text(journal), "prepare\n") << "without a session";
  spares.retire(std::move(*taken));
  spares.settle();
}

// SparePrepare::after_timing: the spare started when an evaluation took its child is not
// prepared before that evaluation's timing phase has ended (its window would wait for the
// `prepare`), and is prepared right after; an evaluation that ends without timing (it failed
// before) lets it be prepared too.
TEST(SpareChildren, AfterTimingASpareIsPreparedOnlyOnceEveryRunningEvaluationHasTimed) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  SpareChildren spares(journaling_child(dir, journal), 0, ChildStart::spare,
                       CounterSessionAhead::when_idle, std::chrono::seconds(60),
                       SparePrepare::after_timing);
  auto first = std::make_unique<RunningEvaluation>(spares);
  auto taken = spares.take();
  ASSERT_TRUE(taken) << taken.error().message;
  auto failing = std::make_unique<RunningEvaluation>(spares); // a second worker's
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(spares.count(), 1) << "the spare is started (no GPU work)";
  EXPECT_EQ(journal_text(journal), "") << "but not prepared before either evaluation timed";
  spares.open_timed_window(); // the first evaluation's trials
  spares.close_timed_window();
  first->done_timing();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(journal_text(journal), "") << "the second evaluation has still to time";
  failing.reset(); // it ends without timing
  EXPECT_TRUE(journal_mentions(journal, "prepare")) << "no evaluation left to time";
  first.reset();
  spares.retire(std::move(*taken));
  spares.settle();
}

// The default, SparePrepare::beside_evaluation: the same spare is prepared while the
// evaluation that took its child has not timed yet.
TEST(SpareChildren, BesideAnEvaluationASpareIsPreparedBeforeThatEvaluationTimes) {
  ScratchDir dir;
  const auto journal = dir.path() / "journal.txt";
  SpareChildren spares(journaling_child(dir, journal), 0, ChildStart::spare);
  const RunningEvaluation running(spares);
  auto taken = spares.take();
  ASSERT_TRUE(taken) << taken.error().message;
  EXPECT_TRUE(journal_mentions(journal, "prepare")) << "prepared before any timing";
  spares.retire(std::move(*taken));
  spares.settle();
}

} // namespace ptxbench::exec
