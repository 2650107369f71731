#include "exec/child_command.hpp"

#include "protocol/child_arguments.hpp"
#include "util/paths.hpp"

#include <cstdlib>

#ifndef PTXBENCH_CHILD_LIBRARY_BUILD_PATH
#define PTXBENCH_CHILD_LIBRARY_BUILD_PATH ""
#endif

namespace ptxbench::exec {

std::filesystem::path triton_cache_dir(const std::filesystem::path& work) {
  return work / "triton-cache";
}

ChildCommand child_command(const ChildLaunch& launch, int device, int request_fd, int reply_fd) {
  return child_command(launch,
                       protocol::serve_argv(launch.candidate_binary, device, request_fd, reply_fd));
}

ChildCommand child_command(const ChildLaunch& launch, std::vector<std::string> words) {
  ChildCommand command;
  if (words.empty())
    return command;
  // The driver's JIT cache stays off: a child writes no file (its system-call filter refuses
  // it), and no candidate can plant a module in the cache that a later process loads.
  command.env = {"CUDA_CACHE_DISABLE=1"};
  if (launch.language == compile::Language::cuda) {
    words.front() = launch.candidate_binary.string();
    command.argv = std::move(words);
    return command;
  }
  command.argv = {launch.python.string(), "-m", "ptxbench_triton.child", "--library",
                  launch.child_library.string()};
  command.argv.insert(command.argv.end(), words.begin() + 1, words.end());
  const std::filesystem::path cache = triton_cache_dir(launch.triton_work);
  std::string pythonpath = launch.python_root.string();
  if (!launch.inherited_pythonpath.empty())
    pythonpath += ":" + launch.inherited_pythonpath;
  command.env.insert(command.env.end(),
                     {"PYTHONPATH=" + pythonpath, "TRITON_CACHE_DIR=" + cache.string(),
                      "TRITON_HOME=" + (launch.triton_work / "triton-home").string(),
                      "PYTHONDONTWRITEBYTECODE=1"});
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
