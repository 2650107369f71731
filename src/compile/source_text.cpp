// One left-to-right pass with four states (code, comment, literal, raw literal). Invariant: the
// output has the input's length and every '\n' where the input has one. Tolerant by design:
// an unterminated comment or raw string runs to the end, an unterminated ordinary literal
// ends at its line, so a broken reply still gets a well-defined view.
#include "compile/source_text.hpp"

#include <algorithm>

namespace ptxbench::compile {
namespace {

class Stripper {
public:
  Stripper(std::string_view source, Literals literals)
      : m_in(source), m_out(source), m_literals(literals) {}

  std::string run() {
    std::size_t i = 0;
    while (i < m_in.size())
      i = step(i);
    return std::move(m_out);
  }

private:
  std::size_t step(std::size_t i) {
    char c = m_in[i];
    char next = i + 1 < m_in.size() ? m_in[i + 1] : '\0';
    if (c == '/' && next == '/')
      return line_comment(i);
    if (c == '/' && next == '*')
      return block_comment(i);
    if (c == '"' && raw_prefix_ends_at(i))
      return raw_literal(i);
    if (c == '"' || c == '\'')
      return literal(i, c);
    if (is_ident_char(c))
      return word(i);
    return i + 1;
  }

  void blank(std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to; ++k)
      if (m_out[k] != '\n')
        m_out[k] = ' ';
  }

  void blank_literal(std::size_t from, std::size_t to) {
    if (m_literals == Literals::blank)
      blank(from, to);
  }

  std::size_t line_comment(std::size_t i) {
    std::size_t end = i;
    while (end < m_in.size() && !(m_in[end] == '\n' && !spliced_at(end)))
      ++end;
    blank(i, end);
    return end;
  }

  // A newline preceded by a backslash continues the logical line.
  bool spliced_at(std::size_t newline) const {
    std::size_t k = newline;
    if (k > 0 && m_in[k - 1] == '\r')
      --k;
    return k > 0 && m_in[k - 1] == '\\';
  }

  std::size_t block_comment(std::size_t i) {
    std::size_t close = m_in.find("*/", i + 2);
    std::size_t end = close == std::string_view::npos ? m_in.size() : close + 2;
    blank(i, end);
    return end;
  }

  std::size_t literal(std::size_t i, char quote) {
    std::size_t k = i + 1;
    while (k < m_in.size() && m_in[k] != quote && m_in[k] != '\n')
      k += m_in[k] == '\\' ? 2 : 1;
    k = std::min(k, m_in.size());
    blank_literal(i + 1, k);
    return k < m_in.size() && m_in[k] == quote ? k + 1 : k;
  }

  bool raw_prefix_ends_at(std::size_t quote) const {
    return quote == m_word_end &&
           (m_word == "R" || m_word == "LR" || m_word == "uR" || m_word == "UR" || m_word == "u8R");
  }

  std::size_t raw_literal(std::size_t i) {
    std::size_t open = m_in.find('(', i + 1);
    if (open == std::string_view::npos || open - i > 17)
      return literal(i, '"');
    std::string closing = ")" + std::string(m_in.substr(i + 1, open - i - 1)) + "\"";
    std::size_t close = m_in.find(closing, open + 1);
    std::size_t end = close == std::string_view::npos ? m_in.size() : close + closing.size();
    blank_literal(i + 1, close == std::string_view::npos ? end : end - 1);
    return end;
  }

  // Identifiers and pp-numbers; a digit separator (1'000) stays inside its number.
  std::size_t word(std::size_t i) {
    bool number = m_in[i] >= '0' && m_in[i] <= '9';
    std::size_t k = i;
    while (k < m_in.size()) {
      char c = m_in[k];
      bool separator = number && c == '\'' && k + 1 < m_in.size() && is_ident_char(m_in[k + 1]);
      bool sign = number && (c == '+' || c == '-') &&
                  std::string_view("eEpP").find(m_in[k - 1]) != std::string_view::npos;
      if (!is_ident_char(c) && !separator && !sign && !(number && c == '.'))
        break;
      ++k;
    }
    m_word = m_in.substr(i, k - i);
    m_word_end = k;
    return k;
  }

  std::string_view m_in;
  std::string m_out;
  Literals m_literals;
  std::string_view m_word;
  std::size_t m_word_end = std::string_view::npos;
};

std::string_view skip_blanks(std::string_view s) {
  std::size_t k = 0;
  while (k < s.size() && (s[k] == ' ' || s[k] == '\t'))
    ++k;
  return s.substr(k);
}

bool consume(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix)
    return false;
  s.remove_prefix(prefix.size());
  return true;
}

// The header named by one line, or empty when the line is not an include directive.
std::string include_target(std::string_view line) {
  line = skip_blanks(line);
  if (!consume(line, "#"))
    return {};
  line = skip_blanks(line);
  if (!consume(line, "include_next") && !consume(line, "include") && !consume(line, "import"))
    return {};
  line = skip_blanks(line);
  if (line.empty() || (line[0] != '<' && line[0] != '"'))
    return {};
  std::size_t close = line.find(line[0] == '<' ? '>' : '"', 1);
  if (close == std::string_view::npos)
    return {};
  return std::string(line.substr(1, close - 1));
}

} // namespace

std::string strip_comments(std::string_view source, Literals literals) {
  return Stripper(source, literals).run();
}

std::vector<IncludeDirective> find_includes(std::string_view stripped) {
  std::vector<IncludeDirective> includes;
  std::size_t line = 1;
  for (std::size_t start = 0; start <= stripped.size(); ++line) {
    std::size_t end = std::min(stripped.find('\n', start), stripped.size());
    std::string header = include_target(stripped.substr(start, end - start));
    if (!header.empty())
      includes.push_back({std::move(header), line});
    start = end + 1;
  }
  return includes;
}

char next_non_space(std::string_view text, std::size_t offset) {
  while (offset < text.size() && is_space(text[offset]))
    ++offset;
  return offset < text.size() ? text[offset] : '\0';
}

std::string line_excerpt(std::string_view text, std::size_t line, std::size_t max_chars) {
  std::size_t start = 0;
  for (std::size_t n = 1; n < line && start != std::string_view::npos; ++n) {
    start = text.find('\n', start);
    if (start != std::string_view::npos)
      ++start;
  }
  if (start == std::string_view::npos || start > text.size())
    return {};
  std::string_view rest = text.substr(start);
  rest = rest.substr(0, rest.find('\n'));
  while (!rest.empty() && is_space(rest.back()))
    rest.remove_suffix(1);
  while (!rest.empty() && is_space(rest.front()))
    rest.remove_prefix(1);
  if (rest.size() <= max_chars)
    return std::string(rest);
  return std::string(rest.substr(0, max_chars)) + "...";
}

} // namespace ptxbench::compile
