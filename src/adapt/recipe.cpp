#include "adapt/recipe.hpp"

#include "util/fs.hpp"

#include <fmt/core.h>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

util::Error bad(const std::string& what) {
  return util::make_error(util::ErrorKind::invalid_input, "recipe: " + what);
}

util::Expected<std::vector<std::string>> strings(const Json& object, const char* key) {
  std::vector<std::string> out;
  if (!object.contains(key))
    return out;
  if (!object[key].is_array())
    return bad(fmt::format("\"{}\" must be an array of strings", key));
  for (const Json& item : object[key]) {
    if (!item.is_string())
      return bad(fmt::format("\"{}\" must be an array of strings", key));
    out.push_back(item.get<std::string>());
  }
  return out;
}

util::Status parse_collect(const Json& json, Recipe& r) {
  auto sources = strings(json, "sources");
  PTXBENCH_TRY(sources);
  for (const std::string& s : *sources)
    r.source.run_dirs.emplace_back(s);
  const Json collect = json.value("collect", Json::object());
  auto problems = strings(collect, "problems");
  auto variants = strings(collect, "variants");
  auto include = strings(collect, "include");
  PTXBENCH_TRY(problems);
  PTXBENCH_TRY(variants);
  PTXBENCH_TRY(include);
  r.source.problems = *problems;
  r.source.variants = *variants;
  r.include = *include;
  if (collect.contains("max_turn") && collect["max_turn"].is_number_integer())
    r.source.max_turn = collect["max_turn"].get<std::int64_t>();
  return util::Ok{};
}

util::Status parse_stages(const Json& json, Recipe& r) {
  const Json balance = json.value("balance", Json());
  if (balance.is_object())
    r.balance = BalanceOptions{balance.value("cap", std::int64_t{33}),
                               balance.value("seed", std::uint64_t{0})};
  const Json pairs = json.value("pairs", Json::object());
  auto mode = pair_mode_from_string(pairs.value("mode", std::string("best")));
  if (!mode)
    return bad("pairs.mode must be best, latest or all");
  r.pairs.mode = *mode;
  r.pairs.require_target = pairs.value("require_target", false);
  if (pairs.contains("min_speedup") && pairs["min_speedup"].is_number())
    r.pairs.min_speedup = pairs["min_speedup"].get<double>();
  const Json repair = json.value("repair", Json());
  if (repair.is_object()) {
    const std::string teacher = repair.value("teacher", std::string());
    if (teacher.empty())
      return bad("repair.teacher must name a model of the registry (or make \"repair\" null)");
    r.repair =
        RecipeRepair{teacher, repair.value("turns", 5), repair.value("target_speedup", 0.15)};
    if (r.repair->turns < 1)
      return bad("repair.turns must be at least 1");
    if (!r.balance)
      return bad("a recipe with a repair teacher needs \"balance\" (the repair stage reads "
                 "balance/selected.jsonl)");
  } else if (!repair.is_null()) {
    return bad("\"repair\" must be an object or null");
  }
  r.reasoning_model =
      json.value("synthesize", Json::object()).value("reasoning_model", std::string());
  const Json build = json.value("build", Json::object());
  if (build.contains("max_tokens") && build["max_tokens"].is_number_integer())
    r.build.max_tokens = build["max_tokens"].get<std::int64_t>();
  r.build.seed = build.value("seed", std::uint64_t{42});
  return util::Ok{};
}

util::Status check_sources(const Recipe& recipe) {
  if (recipe.source.run_dirs.empty())
    return bad("no sources (give run directories)");
  for (const fs::path& dir : recipe.source.run_dirs)
    if (dir.string().starts_with("<"))
      return bad(fmt::format("source {} is a placeholder; name the run directories on the "
                             "command line",
                             dir.string()));
  return util::Ok{};
}

util::Status run_fixit_collect(const Recipe& recipe, const fs::path& dir, RecipeRun& run) {
  FixitCollectOptions options{recipe.source, {}};
  for (const std::string& name : recipe.include)
    options.categories.push_back(name);
  auto collected = collect_failures(options, dir);
  PTXBENCH_TRY(collected);
  run.notes.insert(run.notes.end(), collected->warnings.begin(), collected->warnings.end());
  run.ran.emplace_back("collect");
  if (!recipe.balance)
    return util::Ok{};
  auto balanced = balance_failures(dir, *recipe.balance);
  PTXBENCH_TRY(balanced);
  run.ran.emplace_back("balance");
  return util::Ok{};
}

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// The repair stage through the caller, when the recipe names a teacher.
util::Status run_fixit_repair(const Recipe& recipe, const fs::path& dir, const ModelStages& stages,
                              RecipeRun& run) {
  if (!recipe.repair || !stages.repair)
    return util::Ok{};
  RepairOptions options;
  options.data_dir = dir;
  options.teacher = recipe.repair->teacher;
  options.turns = recipe.repair->turns;
  options.target_speedup = recipe.repair->target_speedup;
  if (auto status = stages.repair(options); !status)
    return status;
  run.ran.emplace_back("repair");
  return util::Ok{};
}

