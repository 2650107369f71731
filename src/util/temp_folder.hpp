// A private folder under the system's temporary directory: mkdtemp picks a fresh name no other
// process can hold, and the folder goes, with everything in it, when its owner does.
#pragma once

#include "util/error.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace ptxbench::util {

class TempFolder {
public:
  // `name` starts the folder's name; `purpose` ends the error "cannot create a folder for ...".
  static Expected<TempFolder> make(std::string_view name, std::string_view purpose) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(name) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      return make_error(ErrorKind::io, "cannot create a folder for " + std::string(purpose));
    return TempFolder(pattern);
  }
  TempFolder(TempFolder&& other) noexcept : m_path(std::exchange(other.m_path, {})) {}
  TempFolder& operator=(TempFolder&&) = delete;
  TempFolder(const TempFolder&) = delete;
  ~TempFolder() {
    std::error_code ignored;
    if (!m_path.empty())
      std::filesystem::remove_all(m_path, ignored);
  }
  const std::filesystem::path& path() const { return m_path; }

private:
  explicit TempFolder(std::filesystem::path path) : m_path(std::move(path)) {}
  std::filesystem::path m_path;
};

} // namespace ptxbench::util
