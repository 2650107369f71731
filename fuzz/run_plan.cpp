// Run plans (a user's JSON config file): parse, and for accepted plans, serialise and parse
// again — the round trip must be accepted and stable.
#include "agent/plan.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptxbench::agent;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto plan = parse_plan(text, "fuzz/plan.json");
  if (!plan) {
    if (plan.error().message.empty())
      std::abort();
    return 0;
  }
  const std::string again = plan_to_json(*plan).dump();
  auto reparsed = parse_plan(again, "fuzz/plan.json");
  if (!reparsed || plan_to_json(*reparsed).dump() != again)
    std::abort();
  return 0;
}
