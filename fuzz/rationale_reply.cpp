// Reasoning-teacher replies (untrusted text from a remote model): <think> stripping and the
// <my_reasoning> extraction with its checks. Invariants beyond "no crash": an accepted monologue
// is within the limits and names none of the shown-kernel phrases; a refusal says why.
#include "adapt/rationale_prompt.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view reply(reinterpret_cast<const char*>(data), size);
  const ptxbench::adapt::RationaleLimits limits{4, 4096};
  auto rationale = ptxbench::adapt::extract_rationale(reply, limits);
  if (rationale) {
    if (rationale->reasoning.size() < limits.min_chars ||
        rationale->reasoning.size() > limits.max_chars)
      std::abort();
    if (rationale->reasoning.find("<think>") != std::string::npos &&
        reply.find("<think>") == std::string_view::npos)
      std::abort();
  } else if (rationale.error().message.empty()) {
    std::abort();
  }
  return 0;
}
