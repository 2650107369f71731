// The static check of a Triton candidate, as the evaluator runs it before the GPU step: the
// problem's `run` signature (compile/triton_abi.hpp) and the Triton gate (compile/
// triton_gate.hpp, Python's parser). A finding against other libraries or torch compute is
// banned_library, one against the file's syntax or form compile_error; the SASS report comes
// later, from the cubins Triton builds in the warm-up (exec/triton_cubins.hpp).
#pragma once

#include "compile/triton_gate.hpp"
#include "exec/check.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <string>

namespace ptxbench::exec {

// Errors only when no verdict exists (a definition without a usable signature, a gate that
// could not run); findings are a report.
util::Expected<CheckReport> check_triton(const compile::TritonGate& gate, const std::string& source,
                                         const suite::Problem& problem, compile::Arch arch);

} // namespace ptxbench::exec
