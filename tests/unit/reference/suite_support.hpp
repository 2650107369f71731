// The shipped suite's problems for the reference CPU tests, loaded once per test binary.
#pragma once

#include "suite/suite.hpp"

#include <stdexcept>
#include <string_view>
#include <utility>

namespace ptxbench::reference::testing {

inline const suite::Problem& shipped_problem(std::string_view name) {
  static const suite::Suite loaded = [] {
    auto result = suite::Suite::load_default();
    if (!result)
      throw std::runtime_error(result.error().message);
    return std::move(*result);
  }();
  auto found = loaded.find(name);
  if (!found)
    throw std::runtime_error(found.error().message);
  return **found;
}

} // namespace ptxbench::reference::testing
