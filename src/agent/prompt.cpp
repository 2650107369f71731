#include "agent/prompt.hpp"

#include "compile/abi.hpp"
#include "compile/extract.hpp"
#include "compile/nvcc.hpp"
#include "compile/triton_abi.hpp"
#include "pack/compose.hpp"
#include "pack/listing.hpp"
#include "suite/correctness.hpp"
#include "trace/json_io.hpp"

#include <fmt/core.h>

namespace ptxbench::agent {
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

// How the evaluator judges the problem's outputs (docs/evaluation.md §Correctness), with the
// numbers of the problem's suite::CorrectnessRule.
std::string correctness_section(const suite::Problem& problem) {
  const suite::CorrectnessRule rule = suite::correctness_rule(problem);
  const std::string share =
      rule.required_matched_ratio >= 1.0
          ? std::string("only if every element of every output passes (required matched ratio 1)")
          : fmt::format("if at most {:.3g} of its output elements fail (required matched ratio "
                        "1 - failed/elements >= {}): {}",
                        1.0 - rule.required_matched_ratio, rule.required_matched_ratio,
                        rule.reason);
  return fmt::format(
      "\n# How correctness is judged\n\n"
      "- Each output element x is compared with the reference y in float32: it fails iff "
      "|x - y| > atol and |x - y| > rtol * |y|, with atol = {:g} and rtol = {:g}.\n"
      "- An input set (several seeded ones are checked) passes {}. A NaN, or an infinity the "
      "reference does not have, always fails the set.\n"
      "- Outputs are filled with NaN before every call, so an element the kernel does not write "
      "fails.\n"
      "- Inputs must not be modified: they are checksummed around the calls, and a change is "
      "INCORRECT_NUMERICAL.\n"
      "- The timed calls rotate the input sets, and the output of any timed call may be "
      "checked under the same rule (which ones is drawn at random for each evaluation), so "
      "every call must compute the full result.\n",
      rule.atol, rule.rtol, share);
}

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

std::string_view without_final_newlines(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

} // namespace

std::string system_prompt(std::string_view signature, std::string_view pack_text,
                          compile::Arch arch) {
  std::string out = fmt::format(kInstructions, fmt::arg("fence", compile::kCodeFence));
  if (!pack_text.empty())
    out += fmt::format("\n\n# Architecture knowledge\n\n{}", pack_text);
  out += fmt::format("\n\n# Required signature\n\n{}\n{}\n```\n", compile::kCodeFence, signature);
  out += fmt::format("\nTarget architecture: {} (nvcc builds the file with {}).\n",
                     compile::to_string(arch), codegen_flags_text(arch));
  return out;
}

std::string triton_system_prompt(std::string_view signature, std::string_view pack_text,
                                 compile::Arch arch) {
  std::string out(kTritonInstructions);
  if (!pack_text.empty())
    out += fmt::format("\n\n# Architecture and Triton knowledge\n\n{}", pack_text);
  out += fmt::format("\n\n# Required signature\n\n```python\n{}\n```\n", signature);
  out += fmt::format("\nTarget architecture: {} (Triton compiles your kernels for it on the "
                     "evaluating GPU).\n",
                     compile::to_string(arch));
  return out;
}

std::string task_content(const suite::Problem& problem) {
  trace::Json json = trace::to_json(problem.definition);
  json.erase("tags");
  return "```json\n" + trace::dump_pretty(json) + "\n```\n" + correctness_section(problem);
}

std::string task_prompt(const suite::Problem& problem) {
  return "Implement this operator (FlashInfer-Trace definition):\n\n" + task_content(problem);
}

std::string repair_prompt(const suite::Problem& problem, std::string_view wrong_kernel,
                          std::string_view error_log) {
  return fmt::format("Task:\n{}\n\nKernel\n\n```cuda\n{}\n```\nError Message\n\n{}\n"
                     "Your task is to fix the CUDA kernel with the minimal change. The kernel "
                     "implements the given PyTorch reference.\n\n",
                     without_final_newlines(task_content(problem)),
                     without_final_newlines(wrong_kernel), without_final_newlines(error_log));
}

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
      without_final_newlines(task_content(problem)), without_final_newlines(wrong_kernel),
      without_final_newlines(error_log), signature->pretty());
}

util::Expected<std::string> repair_prompt_for(compile::Language language,
                                              const suite::Problem& problem,
                                              std::string_view wrong_kernel,
                                              std::string_view error_log) {
  if (language == compile::Language::triton)
    return triton_repair_prompt(problem, wrong_kernel, error_log);
  return repair_prompt(problem, wrong_kernel, error_log);
}

std::string default_variant(const pack::Manifest& manifest, const suite::Problem& problem,
                            compile::Language language) {
  std::string_view kind = suite::info(problem.kind).name;
  for (const auto& [name, variants] : manifest.problem_variants(compile::to_string(language)))
    if (name == kind && !variants.empty())
      return variants.front();
  return language == compile::Language::triton ? "triton-base" : "base";
}

util::Expected<const pack::Variant*> find_variant(const pack::Manifest& manifest,
                                                  std::string_view variant, compile::Arch arch,
                                                  compile::Language language) {
  auto found = manifest.variant(variant, compile::to_string(arch));
  PTXBENCH_TRY(found);
  if ((*found)->language != compile::to_string(language))
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("prompt variant '{}' is for {} candidates, not {} (see "
                                        "knowledge/packs.json)",
                                        variant, (*found)->language, compile::to_string(language)));
  return *found;
}

util::Expected<std::string> signature_text(const suite::Problem& problem,
                                           compile::Language language) {
  if (language == compile::Language::triton) {
    auto signature = compile::make_triton_signature(problem.definition);
    PTXBENCH_TRY(signature);
    return signature->pretty();
  }
  auto signature = compile::make_signature(problem.definition);
  PTXBENCH_TRY(signature);
  return signature->pretty();
}

util::Expected<Prompts> build_prompts(const suite::Problem& problem, compile::Arch arch,
                                      const pack::Manifest& manifest, std::string_view variant,
                                      std::string_view live_device, compile::Language language) {
  auto signature = signature_text(problem, language);
  PTXBENCH_TRY(signature);
  std::string pack_text;
  if (variant != pack::kNoPackVariant) {
    auto found = find_variant(manifest, variant, arch, language);
    PTXBENCH_TRY(found);
    auto composed = pack::compose(manifest, **found);
    PTXBENCH_TRY(composed);
    pack_text = std::move(composed->text);
    if (!live_device.empty())
      pack_text += "\n\n" + std::string(live_device);
  }
  std::string system = language == compile::Language::triton
                           ? triton_system_prompt(*signature, pack_text, arch)
                           : system_prompt(*signature, pack_text, arch);
  return Prompts{std::move(system), task_prompt(problem), std::string(variant)};
}

} // namespace ptxbench::agent
