// safetensors blobs (workload inputs named by definitions that may come from elsewhere): the
// header is untrusted JSON with offsets into the file; every tensor returned must lie inside
// the input.
#include "suite/safetensors.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensors = ptxbench::suite::decode_safetensors(bytes, "fuzz.safetensors");
  if (!tensors)
    return 0;
  std::size_t total = 0;
  for (const auto& tensor : *tensors)
    total += tensor.data.size();
  if (total > size)
    std::abort();
  return 0;
}
