#include "exec/child_process.hpp"

#include "exec/child_reads.hpp"
#include "protocol/child_arguments.hpp"
#include "protocol/system_call_filter.hpp"
#include "util/descriptor_passing.hpp"

#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace ptxbench::exec {
namespace {

constexpr std::size_t kMaxReplyBytes = 16u << 20;
// The child's protocol descriptors; every other one above stderr is closed in it.
constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr int kBufferFd = 5;

// What the child's system-call filter refused, from the last refusal line of its log's tail:
// printable ASCII only (the candidate shares the log).
std::string refusal_in(const std::string& log_tail) {
  const std::size_t at = log_tail.rfind(protocol::kSystemCallRefusedPrefix);
  if (at == std::string::npos)
    return "a system call";
  std::string what;
  for (std::size_t i = at + protocol::kSystemCallRefusedPrefix.size();
       i < log_tail.size() && log_tail[i] != '\n' && what.size() < 120; ++i)
    if (log_tail[i] >= ' ' && log_tail[i] <= '~')
      what += log_tail[i];
  return what;
}

std::string describe_status(int status, const std::string& log_tail) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == protocol::kSystemCallRefusedExit)
    return "was ended by its system-call filter, which refused " + refusal_in(log_tail);
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
    return "was killed by SIGSYS: its system-call filter refused a call made with SIGSYS blocked";
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + ::strsignal(WTERMSIG(status));
  return "stopped";
}

util::SpawnOptions child_options(ChildCommand command, int log_fd, int stdin_fd, int request_fd,
                                 int reply_fd, int buffer_fd) {
  util::SpawnOptions options;
  options.argv = std::move(command.argv);
  options.env = util::environment_with(command.env);
  options.fds = {{stdin_fd, STDIN_FILENO}, {log_fd, STDOUT_FILENO}, {log_fd, STDERR_FILENO},
                 {request_fd, kRequestFd}, {reply_fd, kReplyFd},    {buffer_fd, kBufferFd}};
  options.other_fds = util::OtherFds::close;
  options.group = util::ProcessGroup::own;
  options.parent_death_signal = SIGKILL;
  return options;
}

} // namespace

util::Expected<CandidateProcess> CandidateProcess::start(const std::filesystem::path& binary,
                                                         int device,
                                                         const std::filesystem::path& log_path) {
  ChildLaunch launch;
  launch.paths.candidate_binary = binary;
  return start(launch, device, log_path);
}

util::Expected<CandidateProcess> CandidateProcess::start(const ChildLaunch& launch, int device,
                                                         const std::filesystem::path& log_path) {
  CandidateProcess process;
  ChildCommand command = child_command(launch, device, kRequestFd, kReplyFd, kBufferFd);
  util::Fd ruleset;
  if (!command.argv.empty() && command.argv.front() == launch.paths.candidate_binary.string()) {
    PTXBENCH_TRY_ASSIGN(auto folder,
                        util::TempFolder::make("ptxbench-child", "a child's kernel.so"));
    auto made = util::make_read_ruleset(child_reads(launch.paths.candidate_binary, folder.path()));
    if (made)
      ruleset = std::move(*made);
    else if (made.error().kind != util::ErrorKind::unsupported)
      return made.take_error();
    process.m_readable.emplace(std::move(folder));
    process.m_reads_confined = ruleset.valid();
  }
  PTXBENCH_TRY_ASSIGN(auto requests, util::make_pipe());
  PTXBENCH_TRY_ASSIGN(auto replies, util::make_pipe());
  PTXBENCH_TRY_ASSIGN(auto buffers, util::make_socket_pair());
  auto log = util::open_fd(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!log)
    return util::make_error(util::ErrorKind::io, "cannot create " + log_path.string());
  PTXBENCH_TRY_ASSIGN(auto input, util::open_fd("/dev/null", O_RDONLY));
  util::SpawnOptions options =
      child_options(std::move(command), log->get(), input.get(), requests.read.get(),
                    replies.write.get(), buffers.child.get());
  options.read_ruleset = ruleset.get();
  PTXBENCH_TRY_ASSIGN(auto pid, util::spawn(options));
  process.m_pid = pid;
  process.m_requests = std::move(requests.write);
  process.m_replies = util::LineReader(std::move(replies.read), kMaxReplyBytes);
  process.m_buffers = std::move(buffers.parent);
  process.m_log_path = log_path;
  return process;
}

CandidateProcess::CandidateProcess(CandidateProcess&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)), m_requests(std::move(other.m_requests)),
      m_replies(std::move(other.m_replies)), m_buffers(std::move(other.m_buffers)),
      m_log_path(std::move(other.m_log_path)), m_ids(other.m_ids),
      m_readable(std::move(other.m_readable)), m_reads_confined(other.m_reads_confined) {}

CandidateProcess& CandidateProcess::operator=(CandidateProcess&& other) noexcept {
  if (this != &other) {
    kill_group();
    m_pid = std::exchange(other.m_pid, -1);
    m_requests = std::move(other.m_requests);
    m_replies = std::move(other.m_replies);
    m_buffers = std::move(other.m_buffers);
    m_log_path = std::move(other.m_log_path);
    m_ids = other.m_ids;
    m_readable.reset(); // TempFolder moves only by construction
    if (other.m_readable)
      m_readable.emplace(std::move(*other.m_readable));
    other.m_readable.reset();
    m_reads_confined = other.m_reads_confined;
  }
  return *this;
}

