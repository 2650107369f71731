#include "util/strings.hpp"

#include <cctype>
#include <string>

namespace ptxbench::util {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (end == text.size() && line.empty())
      break;
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  }
  return true;
}

std::string head_lines(std::string_view text, std::size_t max_lines) {
  auto lines = split_lines(text);
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < max_lines; ++i)
    out += lines[i] + "\n";
  if (lines.size() > max_lines)
    out += "[" + std::to_string(lines.size() - max_lines) + " more lines]\n";
  return out;
}

} // namespace ptxbench::util
