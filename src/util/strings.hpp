// Small string helpers shared by parsers and printers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::util {

std::string_view trim(std::string_view s);
inline bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}
std::vector<std::string> split_lines(std::string_view text);
bool starts_with_ci(std::string_view s, std::string_view prefix);
// ASCII lower case; other bytes unchanged.
std::string to_lower(std::string_view s);
// Keeps at most `max_lines` lines, noting how many were dropped.
std::string head_lines(std::string_view text, std::size_t max_lines);

} // namespace ptxbench::util
