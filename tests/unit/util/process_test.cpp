// util/process.hpp against real processes (/bin/sh, /bin/bash, sleep, env, wc, true): owned
// descriptors, spawn's environment, working folder, descriptor mapping and parent-death signal,
// clear start-up errors, SIGPIPE-free writes, the line reader's deadline and leftover bytes,
// the group kill.
#include "util/process.hpp"
#include "util/sigpipe.hpp"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ptxbench::util {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kLineCap = 1 << 20;

Pipe pipe_or_die() {
  auto pipe = make_pipe();
  if (!pipe)
    throw Fatal(pipe.error().message);
  return std::move(*pipe);
}

// Whether the write end of the pipe that `read_end` reads has been closed everywhere.
bool writer_gone(const Fd& read_end) {
  pollfd ready{read_end.get(), POLLIN, 0};
  if (::poll(&ready, 1, 0) != 1)
    return false;
  char byte;
  return ::read(read_end.get(), &byte, 1) == 0;
}

// Spawns `argv` with its stdout on a pipe and returns the pid and a reader of that pipe.
struct Started {
  pid_t pid;
  LineReader out;
};

Started start_with_stdout(SpawnOptions options) {
  Pipe out = pipe_or_die();
  options.fds.push_back({out.write.get(), STDOUT_FILENO});
  if (options.env.empty())
    options.env = environment_with({});
  auto pid = spawn(options);
  if (!pid)
    throw Fatal(pid.error().message);
  return Started{*pid, LineReader(std::move(out.read), kLineCap)};
}

std::string next_line(LineReader& reader) {
  auto line = reader.read_line(Clock::now() + 10s);
  return line ? *line : "<" + line.error().message + ">";
}

TEST(Fd, ClosesOnDestruction) {
  Pipe pipe = pipe_or_die();
  { Fd writer = std::move(pipe.write); }
  EXPECT_TRUE(writer_gone(pipe.read));
}

TEST(Fd, MoveAssignmentClosesTheDescriptorItReplaces) {
  Pipe first = pipe_or_die();
  Pipe second = pipe_or_die();
  Fd writer = std::move(first.write);
  writer = std::move(second.write);
  EXPECT_TRUE(writer_gone(first.read));
  EXPECT_FALSE(writer_gone(second.read));
  EXPECT_FALSE(second.write.valid());
}

TEST(Fd, ReleaseGivesUpOwnership) {
  Pipe pipe = pipe_or_die();
  int raw = -1;
  { raw = pipe.write.release(); }
  EXPECT_FALSE(writer_gone(pipe.read));
  Fd again(raw);
  again.reset();
  EXPECT_TRUE(writer_gone(pipe.read));
}

TEST(Spawn, PassesTheEnvironmentAndTheWorkingFolder) {
  const auto dir = std::filesystem::canonical(std::filesystem::temp_directory_path());
  SpawnOptions options;
  options.argv = {"sh", "-c", "echo \"$PTXBENCH_PROCESS_TEST\"; pwd"};
  options.env = environment_with({"PTXBENCH_PROCESS_TEST=passed"});
  options.working_dir = dir;
  Started child = start_with_stdout(options);
  EXPECT_EQ(next_line(child.out), "passed");
  EXPECT_EQ(next_line(child.out), dir.string());
  EXPECT_EQ(reap(child.pid), 0);
}

TEST(Spawn, TheChildSeesExactlyTheGivenEnvironment) {
  SpawnOptions options;
  options.argv = {"/usr/bin/env"};
  options.env = {"ONLY=this"};
  Started child = start_with_stdout(options);
  EXPECT_EQ(next_line(child.out), "ONLY=this");
  EXPECT_EQ(child.out.read_line(Clock::now() + 10s).error().kind, ErrorKind::io); // EOF
  EXPECT_EQ(reap(child.pid), 0);
}

TEST(Spawn, AMissingExecutableIsAClearError) {
  for (const std::string name : {"/nonexistent/ptxbench-no-such-tool", "ptxbench-no-such-tool"}) {
    SpawnOptions options;
    options.argv = {name};
    options.env = environment_with({});
    auto pid = spawn(options);
    ASSERT_FALSE(pid);
    EXPECT_EQ(pid.error().kind, ErrorKind::subprocess);
    EXPECT_EQ(pid.error().message, "cannot execute '" + name + "': No such file or directory");
  }
}

