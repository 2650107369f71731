#include "adapt/recipe.hpp"

#include "util/fs.hpp"
#include "util/json_reader.hpp"

#include <array>
#include <climits>
#include <fmt/core.h>
#include <span>
#include <string_view>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

using util::Emptiness;
using util::JsonReader;
using util::key_path;

util::Error bad(const std::string& what) {
  return util::make_error(util::ErrorKind::invalid_input, "recipe: " + what);
}

constexpr std::array<std::string_view, 12> kRecipeKeys{
    "name",    "label",   "kind",  "config", "paper_records", "sources",
    "collect", "balance", "pairs", "repair", "synthesize",    "build"};
constexpr std::array<std::string_view, 4> kCollectKeys{"problems", "variants", "max_turn",
                                                       "include"};
constexpr std::array<std::string_view, 2> kBalanceKeys{"cap", "seed"};
constexpr std::array<std::string_view, 3> kPairsKeys{"mode", "require_target", "min_speedup"};
constexpr std::array<std::string_view, 3> kRepairKeys{"teacher", "turns", "target_speedup"};
constexpr std::array<std::string_view, 1> kSynthesizeKeys{"reasoning_model"};
constexpr std::array<std::string_view, 2> kBuildKeys{"max_tokens", "seed"};

// The member `key` of `object` as an object read through `read`, when present.
template <typename Read>
void read_section(JsonReader& in, const Json& object, std::string_view key,
                  std::span<const std::string_view> keys, Read read) {
  const Json* section = in.optional_object(object, "$", key);
  if (!section)
    return;
  const std::string path = key_path("$", key);
  in.allow_only(*section, path, keys);
  read(*section, path);
}

// A member that is an object or null; nullptr (and no error) when absent or null.
const Json* nullable_object(JsonReader& in, const Json& object, std::string_view key) {
  const Json* member = JsonReader::optional(object, key);
  if (!member || member->is_null())
    return nullptr;
  if (member->is_object())
    return member;
  in.fail(key_path("$", key),
          "expected an object or null, got " + std::string(member->type_name()));
  return nullptr;
}

std::optional<double> any_number(JsonReader& in, const Json& object, const std::string& path,
                                 std::string_view key) {
  const Json* member = JsonReader::optional(object, key);
  if (!member)
    return std::nullopt;
  double value = in.number_at(*member, key_path(path, key));
  return member->is_number() ? std::optional<double>(value) : std::nullopt;
}

void read_header(JsonReader& in, const Json& json, Recipe& r) {
  in.allow_only(json, "$", kRecipeKeys);
  r.name = in.optional_string(json, "$", "name", Emptiness::allowed).value_or("");
  (void)in.optional_string(json, "$", "label", Emptiness::allowed);
  (void)in.optional_string(json, "$", "config", Emptiness::allowed);
  (void)in.optional_integer(json, "$", "paper_records", 0);
  r.kind = in.optional_enumerator<DatasetKind, 2>(json, "$", "kind", to_string)
               .value_or(DatasetKind::fixit);
  for (const std::string& source : in.string_list(json, "$", "sources", Emptiness::rejected))
    r.source.run_dirs.emplace_back(source);
}

void read_collect(JsonReader& in, const Json& json, Recipe& r) {
  read_section(in, json, "collect", kCollectKeys, [&](const Json& c, const std::string& path) {
    r.source.problems = in.string_list(c, path, "problems", Emptiness::rejected);
    r.source.variants = in.string_list(c, path, "variants", Emptiness::rejected);
    r.include = in.string_list(c, path, "include", Emptiness::rejected);
    r.source.max_turn = in.optional_integer(c, path, "max_turn", 1);
  });
}

void read_balance(JsonReader& in, const Json& json, Recipe& r) {
  const Json* balance = nullable_object(in, json, "balance");
  if (!balance)
    return;
  const std::string path = key_path("$", "balance");
  in.allow_only(*balance, path, kBalanceKeys);
  r.balance = BalanceOptions{in.optional_integer(*balance, path, "cap", 1).value_or(33),
                             in.optional_unsigned(*balance, path, "seed").value_or(0)};
}

