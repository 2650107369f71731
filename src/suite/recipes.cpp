#include "suite/recipes.hpp"

#include <fmt/core.h>
#include <variant>

namespace ptxbench::suite {
namespace {

bool is_float(trace::DType dtype) {
  return dtype == trace::DType::float32 || dtype == trace::DType::float16 ||
         dtype == trace::DType::bfloat16;
}

const RecipeRow* find_row(std::string_view definition, std::string_view input) {
  for (const RecipeRow& row : kRecipeRows)
    if (definition.starts_with(row.definition_prefix) && row.input == input)
      return &row;
  return nullptr;
}

const trace::InputSpec* find_spec(const trace::Workload& workload, std::string_view input) {
  for (const auto& [name, spec] : workload.inputs)
    if (name == input)
      return &spec;
  return nullptr;
}

} // namespace

std::string forward_definition_of(std::string_view backward_name) {
  constexpr std::string_view kBackward = "mha_bwd_";
  if (!backward_name.starts_with(kBackward))
    return {};
  return "mha_with_lse_" + std::string(backward_name.substr(kBackward.size()));
}

util::Expected<InputRecipe> recipe_for(const trace::Definition& definition,
                                       const trace::Workload& workload, std::string_view input) {
  for (std::size_t index = 0; index < definition.inputs.size(); ++index) {
    const trace::TensorSpec& spec = definition.inputs[index];
    if (spec.name != input)
      continue;
    InputRecipe recipe{spec.name, Distribution::normal, static_cast<std::uint32_t>(index), {}, {}};
    const trace::InputSpec* given = find_spec(workload, input);
    if (given != nullptr && std::holds_alternative<trace::SafetensorsInput>(*given)) {
      recipe.distribution = Distribution::blob;
    } else if (given != nullptr && std::holds_alternative<trace::ScalarInput>(*given)) {
      recipe.distribution = Distribution::scalar;
    } else if (const RecipeRow* row = find_row(definition.name, input)) {
      recipe.distribution = row->distribution;
      if (row->distribution == Distribution::from_forward) {
        recipe.forward_definition = forward_definition_of(definition.name);
        recipe.forward_output = std::string(row->forward_output);
      }
    } else if (!is_float(spec.dtype) || spec.is_scalar()) {
      return util::make_error(util::ErrorKind::invalid_input,
                              fmt::format("{}: input {} is random but only float tensors can be "
                                          "generated; give it a blob or a scalar value",
                                          definition.name, input));
    }
    return recipe;
  }
  return util::make_error(util::ErrorKind::not_found,
                          fmt::format("{}: no input named {}", definition.name, input));
}

} // namespace ptxbench::suite
