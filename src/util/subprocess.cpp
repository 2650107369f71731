// spawn() (process.hpp) into a new process group with stdin on /dev/null; poll() drains
// stdout and stderr so neither pipe can fill and block the child; on deadline the whole group
// gets SIGKILL and is reaped.
#include "util/subprocess.hpp"

#include "util/process.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace ptxbench::util {
namespace {

using Clock = std::chrono::steady_clock;

void append_capped(std::string& sink, const char* data, std::size_t n, std::size_t cap,
                   bool& truncated) {
  if (sink.size() >= cap) {
    truncated = true;
    return;
  }
  std::size_t take = std::min(n, cap - sink.size());
  sink.append(data, take);
  if (take < n)
    truncated = true;
}

// Reads both pipes until EOF or deadline; returns false on deadline.
bool drain(int out_fd, int err_fd, Clock::time_point deadline, ProcessResult& result,
           std::size_t cap) {
  std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  std::array<bool, 2> truncated{false, false};
  int open_count = 2;
  char buf[65536];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return false;
    int ready =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR)
      break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        append_capped(*sinks[i], buf, static_cast<std::size_t>(n), cap, truncated[i]);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (std::size_t i = 0; i < 2; ++i)
    if (truncated[i])
      *sinks[i] += "\n[output truncated]\n";
  return true;
}

void record_status(int status, ProcessResult& result) {
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.term_signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
}

} // namespace

Expected<ProcessResult> PosixProcessRunner::run(const std::vector<std::string>& argv,
                                                const ProcessOptions& options) {
  PTXBENCH_TRY_ASSIGN(auto out, make_pipe());
  PTXBENCH_TRY_ASSIGN(auto err, make_pipe());
  PTXBENCH_TRY_ASSIGN(auto input, open_fd("/dev/null", O_RDONLY));
  SpawnOptions spawn_options{argv,
                             environment_with(options.extra_env),
                             options.working_dir,
                             {{input.get(), STDIN_FILENO},
                              {out.write.get(), STDOUT_FILENO},
                              {err.write.get(), STDERR_FILENO}}};
  spawn_options.read_ruleset = options.read_ruleset;
  const auto start = Clock::now();
  PTXBENCH_TRY_ASSIGN(auto pid, spawn(spawn_options));
  out.write.reset();
  err.write.reset();

  ProcessResult result;
  const bool finished = drain(out.read.get(), err.read.get(), start + options.timeout, result,
                              options.max_output_bytes);
  result.timed_out = !finished;
  const int status = finished ? reap(pid) : kill_group_and_reap(pid);
  kill_group(pid); // grandchildren that kept running die with it
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  record_status(status, result);
  return result;
}

std::filesystem::path find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr)
    return {};
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

} // namespace ptxbench::util
