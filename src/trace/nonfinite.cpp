// Reading JSON text that may hold bare NaN / Infinity / -Infinity tokens.
//
// Problem: pydantic writes Correctness's non-finite errors as strings, but accepts (and
// Python's json module writes) the bare tokens NaN, Infinity and -Infinity, which are not
// JSON; nlohmann rejects them.
//
// Approach: one pass over the text that tracks whether it is inside a string literal (with
// backslash escapes) and, outside strings only, wraps each of the three tokens in quotes when
// it stands alone (not part of a longer identifier). The schema readers then see the strings
// "NaN"/"Infinity"/"-Infinity", which they already accept case-insensitively. Outside string
// literals no valid JSON contains these letters, so the pass never changes the meaning of a
// valid document, and it cannot make an invalid one valid except by these tokens.
//
// Invariants: newlines are untouched, so parse-error line numbers stay right; columns are
// mapped back through the recorded insertions.
#include "trace/json_io.hpp"
#include "util/json_number.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ptxbench::trace {
namespace {

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string_view bare_token_at(std::string_view text, std::size_t i) {
  if (i > 0 && is_word_char(text[i - 1]))
    return {};
  for (std::string_view token : util::kNonFiniteSpellings) {
    if (text.substr(i, token.size()) != token)
      continue;
    std::size_t end = i + token.size();
    if (end < text.size() && is_word_char(text[end]))
      continue;
    return token;
  }
  return {};
}

struct Quoted {
  std::string text;
  std::vector<std::size_t> insertions; // offsets in `text` of each added quote
};

Quoted quote_bare_tokens(std::string_view text) {
  Quoted out;
  out.text.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    std::string_view token = in_string ? std::string_view() : bare_token_at(text, i);
    if (!token.empty()) {
      out.insertions.push_back(out.text.size());
      ((out.text += '"') += token) += '"';
      out.insertions.push_back(out.text.size() - 1);
      i += token.size() - 1;
      continue;
    }
    out.text += c;
    if (in_string && c == '\\' && i + 1 < text.size())
      out.text += text[++i];
    else if (c == '"')
      in_string = !in_string;
  }
  return out;
}

std::string position_text(std::string_view original, const Quoted& quoted, std::size_t byte) {
  std::size_t position = byte > 0 ? byte - 1 : 0;
  std::size_t shift = 0;
  for (std::size_t inserted : quoted.insertions)
    if (inserted < position)
      ++shift;
  std::size_t offset = std::min(position - std::min(shift, position), original.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (original[i] == '\n')
      ++line, line_start = i + 1;
  std::string column = "column " + std::to_string(offset - line_start + 1);
  if (original.find('\n') == std::string_view::npos)
    return column;
  return "line " + std::to_string(line) + ", " + column;
}

std::string parse_detail(const std::string& what) {
  std::size_t at = what.find("column ");
  std::size_t colon = at == std::string::npos ? at : what.find(": ", at);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

} // namespace

util::Expected<Json> parse_json_text(std::string_view text, const std::string& origin) {
  Quoted quoted = quote_bare_tokens(text);
  try {
    return Json::parse(quoted.text);
  } catch (const Json::parse_error& error) {
    return util::make_error(util::ErrorKind::invalid_input,
                            origin + ": invalid JSON at " +
                                position_text(text, quoted, error.byte) + ": " +
                                parse_detail(error.what()));
  } catch (const Json::exception& error) { // out_of_range: a number beyond double (1e999)
    return util::make_error(util::ErrorKind::invalid_input,
                            origin + ": invalid JSON: " + parse_detail(error.what()));
  }
}

} // namespace ptxbench::trace
