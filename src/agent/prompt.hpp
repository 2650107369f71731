// The two fixed messages a trajectory opens with. The system prompt carries the instructions
// (one CUDA file defining `run` with the exact signature, destination-passing style, the given
// stream, no cuBLAS/cuDNN/CUTLASS), the knowledge-pack variant for the target architecture,
// the ABI signature and the target architecture line (for Triton: one Python file, the DPS
// `run` on torch tensors, the gate's rules, the Python signature); the task prompt is the problem's
// definition JSON without its tags, then how the evaluator judges correctness for that problem
// (its tolerance and required matched ratio, read from suite::correctness_rule — the rule the
// evaluator applies — the NaN-filled outputs, the unchanged inputs, the re-checked timed call).
// A repair trajectory (Fixit, the original's fix-kernel runs) opens with the same system prompt
// and the repair prompt instead of the task prompt: the task, a wrong kernel and the error the
// evaluator gave it.
#pragma once

#include "compile/language.hpp"
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
// The Triton form: one Python file, DPS `run` on torch tensors, the gate's rules, the Python
// signature of compile/triton_abi.hpp.
std::string triton_system_prompt(std::string_view signature, std::string_view pack_text,
                                 compile::Arch arch);
std::string task_prompt(const suite::Problem& problem);
// The task itself: the definition JSON (fenced, without tags) and the correctness section.
std::string task_content(const suite::Problem& problem);

// The original Fixit user prompt, word for word (its typos are data), with our ```cuda fence:
// "Task:\n{task}\n\nKernel\n\n```cuda\n{kernel}\n```\nError Message\n\n{log}\nYour task is
// to fix the CUDA kernel with the minimal change. ...". Final newlines of the kernel and the log
// and the task are dropped so each part sits on its own lines as in the original.
std::string repair_prompt(const suite::Problem& problem, std::string_view wrong_kernel,
                          std::string_view error_log);

// The Triton parallel of repair_prompt: the same "Task / Kernel / Error Message" layout with a
// ```python fence, "fix the Triton kernel with the minimal change", and the facts of the Triton
// pack a repair most often breaks — the DPS `run` with the problem's exact Python signature
// (compile/triton_abi.hpp), outputs written in place, every output computed by the file's own
// @triton.jit kernels, the gate's torch rule. invalid_input when the definition has no Triton
// signature.
util::Expected<std::string> triton_repair_prompt(const suite::Problem& problem,
                                                 std::string_view wrong_kernel,
                                                 std::string_view error_log);

// The repair prompt of a failed turn of `language` (a repair run's first user message).
util::Expected<std::string> repair_prompt_for(compile::Language language,
                                              const suite::Problem& problem,
                                              std::string_view wrong_kernel,
                                              std::string_view error_log);

// The problem kind's first prompt variant of `language` in the manifest ("gemm-0",
// "triton-gemm-0"), else "base" / "triton-base".
std::string default_variant(const pack::Manifest& manifest, const suite::Problem& problem,
                            compile::Language language = compile::Language::cuda);

// The variant of `arch`; not_found when absent, invalid_input when it is for another language.
util::Expected<const pack::Variant*> find_variant(const pack::Manifest& manifest,
                                                  std::string_view variant, compile::Arch arch,
                                                  compile::Language language);

// Both prompts; `variant` "none" leaves the knowledge pack out. `live_device` (may be empty) is
// the live parameters of the evaluating GPU (measure/live_device.hpp), appended to the
// knowledge pack. not_found for an unknown variant of `arch`; invalid_input for a variant of
// another language. `language` picks the instructions, the signature form and the fence.
util::Expected<Prompts> build_prompts(const suite::Problem& problem, compile::Arch arch,
                                      const pack::Manifest& manifest, std::string_view variant,
                                      std::string_view live_device = {},
                                      compile::Language language = compile::Language::cuda);

} // namespace ptxbench::agent
