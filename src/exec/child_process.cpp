#include "exec/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench::exec {
namespace {

constexpr std::size_t kMaxReplyBytes = 16u << 20;

struct Pipe {
  int read = -1;
  int write = -1;
};

util::Expected<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return util::make_error(util::ErrorKind::subprocess, std::string("pipe2: ") + std::strerror(errno));
  return Pipe{fds[0], fds[1]};
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const std::vector<char*>& argv, pid_t parent, int log_fd,
                             int request_fd, int reply_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  for (int fd = 3; fd < 4096; ++fd)
    if (fd != request_fd && fd != reply_fd) ::close(fd);
  ::fcntl(request_fd, F_SETFD, 0);
  ::fcntl(reply_fd, F_SETFD, 0);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + ::strsignal(WTERMSIG(status));
  return "stopped";
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

} // namespace

util::Expected<CandidateProcess> CandidateProcess::start(const std::filesystem::path& binary,
                                                         const std::filesystem::path& log_path) {
  ::signal(SIGPIPE, SIG_IGN); // a dead child must be an error value, not our death
  auto requests = make_pipe();
  if (!requests) return requests.take_error();
  auto replies = make_pipe();
  if (!replies) return replies.take_error();
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0)
    return util::make_error(util::ErrorKind::io, "cannot create " + log_path.string());
  std::vector<std::string> args{binary.string(), "--request-fd", std::to_string(requests->read),
                                "--reply-fd", std::to_string(replies->write)};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(argv, parent, log_fd, requests->read, replies->write);
  ::close(log_fd);
  ::close(requests->read);
  ::close(replies->write);
  CandidateProcess process;
  process.m_request_fd = requests->write;
  process.m_reply_fd = replies->read;
  process.m_log_path = log_path;
  if (pid < 0) {
    process.close_fds();
    return util::make_error(util::ErrorKind::subprocess, std::string("fork: ") + std::strerror(errno));
  }
  ::setpgid(pid, pid); // also done by the child; whichever runs first wins the race
  process.m_pid = pid;
  return process;
}

CandidateProcess::CandidateProcess(CandidateProcess&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)),
      m_request_fd(std::exchange(other.m_request_fd, -1)),
      m_reply_fd(std::exchange(other.m_reply_fd, -1)), m_pending(std::move(other.m_pending)),
      m_log_path(std::move(other.m_log_path)), m_ids(other.m_ids) {}

CandidateProcess& CandidateProcess::operator=(CandidateProcess&& other) noexcept {
  if (this != &other) {
    kill_group();
    close_fds();
    m_pid = std::exchange(other.m_pid, -1);
    m_request_fd = std::exchange(other.m_request_fd, -1);
    m_reply_fd = std::exchange(other.m_reply_fd, -1);
    m_pending = std::move(other.m_pending);
    m_log_path = std::move(other.m_log_path);
    m_ids = other.m_ids;
  }
  return *this;
}

CandidateProcess::~CandidateProcess() {
  kill_group();
  close_fds();
}

void CandidateProcess::kill_group() noexcept {
  if (m_pid <= 0) return;
  ::kill(-m_pid, SIGKILL);
  ::kill(m_pid, SIGKILL);
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
  m_pid = -1;
}

void CandidateProcess::close_fds() noexcept {
  if (m_request_fd >= 0) ::close(m_request_fd);
  if (m_reply_fd >= 0) ::close(m_reply_fd);
  m_request_fd = m_reply_fd = -1;
}

util::Error CandidateProcess::died(std::string_view during) {
  // The reply pipe closed: the child is gone or going; reap it (kill in case it lingers).
  int status = 0;
  pid_t reaped = 0;
  for (int attempt = 0; attempt < 200 && reaped == 0; ++attempt) {
    reaped = ::waitpid(m_pid, &status, WNOHANG);
    if (reaped == 0) ::usleep(10'000);
  }
  std::string how = reaped == m_pid ? describe_status(status) : "closed its reply pipe";
  if (reaped == m_pid) {
    ::kill(-m_pid, SIGKILL); // helpers it may have left behind
    m_pid = -1;
  } else {
    kill_group();
  }
  close_fds();
  return util::make_error(util::ErrorKind::subprocess,
                          "the candidate process " + how + " during " + std::string(during));
}

util::Expected<Reply> CandidateProcess::request(const Request& request,
                                                std::chrono::milliseconds deadline) {
  const std::string_view op = to_string(request.op);
  if (m_pid <= 0) return util::make_error(util::ErrorKind::subprocess, "the candidate process is gone");
  if (!m_pending.empty())
    return util::make_error(util::ErrorKind::bad_response,
                            "a line no request asked for was left on the reply channel before `" +
                                std::string(op) + "`: only the harness may write there");
  Request sent = request;
  sent.id = m_ids();
  if (!write_all(m_request_fd, encode(sent) + "\n")) return died(op);
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (auto newline = m_pending.find('\n'); newline != std::string::npos) {
      const std::string line = m_pending.substr(0, newline);
      m_pending.erase(0, newline + 1);
      auto reply = decode_reply(line);
      if (reply && reply->id != sent.id)
        return util::make_error(util::ErrorKind::bad_response,
                                "the reply to `" + std::string(op) +
                                    "` carries another request's id: something other than the "
                                    "harness wrote to the reply channel");
      return reply;
    }
    if (m_pending.size() > kMaxReplyBytes)
      return util::make_error(util::ErrorKind::bad_response, "oversized reply from the candidate");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill_group();
      close_fds();
      return util::make_error(util::ErrorKind::timeout,
                              "the candidate did not answer `" + std::string(op) + "` within " +
                                  std::to_string(deadline.count()) + " ms; its process group was killed");
    }
    pollfd fd{m_reply_fd, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(m_reply_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return died(op);
    m_pending.append(buffer, static_cast<std::size_t>(n));
  }
}

bool CandidateProcess::exited() {
  if (m_pid <= 0) return true;
  int status = 0;
  if (::waitpid(m_pid, &status, WNOHANG) != m_pid) return false;
  ::kill(-m_pid, SIGKILL); // helpers it may have left behind
  m_pid = -1;
  close_fds();
  return true;
}

void CandidateProcess::stop() {
  if (m_pid > 0) {
    Request exit_request;
    exit_request.op = RequestOp::exit;
    (void)request(exit_request, std::chrono::milliseconds(2000));
  }
  kill_group();
  close_fds();
}

std::string CandidateProcess::log_tail(std::size_t max_bytes) const {
  std::ifstream in(m_log_path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return start > 0 ? "[...]\n" + text : text;
}

} // namespace ptxbench::exec
