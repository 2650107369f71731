// Fixture access and scratch folders for the trace tests.
#pragma once

#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>

namespace ptxbench::trace::testing {

inline std::filesystem::path fixture(const std::string& relative) {
  return std::filesystem::path(PTXBENCH_TEST_DATA) / "trace" / relative;
}

inline std::string read_fixture(const std::string& relative) {
  auto text = util::read_file(fixture(relative));
  if (!text)
    throw util::Fatal(text.error().message);
  return *text;
}

using test_support::ScratchDir;

} // namespace ptxbench::trace::testing
