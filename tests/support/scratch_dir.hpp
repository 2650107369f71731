// A fresh temporary folder, named after the running test, the process and a per-process
// count (two in one test are two folders), removed when the object dies. Shared by every test
// suite that writes files.
#pragma once

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace ptxbench::test_support {

class ScratchDir {
public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    static std::atomic<int> made{0}; // inline member function: one counter per program
    std::string name = "ptxbench_" + std::string(info->test_suite_name()) + "_" + info->name() +
                       "_" + std::to_string(::getpid()) + "_" + std::to_string(made++);
    std::replace(name.begin(), name.end(), '/', '_');
    m_path = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~ScratchDir() { std::filesystem::remove_all(m_path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return m_path; }

  // Writes `text` to `name` inside the folder and returns the file's path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    std::filesystem::path file = m_path / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary);
    out << text;
    if (!out)
      throw std::runtime_error("cannot write " + file.string());
    return file;
  }

private:
  std::filesystem::path m_path;
};

} // namespace ptxbench::test_support
