#include "util/paths.hpp"

#include <cstdlib>

namespace ptxbench::util {

std::filesystem::path data_root() {
  if (const char* root = std::getenv("PTXBENCH_ROOT"); root != nullptr && *root != '\0')
    return root;
  return PTXBENCH_SOURCE_ROOT;
}

std::filesystem::path cache_root() {
  if (const char* dir = std::getenv("PTXBENCH_CACHE"); dir != nullptr && *dir != '\0')
    return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::filesystem::path(xdg) / "ptxbench";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "/tmp") / ".cache" / "ptxbench";
}

} // namespace ptxbench::util
