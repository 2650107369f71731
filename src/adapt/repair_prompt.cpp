#include "adapt/repair_prompt.hpp"

#include "agent/prompt.hpp"
#include "compile/triton_abi.hpp"

#include <fmt/format.h>

namespace ptxbench::adapt {
namespace {

std::string_view trimmed_end(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

} // namespace

util::Expected<std::string> triton_repair_prompt(const suite::Problem& problem,
                                                 std::string_view wrong_kernel,
                                                 std::string_view error_log) {
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
      trimmed_end(agent::task_content(problem)), trimmed_end(wrong_kernel), trimmed_end(error_log),
      signature->pretty());
}

util::Expected<std::string> repair_prompt_for(compile::Language language,
                                              const suite::Problem& problem,
                                              std::string_view wrong_kernel,
                                              std::string_view error_log) {
  if (language == compile::Language::triton)
    return triton_repair_prompt(problem, wrong_kernel, error_log);
  return agent::repair_prompt(problem, wrong_kernel, error_log);
}

} // namespace ptxbench::adapt
