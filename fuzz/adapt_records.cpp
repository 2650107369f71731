// Adaptation data files (JSONL records written by other stages, or edited by hand): each line
// parsed as every record kind (the notes records too). An accepted record must serialise and
// parse back to the same JSON; a rejected one must name the JSON path of what is wrong (its
// message starts with "$"). Recipes have their own target (recipe.cpp).
#include "adapt/records.hpp"
#include "adapt/repair_notes.hpp"
#include "util/strings.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using ptxbench::adapt::Json;

template <typename Parse> void round_trip(const Json& json, Parse parse) {
  auto record = parse(json);
  if (!record) {
    if (!record.error().message.starts_with("$"))
      std::abort();
    return;
  }
  const Json again = ptxbench::adapt::to_json(*record);
  auto reparsed = parse(again);
  if (!reparsed || ptxbench::adapt::to_json(*reparsed) != again)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptxbench::adapt;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const std::string& line : ptxbench::util::split_lines(text)) {
    const Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded())
      continue;
    round_trip(json, failure_from_json);
    round_trip(json, pair_from_json);
    round_trip(json, correct_from_json);
    round_trip(json, rationale_from_json);
    round_trip(json, repair_task_from_json);
    round_trip(json, notes_record_from_json);
    round_trip(json, trajectory_key_from_json);
  }
  return 0;
}
