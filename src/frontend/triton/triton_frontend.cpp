#include "frontend/triton/triton_frontend.hpp"

#include "compile/triton_abi.hpp"

#include <fmt/core.h>

namespace ptxbench::frontend {
namespace {

// The Triton instructions explain destination-passing style as the original's Triton prompt
// does: `run` gets inputs, then preallocated outputs, then variable axes, and returns nothing.
constexpr std::string_view kTritonInstructions =
    R"(You are an expert Triton engineer writing a high-performance GPU kernel for one fixed
problem.

Write ONE complete Python file, in a single ```python code block, that does `import triton`,
defines one or more `@triton.jit` kernels, and defines the host function `run` with exactly the
parameters below:
- destination-passing style: `run(<inputs>, <outputs>, <variable axes>)` receives every input,
  then every output, then the value of every variable axis, all positionally. The outputs are
  torch tensors already allocated on the GPU with the definition's shape and dtype (their
  contents are garbage: the evaluator fills them with NaN); write every element into them and
  return nothing. Never allocate or return new output tensors;
- inputs are read-only, contiguous torch tensors on the GPU in the definition's layout;
- all work is done by your Triton kernels, launched on torch's current stream; do not
  synchronize or create streams;
- no torch compute: the only torch calls allowed are `torch.cuda.*` and `torch.empty` inside
  the allocator function you give to `triton.set_allocator` (needed for tensor descriptors);
  no `@` operator, no matmul/mm/bmm/linear/softmax/einsum/conv/scaled_dot_product_attention
  calls, no CUTLASS, `import torch` only in that form, no `__import__`/`importlib`/`getattr`
  tricks. These are rejected before the GPU step, and a kernel in the call that Triton did not
  compile from your file is rejected by the evaluation;
- the first call compiles and autotunes (not timed); later calls must not recompile.
After each attempt you get the gate, correctness, timing and instruction-verdict results;
answer with a complete, improved file each time.)";

} // namespace

util::Expected<compile::Extraction> TritonFrontend::extract(std::string_view reply) const {
  return compile::extract_python_candidate(reply);
}

std::string TritonFrontend::reply_request() const {
  return fmt::format("Reply with one complete Python file in a single {} block that imports "
                     "triton, defines a @triton.jit kernel and `run` with the exact signature "
                     "given.",
                     compile::kPythonCodeFence);
}

util::Expected<std::string> TritonFrontend::system_prompt(const suite::Problem& problem,
                                                          std::string_view pack_text,
                                                          compile::Arch arch) const {
  auto signature = compile::make_triton_signature(problem.definition);
  PTXBENCH_TRY(signature);
  std::string out(kTritonInstructions);
  if (!pack_text.empty())
    out += fmt::format("\n\n# Architecture and Triton knowledge\n\n{}", pack_text);
  out += fmt::format("\n\n# Required signature\n\n```python\n{}\n```\n", signature->pretty());
  out += fmt::format("\nTarget architecture: {} (Triton compiles your kernels for it on the "
                     "evaluating GPU).\n",
                     compile::to_string(arch));
  return out;
}

util::Expected<std::string> TritonFrontend::repair_prompt(std::string_view task,
                                                          const suite::Problem& problem,
                                                          std::string_view wrong_kernel,
                                                          std::string_view error_log) const {
  auto signature = compile::make_triton_signature(problem.definition);
  PTXBENCH_TRY(signature);
  return fmt::format(
      "Task:\n{}\n\nKernel\n\n```python\n{}\n```\nError Message\n\n{}\n"
      "Your task is to fix the Triton kernel with the minimal change. The kernel implements the "
      "given PyTorch reference.\n\n"
      "Keep the host function in destination-passing style, exactly:\n\n```python\n{}\n```\n\n"
      "It receives the inputs, then the preallocated outputs, then the variable axes; it writes "
      "every element of every output in place and returns nothing. Every output is computed by "
      "the file's own `@triton.jit` kernels: no torch compute calls (only `torch.cuda.*`, and "
      "`torch.empty` inside the allocator given to `triton.set_allocator`), no `@` operator. "
      "Answer with the complete fixed file in one ```python block.\n\n",
      without_final_newlines(task), without_final_newlines(wrong_kernel),
      without_final_newlines(error_log), signature->pretty());
}

} // namespace ptxbench::frontend
