// Starting child processes and talking to them over pipes: the one place that forks.
//
// Problem. The supervisor has many threads (the spare-child spawner, service workers, the CUDA
// driver's own), and it starts tools (nvcc, cuobjdump, ncu) and `ptxbench-candidate` children.
// Between fork and exec a child of a threaded parent may only make async-signal-safe calls: at
// the moment of fork another thread may hold the allocator's lock, so one malloc (putenv,
// std::string, execvp's PATH search) can deadlock the child forever. Descriptors must reach a
// child only where asked and must close on every error path; and a child that dies while we
// write to it must be an error value, never a SIGPIPE that kills the supervisor.
//
// Approach. spawn() builds everything that allocates before it forks: argv and envp as arrays
// of pointers, the full list of paths to try for argv[0] (the PATH search execvp would do), the
// descriptor plan. The child then calls only setpgid, prctl, fcntl, landlock_restrict_self,
// dup2, close_range/close, chdir and execve. When one of them fails, the child writes the failed
// step and errno to a close-on-exec error pipe and exits; the parent reads that pipe to its end
// before returning: no bytes means exec succeeded, a report becomes a clear error ("cannot execute
// 'x': No such file or directory") instead of an exit status 127 to puzzle over.
//
// Invariants. Every descriptor made here is an Fd and close-on-exec; a child sees the ones its
// FdMapping names at the numbers it names (mappings may swap numbers: each source is first
// duplicated above every target), plus, unless OtherFds::close, whatever the parent holds
// without close-on-exec. write_all() never raises SIGPIPE and changes no process-wide signal
// disposition. LineReader keeps the bytes after the line it returns, and says how many there
// are, so a caller can tell that a peer sent more than was asked.
#pragma once

#include "util/error.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace ptxbench::util {

// An owned file descriptor: closed on destruction, on move-assignment and on reset().
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) noexcept : m_fd(fd) {}
  Fd(Fd&& other) noexcept : m_fd(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const noexcept { return m_fd; }
  bool valid() const noexcept { return m_fd >= 0; }
  // Gives up ownership: the caller closes the returned descriptor.
  int release() noexcept { return std::exchange(m_fd, -1); }
  void reset() noexcept;

private:
  int m_fd = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

// pipe2(O_CLOEXEC); ErrorKind::subprocess with errno text when the system refuses.
Expected<Pipe> make_pipe();
// open(2) with O_CLOEXEC added; ErrorKind::io naming the path and errno.
Expected<Fd> open_fd(const std::filesystem::path& path, int flags, mode_t mode = 0600);

// Writes every byte or fails with ErrorKind::io and errno text ("write: Broken pipe"), never
// with SIGPIPE: a socket gets send(MSG_NOSIGNAL); any other descriptor is written with SIGPIPE
// blocked in the calling thread, and a SIGPIPE the write raised is consumed before the thread's
// signal mask is restored.
Status write_all(int fd, std::string_view bytes);

// Reads '\n'-terminated lines from a descriptor it owns, each with a deadline (poll-based).
class LineReader {
public:
  LineReader() = default;
  LineReader(Fd fd, std::size_t max_line_bytes) : m_fd(std::move(fd)), m_max(max_line_bytes) {}

  // The next line without its '\n'. Errors: ErrorKind::timeout when no whole line arrived by
  // `deadline`; ErrorKind::io at end of file, on a failed read, or once closed;
  // ErrorKind::bad_response when more than max_line_bytes came without a '\n'.
  Expected<std::string> read_line(std::chrono::steady_clock::time_point deadline);
  // Bytes received after the last line returned (kept for the next read_line).
  std::size_t buffered_bytes() const { return m_buffer.size(); }
  const Fd& fd() const { return m_fd; }
  // Closes the descriptor; buffered bytes stay countable.
  void close() noexcept { m_fd.reset(); }

private:
  Status fill(std::chrono::steady_clock::time_point deadline);

  Fd m_fd;
  std::string m_buffer;
  std::size_t m_scanned = 0; // m_buffer[0, m_scanned) holds no '\n'
  std::size_t m_max = 0;
};

// Parent descriptor `parent_fd` becomes descriptor `child_fd` in the child.
struct FdMapping {
  int parent_fd;
  int child_fd;
};

enum class OtherFds : std::uint8_t {
  inherit = 0, // descriptors the parent holds without close-on-exec reach the child too
  close = 1,   // the child holds only the mapped descriptors (and 0-2 where not mapped)
};

enum class ProcessGroup : std::uint8_t {
  inherit = 0, // the child stays in the parent's group
  own = 1,     // the child leads a new group whose id is its pid (kill_group reaches helpers)
};

struct SpawnOptions {
  std::vector<std::string> argv;     // argv[0]: a path, or a name searched on env's PATH
  std::vector<std::string> env;      // the child's whole environment, "NAME=value"
  std::filesystem::path working_dir; // empty: the parent's
  std::vector<FdMapping> fds;        // unmapped 0, 1, 2 are the parent's
  OtherFds other_fds = OtherFds::inherit;
  ProcessGroup group = ProcessGroup::own;
  int parent_death_signal = 0; // PR_SET_PDEATHSIG: sent when the spawning thread ends; 0: none
  // A Landlock ruleset (util/read_confinement.hpp) the child restricts itself to before exec,
  // with no_new_privs; the parent keeps it open. -1: reads unconfined.
  int read_ruleset = -1;
};

// The current environment with `overrides` ("NAME=value" replaces or adds NAME; a bare "NAME"
// removes it), for SpawnOptions::env.
std::vector<std::string> environment_with(const std::vector<std::string>& overrides);

// This machine's name (gethostname), or "host" when it has none: what makes a fleet worker's
// or a run's id unique across hosts.
std::string host_name();

// Starts the process and returns its pid once it has exec'd. ErrorKind::subprocess when it
// could not be started, saying which step failed and why.
Expected<pid_t> spawn(const SpawnOptions& options);

// Blocks until `pid` ends (reaping it) and returns its wait status.
int reap(pid_t pid) noexcept;
// SIGKILL to the group `pid` leads: helpers that outlived it, or all of it.
void kill_group(pid_t pid) noexcept;
// SIGKILL to the group `pid` leads and to `pid` itself, then reap(pid).
int kill_group_and_reap(pid_t pid) noexcept;

} // namespace ptxbench::util
