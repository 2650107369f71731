// spawn() and the helpers around a child's life; the descriptor and line I/O half of
// process.hpp is process_io.cpp. The essay is in process.hpp.
#include "util/process.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ptxbench::util {
namespace {

enum class ChildStep : int { fds = 1, working_dir = 2, exec = 3, confine = 4 };

// Everything the child needs, built before fork so that the child allocates nothing.
struct ChildPlan {
  std::vector<std::string> paths; // where argv[0] may be, in execvp's order
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<FdMapping> fds;
  std::vector<int> staged;  // one slot per mapping, filled in the child
  std::vector<int> kept;    // mapped child descriptors above 2, sorted, unique
  int floor = 3;            // staged copies go at or above every mapped descriptor
  unsigned fd_limit = 1024; // the loop bound where close_range is missing
  const char* working_dir = nullptr;
  OtherFds other_fds = OtherFds::inherit;
  bool own_group = true;
  int death_signal = 0;
  int read_ruleset = -1;
  pid_t parent = 0;
  int error_fd = -1;
};

std::string_view env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& entry : env)
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=')
      return std::string_view(entry).substr(name.size() + 1);
  return {};
}

// The paths execvp would try: argv[0] itself when it names a path, else each PATH entry.
std::vector<std::string> executable_paths(const std::string& name,
                                          const std::vector<std::string>& env) {
  if (name.find('/') != std::string::npos)
    return {name};
  if (name.empty())
    return {};
  std::string_view search = env_value(env, "PATH");
  if (search.empty())
    search = "/bin:/usr/bin";
  std::vector<std::string> paths;
  for (std::size_t start = 0; start <= search.size();) {
    const std::size_t end = std::min(search.find(':', start), search.size());
    const std::string_view dir = search.substr(start, end - start);
    paths.push_back((dir.empty() ? std::string(".") : std::string(dir)) + "/" + name);
    start = end + 1;
  }
  return paths;
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

unsigned open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 65536;
  return static_cast<unsigned>(std::min<rlim_t>(limit.rlim_cur, UINT_MAX));
}

ChildPlan make_plan(const SpawnOptions& options) {
  ChildPlan plan;
  plan.paths = executable_paths(options.argv[0], options.env);
  plan.argv = pointers(options.argv);
  plan.envp = pointers(options.env);
  plan.fds = options.fds;
  plan.staged.assign(plan.fds.size(), -1);
  for (const FdMapping& mapping : plan.fds) {
    if (mapping.child_fd > 2)
      plan.kept.push_back(mapping.child_fd);
    plan.floor = std::max(plan.floor, mapping.child_fd + 1);
  }
  std::sort(plan.kept.begin(), plan.kept.end());
  plan.kept.erase(std::unique(plan.kept.begin(), plan.kept.end()), plan.kept.end());
  plan.fd_limit = open_file_limit();
  if (!options.working_dir.empty())
    plan.working_dir = options.working_dir.c_str();
  plan.other_fds = options.other_fds;
  plan.own_group = options.group == ProcessGroup::own;
  plan.death_signal = options.parent_death_signal;
  plan.read_ruleset = options.read_ruleset;
  plan.parent = ::getpid();
  return plan;
}

// From here to the end of exec_child: runs in the forked child, async-signal-safe calls only.
[[noreturn]] void fail(int error_fd, ChildStep step, int error_number) noexcept {
  const int report[2] = {static_cast<int>(step), error_number};
  (void)!::write(error_fd, report, sizeof report);
  ::_exit(127);
}

bool map_fds(ChildPlan& plan) noexcept {
  for (std::size_t i = 0; i < plan.fds.size(); ++i) {
    plan.staged[i] = ::fcntl(plan.fds[i].parent_fd, F_DUPFD_CLOEXEC, plan.floor);
    if (plan.staged[i] < 0)
      return false;
  }
  for (std::size_t i = 0; i < plan.fds.size(); ++i)
    if (::dup2(plan.staged[i], plan.fds[i].child_fd) < 0)
      return false;
  return true;
}

// Closes [low, high]; where the kernel lacks close_range, one by one below the file limit.
void close_span(unsigned low, unsigned high, unsigned limit) noexcept {
  if (low > high)
    return;
  if (::close_range(low, high, 0) == 0)
    return;
  for (unsigned fd = low; fd <= high && fd < limit; ++fd)
    ::close(static_cast<int>(fd));
}

void close_other_fds(const ChildPlan& plan, int error_fd) noexcept {
  unsigned low = 3;
  for (int kept : plan.kept) {
    close_span(low, static_cast<unsigned>(kept) - 1, plan.fd_limit);
    low = static_cast<unsigned>(kept) + 1;
  }
  close_span(low, static_cast<unsigned>(error_fd) - 1, plan.fd_limit);
  close_span(static_cast<unsigned>(error_fd) + 1, ~0U, plan.fd_limit);
}

