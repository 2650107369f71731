#include "exec/tool_passes.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ptxbench::exec {
namespace {

using Json = trace::Json;

Json error_json(const measure::SanitizerError& e) {
  return {{"kind", e.kind},           {"access", e.access},
          {"space", e.space},         {"kernel", e.kernel},
          {"pc_offset", e.pc_offset}, {"file", std::filesystem::path(e.file).filename().string()},
          {"line", e.line},           {"address", e.address},
          {"detail", e.detail},       {"stream_ordered", std::string(to_string(e.stream_ordered))}};
}

} // namespace

Json to_json(const SanitizerPass& pass) {
  Json out{{"tool", "compute-sanitizer memcheck"}, {"ran", pass.ran}};
  if (!pass.ran) {
    out["reason"] = pass.reason;
    return out;
  }
  out["clean"] = pass.report.error_count == 0;
  out["errors"] = pass.report.error_count;
  out["first_error"] =
      pass.report.first_error ? error_json(*pass.report.first_error) : Json(nullptr);
  out["finding"] = pass.finding;
  out["call_completed"] = pass.call_completed;
  out["call_outcome"] = pass.call_outcome;
  out["exit_code"] = pass.report.exit_code;
  out["wall_ms"] = pass.report.wall_ms;
  out["input_set"] = 0;
  return out;
}

Json to_json(const NcuAuditPass& pass) {
  Json out{{"tool", "ncu source counters (inst_executed, thread_inst_executed_true, "
                    "thread_inst_executed; NVTX range "
                    "ptxbench_eval; application replay, kernel replay for Triton)"},
           {"ran", pass.ran}};
  if (!pass.ran) {
    out["reason"] = pass.reason;
    return out;
  }
  Json families = Json::object();
  for (const CountAgreement& c : pass.counts)
    families[c.family] = {
        {"ncu", c.ncu},
        {"ncu_predicated_on", c.ncu_predicated_on ? Json(*c.ncu_predicated_on) : Json(nullptr)},
        {"in_process", c.in_process ? Json(*c.in_process) : Json(nullptr)},
        {"agree", c.agree},
        {"metric", c.metric},
        {"match", std::string(sass::to_string(c.match))}};
  const measure::FamilyTotals& f = pass.audit->families;
  out["families"] = families;
  out["thread_inst_executed_true"] = {
      {"gmma", f.gmma_thread_true}, {"tma", f.tma_thread_true}, {"tcgen05", f.tcgen05_thread_true}};
  out["agreement"] = to_string(pass.agreement);
  if (!pass.agreement_note.empty())
    out["agreement_note"] = pass.agreement_note;
  out["kernels"] = pass.audit->kernels;
  out["instruction_rows"] = pass.audit->instruction_rows;
  // The target families' SASS rows, one by one: where a count and its metric part, the row
  // shows whether whole warps ran the instruction predicated off (executed > thread_true).
  Json rows = Json::array();
  for (const measure::SassRow& row : pass.audit->rows)
    rows.push_back({{"kernel", row.kernel},
                    {"sass", row.source},
                    {"executed", row.executed},
                    {"thread_inst_executed_true", row.thread_true},
                    {"thread_inst_executed",
                     row.thread_executed ? Json(*row.thread_executed) : Json(nullptr)}});
  out["target_rows"] = std::move(rows);
  out["wall_ms"] = pass.audit->wall_ms;
  out["input_set"] = 0;
  return out;
}

Json to_json(const DebuggerPass& pass) {
  Json out{{"tool", "cuda-gdb (batch mode, set cuda launch_blocking on)"}, {"ran", pass.ran}};
  if (!pass.ran) {
    out["reason"] = pass.reason;
    return out;
  }
  const measure::DebuggerReport& r = pass.report;
  out["stop"] = std::string(to_string(r.stop));
  out["finding"] = pass.finding;
  out["signal"] = r.signal;
  out["exception"] = r.exception;
  out["kernel"] = r.kernel;
  out["launch"] = r.launch;
  out["block"] = r.block;
  out["thread"] = r.thread;
  out["function"] = r.function;
  out["file"] = std::filesystem::path(r.file).filename().string();
  out["line"] = r.line;
  out["source_line"] = r.source_line;
  out["pc"] = r.pc;
  if (r.stop == measure::DebuggerStop::exited)
    out["exit_code"] = r.exit_code;
  out["wall_ms"] = pass.wall_ms;
  out["input_set"] = 0;
  return out;
}

std::string render_text(const DebuggerPass& pass) {
  if (!pass.ran)
    return "  debugger: not run — " + pass.reason + "\n";
  return fmt::format("  debugger: {} ({:.1f} s)\n", pass.finding, pass.wall_ms / 1000.0);
}

std::string render_text(const SanitizerPass& pass, FindingLine finding) {
  if (!pass.ran)
    return "  sanitizer: not run — " + pass.reason + "\n";
  const double seconds = pass.report.wall_ms / 1000.0;
  if (!pass.finding.empty() && finding == FindingLine::status)
    return fmt::format("  sanitizer: {} error(s) ({:.1f} s); the first is the status message "
                       "above\n",
                       pass.report.error_count, seconds);
  if (!pass.finding.empty())
    return fmt::format("  sanitizer: {} error(s) ({:.1f} s) — {}\n", pass.report.error_count,
                       seconds, pass.finding);
  std::string out =
      fmt::format("  sanitizer: memcheck clean (one call on input set 0, {:.1f} s)", seconds);
  if (!pass.call_completed)
    out += "; but " + pass.call_outcome;
  return out + "\n";
}

std::string render_text(const NcuAuditPass& pass) {
  if (!pass.ran)
    return "  ncu audit: not run — " + pass.reason + "\n";
  std::string counts;
  for (const CountAgreement& c : pass.counts) {
    // Every warp instruction, then the predicated-on ones where they differ.
    const bool differs =
        c.ncu_predicated_on && std::fabs(*c.ncu_predicated_on - static_cast<double>(c.ncu)) >= 0.5;
    counts +=
        fmt::format("{}{} {}{}{}", counts.empty() ? "" : ", ", c.family, c.ncu,
                    differs ? fmt::format(" ({:.0f} predicated on)", *c.ncu_predicated_on) : "",
                    c.in_process ? fmt::format(" (in-process {:.0f})", *c.in_process) : "");
  }
  std::string out = fmt::format("  ncu audit: {}: {}", counts, to_string(pass.agreement));
  if (!pass.agreement_note.empty())
    out += " (" + pass.agreement_note + ")";
  return out + fmt::format("; {} SASS rows, {:.1f} s\n", pass.audit->instruction_rows,
                           pass.audit->wall_ms / 1000.0);
}

} // namespace ptxbench::exec
