// The observation the agent loop sends back after a turn: short, structured text built from
// what the checker or the evaluator found — the first compile errors, ptxas registers and
// spills per kernel, the runtime error, correctness numbers, latencies and speedup, and the
// target-instruction verdict with family counts. Long texts (logs, messages) are cut, because
// every feedback stays in the conversation of every later turn.
#pragma once

#include "compile/triton_gate.hpp"
#include "exec/check.hpp"
#include "exec/evaluation.hpp"
#include "frontend/frontend.hpp"
#include "store/enums.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ptxbench::agent {

inline constexpr std::size_t kMaxFeedbackLineChars = 400;

// Gate, build and static SASS report, for a check that stopped there (or the check part of an
// evaluation). A Triton check is its gate's report and, once the warm-up built the cubins, their
// SASS verdict.
std::string check_feedback(const exec::CheckReport& report);
// The Triton gate's report for the model: every finding, with its line quoted.
std::string triton_gate_feedback(const compile::TritonGateReport& report);

// The whole evaluation: check part, then GPU status, correctness, timing and dynamic verdict;
// says plainly when the GPU step did not run.
std::string evaluation_feedback(const exec::Evaluation& evaluation);

// When no candidate could be taken from the reply; the request names the language's fence.
std::string extraction_feedback(const util::Error& error, const frontend::Frontend& language);

// The opening of the feedback when the reply did not end as the model meant it — cut off at the
// output-token limit (`max_output_tokens` when the registry sets one), or empty; "" when
// complete.
std::string reply_end_note(store::ReplyEnd end, std::optional<std::int64_t> max_output_tokens);

// The closing line of an evaluated turn's feedback, as the original agent words it: a request
// to fix a wrong kernel, the speedup against `target` (nullopt: none) for a correct one, nothing
// for a build that could not run (static_only). The loop and the service's feedback share it.
std::string closing_line(store::TurnCategory category, std::optional<double> speedup,
                         std::optional<double> target);

// The speedup over the baseline when the evaluation passed and was timed.
std::optional<double> speedup_of(const exec::Evaluation& evaluation);

// `text` cut to `limit` characters with a marker saying how much was left out.
std::string clip(std::string_view text, std::size_t limit);

} // namespace ptxbench::agent
