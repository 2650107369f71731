// Reading where cuda-gdb's batch run stopped. The transcript is GDB's own text (GNU gdb 13 and
// cuda-gdb 12–13 print it the same way), in this order for a kernel fault:
//
//   CUDA Exception: Warp Illegal Address
//   The exception was triggered at PC 0x7fffd3a5f630 (kernel.cu:42)      (file:line: -lineinfo)
//
//   Thread 1 "ptxbench-candid" received signal CUDA_EXCEPTION_14, Warp Illegal Address.
//   [Switching focus to CUDA kernel 0, grid 1, block (3,0,0), thread (32,0,0), device 0, sm 6,
//   warp 1, lane 0]                                                         (one line)
//   0x00007fffd3a5f640 in bad_kernel<<<(4,1,1),(128,1,1)>>> (out=0x0, n=512) at kernel.cu:42
//   42	  out[i] = 1.f;
//
// then what `info cuda kernels` and `bt` print ("#0  … <<<…>>> … at kernel.cu:42"). "Program
// received signal" is the older spelling of the stop line; a host fault has no focus line and
// a host frame ("run (a=0x…, n=3) at kernel.cu:88"); a frame whose PC starts a source line is
// printed without its address; a long frame may continue on a line of its own ("    at
// file:line"). A program that ends prints "[Inferior 1 (process N) exited normally]" or
// "… exited with code NN]" (octal). An exception of a warp is imprecise: the PC that triggered
// it, when printed, is the better location than the frame's, which may be a later instruction;
// the source text is kept only when it is of that line.
//
// Sources of the format: NVIDIA's CUDA-GDB manual ("GPU Error Reporting", "Kernel Focus",
// the walk-through examples), GDB's manual, and transcripts users posted of real faults;
// tests/data/measure/cuda_gdb_*.txt hold the cases the tests read.
#include "measure/cuda_gdb_report.hpp"

#include "util/strings.hpp"

#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

