#include "exec/tool_passes.hpp"

#include "util/strings.hpp"

#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <unistd.h>
#include <utility>

namespace ptxbench::exec {
namespace {

std::string seconds_text(std::chrono::milliseconds ms) {
  return fmt::format("{:.0f} s", static_cast<double>(ms.count()) / 1000.0);
}

std::string process_end(const util::ProcessResult& process) {
  if (process.signaled)
    return fmt::format("was killed by signal {}", process.term_signal);
  return fmt::format("exited with status {}", process.exit_code);
}

// The last single-call reply line in `out`, decoded.
std::optional<protocol::Reply> single_call_reply(const std::string& out) {
  std::optional<protocol::Reply> found;
  for (const std::string& line : util::split_lines(out)) {
    const auto at = line.find(protocol::kSingleCallReplyPrefix);
    if (at == std::string::npos)
      continue;
    if (auto reply = protocol::decode_reply(
            std::string_view(line).substr(at + protocol::kSingleCallReplyPrefix.size())))
      found = std::move(*reply);
  }
  return found;
}

// `argv` (a tool over the single-call child `child`) with the child's environment, under
// `timeout` (the process group is killed then): the finished process, or why there is none.
util::Expected<util::ProcessResult> run_tool(util::ProcessRunner& runner, std::string_view tool,
                                             const std::vector<std::string>& argv,
                                             const ChildCommand& child,
                                             std::chrono::milliseconds timeout,
                                             std::size_t max_output_bytes) {
  util::ProcessOptions process;
  process.timeout = timeout;
  process.extra_env = child.env;
  process.max_output_bytes = max_output_bytes;
  PTXBENCH_TRY_ASSIGN(auto result, runner.run(argv, process));
  if (result.timed_out)
    return util::make_error(
        util::ErrorKind::timeout,
        fmt::format("{} passed its deadline of {}; its process group was killed", tool,
                    seconds_text(timeout)));
  return result;
}

} // namespace

util::Expected<SingleCallFiles> SingleCallFiles::write(const EvalBuffers& buffers,
                                                       const std::filesystem::path& library,
                                                       const std::string& signature, int device,
                                                       const std::string& binding) {
  static std::atomic<int> counter{0};
  SingleCallFiles files;
  files.m_device = device;
  files.m_dir = std::filesystem::temp_directory_path() /
                fmt::format("ptxbench-single-call-{}-{}", ::getpid(), counter++);
  std::error_code error;
  std::filesystem::create_directories(files.m_dir, error);
  std::filesystem::permissions(files.m_dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, error);
  if (error)
    return util::make_error(util::ErrorKind::io, "cannot create " + files.m_dir.string());
  protocol::Request spec;
  spec.op = protocol::RequestOp::load;
  spec.library = library.string();
  spec.signature = signature;
  spec.binding = binding;
  spec.sets = {buffers.layout()};
  spec.scalars = buffers.scalar_bits();
  spec.var_axes = buffers.var_axes();
  std::ofstream(files.m_dir / "spec.json") << encode(spec) << "\n";
  std::ofstream inputs(files.m_dir / "inputs.bin", std::ios::binary);
  PTXBENCH_TRY(buffers.write_inputs(0, inputs));
  if (!inputs.flush())
    return util::make_error(util::ErrorKind::io, "cannot write inputs.bin");
  return files;
}

SingleCallFiles::SingleCallFiles(SingleCallFiles&& other) noexcept
    : m_dir(std::exchange(other.m_dir, {})) {}

SingleCallFiles::~SingleCallFiles() {
  std::error_code error;
  if (!m_dir.empty())
    std::filesystem::remove_all(m_dir, error);
}

std::vector<std::string> SingleCallFiles::argv(const std::filesystem::path& candidate,
                                               const protocol::SingleCallOptions& options) const {
  return protocol::single_call_argv(candidate, m_device, m_dir / "spec.json", m_dir / "inputs.bin",
                                    options);
}

std::filesystem::path find_cuda_tool(const std::string& name) {
  if (auto on_path = util::find_on_path(name); !on_path.empty())
    return on_path;
  const std::filesystem::path fallback = std::filesystem::path("/usr/local/cuda/bin") / name;
  return ::access(fallback.c_str(), X_OK) == 0 ? fallback : std::filesystem::path{};
}

// "37 errors in all: 32 memory errors, then 5 CUDA API calls that failed".
std::string error_count_text(const measure::SanitizerReport& report) {
  std::string out = fmt::format("{} errors in all", report.error_count);
  if (report.printed_errors < report.error_count || report.api_errors == 0)
    return out;
  const std::size_t memory = report.printed_errors - report.api_errors;
  return out + fmt::format(": {} memory error{}, then {} CUDA API call{} that failed", memory,
                           memory == 1 ? "" : "s", report.api_errors,
                           report.api_errors == 1 ? "" : "s");
}

std::string describe_finding(const measure::SanitizerReport& report) {
  if (!report.first_error)
    return "";
  const measure::SanitizerError& e = *report.first_error;
  std::string out = "compute-sanitizer memcheck: " + e.kind;
  if (!e.kernel.empty())
    out += " in " + e.kernel;
  if (!e.file.empty())
    out += fmt::format(" at {}:{}", std::filesystem::path(e.file).filename().string(), e.line);
  if (!e.detail.empty())
    out += " (" + e.detail + ")";
  if (report.error_count > 1)
    out += "; " + error_count_text(report);
  return out;
}

SanitizerPass sanitizer_pass_from(const util::ProcessResult& process) {
  SanitizerPass pass;
  pass.report = measure::parse_sanitizer_output(process.out + "\n" + process.err);
  pass.report.exit_code = process.signaled ? -process.term_signal : process.exit_code;
  pass.report.clean = pass.report.clean && process.succeeded();
  pass.report.wall_ms = static_cast<double>(process.elapsed.count());
  pass.ran = pass.report.log.find("ERROR SUMMARY") != std::string::npos;
  if (!pass.ran)
    pass.reason = "compute-sanitizer printed no report; it " + process_end(process) + ": " +
                  util::head_lines(process.err + process.out, 10);
  const auto reply = single_call_reply(process.out);
  pass.call_completed = reply && reply->ok;
  if (!reply)
    pass.call_outcome =
        "the single-call process " + process_end(process) + " before its call completed";
  else if (!reply->ok)
    pass.call_outcome =
        reply->message + (reply->cuda_error.empty() ? "" : ": " + reply->cuda_error);
  else
    pass.call_outcome = "the call completed";
  if (pass.report.error_count > 0)
    pass.finding = describe_finding(pass.report);
  if (pass.report.error_count > 0 && pass.finding.empty())
    pass.finding =
        fmt::format("compute-sanitizer memcheck reported {} error(s)", pass.report.error_count);
  return pass;
}

SanitizerPass run_sanitizer_pass(util::ProcessRunner& runner, const ChildCommand& child,
                                 std::chrono::milliseconds timeout) {
  SanitizerPass pass;
  measure::SanitizerOptions options;
  options.sanitizer = find_cuda_tool("compute-sanitizer").string();
  if (options.sanitizer.empty()) {
    pass.reason = "compute-sanitizer not found (PATH, /usr/local/cuda/bin)";
    return pass;
  }
  auto result =
      run_tool(runner, "compute-sanitizer", measure::sanitizer_command(child.argv, options), child,
               timeout, util::ProcessOptions{}.max_output_bytes);
  if (!result) {
    pass.reason = result.error().message;
    return pass;
  }
  return sanitizer_pass_from(*result);
}

DebuggerPass debugger_pass_from(const util::ProcessResult& process) {
  DebuggerPass pass;
  pass.report = measure::parse_cuda_gdb_output(process.out + "\n" + process.err);
  pass.wall_ms = static_cast<double>(process.elapsed.count());
  pass.ran = pass.report.stop != measure::DebuggerStop::unknown;
  if (!pass.ran) {
    pass.reason = "cuda-gdb printed neither a stop nor the end of the program; it " +
                  process_end(process) + ": " + util::head_lines(process.err + process.out, 10);
    return pass;
  }
  pass.finding = measure::describe_stop(pass.report);
  // A process that ended with a failed call says why in its reply line.
  const auto reply = single_call_reply(process.out);
  if (pass.report.stop == measure::DebuggerStop::exited && reply && !reply->ok)
    pass.finding +=
        ": " + reply->message + (reply->cuda_error.empty() ? "" : ": " + reply->cuda_error);
  return pass;
}

DebuggerPass run_debugger_pass(util::ProcessRunner& runner, const ChildCommand& child,
                               std::chrono::milliseconds timeout,
                               const std::filesystem::path& cuda_gdb) {
  DebuggerPass pass;
  if (cuda_gdb.empty()) {
    pass.reason = "cuda-gdb not found (PATH, /usr/local/cuda/bin)";
    return pass;
  }
  // cuda-gdb passes its environment on to the program, which runs in a process group of its
  // own; GDB traces it with PTRACE_O_EXITKILL, so the kill of cuda-gdb's group at the deadline
  // ends it too.
  auto result =
      run_tool(runner, "cuda-gdb", measure::cuda_gdb_command(cuda_gdb.string(), child.argv), child,
               timeout, std::size_t{1} << 20);
  if (!result) {
    pass.reason = result.error().message;
    return pass;
  }
  return debugger_pass_from(*result);
}

namespace {

bool counts_agree(sass::AuditMatch match, double in_process, double ncu) {
  if (match == sass::AuditMatch::presence)
    return (in_process > 0.5) == (ncu > 0.5);
  return std::fabs(in_process - ncu) < 0.5;
}

void add_note(std::string& note, const std::string& sentence) {
  note += (note.empty() ? "" : "; ") + sentence;
}

} // namespace

void compare_counts(NcuAuditPass& pass, const sass::ArchCounters* table,
                    const std::optional<protocol::Counts>& in_process) {
  pass.counts.clear();
  pass.agreement_note.clear();
  pass.agreement = Agreement::unknown;
  if (!pass.audit)
    return;
  if (table == nullptr) {
    pass.agreement_note = "no counter table for this architecture (sass/counters.hpp)";
    return;
  }
  for (const measure::CounterTotal& counted : measure::counter_totals(*pass.audit, *table))
    pass.counts.push_back({std::string(counted.row->key), counted.total.executed,
                           counted.total.predicated_on, std::nullopt, false,
                           std::string(counted.row->metric), counted.row->match});
  if (!in_process || !in_process->available) {
    pass.agreement_note =
        !in_process ? "the in-process count pass did not run"
                    : (in_process->reason.empty() ? "no in-process counts" : in_process->reason);
    return;
  }
  bool missing = false;
  bool differ = false;
  for (CountAgreement& c : pass.counts) {
    c.in_process = in_process->total(c.metric);
    if (!c.in_process || !std::isfinite(*c.in_process)) {
      c.in_process.reset();
      missing = true;
      add_note(pass.agreement_note,
               fmt::format("{}: the in-process counter has no value of {}", c.family, c.metric));
      continue;
    }
    // The predicated-on count where ncu printed what derives it; a page without
    // thread_inst_executed (an older ncu audit) compares every warp instruction.
    const double ncu = c.ncu_predicated_on.value_or(static_cast<double>(c.ncu));
    c.agree = counts_agree(c.match, *c.in_process, ncu);
    if (c.agree)
      continue;
    differ = true;
    add_note(pass.agreement_note,
             fmt::format("{}: ncu {:.0f}{} vs in-process {:.0f}{}", c.family, ncu,
                         c.ncu_predicated_on ? " predicated on" : "", *c.in_process,
                         c.match == sass::AuditMatch::presence ? " (compared for presence)" : ""));
  }
  pass.agreement = differ ? Agreement::disagree : missing ? Agreement::unknown : Agreement::agree;
}

protocol::SingleCallOptions audit_call_options() {
  protocol::SingleCallOptions call;
  call.nvtx_range = std::string(kAuditNvtxRange);
  call.warmup = 1; // module loading and first-launch work stay outside the range
  return call;
}

NcuAuditPass run_ncu_audit_pass(util::ProcessRunner& runner, const ChildCommand& child,
                                measure::NcuReplay replay, std::chrono::milliseconds timeout,
                                const std::filesystem::path& ncu) {
  NcuAuditPass pass;
  measure::NcuAuditOptions options;
  options.ncu = ncu.string();
  if (options.ncu.empty()) {
    pass.reason = "ncu not found (PATH, /usr/local/cuda/bin)";
    return pass;
  }
  options.nvtx_range = std::string(kAuditNvtxRange);
  options.replay = replay;
  options.timeout = timeout;
  options.env = child.env;
  auto audit = measure::run_ncu_audit(runner, child.argv, options);
  if (!audit) {
    pass.reason = audit.error().message;
    return pass;
  }
  pass.ran = true;
  pass.audit = std::move(*audit);
  return pass;
}

} // namespace ptxbench::exec
