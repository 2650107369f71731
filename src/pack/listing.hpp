// `ptxbench pack list`: every component and variant of the selected architectures with their
// approximate token counts (compose.hpp says how they are estimated) and, when the caller has
// the model's tokenizer, the variants' exact counts, as text or JSON.
#pragma once

#include "pack/manifest.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ptxbench::pack {

// The variant names a run accepts beside the manifest's own; agent/plan.cpp resolves them per
// problem and `pack show` explains them.
inline constexpr std::string_view kNoPackVariant = "none";     // no knowledge pack
inline constexpr std::string_view kDefaultVariant = "default"; // the problem kind's first
inline constexpr std::string_view kPaperVariants = "paper";    // the problem kind's variants

// Token counts from a model's own tokenizer (a serving engine's /tokenize endpoint, which the
// caller wraps: pack/ knows no HTTP), shown beside the approximate ones; `source` names it.
struct ExactTokens {
  std::function<util::Expected<std::int64_t>(std::string_view)> count;
  std::string source;
};

// `arch` empty: every architecture of the manifest; otherwise invalid_input if unknown. With
// `exact`, every variant's composed text is also counted by it (an error of the counter is
// the listing's error).
util::Expected<std::string> render_list_text(const Manifest& manifest, std::string_view arch,
                                             const ExactTokens* exact = nullptr);
util::Expected<std::string> render_list_json(const Manifest& manifest, std::string_view arch,
                                             const ExactTokens* exact = nullptr);

// What a run-only variant name (kNoPackVariant, kDefaultVariant, kPaperVariants) stands for,
// per problem kind, with the manifest's variants it picks; nothing for any other name.
std::optional<std::string> explain_run_only_variant(const Manifest& manifest,
                                                    std::string_view name);

} // namespace ptxbench::pack
