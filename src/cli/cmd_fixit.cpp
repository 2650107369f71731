#include "adapt/balance.hpp"
#include "adapt/bundle.hpp"
#include "adapt/collect.hpp"
#include "adapt/pairs.hpp"
#include "adapt/sft_build.hpp"
#include "cli/adapt_common.hpp"
#include "cli/commands.hpp"
#include "cli/tools.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct FixitCliOptions {
  CLI::App* collect = nullptr;
  CLI::App* balance = nullptr;
  CLI::App* pairs = nullptr;
  CLI::App* build = nullptr;
  CLI::App* stats = nullptr;
  CLI::App* bundle = nullptr;
  CLI::App* all = nullptr;
  RecipeCliOptions recipe;
  SourceCliOptions source;
  std::vector<std::string> include;
  std::string dir;
  std::int64_t cap = 33;
  std::uint64_t balance_seed = 0;
  std::string mode = "best";
  bool require_target = false;
  double min_speedup = -1;
  BuildCliOptions build_options;
  std::string bundle_out;
};

ExitCode run_collect(const FixitCliOptions& o) {
  adapt::FixitCollectOptions options;
  options.source = source_filter(o.source);
  for (const std::string& name : o.include) {
    const auto& optional = adapt::kOptionalFailureCategories;
    if (std::find(std::begin(optional), std::end(optional), name) == std::end(optional)) {
      fmt::print(stderr,
                 "ptxbench fixit collect: --include takes banned_library or extraction, "
                 "got {}\n",
                 name);
      return ExitCode::usage;
    }
    options.categories.push_back(name);
  }
  auto result = adapt::collect_failures(options, o.source.out);
  if (!result)
    return report_error("fixit collect", result.error());
  print_warnings("fixit collect", result->warnings);
  fmt::print("{} failures ({} failed turns) → {}\n", result->records, result->occurrences,
             result->records_file.string());
  return ExitCode::ok;
}

ExitCode run_balance(const FixitCliOptions& o) {
  auto result = adapt::balance_failures(o.dir, adapt::BalanceOptions{o.cap, o.balance_seed});
  if (!result)
    return report_error("fixit balance", result.error());
  fmt::print("{} of {} failures kept (cap {} per problem) → {}\n", result->kept, result->before,
             o.cap, result->selected_file.string());
  return ExitCode::ok;
}

ExitCode run_pairs(const FixitCliOptions& o) {
  auto mode = adapt::pair_mode_from_string(o.mode);
  if (!mode) {
    fmt::print(stderr, "ptxbench fixit pairs: --mode takes best, latest or all, got {}\n", o.mode);
    return ExitCode::usage;
  }
  adapt::PairsOptions options{*mode, o.require_target, std::nullopt};
  if (o.min_speedup >= 0)
    options.min_speedup = o.min_speedup;
  auto result = adapt::build_pairs(o.dir, options);
  if (!result)
    return report_error("fixit pairs", result.error());
  print_warnings("fixit pairs", result->warnings);
  fmt::print("{} pairs from {} of {} repair tasks → {}\n", result->pairs, result->repaired,
             result->tasks, result->pairs_file.string());
  return ExitCode::ok;
}

void add_stage_subcommands(CLI::App& sub, FixitCliOptions& o) {
  o.collect = sub.add_subcommand("collect", "failed counted turns of run stores → failures.jsonl");
  add_source_options(*o.collect, o.source);
  o.collect
      ->add_option("--include", o.include,
                   "also collect these categories: banned_library, extraction")
      ->delimiter(',');
  o.balance = sub.add_subcommand("balance", "per-problem cap, proportional by category × turn");
  o.balance->add_option("dir", o.dir, "the data set directory DIR")->required();
  o.balance->add_option("--cap", o.cap, "records kept per problem (default 33)")
      ->check(at_least(1));
  o.balance->add_option("--seed", o.balance_seed, "seed of the within-stratum order (default 0)");
  o.pairs = sub.add_subcommand("pairs", "failures joined with their repaired kernels");
  o.pairs->add_option("dir", o.dir, "the data set directory DIR")->required();
  o.pairs->add_option("--mode", o.mode, "best, latest or all repaired kernels per failure");
  o.pairs->add_flag("--require-target", o.require_target,
                    "only repaired kernels whose target instructions executed");
  o.pairs->add_option("--min-speedup", o.min_speedup, "only repaired kernels at least this fast");
  o.build = sub.add_subcommand("build", "SFT rows (sft.jsonl, messages.jsonl) from pairs");
  add_build_options(*o.build, o.build_options);
  o.stats = sub.add_subcommand("stats", "composition and reasoning-length tables (Markdown)");
  o.stats->add_option("dir", o.dir, "the data set directory DIR")->required();
  o.bundle = sub.add_subcommand("bundle", "a deterministic .tar.gz of the data set's files");
  o.bundle->add_option("dir", o.dir, "the data set directory DIR")->required();
  o.bundle->add_option("out", o.bundle_out, "the archive to write (OUT.tar.gz)")->required();
  o.all = sub.add_subcommand("all", "a recipe's stages in order, as far as their inputs exist");
  add_recipe_options(*o.all, o.recipe);
}

} // namespace

Action setup_fixit(CLI::App& sub) {
  auto o = std::make_shared<FixitCliOptions>();
  sub.require_subcommand(1);
  add_stage_subcommands(sub, *o);
  CLI::App* repair = sub.add_subcommand(
      "repair", "a teacher repairs the selected failures through the agent loop (resumable)");
  Action repair_stage = setup_fixit_repair(*repair);
  CLI::App* synthesize = sub.add_subcommand(
      "synthesize", "a reasoning teacher writes each repaired pair's rationale (resumable)");
  Action synthesize_stage = setup_fixit_synthesize(*synthesize);
  CLI::App* notes = sub.add_subcommand(
      "notes", "a reviewer writes each repaired pair's repair notes, the corpus of run --notes");
  Action notes_stage = setup_fixit_notes(*notes);
  return [o, repair, repair_stage, synthesize, synthesize_stage, notes, notes_stage] {
    if (repair->parsed())
      return repair_stage();
    if (synthesize->parsed())
      return synthesize_stage();
    if (notes->parsed())
      return notes_stage();
    if (o->collect->parsed())
      return run_collect(*o);
    if (o->balance->parsed())
      return run_balance(*o);
    if (o->pairs->parsed())
      return run_pairs(*o);
    if (o->build->parsed())
      return run_build("fixit build", o->build_options, adapt::build_fixit);
    if (o->all->parsed())
      return run_all("fixit all", o->recipe, adapt::DatasetKind::fixit);
    if (o->bundle->parsed())
      return run_bundle("fixit bundle", o->dir, o->bundle_out, adapt::DatasetKind::fixit);
    return run_stats("fixit stats", o->dir, adapt::DatasetKind::fixit);
  };
}

} // namespace ptxbench::cli
