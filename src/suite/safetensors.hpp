// A minimal safetensors codec for the index blobs of the GQA workloads.
//
// Format: an 8-byte little-endian header length N, N bytes of JSON
//   {"<name>": {"dtype": "I32", "shape": [..], "data_offsets": [begin, end]}, ...}
// padded with spaces to a multiple of 8, then the raw little-endian tensor bytes; offsets are
// relative to the end of the header. An optional "__metadata__" entry maps strings to strings.
// The writer emits tensors in the given order, packed without gaps, so equal inputs give
// byte-identical files. The reader checks every offset against the file size and the dtype
// size times the shape.
#pragma once

#include "util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::suite {

struct SafetensorsTensor {
  std::string name;
  std::string dtype; // safetensors spelling: I32, I64, F32, BF16, F16, U8 ...
  std::vector<std::int64_t> shape;
  std::vector<std::byte> data;
};

SafetensorsTensor make_i32_tensor(std::string name, const std::vector<std::int32_t>& values);
// The tensor's values as int32; invalid_input unless its dtype is I32.
util::Expected<std::vector<std::int32_t>> as_i32(const SafetensorsTensor& tensor);

std::string encode_safetensors(const std::vector<SafetensorsTensor>& tensors);
// `origin` names the file in error messages.
util::Expected<std::vector<SafetensorsTensor>> decode_safetensors(std::string_view bytes,
                                                                  const std::string& origin);
util::Expected<std::vector<SafetensorsTensor>> read_safetensors(const std::filesystem::path& path);
util::Expected<SafetensorsTensor> read_safetensors_tensor(const std::filesystem::path& path,
                                                          std::string_view key);

} // namespace ptxbench::suite
