// The candidate child's system-call filter on this machine's kernel: a forked process installs
// it and then makes one call; what the allow-list permits still works, and everything else ends
// the process with kSystemCallRefusedExit and a log line naming the call, without the call
// having happened. The GPU side (the driver, CUPTI and Triton under the filter) is in
// tests/unit/exec/evaluator_gpu.cpp.
#include "child/system_call_filter.hpp"
#include "protocol/system_call_filter.hpp"
#include "support/scratch_dir.hpp"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <iterator>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ptxbench::child {
namespace {

struct Outcome {
  int status = 0;
  std::string log; // what the process wrote to stderr
};

// Runs `body` in a forked process under the filter; its stderr comes back as the log. The body
// returns the exit status it wants when it gets that far.
Outcome under_filter(const std::function<int()>& body) {
  int log[2];
  EXPECT_EQ(::pipe(log), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(log[1], STDERR_FILENO);
    ::close(log[0]);
    if (auto filtered = install_system_call_filter(); !filtered) {
      std::fprintf(stderr, "install: %s\n", filtered.error().message.c_str());
      ::_exit(100);
    }
    ::_exit(body());
  }
  ::close(log[1]);
  Outcome outcome;
  char buffer[4096];
  for (ssize_t n; (n = ::read(log[0], buffer, sizeof buffer)) > 0;)
    outcome.log.append(buffer, static_cast<std::size_t>(n));
  ::close(log[0]);
  EXPECT_EQ(::waitpid(pid, &outcome.status, 0), pid);
  return outcome;
}

void expect_refused(const Outcome& outcome, const std::string& what) {
  ASSERT_TRUE(WIFEXITED(outcome.status)) << outcome.log;
  EXPECT_EQ(WEXITSTATUS(outcome.status), protocol::kSystemCallRefusedExit) << outcome.log;
  EXPECT_NE(outcome.log.find(std::string(protocol::kSystemCallRefusedPrefix) + what),
            std::string::npos)
      << outcome.log;
}

TEST(SystemCallFilter, WhatTheChildNeedsStillWorks) {
  const Outcome outcome = under_filter([] {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0 || ::write(pipe_fds[1], "x", 1) != 1)
      return 1;
    void* page =
        ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED || ::mprotect(page, 4096, PROT_READ) != 0 ||
        ::munmap(page, 1 << 20) != 0)
      return 2;
    std::atomic<int> ran{0};
    std::thread([&] { ran = 1; }).join(); // clone3 answers ENOSYS; the C library uses clone
    if (ran != 1)
      return 3;
    const int status = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    char text[64];
    if (status < 0 || ::read(status, text, sizeof text) <= 0 || ::close(status) != 0)
      return 4;
    if (::prctl(PR_SET_NAME, "worker", 0, 0, 0) != 0 || ::kill(::getpid(), 0) != 0)
      return 5;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    if (::sigaction(SIGUSR1, &ignore, nullptr) != 0)
      return 6;
    if (::sched_get_priority_max(SCHED_OTHER) < 0) // cuDNN asks (the H200's A/A)
      return 7;
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(outcome.status)) << outcome.log;
  EXPECT_EQ(WEXITSTATUS(outcome.status), 0) << outcome.log;
  EXPECT_EQ(outcome.log, "");
}

TEST(SystemCallFilter, WritingAFileIsRefusedAndNothingIsWritten) {
  test_support::ScratchDir dir;
  const std::filesystem::path target = dir.path() / "reference_latency.json";
  expect_refused(under_filter([&] {
                   return ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600) >= 0 ? 0 : 1;
                 }),
                 "open");
  expect_refused(
      under_filter([&] {
        return ::syscall(SYS_openat, AT_FDCWD, target.c_str(), O_RDWR | O_CREAT, 0600) >= 0 ? 0 : 1;
      }),
      "openat for writing");
  expect_refused(under_filter([&] { return std::fopen(target.c_str(), "a") != nullptr ? 0 : 1; }),
                 "open");
  EXPECT_FALSE(std::filesystem::exists(target));
  const std::filesystem::path kept = dir.write("kept.txt", "kept");
  expect_refused(under_filter([&] { return ::unlink(kept.c_str()); }), "unlink");
  EXPECT_TRUE(std::filesystem::exists(kept));
}

