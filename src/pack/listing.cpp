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

Expected<std::string> arch_text(const Manifest& manifest, const std::string& arch) {
  std::string out = fmt::format("{} components\n  {:<30} {:<9} {:>8} {:>8}  {}\n", arch, "id",
                                "kind", "~tokens", "words", "file");
  for (const Component& c : manifest.components()) {
    if (!in_arch(c, arch))
      continue;
    auto size = component_size(manifest, c);
    if (!size)
      return size.take_error();
    out += fmt::format("  {:<30} {:<9} {:>8} {:>8}  {}\n", c.id, info(c.kind).name,
                       group(size->approx_tokens), group(size->words), c.file.generic_string());
  }
  out += fmt::format("\n{} variants\n  {:<30} {:>8} {:>8}  {}\n", arch, "name", "~tokens", "words",
                     "components");
  for (const Variant& v : manifest.variants()) {
    if (v.arch != arch)
      continue;
    auto composed = compose(manifest, v);
    if (!composed)
      return composed.take_error();
    out += fmt::format("  {:<30} {:>8} {:>8}  {}\n", v.name, group(composed->size.approx_tokens),
                       group(composed->size.words), recipe(v));
  }
  return out;
}

} // namespace

Expected<std::string> render_list_text(const Manifest& manifest, std::string_view arch) {
  auto arches = selected_arches(manifest, arch);
  if (!arches)
    return arches.take_error();
  std::string out = fmt::format("Knowledge-pack variants ({}).\n", kTokenNote);
  for (const std::string& a : *arches) {
    auto text = arch_text(manifest, a);
    if (!text)
      return text.take_error();
    out += "\n" + *text;
  }
  return out;
}

Expected<std::string> render_list_json(const Manifest& manifest, std::string_view arch) {
  auto arches = selected_arches(manifest, arch);
  if (!arches)
    return arches.take_error();
  nlohmann::ordered_json doc;
  doc["token_estimate"] = kTokenNote;
  doc["arches"] = nlohmann::ordered_json::array();
  for (const std::string& a : *arches) {
    nlohmann::ordered_json entry{{"arch", a},
                                 {"components", nlohmann::ordered_json::array()},
                                 {"variants", nlohmann::ordered_json::array()}};
    for (const Component& c : manifest.components()) {
      if (!in_arch(c, a))
        continue;
      auto size = component_size(manifest, c);
      if (!size)
        return size.take_error();
      entry["components"].push_back({{"id", c.id},
                                     {"kind", info(c.kind).name},
                                     {"file", c.file.generic_string()},
                                     {"approx_tokens", size->approx_tokens},
                                     {"words", size->words},
                                     {"bytes", size->bytes}});
    }
    for (const Variant& v : manifest.variants()) {
      if (v.arch != a)
        continue;
      auto composed = compose(manifest, v);
      if (!composed)
        return composed.take_error();
      entry["variants"].push_back({{"name", v.name},
                                   {"description", v.description},
                                   {"extends", v.extends},
                                   {"components", v.components},
                                   {"approx_tokens", composed->size.approx_tokens},
                                   {"words", composed->size.words},
                                   {"bytes", composed->size.bytes}});
    }
    doc["arches"].push_back(std::move(entry));
  }
  return doc.dump(2) + "\n";
}

} // namespace ptxbench::pack
