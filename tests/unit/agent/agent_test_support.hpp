// Scratch folders for the agent tests that write files (registries, replay recordings).
#pragma once

#include "util/fs.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace ptxbench::agent::testing {

class ScratchDir {
public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "ptxbench_agent_" + std::string(info->test_suite_name()) + "_" +
                       info->name() + "_" + std::to_string(::getpid());
    std::replace(name.begin(), name.end(), '/', '_');
    m_path = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~ScratchDir() { std::filesystem::remove_all(m_path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    auto file = m_path / name;
    if (!util::write_file_atomic(file, text))
      throw util::Fatal("cannot write " + file.string());
    return file;
  }

private:
  std::filesystem::path m_path;
};

} // namespace ptxbench::agent::testing
