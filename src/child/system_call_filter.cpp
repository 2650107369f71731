#include "child/system_call_filter.hpp"

#include "protocol/system_call_filter.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace ptxbench::child {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kArchitecture = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kArchitecture = AUDIT_ARCH_AARCH64;
#else
#error "the system-call filter knows x86_64 and aarch64"
#endif

#define PTXBENCH_CALL(name, condition, why)                                                        \
  AllowedSystemCall {                                                                              \
    SYS_##name, #name, condition, why                                                              \
  }

constexpr std::string_view kIo = "the protocol's pipes, the log, the driver's descriptors";
constexpr std::string_view kMemory = "allocation by the C library, Python and the CUDA driver";
constexpr std::string_view kThreads = "the driver's, CUPTI's and torch's threads and their locks";
constexpr std::string_view kClock = "clocks and sleeps of the driver, CUPTI and the timing code";
constexpr std::string_view kRead = "reading a file: late imports, the driver's /proc and /sys "
                                   "queries, the profiler's tables";
constexpr std::string_view kQuery = "queries of the process's own state, which change nothing";
constexpr std::string_view kSignals = "the C library's signal masks and handlers";

// Conditions, as docs/evaluation.md shows them.
constexpr std::string_view kReadOnly = "no write, create, truncate, append or temporary-file flag";
constexpr std::string_view kOwnProcess = "the target is this process";

