// The Fixit repair prompt per candidate language. CUDA failures get the original's prompt word
// for word (agent::repair_prompt); a Triton failure gets its parallel: the same "Task / Kernel /
// Error Message" layout with a ```python fence, "fix the Triton kernel with the minimal change",
// and the facts of the Triton pack a repair most often breaks — the DPS `run` with the problem's
// exact Python signature (compile/triton_abi.hpp), outputs written in place, every output
// computed by the file's own @triton.jit kernels, the gate's torch rule.
#pragma once

#include "compile/language.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>

namespace ptxbench::adapt {

// invalid_input when the problem's definition has no Triton signature.
util::Expected<std::string> triton_repair_prompt(const suite::Problem& problem,
                                                 std::string_view wrong_kernel,
                                                 std::string_view error_log);

// The repair prompt of a failed turn of `language`.
util::Expected<std::string> repair_prompt_for(compile::Language language,
                                              const suite::Problem& problem,
                                              std::string_view wrong_kernel,
                                              std::string_view error_log);

} // namespace ptxbench::adapt
