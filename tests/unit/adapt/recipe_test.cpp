#include "adapt/recipe.hpp"
#include "adapt_test_support.hpp"
#include "model/factory.hpp"
#include "model/registry.hpp"
#include "support/real_data.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>
#include <mutex>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;
using store::TurnCategory;

const fs::path kRecipes = fs::path(PTXBENCH_SOURCE_DIR) / ".." / "config" / "recipes";

TEST(Recipe, EveryShippedRecipeParsesAndMatchesTable10) {
  const std::vector<std::pair<std::string, bool>> expected{
      {"s0", false}, {"s1", false}, {"s2", false}, {"s3", false},
      {"s4", true},  {"s5", false}, {"s6", false}};
  for (const auto& [name, balanced] : expected) {
    auto recipe = load_recipe(kRecipes / (name + ".json"));
    ASSERT_TRUE(recipe) << recipe.error().message;
    EXPECT_EQ(recipe->name, name);
    EXPECT_EQ(recipe->kind, name == "s0" ? DatasetKind::kernelgen : DatasetKind::fixit);
    EXPECT_EQ(recipe->balance.has_value(), balanced) << name;
    EXPECT_EQ(recipe->build.max_tokens, 65536);
  }
}

TEST(Recipe, PlaceholderSourcesAreRefused) {
  auto recipe = load_recipe(kRecipes / "s4.json");
  ASSERT_TRUE(recipe);
  test_support::ScratchDir dir;
  ApproxTokenizer tokenizer;
  auto run = run_recipe(*recipe, dir.path(), tokenizer);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().message.find("placeholder"), std::string::npos) << run.error().message;
}

TEST(Recipe, FixitRunsCollectAndBalanceThenWaitsForRepair) {
  test_support::ScratchDir dir;
  {
    auto run = test::open_run(dir.path() / "run");
    test::add_trajectory(
        *run, test::key("mha_bwd_d128"),
        {test::failed(TurnCategory::compile, "a"), test::failed(TurnCategory::runtime, "b")});
  }
  auto recipe = load_recipe(kRecipes / "s4.json");
  ASSERT_TRUE(recipe);
  recipe->source.run_dirs = {dir.path() / "run"};
  ApproxTokenizer tokenizer;
  auto run = run_recipe(*recipe, dir.path() / "data", tokenizer);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->ran, (std::vector<std::string>{"collect", "balance"}));
  EXPECT_EQ(run->waiting_for, "repair");
  EXPECT_TRUE(fs::exists(dir.path() / "data/fixit/balance/selected.jsonl"));
}

// Kernels that say "fixed" are correct at speedup 0.2; everything else is wrong.
class FixedIsCorrect final : public agent::Executor {
public:
  util::Expected<agent::TurnResult> evaluate(const std::string& source, const suite::Problem&,
                                             compile::Arch) override {
    agent::TurnResult result;
    const bool fixed = source.find("fixed") != std::string::npos;
    result.category = fixed ? TurnCategory::correct : TurnCategory::numerical;
    if (fixed)
      result.speedup = 0.2;
    result.feedback = fixed ? "Evaluation results:\n" : "Evaluation FAILED:\n";
    result.evaluation.kernel_source = source;
    result.evaluation.speedup = result.speedup;
    return result;
  }
  std::string_view name() const override { return "fixed-is-correct"; }
};

// A registry of two replay models: "teacher" answers with a fixed kernel, "reasoner" with
// accepted rationales.
fs::path replay_registry(const fs::path& dir) {
  const std::string kernel = "#include <cuda_runtime.h>\n// fixed\n__global__ void k() {}\n"
                             "void run(cudaStream_t stream) { k<<<1, 1, 0, stream>>>(); }\n";
  const std::string rationale = "<my_reasoning>\nI start from the shapes: M = 8192, N = 7168. " +
                                std::string(300, 'r') + "\n</my_reasoning>\n";
  std::string teacher, reasoner;
  for (int i = 0; i < 4; ++i) {
    teacher += Json{{"text", "```cuda\n" + kernel + "```\n"}}.dump() + "\n";
    reasoner += Json{{"text", rationale}}.dump() + "\n";
  }
  EXPECT_TRUE(util::write_file_atomic(dir / "teacher.jsonl", teacher));
  EXPECT_TRUE(util::write_file_atomic(dir / "reasoner.jsonl", reasoner));
  const Json models{
      {"teacher", {{"provider", "replay"}, {"model", "replay"}, {"replay_file", "teacher.jsonl"}}},
      {"reasoner",
       {{"provider", "replay"}, {"model", "replay"}, {"replay_file", "reasoner.jsonl"}}}};
  EXPECT_TRUE(util::write_file_atomic(dir / "models.json", Json{{"models", models}}.dump()));
  return dir / "models.json";
}