const std::vector<AllowedSystemCall>& allow_list() {
  static const std::vector<AllowedSystemCall> list = {
    PTXBENCH_CALL(read, "", kIo),
    PTXBENCH_CALL(write, "", kIo),
    PTXBENCH_CALL(readv, "", kIo),
    PTXBENCH_CALL(writev, "", kIo),
    PTXBENCH_CALL(pread64, "", kIo),
    PTXBENCH_CALL(pwrite64, "", kIo),
    PTXBENCH_CALL(close, "", kIo),
    PTXBENCH_CALL(lseek, "", kIo),
    PTXBENCH_CALL(fcntl, "", kIo),
    PTXBENCH_CALL(dup, "", kIo),
    PTXBENCH_CALL(dup3, "", kIo),
    PTXBENCH_CALL(ioctl, "", "the CUDA driver's requests to /dev/nvidia*"),
    PTXBENCH_CALL(ppoll, "", kIo),
    PTXBENCH_CALL(pselect6, "", kIo),
    PTXBENCH_CALL(epoll_create1, "", kIo),
    PTXBENCH_CALL(epoll_ctl, "", kIo),
    PTXBENCH_CALL(epoll_pwait, "", kIo),
    PTXBENCH_CALL(eventfd2, "", kIo),
    PTXBENCH_CALL(pipe2, "", kIo),
    PTXBENCH_CALL(fstat, "", kRead),
    PTXBENCH_CALL(newfstatat, "", kRead),
    PTXBENCH_CALL(statx, "", kRead),
    PTXBENCH_CALL(faccessat, "", kRead),
    PTXBENCH_CALL(faccessat2, "", kRead),
    PTXBENCH_CALL(readlinkat, "", kRead),
    PTXBENCH_CALL(getdents64, "", kRead),
    PTXBENCH_CALL(getcwd, "", kRead),
    PTXBENCH_CALL(openat, kReadOnly, kRead),
    PTXBENCH_CALL(mmap, "", kMemory),
    PTXBENCH_CALL(munmap, "", kMemory),
    PTXBENCH_CALL(mremap, "", kMemory),
    PTXBENCH_CALL(mprotect, "", kMemory),
    PTXBENCH_CALL(madvise, "", kMemory),
    PTXBENCH_CALL(brk, "", kMemory),
    PTXBENCH_CALL(mincore, "", kMemory),
    PTXBENCH_CALL(get_mempolicy, "", "the driver's NUMA placement of pinned host memory"),
    PTXBENCH_CALL(mbind, "", "the driver's NUMA placement of pinned host memory"),
    PTXBENCH_CALL(membarrier, "", kThreads),
    PTXBENCH_CALL(futex, "", kThreads),
    PTXBENCH_CALL(set_robust_list, "", kThreads),
    PTXBENCH_CALL(rseq, "", kThreads),
    PTXBENCH_CALL(sched_yield, "", kThreads),
    PTXBENCH_CALL(sched_getaffinity, "", kThreads),
    PTXBENCH_CALL(sched_setaffinity, "", kThreads),
    PTXBENCH_CALL(sched_get_priority_max, "", kThreads),
    PTXBENCH_CALL(sched_get_priority_min, "", kThreads),
    PTXBENCH_CALL(sched_getparam, "", kThreads),
    PTXBENCH_CALL(sched_getscheduler, "", kThreads),
    PTXBENCH_CALL(clone, "CLONE_THREAD is set: a thread, never a process", kThreads),
    PTXBENCH_CALL(exit, "", kThreads),
    PTXBENCH_CALL(exit_group, "", "the child's own end"),
    PTXBENCH_CALL(nanosleep, "", kClock),
    PTXBENCH_CALL(clock_nanosleep, "", kClock),
    PTXBENCH_CALL(clock_gettime, "", kClock),
    PTXBENCH_CALL(clock_getres, "", kClock),
    PTXBENCH_CALL(gettimeofday, "", kClock),
    PTXBENCH_CALL(getpid, "", kQuery),
    PTXBENCH_CALL(gettid, "", kQuery),
    PTXBENCH_CALL(getppid, "", kQuery),
    PTXBENCH_CALL(getuid, "", kQuery),
    PTXBENCH_CALL(geteuid, "", kQuery),
    PTXBENCH_CALL(getgid, "", kQuery),
    PTXBENCH_CALL(getegid, "", kQuery),
    PTXBENCH_CALL(uname, "", kQuery),
    PTXBENCH_CALL(sysinfo, "", kQuery),
    PTXBENCH_CALL(getrusage, "", kQuery),
    PTXBENCH_CALL(prlimit64, "", kQuery),
    PTXBENCH_CALL(getrandom, "", kQuery),
    PTXBENCH_CALL(rt_sigprocmask, "", kSignals),
    PTXBENCH_CALL(rt_sigreturn, "", kSignals),
    PTXBENCH_CALL(sigaltstack, "", kSignals),
    PTXBENCH_CALL(restart_syscall, "", kSignals),
    PTXBENCH_CALL(rt_sigaction, "the signal is not SIGSYS (whose handler reports a refusal)",
                  kSignals),
    PTXBENCH_CALL(kill, kOwnProcess, "abort() and raise()"),
    PTXBENCH_CALL(tgkill, kOwnProcess, "abort() and raise()"),
    PTXBENCH_CALL(prctl, "PR_SET_NAME or PR_GET_NAME", "threads that name themselves"),
#if defined(__x86_64__)
    PTXBENCH_CALL(open, kReadOnly, kRead),
    PTXBENCH_CALL(stat, "", kRead),
    PTXBENCH_CALL(lstat, "", kRead),
    PTXBENCH_CALL(access, "", kRead),
    PTXBENCH_CALL(readlink, "", kRead),
    PTXBENCH_CALL(getdents, "", kRead),
    PTXBENCH_CALL(poll, "", kIo),
    PTXBENCH_CALL(select, "", kIo),
    PTXBENCH_CALL(dup2, "", kIo),
    PTXBENCH_CALL(pipe, "", kIo),
    PTXBENCH_CALL(epoll_wait, "", kIo),
    PTXBENCH_CALL(getrlimit, "", kQuery),
#endif
  };
  return list;
}

#undef PTXBENCH_CALL

// Names of refused calls worth naming in the log line (the allowed ones are named too).
struct Named {
  long number;
  const char* name;
};
#define PTXBENCH_NAME(name)                                                                        \
  Named {                                                                                          \
    SYS_##name, #name                                                                              \
  }
constexpr std::array kRefusedNames = {
    PTXBENCH_NAME(clone3),
    PTXBENCH_NAME(execve),
    PTXBENCH_NAME(execveat),
    PTXBENCH_NAME(socket),
    PTXBENCH_NAME(connect),
    PTXBENCH_NAME(bind),
    PTXBENCH_NAME(sendto),
    PTXBENCH_NAME(sendmsg),
    PTXBENCH_NAME(ptrace),
    PTXBENCH_NAME(process_vm_readv),
    PTXBENCH_NAME(process_vm_writev),
    PTXBENCH_NAME(unlinkat),
    PTXBENCH_NAME(renameat),
    PTXBENCH_NAME(renameat2),
    PTXBENCH_NAME(mkdirat),
    PTXBENCH_NAME(linkat),
    PTXBENCH_NAME(symlinkat),
    PTXBENCH_NAME(fchmodat),
    PTXBENCH_NAME(fchownat),
    PTXBENCH_NAME(truncate),
    PTXBENCH_NAME(ftruncate),
    PTXBENCH_NAME(openat2),
    PTXBENCH_NAME(memfd_create),
    PTXBENCH_NAME(seccomp),
    PTXBENCH_NAME(bpf),
    PTXBENCH_NAME(setsid),
    PTXBENCH_NAME(setpgid),
    PTXBENCH_NAME(pidfd_open),
    PTXBENCH_NAME(pidfd_getfd),
    PTXBENCH_NAME(tkill),
    PTXBENCH_NAME(mount),
    PTXBENCH_NAME(unshare),
    PTXBENCH_NAME(setns),
#if defined(__x86_64__)
    PTXBENCH_NAME(fork),
    PTXBENCH_NAME(vfork),
    PTXBENCH_NAME(creat),
    PTXBENCH_NAME(unlink),
    PTXBENCH_NAME(rename),
    PTXBENCH_NAME(mkdir),
    PTXBENCH_NAME(chmod),
#endif
};
#undef PTXBENCH_NAME