namespace ptxbench::measure {
namespace {

constexpr std::size_t kMaxSourceChars = 200;

struct Frame {
  std::string pc, function, kernel, launch, file;
  int line = 0;
};

int to_int(std::string_view digits, int base = 10) {
  int value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  return value;
}

// "file.cu:42" → file and line; false when it is not of that shape.
bool read_location(std::string_view text, std::string& file, int& line) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return false;
  const int number = to_int(text.substr(colon + 1));
  if (number <= 0)
    return false;
  file = std::string(text.substr(0, colon));
  line = number;
  return true;
}

// "[#N  ][0x… in ]function[<<<grid,block>>>] (args)[ at file:line]".
Frame parse_frame(std::string_view text) {
  Frame f;
  std::string_view s = util::trim(text);
  if (s.starts_with('#'))
    s = util::trim(s.substr(std::min(s.find(' '), s.size())));
  if (s.starts_with("0x")) {
    f.pc = std::string(s.substr(0, s.find(' ')));
    const auto in = s.find(" in ");
    s = in == std::string_view::npos ? std::string_view{} : s.substr(in + 4);
  }
  if (const auto at = s.rfind(" at "); at != std::string_view::npos) {
    if (read_location(util::trim(s.substr(at + 4)), f.file, f.line))
      s = s.substr(0, at);
  }
  if (const auto launch = s.find("<<<"); launch != std::string_view::npos) {
    const auto end = s.find(">>>", launch);
    std::string_view kernel = s.substr(0, launch);
    if (kernel.starts_with("void "))
      kernel.remove_prefix(5);
    f.kernel = std::string(kernel);
    f.launch = std::string(s.substr(launch, end == std::string_view::npos ? std::string_view::npos
                                                                          : end + 3 - launch));
    f.function = f.kernel;
    return f;
  }
  f.function = std::string(s.substr(0, s.find(" (")));
  return f;
}

// "… received signal CUDA_EXCEPTION_14, Warp Illegal Address." (or "terminated with signal").
bool read_signal(std::string_view line, DebuggerReport& r) {
  std::string_view rest;
  for (std::string_view marker : {"received signal ", "terminated with signal "})
    if (const auto at = line.find(marker); at != std::string_view::npos && rest.empty())
      rest = line.substr(at + marker.size());
  if (rest.empty())
    return false;
  const auto comma = rest.find(", ");
  r.signal = std::string(rest.substr(0, comma));
  if (comma != std::string_view::npos) {
    std::string_view name = rest.substr(comma + 2);
    if (name.ends_with('.'))
      name.remove_suffix(1);
    r.exception = std::string(name);
  }
  r.stop = r.signal.starts_with("CUDA_EXCEPTION") ? DebuggerStop::cuda_exception
                                                  : DebuggerStop::host_signal;
  return true;
}

// "[Inferior 1 (process 123) exited normally]" / "[Inferior 1 (process 123) exited with code 01]".
bool read_exit(std::string_view line, DebuggerReport& r) {
  if (!line.starts_with("[Inferior ") || line.find(") exited ") == std::string_view::npos)
    return false;
  r.stop = DebuggerStop::exited;
  constexpr std::string_view kCode = "exited with code ";
  if (const auto at = line.find(kCode); at != std::string_view::npos)
    r.exit_code = to_int(line.substr(at + kCode.size()), 8); // GDB prints it in octal
  return true;
}

// "[Switching focus to CUDA kernel 0, grid 1, block (3,0,0), thread (32,0,0), device 0, …]".
void read_focus(std::string_view line, DebuggerReport& r) {
  const auto group = [&](std::string_view marker) {
    const auto at = line.find(marker);
    if (at == std::string_view::npos)
      return std::string();
    const std::string_view rest = line.substr(at + marker.size() - 1);
    return std::string(rest.substr(0, rest.find(')') + 1));
  };
  r.block = group("block (");
  r.thread = group("thread (");
}

// "The exception was triggered at PC 0x7fffd3a5f630 (kernel.cu:42)"; the location only with
// line information.
void read_trigger(std::string_view line, DebuggerReport& r) {
  constexpr std::string_view kMarker = "triggered at PC ";
  const auto at = line.find(kMarker);
  if (at == std::string_view::npos || !r.pc.empty())
    return;
  const std::string_view rest = line.substr(at + kMarker.size());
  r.pc = std::string(rest.substr(0, rest.find(' ')));
  const auto open = rest.find('(');
  const auto close = rest.rfind(')');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open)
    read_location(rest.substr(open + 1, close - open - 1), r.file, r.line);
}

// Fills what the report still lacks from `f`: the stop's frame first, then the backtrace.
void take_frame(const Frame& f, DebuggerReport& r) {
  if (r.kernel.empty() && !f.kernel.empty()) {
    r.kernel = f.kernel;
    r.launch = f.launch;
  }
  if (r.function.empty())
    r.function = f.function;
  if (r.pc.empty())
    r.pc = f.pc;
  if (r.file.empty() && f.line > 0) {
    r.file = f.file;
    r.line = f.line;
  }
}

// The source text GDB prints after a frame ("42\t  out[i] = 1.f;"), when it is of `line`.
std::optional<std::string> source_text(std::string_view raw, int line) {
  const auto tab = raw.find('\t');
  if (line <= 0 || tab == std::string_view::npos || to_int(util::trim(raw.substr(0, tab))) != line)
    return std::nullopt;
  return std::string(util::trim(raw.substr(tab + 1)).substr(0, kMaxSourceChars));
}

// The frame that starts at lines[i], with a continuation line ("    at file:line") joined.
Frame frame_at(const std::vector<std::string>& lines, std::size_t& i) {
  std::string text = lines[i];
  if (i + 1 < lines.size() && util::trim(lines[i + 1]).starts_with("at "))
    text += " " + std::string(util::trim(lines[++i]));
  return parse_frame(text);
}

} // namespace

