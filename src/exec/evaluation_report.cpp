#include "exec/evaluation.hpp"
#include "exec/tool_passes.hpp"
#include "frontend/frontend.hpp"
#include "protocol/protocol.hpp"
#include "trace/json_io.hpp"
#include "util/json_number.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ptxbench::exec {
namespace {

using Json = trace::Json;
using Status = trace::EvaluationStatus;

constexpr std::size_t kMaxLogBytes = 5u << 20;

std::string evaluation_log(const Evaluation& ev) {
  std::string log = ev.message;
  if (ev.check.outcome == CheckOutcome::compile_error && ev.check.build)
    log += "\n" + ev.check.build->log;
  if (!ev.child_log.empty())
    log += "\n--- candidate process output ---\n" + ev.child_log;
  if (log.size() > kMaxLogBytes)
    log = log.substr(0, kMaxLogBytes) + "\n\n[log truncated]\n";
  return log;
}

// The static count of each target family on the evaluation's architecture, in target order.
std::vector<std::pair<sass::Family, std::size_t>> static_counts(const Evaluation& ev) {
  std::vector<std::pair<sass::Family, std::size_t>> counts;
  if (ev.check.sass)
    if (const auto* arch = sass::find_arch(*ev.check.sass, compile::to_string(ev.check.arch)))
      for (sass::Family family : arch->target_families)
        counts.emplace_back(family, arch->totals[sass::index_of(family)]);
  return counts;
}

Json static_json(const Evaluation& ev) {
  auto verdict = ev.check.verdict();
  Json out{{"verdict", verdict ? Json(sass::to_string(*verdict)) : Json(nullptr)}};
  Json families = Json::object();
  for (const auto& [family, count] : static_counts(ev))
    families[std::string(sass::to_string(family))] = count;
  out["families"] = families;
  return out;
}

Json dynamic_json(const DynamicReport& dyn) {
  Json families = Json::object();
  for (const FamilyDynamic& f : dyn.families)
    families[std::string(sass::to_string(f.family))] = {
        {"static", f.static_count}, {"executed", f.executed}, {"state", to_string(f.state)}};
  Json out{
      {"verdict", to_string(dyn.verdict)},
      {"families", families},
      {"tensor_flops", dyn.tensor_flops},
      {"tensor_path_coverage", dyn.coverage_unknown.empty() ? Json(dyn.coverage) : Json(nullptr)}};
  if (!dyn.reason.empty())
    out["reason"] = dyn.reason;
  if (!dyn.coverage_unknown.empty())
    out["coverage_unknown"] = dyn.coverage_unknown;
  if (dyn.foreign_ranges > 0)
    out["foreign_kernels_not_credited"] = dyn.foreign_ranges;
  if (!dyn.counts_cache.empty())
    out["counts_cache"] = dyn.counts_cache;
  if (dyn.raw)
    out["counter"] = *dyn.raw;
  return out;
}

// A latency only where trials were timed: a timing phase that failed before its first trial
// finished measured nothing, and 0.0 would read as a measurement.
Json latency_json(double mean_ms, const std::vector<double>& trials, bool cached) {
  return trials.empty() && !cached ? Json(nullptr) : Json(mean_ms);
}

Json timing_json(const TimingReport& t) {
  Json out{{"candidate_trial_ms", t.candidate_trial_ms},
           {"reference_trial_ms", t.reference_trial_ms},
           {"candidate_event_trial_ms", t.candidate_event_ms},
           {"candidate_ms", latency_json(t.candidate_ms, t.candidate_trial_ms, false)},
           {"reference_ms", latency_json(t.reference_ms, t.reference_trial_ms, t.reference_cached)},
           {"reference_cached", t.reference_cached},
           {"reference_event_trial_ms", t.reference_event_ms},
           {"mode", t.mode},
           {"inputs_warm", t.inputs_warm},
           {"preheat_ms", t.preheat_ms},
           {"interleave_calls", t.interleave_calls},
           {"timed_calls", t.timed_calls},
           {"checked_calls", t.checked_calls},
           {"staging_ms", t.staging_ms},
           {"checks_ms", t.checks_ms},
           {"window_wait_ms", t.window_wait_ms},
           {"kernels", t.kernels},
           {"kernel_launches", t.kernel_launches}};
  if (!t.strict_reason.empty())
    out["strict_reason"] = t.strict_reason;
  if (!t.retimed_pairs.empty())
    out["retimed_pairs"] = t.retimed_pairs;
  if (t.candidate_overhead_ms)
    out["candidate_overhead_ms"] = *t.candidate_overhead_ms;
  if (t.reference_overhead_ms)
    out["reference_overhead_ms"] = *t.reference_overhead_ms;
  if (t.calibrated_overhead_ms)
    out["calibrated_overhead_ms"] = *t.calibrated_overhead_ms;
  if (t.unexplained_ms)
    out["unexplained_ms"] = *t.unexplained_ms;
  if (!t.preload_calibration_ms.empty())
    out["preload_calibration_ms"] = t.preload_calibration_ms;
  if (t.calibration_cap_ms) {
    out["calibration_cap_ms"] = *t.calibration_cap_ms;
    out["calibration_capped"] = t.calibration_capped;
  }
  if (!t.phases_over_bound.empty())
    out["phases_over_bound"] = t.phases_over_bound;
  if (t.speed_of_light_ms)
    out["speed_of_light_ms"] = *t.speed_of_light_ms;
  if (t.host_cpu_stall_share)
    out["host_cpu_stall_share"] = *t.host_cpu_stall_share;
  if (t.supervisor_run_delay_ms)
    out["supervisor_run_delay_ms"] = *t.supervisor_run_delay_ms;
  double events = 0.0;
  for (double e : t.candidate_event_ms)
    events += e;
  if (!t.candidate_event_ms.empty() && t.candidate_ms > 0)
    out["event_to_cupti_ratio"] =
        events / static_cast<double>(t.candidate_event_ms.size()) / t.candidate_ms;
  return out;
}

Json launches_json(const LaunchEvidence& launches) {
  Json calls = Json::array();
  for (const TracedCall& call : launches.correctness)
    calls.push_back({{"set", call.set},
                     {"repeat", call.repeat},
                     {"kernels", call.launches},
                     {"latency_ms", call.latency_ms ? Json(*call.latency_ms) : Json(nullptr)}});
  Json timed = Json::array();
  for (const protocol::KernelSet& set : launches.timed)
    timed.push_back({{"kernels", set.kernels}, {"calls", set.calls}});
  return {{"correctness_calls", calls},
          {"timed_calls", timed},
          {"counted_kernels", launches.counted},
          {"refused_entry_points", launches.refused}};
}

Json correctness_json(const Evaluation& ev) {
  const CompareStats& c = *ev.correctness;
  return {{"comparisons", ev.comparisons},
          {"elements", c.elements},
          {"failed", c.failed},
          {"candidate_nan", c.candidate_nan},
          {"candidate_inf", c.candidate_inf},
          {"reference_nonfinite", c.reference_nonfinite},
          {"max_absolute_error", util::number_json(c.reported_abs_error())},
          {"max_relative_error", util::number_json(c.reported_rel_error())},
          {"required_matched_ratio", ev.required_matched_ratio},
          {"tolerated_failures", ev.tolerated_failures}};
}

std::string target_text(const Evaluation& ev) {
  auto verdict = ev.check.verdict();
  if (!verdict)
    return "";
  std::string out = fmt::format("  target instructions: static {}", sass::to_string(*verdict));
  std::string counts;
  for (const auto& [family, count] : static_counts(ev))
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", sass::to_string(family), count);
  out += " [" + counts + "]";
  if (ev.dynamic) {
    std::string dyn;
    for (const FamilyDynamic& f : ev.dynamic->families)
      dyn += fmt::format("{}{} {:.0f} ({})", dyn.empty() ? "" : ", ", sass::to_string(f.family),
                         f.executed, to_string(f.state));
    out += fmt::format("; dynamic {} [{}]", to_string(ev.dynamic->verdict), dyn);
    if (ev.dynamic->verdict == DynamicState::unknown)
      out += " — " + ev.dynamic->reason;
    else if (!ev.dynamic->coverage_unknown.empty())
      out += "; tensor-path coverage unknown (" + ev.dynamic->coverage_unknown + ")";
    else
      out += fmt::format("; tensor-path coverage {:.1f}%", 100.0 * ev.dynamic->coverage);
    if (ev.dynamic->foreign_ranges > 0)
      out += fmt::format(" (counts of the candidate's own kernels; {} other kernel launch(es) "
                         "not credited)",
                         ev.dynamic->foreign_ranges);
    if (!ev.dynamic->counts_cache.empty())
      out += "; counts cache: " + ev.dynamic->counts_cache;
  } else if (!ev.gpu_ran) {
    out += "; dynamic: not measured (needs a GPU)";
  }
  return out + "\n";
}

// Why a status is what it is when its name alone would mislead.
std::string status_note(const Evaluation& ev) {
  if (ev.check.outcome == CheckOutcome::banned_library)
    return " (banned-library rule)";
  if (ev.broken_rule)
    return fmt::format(" (rule: {})", to_string(ev.broken_rule->rule));
  return "";
}

// The errors and what they were measured over: every comparison adds all output elements once.
std::string correctness_text(const Evaluation& ev) {
  const CompareStats& c = *ev.correctness;
  std::string over = ev.comparisons.size() == 1
                         ? ev.comparisons[0]
                         : fmt::format("{} comparisons of the outputs", ev.comparisons.size());
  std::string out =
      fmt::format("  max abs error {:.4g}, max rel error {:.4g} ({} of {} elements "
                  "failed, over {})\n",
                  c.reported_abs_error(), c.reported_rel_error(), c.failed, c.elements, over);
  if (ev.comparisons.size() > 1) {
    std::string list;
    for (const std::string& when : ev.comparisons)
      list += (list.empty() ? "" : "; ") + when;
    out += "  compared: " + list + "\n";
  }
  // A relative error far above rtol beside PASSED: elements whose reference is near zero, which
  // pass on the absolute tolerance (an element fails only if it misses both).
  if (ev.status == Status::passed && std::isfinite(c.reported_rel_error()) &&
      c.reported_rel_error() > ev.rtol && ev.rtol > 0)
    out += fmt::format("  (the max relative error is at elements whose reference value is near "
                       "zero: they are within the absolute tolerance {} — an element fails only "
                       "when it misses both atol {} and rtol {})\n",
                       ev.atol, ev.atol, ev.rtol);
  return out;
}

} // namespace

