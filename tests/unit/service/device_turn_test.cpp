// Turns on one GPU between processes (service/device_turn.hpp), with a lock file in a scratch
// folder standing for the GPU's: a second process waits for the first one's turn, and a holder
// that is killed gives the GPU back at once.
#include "service/device_turn.hpp"
#include "support/scratch_dir.hpp"

#include <chrono>
#include <csignal>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ptxbench;
using service::DeviceTurn;
using Clock = std::chrono::steady_clock;

namespace {

// A child process that takes the turn, writes a byte to `ready` and holds the turn for
// `hold` (or until killed).
pid_t hold_turn_in_child(const std::filesystem::path& lock, std::chrono::milliseconds hold,
                         int ready) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto turn = DeviceTurn::take(lock);
    const char byte = turn ? 1 : 0;
    [[maybe_unused]] auto written = ::write(ready, &byte, 1);
    std::this_thread::sleep_for(hold);
    ::_exit(turn ? 0 : 1);
  }
  return pid;
}

double seconds_to_take(const std::filesystem::path& lock) {
  const auto start = Clock::now();
  auto turn = DeviceTurn::take(lock);
  EXPECT_TRUE(turn) << turn.error().message;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

TEST(DeviceTurn, AnotherProcessWaitsForTheTurnAndAKilledHolderGivesItBack) {
  test_support::ScratchDir dir;
  const auto lock = dir.path() / "gpu.lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  char byte = 0;

  const pid_t holder = hold_turn_in_child(lock, std::chrono::milliseconds(700), ready[1]);
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 1);
  EXPECT_GT(seconds_to_take(lock), 0.4) << "the second process must wait for the first's turn";
  int status = 0;
  ::waitpid(holder, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);

  const pid_t killed = hold_turn_in_child(lock, std::chrono::hours(1), ready[1]);
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::kill(killed, SIGKILL);
  ::waitpid(killed, nullptr, 0);
  EXPECT_LT(seconds_to_take(lock), 0.5) << "a dead holder's turn is free at once";
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(DeviceTurn, AnUnopenableLockFileIsAnError) {
  auto turn = DeviceTurn::take(std::filesystem::path("/nonexistent-folder/gpu.lock"));
  ASSERT_FALSE(turn);
  EXPECT_NE(turn.error().message.find("cannot open"), std::string::npos) << turn.error().message;
}

TEST(DevicePresence, EachHolderSeesTheOthersAndADeadHoldersFileIsCleared) {
  test_support::ScratchDir dir;
  const auto folder = dir.path() / "gpu.d";
  auto first = service::DevicePresence::announce(folder);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->alone());
  {
    auto second = service::DevicePresence::announce(folder);
    ASSERT_TRUE(second) << second.error().message;
    EXPECT_FALSE(first->alone());
    EXPECT_FALSE(second->alone());
  }
  EXPECT_TRUE(first->alone()) << "a holder that ended is gone";

  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    auto presence = service::DevicePresence::announce(folder);
    const char byte = presence ? 1 : 0;
    [[maybe_unused]] auto written = ::write(ready[1], &byte, 1);
    std::this_thread::sleep_for(std::chrono::hours(1));
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 1);
  EXPECT_FALSE(first->alone()) << "another process holds the GPU";
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_TRUE(first->alone()) << "a killed holder's file is a dead holder's";
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder))
    ++files;
  EXPECT_EQ(files, 1u) << "the dead holder's file was removed";
  ::close(ready[0]);
  ::close(ready[1]);
}
