// Compile cache entries on disk (result.json and ptxas.json under the cache folder, which any
// process of the user, a crash mid-write or another build's format can leave behind): the whole
// input as each of the two files. Invariants beyond "no crash, no exception": a refusal is
// invalid_input naming the file and a JSON path ("$..."), so lookup() can count it as a miss;
// an accepted result.json writes back to a document that reads as the same result.
#include "compile/cache.hpp"
#include "compile/nvcc_log.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using namespace ptxbench;

constexpr std::string_view kOrigin = "fuzz/result.json: ";

bool says_where(const util::Error& error, std::string_view origin) {
  return error.kind == util::ErrorKind::invalid_input && error.message.starts_with(origin) &&
         std::string_view(error.message).substr(origin.size()).starts_with("$");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto result = compile::parse_cache_result(text, "fuzz/result.json");
  if (!result) {
    if (!says_where(result.error(), kOrigin))
      std::abort();
  } else {
    const util::Json written = compile::cache_result_json(*result);
    auto again = compile::parse_cache_result(written.dump(), "fuzz/result.json");
    if (!again || compile::cache_result_json(*again) != written)
      std::abort();
  }
  const util::Json json = util::Json::parse(text, nullptr, false);
  auto kernels = compile::kernels_from_json(json, "fuzz/ptxas.json");
  if (!kernels && !says_where(kernels.error(), "fuzz/ptxas.json: "))
    std::abort();
  return 0;
}
