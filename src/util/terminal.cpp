#include "util/terminal.hpp"

namespace ptxbench::util {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_escape(std::string& out, std::string_view prefix, unsigned char value) {
  out += prefix;
  out += kHex[value >> 4];
  out += kHex[value & 0xf];
}

// The length of the well-formed UTF-8 sequence that starts at text[i] (2 to 4), or 0 when the
// bytes there are not one (a stray continuation byte, an overlong form, a surrogate, past
// U+10FFFF, or cut short).
std::size_t utf8_sequence_at(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xbf; // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    low = lead == 0xe0 ? 0xa0 : 0x80;
    high = lead == 0xed ? 0x9f : 0xbf;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    low = lead == 0xf0 ? 0x90 : 0x80;
    high = lead == 0xf4 ? 0x8f : 0xbf;
  }
  if (length == 0 || i + length > text.size())
    return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned byte = static_cast<unsigned char>(text[i + k]);
    if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xbf))
      return 0;
  }
  return length;
}

bool is_source_control(unsigned char byte) {
  return (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r' && byte != '\f' &&
          byte != '\v') ||
         byte == 0x7f;
}

} // namespace

double non_text_fraction(std::string_view text) {
  if (text.empty())
    return 0.0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      bad += is_source_control(byte) ? 1 : 0;
      ++i;
    } else if (const std::size_t length = utf8_sequence_at(text, i); length > 0) {
      i += length;
    } else {
      ++bad;
      ++i;
    }
  }
  return static_cast<double>(bad) / static_cast<double>(text.size());
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const unsigned next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0u;
    if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {
      append_escape(out, "\\u00", static_cast<unsigned char>(next));
      ++i;
    } else if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
      append_escape(out, "\\x", byte);
    } else {
      out += static_cast<char>(byte);
    }
  }
  return out;
}

} // namespace ptxbench::util
