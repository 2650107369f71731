// Adaptation recipes (a file users write, config/recipes/*.json): the whole input as one recipe.
// Invariants beyond "no crash, no exception": an accepted recipe keeps the reader's promises
// (a repair teacher comes with "balance", counts are at least 1) and writes back to a document
// that reads as the same recipe; a refused one names the JSON path of what is wrong.
#include "adapt/recipe.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using namespace ptxbench::adapt;

bool keeps_promises(const Recipe& r) {
  if (r.balance && r.balance->cap < 1)
    return false;
  if (r.repair && (r.repair->teacher.empty() || r.repair->turns < 1 || !r.balance))
    return false;
  return (!r.source.max_turn || *r.source.max_turn >= 1) &&
         (!r.build.max_tokens || *r.build.max_tokens >= 1);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return 0;
  auto recipe = parse_recipe(json, "");
  if (!recipe) {
    if (!recipe.error().message.starts_with("$"))
      std::abort();
    return 0;
  }
  if (!keeps_promises(*recipe))
    std::abort();
  const Json written = to_json(*recipe);
  auto again = parse_recipe(written, "");
  if (!again || to_json(*again) != written)
    std::abort();
  return 0;
}
