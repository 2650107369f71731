#include "util/terminal.hpp"

namespace ptxbench::util {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_escape(std::string& out, std::string_view prefix, unsigned char value) {
  out += prefix;
  out += kHex[value >> 4];
  out += kHex[value & 0xf];
}

} // namespace

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
