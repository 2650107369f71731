// Fixture access and scratch folders for the trace tests.
#pragma once

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

// A fresh, empty folder named after the running test; removed when the object dies.
class ScratchDir {
public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        "ptxbench_trace_" + std::string(info->test_suite_name()) + "_" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    m_path = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~ScratchDir() { std::filesystem::remove_all(m_path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }

private:
  std::filesystem::path m_path;
};

} // namespace ptxbench::trace::testing
