#include "agent/feedback.hpp"

#include "compile/extract.hpp"
#include "sass/report.hpp"
#include "trace/json_io.hpp"

#include <fmt/core.h>

namespace ptxbench::agent {
namespace {

constexpr std::size_t kMaxCompileErrors = 5;
constexpr std::size_t kMaxMessageChars = 1500;

std::string resources_lines(const compile::CompileResult& build) {
  std::string out;
  for (const auto& kernel : build.kernels)
    out += fmt::format("ptxas {} [{}]: {} registers, spill stores {} B, spill loads {} B, "
                       "smem {} B\n",
                       clip(kernel.demangled_name, 120), kernel.arch, kernel.registers,
                       kernel.spill_store_bytes, kernel.spill_load_bytes, kernel.smem_bytes);
  return out;
}

std::string compile_error_lines(const compile::CompileResult& build) {
  std::string out = "Compilation FAILED.\n";
  // Our own diagnostic (the expected `run` signature) says more than the linker's line.
  if (!build.first_errors.empty() && !build.diagnostic.empty() &&
      !build.diagnostic_restates_first_error())
    out += clip(build.diagnostic, kMaxMessageChars) + "\n";
  std::size_t shown = 0;
  for (const auto& error : build.first_errors) {
    if (shown++ == kMaxCompileErrors)
      break;
    out += clip(error, kMaxFeedbackLineChars) + "\n";
  }
  if (build.first_errors.empty())
    out += clip(build.diagnostic.empty() ? build.log : build.diagnostic, kMaxMessageChars) + "\n";
  return out;
}

std::string verdict_line(const exec::CheckReport& report) {
  auto verdict = report.verdict();
  if (!verdict || !report.sass)
    return {};
  std::string arch(compile::to_string(report.arch));
  std::string counts;
  if (const sass::ArchReport* found = sass::find_arch(*report.sass, arch))
    for (sass::Family family : found->target_families)
      counts += fmt::format("{}{}={}", counts.empty() ? "" : ", ", sass::to_string(family),
                            found->totals[sass::index_of(family)]);
  return fmt::format("Target instructions in the binary ({}): {}{}\n", arch,
                     sass::to_string(*verdict), counts.empty() ? "" : " (" + counts + ")");
}

std::string correctness_line(const exec::CompareStats& stats) {
  return fmt::format("Correctness: {} of {} elements outside tolerance, max abs error {:.4g}, "
                     "max rel error {:.4g}, NaN {}, Inf {}\n",
                     stats.failed, stats.elements, stats.reported_abs_error(),
                     stats.reported_rel_error(), stats.candidate_nan, stats.candidate_inf);
}

std::string dynamic_line(const exec::DynamicReport& dynamic) {
  std::string out = fmt::format("Target instructions executed: {}", to_string(dynamic.verdict));
  for (const auto& family : dynamic.families)
    out += fmt::format(", {} {} static / {:.0f} executed", sass::to_string(family.family),
                       family.static_count, family.executed);
  if (!dynamic.reason.empty())
    out += " (" + clip(dynamic.reason, kMaxFeedbackLineChars) + ")";
  return out + "\n";
}

std::string gpu_lines(const exec::Evaluation& ev) {
  std::string out = fmt::format("Evaluation: {}\n", trace::to_string(ev.status));
  if (!ev.message.empty())
    out += clip(ev.message, kMaxMessageChars) + "\n";
  if (ev.correctness)
    out += correctness_line(*ev.correctness);
  if (ev.timing && !ev.timing->candidate_trial_ms.empty())
    out +=
        fmt::format("Latency: kernel {:.4f} ms, {} baseline {:.4f} ms\n", ev.timing->candidate_ms,
                    ev.library.empty() ? "library" : ev.library, ev.timing->reference_ms);
  if (auto speedup = speedup_of(ev))
    out += fmt::format("Speedup over the baseline: {:.3f}x\n", *speedup);
  if (ev.dynamic)
    out += dynamic_line(*ev.dynamic);
  if (ev.sanitizer && ev.sanitizer->ran && ev.sanitizer->finding.empty())
    out += "Memory check (compute-sanitizer memcheck, one call): no errors\n";
  if (ev.debugger && ev.debugger->ran)
    out += "Debugger (one call): " + clip(ev.debugger->finding, kMaxFeedbackLineChars) + "\n";
  for (const auto& violation : ev.violations)
    out += "Violation: " + clip(violation, kMaxFeedbackLineChars) + "\n";
  return out;
}

} // namespace

std::string clip(std::string_view text, std::size_t limit) {
  if (text.size() <= limit)
    return std::string(text);
  return fmt::format("{} [... {} more characters]", text.substr(0, limit), text.size() - limit);
}

std::string check_feedback(const exec::CheckReport& report) {
  if (report.triton_gate)
    return triton_gate_feedback(*report.triton_gate) + verdict_line(report);
  if (report.outcome == exec::CheckOutcome::banned_library)
    return report.banned_message() + "\n";
  if (!report.build)
    return "The kernel was not built.\n";
  if (report.outcome == exec::CheckOutcome::compile_error)
    return compile_error_lines(*report.build) + resources_lines(*report.build);
  return "Compilation succeeded.\n" + resources_lines(*report.build) + verdict_line(report);
}

std::string triton_gate_feedback(const compile::TritonGateReport& report) {
  if (report.ok())
    return "Static check: the Triton gate passed (no torch compute, an @triton.jit kernel, `run` "
           "with the required parameters).\n";
  return fmt::format("Static check: the Triton gate rejected the file ({} finding(s)):\n{}",
                     report.findings.size(), compile::render_text(report));
}

std::string evaluation_feedback(const exec::Evaluation& evaluation) {
  std::string out = check_feedback(evaluation.check);
  if (evaluation.check.outcome != exec::CheckOutcome::ok)
    return out;
  if (!evaluation.gpu_ran)
    return out + "Not run: " + clip(evaluation.needs_gpu, kMaxFeedbackLineChars) +
           "\nCorrectness and speed are unknown.\n";
  return out + gpu_lines(evaluation);
}

std::string extraction_feedback(const util::Error& error, const frontend::Frontend& language) {
  return "No kernel could be taken from your reply: " + clip(error.message, kMaxMessageChars) +
         "\n" + language.reply_request() + "\n";
}

std::string reply_end_note(store::ReplyEnd end, std::optional<std::int64_t> max_output_tokens) {
  const std::string limit =
      max_output_tokens ? fmt::format(" of {} tokens", *max_output_tokens) : std::string();
  switch (end) {
  case store::ReplyEnd::complete:
    return {};
  case store::ReplyEnd::truncated:
    return fmt::format("Your reply was cut off: it reached the output limit{} before it ended, so "
                       "what follows judges an incomplete reply. Keep the next reply shorter and "
                       "give the complete kernel.\n\n",
                       limit);
  case store::ReplyEnd::empty:
    return "Your reply was empty: it held no text at all. Answer with the complete kernel.\n\n";
  }
  return {};
}

std::string closing_line(store::TurnCategory category, std::optional<double> speedup,
                         std::optional<double> target) {
  if (category != store::TurnCategory::correct)
    return category == store::TurnCategory::static_only
               ? ""
               : "\nPlease fix the issues and provide an updated kernel.\n";
  if (!speedup)
    return "\nKernel is correct.\n";
  if (target && *speedup >= *target)
    return fmt::format("\nTarget speedup {:.3f}x achieved! Speedup: {:.3f}x.\n", *target, *speedup);
  if (target)
    return fmt::format(
        "\nKernel is correct. Speedup: {:.3f}x (target: {:.3f}x). Keep optimizing.\n", *speedup,
        *target);
  return fmt::format("\nKernel is correct. Speedup: {:.3f}x. Keep optimizing.\n", *speedup);
}

std::optional<double> speedup_of(const exec::Evaluation& evaluation) {
  if (evaluation.status != trace::EvaluationStatus::passed || !evaluation.timing ||
      evaluation.timing->candidate_ms <= 0)
    return std::nullopt;
  return evaluation.timing->reference_ms / evaluation.timing->candidate_ms;
}

} // namespace ptxbench::agent
