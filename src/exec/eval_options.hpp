// What one evaluation is asked to do (the options of Evaluator::evaluate): the protocol, the
// timing, the passes around it. Shared by the evaluator and its GPU phases (gpu_evaluation.hpp).
#pragma once

#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "measure/timing.hpp"
#include "reference/reference.hpp"

#include <chrono>
#include <cstdint>
#include <optional>

namespace ptxbench::exec {

// Whether the reference is timed in every evaluation (interleaved with the candidate, the
// paper's protocol) or taken from the cache when present (service and test loops).
enum class ReferenceTiming : std::uint8_t { interleave = 1, cached = 2 };

// Whether the candidate also runs under compute-sanitizer memcheck (a separate pass, one call
// on input set 0; a finding is RUNTIME_ERROR).
enum class Sanitize : std::uint8_t { off = 1, memcheck = 2 };

// Whether one call on input set 0 also runs under cuda-gdb in batch mode (a separate pass that
// names the faulting kernel, block, thread and source line; evidence, never a verdict).
enum class Debug : std::uint8_t { off = 1, cuda_gdb = 2 };

// Whether a broken launch rule (launch_rules.hpp) decides the status. `report` only records it
// as a violation: for bench/aa_speedup alone, whose candidate is the library baseline itself.
// Not reachable from the command line or the service.
enum class LaunchRules : std::uint8_t { enforce = 1, report = 2 };

// Whether the paper's Nsight Compute source-counter audit reproduces the dynamic counts.
enum class Audit : std::uint8_t { none = 1, ncu = 2 };

// Whether an Evaluator keeps a spare candidate child (spare_child.hpp). Explicit values.
enum class ChildStart : std::uint8_t { spare = 1, on_demand = 2 };

// When a prepared spare may open the GPU's counter session (spare_child.hpp "The counter
// session"): only once the GPU has been idle for a while, or also beside running evaluations'
// trials once all of them have counted.
enum class CounterSessionAhead : std::uint8_t { when_idle = 1, beside_timing = 2 };

// When the spare child may be prepared (spare_child.hpp "Preparing beside an evaluation"):
// beside any phase of a running evaluation but its timed window, or only once every running
// evaluation has ended its timing phase.
enum class SparePrepare : std::uint8_t { beside_evaluation = 1, after_timing = 2 };

// Whether the counting pass's counts may be reused from an earlier evaluation of the same
// source, kernel.so, inputs (a caller-fixed seed) and GPU (counts_cache.hpp says what a reused
// count cannot see, and why this is off unless asked for).
enum class CountsCacheUse : std::uint8_t { off = 1, on = 2 };

struct EvalOptions {
  compile::Arch arch = compile::Arch::sm_90a;
  // The candidate's language: a Triton candidate is checked by the Triton gate and runs in
  // `python3 -m ptxbench_triton.child` (child_command.hpp), the same child over the same
  // protocol; its SASS report is of the cubins Triton built in the warm-up.
  compile::Language language = compile::Language::cuda;
  int sets = 3;
  int trials = 3;
  int warmup = 10;
  int iterations = 50;
  // Within a pair of trials the reference and the candidate hand over every this many timed
  // calls (0: whole trials one after the other). One by one, both sides run under the same
  // clocks when a power-capped GPU drifts or dips (docs/evaluation.md "Timing").
  int interleave_calls = 1;
  std::chrono::milliseconds timeout{std::chrono::seconds(60)}; // per child request
  ReferenceTiming reference_timing = ReferenceTiming::interleave;
  // The GQA problems' baseline: FlashInfer (the paper's) or cuDNN SDPA (`--reference cudnn`).
  reference::GqaBaseline gqa_reference = reference::GqaBaseline::flashinfer;
  std::optional<std::uint64_t> seed; // secret random seed when unset
  bool dynamic_counts = true;
  CountsCacheUse counts_cache = CountsCacheUse::off;
  // Strict (a window per call) by default: batched timing reads back to back at full duty
  // cycle, and on an H200 its A/A missed 1.00 ± 0.01 (power-cap transients; docs/evaluation.md).
  measure::TimingMode timing_mode = measure::TimingMode::strict;
  Sanitize sanitize = Sanitize::off;
  Audit audit = Audit::none;
  Debug debug = Debug::off;
  LaunchRules launch_rules = LaunchRules::enforce;
  // Deadline of each external-tool run (instrumentation slows the candidate many times).
  std::chrono::milliseconds tool_timeout{std::chrono::minutes(10)};
};

} // namespace ptxbench::exec
