// The external-tool passes of an evaluation: compute-sanitizer memcheck (--sanitize), the
// paper's Nsight Compute source-counter audit (--audit ncu) and cuda-gdb (--debug).
// docs/evaluation.md has the contract; this header has the pieces the evaluator strings together.
//
// Problem. Each tool must start the process that runs the candidate, instrument it (memcheck
// patches every memory access; ncu replays the whole application once per counter pass), and
// report in text meant for people. Neither may disturb the main pass's measurements, and a
// missing or failing tool must not be mistaken for a verdict about the candidate.
//
// Approach. After the main child has ended, the supervisor writes a single-call spec (the
// `load` request of input set 0 without IPC handles) and the raw bytes of set 0's inputs into
// a private scratch folder, and runs `TOOL … ptxbench-candidate --single-call SPEC --inputs
// FILE` (candidate_single_call.cpp; a Triton candidate's own child with the same words) under a
// deadline that kills the process group. The sanitizer's first error (kernel, file:line,
// address) becomes one sentence, the finding; the ncu source page's rows are summed per row of
// the architecture's counter table (sass/counters.hpp: a row's opcodes) and compared, row by
// row, with the row's metric in the in-process range-profiler counts of the same call on the
// same set; where cuda-gdb stopped the call (a CUDA exception, a host signal, or its end)
// becomes one sentence.
//
// Invariants. Only a memcheck error changes the verdict (RUNTIME_ERROR with the finding as the
// message); a tool that is missing, fails or passes its deadline leaves `ran == false` with the
// reason. The debugger pass never changes the verdict: it is evidence for a crash the main pass
// has already called RUNTIME_ERROR. Counts of an `exact` row agree only when they are equal;
// there is no tolerance for executed instruction counts of a deterministic call. A `presence` row
// (another counting rule, or never compared on its GPU) agrees when both are zero or both not.
#pragma once

#include "exec/buffers.hpp"
#include "exec/child_command.hpp"
#include "exec/evaluation.hpp"
#include "protocol/child_arguments.hpp"
#include "protocol/counts.hpp"
#include "sass/counters.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::exec {

inline constexpr std::string_view kAuditNvtxRange = "ptxbench_eval";

// The two files of a single-call run in a scratch folder that is removed with this object.
class SingleCallFiles {
public:
  // Writes the spec (library, signature, a Triton candidate's binding, set 0's layout, scalars,
  // var axes) and set 0's inputs.
  static util::Expected<SingleCallFiles> write(const EvalBuffers& buffers,
                                               const std::filesystem::path& library,
                                               const std::string& signature, int device,
                                               const std::string& binding = {});
  SingleCallFiles(SingleCallFiles&& other) noexcept;
  SingleCallFiles& operator=(SingleCallFiles&&) = delete;
  SingleCallFiles(const SingleCallFiles&) = delete;
  ~SingleCallFiles();

  // `candidate --device D --single-call SPEC --inputs FILE [--nvtx-range R] [--warmup N]`
  // (protocol/child_arguments.hpp), D the device the files were written for.
  std::vector<std::string> argv(const std::filesystem::path& candidate,
                                const protocol::SingleCallOptions& options) const;

private:
  SingleCallFiles() = default;
  std::filesystem::path m_dir;
  int m_device = 0;
};

// `name` on PATH, else under /usr/local/cuda/bin; empty when neither has it.
std::filesystem::path find_cuda_tool(const std::string& name);

// Pure: the sanitizer pass from the finished compute-sanitizer process (its stdout carries the
// candidate's single-call reply line as well as the sanitizer's report).
SanitizerPass sanitizer_pass_from(const util::ProcessResult& process);

// Pure: "compute-sanitizer memcheck: <headline> in <kernel> at <file>:<line> (<detail>)".
std::string describe_finding(const measure::SanitizerReport& report);

// Pure: the debugger pass from the finished cuda-gdb process (its stdout carries the
// candidate's single-call reply line as well as the debugger's transcript).
DebuggerPass debugger_pass_from(const util::ProcessResult& process);

// Pure: fills `pass.counts` and the agreement, row by row of the evaluation's counter table
// (`table`, nullptr when its architecture has none), from the audit's source page and the
// in-process counts of the count pass (nullopt when it did not run).
void compare_counts(NcuAuditPass& pass, const sass::ArchCounters* table,
                    const std::optional<protocol::Counts>& in_process);

// compute-sanitizer memcheck over the single-call child `child` (its argv and environment:
// child_command.hpp, from SingleCallFiles::argv).
SanitizerPass run_sanitizer_pass(util::ProcessRunner& runner, const ChildCommand& child,
                                 std::chrono::milliseconds timeout);

// cuda-gdb in batch mode (measure::cuda_gdb_command) over the single-call child `child`;
// `cuda_gdb` is find_cuda_tool("cuda-gdb"), empty when it is not installed.
DebuggerPass run_debugger_pass(util::ProcessRunner& runner, const ChildCommand& child,
                               std::chrono::milliseconds timeout,
                               const std::filesystem::path& cuda_gdb);

// ncu over the single-call child `child` (its argv from SingleCallFiles::argv with
// audit_call_options(), and its environment), replaying as `replay` says; `ncu` is
// find_cuda_tool("ncu"), empty when it is not installed.
NcuAuditPass run_ncu_audit_pass(util::ProcessRunner& runner, const ChildCommand& child,
                                measure::NcuReplay replay, std::chrono::milliseconds timeout,
                                const std::filesystem::path& ncu);

// The single-call options of the audit: the NVTX range ncu selects, one warm-up call outside it.
protocol::SingleCallOptions audit_call_options();

// The passes as `evaluation.ptxbench.sanitizer` / `.ncu_audit` / `.debugger` JSON and as text
// lines.
trace::Json to_json(const SanitizerPass& pass);
trace::Json to_json(const NcuAuditPass& pass);
trace::Json to_json(const DebuggerPass& pass);
// Where a sanitizer finding is printed: on the sanitizer line, or already as the evaluation's
// status message (the finding made the verdict), in which case the line refers to it.
enum class FindingLine : std::uint8_t { sanitizer = 1, status = 2 };
std::string render_text(const SanitizerPass& pass, FindingLine finding = FindingLine::sanitizer);
std::string render_text(const NcuAuditPass& pass);
std::string render_text(const DebuggerPass& pass);

} // namespace ptxbench::exec
