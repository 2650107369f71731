// The dynamic target-instruction verdict from the child's counts (DESIGN.md §4,
// docs/evaluation.md "Dynamic verification").
//
// The counting pass reports every profiled range — one per kernel the call launched — with the
// value of each metric; the families are credited from the counter table of the evaluation's
// architecture (sass/counters.hpp), the one the child's counter configured its metrics from.
// Only the candidate's own kernels are credited: ranges whose kernel is not in the candidate's
// kernel.so are left out of the executed counts and the tensor-path coverage (and make the
// evaluation fail on their own, launch_rules.hpp). The child's reply is decoded strictly
// (protocol/counts.hpp: counts that do not read make the reply a bad_response); the report keeps
// their JSON, which is read again here defensively: JSON that does not read, or a value that is
// not finite, makes its family `unknown` with the reason, never an exception and never a number.
#pragma once

#include "exec/evaluation.hpp"
#include "protocol/counts.hpp"
#include "suite/problem.hpp"

namespace ptxbench::exec {

// The counts of `raw` (the report's copy of the child's counts, protocol/counts.hpp); a field
// of the wrong type is a bad_response error naming its JSON path ("instruction counts:
// $.ranges[1].kernel: expected a string, got integer"). Never throws.
util::Expected<protocol::Counts> read_counts(const trace::Json& raw);

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
