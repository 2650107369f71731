// Descriptors, pipes, SIGPIPE-free writes and the line reader of process.hpp (whose essay
// covers them); spawn() is in process.cpp.
#include "util/process.hpp"
#include "util/sigpipe.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ptxbench::util {
namespace {

using Clock = std::chrono::steady_clock;

Error errno_error(ErrorKind kind, std::string_view call, int error_number) {
  return make_error(kind, std::string(call) + ": " + std::strerror(error_number));
}

bool sigpipe_pending() {
  sigset_t pending;
  ::sigemptyset(&pending);
  return ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGPIPE) == 1;
}

bool is_socket(int fd) {
  struct stat info {};
  return ::fstat(fd, &info) == 0 && S_ISSOCK(info.st_mode);
}

// Loops `put(data, size)` (a write or send returning ssize_t) until every byte is out.
template <typename Put> Status put_all(std::string_view bytes, const char* call, Put put) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = put(bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno_error(ErrorKind::io, call, errno);
    if (n == 0)
      return make_error(ErrorKind::io, std::string(call) + ": nothing was written");
    done += static_cast<std::size_t>(n);
  }
  return Ok{};
}

} // namespace

SigpipeBlock::SigpipeBlock() {
  ::sigemptyset(&m_pipe);
  ::sigaddset(&m_pipe, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &m_pipe, &m_old);
  m_was_pending = sigpipe_pending();
}

SigpipeBlock::~SigpipeBlock() {
  if (!m_was_pending && sigpipe_pending()) {
    const timespec now{0, 0};
    while (::sigtimedwait(&m_pipe, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    m_fd = other.release();
  }
  return *this;
}

void Fd::reset() noexcept {
  if (m_fd >= 0)
    ::close(m_fd);
  m_fd = -1;
}

Expected<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return errno_error(ErrorKind::subprocess, "pipe2", errno);
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

Expected<Fd> open_fd(const std::filesystem::path& path, int flags, mode_t mode) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0)
    return make_error(ErrorKind::io, "cannot open " + path.string() + ": " + std::strerror(errno));
  return Fd(fd);
}

Status write_all(int fd, std::string_view bytes) {
  if (is_socket(fd))
    return put_all(bytes, "send", [fd](const char* data, std::size_t size) {
      return ::send(fd, data, size, MSG_NOSIGNAL);
    });
  const SigpipeBlock no_sigpipe;
  return put_all(bytes, "write",
                 [fd](const char* data, std::size_t size) { return ::write(fd, data, size); });
}

Expected<std::string> LineReader::read_line(Clock::time_point deadline) {
  for (;;) {
    const std::size_t newline = m_buffer.find('\n', m_scanned);
    if (newline != std::string::npos) {
      std::string line = m_buffer.substr(0, newline);
      m_buffer.erase(0, newline + 1);
      m_scanned = 0;
      return line;
    }
    m_scanned = m_buffer.size();
    if (m_buffer.size() > m_max)
      return make_error(ErrorKind::bad_response,
                        "a line longer than " + std::to_string(m_max) + " bytes");
    PTXBENCH_TRY(fill(deadline));
  }
}

// Appends what one read returns once the descriptor is readable, or fails at the deadline.
Status LineReader::fill(Clock::time_point deadline) {
  if (!m_fd.valid())
    return make_error(ErrorKind::io, "the descriptor is closed");
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return make_error(ErrorKind::timeout, "no whole line by the deadline");
    pollfd ready{m_fd.get(), POLLIN, 0};
    const int polled =
        ::poll(&ready, 1, static_cast<int>(std::min<long long>(left.count(), 60'000)));
    if (polled < 0 && errno != EINTR)
      return errno_error(ErrorKind::io, "poll", errno);
    if (polled <= 0)
      continue;
    char chunk[65536];
    const ssize_t n = ::read(m_fd.get(), chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n < 0)
      return errno_error(ErrorKind::io, "read", errno);
    if (n == 0)
      return make_error(ErrorKind::io, "end of file");
    m_buffer.append(chunk, static_cast<std::size_t>(n));
    return Ok{};
  }
}

} // namespace ptxbench::util