TEST(Recipe, FixitRunsRepairAndSynthesizeWhenTheRecipeNamesATeacherAndAReasoner) {
  test_support::ScratchDir dir;
  {
    auto run = test::open_run(dir.path() / "run");
    test::add_trajectory(
        *run, test::key("gemm_n7168_k5120", 0, "none"),
        {test::failed(TurnCategory::compile, "a"), test::failed(TurnCategory::numerical, "b")});
  }
  auto registry = model::load_registry(replay_registry(dir.path()));
  ASSERT_TRUE(registry) << registry.error().message;
  auto recipe = parse_recipe(Json{{"name", "t"},
                                  {"kind", "fixit"},
                                  {"sources", {(dir.path() / "run").string()}},
                                  {"balance", {{"cap", 33}}},
                                  {"repair", {{"teacher", "teacher"}, {"turns", 2}}},
                                  {"synthesize", {{"reasoning_model", "reasoner"}}}});
  ASSERT_TRUE(recipe) << recipe.error().message;
  FixedIsCorrect executor;
  std::vector<std::string> called;
  ModelStages stages;
  stages.repair = [&](RepairOptions options) -> util::Status {
    called.push_back("repair " + options.teacher);
    options.jobs = 1;
    agent::RunDeps deps;
    deps.executor = &executor;
    deps.suite = &test_support::real_suite();
    deps.manifest = &test_support::real_manifest();
    deps.registry = &*registry;
    PTXBENCH_TRY_ASSIGN(auto result, run_repair(options, deps));
    EXPECT_EQ(result.summary.finished(), 2);
    return util::Ok{};
  };
  stages.synthesize = [&](SynthesizeOptions options) -> util::Status {
    called.push_back("synthesize " + options.reasoner);
    options.concurrency = 1;
    SynthesizeDeps deps;
    deps.registry = &*registry;
    PTXBENCH_TRY_ASSIGN(auto result, run_synthesize(options, deps));
    EXPECT_EQ(result.done, 2u);
    return util::Ok{};
  };
  ApproxTokenizer tokenizer;
  auto run = run_recipe(*recipe, dir.path() / "data", tokenizer, stages);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->ran, (std::vector<std::string>{"collect", "balance", "repair", "pairs",
                                                "synthesize", "build"}));
  EXPECT_FALSE(run->waiting_for);
  EXPECT_EQ(called, (std::vector<std::string>{"repair teacher", "synthesize reasoner"}));
  const std::string sft = test::read(dir.path() / "data/fixit/build/sft.jsonl");
  EXPECT_EQ(std::count(sft.begin(), sft.end(), '\n'), 2);
  EXPECT_NE(sft.find("// fixed"), std::string::npos);
  EXPECT_NE(sft.find("I start from the shapes"), std::string::npos);
}

TEST(Recipe, WithoutATeacherTheModelStagesAreNotCalled) {
  test_support::ScratchDir dir;
  {
    auto run = test::open_run(dir.path() / "run");
    test::add_trajectory(*run, test::key("gemm_n7168_k5120", 0, "none"),
                         {test::failed(TurnCategory::compile, "a")});
  }
  auto recipe = load_recipe(kRecipes / "s1.json"); // names a reasoner, no teacher
  ASSERT_TRUE(recipe);
  EXPECT_FALSE(recipe->repair);
  EXPECT_EQ(recipe->reasoning_model, "GLM-5.2");
  recipe->source.run_dirs = {dir.path() / "run"};
  recipe->source.problems.clear();
  ModelStages stages;
  bool called = false;
  stages.repair = [&](const RepairOptions&) -> util::Status {
    called = true;
    return util::Ok{};
  };
  ApproxTokenizer tokenizer;
  auto run = run_recipe(*recipe, dir.path() / "data", tokenizer, stages);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_FALSE(called);
  EXPECT_EQ(run->waiting_for, "repair");
}

TEST(Recipe, RepairWithoutATeacherOrWithoutBalanceIsAnError) {
  auto recipe = parse_recipe(Json{{"kind", "fixit"}, {"repair", {{"turns", 3}}}});
  ASSERT_FALSE(recipe);
  EXPECT_NE(recipe.error().message.find("repair.teacher"), std::string::npos);
  auto unbalanced = parse_recipe(Json{{"kind", "fixit"}, {"repair", {{"teacher", "t"}}}});
  ASSERT_FALSE(unbalanced);
  EXPECT_NE(unbalanced.error().message.find("needs \"balance\""), std::string::npos);
}

