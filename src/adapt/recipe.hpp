// Data recipes (the paper's Table 10: which runs, which problems, balanced or not, which
// template and reasoning model) as JSON files under config/recipes/, and `fixit all`, which
// runs a recipe's stages in order.
//
//   {"name": "s4", "label": "Qwen3.6-27B-s4", "kind": "fixit", "config": "8ops-Post-balanced",
//    "paper_records": 170, "sources": ["<run dir>"],
//    "collect": {"problems": [...], "variants": [...], "max_turn": 5, "include": []},
//    "balance": {"cap": 33, "seed": 0},           (null: not balanced)
//    "pairs": {"mode": "all", "require_target": false, "min_speedup": 0.0},
//    "repair": {"teacher": "gemini-3.1-pro-preview", "turns": 5, "target_speedup": 0.15},
//    "synthesize": {"reasoning_model": "GLM-5.2"},
//    "build": {"max_tokens": 65536, "seed": 42}}
//
// run_recipe runs collect and balance, then each later stage whose input is present: pairs
// once the repair stage has written DIR/fixit/repair/{tasks.jsonl,run}, build once
// DIR/<kind>/synthesize/rationales.jsonl exists. The repair and synthesize stages call models:
// a Fixit recipe that names a repair teacher ("repair" with "teacher"; null or absent: none;
// it needs "balance", whose selection the repair stage reads) and a reasoning model has them
// run from here too, through the caller's ModelStages (the cli
// builds the executor and the clients) — repair after balance, synthesize after pairs; without
// a teacher the result names the first stage still waiting for them, as before.
// Sources given on the command line replace the recipe's; a source still spelled "<...>" is an
// error, so a shipped recipe cannot run before its runs are named.
#pragma once

#include "adapt/balance.hpp"
#include "adapt/collect.hpp"
#include "adapt/dataset.hpp"
#include "adapt/pairs.hpp"
#include "adapt/repair.hpp"
#include "adapt/sft_build.hpp"
#include "adapt/synthesize.hpp"
#include "adapt/tokenizer.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::adapt {

// The recipe's repair teacher and its loop settings.
struct RecipeRepair {
  std::string teacher; // registry name
  int turns = 5;
  double target_speedup = 0.15;
};

struct Recipe {
  std::string name;
  DatasetKind kind = DatasetKind::fixit;
  SourceFilter source;
  std::vector<std::string> include;
  std::optional<BalanceOptions> balance;
  PairsOptions pairs;
  std::optional<RecipeRepair> repair;
  std::string reasoning_model; // "synthesize": {"reasoning_model": ...}; empty: none
  BuildOptions build;
};

// How the caller runs the model-calling stages; an error stops the recipe there (a rerun
// resumes the stage). A null function: that stage is not run from here.
struct ModelStages {
  std::function<util::Status(const RepairOptions&)> repair;
  std::function<util::Status(const SynthesizeOptions&)> synthesize;
};

// invalid_input naming `origin` and the JSON path of the first bad member ("s4.json:
// $.balance.cap: expected an integer >= 1, got string"); an unknown key is an error, so a
// misspelt setting is not silently left at its default.
util::Expected<Recipe> parse_recipe(const Json& json, const std::string& origin = "recipe");
util::Expected<Recipe> load_recipe(const std::filesystem::path& path);
// The recipe as a document that parse_recipe reads back as the same recipe.
Json to_json(const Recipe& recipe);

struct RecipeRun {
  std::vector<std::string> ran;           // stage names, in order
  std::vector<std::string> notes;         // warnings and what is still waiting
  std::optional<std::string> waiting_for; // the first stage not run ("repair", "synthesize")
};

util::Expected<RecipeRun> run_recipe(const Recipe& recipe, const std::filesystem::path& dir,
                                     Tokenizer& tokenizer, const ModelStages& stages = {});

} // namespace ptxbench::adapt
