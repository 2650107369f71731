#include "adapt/collect.hpp"
#include "adapt/sft_build.hpp"
#include "cli/adapt_common.hpp"
#include "cli/commands.hpp"
#include "cli/tools.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct KernelGenCliOptions {
  CLI::App* collect = nullptr;
  CLI::App* build = nullptr;
  CLI::App* stats = nullptr;
  CLI::App* bundle = nullptr;
  std::string bundle_out;
  CLI::App* all = nullptr;
  RecipeCliOptions recipe;
  SourceCliOptions source;
  bool target_only = false;
  bool best_per_trajectory = false;
  std::string dir;
  BuildCliOptions build_options;
};

ExitCode run_collect(const KernelGenCliOptions& o) {
  adapt::KernelGenCollectOptions options;
  options.source = source_filter(o.source);
  if (o.target_only)
    options.target = adapt::TargetFilter::executed_only;
  if (o.best_per_trajectory)
    options.per_trajectory = adapt::PerTrajectory::best;
  auto result = adapt::collect_correct(options, o.source.out);
  if (!result)
    return report_error("kernelgen collect", result.error());
  print_warnings("kernelgen collect", result->warnings);
  fmt::print("{} correct kernels ({} correct turns) → {}\n", result->records, result->occurrences,
             result->records_file.string());
  return ExitCode::ok;
}

} // namespace

Action setup_kernelgen(CLI::App& sub) {
  auto o = std::make_shared<KernelGenCliOptions>();
  sub.require_subcommand(1);
  o->collect = sub.add_subcommand("collect", "correct counted turns of run stores → correct.jsonl");
  add_source_options(*o->collect, o->source);
  o->collect->add_flag("--target-only", o->target_only,
                       "only kernels whose target instructions executed (dynamic verdict)");
  o->collect->add_flag("--best-per-trajectory", o->best_per_trajectory,
                       "only the fastest correct kernel of each trajectory");
  o->build =
      sub.add_subcommand("build", "SFT rows (sft.jsonl, messages.jsonl) from correct kernels");
  add_build_options(*o->build, o->build_options);
  o->stats = sub.add_subcommand("stats", "composition and reasoning-length tables (Markdown)");
  o->stats->add_option("dir", o->dir, "the data set directory DIR")->required();
  o->bundle = sub.add_subcommand("bundle", "a deterministic .tar.gz of the data set's files");
  o->bundle->add_option("dir", o->dir, "the data set directory DIR")->required();
  o->bundle->add_option("out", o->bundle_out, "the archive to write (OUT.tar.gz)")->required();
  o->all = sub.add_subcommand("all", "a recipe's stages in order, as far as their inputs exist");
  add_recipe_options(*o->all, o->recipe);
  CLI::App* synthesize = sub.add_subcommand(
      "synthesize", "a reasoning teacher writes each correct kernel's rationale (resumable)");
  Action synthesize_stage = setup_kernelgen_synthesize(*synthesize);
  return [o, synthesize, synthesize_stage] {
    if (synthesize->parsed())
      return synthesize_stage();
    if (o->collect->parsed())
      return run_collect(*o);
    if (o->build->parsed())
      return run_build("kernelgen build", o->build_options, adapt::build_kernelgen);
    if (o->all->parsed())
      return run_all("kernelgen all", o->recipe, adapt::DatasetKind::kernelgen);
    if (o->bundle->parsed())
      return run_bundle("kernelgen bundle", o->dir, o->bundle_out, adapt::DatasetKind::kernelgen);
    return run_stats("kernelgen stats", o->dir, adapt::DatasetKind::kernelgen);
  };
}

} // namespace ptxbench::cli