TEST(Recipe, BadModeIsAnError) {
  auto recipe = parse_recipe(Json{{"kind", "fixit"}, {"pairs", {{"mode", "worst"}}}});
  ASSERT_FALSE(recipe);
  EXPECT_NE(recipe.error().message.find("pairs.mode"), std::string::npos);
}

// The error parse_recipe gives for the shipped s4 recipe with `patch` merged in, or "accepted".
std::string rejection(const Json& patch) {
  Json json = Json::parse(test::read(kRecipes / "s4.json"));
  json.merge_patch(patch);
  auto recipe = parse_recipe(json, "s4.json");
  if (recipe)
    return "accepted";
  EXPECT_EQ(recipe.error().kind, util::ErrorKind::invalid_input);
  return recipe.error().message;
}

TEST(Recipe, AStringCapIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"balance", {{"cap", "33"}}}}),
            "s4.json: $.balance.cap: expected an integer >= 1, got string");
}

TEST(Recipe, AStringBalanceSeedIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"balance", {{"seed", "0"}}}}),
            "s4.json: $.balance.seed: expected a non-negative 64-bit integer, got string");
}

TEST(Recipe, AStringMaxTurnIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"collect", {{"max_turn", "5"}}}}),
            "s4.json: $.collect.max_turn: expected an integer >= 1, got string");
}

TEST(Recipe, AStringMinSpeedupIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"pairs", {{"min_speedup", "1.0"}}}}),
            "s4.json: $.pairs.min_speedup: expected a number, got string");
}

TEST(Recipe, AStringRequireTargetIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"pairs", {{"require_target", "false"}}}}),
            "s4.json: $.pairs.require_target: expected a boolean, got string");
}

TEST(Recipe, ANumericPairModeIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"pairs", {{"mode", 3}}}}),
            "s4.json: $.pairs.mode: expected one of \"best\", \"latest\", \"all\", got integer");
}

TEST(Recipe, AStringMaxTokensIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"build", {{"max_tokens", "65536"}}}}),
            "s4.json: $.build.max_tokens: expected an integer >= 1, got string");
}

TEST(Recipe, AStringBuildSeedIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"build", {{"seed", "42"}}}}),
            "s4.json: $.build.seed: expected a non-negative 64-bit integer, got string");
}

TEST(Recipe, ANumericKindOrNameIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"kind", 1}}),
            "s4.json: $.kind: expected one of \"fixit\", \"kernelgen\", got integer");
  EXPECT_EQ(rejection({{"name", 4}}), "s4.json: $.name: expected a string, got integer");
}

TEST(Recipe, ANumericReasoningModelIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"synthesize", {{"reasoning_model", 5}}}}),
            "s4.json: $.synthesize.reasoning_model: expected a string, got integer");
}

TEST(Recipe, ANumericTeacherIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"repair", {{"teacher", 7}}}}),
            "s4.json: $.repair.teacher: expected a string, got integer");
}

TEST(Recipe, AStringRepairTurnsIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"repair", {{"teacher", "t"}, {"turns", "2"}}}}),
            "s4.json: $.repair.turns: expected an integer in [1, 2147483647], got string");
}

TEST(Recipe, AStringTargetSpeedupIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"repair", {{"teacher", "t"}, {"target_speedup", "0.15"}}}}),
            "s4.json: $.repair.target_speedup: expected a number, got string");
}

TEST(Recipe, AStageThatIsNotAnObjectIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"collect", 5}}), "s4.json: $.collect: expected an object, got integer");
  EXPECT_EQ(rejection({{"balance", true}}),
            "s4.json: $.balance: expected an object or null, got boolean");
}

TEST(Recipe, ASourceThatIsNotAStringIsRejectedNamingItsJsonPath) {
  EXPECT_EQ(rejection({{"sources", {"run", 1}}}),
            "s4.json: $.sources[1]: expected a string, got integer");
}

TEST(Recipe, AMisspeltSettingIsRejectedInsteadOfLeftAtItsDefault) {
  EXPECT_EQ(rejection({{"collect", {{"max_turns", 3}}}}),
            "s4.json: $.collect.max_turns: unknown key");
  EXPECT_EQ(rejection({{"balanse", {{"cap", 3}}}}), "s4.json: $.balanse: unknown key");
}

TEST(Recipe, ARecipeFileWithAStringCapNamesTheFileAndThePath) {
  test_support::ScratchDir dir;
  Json json = Json::parse(test::read(kRecipes / "s4.json"));
  json["balance"]["cap"] = "33";
  const fs::path path = dir.write("s4.json", json.dump());
  auto recipe = load_recipe(path);
  ASSERT_FALSE(recipe);
  EXPECT_EQ(recipe.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(recipe.error().message,
            path.string() + ": $.balance.cap: expected an integer >= 1, got string");
}

} // namespace
} // namespace ptxbench::adapt