std::vector<std::string> cuda_gdb_command(const std::string& cuda_gdb,
                                          const std::vector<std::string>& app_argv) {
  // GDB's manual: --batch exits after the commands (with the inferior killed), disables
  // pagination and confirmation and makes the width unlimited (no wrapped frames); --nx reads
  // no .gdbinit / .cuda-gdbinit. The two `set` commands say the same where a build differs.
  // `startup-with-shell off` starts the program without /bin/sh, so its argv is passed as is.
  // CUDA-GDB's manual ("set cuda launch_blocking"): launches become synchronous, so the
  // exception stops the program inside the faulting launch. `set cuda api_failures` stays at
  // its default (a failed API call is reported and the program goes on): the kernel's own
  // exception is what stops it. `info cuda kernels` lists the kernels running at the stop;
  // `bt` is the backtrace of the thread in focus. After a normal exit both print nothing useful
  // ("No CUDA kernels.", "No stack.").
  std::vector<std::string> argv{cuda_gdb,
                                "--batch",
                                "--nx",
                                "-ex",
                                "set pagination off",
                                "-ex",
                                "set confirm off",
                                "-ex",
                                "set startup-with-shell off",
                                "-ex",
                                "set cuda launch_blocking on",
                                "-ex",
                                "run",
                                "-ex",
                                "info cuda kernels",
                                "-ex",
                                "bt",
                                "--args"};
  argv.insert(argv.end(), app_argv.begin(), app_argv.end());
  return argv;
}

DebuggerReport parse_cuda_gdb_output(std::string_view text) {
  DebuggerReport r;
  const std::vector<std::string> lines = util::split_lines(text);
  bool want_frame = false;  // after the stop line, before its frame
  bool want_source = false; // after the stop's frame
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = util::trim(lines[i]);
    if (i < kMaxDebuggerLogLines)
      r.log += lines[i] + "\n";
    if (line.empty())
      continue;
    read_trigger(line, r);
    if (line.starts_with("CUDA Exception: ") && r.exception.empty())
      r.exception = std::string(line.substr(16));
    if (r.stop == DebuggerStop::unknown) {
      want_frame = read_signal(line, r) && line.find("terminated") == std::string_view::npos;
      if (r.stop == DebuggerStop::unknown)
        read_exit(line, r);
      continue;
    }
    if (line.starts_with("[Switching focus to CUDA")) {
      read_focus(line, r);
    } else if (line.starts_with('#')) {
      take_frame(frame_at(lines, i), r);
      want_frame = want_source = false;
    } else if (want_frame && !line.starts_with('[') && !line.starts_with("(cuda-gdb)")) {
      take_frame(frame_at(lines, i), r);
      want_frame = false;
      want_source = true;
    } else if (want_source) {
      if (auto source = source_text(lines[i], r.line))
        r.source_line = std::move(*source);
      want_source = false;
    }
  }
  // A device trap (__trap(), a failed device assert) stops as SIGTRAP with the focus on a
  // CUDA thread: the kernel's stop, not the host's.
  if (r.stop == DebuggerStop::host_signal && !r.block.empty())
    r.stop = DebuggerStop::cuda_exception;
  return r;
}

std::string describe_stop(const DebuggerReport& r) {
  const std::string where =
      !r.file.empty()
          ? fmt::format(" at {}:{}", std::filesystem::path(r.file).filename().string(), r.line)
      : !r.pc.empty() ? " at PC " + r.pc
                      : std::string();
  const std::string source = r.source_line.empty() ? "" : ": `" + r.source_line + "`";
  switch (r.stop) {
  case DebuggerStop::unknown:
    return "";
  case DebuggerStop::exited:
    return r.exit_code == 0
               ? "the call completed under cuda-gdb: no exception"
               : fmt::format("the single-call process exited with status {} under cuda-gdb, "
                             "with no CUDA exception and no signal",
                             r.exit_code);
  case DebuggerStop::cuda_exception:
    return "cuda-gdb: " + (r.exception.empty() ? r.signal : r.exception) +
           (r.kernel.empty() ? "" : " in " + r.kernel) +
           (r.block.empty() ? "" : " block " + r.block) +
           (r.thread.empty() ? "" : " thread " + r.thread) + where + source;
  case DebuggerStop::host_signal:
    return "cuda-gdb: the host code received " + r.signal +
           (r.exception.empty() ? "" : " (" + r.exception + ")") +
           (r.function.empty() ? "" : " in " + r.function) + where + source;
  }
  return "";
}

} // namespace ptxbench::measure
