// What one evaluation found (docs/evaluation.md "Result"), and how it is written: as a
// FlashInfer-Trace `Trace` whose `evaluation.ptxbench` object carries ptxbench's extras, as
// JSON for `ptxbench eval --json` (and read back from it), and as text for people.
#pragma once

#include "exec/check.hpp"
#include "exec/gpu_ops.hpp"
#include "exec/launch_rules.hpp"
#include "measure/cuda_gdb_report.hpp"
#include "measure/ncu_audit.hpp"
#include "measure/sanitizer.hpp"
#include "sass/counters.hpp"
#include "sass/families.hpp"
#include "suite/problem.hpp"
#include "trace/schema.hpp"
#include "util/enum_table.hpp"
#include "util/error.hpp"
#include "util/phases.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::exec {

// Whether a target family executed inside one candidate call. Persisted; explicit values.
enum class DynamicState : std::uint8_t {
  present = 1,      // in the binary and executed
  not_executed = 2, // in the binary, zero executed (dead branch, kernel never launched)
  absent = 3,       // not in the binary
  unknown = 4,      // no counts (no profiler permission, counter failed); see the reason
};

struct DynamicStateInfo {
  DynamicState state;
  std::string_view name;
};

inline constexpr std::array kDynamicStates{
    DynamicStateInfo{DynamicState::present, "present"},
    DynamicStateInfo{DynamicState::not_executed, "not_executed"},
    DynamicStateInfo{DynamicState::absent, "absent"},
    DynamicStateInfo{DynamicState::unknown, "unknown"},
};

consteval bool dynamic_states_complete() {
  for (std::size_t i = 0; i < kDynamicStates.size(); ++i)
    if (static_cast<std::size_t>(kDynamicStates[i].state) != i + 1)
      return false;
  return true;
}
static_assert(dynamic_states_complete(), "kDynamicStates must list every state in value order");
static_assert(util::no_enumerator_after<DynamicState, kDynamicStates.size()>(),
              "kDynamicStates lacks a row for an enumerator after its last");

constexpr std::string_view to_string(DynamicState state) {
  return kDynamicStates[static_cast<std::size_t>(state) - 1].name;
}

struct FamilyDynamic {
  sass::Family family = sass::Family::gmma;
  std::size_t static_count = 0;
  double executed = 0.0;
  DynamicState state = DynamicState::unknown;
};

struct DynamicReport {
  DynamicState verdict = DynamicState::unknown; // over the arch's target families
  std::string reason;                           // why unknown
  std::vector<FamilyDynamic> families;
  double tensor_flops = 0.0;    // of the candidate's own kernels
  double coverage = 0.0;        // tensor FLOPs executed / problem FLOPs
  std::string coverage_unknown; // why the tensor FLOPs could not be read, or empty
  int foreign_ranges = 0;       // profiled kernels not in kernel.so: left out above
  std::optional<trace::Json> raw;
  // With the counts cache asked for (EvalOptions::counts_cache): "reused: counted <when>",
  // "stored", "no earlier count: …" (a miss whose count was not stored) or "not used: <why>";
  // empty when it was not asked for.
  std::string counts_cache;
};

