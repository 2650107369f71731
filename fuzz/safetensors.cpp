// safetensors blobs (workload inputs named by definitions that may come from elsewhere): the
// header is untrusted JSON with offsets into the file. Invariants beyond "no crash, no
// exception": every tensor returned lies inside the input; a refusal is invalid_input naming
// the file and either the JSON path of the header field that is wrong or what is not valid.
#include "suite/safetensors.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

constexpr std::string_view kOrigin = "fuzz.safetensors: ";

bool says_where(const ptxbench::util::Error& error) {
  if (error.kind != ptxbench::util::ErrorKind::invalid_input || !error.message.starts_with(kOrigin))
    return false;
  const std::string_view why = std::string_view(error.message).substr(kOrigin.size());
  return why.starts_with("$") || why.starts_with("not a valid safetensors file: ");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensors = ptxbench::suite::decode_safetensors(bytes, "fuzz.safetensors");
  if (!tensors) {
    if (!says_where(tensors.error()))
      std::abort();
    return 0;
  }
  std::size_t total = 0;
  for (const auto& tensor : *tensors)
    total += tensor.data.size();
  if (total > size)
    std::abort();
  return 0;
}
