// The dynamic target-instruction verdict from the child's counts (DESIGN.md §4,
// docs/evaluation.md "Dynamic verification").
//
// The counting pass reports every profiled range — one per kernel the call launched — with the
// value of each metric. Only the candidate's own kernels are credited: ranges whose kernel is
// not in the candidate's kernel.so are left out of the executed counts and the tensor-path
// coverage (and make the evaluation fail on their own, launch_rules.hpp). The counts come from
// another process and are read defensively: a missing, non-numeric or non-finite value makes
// its family `unknown` with the reason, never an exception and never a number.
#pragma once

#include "exec/evaluation.hpp"
#include "suite/problem.hpp"

namespace ptxbench::exec {

// What the supervisor takes from the child's instruction counts (protocol::Reply::counts);
// the other keys (passes, steps, ...) are shown as sent and not read. Metric values stay JSON:
// a value that is not a finite number makes its family unknown (above), not the reply bad.
struct CountedRange {
  std::string kernel;                   // CUPTI's range name; "" when the child sent none
  const trace::Json* metrics = nullptr; // metric -> value, or nullptr when the range has none
};
struct Counts {
  bool available = false;
  std::string reason = "no counts";                // why not available
  std::optional<std::vector<std::string>> kernels; // the counted launches' kernels, when sent
  const trace::Json* metrics = nullptr;            // the totals, metric -> value, or nullptr
  std::optional<std::vector<CountedRange>> ranges; // per range, when the child sent them
};

// The counts in `raw` (the pointers point into it); a field of the wrong type is a bad_response
// error naming its JSON path ("instruction counts: $.ranges[1].kernel: expected a string, got
// integer"). Never throws.
util::Expected<Counts> read_counts(const trace::Json& raw);

// Fills evaluation.dynamic's families, verdict, tensor FLOPs and coverage from its raw counts
// and the static report; a no-op without counts or a static report.
void derive_dynamic(Evaluation& evaluation, const suite::Problem& problem);

// The paper's "undefined behaviour during profiling" (§A.2): a call in which memcheck found a
// stream-ordered allocator race (a kernel reading a temporary after its cudaFreeAsync) may
// compute the right result, but what it executed is not a classifiable measurement. Its
// dynamic verdict becomes unknown, with the finding as the reason, whatever the counts said;
// the families keep their counts. A candidate that freed stream-ordered memory (cudaFreeAsync)
// in an evaluation without a memcheck pass gets the same unknown verdict, since nothing else
// can rule such a race out. Runs after derive_dynamic; a no-op otherwise.
void mark_undefined_behaviour(Evaluation& evaluation);

} // namespace ptxbench::exec