std::string solution_name(const std::string& source, const suite::Problem& problem,
                          compile::Language language) {
  trace::Solution solution;
  solution.name = problem.name();
  solution.definition = problem.name();
  solution.author = "ptxbench";
  solution.spec.language = compile::to_trace(language);
  solution.spec.target_hardware = {"NVIDIA_H200"};
  solution.spec.entry_point = std::string(compile::entry_point(language));
  solution.spec.binding = trace::Binding::ptxbench;
  solution.sources = {{std::string(compile::kernel_file_name(language)), source}};
  return trace::unique_solution_name(solution);
}

Json extras_json(const Evaluation& ev) {
  Json out{{"message", ev.message},
           {"arch", compile::to_string(ev.check.arch)},
           {"seed", std::to_string(ev.seed)},
           {"input_sets", ev.sets},
           {"static", static_json(ev)}};
  if (!ev.gpu_ran)
    out["needs_gpu"] = ev.needs_gpu;
  if (ev.correctness)
    out["correctness"] = correctness_json(ev);
  if (ev.dynamic)
    out["dynamic"] = dynamic_json(*ev.dynamic);
  if (ev.timing)
    out["timing"] = timing_json(*ev.timing);
  if (!ev.child_startup.empty())
    out["child_startup_ms"] = ev.child_startup;
  if (ev.jit_ms)
    out["jit_ms"] = *ev.jit_ms;
  if (ev.child_reads_confined)
    out["child_reads_confined"] = *ev.child_reads_confined;
  if (const std::string_view tag = frontend::of(ev.check.language).report_tag(); !tag.empty())
    out["language"] = tag;
  if (ev.sanitizer)
    out["sanitizer"] = to_json(*ev.sanitizer);
  if (ev.ncu_audit)
    out["ncu_audit"] = to_json(*ev.ncu_audit);
  if (ev.debugger)
    out["debugger"] = to_json(*ev.debugger);
  out["clocks"] = ev.clocks;
  if (ev.gpu_ran)
    out["launches"] = launches_json(ev.launches);
  out["rule"] = ev.broken_rule ? Json(to_string(ev.broken_rule->rule)) : Json(nullptr);
  out["foreign_kernels"] = ev.foreign_kernels;
  out["violations"] = ev.violations;
  Json phases = Json::object();
  for (const util::Phase& p : ev.phases)
    phases[p.name + "_ms"] = static_cast<double>(p.elapsed.count()) / 1000.0;
  out["phases"] = phases;
  return out;
}

