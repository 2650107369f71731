#include "cli/commands.hpp"
#include "pack/compose.hpp"
#include "pack/listing.hpp"
#include "pack/manifest.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <string>

namespace ptxbench::cli {
namespace {

struct PackOptions {
  std::string manifest;
  std::string arch;
  std::string variant;
  bool json = false;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
};

util::Expected<pack::Manifest> load(const PackOptions& options) {
  return pack::Manifest::load(options.manifest.empty() ? pack::Manifest::default_path()
                                                       : std::filesystem::path(options.manifest));
}

ExitCode list(const PackOptions& options, const pack::Manifest& manifest) {
  auto text = options.json ? pack::render_list_json(manifest, options.arch)
                           : pack::render_list_text(manifest, options.arch);
  if (!text) {
    fmt::print(stderr, "ptxbench pack list: {}\n", text.error().message);
    return ExitCode::usage;
  }
  fmt::print("{}", *text);
  return ExitCode::ok;
}

ExitCode show(const PackOptions& options, const pack::Manifest& manifest) {
  std::string arch = options.arch;
  if (arch.empty()) {
    // sm_90a when the variant has one, as every other command defaults to; else its only arch.
    const std::vector<std::string> arches = manifest.arches_of(options.variant);
    const bool hopper = std::find(arches.begin(), arches.end(), "sm_90a") != arches.end();
    if (hopper) arch = "sm_90a";
    else if (arches.size() != 1) {
      fmt::print(stderr, "ptxbench pack show: variant '{}' {}; pass --arch\n", options.variant,
                 arches.empty() ? "does not exist"
                                : fmt::format("exists for {}", fmt::join(arches, ", ")));
      return ExitCode::usage;
    } else {
      arch = arches.front();
    }
  }
  auto variant = manifest.variant(options.variant, arch);
  if (!variant) {
    fmt::print(stderr, "ptxbench pack show: {}\n", variant.error().message);
    return ExitCode::usage;
  }
  auto composed = pack::compose(manifest, **variant);
  if (!composed) {
    fmt::print(stderr, "ptxbench pack show: {}\n", composed.error().message);
    return ExitCode::usage;
  }
  fmt::print("{}", composed->text);
  fmt::print(stderr, "{} / {}: {} components, ~{} tokens, {} words ({})\n", arch, options.variant,
             composed->sections.size(), composed->size.approx_tokens, composed->size.words,
             pack::kTokenNote);
  return ExitCode::ok;
}

} // namespace

Action setup_pack(CLI::App& sub) {
  auto options = std::make_shared<PackOptions>();
  sub.require_subcommand(1);
  sub.add_option("--manifest", options->manifest,
                 "packs.json to read (default knowledge/packs.json)");
  options->list =
      sub.add_subcommand("list", "variants with their components and approximate tokens");
  options->list->add_option("--arch", options->arch, "only this architecture (sm_90a, sm_100a)");
  options->list->add_flag("--json", options->json, "print JSON instead of a table");
  options->show = sub.add_subcommand("show", "print a variant's composed prompt text");
  options->show->add_option("variant", options->variant, "variant name (see pack list)")
      ->required();
  options->show->add_option("--arch", options->arch,
                            "architecture of the variant (default: sm_90a where it has one)");
  return [options] {
    auto manifest = load(*options);
    if (!manifest) {
      fmt::print(stderr, "ptxbench pack: {}\n", manifest.error().message);
      return ExitCode::usage;
    }
    return options->show->parsed() ? show(*options, *manifest) : list(*options, *manifest);
  };
}

} // namespace ptxbench::cli