void read_pairs_section(JsonReader& in, const Json& json, Recipe& r) {
  read_section(in, json, "pairs", kPairsKeys, [&](const Json& p, const std::string& path) {
    r.pairs.mode =
        in.optional_enumerator<PairMode, 3>(p, path, "mode", to_string).value_or(PairMode::best);
    r.pairs.require_target = in.optional_boolean(p, path, "require_target").value_or(false);
    r.pairs.min_speedup = any_number(in, p, path, "min_speedup");
  });
}

void read_repair(JsonReader& in, const Json& json, Recipe& r) {
  const Json* repair = nullable_object(in, json, "repair");
  if (!repair)
    return;
  const std::string path = key_path("$", "repair");
  in.allow_only(*repair, path, kRepairKeys);
  RecipeRepair settings;
  settings.teacher = in.optional_string(*repair, path, "teacher", Emptiness::allowed).value_or("");
  settings.turns = static_cast<int>(
      in.optional_integer(*repair, path, "turns", util::IntegerRange{1, INT_MAX}).value_or(5));
  settings.target_speedup = any_number(in, *repair, path, "target_speedup").value_or(0.15);
  if (in.ok() && settings.teacher.empty())
    in.fail(key_path(path, "teacher"),
            "must name a model of the registry (or make \"repair\" null)");
  if (in.ok() && !r.balance)
    in.fail(path, "a recipe with a repair teacher needs \"balance\" (the repair stage reads "
                  "balance/selected.jsonl)");
  r.repair = settings;
}

void read_model_stages(JsonReader& in, const Json& json, Recipe& r) {
  read_section(
      in, json, "synthesize", kSynthesizeKeys, [&](const Json& s, const std::string& path) {
        r.reasoning_model =
            in.optional_string(s, path, "reasoning_model", Emptiness::allowed).value_or("");
      });
  read_section(in, json, "build", kBuildKeys, [&](const Json& b, const std::string& path) {
    r.build.max_tokens = in.optional_integer(b, path, "max_tokens", 1);
    r.build.seed = in.optional_unsigned(b, path, "seed").value_or(42);
  });
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
  PTXBENCH_TRY_ASSIGN(auto collected, collect_failures(options, dir));
  run.notes.insert(run.notes.end(), collected.warnings.begin(), collected.warnings.end());
  run.ran.emplace_back("collect");
  if (!recipe.balance)
    return util::Ok{};
  PTXBENCH_TRY(balance_failures(dir, *recipe.balance));
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
  PTXBENCH_TRY(stages.repair(options));
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
  PTXBENCH_TRY(stages.synthesize(options));
  run.ran.emplace_back("synthesize");
  return util::Ok{};
}

util::Status run_fixit(const Recipe& recipe, const fs::path& dir, Tokenizer& tokenizer,
                       const ModelStages& stages, RecipeRun& run) {
  PTXBENCH_TRY(run_fixit_collect(recipe, dir, run));
  PTXBENCH_TRY(run_fixit_repair(recipe, dir, stages, run));
  const fs::path repair = stage_dir(dir, DatasetKind::fixit, "repair");
  if (!present(repair / "tasks.jsonl") || !present(repair / "run")) {
    run.waiting_for = "repair";
    return util::Ok{};
  }
  PTXBENCH_TRY_ASSIGN(auto pairs, build_pairs(dir, recipe.pairs));
  run.notes.insert(run.notes.end(), pairs.warnings.begin(), pairs.warnings.end());
  run.ran.emplace_back("pairs");
  PTXBENCH_TRY(run_fixit_synthesize(recipe, dir, stages, run));
  if (!present(stage_dir(dir, DatasetKind::fixit, "synthesize") / "rationales.jsonl")) {
    run.waiting_for = "synthesize";
    return util::Ok{};
  }
  PTXBENCH_TRY(build_fixit(dir, recipe.build, tokenizer));
  run.ran.emplace_back("build");
  return util::Ok{};
}

