// The candidate child's system-call filter (seccomp-bpf).
//
// Problem: candidate code runs inside the child with every right of the harness's user. The
// import rule on kernel.so and the Triton gate read what the code names, but code can reach
// libc without importing it (functions resolved from memory, an inline `syscall` instruction)
// and write the compile cache or a cached reference latency, start processes, signal or trace
// another process of the same user (the supervisor, a spare child), or make itself dumpable again.
//
// Approach: once the child has done what needs the wider world (the driver, CUPTI and the
// context are up; a Triton host has compiled and autotuned), it installs a classic-BPF allow-list
// on every one of its threads (TSYNC: the driver's and CUPTI's threads too) with no new
// privileges. What the CUDA driver, CUPTI, the protocol, a thread library and Python need while
// a candidate is called is allowed; a file is opened only without write, create, truncate or
// append flags; a clone must make a thread (clone3, whose flags BPF cannot read, answers ENOSYS
// so the C library falls back to clone); signals go only to this process; SIGSYS's handler
// cannot be replaced; prctl is allowed only for thread names. Everything else is refused: the
// call does not happen, and the child writes one line naming it to its log and exits with
// protocol::kSystemCallRefusedExit, which the supervisor reports as a RUNTIME_ERROR.
//
// Opening a file read-only stays allowed (the driver, the profiler and Python read files), so
// another process's /proc/<pid>/mem is kept out otherwise. The kernel lets a process open it
// only with CAP_SYS_PTRACE, or when its capabilities cover the other's and the other is
// dumpable; so the child drops CAP_SYS_PTRACE first (a harness run as root keeps every other
// capability: the profiler may need them), and the supervisor, which holds the secret seed and
// the check pattern, makes itself not dumpable (exec::Evaluator).
//
// Invariants: the filter cannot be removed or loosened (seccomp filters only stack, and a
// stacked filter can only refuse more); a thread that blocks SIGSYS still dies of it (the kernel
// forces the signal); a foreign architecture's system-call numbering is killed outright.
// docs/evaluation.md ("The child's system calls") lists the allow-list with why each entry is
// there; `allowed_system_calls()` is that list as data.
#pragma once

#include "util/error.hpp"

#include <span>
#include <string_view>

namespace ptxbench::child {

// One entry of the allow-list: a call (its name as the kernel's tables spell it), the
// condition on its arguments (empty: none), and why the child needs it.
struct AllowedSystemCall {
  long number;
  std::string_view name;
  std::string_view condition;
  std::string_view why;
};

// The allow-list on this architecture.
std::span<const AllowedSystemCall> allowed_system_calls();

// Installs the filter on every thread of this process; irreversible. Fails (and changes
// nothing a caller relies on) when the kernel refuses it.
util::Status install_system_call_filter();

} // namespace ptxbench::child
