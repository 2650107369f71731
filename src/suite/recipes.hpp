// Which distribution feeds each input of a problem: the one table that says so.
//
// A workload names every input as random, scalar or safetensors (FlashInfer-Trace). "random"
// alone is not enough for ptxbench: the MHA backward problems need outlier-bearing ("spiky")
// Q, K, V, dO, and O and L that are the forward's outputs on those inputs, not noise. The
// recipe refines each random input; everything else follows the workload.
//
// from_forward inputs are a recipe, not data: the GPU evaluator runs the reference forward
// (forward_definition) on the generated Q, K, V and takes forward_output from its result. Host
// code never fills them.
#pragma once

#include "trace/schema.hpp"
#include "util/error.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ptxbench::suite {

// Persisted in problem listings; explicit values.
enum class Distribution : std::uint8_t {
  normal = 1,       // N(0, 1), the default for float tensors
  spiky = 2,        // N(0, 1) + N(0, 100) * Bernoulli(0.001)
  from_forward = 3, // an output of the reference forward on this problem's inputs
  blob = 4,         // a safetensors tensor named by the workload
  scalar = 5,       // a value given by the workload
};

struct DistributionInfo {
  Distribution distribution;
  std::string_view name;
};

inline constexpr std::array kDistributions{
    DistributionInfo{Distribution::normal, "normal"},
    DistributionInfo{Distribution::spiky, "spiky"},
    DistributionInfo{Distribution::from_forward, "from_forward"},
    DistributionInfo{Distribution::blob, "blob"},
    DistributionInfo{Distribution::scalar, "scalar"},
};

consteval bool distributions_complete() {
  for (std::size_t i = 0; i < kDistributions.size(); ++i)
    if (static_cast<std::size_t>(kDistributions[i].distribution) != i + 1)
      return false;
  return true;
}
static_assert(distributions_complete(), "kDistributions must list every Distribution in order");

constexpr std::string_view to_string(Distribution distribution) {
  return kDistributions[static_cast<std::size_t>(distribution) - 1].name;
}

// A row of the recipe table: inputs named `input` of definitions whose name starts with
// `definition_prefix` use `distribution`; from_forward rows also name the forward's output.
struct RecipeRow {
  std::string_view definition_prefix;
  std::string_view input;
  Distribution distribution;
  std::string_view forward_output;
};

inline constexpr std::array kRecipeRows{
    RecipeRow{"mha_bwd_", "Q", Distribution::spiky, ""},
    RecipeRow{"mha_bwd_", "K", Distribution::spiky, ""},
    RecipeRow{"mha_bwd_", "V", Distribution::spiky, ""},
    RecipeRow{"mha_bwd_", "dO", Distribution::spiky, ""},
    RecipeRow{"mha_bwd_", "O", Distribution::from_forward, "O"},
    RecipeRow{"mha_bwd_", "L", Distribution::from_forward, "LSE"},
};

struct InputRecipe {
  std::string input;
  Distribution distribution = Distribution::normal;
  std::uint32_t tensor_index = 0; // position in the definition's inputs; part of the RNG counter
  std::string forward_definition; // from_forward only: e.g. mha_with_lse_d128_causal
  std::string forward_output;     // from_forward only: e.g. LSE
};

// The recipe of one input. Random inputs of a non-float dtype have no recipe (invalid_input).
util::Expected<InputRecipe> recipe_for(const trace::Definition& definition,
                                       const trace::Workload& workload, std::string_view input);

// The forward definition whose outputs feed a backward problem ("mha_bwd_X" -> "mha_with_lse_X").
std::string forward_definition_of(std::string_view backward_name);

} // namespace ptxbench::suite
