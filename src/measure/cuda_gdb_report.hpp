// cuda-gdb in batch mode around a program that crashes: where did it stop — which CUDA
// exception in which kernel, block, thread and source line, or which host signal in which host
// frame — or did it run to its end? docs/evaluation.md "The debugger pass" has the contract.
#pragma once

#include "util/enum_table.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::measure {

// How the debugged program stopped, as cuda-gdb printed it. Persisted in JSON: explicit values.
enum class DebuggerStop : std::uint8_t {
  unknown = 1,        // no stop and no exit line: cuda-gdb's own run failed
  cuda_exception = 2, // "… received signal CUDA_EXCEPTION_14, Warp Illegal Address.", or a
                      // SIGTRAP whose focus is a CUDA thread (a device trap or assert)
  host_signal = 3,    // "… received signal SIGSEGV, Segmentation fault." (host code)
  exited = 4,         // "[Inferior 1 (process N) exited normally]" / "… exited with code 01]"
};

struct DebuggerStopInfo {
  DebuggerStop stop;
  std::string_view name;
};

inline constexpr std::array kDebuggerStops{
    DebuggerStopInfo{DebuggerStop::unknown, "unknown"},
    DebuggerStopInfo{DebuggerStop::cuda_exception, "cuda_exception"},
    DebuggerStopInfo{DebuggerStop::host_signal, "host_signal"},
    DebuggerStopInfo{DebuggerStop::exited, "exited"},
};

consteval bool debugger_stops_complete() {
  for (std::size_t i = 0; i < kDebuggerStops.size(); ++i)
    if (static_cast<std::size_t>(kDebuggerStops[i].stop) != i + 1)
      return false;
  return true;
}
static_assert(debugger_stops_complete(), "kDebuggerStops must list every stop in value order");
static_assert(util::no_enumerator_after<DebuggerStop, kDebuggerStops.size()>(),
              "kDebuggerStops lacks a row for an enumerator after its last");

constexpr std::string_view to_string(DebuggerStop stop) {
  return kDebuggerStops[static_cast<std::size_t>(stop) - 1].name;
}

struct DebuggerReport {
  DebuggerStop stop = DebuggerStop::unknown;
  std::string signal;    // "CUDA_EXCEPTION_14", "SIGSEGV"
  std::string exception; // "Warp Illegal Address", "Segmentation fault"
  // The kernel: the frame printed with its launch, "bad_kernel<<<(4,1,1),(128,1,1)>>>".
  std::string kernel;   // "bad_kernel" ("void " and the launch left out); empty for a host stop
  std::string launch;   // "<<<(4,1,1),(128,1,1)>>>"
  std::string block;    // "(3,0,0)", from the focus line
  std::string thread;   // "(32,0,0)"
  std::string function; // the innermost frame's function: the kernel, an inlined device
                        // function, or the host function that received the signal
  std::string file;     // as printed (a path); empty without line information
  int line = 0;
  std::string source_line; // the text of that line as cuda-gdb printed it after the frame
  std::string pc;          // "0x…": where the exception was triggered, else the frame's address
  int exit_code = 0;       // when exited
  std::string log;         // the transcript's first lines (kMaxDebuggerLogLines)
};

inline constexpr std::size_t kMaxDebuggerLogLines = 80;

// `cuda-gdb --batch --nx -ex 'set pagination off' -ex 'set confirm off' -ex 'set
// startup-with-shell off' -ex 'set cuda launch_blocking on' -ex run -ex 'info cuda kernels'
// -ex bt --args argv…` (cuda_gdb_report.cpp says what each option is for).
std::vector<std::string> cuda_gdb_command(const std::string& cuda_gdb,
                                          const std::vector<std::string>& app_argv);

// Pure: the stop from cuda-gdb's output (stdout and stderr together).
DebuggerReport parse_cuda_gdb_output(std::string_view text);

// Pure: the stop as one sentence ("cuda-gdb: Warp Illegal Address in bad_kernel block (3,0,0)
// thread (32,0,0) at kernel.cu:42: `out[i] = 1.f;`"); empty for an unknown stop.
std::string describe_stop(const DebuggerReport& report);

} // namespace ptxbench::measure
