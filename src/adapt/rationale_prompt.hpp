// The prompts that ask a reasoning teacher for the rationale of a kernel, and the checks on its
// answer (the original's "00 synthesize" stage, §9.1 and §9.2 of the reference).
//
// The teacher sees what the student will see — the trajectory's system prompt and task prompt,
// for Fixit also the wrong kernel and its error — then the correct kernel under the heading
// "## Expert's Kernel", and is asked for the expert's first-person monologue as it was before
// the kernel was written: concrete numbers, alternatives, calculations, and never a word about
// the kernel it was shown, because in the training row the monologue precedes that kernel.
// Fixit uses prompt version v3_trajectory_adopted (10k-50k characters); KernelGen
// v1_correct_kernel_adopted ("Above you can see the Base Knowledge available to the
// Expert...", about 40,000 characters).
//
// The answer is kept only if, after removing <think>...</think> blocks, it holds
// <my_reasoning>...</my_reasoning> whose text is within the length limits and names none of
// kKernelMentions (case-insensitive): such a monologue would teach the student to refer to a
// kernel it is never given.
#pragma once

#include "adapt/records.hpp"
#include "util/error.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace ptxbench::adapt {

enum class RationaleKind : std::uint8_t { fixit = 1, kernelgen = 2 };
std::string_view to_string(RationaleKind kind); // "fixit" | "kernelgen"

inline constexpr std::string_view kFixitPromptVersion = "v3_trajectory_adopted";
inline constexpr std::string_view kKernelGenPromptVersion = "v1_correct_kernel_adopted";

// Phrases that give away the shown kernel, matched case-insensitively (’ read as ').
inline constexpr std::array<std::string_view, 5> kKernelMentions{
    "expert's kernel", "the given kernel", "the provided kernel", "provided solution",
    "given solution"};

struct RationalePrompt {
  std::string system;
  std::string user;
  std::string_view version;
};

RationalePrompt fixit_rationale_prompt(const PairRecord& pair);
RationalePrompt kernelgen_rationale_prompt(const CorrectRecord& correct);

struct RationaleLimits {
  std::size_t min_chars = 200;
  std::size_t max_chars = 190000;
};

struct Rationale {
  std::string reasoning; // inside <my_reasoning>, trimmed
  std::string thinking;  // the <think> blocks removed from the reply, if any
};

// bad_response saying why the reply is refused: no <my_reasoning> block, too short, too long,
// or naming the shown kernel (which phrase).
util::Expected<Rationale> extract_rationale(std::string_view reply, const RationaleLimits& limits);

} // namespace ptxbench::adapt
