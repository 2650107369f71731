// The two fixed messages a trajectory opens with. The system prompt carries the instructions
// (one CUDA file defining `run` with the exact signature, destination-passing style, the given
// stream, no cuBLAS/cuDNN/CUTLASS), the knowledge-pack variant for the target architecture,
// the ABI signature and the target architecture line; the task prompt is the problem's
// definition JSON without its tags, then how the evaluator judges correctness for that problem
// (its tolerance and required matched ratio, read from suite::correctness_rule — the rule the
// evaluator applies — the NaN-filled outputs, the unchanged inputs, the re-checked timed call).
#pragma once

#include "compile/nvcc.hpp"
#include "pack/manifest.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>

namespace ptxbench::agent {

struct Prompts {
  std::string system;
  std::string task;
  std::string variant; // the knowledge-pack variant used ("" for none)
};

// `pack_text` may be empty (no knowledge pack).
std::string system_prompt(std::string_view signature, std::string_view pack_text,
                          compile::Arch arch);
std::string task_prompt(const suite::Problem& problem);

// The problem kind's first prompt variant in the manifest ("gemm-0"), else "base".
std::string default_variant(const pack::Manifest& manifest, const suite::Problem& problem);

// Both prompts; `variant` "none" leaves the knowledge pack out. `live_device` (may be empty) is
// the live parameters of the evaluating GPU (measure/live_device.hpp), appended to the
// knowledge pack. not_found for an unknown variant of `arch`.
util::Expected<Prompts> build_prompts(const suite::Problem& problem, compile::Arch arch,
                                      const pack::Manifest& manifest, std::string_view variant,
                                      std::string_view live_device = {});

} // namespace ptxbench::agent