TEST(Spawn, AMissingWorkingFolderIsAClearError) {
  SpawnOptions options;
  options.argv = {"true"};
  options.env = environment_with({});
  options.working_dir = "/nonexistent/ptxbench-folder";
  auto pid = spawn(options);
  ASSERT_FALSE(pid);
  EXPECT_NE(pid.error().message.find("/nonexistent/ptxbench-folder"), std::string::npos)
      << pid.error().message;
}

TEST(Spawn, MappingsMaySwapDescriptorNumbers) {
  Pipe a = pipe_or_die();
  Pipe b = pipe_or_die();
  const int fd_a = a.write.get();
  const int fd_b = b.write.get();
  SpawnOptions options;
  options.argv = {"/bin/bash", "-c",
                  "echo first >&" + std::to_string(fd_b) + "; echo second >&" +
                      std::to_string(fd_a)};
  options.env = environment_with({});
  options.fds = {{fd_a, fd_b}, {fd_b, fd_a}};
  auto pid = spawn(options);
  ASSERT_TRUE(pid) << pid.error().message;
  a.write.reset();
  b.write.reset();
  LineReader from_a(std::move(a.read), kLineCap);
  LineReader from_b(std::move(b.read), kLineCap);
  EXPECT_EQ(next_line(from_a), "first");
  EXPECT_EQ(next_line(from_b), "second");
  EXPECT_EQ(reap(*pid), 0);
}

// A descriptor the parent holds without close-on-exec reaches the child unless OtherFds::close.
TEST(Spawn, OtherFdsCloseKeepsUnmappedDescriptorsFromTheChild) {
  for (OtherFds other : {OtherFds::inherit, OtherFds::close}) {
    Pipe pipe = pipe_or_die();
    ASSERT_EQ(::fcntl(pipe.write.get(), F_SETFD, 0), 0);
    SpawnOptions options;
    options.argv = {"sleep", "30"};
    options.env = environment_with({});
    options.other_fds = other;
    auto pid = spawn(options);
    ASSERT_TRUE(pid) << pid.error().message;
    pipe.write.reset();
    EXPECT_EQ(writer_gone(pipe.read), other == OtherFds::close);
    (void)kill_group_and_reap(*pid);
  }
}

// PR_SET_PDEATHSIG follows the thread that spawned the child: its end stands in for ours.
TEST(Spawn, TheParentDeathSignalArrivesWhenTheSpawningThreadEnds) {
  Expected<pid_t> pid = make_error(ErrorKind::subprocess, "not started");
  std::thread spawner([&] {
    SpawnOptions options;
    options.argv = {"sleep", "30"};
    options.env = environment_with({});
    options.parent_death_signal = SIGKILL;
    pid = spawn(options);
  });
  spawner.join();
  ASSERT_TRUE(pid) << pid.error().message;
  const auto start = Clock::now();
  const int status = reap(*pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_LT(Clock::now() - start, 5s);
}

// With SIGPIPE at its default disposition, a write to a pipe nobody reads would kill the test.
TEST(WriteAll, APipeWhoseReaderClosedIsAnErrorValueNotASignal) {
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);
  Pipe input = pipe_or_die();
  SpawnOptions options;
  options.argv = {"sh", "-c", "exec 0<&-; echo closed; sleep 30"};
  options.fds = {{input.read.get(), STDIN_FILENO}};
  Started child = start_with_stdout(options);
  input.read.reset();
  ASSERT_EQ(next_line(child.out), "closed");
  const Status written = write_all(input.write.get(), "nobody reads this\n");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().kind, ErrorKind::io);
  EXPECT_EQ(written.error().message, "write: Broken pipe");
  sigset_t pending;
  ASSERT_EQ(::sigpending(&pending), 0);
  EXPECT_EQ(::sigismember(&pending, SIGPIPE), 0);
  (void)kill_group_and_reap(child.pid);
}

TEST(WriteAll, ASocketWhosePeerClosedIsAnErrorValueNotASignal) {
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  Fd mine(ends[0]);
  Fd(ends[1]).reset();
  const Status written = write_all(mine.get(), "nobody reads this\n");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().message, "send: Broken pipe");
}

