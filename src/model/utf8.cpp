#include "model/utf8.hpp"

#include <cstdint>

namespace ptxbench::model {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence starting at `i`, or 0 when none starts there.
std::size_t valid_sequence_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  std::uint8_t lead = byte(i);
  if (lead < 0x80)
    return 1;
  std::size_t length = 0;
  std::uint32_t min = 0;
  std::uint32_t code = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, min = 0x80, code = lead & 0x1Fu;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, min = 0x800, code = lead & 0x0Fu;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, code = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > text.size())
    return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  return (code < min || code > 0x10FFFF || surrogate) ? 0 : length;
}

} // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = valid_sequence_length(text, i);
    if (length == 0)
      return false;
    i += length;
  }
  return true;
}

std::string sanitize_utf8(std::string_view text) {
  if (is_valid_utf8(text))
    return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  bool in_invalid_run = false;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = valid_sequence_length(text, i);
    if (length == 0) {
      if (!in_invalid_run)
        out += kReplacement;
      in_invalid_run = true;
      ++i;
      continue;
    }
    in_invalid_run = false;
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

} // namespace ptxbench::model
