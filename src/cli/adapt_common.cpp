#include "cli/adapt_common.hpp"

#include "adapt/bundle.hpp"
#include "adapt/recipe.hpp"
#include "adapt/stats.hpp"
#include "adapt/stats_figure.hpp"
#include "cli/tools.hpp"

#include <fmt/core.h>

namespace ptxbench::cli {

void add_source_options(CLI::App& sub, SourceCliOptions& o) {
  sub.add_option("run_dirs", o.run_dirs, "run directories (each holds run.sqlite)")->required();
  sub.add_option("--out", o.out, "the data set directory DIR")->required();
  sub.add_option("--variant", o.variants, "only these prompt variants (repeatable)");
  sub.add_option("--problem", o.problems, "only these problems (repeatable)");
  sub.add_option("--max-turn", o.max_turn, "only turns with index < N")->check(at_least(1));
  sub.add_flag("--strict", o.strict,
               "refuse a run still being written instead of skipping its unfinished "
               "trajectories with a warning");
}

adapt::SourceFilter source_filter(const SourceCliOptions& o) {
  adapt::SourceFilter filter;
  for (const std::string& dir : o.run_dirs)
    filter.run_dirs.emplace_back(dir);
  filter.variants = o.variants;
  filter.problems = o.problems;
  if (o.max_turn > 0)
    filter.max_turn = o.max_turn;
  filter.unfinished = o.strict ? adapt::Unfinished::refuse : adapt::Unfinished::skip;
  return filter;
}

void add_build_options(CLI::App& sub, BuildCliOptions& o) {
  sub.add_option("dir", o.dir, "the data set directory DIR")->required();
  sub.add_option("--max-tokens", o.max_tokens, "drop rows longer than N tokens (default: keep all)")
      ->check(at_least(1));
  sub.add_option("--seed", o.seed, "shuffle seed (default 42)");
  sub.add_option("--tokenizer", o.tokenizer,
                 "approx (ceil(bytes/4), labelled approximate) or the URL of a serving engine "
                 "whose /tokenize counts tokens");
  sub.add_option("--tokenizer-model", o.tokenizer_model, "model name sent to the endpoint");
  sub.add_option("--tokenizer-api", o.tokenizer_api,
                 "endpoint dialect: vllm (also SGLang), llamacpp or llama-cpp-python (its "
                 "/extras/tokenize; default vllm)");
}

adapt::BuildOptions build_options(const BuildCliOptions& o) {
  adapt::BuildOptions options;
  if (o.max_tokens > 0)
    options.max_tokens = o.max_tokens;
  options.seed = o.seed;
  return options;
}

util::Expected<std::unique_ptr<adapt::Tokenizer>>
make_tokenizer(const BuildCliOptions& o, std::unique_ptr<model::HttpTransport>& transport) {
  if (o.tokenizer == "approx")
    return std::unique_ptr<adapt::Tokenizer>(new adapt::ApproxTokenizer());
  if (!o.tokenizer.starts_with("http://") && !o.tokenizer.starts_with("https://"))
    return util::make_error(util::ErrorKind::invalid_input,
                            "--tokenizer: approx or an http(s) URL, got " + o.tokenizer);
  auto api = adapt::tokenize_api_from_string(o.tokenizer_api);
  if (!api)
    return util::make_error(util::ErrorKind::invalid_input,
                            "--tokenizer-api: vllm, llamacpp or llama-cpp-python, got " +
                                o.tokenizer_api);
  transport = model::make_curl_transport();
  return std::unique_ptr<adapt::Tokenizer>(
      new adapt::EndpointTokenizer(*transport, o.tokenizer, o.tokenizer_model, *api));
}

void print_warnings(std::string_view command, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings)
    fmt::print(stderr, "ptxbench {}: warning: {}\n", command, warning);
}

ExitCode run_build(std::string_view command, const BuildCliOptions& o,
                   util::Expected<adapt::BuildResult> (*build)(const std::filesystem::path&,
                                                               const adapt::BuildOptions&,
                                                               adapt::Tokenizer&)) {
  std::unique_ptr<model::HttpTransport> transport;
  auto tokenizer = make_tokenizer(o, transport);
  if (!tokenizer)
    return report_error(command, tokenizer.error());
  auto result = build(o.dir, build_options(o), **tokenizer);
  if (!result)
    return report_error(command, result.error());
  fmt::print("{} rows ({} dropped, token counts {}) → {}\n", result->rows, result->dropped,
             result->approximate_tokens ? "approximate" : "from the tokenizer endpoint",
             result->sft_file.string());
  return ExitCode::ok;
}

ExitCode run_stats(std::string_view command, const std::string& dir, adapt::DatasetKind kind) {
  auto text = adapt::render_stats(dir, kind);
  if (!text)
    return report_error(command, text.error());
  fmt::print("{}", *text);
  std::fflush(stdout);
  // The tables are the result; the figure is drawn where cairo is (a GPU image may lack it).
  auto figure = adapt::write_composition_figure(dir, kind);
  if (!figure && figure.error().kind == util::ErrorKind::not_found) {
    fmt::print(stderr, "{}: no composition figure: {}\n", command, figure.error().message);
    return ExitCode::ok;
  }
  if (!figure)
    return report_error(command, figure.error());
  fmt::print(stderr, "Composition figure: {}, {}\n", (*figure)[0].string(), (*figure)[1].string());
  return ExitCode::ok;
}

