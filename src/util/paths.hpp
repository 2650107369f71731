// Where ptxbench finds its data folders (problems/, knowledge/, tests/kernels/) and keeps its
// caches. PTXBENCH_ROOT overrides the source tree compiled into the binary.
#pragma once

#include <filesystem>

namespace ptxbench::util {

std::filesystem::path data_root();
// $PTXBENCH_CACHE, else $XDG_CACHE_HOME/ptxbench, else ~/.cache/ptxbench.
std::filesystem::path cache_root();

} // namespace ptxbench::util