TEST(SystemCallFilter, ProcessesAreNeitherStartedNorReached) {
  expect_refused(under_filter([] { return ::fork() >= 0 ? 0 : 1; }), "clone for a new process");
  expect_refused(under_filter([] {
                   const char* argv[] = {"/bin/true", nullptr};
                   return ::execv("/bin/true", const_cast<char* const*>(argv));
                 }),
                 "execve");
  const pid_t parent = ::getpid();
  // Harmless forms, so that without the filter the test fails instead of the test process.
  expect_refused(under_filter([&] { return ::kill(parent, 0); }), "kill");
  expect_refused(under_filter([&] {
                   return static_cast<int>(::ptrace(PTRACE_PEEKDATA, parent, nullptr, nullptr));
                 }),
                 "ptrace");
  expect_refused(under_filter([] { return ::socket(AF_INET, SOCK_STREAM, 0); }), "socket");
}

TEST(SystemCallFilter, TheFilterCannotBeUndone) {
  expect_refused(under_filter([] { return ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); }), "prctl");
  expect_refused(under_filter([] {
                   struct sigaction ignore {};
                   ignore.sa_handler = SIG_IGN;
                   return ::sigaction(SIGSYS, &ignore, nullptr);
                 }),
                 "rt_sigaction");
  // Blocking SIGSYS does not make a refused call return: the kernel forces the signal.
  const Outcome blocked = under_filter([] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSYS);
    if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
      return 1;
    return ::socket(AF_UNIX, SOCK_STREAM, 0) >= 0 ? 0 : 2;
  });
  ASSERT_TRUE(WIFSIGNALED(blocked.status)) << blocked.log;
  EXPECT_EQ(WTERMSIG(blocked.status), SIGSYS);
}

// A process that is not dumpable (as the supervisor makes itself, exec::Evaluator) keeps its
// memory from a filtered child even where both run as root: the child dropped CAP_SYS_PTRACE,
// and opening /proc/<pid>/mem read-only, which the filter allows, is refused by the kernel.
TEST(SystemCallFilter, ASupervisorThatIsNotDumpableKeepsItsMemoryFromTheChild) {
  const pid_t supervisor = ::fork();
  if (supervisor == 0) {
    static volatile std::uint64_t secret = 0x5ec2e75eedULL;
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    const pid_t self = ::getpid();
    const Outcome outcome = under_filter([&] {
      const std::string path = "/proc/" + std::to_string(self) + "/mem";
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return 0; // refused: the secret stays the supervisor's
      std::uint64_t read = 0;
      const auto at = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(&secret));
      return ::pread(fd, &read, sizeof read, at) == sizeof read && read == secret ? 1 : 2;
    });
    ::_exit(WIFEXITED(outcome.status) ? WEXITSTATUS(outcome.status) : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the child read the supervisor's secret";
}

// docs/evaluation.md lists every entry of the allow-list (the table that says why).
TEST(SystemCallFilter, TheDocumentedAllowListIsTheFiltersList) {
  std::ifstream docs(std::filesystem::path(PTXBENCH_SOURCE_DIR) / "../docs/evaluation.md");
  const std::string text{std::istreambuf_iterator<char>(docs), std::istreambuf_iterator<char>()};
  const std::size_t section = text.find("### The child's system calls");
  ASSERT_NE(section, std::string::npos);
  const std::string listed = text.substr(section, text.find("\n## ", section) - section);
  ASSERT_FALSE(allowed_system_calls().empty());
  for (const AllowedSystemCall& call : allowed_system_calls()) {
    EXPECT_NE(listed.find("`" + std::string(call.name) + "`"), std::string::npos) << call.name;
    EXPECT_FALSE(call.why.empty()) << call.name;
  }
}

} // namespace
} // namespace ptxbench::child