// Tries each path as execvp does: past a missing file or a refused one; EACCES wins at the end.
[[noreturn]] void exec_paths(const ChildPlan& plan, int error_fd) noexcept {
  int last = ENOENT;
  bool denied = false;
  for (const std::string& path : plan.paths) {
    ::execve(path.c_str(), plan.argv.data(), plan.envp.data());
    last = errno;
    if (last == EACCES)
      denied = true;
    else if (last != ENOENT && last != ENOTDIR)
      fail(error_fd, ChildStep::exec, last);
  }
  fail(error_fd, ChildStep::exec, denied ? EACCES : last);
}

[[noreturn]] void exec_child(ChildPlan& plan) noexcept {
  if (plan.own_group)
    ::setpgid(0, 0);
  if (plan.death_signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, plan.death_signal);
    if (::getppid() != plan.parent)
      ::_exit(127); // the parent died before prctl took hold
  }
  const int error_fd = ::fcntl(plan.error_fd, F_DUPFD_CLOEXEC, plan.floor);
  if (error_fd < 0)
    fail(plan.error_fd, ChildStep::fds, errno);
  // Before the descriptors move: the ruleset's may be a number that a mapping takes.
  if (plan.read_ruleset >= 0 && (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                                 ::syscall(SYS_landlock_restrict_self, plan.read_ruleset, 0) != 0))
    fail(error_fd, ChildStep::confine, errno);
  if (!map_fds(plan))
    fail(error_fd, ChildStep::fds, errno);
  if (plan.other_fds == OtherFds::close)
    close_other_fds(plan, error_fd);
  if (plan.working_dir != nullptr && ::chdir(plan.working_dir) != 0)
    fail(error_fd, ChildStep::working_dir, errno);
  exec_paths(plan, error_fd);
}

Error start_failure(const SpawnOptions& options, ChildStep step, int error_number) {
  const std::string program = "'" + options.argv[0] + "'";
  const std::string why = std::strerror(error_number);
  switch (step) {
  case ChildStep::fds:
    return make_error(ErrorKind::subprocess,
                      "cannot set up the descriptors of " + program + ": " + why);
  case ChildStep::working_dir:
    return make_error(ErrorKind::subprocess, "cannot enter '" + options.working_dir.string() +
                                                 "' to run " + program + ": " + why);
  case ChildStep::confine:
    return make_error(ErrorKind::subprocess,
                      "cannot confine the reads of " + program + " (Landlock): " + why);
  case ChildStep::exec:
    break;
  }
  return make_error(ErrorKind::subprocess, "cannot execute " + program + ": " + why);
}

// Waits for the child's exec: the error pipe closes unread then, or carries the failure.
Expected<pid_t> await_exec(pid_t pid, const Fd& errors, const SpawnOptions& options) {
  int report[2] = {0, 0};
  ssize_t n = 0;
  do {
    n = ::read(errors.get(), report, sizeof report);
  } while (n < 0 && errno == EINTR);
  if (n == 0)
    return pid;
  (void)kill_group_and_reap(pid);
  if (n != static_cast<ssize_t>(sizeof report))
    return make_error(ErrorKind::subprocess,
                      "cannot start '" + options.argv[0] + "': its start-up report was lost");
  return start_failure(options, static_cast<ChildStep>(report[0]), report[1]);
}

void set_entry(std::vector<std::string>& env, const std::string& entry) {
  const std::string name = entry.substr(0, entry.find('='));
  std::erase_if(env, [&](const std::string& old) {
    return old.size() > name.size() && old.compare(0, name.size(), name) == 0 &&
           old[name.size()] == '=';
  });
  if (entry.size() > name.size())
    env.push_back(entry);
}

} // namespace

std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
    env.emplace_back(*entry);
  for (const std::string& entry : overrides)
    set_entry(env, entry);
  return env;
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0' ? std::string(name) : "host";
}

Expected<pid_t> spawn(const SpawnOptions& options) {
  if (options.argv.empty())
    return make_error(ErrorKind::subprocess, "empty command line");
  ChildPlan plan = make_plan(options);
  if (plan.paths.empty())
    return start_failure(options, ChildStep::exec, ENOENT);
  PTXBENCH_TRY_ASSIGN(auto errors, make_pipe());
  plan.error_fd = errors.write.get();
  const pid_t pid = ::fork();
  if (pid < 0)
    return make_error(ErrorKind::subprocess, std::string("fork: ") + std::strerror(errno));
  if (pid == 0)
    exec_child(plan);
  errors.write.reset();
  return await_exec(pid, errors.read, options);
}

int reap(pid_t pid) noexcept {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void kill_group(pid_t pid) noexcept {
  if (pid > 0)
    ::kill(-pid, SIGKILL);
}

int kill_group_and_reap(pid_t pid) noexcept {
  if (pid <= 0)
    return 0;
  kill_group(pid);
  ::kill(pid, SIGKILL);
  return reap(pid);
}

} // namespace ptxbench::util
