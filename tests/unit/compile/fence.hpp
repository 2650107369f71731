// A model reply's code block as the extraction tests write it: ```info, the code, ```.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::compile::testing {

inline std::string fenced(std::string_view info, std::string_view code) {
  return "```" + std::string(info) + "\n" + std::string(code) + "```\n";
}

} // namespace ptxbench::compile::testing
