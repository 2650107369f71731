// Views of C++/CUDA source text for static checks that must not be fooled by comments or
// string literals: the banned-library gate and code extraction. No preprocessing, no parsing;
// every function is linear in the input and never fails on arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

enum class Literals : std::uint8_t { keep = 1, blank = 2 };

// The source with every comment replaced by spaces. Newlines survive and the length is
// unchanged, so offsets and line numbers still point into the original. With Literals::blank
// the contents of string, raw-string and character literals are blanked too (quotes kept).
std::string strip_comments(std::string_view source, Literals literals = Literals::keep);

struct IncludeDirective {
  std::string header;   // as written between <> or ""
  std::size_t line = 0; // 1-based
};

// #include / #include_next / #import directives of text already stripped of comments
// (with Literals::keep, so quoted header names are still there).
std::vector<IncludeDirective> find_includes(std::string_view stripped);

constexpr bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// A maximal run of identifier characters; numbers come out as words starting with a digit.
struct Word {
  std::string_view text;
  std::size_t offset = 0;
  std::size_t line = 1; // 1-based
};

// Calls `visit(word)` for every word of `text` in order; stops early when it returns false.
template <typename Visit> void for_each_word(std::string_view text, Visit&& visit) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\n')
      ++line;
    if (!is_ident_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < text.size() && is_ident_char(text[i]))
      ++i;
    if (!visit(Word{text.substr(start, i - start), start, line}))
      return;
  }
}

// The first character at or after `offset` that is not white space, or '\0' at the end.
char next_non_space(std::string_view text, std::size_t offset);

// Line `line` (1-based) of `text`, trimmed and cut to `max_chars`.
std::string line_excerpt(std::string_view text, std::size_t line, std::size_t max_chars = 160);

} // namespace ptxbench::compile