ExitCode run_bundle(std::string_view command, const std::string& dir, const std::string& out,
                    adapt::DatasetKind kind) {
  auto result = adapt::write_bundle(dir, kind, out);
  if (!result)
    return report_error(command, result.error());
  fmt::print("{} files → {} (sha256 {})\n", result->files, out, result->sha256);
  return ExitCode::ok;
}

void add_recipe_options(CLI::App& sub, RecipeCliOptions& o) {
  sub.add_option("--recipe", o.recipe, "a recipe (config/recipes/s0.json ... s6.json)")->required();
  sub.add_option("--out", o.dir, "the data set directory DIR")->required();
  sub.add_option("run_dirs", o.run_dirs, "run directories (replace the recipe's sources)");
  sub.add_option("--tokenizer", o.build.tokenizer, "approx or a /tokenize URL (see build)");
  sub.add_option("--tokenizer-model", o.build.tokenizer_model, "model name sent to the endpoint");
  sub.add_option("--tokenizer-api", o.build.tokenizer_api, "vllm, llamacpp or llama-cpp-python");
  sub.add_option(
      "--registry", o.registry,
      "model registry of the recipe's teacher and reasoner (default config/models.json)");
  sub.add_option("--service", o.service,
                 "run the repair stage's GPU step on evaluation service(s): URL[,URL]")
      ->delimiter(',');
  sub.add_flag("--static-only", o.static_only,
               "the repair stage never runs the GPU step (no repair is then correct)");
  sub.add_flag("--quiet", o.quiet, "no progress of the model stages");
}

namespace {

// The error that ends a recipe whose model stage a signal stopped, with the signal's exit code
// kept in `stopped`.
util::Error stopped_stage(const StopSignals& signals, std::optional<ExitCode>& stopped,
                          std::string_view stage) {
  stopped = signals.stopped_code();
  return util::make_error(util::ErrorKind::transport,
                          fmt::format("the {} stage was stopped by signal {}; run this again to "
                                      "resume it",
                                      stage, signals.received()));
}

// The recipe's repair and synthesize stages as their own subcommands run them; an unfinished
// stage stops the recipe (the same command resumes it), and a stopped one also sets `stopped`.
adapt::ModelStages model_stages(const RecipeCliOptions& o, std::string_view command,
                                std::optional<ExitCode>& stopped) {
  adapt::ModelStages stages;
  stages.repair = [&o, command, &stopped](adapt::RepairOptions options) -> util::Status {
    if (!o.registry.empty())
      options.registry = std::filesystem::absolute(o.registry);
    options.eval.service = o.service;
    StopSignals signals;
    PTXBENCH_TRY_ASSIGN(
        auto result, run_repair_stage(options, o.static_only ? GpuUse::never : GpuUse::when_present,
                                      !o.quiet, command, signals));
    if (signals.stopped_code())
      return stopped_stage(signals, stopped, "repair");
    if (result.summary.unfinished() > 0)
      return util::make_error(util::ErrorKind::transport, // model or evaluator kept failing
                              fmt::format("{} repairs stopped unfinished; run this again to "
                                          "resume them",
                                          result.summary.unfinished()));
    return util::Ok{};
  };
  stages.synthesize = [&o, &stopped](const adapt::SynthesizeOptions& options) -> util::Status {
    StopSignals signals;
    PTXBENCH_TRY_ASSIGN(auto result, run_synthesize_stage(options, o.registry, !o.quiet, signals));
    if (signals.stopped_code())
      return stopped_stage(signals, stopped, "synthesize");
    if (result.failed + result.left > 0)
      return util::make_error(util::ErrorKind::bad_response,
                              fmt::format("{} rationales failed or were not attempted; run this "
                                          "again to retry them",
                                          result.failed + result.left));
    return util::Ok{};
  };
  return stages;
}

} // namespace

ExitCode run_all(std::string_view command, const RecipeCliOptions& o, adapt::DatasetKind kind) {
  auto recipe = adapt::load_recipe(o.recipe);
  if (!recipe)
    return report_error(command, recipe.error());
  if (recipe->kind != kind)
    return report_error(command, util::make_error(util::ErrorKind::invalid_input,
                                                  o.recipe + " is a " +
                                                      std::string(adapt::to_string(recipe->kind)) +
                                                      " recipe"));
  if (!o.run_dirs.empty()) {
    recipe->source.run_dirs.clear();
    for (const std::string& dir : o.run_dirs)
      recipe->source.run_dirs.emplace_back(dir);
  }
  std::unique_ptr<model::HttpTransport> transport;
  auto tokenizer = make_tokenizer(o.build, transport);
  if (!tokenizer)
    return report_error(command, tokenizer.error());
  std::optional<ExitCode> stopped;
  auto run = adapt::run_recipe(*recipe, o.dir, **tokenizer, model_stages(o, command, stopped));
  if (!run) {
    const ExitCode code = report_error(command, run.error());
    return stopped.value_or(code);
  }
  print_warnings(command, run->notes);
  std::string ran;
  for (const std::string& stage : run->ran)
    ran += (ran.empty() ? "" : " → ") + stage;
  fmt::print("{}: ran {}\n", recipe->name, ran);
  if (run->waiting_for)
    fmt::print("next: the {} stage (ptxbench fixit {} / kernelgen {}), then run this again\n",
               *run->waiting_for, *run->waiting_for, *run->waiting_for);
  return ExitCode::ok;
}

} // namespace ptxbench::cli
