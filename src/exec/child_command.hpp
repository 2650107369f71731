// How the supervisor starts a candidate child: `ptxbench-candidate` for a spare started before
// its candidate is known, otherwise the command of the candidate's language (frontend/
// candidate.hpp, Candidate::child_command) — for a Triton candidate `python3 -m
// ptxbench_triton.child`, the same C++ child hosted by the Python that has torch and Triton
// (docs/evaluation.md, "Triton candidates"). Both take the command line of protocol/
// child_arguments.hpp after their own words; the driver's JIT cache stays off for every child.
#pragma once

#include "frontend/candidate.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::exec {

using frontend::ChildCommand;

// What starting a child needs besides its descriptors.
struct ChildLaunch {
  frontend::ChildPaths paths;
  const frontend::Candidate* candidate = nullptr; // none: a spare `ptxbench-candidate`
};

// The command line and environment of a child serving on `request_fd` / `reply_fd`, taking the
// call slot's descriptors on `buffer_fd` (a Unix socket) when it is not -1.
ChildCommand child_command(const ChildLaunch& launch, int device, int request_fd, int reply_fd,
                           int buffer_fd = -1);
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
