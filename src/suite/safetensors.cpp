#include "suite/safetensors.hpp"

#include "util/fs.hpp"

#include <cstring>
#include <fmt/core.h>
#include <map>
#include <nlohmann/json.hpp>

namespace ptxbench::suite {
namespace {

using Json = nlohmann::ordered_json;

const std::map<std::string, std::size_t, std::less<>>& dtype_bytes() {
  static const std::map<std::string, std::size_t, std::less<>> kBytes{
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  return kBytes;
}

util::Error bad(const std::string& origin, const std::string& what) {
  return util::make_error(util::ErrorKind::invalid_input,
                          fmt::format("{}: not a valid safetensors file: {}", origin, what));
}

std::uint64_t read_u64_le(std::string_view bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return value;
}

std::string u64_le(std::uint64_t value) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i)
    out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

util::Expected<SafetensorsTensor> decode_entry(const std::string& name, const Json& entry,
                                               std::string_view data, const std::string& origin) {
  if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
      !entry.contains("data_offsets"))
    return bad(origin, fmt::format("entry {} lacks dtype, shape or data_offsets", name));
  SafetensorsTensor tensor{
      name, entry["dtype"].get<std::string>(), entry["shape"].get<std::vector<std::int64_t>>(), {}};
  const auto size = dtype_bytes().find(tensor.dtype);
  if (size == dtype_bytes().end())
    return bad(origin, "unknown dtype " + tensor.dtype);
  const auto offsets = entry["data_offsets"].get<std::vector<std::uint64_t>>();
  std::uint64_t expected_bytes = size->second;
  for (std::int64_t dim : tensor.shape)
    expected_bytes *= static_cast<std::uint64_t>(dim);
  if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data.size() ||
      offsets[1] - offsets[0] != expected_bytes)
    return bad(origin, fmt::format("entry {} has data_offsets outside the data or not "
                                   "matching its shape",
                                   name));
  const auto* first = reinterpret_cast<const std::byte*>(data.data() + offsets[0]);
  tensor.data.assign(first, first + expected_bytes);
  return tensor;
}

util::Expected<SafetensorsTensor> decode_entry_checked(const std::string& name, const Json& entry,
                                                       std::string_view data,
                                                       const std::string& origin) {
  try {
    return decode_entry(name, entry, data, origin);
  } catch (const nlohmann::json::exception& e) {
    return bad(origin, fmt::format("entry {}: {}", name, e.what()));
  }
}

} // namespace

SafetensorsTensor make_i32_tensor(std::string name, const std::vector<std::int32_t>& values) {
  SafetensorsTensor tensor{std::move(name), "I32", {static_cast<std::int64_t>(values.size())}, {}};
  tensor.data.resize(values.size() * sizeof(std::int32_t));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto word = static_cast<std::uint32_t>(values[i]);
    for (std::size_t b = 0; b < 4; ++b)
      tensor.data[4 * i + b] = static_cast<std::byte>((word >> (8 * b)) & 0xFF);
  }
  return tensor;
}

util::Expected<std::vector<std::int32_t>> as_i32(const SafetensorsTensor& tensor) {
  if (tensor.dtype != "I32")
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("tensor {} is {}, not I32", tensor.name, tensor.dtype));
  std::vector<std::int32_t> values(tensor.data.size() / 4);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t word = 0;
    for (std::size_t b = 0; b < 4; ++b)
      word |= static_cast<std::uint32_t>(tensor.data[4 * i + b]) << (8 * b);
    values[i] = static_cast<std::int32_t>(word);
  }
  return values;
}

std::string encode_safetensors(const std::vector<SafetensorsTensor>& tensors) {
  Json header = Json::object();
  std::uint64_t offset = 0;
  for (const SafetensorsTensor& tensor : tensors) {
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + tensor.data.size()}}};
    offset += tensor.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out = u64_le(text.size()) + text;
  for (const SafetensorsTensor& tensor : tensors)
    out.append(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
  return out;
}

util::Expected<std::vector<SafetensorsTensor>> decode_safetensors(std::string_view bytes,
                                                                  const std::string& origin) {
  if (bytes.size() < 8)
    return bad(origin, "shorter than its 8-byte header length");
  const std::uint64_t header_bytes = read_u64_le(bytes);
  if (header_bytes > bytes.size() - 8)
    return bad(origin, "header length past the end");
  const Json header = Json::parse(bytes.substr(8, header_bytes), nullptr, false);
  if (!header.is_object())
    return bad(origin, "header is not a JSON object");
  const std::string_view data = bytes.substr(8 + header_bytes);
  std::vector<SafetensorsTensor> tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__")
      continue;
    PTXBENCH_TRY_ASSIGN(auto tensor, decode_entry_checked(name, entry, data, origin));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

util::Expected<std::vector<SafetensorsTensor>> read_safetensors(const std::filesystem::path& path) {
  PTXBENCH_TRY_ASSIGN(auto bytes, util::read_file(path));
  return decode_safetensors(bytes, path.string());
}

util::Expected<SafetensorsTensor> read_safetensors_tensor(const std::filesystem::path& path,
                                                          std::string_view key) {
  PTXBENCH_TRY_ASSIGN(auto tensors, read_safetensors(path));
  for (SafetensorsTensor& tensor : tensors)
    if (tensor.name == key)
      return std::move(tensor);
  return util::make_error(util::ErrorKind::not_found,
                          fmt::format("{}: no tensor named {}", path.string(), key));
}

} // namespace ptxbench::suite
