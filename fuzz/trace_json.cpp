// FlashInfer-Trace documents (definitions, workloads, solutions, traces from other tools and
// from the evaluation service): the JSON reader with NaN/Infinity tokens, then each document
// reader; an accepted trace is written back and must read again.
#include "trace/json_io.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptxbench::trace;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto json = parse_json_text(text, "fuzz.json");
  if (!json)
    return 0;
  (void)definition_from_json(*json, "fuzz");
  (void)workload_from_json(*json, "fuzz");
  (void)solution_from_json(*json, "fuzz");
  (void)evaluation_from_json(*json, "fuzz");
  auto trace = trace_from_json(*json, "fuzz");
  if (trace && (!trace->evaluation || check_writable(*trace->evaluation))) {
    if (!trace_from_json(to_json(*trace), "fuzz"))
      std::abort();
  }
  return 0;
}