// The handler's lookup, async-signal-safe: a linear scan of static data.
const char* system_call_name(long number) {
  for (const AllowedSystemCall& call : allow_list())
    if (call.number == number)
      return call.name.data(); // the names are string literals, so NUL-terminated
  for (const Named& named : kRefusedNames)
    if (named.number == number)
      return named.name;
  return "an unnamed system call";
}

void append(char* line, std::size_t& used, std::size_t capacity, const char* text) {
  while (*text != '\0' && used + 1 < capacity)
    line[used++] = *text++;
}

void append_number(char* line, std::size_t& used, std::size_t capacity, long value) {
  char digits[24];
  int count = 0;
  auto rest = static_cast<unsigned long>(value < 0 ? -value : value);
  do {
    digits[count++] = static_cast<char>('0' + rest % 10);
    rest /= 10;
  } while (rest != 0 && count < 23);
  if (value < 0)
    digits[count++] = '-';
  while (count > 0 && used + 1 < capacity)
    line[used++] = digits[--count];
}

// SIGSYS from a refused call: one line to the log, then the child ends. Async-signal-safe.
void on_refused(int, siginfo_t* info, void*) {
  char line[256];
  std::size_t used = 0;
  append(line, used, sizeof line, protocol::kSystemCallRefusedPrefix.data());
  const long number = info->si_syscall;
  append(line, used, sizeof line, system_call_name(number));
  if (number == SYS_openat
#if defined(__x86_64__)
      || number == SYS_open
#endif
  )
    append(line, used, sizeof line, " for writing");
  if (number == SYS_clone)
    append(line, used, sizeof line, " for a new process");
  append(line, used, sizeof line, " (");
  append_number(line, used, sizeof line, number);
  append(line, used, sizeof line, ")\n");
  (void)!::write(STDERR_FILENO, line, used);
  ::syscall(SYS_exit_group, protocol::kSystemCallRefusedExit);
}

// The classic-BPF program; each allowed call is a comparison and a return, a conditional one a
// small block that ends in a return.
class Program {
public:
  void statement(std::uint16_t code, std::uint32_t k) { m_code.push_back(BPF_STMT(code, k)); }
  void jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    m_code.push_back(BPF_JUMP(code, k, jt, jf));
  }
  void load_number() { statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)); }
  // The low 32 bits of argument `index` (what the kernel reads for an int argument).
  void load_argument(int index) {
    statement(BPF_LD | BPF_W | BPF_ABS,
              static_cast<std::uint32_t>(offsetof(seccomp_data, args) +
                                         static_cast<std::size_t>(index) * sizeof(std::uint64_t)));
  }
  void ret(std::uint32_t action) { statement(BPF_RET | BPF_K, action); }
  // If the call is `number`, runs `block` (which must end in a return); else goes on.
  template <typename Block> void when(long number, std::uint8_t block_length, Block block) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(number), 0, block_length);
    const std::size_t before = m_code.size();
    block();
    if (m_code.size() - before != block_length)
      throw util::Fatal("system-call filter: a block's length is wrong");
  }
  std::vector<sock_filter> take() { return std::move(m_code); }

private:
  std::vector<sock_filter> m_code;
};

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t kRefuse = SECCOMP_RET_TRAP;
constexpr std::uint32_t kWriteFlags =
    O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | (O_TMPFILE & ~O_DIRECTORY);

