// The supervisor's handle on one `ptxbench-candidate` process (protocol.hpp).
//
// The child is started by util::spawn (process.hpp) in a process group of its own, with
// PR_SET_PDEATHSIG(SIGKILL) so it never outlives the supervisor; its stdout and stderr go to a
// log file (read back only as text for the log, never parsed), and two pipes carry the
// protocol. Every request has a deadline: when it passes, the whole group is SIGKILLed and
// reaped and the request fails with ErrorKind::timeout; when the child dies first, the request
// fails with ErrorKind::subprocess and says how it died. A dead or killed child is never
// reused; the destructor kills and reaps whatever is left.
//
// Only the server writes the reply pipe, one line per request, carrying back the request's
// random id. A reply with another id, or any byte left over once a reply is read, was written
// by something else in the child (a candidate forging a reply, peers-and-cheats.md §2 class 10)
// and fails the request as ErrorKind::bad_response.
//
// A `ptxbench-candidate` child (not a host such as Python's) may read only what child_reads.hpp
// allows, from its first instruction; its kernel.so reaches it through a folder of its own (the
// load request's library is linked or copied there). Where the kernel has no Landlock it runs
// unconfined and reads_confined() says so.
#pragma once

#include "exec/child_command.hpp"
#include "protocol/protocol.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/temp_folder.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <sys/types.h>

namespace ptxbench::exec {

class CandidateProcess {
public:
  // `device`: the CUDA device the child creates its context on (its `--device`); `launch`
  // says which child: its candidate's, or a spare ptxbench-candidate (child_command.hpp).
  static util::Expected<CandidateProcess> start(const ChildLaunch& launch, int device,
                                                const std::filesystem::path& log_path);
  // A spare child, `binary` being ptxbench-candidate.
  static util::Expected<CandidateProcess> start(const std::filesystem::path& binary, int device,
                                                const std::filesystem::path& log_path);
  CandidateProcess(CandidateProcess&& other) noexcept;
  CandidateProcess& operator=(CandidateProcess&& other) noexcept;
  CandidateProcess(const CandidateProcess&) = delete;
  CandidateProcess& operator=(const CandidateProcess&) = delete;
  ~CandidateProcess();

  // Sends one request and waits for its reply until `deadline` has passed.
  util::Expected<protocol::Reply> request(const protocol::Request& request,
                                          std::chrono::milliseconds deadline);
  // Sends the call slot's descriptors on the child's buffer socket, before the request whose
  // handles name them (protocol::BufferHandle::span). ErrorKind::io when the child is gone.
  util::Status send_descriptors(const std::vector<util::Fd>& descriptors);
  // Asks politely (exit, short deadline), then kills the group; idempotent.
  void stop();
  bool alive() const { return m_pid > 0; }
  // Whether the process has ended (reaps it if so; never blocks).
  bool exited();
  pid_t pid() const { return m_pid; }
  // The last `max_bytes` of what the child printed.
  std::string log_tail(std::size_t max_bytes = 4096) const;
  // Whether its reads are confined (a ptxbench-candidate child on a kernel with Landlock).
  bool reads_confined() const { return m_reads_confined; }

private:
  CandidateProcess() = default;
  util::Error died(std::string_view during);
  util::Error unanswered(const util::Error& read_error, std::string_view op,
                         std::chrono::milliseconds deadline);
  void kill_group() noexcept;
  void close_fds() noexcept;
  // The load request as sent: its library linked or copied into the child's own folder.
  util::Expected<protocol::Request> through_own_folder(protocol::Request request) const;

  pid_t m_pid = -1;
  util::Fd m_requests;
  util::LineReader m_replies;
  util::Fd m_buffers; // our end of the buffer socket
  std::filesystem::path m_log_path;
  std::mt19937_64 m_ids{std::random_device{}()};
  std::optional<util::TempFolder> m_readable; // a ptxbench-candidate child's own folder
  bool m_reads_confined = false;
};

} // namespace ptxbench::exec