CandidateProcess::~CandidateProcess() {
  kill_group();
  close_fds();
}

void CandidateProcess::kill_group() noexcept {
  if (m_pid <= 0)
    return;
  (void)util::kill_group_and_reap(m_pid);
  m_pid = -1;
}

void CandidateProcess::close_fds() noexcept {
  m_requests.reset();
  m_replies.close();
  m_buffers.reset();
}

util::Status CandidateProcess::send_descriptors(const std::vector<util::Fd>& descriptors) {
  std::vector<int> numbers;
  for (const util::Fd& descriptor : descriptors)
    numbers.push_back(descriptor.get());
  if (numbers.empty())
    return util::Ok{};
  return util::send_descriptors(m_buffers.get(), numbers);
}

util::Error CandidateProcess::died(std::string_view during) {
  // The reply pipe closed: the child is gone or going; reap it (kill in case it lingers).
  int status = 0;
  pid_t reaped = 0;
  for (int attempt = 0; attempt < 200 && reaped == 0; ++attempt) {
    reaped = ::waitpid(m_pid, &status, WNOHANG);
    if (reaped == 0)
      ::usleep(10'000);
  }
  std::string how = reaped == m_pid ? describe_status(status, log_tail()) : "closed its reply pipe";
  if (reaped == m_pid) {
    util::kill_group(m_pid); // helpers it may have left behind
    m_pid = -1;
  } else {
    kill_group();
  }
  close_fds();
  return util::make_error(util::ErrorKind::subprocess,
                          "the candidate process " + how + " during " + std::string(during));
}

// A reply line that did not come: the deadline passed, the line was too long, or the pipe
// closed (the child died).
util::Error CandidateProcess::unanswered(const util::Error& read_error, std::string_view op,
                                         std::chrono::milliseconds deadline) {
  switch (read_error.kind) {
  case util::ErrorKind::timeout:
    kill_group();
    close_fds();
    return util::make_error(util::ErrorKind::timeout, "the candidate did not answer `" +
                                                          std::string(op) + "` within " +
                                                          std::to_string(deadline.count()) +
                                                          " ms; its process group was killed");
  case util::ErrorKind::bad_response:
    return util::make_error(util::ErrorKind::bad_response, "oversized reply from the candidate");
  default:
    return died(op);
  }
}

util::Expected<protocol::Reply> CandidateProcess::request(const protocol::Request& request,
                                                          std::chrono::milliseconds deadline) {
  const std::string_view op = to_string(request.op);
  if (m_pid <= 0)
    return util::make_error(util::ErrorKind::subprocess, "the candidate process is gone");
  if (m_replies.buffered_bytes() > 0)
    return util::make_error(util::ErrorKind::bad_response,
                            "a line no request asked for was left on the reply channel before `" +
                                std::string(op) + "`: only the harness may write there");
  protocol::Request sent = request;
  if (request.op == protocol::RequestOp::load && m_readable) {
    PTXBENCH_TRY_ASSIGN(sent, through_own_folder(request));
  }
  sent.id = m_ids();
  if (!util::write_all(m_requests.get(), encode(sent) + "\n"))
    return died(op);
  auto line = m_replies.read_line(std::chrono::steady_clock::now() + deadline);
  if (!line)
    return unanswered(line.error(), op, deadline);
  auto reply = protocol::decode_reply(*line);
  if (reply && reply->id != sent.id)
    return util::make_error(util::ErrorKind::bad_response,
                            "the reply to `" + std::string(op) +
                                "` carries another request's id: something other than the "
                                "harness wrote to the reply channel");
  return reply;
}

util::Expected<protocol::Request>
CandidateProcess::through_own_folder(protocol::Request request) const {
  const std::filesystem::path own = m_readable->path() / "kernel.so";
  std::error_code ec;
  std::filesystem::remove(own, ec);
  std::filesystem::create_hard_link(request.library, own, ec);
  if (ec && !std::filesystem::copy_file(request.library, own, ec))
    return util::make_error(util::ErrorKind::io, "cannot copy " + request.library + " into " +
                                                     m_readable->path().string() + ": " +
                                                     ec.message());
  request.library = own.string();
  return request;
}

bool CandidateProcess::exited() {
  if (m_pid <= 0)
    return true;
  int status = 0;
  if (::waitpid(m_pid, &status, WNOHANG) != m_pid)
    return false;
  util::kill_group(m_pid); // helpers it may have left behind
  m_pid = -1;
  close_fds();
  return true;
}

void CandidateProcess::stop() {
  if (m_pid > 0) {
    protocol::Request exit_request;
    exit_request.op = protocol::RequestOp::exit;
    (void)request(exit_request, std::chrono::milliseconds(2000));
  }
  kill_group();
  close_fds();
}

std::string CandidateProcess::log_tail(std::size_t max_bytes) const {
  std::ifstream in(m_log_path, std::ios::binary);
  if (!in)
    return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return start > 0 ? "[...]\n" + text : text;
}

} // namespace ptxbench::exec
