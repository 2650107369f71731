#include "frontend/cuda/cuda_frontend.hpp"

#include "compile/abi.hpp"

#include <fmt/core.h>

namespace ptxbench::frontend {
namespace {

constexpr std::string_view kInstructions =
    R"(You are an expert CUDA engineer writing a high-performance kernel for one fixed problem.

Write ONE complete CUDA source file, in a single {fence} code block, that defines the host
function `run` with exactly the signature below (extern "C++", no other entry point):
- destination-passing style: outputs are preallocated device buffers; write results into them
  and allocate nothing per call that outlives the call;
- launch all work on the given `stream` and do not synchronize the device;
- hand-written kernels only: cuBLAS, cuBLASLt, cuDNN, CUTLASS/CuTe and other kernel libraries
  are forbidden and rejected before compilation;
- use the target architecture's tensor-core instructions (inline PTX is welcome).
After each attempt you get the compiler, correctness, timing and instruction-verdict results;
answer with a complete, improved file each time.)";

// The code-generation flags of the real build (compile::nvcc_flags): the optimization level,
// the language standard and the -gencode pair, as the system prompt states them.
std::string codegen_flags_text(compile::Arch arch) {
  const std::vector<std::string> flags = compile::nvcc_flags(arch);
  std::string out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const bool gencode = flags[i] == "-gencode" && i + 1 < flags.size();
    if (!gencode && !flags[i].starts_with("-O") && !flags[i].starts_with("-std="))
      continue;
    out += (out.empty() ? "" : " ") + flags[i];
    if (gencode)
      out += " " + flags[++i];
  }
  return out;
}

} // namespace

util::Expected<compile::Extraction> CudaFrontend::extract(std::string_view reply) const {
  return compile::extract_candidate(reply);
}

std::string CudaFrontend::reply_request() const {
  return fmt::format("Reply with one complete CUDA file in a single {} code block that defines "
                     "`run` with the exact signature given.",
                     compile::kCodeFence);
}

util::Expected<std::string> CudaFrontend::system_prompt(const suite::Problem& problem,
                                                        std::string_view pack_text,
                                                        compile::Arch arch) const {
  auto signature = compile::make_signature(problem.definition);
  PTXBENCH_TRY(signature);
  std::string out = fmt::format(kInstructions, fmt::arg("fence", compile::kCodeFence));
  if (!pack_text.empty())
    out += fmt::format("\n\n# Architecture knowledge\n\n{}", pack_text);
  out += fmt::format("\n\n# Required signature\n\n{}\n{}\n```\n", compile::kCodeFence,
                     signature->pretty());
  out += fmt::format("\nTarget architecture: {} (nvcc builds the file with {}).\n",
                     compile::to_string(arch), codegen_flags_text(arch));
  return out;
}

util::Expected<std::string> CudaFrontend::repair_prompt(std::string_view task,
                                                        const suite::Problem& /*problem*/,
                                                        std::string_view wrong_kernel,
                                                        std::string_view error_log) const {
  return fmt::format("Task:\n{}\n\nKernel\n\n```cuda\n{}\n```\nError Message\n\n{}\n"
                     "Your task is to fix the CUDA kernel with the minimal change. The kernel "
                     "implements the given PyTorch reference.\n\n",
                     without_final_newlines(task), without_final_newlines(wrong_kernel),
                     without_final_newlines(error_log));
}

} // namespace ptxbench::frontend
