#include "adapt/rationale_prompt.hpp"

#include "util/strings.hpp"

#include <fmt/core.h>

namespace ptxbench::adapt {
namespace {

constexpr std::string_view kSystem =
    R"(You are a CUDA kernel optimization expert. You are shown what an Expert was given - the
instructions, the architecture knowledge and the task - and the kernel the Expert wrote. Your
job is to write the Expert's internal monologue: the first-person reasoning, as it happened
before the kernel was written, that leads to exactly that kernel. Write the whole monologue
inside <my_reasoning></my_reasoning> and nothing after the closing tag.)";

constexpr std::string_view kFixitTask =
    R"(# Your Task

Above you can see the Base Knowledge available to the Expert, the kernel the Expert wrote
first, the error message it got, and the Expert's Kernel, the corrected version. Write the
Expert's internal monologue, in the first person, as it was after reading the error message and
BEFORE writing the corrected kernel:
- between 10,000 and 50,000 characters;
- concrete numbers: shapes, tile sizes, bytes, registers, shared memory, instruction shapes,
  grid sizes;
- the alternatives considered and why they are rejected, with the calculations;
- what the error means, where in the first kernel it comes from, and how each change that the
  corrected kernel makes follows from that;
- never mention the Expert's Kernel, or a given or provided kernel or solution: the monologue
  must read as if the corrected kernel did not exist yet.
Write only the monologue, inside <my_reasoning></my_reasoning>; the kernel follows it.)";

constexpr std::string_view kKernelGenTask =
    R"(# Your Task

Above you can see the Base Knowledge available to the Expert and the Expert's Kernel.
Write the Expert's internal monologue, in the first person, as the Expert thinks
BEFORE writing the kernel:
- about 40,000 characters;
- concrete numbers: shapes, tile sizes, bytes, registers, shared memory, instruction shapes,
  grid sizes;
- the alternatives considered and why they are rejected, with the calculations;
- the reasoning must arrive at the design of the Expert's Kernel;
- never mention the Expert's Kernel, or a given or provided kernel or solution: the monologue
  must read as if the kernel did not exist yet.
Write only the monologue, inside <my_reasoning></my_reasoning>; the kernel follows it.)";

std::string fenced(std::string_view code) {
  std::string out = "```cuda\n" + std::string(code);
  if (out.back() != '\n')
    out += '\n';
  return out + "```\n";
}

std::string base_knowledge(std::string_view system, std::string_view task) {
  return fmt::format("# Base Knowledge\n\n## System Prompt\n\n{}\n\n## Task Prompt\n\n{}\n\n",
                     system, task);
}

std::string lower_ascii_quotes(std::string_view text) {
  std::string out = util::to_lower(text);
  for (std::size_t at = out.find("\xe2\x80\x99"); at != std::string::npos;
       at = out.find("\xe2\x80\x99", at))
    out.replace(at, 3, "'");
  return out;
}

// The reply without its <think>...</think> blocks (an unclosed one runs to the end; a closing
// tag without an opening one ends a block that began with the reply), and what they held.
Rationale split_thinking(std::string_view reply) {
  Rationale out;
  std::string text(reply);
  if (auto close = text.find("</think>");
      close != std::string::npos && text.find("<think>") > close) {
    out.thinking = text.substr(0, close);
    text.erase(0, close + 8);
  }
  for (auto open = text.find("<think>"); open != std::string::npos; open = text.find("<think>")) {
    auto close = text.find("</think>", open);
    const auto end = close == std::string::npos ? text.size() : close + 8;
    out.thinking +=
        text.substr(open + 7, (close == std::string::npos ? text.size() : close) - open - 7);
    text.erase(open, end - open);
  }
  out.reasoning = std::move(text);
  return out;
}

util::Error refused(std::string why) {
  return util::make_error(util::ErrorKind::bad_response, std::move(why));
}

} // namespace

std::string_view to_string(RationaleKind kind) {
  return kind == RationaleKind::fixit ? "fixit" : "kernelgen";
}

RationalePrompt fixit_rationale_prompt(const PairRecord& pair) {
  const FailureRecord& failure = pair.failure;
  std::string user = base_knowledge(failure.system_prompt, failure.task_prompt);
  user += "## The Expert's First Kernel\n\n" + fenced(failure.kernel_source) + "\n";
  user += "## Error Message\n\n" + failure.feedback + "\n\n";
  user += "## Expert's Kernel\n\n" + fenced(pair.repaired_kernel) + "\n";
  user += kFixitTask;
  return {std::string(kSystem), std::move(user), kFixitPromptVersion};
}

RationalePrompt kernelgen_rationale_prompt(const CorrectRecord& correct) {
  std::string user = base_knowledge(correct.system_prompt, correct.task_prompt);
  user += "## Expert's Kernel\n\n" + fenced(correct.kernel_source) + "\n";
  user += kKernelGenTask;
  return {std::string(kSystem), std::move(user), kKernelGenPromptVersion};
}

util::Expected<Rationale> extract_rationale(std::string_view reply, const RationaleLimits& limits) {
  Rationale split = split_thinking(reply);
  const std::string& text = split.reasoning;
  const auto open = text.find("<my_reasoning>");
  const auto close = open == std::string::npos ? open : text.find("</my_reasoning>", open);
  if (close == std::string::npos)
    return refused("the reply holds no <my_reasoning>...</my_reasoning> block");
  const std::size_t start = open + std::string_view("<my_reasoning>").size();
  std::string reasoning(util::trim(std::string_view(text).substr(start, close - start)));
  if (reasoning.size() < limits.min_chars || reasoning.size() > limits.max_chars)
    return refused(fmt::format("the monologue has {} characters, outside [{}, {}]",
                               reasoning.size(), limits.min_chars, limits.max_chars));
  const std::string lowered = lower_ascii_quotes(reasoning);
  for (std::string_view phrase : kKernelMentions)
    if (lowered.find(phrase) != std::string::npos)
      return refused(fmt::format("the monologue names the shown kernel (\"{}\")", phrase));
  return Rationale{std::move(reasoning), std::string(util::trim(split.thinking))};
}

} // namespace ptxbench::adapt
