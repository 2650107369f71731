// fork + exec into a new process group; poll() drains stdout and stderr so neither pipe can
// fill and block the child; on deadline the whole group gets SIGKILL and is reaped.
#include "util/subprocess.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <sstream>

namespace ptxbench::util {
namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  int fds[2] = {-1, -1};
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  void close_end(int i) {
    if (fds[i] >= 0) ::close(fds[i]);
    fds[i] = -1;
  }
};

[[noreturn]] void exec_child(const std::vector<std::string>& argv, const ProcessOptions& options,
                             Pipe& out, Pipe& err) {
  ::setpgid(0, 0);
  ::dup2(out.fds[1], STDOUT_FILENO);
  ::dup2(err.fds[1], STDERR_FILENO);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  if (!options.working_dir.empty() && ::chdir(options.working_dir.c_str()) != 0) _exit(126);
  for (const auto& kv : options.extra_env) ::putenv(const_cast<char*>(kv.c_str()));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  _exit(127);
}

void append_capped(std::string& sink, const char* data, std::size_t n, std::size_t cap,
                   bool& truncated) {
  if (sink.size() >= cap) {
    truncated = true;
    return;
  }
  std::size_t take = std::min(n, cap - sink.size());
  sink.append(data, take);
  if (take < n) truncated = true;
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
    if (left.count() <= 0) return false;
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
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
    if (truncated[i]) *sinks[i] += "\n[output truncated]\n";
  return true;
}

} // namespace

Expected<ProcessResult> PosixProcessRunner::run(const std::vector<std::string>& argv,
                                                const ProcessOptions& options) {
  if (argv.empty()) return make_error(ErrorKind::subprocess, "empty command line");
  Pipe out, err;
  if (::pipe2(out.fds, O_CLOEXEC) != 0 || ::pipe2(err.fds, O_CLOEXEC) != 0)
    return make_error(ErrorKind::subprocess, std::string("pipe: ") + std::strerror(errno));
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) return make_error(ErrorKind::subprocess, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) exec_child(argv, options, out, err);
  ::setpgid(pid, pid);
  out.close_end(1);
  err.close_end(1);

  ProcessResult result;
  bool finished = drain(out.fds[0], err.fds[0], start + options.timeout, result,
                        options.max_output_bytes);
  if (!finished) {
    result.timed_out = true;
    ::kill(-pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Grandchildren that kept running in the group die with it.
  ::kill(-pid, SIGKILL);
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.term_signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  if (result.exit_code == 127 && !result.signaled && result.out.empty() && result.err.empty())
    return make_error(ErrorKind::subprocess, "cannot execute '" + argv[0] + "'");
  return result;
}

std::filesystem::path find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

} // namespace ptxbench::util
