// The two fixed messages a trajectory opens with. The system prompt is the candidate language's
// (frontend/frontend.hpp: its instructions, the signature in its form, the target architecture
// line) around the knowledge-pack variant for the target architecture; the task prompt is the
// problem's definition JSON without its tags, then how the evaluator judges correctness for that
// problem (its tolerance and required matched ratio, read from suite::correctness_rule — the rule
// the evaluator applies — the NaN-filled outputs, the unchanged inputs, the re-checked timed call).
// A repair trajectory (Fixit, the original's fix-kernel runs) opens with the same system prompt
// and the repair prompt instead of the task prompt: the task, a wrong kernel and the error the
// evaluator gave it.
#pragma once

#include "compile/nvcc.hpp"
#include "frontend/frontend.hpp"
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

std::string task_prompt(const suite::Problem& problem);
// The task itself: the definition JSON (fenced, without tags) and the correctness section.
std::string task_content(const suite::Problem& problem);

// The first user message of a repair trajectory (Fixit, the original's fix-kernel runs): the
// language's repair prompt (frontend.hpp) around task_content. invalid_input when the definition
// has no signature in the language.
util::Expected<std::string> repair_prompt(const frontend::Frontend& language,
                                          const suite::Problem& problem,
                                          std::string_view wrong_kernel,
                                          std::string_view error_log);

// The problem kind's first prompt variant of `language` in the manifest ("gemm-0",
// "triton-gemm-0"), else the language's base variant ("base", "triton-base").
std::string
default_variant(const pack::Manifest& manifest, const suite::Problem& problem,
                const frontend::Frontend& language = frontend::of(compile::Language::cuda));

// The variant of `arch`; not_found when absent, invalid_input when it is for another language.
util::Expected<const pack::Variant*> find_variant(const pack::Manifest& manifest,
                                                  std::string_view variant, compile::Arch arch,
                                                  const frontend::Frontend& language);

// Both prompts; `variant` "none" leaves the knowledge pack out. `live_device` (may be empty) is
// the live parameters of the evaluating GPU (measure/live_device.hpp), appended to the
// knowledge pack. not_found for an unknown variant of `arch`; invalid_input for a variant of
// another language. `language` gives the instructions, the signature form and the fence.
// `guidance` (may be empty) is the expert guidance (guidance.hpp), the knowledge section's last
// part under kGuidanceHeading, as the original appends its patch to the prompt tag's document.
util::Expected<Prompts>
build_prompts(const suite::Problem& problem, compile::Arch arch, const pack::Manifest& manifest,
              std::string_view variant, std::string_view live_device = {},
              const frontend::Frontend& language = frontend::of(compile::Language::cuda),
              std::string_view guidance = {});

} // namespace ptxbench::agent
