#include "suite/safetensors.hpp"

#include "util/fs.hpp"
#include "util/json_reader.hpp"

#include <cstring>
#include <fmt/core.h>
#include <limits>
#include <map>

namespace ptxbench::suite {
namespace {

using Json = util::Json;

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

// The tensor `name` of the header at `path`; a field of the wrong type is recorded in `in`.
SafetensorsTensor read_entry(util::JsonReader& in, const std::string& name, const Json& entry,
                             const std::string& path, std::vector<std::uint64_t>& offsets) {
  SafetensorsTensor tensor{name, {}, {}, {}};
  if (!in.expect_object(entry, path))
    return tensor;
  tensor.dtype = in.string(entry, path, "dtype", util::Emptiness::rejected);
  if (const Json* shape = in.array_member(entry, path, "shape"))
    for (std::size_t i = 0; in.ok() && i < shape->size(); ++i)
      tensor.shape.push_back(
          in.integer_at((*shape)[i], util::index_path(util::key_path(path, "shape"), i),
                        util::IntegerRange{0, std::numeric_limits<std::int64_t>::max()}));
  if (const Json* range = in.array_member(entry, path, "data_offsets"))
    for (std::size_t i = 0; in.ok() && i < range->size(); ++i)
      offsets.push_back(
          in.unsigned_at((*range)[i], util::index_path(util::key_path(path, "data_offsets"), i)));
  return tensor;
}

util::Expected<SafetensorsTensor> decode_entry(const std::string& name, const Json& entry,
                                               std::string_view data, const std::string& origin) {
  util::JsonReader in(origin);
  std::vector<std::uint64_t> offsets;
  SafetensorsTensor tensor = read_entry(in, name, entry, util::key_path("$", name), offsets);
  if (!in.ok())
    return in.finish(std::move(tensor));
  const auto size = dtype_bytes().find(tensor.dtype);
  if (size == dtype_bytes().end())
    return bad(origin, "unknown dtype " + tensor.dtype);
  std::uint64_t expected_bytes = size->second;
  for (std::int64_t dim : tensor.shape)
    if (__builtin_mul_overflow(expected_bytes, static_cast<std::uint64_t>(dim), &expected_bytes))
      return bad(origin, fmt::format("entry {} has a shape too large", name));
  if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data.size() ||
      offsets[1] - offsets[0] != expected_bytes)
    return bad(origin, fmt::format("entry {} has data_offsets outside the data or not "
                                   "matching its shape",
                                   name));
  const auto* first = reinterpret_cast<const std::byte*>(data.data() + offsets[0]);
  tensor.data.assign(first, first + expected_bytes);
  return tensor;
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
    PTXBENCH_TRY_ASSIGN(auto tensor, decode_entry(name, entry, data, origin));
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
