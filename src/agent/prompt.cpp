#include "agent/prompt.hpp"

#include "agent/guidance.hpp"
#include "pack/compose.hpp"
#include "pack/listing.hpp"
#include "suite/correctness.hpp"
#include "trace/json_io.hpp"

#include <fmt/core.h>

namespace ptxbench::agent {
namespace {

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

} // namespace

std::string task_content(const suite::Problem& problem) {
  trace::Json json = trace::to_json(problem.definition);
  json.erase("tags");
  return "```json\n" + trace::dump_pretty(json) + "\n```\n" + correctness_section(problem);
}

std::string task_prompt(const suite::Problem& problem) {
  return "Implement this operator (FlashInfer-Trace definition):\n\n" + task_content(problem);
}

util::Expected<std::string> repair_prompt(const frontend::Frontend& language,
                                          const suite::Problem& problem,
                                          std::string_view wrong_kernel,
                                          std::string_view error_log) {
  return language.repair_prompt(task_content(problem), problem, wrong_kernel, error_log);
}

std::string default_variant(const pack::Manifest& manifest, const suite::Problem& problem,
                            const frontend::Frontend& language) {
  std::string_view kind = suite::info(problem.kind).name;
  for (const auto& [name, variants] : manifest.problem_variants(language.name()))
    if (name == kind && !variants.empty())
      return variants.front();
  return std::string(language.base_variant());
}

util::Expected<const pack::Variant*> find_variant(const pack::Manifest& manifest,
                                                  std::string_view variant, compile::Arch arch,
                                                  const frontend::Frontend& language) {
  PTXBENCH_TRY_ASSIGN(auto found, manifest.variant(variant, compile::to_string(arch)));
  if (found->language != language.name())
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("prompt variant '{}' is for {} candidates, not {} (see "
                                        "knowledge/packs.json)",
                                        variant, found->language, language.name()));
  return found;
}

util::Expected<Prompts> build_prompts(const suite::Problem& problem, compile::Arch arch,
                                      const pack::Manifest& manifest, std::string_view variant,
                                      std::string_view live_device,
                                      const frontend::Frontend& language,
                                      std::string_view guidance) {
  std::string pack_text;
  if (variant != pack::kNoPackVariant) {
    PTXBENCH_TRY_ASSIGN(auto found, find_variant(manifest, variant, arch, language));
    PTXBENCH_TRY_ASSIGN(auto composed, pack::compose(manifest, *found));
    pack_text = std::move(composed.text);
    if (!live_device.empty())
      pack_text += "\n\n" + std::string(live_device);
  }
  if (!guidance.empty())
    pack_text += (pack_text.empty() ? "" : "\n\n") + std::string(kGuidanceHeading) + "\n\n" +
                 std::string(guidance) + "\n";
  PTXBENCH_TRY_ASSIGN(auto system, language.system_prompt(problem, pack_text, arch));
  return Prompts{std::move(system), task_prompt(problem), std::string(variant)};
}

} // namespace ptxbench::agent
