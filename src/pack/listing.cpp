#include "pack/listing.hpp"

#include "pack/compose.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace ptxbench::pack {
namespace {

using util::Expected;

Expected<std::vector<std::string>> selected_arches(const Manifest& manifest,
                                                   std::string_view arch) {
  if (arch.empty())
    return manifest.arches();
  if (std::ranges::find(manifest.arches(), arch) == manifest.arches().end())
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("unknown arch '{}' (the manifest has: {})", arch,
                                        fmt::join(manifest.arches(), ", ")));
  return std::vector<std::string>{std::string(arch)};
}

bool in_arch(const Component& c, std::string_view arch) {
  return c.arch == arch || c.arch == kAnyArch;
}

// "base + sm90a.fa3_forward" for a variant that extends; the full list otherwise.
std::string recipe(const Variant& v) {
  std::vector<std::string> parts;
  if (!v.extends.empty())
    parts.push_back(v.extends);
  parts.insert(parts.end(), v.own.begin(), v.own.end());
  return fmt::format("{}", fmt::join(parts, " + "));
}

std::string group(std::size_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

// The exact-count column of a variant row ("" without a tokenizer).
Expected<std::string> exact_cell(const ExactTokens* exact, const Composition& composed) {
  if (exact == nullptr)
    return std::string();
  PTXBENCH_TRY_ASSIGN(auto counted, exact->count(composed.text));
  return fmt::format(" {:>8}", group(static_cast<std::size_t>(counted)));
}

Expected<std::string> arch_text(const Manifest& manifest, const std::string& arch,
                                const ExactTokens* exact) {
  std::string out = fmt::format("{} components\n  {:<30} {:<9} {:>8} {:>8}  {}\n", arch, "id",
                                "kind", "~tokens", "words", "file");
  for (const Component& c : manifest.components()) {
    if (!in_arch(c, arch))
      continue;
    PTXBENCH_TRY_ASSIGN(auto size, component_size(manifest, c));
    out += fmt::format("  {:<30} {:<9} {:>8} {:>8}  {}\n", c.id, info(c.kind).name,
                       group(size.approx_tokens), group(size.words), c.file.generic_string());
  }
  out += fmt::format("\n{} variants\n  {:<30} {:>8}{} {:>8}  {}\n", arch, "name", "~tokens",
                     exact ? fmt::format(" {:>8}", "tokens") : "", "words", "components");
  for (const Variant& v : manifest.variants()) {
    if (v.arch != arch)
      continue;
    PTXBENCH_TRY_ASSIGN(auto composed, compose(manifest, v));
    PTXBENCH_TRY_ASSIGN(auto cell, exact_cell(exact, composed));
    out += fmt::format("  {:<30} {:>8}{} {:>8}  {}\n", v.name, group(composed.size.approx_tokens),
                       cell, group(composed.size.words), recipe(v));
  }
  return out;
}

} // namespace

Expected<std::string> render_list_text(const Manifest& manifest, std::string_view arch,
                                       const ExactTokens* exact) {
  PTXBENCH_TRY_ASSIGN(auto arches, selected_arches(manifest, arch));
  std::string out = fmt::format("Knowledge-pack variants ({}).\n", kTokenNote);
  if (exact != nullptr)
    out += fmt::format("Column `tokens`: the variant's text counted by {}.\n", exact->source);
  for (const std::string& a : arches) {
    PTXBENCH_TRY_ASSIGN(auto text, arch_text(manifest, a, exact));
    out += "\n" + text;
  }
  return out;
}

Expected<std::string> render_list_json(const Manifest& manifest, std::string_view arch,
                                       const ExactTokens* exact) {
  PTXBENCH_TRY_ASSIGN(auto arches, selected_arches(manifest, arch));
  nlohmann::ordered_json doc;
  doc["token_estimate"] = kTokenNote;
  if (exact != nullptr)
    doc["tokens_from"] = exact->source;
  doc["arches"] = nlohmann::ordered_json::array();
  for (const std::string& a : arches) {
    nlohmann::ordered_json entry{{"arch", a},
                                 {"components", nlohmann::ordered_json::array()},
                                 {"variants", nlohmann::ordered_json::array()}};
    for (const Component& c : manifest.components()) {
      if (!in_arch(c, a))
        continue;
      PTXBENCH_TRY_ASSIGN(auto size, component_size(manifest, c));
      entry["components"].push_back({{"id", c.id},
                                     {"kind", info(c.kind).name},
                                     {"file", c.file.generic_string()},
                                     {"approx_tokens", size.approx_tokens},
                                     {"words", size.words},
                                     {"bytes", size.bytes}});
    }
    for (const Variant& v : manifest.variants()) {
      if (v.arch != a)
        continue;
      PTXBENCH_TRY_ASSIGN(auto composed, compose(manifest, v));
      nlohmann::ordered_json row{{"name", v.name},
                                 {"description", v.description},
                                 {"extends", v.extends},
                                 {"components", v.components},
                                 {"approx_tokens", composed.size.approx_tokens},
                                 {"words", composed.size.words},
                                 {"bytes", composed.size.bytes}};
      if (exact != nullptr) {
        PTXBENCH_TRY_ASSIGN(auto counted, exact->count(composed.text));
        row["tokens"] = counted;
      }
      entry["variants"].push_back(std::move(row));
    }
    doc["arches"].push_back(std::move(entry));
  }
  return doc.dump(2) + "\n";
}

std::optional<std::string> explain_run_only_variant(const Manifest& manifest,
                                                    std::string_view name) {
  if (name == kNoPackVariant)
    return fmt::format("'{}' is a run-only name: the prompt carries no knowledge pack, so there "
                       "is nothing to show\n",
                       name);
  if (name != kDefaultVariant && name != kPaperVariants)
    return std::nullopt;
  std::string out = fmt::format(
      "'{}' is a run-only name: each problem runs {} of its kind's variants (knowledge/packs.json "
      "\"problem_variants\"); show one with `ptxbench pack show VARIANT`\n",
      name, name == kDefaultVariant ? "the first" : "all");
  for (const auto& [kind, variants] : manifest.problem_variants()) {
    if (variants.empty())
      continue;
    out += fmt::format("  {:<14} {}\n", kind,
                       name == kDefaultVariant ? variants.front()
                                               : fmt::format("{}", fmt::join(variants, ", ")));
  }
  return out;
}

} // namespace ptxbench::pack
