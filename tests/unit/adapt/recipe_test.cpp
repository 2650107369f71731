#include "adapt/recipe.hpp"
#include "adapt_test_support.hpp"

#include <gtest/gtest.h>

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

TEST(Recipe, BadModeIsAnError) {
  auto recipe = parse_recipe(Json{{"kind", "fixit"}, {"pairs", {{"mode", "worst"}}}});
  ASSERT_FALSE(recipe);
  EXPECT_NE(recipe.error().message.find("pairs.mode"), std::string::npos);
}

} // namespace
} // namespace ptxbench::adapt
