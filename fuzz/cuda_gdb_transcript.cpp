// cuda-gdb's batch transcript (untrusted bytes: the candidate's own output is interleaved with
// the debugger's, so it can print anything, a forged stop line included). Invariants beyond "no
// crash, no exception": an unknown stop describes as nothing and any other as a sentence; the
// kept log is at most kMaxDebuggerLogLines lines; a line number is set only with a file.
#include "measure/cuda_gdb_report.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptxbench::measure;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const DebuggerReport report = parse_cuda_gdb_output(text);
  const std::string sentence = describe_stop(report);
  if ((report.stop == DebuggerStop::unknown) != sentence.empty())
    std::abort();
  if (static_cast<std::size_t>(std::count(report.log.begin(), report.log.end(), '\n')) >
      kMaxDebuggerLogLines)
    std::abort();
  if (report.line != 0 && report.file.empty())
    std::abort();
  return 0;
}
