// Golden files: a test's output compared with tests/data/<relative path>. With
// PTXBENCH_UPDATE_GOLDEN set (to anything but 0) the file is rewritten from the output instead
// and the test is reported skipped, so a regeneration never passes as a check.
#pragma once

#include "util/fs.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>

namespace ptxbench::test_support {

inline bool updating_goldens() {
  const char* value = std::getenv("PTXBENCH_UPDATE_GOLDEN");
  return value != nullptr && std::string(value) != "0";
}

inline void expect_golden(const std::filesystem::path& relative, const std::string& actual) {
  const std::filesystem::path path = std::filesystem::path(PTXBENCH_TEST_DATA) / relative;
  if (updating_goldens()) {
    ASSERT_TRUE(util::write_file_atomic(path, actual).has_value()) << path;
    GTEST_SKIP() << "rewrote " << path;
  }
  const util::Expected<std::string> expected = util::read_file(path);
  ASSERT_TRUE(expected.has_value())
      << path << " is missing; run with PTXBENCH_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(actual, *expected) << "golden " << path
                               << " differs; rerun with PTXBENCH_UPDATE_GOLDEN=1 if intended";
}

} // namespace ptxbench::test_support