trace::Trace to_trace(const Evaluation& ev, const suite::Problem& problem) {
  trace::Trace out{problem.name(), problem.workload, ev.solution_name, std::nullopt};
  if (!ev.gpu_ran && ev.status == Status::passed)
    return out;
  trace::Evaluation e;
  e.status = ev.status;
  e.environment.hardware = ev.gpu.empty() ? "unknown (no GPU used)" : ev.gpu;
  e.environment.libs = ev.libs;
  e.timestamp = ev.timestamp;
  e.log = evaluation_log(ev);
  if (ev.correctness && (ev.status == Status::passed || ev.status == Status::incorrect_numerical))
    e.correctness = trace::Correctness{
        ev.correctness->reported_rel_error(), ev.correctness->reported_abs_error(),
        ev.required_matched_ratio < 1.0
            ? std::optional<Json>(Json{{"required_matched_ratio", ev.required_matched_ratio},
                                       {"tolerated_failures", ev.tolerated_failures}})
            : std::nullopt};
  if (ev.status == Status::incorrect_numerical && !e.correctness)
    e.correctness = trace::Correctness{};
  if (ev.status == Status::passed && ev.timing) {
    const TimingReport& t = *ev.timing;
    e.performance = trace::Performance{t.candidate_ms, t.reference_ms,
                                       t.candidate_ms > 0 ? t.reference_ms / t.candidate_ms : 0.0};
  }
  e.ptxbench = extras_json(ev);
  out.evaluation = std::move(e);
  return out;
}