// The synthesize stage through the caller, when the recipe names a teacher and a reasoner.
util::Status run_fixit_synthesize(const Recipe& recipe, const fs::path& dir,
                                  const ModelStages& stages, RecipeRun& run) {
  if (!recipe.repair || recipe.reasoning_model.empty() || !stages.synthesize)
    return util::Ok{};
  SynthesizeOptions options;
  options.data_dir = dir;
  options.kind = RationaleKind::fixit;
  options.reasoner = recipe.reasoning_model;
  if (auto status = stages.synthesize(options); !status)
    return status;
  run.ran.emplace_back("synthesize");
  return util::Ok{};
}

util::Status run_fixit(const Recipe& recipe, const fs::path& dir, Tokenizer& tokenizer,
                       const ModelStages& stages, RecipeRun& run) {
  if (auto status = run_fixit_collect(recipe, dir, run); !status)
    return status;
  if (auto status = run_fixit_repair(recipe, dir, stages, run); !status)
    return status;
  const fs::path repair = stage_dir(dir, DatasetKind::fixit, "repair");
  if (!present(repair / "tasks.jsonl") || !present(repair / "run")) {
    run.waiting_for = "repair";
    return util::Ok{};
  }
  auto pairs = build_pairs(dir, recipe.pairs);
  PTXBENCH_TRY(pairs);
  run.notes.insert(run.notes.end(), pairs->warnings.begin(), pairs->warnings.end());
  run.ran.emplace_back("pairs");
  if (auto status = run_fixit_synthesize(recipe, dir, stages, run); !status)
    return status;
  if (!present(stage_dir(dir, DatasetKind::fixit, "synthesize") / "rationales.jsonl")) {
    run.waiting_for = "synthesize";
    return util::Ok{};
  }
  auto built = build_fixit(dir, recipe.build, tokenizer);
  PTXBENCH_TRY(built);
  run.ran.emplace_back("build");
  return util::Ok{};
}

util::Status run_kernelgen(const Recipe& recipe, const fs::path& dir, Tokenizer& tokenizer,
                           RecipeRun& run) {
  auto collected = collect_correct(KernelGenCollectOptions{recipe.source}, dir);
  PTXBENCH_TRY(collected);
  run.notes.insert(run.notes.end(), collected->warnings.begin(), collected->warnings.end());
  run.ran.emplace_back("collect");
  if (!present(stage_dir(dir, DatasetKind::kernelgen, "synthesize") / "rationales.jsonl")) {
    run.waiting_for = "synthesize";
    return util::Ok{};
  }
  auto built = build_kernelgen(dir, recipe.build, tokenizer);
  PTXBENCH_TRY(built);
  run.ran.emplace_back("build");
  return util::Ok{};
}

} // namespace

util::Expected<Recipe> parse_recipe(const Json& json) {
  if (!json.is_object())
    return bad("expected a JSON object");
  Recipe r;
  r.name = json.value("name", std::string());
  const std::string kind = json.value("kind", std::string("fixit"));
  if (kind != "fixit" && kind != "kernelgen")
    return bad("kind must be fixit or kernelgen");
  r.kind = kind == "fixit" ? DatasetKind::fixit : DatasetKind::kernelgen;
  if (auto status = parse_collect(json, r); !status)
    return status.take_error();
  if (auto status = parse_stages(json, r); !status)
    return status.take_error();
  return r;
}

util::Expected<Recipe> load_recipe(const fs::path& path) {
  auto text = util::read_file(path);
  PTXBENCH_TRY(text);
  const Json json = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return util::make_error(util::ErrorKind::invalid_input, path.string() + ": not JSON");
  auto recipe = parse_recipe(json);
  if (!recipe)
    return util::make_error(util::ErrorKind::invalid_input,
                            path.string() + ": " + recipe.error().message);
  return recipe;
}

util::Expected<RecipeRun> run_recipe(const Recipe& recipe, const fs::path& dir,
                                     Tokenizer& tokenizer, const ModelStages& stages) {
  if (auto status = check_sources(recipe); !status)
    return status.take_error();
  RecipeRun run;
  auto status = recipe.kind == DatasetKind::fixit ? run_fixit(recipe, dir, tokenizer, stages, run)
                                                  : run_kernelgen(recipe, dir, tokenizer, run);
  PTXBENCH_TRY(status);
  return run;
}

} // namespace ptxbench::adapt
