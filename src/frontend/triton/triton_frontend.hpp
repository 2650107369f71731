// Triton candidates (docs/evaluation.md, "Triton candidates"): one Python file defining a
// destination-passing `run` on torch tensors (compile/triton_abi.hpp), taken from a ```python
// block, checked by the Triton gate and compiled by Triton on the evaluating GPU.
#pragma once

#include "frontend/frontend.hpp"

namespace ptxbench::frontend {

class TritonFrontend final : public Frontend {
public:
  std::string_view name() const override { return "triton"; }
  util::Expected<compile::Extraction> extract(std::string_view reply) const override;
  std::string reply_request() const override;
  util::Expected<std::string> system_prompt(const suite::Problem& problem,
                                            std::string_view pack_text,
                                            compile::Arch arch) const override;
  // The CUDA repair prompt's "Task / Kernel / Error Message" layout with a ```python fence, "fix
  // the Triton kernel with the minimal change", and the facts of the Triton pack a repair most
  // often breaks — the DPS `run` with the problem's exact Python signature, outputs written in
  // place, every output computed by the file's own @triton.jit kernels, the gate's torch rule.
  util::Expected<std::string> repair_prompt(std::string_view task, const suite::Problem& problem,
                                            std::string_view wrong_kernel,
                                            std::string_view error_log) const override;
  std::string_view base_variant() const override { return "triton-base"; }
};

} // namespace ptxbench::frontend
