// How the supervisor starts a candidate child, by language (docs/evaluation.md, "Triton
// candidates"): a CUDA candidate's child is `ptxbench-candidate`; a Triton candidate's is
// `python3 -m ptxbench_triton.child --library libptxbench_child.so` — the same C++ child,
// hosted by the Python that has torch and Triton — with PYTHONPATH naming the tree's python/
// and TRITON_CACHE_DIR / TRITON_HOME under the evaluation's own work folder, so that the cubins
// Triton builds for this evaluation are exactly that folder's (exec/triton_cubins.hpp). Both
// take the command line of protocol/child_arguments.hpp after their own words.
#pragma once

#include "compile/language.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::exec {

// What starting a child needs besides its descriptors. `triton_work` is used for Triton only.
struct ChildLaunch {
  compile::Language language = compile::Language::cuda;
  std::filesystem::path candidate_binary;   // ptxbench-candidate
  std::filesystem::path python = "python3"; // the interpreter that has torch and Triton
  std::filesystem::path python_root;        // the folder holding ptxbench_triton/
  std::filesystem::path child_library;      // libptxbench_child.so
  std::filesystem::path triton_work;        // the evaluation's work folder
  std::string inherited_pythonpath;         // the supervisor's $PYTHONPATH, kept after python_root
};

struct ChildCommand {
  std::vector<std::string> argv;
  std::vector<std::string> env; // overrides for util::environment_with ("NAME=value")
};

// The Triton cache folder of an evaluation whose work folder is `work`.
std::filesystem::path triton_cache_dir(const std::filesystem::path& work);

// The command line and environment of a child serving on `request_fd` / `reply_fd`.
ChildCommand child_command(const ChildLaunch& launch, int device, int request_fd, int reply_fd);
// The same for the child command line `words` (protocol/child_arguments.hpp, its first word
// the program, which this replaces by the launch's): a single call, for instance.
ChildCommand child_command(const ChildLaunch& launch, std::vector<std::string> words);

// libptxbench_child.so: $PTXBENCH_CHILD_LIBRARY, else ../lib/ next to the running executable,
// else the build tree's.
std::filesystem::path child_library_path();
// The folder holding ptxbench_triton/: $PTXBENCH_PYTHON_ROOT, else the data root's python/
// (util/paths.hpp, as the Triton gate finds it).
std::filesystem::path python_root_path();

} // namespace ptxbench::exec