// Allowed when the low word of argument `index` has none of `mask`'s bits (`expect_set`:
// has at least one).
void flags_block(Program& p, long number, int index, std::uint32_t mask, bool expect_set) {
  p.when(number, 4, [&] {
    p.load_argument(index);
    p.jump(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1);
    p.ret(expect_set ? kAllow : kRefuse);
    p.ret(expect_set ? kRefuse : kAllow);
  });
}

// Allowed when argument `index` equals (or, `equal` false, differs from) `value`.
void equals_block(Program& p, long number, int index, std::uint32_t value, bool equal) {
  p.when(number, 4, [&] {
    p.load_argument(index);
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1);
    p.ret(equal ? kAllow : kRefuse);
    p.ret(equal ? kRefuse : kAllow);
  });
}

std::vector<sock_filter> build(pid_t self) {
  Program p;
  p.statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, kArchitecture, 1, 0);
  p.ret(SECCOMP_RET_KILL_PROCESS);
  p.load_number();
#if defined(__x86_64__)
  p.jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1); // the x32 numbering
  p.ret(SECCOMP_RET_KILL_PROCESS);
#endif
  for (const AllowedSystemCall& call : allow_list()) {
    if (call.condition.empty()) {
      p.jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(call.number), 0, 1);
      p.ret(kAllow);
    } else if (call.number == SYS_openat) {
      flags_block(p, call.number, 2, kWriteFlags, false);
#if defined(__x86_64__)
    } else if (call.number == SYS_open) {
      flags_block(p, call.number, 1, kWriteFlags, false);
#endif
    } else if (call.number == SYS_clone) {
      flags_block(p, call.number, 0, CLONE_THREAD, true);
    } else if (call.number == SYS_kill || call.number == SYS_tgkill) {
      equals_block(p, call.number, 0, static_cast<std::uint32_t>(self), true);
    } else if (call.number == SYS_rt_sigaction) {
      equals_block(p, call.number, 0, SIGSYS, false);
    } else if (call.number == SYS_prctl) {
      p.when(call.number, 5, [&] {
        p.load_argument(0);
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NAME, 2, 0);
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, PR_GET_NAME, 1, 0);
        p.ret(kRefuse);
        p.ret(kAllow);
      });
    } else {
      throw util::Fatal("system-call filter: no block for the condition of " +
                        std::string(call.name));
    }
  }
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(SYS_clone3), 0, 1);
  p.ret(SECCOMP_RET_ERRNO | ENOSYS); // the C library then uses clone, whose flags BPF can read
  p.ret(kRefuse);
  return p.take();
}

// Without CAP_SYS_PTRACE a process cannot open another's /proc memory once that one is not
// dumpable (the supervisor, exec::Evaluator); a harness run as root would otherwise keep it.
util::Status drop_ptrace_capability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> data{};
  if (::syscall(SYS_capget, &header, data.data()) != 0)
    return util::make_error(util::ErrorKind::io,
                            std::string("cannot read capabilities: ") + std::strerror(errno));
  const auto bit = static_cast<std::uint32_t>(1U << (CAP_SYS_PTRACE % 32));
  auto& word = data[CAP_SYS_PTRACE / 32];
  word.effective &= ~bit;
  word.permitted &= ~bit;
  word.inheritable &= ~bit;
  if (::syscall(SYS_capset, &header, data.data()) != 0)
    return util::make_error(util::ErrorKind::io,
                            std::string("cannot drop CAP_SYS_PTRACE: ") + std::strerror(errno));
  return util::Ok{};
}

} // namespace

std::span<const AllowedSystemCall> allowed_system_calls() {
  return allow_list();
}

util::Status install_system_call_filter() {
  std::vector<sock_filter> code = build(::getpid());
  struct sigaction action {};
  action.sa_sigaction = on_refused;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (::sigaction(SIGSYS, &action, nullptr) != 0)
    return util::make_error(util::ErrorKind::io,
                            std::string("cannot handle SIGSYS: ") + std::strerror(errno));
  PTXBENCH_TRY(drop_ptrace_capability());
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return util::make_error(util::ErrorKind::io,
                            std::string("cannot set no_new_privs: ") + std::strerror(errno));
  sock_fprog program{static_cast<unsigned short>(code.size()), code.data()};
  const long result =
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
  if (result != 0)
    return util::make_error(util::ErrorKind::io,
                            result > 0 ? "cannot install the system-call filter: thread " +
                                             std::to_string(result) + " has another filter"
                                       : std::string("cannot install the system-call filter: ") +
                                             std::strerror(errno));
  return util::Ok{};
}

} // namespace ptxbench::child
