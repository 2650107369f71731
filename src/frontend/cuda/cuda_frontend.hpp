// CUDA candidates (docs/abi.md): one .cu file defining `run` with the C ABI signature of
// compile/abi.hpp, taken from a ```cuda block (any of compile::kCudaLanguages), built by nvcc.
#pragma once

#include "frontend/frontend.hpp"

namespace ptxbench::frontend {

class CudaFrontend final : public Frontend {
public:
  std::string_view name() const override { return "cuda"; }
  util::Expected<compile::Extraction> extract(std::string_view reply) const override;
  std::string reply_request() const override;
  util::Expected<std::string> system_prompt(const suite::Problem& problem,
                                            std::string_view pack_text,
                                            compile::Arch arch) const override;
  // The original Fixit user prompt, word for word (its typos are data), with our ```cuda fence:
  // "Task:\n{task}\n\nKernel\n\n```cuda\n{kernel}\n```\nError Message\n\n{log}\nYour task is
  // to fix the CUDA kernel with the minimal change. ...".
  util::Expected<std::string> repair_prompt(std::string_view task, const suite::Problem& problem,
                                            std::string_view wrong_kernel,
                                            std::string_view error_log) const override;
  std::string_view base_variant() const override { return "base"; }
};

} // namespace ptxbench::frontend
