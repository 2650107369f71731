// Options shared by `ptxbench fixit` and `ptxbench kernelgen`: the run-store filters of the
// collect stages, the build stage's tokenizer and limits, and how a stage's warnings print.
#pragma once

#include "adapt/collect.hpp"
#include "adapt/repair.hpp"
#include "adapt/sft_build.hpp"
#include "adapt/synthesize.hpp"
#include "adapt/tokenizer.hpp"
#include "cli/command.hpp"
#include "cli/run_job.hpp"
#include "model/http_transport.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ptxbench::cli {

struct SourceCliOptions {
  std::vector<std::string> run_dirs;
  std::vector<std::string> variants;
  std::vector<std::string> problems;
  std::int64_t max_turn = -1;
  bool strict = false;
  std::string out;
};
void add_source_options(CLI::App& sub, SourceCliOptions& o);
adapt::SourceFilter source_filter(const SourceCliOptions& o);

struct BuildCliOptions {
  std::string dir;
  std::int64_t max_tokens = 0; // 0: no limit
  std::uint64_t seed = 42;
  std::string tokenizer = "approx";
  std::string tokenizer_model;
  std::string tokenizer_api = "vllm";
};
void add_build_options(CLI::App& sub, BuildCliOptions& o);
adapt::BuildOptions build_options(const BuildCliOptions& o);

// The tokenizer `--tokenizer` names; `transport` must outlive it.
util::Expected<std::unique_ptr<adapt::Tokenizer>>
make_tokenizer(const BuildCliOptions& o, std::unique_ptr<model::HttpTransport>& transport);

void print_warnings(std::string_view command, const std::vector<std::string>& warnings);

// Runs a build with the tokenizer the options name and prints its summary.
ExitCode run_build(std::string_view command, const BuildCliOptions& o,
                   util::Expected<adapt::BuildResult> (*build)(const std::filesystem::path&,
                                                               const adapt::BuildOptions&,
                                                               adapt::Tokenizer&));

ExitCode run_stats(std::string_view command, const std::string& dir, adapt::DatasetKind kind);
struct RecipeCliOptions {
  std::string recipe;
  std::string dir;
  std::vector<std::string> run_dirs; // replace the recipe's sources when given
  BuildCliOptions build;             // only the tokenizer options are read
  std::string registry;              // the model stages' registry; empty: the shipped one
  std::vector<std::string> service;  // the repair stage's evaluation services
  bool static_only = false;          // the repair stage never runs the GPU step
  bool quiet = false;
};

// The repair stage as `fixit repair` runs it: the run environment (executor, clients), the
// run, its summary and exports on stdout. A Ctrl-C or SIGTERM caught by `signals` stops it
// resumable; the caller reads which from `signals`.
util::Expected<adapt::RepairResult> run_repair_stage(const adapt::RepairOptions& options,
                                                     GpuUse gpu, bool progress,
                                                     std::string_view command,
                                                     const StopSignals& signals);
// The synthesize stage as `fixit synthesize` runs it, with the registry at `registry_file`
// (empty: the shipped one); its counts on stdout. A stop caught by `signals` ends it with the
// rationales done so far kept; the caller reads which from `signals`.
util::Expected<adapt::SynthesizeResult>
run_synthesize_stage(const adapt::SynthesizeOptions& options, const std::string& registry_file,
                     bool progress, const StopSignals& signals);
void add_recipe_options(CLI::App& sub, RecipeCliOptions& o);
// Runs a recipe's stages (adapt/recipe.hpp); a recipe of the other kind is a usage error, and
// a model stage stopped by Ctrl-C or SIGTERM ends it with 130 or 143 (resumable).
ExitCode run_all(std::string_view command, const RecipeCliOptions& o, adapt::DatasetKind kind);

ExitCode run_bundle(std::string_view command, const std::string& dir, const std::string& out,
                    adapt::DatasetKind kind);

} // namespace ptxbench::cli