Json to_json(const Evaluation& ev, const suite::Problem& problem) {
  Json out{{"status", ev.gpu_ran || ev.status != Status::passed ? Json(trace::to_string(ev.status))
                                                                : Json(nullptr)},
           {"check", to_json(ev.check)}};
  out["trace"] = trace::to_json(to_trace(ev, problem));
  return out;
}

std::string render_text(const Evaluation& ev) {
  std::string out = fmt::format("{} ({}){}\n", ev.problem, compile::to_string(ev.check.arch),
                                ev.gpu.empty() ? "" : " on " + ev.gpu);
  if (!ev.gpu_ran && ev.status == Status::passed) {
    out += "status: not evaluated — " + ev.needs_gpu + "\n";
    return out +
           fmt::format("  static check: {}\n", frontend::of(ev.check.language).checked_summary()) +
           target_text(ev);
  }
  out += fmt::format("status: {}{}\n", trace::to_string(ev.status), status_note(ev));
  if (!ev.message.empty())
    out += "  " + ev.message + "\n";
  if (ev.correctness)
    out += correctness_text(ev);
  if (ev.tolerated_failures > 0)
    out += fmt::format("  {} finite misses tolerated: this problem requires a matched ratio of "
                       "{} per input set, not 1\n",
                       ev.tolerated_failures, ev.required_matched_ratio);
  if (ev.timing && ev.status == Status::passed) {
    const TimingReport& t = *ev.timing;
    out += fmt::format(
        "  latency: candidate {:.4f} ms, reference {:.4f} ms ({}{}), speedup {:.3f}x\n",
        t.candidate_ms, t.reference_ms, ev.library, t.reference_cached ? ", cached" : "",
        t.candidate_ms > 0 ? t.reference_ms / t.candidate_ms : 0.0);
  }
  if (ev.jit_ms)
    out += fmt::format("  Triton warm-up call (JIT, autotuning): {:.1f} ms, untimed\n", *ev.jit_ms);
  out += target_text(ev);
  if (ev.sanitizer) {
    const bool in_status =
        !ev.sanitizer->finding.empty() && ev.message.starts_with(ev.sanitizer->finding);
    out += render_text(*ev.sanitizer, in_status ? FindingLine::status : FindingLine::sanitizer);
  }
  if (ev.ncu_audit)
    out += render_text(*ev.ncu_audit);
  if (ev.debugger)
    out += render_text(*ev.debugger);
  for (const std::string& v : ev.violations)
    out += "  violation: " + v + "\n";
  for (const std::string& k : ev.foreign_kernels)
    out += "  foreign kernel: " + k + "\n";
  if (ev.status != Status::passed && !ev.child_log.empty()) {
    const std::size_t keep = 2000;
    out += "  candidate output (tail):\n" + (ev.child_log.size() > keep
                                                 ? ev.child_log.substr(ev.child_log.size() - keep)
                                                 : ev.child_log);
  }
  return out;
}

} // namespace ptxbench::exec