util::Status run_kernelgen(const Recipe& recipe, const fs::path& dir, Tokenizer& tokenizer,
                           RecipeRun& run) {
  PTXBENCH_TRY_ASSIGN(auto collected, collect_correct(KernelGenCollectOptions{recipe.source}, dir));
  run.notes.insert(run.notes.end(), collected.warnings.begin(), collected.warnings.end());
  run.ran.emplace_back("collect");
  if (!present(stage_dir(dir, DatasetKind::kernelgen, "synthesize") / "rationales.jsonl")) {
    run.waiting_for = "synthesize";
    return util::Ok{};
  }
  PTXBENCH_TRY(build_kernelgen(dir, recipe.build, tokenizer));
  run.ran.emplace_back("build");
  return util::Ok{};
}

template <typename T> void put_optional(Json& object, const char* key, const std::optional<T>& v) {
  if (v)
    object[key] = *v;
}

Json collect_json(const Recipe& r) {
  Json collect{
      {"problems", r.source.problems}, {"variants", r.source.variants}, {"include", r.include}};
  put_optional(collect, "max_turn", r.source.max_turn);
  return collect;
}

Json balance_json(const Recipe& r) {
  return r.balance ? Json{{"cap", r.balance->cap}, {"seed", r.balance->seed}} : Json();
}

Json pairs_json(const Recipe& r) {
  Json pairs{{"mode", to_string(r.pairs.mode)}, {"require_target", r.pairs.require_target}};
  put_optional(pairs, "min_speedup", r.pairs.min_speedup);
  return pairs;
}

Json repair_json(const Recipe& r) {
  if (!r.repair)
    return Json();
  return Json{{"teacher", r.repair->teacher},
              {"turns", r.repair->turns},
              {"target_speedup", r.repair->target_speedup}};
}

Json build_json(const Recipe& r) {
  Json build{{"seed", r.build.seed}};
  put_optional(build, "max_tokens", r.build.max_tokens);
  return build;
}

} // namespace

util::Expected<Recipe> parse_recipe(const Json& json, const std::string& origin) {
  JsonReader in(origin);
  Recipe r;
  if (!in.expect_object(json, "$"))
    return in.finish(std::move(r));
  read_header(in, json, r);
  read_collect(in, json, r);
  read_balance(in, json, r);
  read_pairs_section(in, json, r);
  read_repair(in, json, r);
  read_model_stages(in, json, r);
  return in.finish(std::move(r));
}

util::Expected<Recipe> load_recipe(const fs::path& path) {
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return util::make_error(util::ErrorKind::invalid_input, path.string() + ": not JSON");
  return parse_recipe(json, path.string());
}

Json to_json(const Recipe& r) {
  std::vector<std::string> sources;
  for (const fs::path& dir : r.source.run_dirs)
    sources.push_back(dir.string());
  return Json{{"name", r.name},
              {"kind", to_string(r.kind)},
              {"sources", sources},
              {"collect", collect_json(r)},
              {"balance", balance_json(r)},
              {"pairs", pairs_json(r)},
              {"repair", repair_json(r)},
              {"synthesize", {{"reasoning_model", r.reasoning_model}}},
              {"build", build_json(r)}};
}

util::Expected<RecipeRun> run_recipe(const Recipe& recipe, const fs::path& dir,
                                     Tokenizer& tokenizer, const ModelStages& stages) {
  PTXBENCH_TRY(check_sources(recipe));
  RecipeRun run;
  PTXBENCH_TRY(recipe.kind == DatasetKind::fixit ? run_fixit(recipe, dir, tokenizer, stages, run)
                                                 : run_kernelgen(recipe, dir, tokenizer, run));
  return run;
}

} // namespace ptxbench::adapt
