// JSON text as the FlashInfer-Trace writers spell it.
//
// Problem: upstream files are written by pydantic (Rust serde_json underneath), and ptxbench
// should produce the same bytes so that files round-trip and diff cleanly. nlohmann's dump
// spells floats like printf ("1e-05", "1e+20") and throws on invalid UTF-8; pydantic writes
// the shortest round-trip digits laid out as the Rust `ryu` crate does ("1e-5" as "0.00001",
// 1e-7 as "1e-7", 1e20 as "1e20", 2.0 as "2.0").
//
// Approach: our own small serializer over nlohmann values. Floats: std::to_chars gives the
// shortest scientific digits; we lay them out by ryu's rules (fixed for decimal exponents in
// (-5, 16], scientific otherwise, no '+' and no zero padding in the exponent). Strings: `"`,
// `\` and control characters are escaped (\b \f \n \r \t, else \u00xx), everything else is
// written as UTF-8; invalid UTF-8 becomes U+FFFD so the output always parses. Non-finite
// floats are written as the strings "NaN"/"Infinity"/"-Infinity" (Correctness's convention;
// Performance never reaches here with one).
//
// Invariants: compact output has no whitespace; pretty output indents by 2 with ": " and
// one member per line, empty containers as {} and []; key order is the object's order.
#include "trace/json_io.hpp"
#include "util/json_number.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace ptxbench::trace {
namespace {

void append_exponent_form(std::string& out, std::string_view digits, int kk) {
  out += digits.front();
  if (digits.size() > 1) {
    out += '.';
    out.append(digits.substr(1));
  }
  out += 'e';
  out += std::to_string(kk - 1);
}

// ryu's layout of `digits` × 10^k, with kk = digits + k the position of the decimal point.
void append_layout(std::string& out, std::string_view digits, int k) {
  int n = static_cast<int>(digits.size());
  int kk = n + k;
  if (k >= 0 && kk <= 16) {
    out.append(digits);
    out.append(static_cast<std::size_t>(k), '0');
    out += ".0";
  } else if (kk > 0 && kk <= 16) {
    out.append(digits.substr(0, static_cast<std::size_t>(kk)));
    out += '.';
    out.append(digits.substr(static_cast<std::size_t>(kk)));
  } else if (kk > -5 && kk <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-kk), '0');
    out.append(digits);
  } else {
    append_exponent_form(out, digits, kk);
  }
}

void append_double(std::string& out, double value) {
  if (std::string_view spelling = util::nonfinite_spelling(value); !spelling.empty())
    return void(((out += '"') += spelling) += '"');
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, std::fabs(value),
                              std::chars_format::scientific);
  std::string_view text(buffer, static_cast<std::size_t>(result.ptr - buffer));
  std::size_t e = text.find('e');
  std::string digits(text.substr(0, e));
  if (digits.size() > 1)
    digits.erase(1, 1);
  int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  if (std::signbit(value))
    out += '-';
  append_layout(out, digits, exponent - static_cast<int>(digits.size()) + 1);
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
  unsigned char lead = byte(i);
  std::size_t n = lead < 0x80         ? 1
                  : lead >> 5 == 0x6  ? 2
                  : lead >> 4 == 0xE  ? 3
                  : lead >> 3 == 0x1E ? 4
                                      : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (std::size_t j = 1; j < n; ++j)
    if (byte(i + j) >> 6 != 0x2)
      return 0;
  if (n == 2 && lead < 0xC2)
    return 0;
  if (n == 3 && lead == 0xE0 && byte(i + 1) < 0xA0)
    return 0;
  if (n == 3 && lead == 0xED && byte(i + 1) >= 0xA0)
    return 0;
  if (n == 4 && (lead > 0xF4 || (lead == 0xF0 && byte(i + 1) < 0x90) ||
                 (lead == 0xF4 && byte(i + 1) >= 0x90)))
    return 0;
  return n;
}

void append_escaped_control(std::string& out, char c) {
  switch (c) {
  case '\b':
    out += "\\b";
    return;
  case '\f':
    out += "\\f";
    return;
  case '\n':
    out += "\\n";
    return;
  case '\r':
    out += "\\r";
    return;
  case '\t':
    out += "\\t";
    return;
  default:
    break;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  auto byte = static_cast<unsigned char>(c);
  out += "\\u00";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    char c = s[i];
    std::size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else if (c == '"' || c == '\\') {
      (out += '\\') += c;
      ++i;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      append_escaped_control(out, c);
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += '"';
}

class Writer {
public:
  explicit Writer(int indent) : m_indent(indent) {}
  std::string take() { return std::move(m_out); }
  void value(const Json& json, int depth);

private:
  void newline(int depth) {
    if (m_indent == 0)
      return;
    m_out += '\n';
    m_out.append(static_cast<std::size_t>(depth) * static_cast<std::size_t>(m_indent), ' ');
  }
  void object(const Json& json, int depth);
  void array(const Json& json, int depth);

  int m_indent;
  std::string m_out;
};

void Writer::object(const Json& json, int depth) {
  if (json.empty())
    return void(m_out += "{}");
  m_out += '{';
  bool first = true;
  for (const auto& [key, member] : json.items()) {
    if (!first)
      m_out += ',';
    first = false;
    newline(depth + 1);
    append_string(m_out, key);
    m_out += m_indent == 0 ? ":" : ": ";
    value(member, depth + 1);
  }
  newline(depth);
  m_out += '}';
}

void Writer::array(const Json& json, int depth) {
  if (json.empty())
    return void(m_out += "[]");
  m_out += '[';
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (i > 0)
      m_out += ',';
    newline(depth + 1);
    value(json[i], depth + 1);
  }
  newline(depth);
  m_out += ']';
}

void Writer::value(const Json& json, int depth) {
  switch (json.type()) {
  case Json::value_t::object:
    return object(json, depth);
  case Json::value_t::array:
    return array(json, depth);
  case Json::value_t::string:
    return append_string(m_out, json.get_ref<const std::string&>());
  case Json::value_t::boolean:
    m_out += json.get<bool>() ? "true" : "false";
    return;
  case Json::value_t::number_integer:
    m_out += std::to_string(json.get<std::int64_t>());
    return;
  case Json::value_t::number_unsigned:
    m_out += std::to_string(json.get<std::uint64_t>());
    return;
  case Json::value_t::number_float:
    return append_double(m_out, json.get<double>());
  default:
    m_out += "null";
    return;
  }
}

} // namespace

std::string dump_compact(const Json& json) {
  Writer writer(0);
  writer.value(json, 0);
  return writer.take();
}

std::string dump_pretty(const Json& json) {
  Writer writer(2);
  writer.value(json, 0);
  return writer.take();
}

} // namespace ptxbench::trace