struct TimingReport {
  std::vector<double> candidate_trial_ms; // per-trial CUPTI medians
  std::vector<double> reference_trial_ms;
  std::vector<double> candidate_event_ms; // per-trial medians of the CUDA-event cross-check
  double candidate_ms = 0.0;              // mean of the trial medians
  double reference_ms = 0.0;
  bool reference_cached = false;
  std::vector<std::string> kernels;         // kernels of the last timed call
  std::vector<std::string> kernel_launches; // their launch configurations (same order)
  std::vector<double> reference_event_ms;   // per-trial medians of the reference's CUDA events
  std::string mode = "strict";              // "strict" or "batched" (see measure/timing.hpp)
  std::string strict_reason;                // why the evaluation fell back to strict timing
  bool inputs_warm = false;                 // input sets and reference outputs were reused
  double preheat_ms = 0.0;                  // untimed reference calls before the first trial
  std::vector<std::string> retimed_pairs;   // pairs timed again, and why (gpu_timing.cpp)
  int interleave_calls = 0;                 // timed calls per hand-over within a pair; 0: none
  // Timed calls made, and those whose outputs were compared (trial_pairs.hpp CheckPattern).
  int timed_calls = 0;
  int checked_calls = 0;
  // Host wall time the candidate side spent staging inputs and comparing checked calls.
  double staging_ms = 0.0;
  double checks_ms = 0.0;
  // Host wall time the phase waited before its first window: for the right to the counter
  // session, the GPU lock and a child's start or stop in flight (exec/child_work_gate.hpp).
  double window_wait_ms = 0.0;
  // Per timed call without warm-ups, the host wall time around it less the latency reported for
  // it: the candidate's measured by the supervisor around the child's request, the reference's
  // around its trial in the supervisor; medians (the calibration of catalogue rows 9 and 10).
  std::optional<double> candidate_overhead_ms;
  std::optional<double> reference_overhead_ms;
  // The same on the child's own one-block kernel (calibration requests), and what of the
  // candidate's overhead that leaves unexplained.
  std::optional<double> calibrated_overhead_ms;
  std::optional<double> unexplained_ms;
  // The calibrations taken before the candidate was loaded, the cap they set on the one the
  // bound uses, and whether the phase's calibrations were above it (trial_pairs.hpp
  // calibration_cap).
  std::vector<double> preload_calibration_ms;
  std::optional<double> calibration_cap_ms;
  bool calibration_capped = false;
  // The problem's FLOPs at the GPU's dense bf16 peak (trial_pairs.hpp speed_of_light_ms):
  // the shortest latency any kernel can have.
  std::optional<double> speed_of_light_ms;
  // Each timing phase whose calls left more unexplained than the bound allows, with its figures:
  // the phases before the one these figures are of, and that one too when the evaluation failed
  // (gpu_timing.cpp "Timing again").
  std::vector<std::string> phases_over_bound;
  // How contended the host's CPUs were over the phase these figures are of
  // (measure/host_contention.hpp): the share of its wall time in which a task waited for a CPU,
  // and how long the supervisor's thread did.
  std::optional<double> host_cpu_stall_share;
  std::optional<double> supervisor_run_delay_ms;
};

// The compute-sanitizer memcheck pass (--sanitize): one call on input set 0 in a
// `ptxbench-candidate --single-call` process started by compute-sanitizer.
struct SanitizerPass {
  bool ran = false;
  std::string reason;              // why it did not run, or why it said nothing (when !ran)
  measure::SanitizerReport report; // the sanitizer's verdict (when ran)
  bool call_completed = false;     // the candidate's call returned and was synchronised
  std::string call_outcome;        // the single-call reply's message or how the process ended
  std::string finding;             // the first error as one sentence; empty when clean
};

// One row of the counter table (sass/counters.hpp): its executed warp instructions as ncu's
// source page (the row's opcodes) and the in-process range profiler (the row's metric) count
// them inside one call.
struct CountAgreement {
  std::string family;    // the row's key: "gmma", "tma_load", … ("tcgen05_mma", … on Blackwell)
  std::uint64_t ncu = 0; // warp instructions, whatever their predicate (inst_executed)
  // Of those, the ones predicated on (measure::SassRow::predicated_on): what the range
  // profiler's metric counts, and what is compared when ncu printed what derives it.
  std::optional<double> ncu_predicated_on;
  std::optional<double> in_process; // absent when the in-process counts lack the metric
  bool agree = false;
  std::string metric;                               // the row's range-profiler metric
  sass::AuditMatch match = sass::AuditMatch::exact; // how the two are compared
};

// Persisted in JSON: explicit values.
enum class Agreement : std::uint8_t { agree = 1, disagree = 2, unknown = 3 };

constexpr std::string_view to_string(Agreement agreement) {
  switch (agreement) {
  case Agreement::agree:
    return "agree";
  case Agreement::disagree:
    return "disagree";
  case Agreement::unknown:
    return "unknown";
  }
  return "unknown";
}

