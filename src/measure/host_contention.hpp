// How contended the host's CPUs were over an interval, from the kernel's own accounting.
//
// The supervisor's clock around a child's request (catalogue rows 9 and 10, exec/gpu_timing.cpp)
// also measures how long the supervisor and the child waited for a CPU. On a host busy with
// other work (concurrent compiles of an evaluation service, a trainer's data loaders) that wait
// is noise the wall-time bound must not mistake for a candidate's hidden work. Two figures say
// whether it was there, neither of which a candidate can lower:
//   - pressure stall information (/proc/pressure/cpu, "some"): the share of the interval's
//     wall time in which at least one runnable task of the machine (or of the cgroup, in a
//     container) waited for a CPU;
//   - the calling thread's run delay (/proc/thread-self/schedstat, second field): how long it
//     was runnable but not running.
// Either may be missing (a kernel without PSI or schedstats): then it is absent, never zero.
// The figures describe the host; nothing here excuses a call's wall time by them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxbench::measure {

struct CpuContention {
  double wall_ms = 0.0;
  std::optional<double> stall_share;  // PSI "some" stall time / wall time, 0..1
  std::optional<double> run_delay_ms; // the measuring thread's wait for a CPU
};

// Starts at construction; elapsed() reads the interval so far. Use it on one thread: the run
// delay is the constructing thread's.
class CpuContentionClock {
public:
  CpuContentionClock();
  CpuContention elapsed() const;

private:
  std::chrono::steady_clock::time_point m_start;
  std::optional<std::uint64_t> m_stall_us;
  std::optional<std::uint64_t> m_run_delay_ns;
};

// The "total=" of the "some" line of a /proc/pressure/* file (microseconds).
std::optional<std::uint64_t> psi_some_total_us(std::string_view text);
// The second field (run delay, nanoseconds) of a /proc/<pid>/task/<tid>/schedstat line.
std::optional<std::uint64_t> schedstat_run_delay_ns(std::string_view text);

} // namespace ptxbench::measure
