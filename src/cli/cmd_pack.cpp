#include "cli/adapt_common.hpp"
#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "pack/compose.hpp"
#include "pack/listing.hpp"
#include "pack/manifest.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <memory>
#include <string>

namespace ptxbench::cli {
namespace {

struct PackOptions {
  std::string manifest;
  std::string arch;
  std::string variant;
  bool json = false;
  BuildCliOptions tokenizer; // only its tokenizer fields are used
  std::unique_ptr<model::HttpTransport> transport;
  std::unique_ptr<adapt::Tokenizer> counter;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
};

util::Expected<pack::Manifest> load(const PackOptions& options) {
  return pack::Manifest::load(options.manifest.empty() ? pack::Manifest::default_path()
                                                       : std::filesystem::path(options.manifest));
}

// The model's tokenizer when --tokenizer names an endpoint; nothing for the approximation
// every listing shows anyway.
util::Expected<std::optional<pack::ExactTokens>> exact_tokens(PackOptions& options) {
  if (options.tokenizer.tokenizer == "approx")
    return std::optional<pack::ExactTokens>();
  PTXBENCH_TRY_ASSIGN(auto made, make_tokenizer(options.tokenizer, options.transport));
  options.counter = std::move(made);
  adapt::Tokenizer* counter = options.counter.get();
  return std::optional<pack::ExactTokens>(
      pack::ExactTokens{[counter](std::string_view text) { return counter->count(text); },
                        "the tokenizer at " + options.tokenizer.tokenizer});
}

ExitCode list(PackOptions& options, const pack::Manifest& manifest) {
  auto exact = exact_tokens(options);
  if (!exact)
    return report_error("pack list", exact.error());
  const pack::ExactTokens* counter = *exact ? &**exact : nullptr;
  auto text = options.json ? pack::render_list_json(manifest, options.arch, counter)
                           : pack::render_list_text(manifest, options.arch, counter);
  if (!text) {
    fmt::print(stderr, "ptxbench pack list: {}\n", text.error().message);
    return ExitCode::usage;
  }
  fmt::print("{}", *text);
  return ExitCode::ok;
}

ExitCode show(PackOptions& options, const pack::Manifest& manifest) {
  if (auto explained = pack::explain_run_only_variant(manifest, options.variant)) {
    fmt::print("{}", *explained);
    return ExitCode::ok;
  }
  std::string arch = options.arch;
  if (arch.empty()) {
    // sm_90a when the variant has one, as every other command defaults to; else its only arch.
    const std::vector<std::string> arches = manifest.arches_of(options.variant);
    const bool hopper = std::find(arches.begin(), arches.end(), "sm_90a") != arches.end();
    if (hopper)
      arch = "sm_90a";
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
  auto exact = exact_tokens(options);
  if (!exact)
    return report_error("pack show", exact.error());
  std::string counted;
  if (*exact) {
    auto tokens = (*exact)->count(composed->text);
    if (!tokens)
      return report_error("pack show", tokens.error());
    counted = fmt::format("{} tokens by {}; ", *tokens, (*exact)->source);
  }
  fmt::print("{}", composed->text);
  fmt::print(stderr, "{} / {}: {} components, {}~{} tokens, {} words ({})\n", arch, options.variant,
             composed->sections.size(), counted, composed->size.approx_tokens, composed->size.words,
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
  for (CLI::App* command : {options->list, options->show}) {
    command->add_option("--tokenizer", options->tokenizer.tokenizer,
                        "approx (the default, ceil(bytes/4)) or the URL of the model server's "
                        "/tokenize, which counts every variant with the model's own tokenizer");
    command->add_option("--tokenizer-model", options->tokenizer.tokenizer_model,
                        "model name sent to the endpoint");
    command->add_option("--tokenizer-api", options->tokenizer.tokenizer_api,
                        "endpoint dialect: vllm (also SGLang), llamacpp or llama-cpp-python (its "
                        "/extras/tokenize; default vllm)");
  }
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