// The paper's ncu source-counter audit (--audit ncu) of one call on input set 0.
struct NcuAuditPass {
  bool ran = false;
  std::string reason; // why it did not run or failed (when !ran)
  std::optional<measure::NcuAudit> audit;
  std::vector<CountAgreement> counts;
  Agreement agreement = Agreement::unknown;
  std::string agreement_note; // why unknown, or which families differ
};

// The debugger pass (--debug): one call on input set 0 in a `ptxbench-candidate --single-call`
// process started by cuda-gdb in batch mode. Evidence about a crash; it never sets the status.
struct DebuggerPass {
  bool ran = false;
  std::string reason;             // why it did not run, or why it said nothing (when !ran)
  measure::DebuggerReport report; // where the program stopped (when ran)
  std::string finding;            // the stop as one sentence (measure::describe_stop)
  double wall_ms = 0.0;
};

struct Evaluation {
  trace::EvaluationStatus status = trace::EvaluationStatus::passed;
  std::string message; // why the status is not PASSED, or empty
  bool gpu_ran = false;
  std::string needs_gpu; // what could not run here and why (when !gpu_ran)
  CheckReport check;
  std::string problem;
  std::string solution_name;
  std::optional<CompareStats> correctness; // summed over every comparison below
  std::vector<std::string> comparisons;    // each output comparison made, in order
  double atol = 0.0, rtol = 0.0;           // the problem's tolerances (suite/correctness.hpp)
  // The problem's rule (suite/correctness.hpp): the share of a set's elements that must pass,
  // and the finite misses that rule let pass over the sets checked.
  double required_matched_ratio = 1.0;
  std::uint64_t tolerated_failures = 0;
  std::optional<TimingReport> timing;
  std::optional<DynamicReport> dynamic;
  std::optional<SanitizerPass> sanitizer; // --sanitize
  std::optional<NcuAuditPass> ncu_audit;  // --audit ncu
  std::optional<DebuggerPass> debugger;   // --debug
  std::vector<std::string> foreign_kernels;
  // What the candidate launched in each phase, and the rule it broke (launch_rules.hpp);
  // a broken rule sets the status (RUNTIME_ERROR) and the message.
  LaunchEvidence launches;
  std::optional<BrokenRule> broken_rule;
  std::vector<std::string> violations;
  std::uint64_t seed = 0;
  int sets = 0;
  std::string gpu;
  std::string library; // the baseline the reference latency is from
  std::vector<std::pair<std::string, std::string>> libs;
  trace::Json clocks = trace::Json::object(); // NVML before/after timing, or why not
  std::string child_log;
  // The candidate child's start-up steps in `prepare` (ms), and `prepared_ahead` when the
  // spare was prepared before the evaluation took it; empty when no child started.
  trace::Json child_startup = trace::Json::object();
  // A Triton candidate's warm-up call in `load` (JIT compilation, autotuning), wall ms.
  std::optional<double> jit_ms;
  // Whether the candidate child ran confined to what it may read (exec/child_reads.hpp): false
  // for a Triton child and where the kernel has no Landlock; unset when no child started.
  std::optional<bool> child_reads_confined;
  std::vector<util::Phase> phases;
  std::string timestamp;
};

// The FlashInfer-Trace line; evaluation is null when nothing verdict-worthy ran (no GPU and a
// successful build).
trace::Trace to_trace(const Evaluation& evaluation, const suite::Problem& problem);
trace::Json extras_json(const Evaluation& evaluation);
trace::Json to_json(const Evaluation& evaluation, const suite::Problem& problem);
std::string render_text(const Evaluation& evaluation);

// The Evaluation that `to_json` wrote, back from that JSON (evaluation_json.cpp says which
// fields the JSON does not carry); an invalid_input error with its JSON path for any other
// shape, never a throw.
util::Expected<Evaluation> evaluation_from_json(const trace::Json& json, const std::string& origin);
// The same from the trace line already read out of that JSON.
util::Expected<Evaluation> evaluation_from_trace(const trace::Trace& trace,
                                                 const std::string& origin);

// The content-hash solution name of a candidate source for `problem` ("<def>_<sha1[:8]>").
std::string solution_name(const std::string& source, const suite::Problem& problem,
                          compile::Language language = compile::Language::cuda);

} // namespace ptxbench::exec