bool sigpipe_pending_here() {
  sigset_t pending;
  ::sigemptyset(&pending);
  return ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGPIPE) == 1;
}

TEST(SigpipeBlock, ASigpipeRaisedInsideIsTakenAndTheMaskComesBack) {
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);
  {
    const SigpipeBlock block;
    // What OpenSSL's write(2) to a dead peer does under libcurl: a SIGPIPE for this thread.
    ASSERT_EQ(::pthread_kill(::pthread_self(), SIGPIPE), 0);
    EXPECT_TRUE(sigpipe_pending_here());
  } // the default disposition would kill the test here if the signal were still pending
  EXPECT_FALSE(sigpipe_pending_here());
  sigset_t mask;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, nullptr, &mask), 0);
  EXPECT_EQ(::sigismember(&mask, SIGPIPE), 0) << "SIGPIPE is unblocked again";
}

TEST(WriteAll, EveryByteReachesALiveReader) {
  Pipe input = pipe_or_die();
  SpawnOptions options;
  options.argv = {"wc", "-c"};
  options.fds = {{input.read.get(), STDIN_FILENO}};
  Started child = start_with_stdout(options);
  input.read.reset();
  const std::string bytes(1'000'000, 'x'); // far more than a pipe holds
  ASSERT_TRUE(write_all(input.write.get(), bytes));
  input.write.reset();
  std::string count = next_line(child.out);
  count.erase(0, count.find_first_not_of(' '));
  EXPECT_EQ(count, "1000000");
  EXPECT_EQ(reap(child.pid), 0);
}

TEST(LineReader, TheDeadlineFiresWithinTolerance) {
  Pipe pipe = pipe_or_die();
  LineReader reader(std::move(pipe.read), kLineCap);
  const auto start = Clock::now();
  auto line = reader.read_line(start + 200ms);
  const auto waited = Clock::now() - start;
  ASSERT_FALSE(line);
  EXPECT_EQ(line.error().kind, ErrorKind::timeout);
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 1200ms);
}

TEST(LineReader, BytesAfterALineStayBufferedAndAreCounted) {
  Pipe pipe = pipe_or_die();
  ASSERT_TRUE(write_all(pipe.write.get(), "one\ntwo\npartial"));
  LineReader reader(std::move(pipe.read), kLineCap);
  EXPECT_EQ(next_line(reader), "one");
  EXPECT_EQ(reader.buffered_bytes(), std::string("two\npartial").size());
  EXPECT_EQ(next_line(reader), "two");
  EXPECT_EQ(reader.buffered_bytes(), std::string("partial").size());
  auto pending = reader.read_line(Clock::now() + 50ms);
  ASSERT_FALSE(pending);
  EXPECT_EQ(pending.error().kind, ErrorKind::timeout);
  ASSERT_TRUE(write_all(pipe.write.get(), " line\n"));
  EXPECT_EQ(next_line(reader), "partial line");
  EXPECT_EQ(reader.buffered_bytes(), 0u);
  pipe.write.reset();
  auto end = reader.read_line(Clock::now() + 10s);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().kind, ErrorKind::io);
}

TEST(LineReader, ALineLongerThanTheCapIsABadResponse) {
  Pipe pipe = pipe_or_die();
  ASSERT_TRUE(write_all(pipe.write.get(), std::string(100, 'x')));
  LineReader reader(std::move(pipe.read), 64);
  auto line = reader.read_line(Clock::now() + 10s);
  ASSERT_FALSE(line);
  EXPECT_EQ(line.error().kind, ErrorKind::bad_response);
}

// The grandchild holds the stdout pipe too: the pipe reaches its end only once it is dead.
TEST(KillGroup, AGrandchildInTheGroupIsKilled) {
  SpawnOptions options;
  options.argv = {"sh", "-c", "sleep 30 & echo started; wait"};
  Started child = start_with_stdout(options);
  ASSERT_EQ(next_line(child.out), "started");
  const int status = kill_group_and_reap(child.pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  auto end = child.out.read_line(Clock::now() + 5s);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().kind, ErrorKind::io) << end.error().message;
}

} // namespace
} // namespace ptxbench::util
