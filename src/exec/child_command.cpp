#include "exec/child_command.hpp"

#include "protocol/child_arguments.hpp"
#include "util/paths.hpp"

#include <cstdlib>

#ifndef PTXBENCH_CHILD_LIBRARY_BUILD_PATH
#define PTXBENCH_CHILD_LIBRARY_BUILD_PATH ""
#endif

namespace ptxbench::exec {

ChildCommand child_command(const ChildLaunch& launch, int device, int request_fd, int reply_fd,
                           int buffer_fd) {
  return child_command(launch, protocol::serve_argv(launch.paths.candidate_binary, device,
                                                    request_fd, reply_fd, buffer_fd));
}

ChildCommand child_command(const ChildLaunch& launch, std::vector<std::string> words) {
  ChildCommand command = launch.candidate != nullptr
                             ? launch.candidate->child_command(launch.paths, std::move(words))
                             : frontend::candidate_binary_command(launch.paths, std::move(words));
  if (command.argv.empty())
    return command;
  // The driver's JIT cache stays off: a child writes no file (its system-call filter refuses
  // it), and no candidate can plant a module in the cache that a later process loads.
  command.env.insert(command.env.begin(), "CUDA_CACHE_DISABLE=1");
  return command;
}

std::filesystem::path child_library_path() {
  if (const char* env = std::getenv("PTXBENCH_CHILD_LIBRARY"); env != nullptr && *env != '\0')
    return env;
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  auto beside = self.parent_path().parent_path() / "lib" / "libptxbench_child.so";
  if (!error && std::filesystem::exists(beside))
    return beside;
  return PTXBENCH_CHILD_LIBRARY_BUILD_PATH;
}

std::filesystem::path python_root_path() {
  if (const char* env = std::getenv("PTXBENCH_PYTHON_ROOT"); env != nullptr && *env != '\0')
    return env;
  return util::data_root() / "python";
}

} // namespace ptxbench::exec
